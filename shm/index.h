/* SPDX-License-Identifier: Apache-2.0 */
/* shm/index.h - private: the writer's side of the arena indexes (shm/index.c).
 *
 * Two shapes, both open addressing with linear probing over power-of-two tables, slots changed
 * only by single atomic stores (insert into an empty or tombstone slot, tombstone on removal;
 * entries never move), and whole tables replaced copy-on-write by one store into their root:
 *  - handle tables: key (64-bit hash) -> handle. Slot = tag32 << 32 | handle, placed at
 *    tag32 & mask, so a table can be rebuilt from its slots alone.
 *  - multi-indexes: key -> set of handles. A table of set refs (aux = key >> 48, placed at
 *    (key >> 32) & mask), each set a small hash set of u32 handles placed at mix32(h) & mask.
 * A root is an _Atomic uint64_t holding the table's ref (0 = empty index); during recovery the
 * roots are private words that get published later. Keys are hashes only: readers compare the
 * records they find with what they look for, so a collision costs a probe, never an error. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm-internal.h"

/* Insert handle h under key (the caller knows it is absent). -ENOMEM: nothing changed. */
int shm_tab_insert(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h);
/* Tombstone the slot (key, h): 0 or -ENOENT. Never allocates. */
int shm_tab_remove(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h);
/* Handles whose tag matches key, in probe order (up to max); returns how many were found. */
int shm_tab_candidates(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t *out,
                       int max);
bool shm_tab_contains(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h);
uint64_t shm_tab_count(struct shm_arena *a, _Atomic uint64_t *root);
/* Create an empty table sized for n entries under an (unpublished) root. */
int shm_tab_reserve(struct shm_arena *a, _Atomic uint64_t *root, uint64_t n);

/* Add h to the set of key (idempotent). -ENOMEM: nothing changed. */
int shm_mset_add(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h);
/* Remove h from the set of key if present; frees the set when it empties. Never fails. */
void shm_mset_del(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h);
bool shm_mset_contains(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h);
/* Sum of the sizes of all sets. */
uint64_t shm_mset_total(struct shm_arena *a, _Atomic uint64_t *root);

/* Slot helpers shared with the reader. */
static inline struct shm_abi_table *shm_tab_at(struct shm_arena *a, uint64_t ref)
{
	return (struct shm_abi_table *)shm_body(a, shm_ref_off(ref));
}
static inline _Atomic uint64_t *shm_tab_slots(struct shm_abi_table *t)
{
	return (_Atomic uint64_t *)(t + 1);
}
static inline struct shm_abi_set *shm_set_at(struct shm_arena *a, uint64_t ref)
{
	return (struct shm_abi_set *)shm_body(a, shm_ref_off(ref));
}
static inline _Atomic uint32_t *shm_set_slots(struct shm_abi_set *s)
{
	return (_Atomic uint32_t *)(s + 1);
}
