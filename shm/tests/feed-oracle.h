/* SPDX-License-Identifier: Apache-2.0 */
/* shm/tests/feed-oracle.h - the deterministic change-feed entry of (seq, gen), shared by the
 * unit tests, the torture test and the bench.
 *
 * Every field of the entry with sequence number seq published by writer generation gen is a
 * function of (seq, gen): op, flags, type, handle, arena_seq (= gen << 48 | low 48 bits of
 * seq), and both objects: namespace, name, uid, resourceVersion, labels, owner references
 * with their tri-states, and every payload word. fo_check recomputes all of it from what a
 * consumer received, so a torn, mixed, shifted or stale entry cannot pass, and gen tells
 * which writer incarnation published it.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "shm/feed.h"

#define FO_MAX_WORDS 2048 /* payload words at most */

static unsigned fo_words = 40; /* payload words vary in 0..fo_words-1 (tests tune it) */

struct fo_obj {
	char ns[16], name[24], uid[40], rv[24];
	char lk[4][8], lv[4][24];
	struct shm_label labels[4];
	char on[3][16], ou[3][40];
	struct shm_owner_ref owners[3];
	uint64_t payload[FO_MAX_WORDS];
};

struct fo_buf {
	struct fo_obj n, o;
	struct shm_record_in in;
	struct shm_obj old;
	struct shm_feed_pub pub;
};

static inline uint64_t fo_mix(uint64_t x)
{
	x ^= x >> 31;
	x *= UINT64_C(0x7fb5d329728ea185);
	x ^= x >> 27;
	x *= UINT64_C(0x81dadef4bc2dd44d);
	x ^= x >> 33;
	return x;
}

/* One object of (seq, gen); which = 0 new, 1 old. */
static void fo_obj_build(uint64_t seq, uint64_t gen, int which, struct fo_obj *o, size_t *nl,
                         size_t *no, size_t *words)
{
	uint64_t h = fo_mix(seq * 2 + (uint64_t)which);
	unsigned k = (unsigned)(seq % 997);
	snprintf(o->ns, sizeof(o->ns), "ns-%u", (unsigned)(seq % 4));
	snprintf(o->name, sizeof(o->name), "obj-%u", k);
	snprintf(o->uid, sizeof(o->uid), "%08x-1111-4222-8333-%012x", k, k * 31u);
	snprintf(o->rv, sizeof(o->rv), "%llu", (unsigned long long)(seq - (uint64_t)which));
	*nl = h % 4;
	for (size_t i = 0; i < *nl; i++) {
		snprintf(o->lk[i], sizeof(o->lk[i]), "k%u", (unsigned)i & 3);
		snprintf(o->lv[i], sizeof(o->lv[i]), "v%llx", (unsigned long long)(h + i));
		o->labels[i] = (struct shm_label){o->lk[i], o->lv[i]};
	}
	*no = (h >> 8) % 3;
	for (size_t i = 0; i < *no; i++) {
		snprintf(o->on[i], sizeof(o->on[i]), "rs-%u", (unsigned)((h >> 12) % 50));
		snprintf(o->ou[i], sizeof(o->ou[i]), "0000000%u-aaaa-4bbb-8ccc-%012llx",
		         (unsigned)i & 7, (unsigned long long)(h & 0xffffff));
		o->owners[i] = (struct shm_owner_ref){"apps/v1",
		                                      "ReplicaSet",
		                                      o->on[i],
		                                      o->ou[i],
		                                      (int8_t)((int)((h >> (16 + i)) % 3) - 1),
		                                      (int8_t)((int)((h >> (20 + i)) % 3) - 1)};
	}
	*words = fo_words ? (size_t)((h >> 24) % fo_words) : 0;
	for (size_t i = 0; i < *words; i++)
		o->payload[i] = fo_mix(seq ^ (gen << 40) ^ ((uint64_t)which << 63) ^ (i << 20));
}

/* Fill b->pub with the entry of (seq, gen). */
static void fo_build(uint64_t seq, uint64_t gen, struct fo_buf *b)
{
	uint64_t h = fo_mix(seq);
	enum shm_feed_op op = (enum shm_feed_op)(h % 3 + 1);
	b->pub = (struct shm_feed_pub){
	        .op = op,
	        .type = (uint16_t)(seq % 7),
	        .handle = (uint32_t)(seq * 2654435761u) | 1,
	        .arena_seq = gen << 48 | (seq & 0xffffffffffffu),
	};
	size_t nl, no, nw;
	if (op != SHM_FEED_DELETE) {
		fo_obj_build(seq, gen, 0, &b->n, &nl, &no, &nw);
		b->in = (struct shm_record_in){
		        .type = b->pub.type,
		        .kind = (enum shm_record_kind)(seq % 3),
		        .ns = b->n.ns,
		        .name = b->n.name,
		        .uid = b->n.uid,
		        .rv = b->n.rv,
		        .labels = nl ? b->n.labels : NULL,
		        .n_labels = nl,
		        .owners = no ? b->n.owners : NULL,
		        .n_owners = no,
		        .payload = nw ? b->n.payload : NULL,
		        .payload_len = nw * 8,
		};
		b->pub.new_obj = &b->in;
	}
	bool has_old = op != SHM_FEED_ADD && (h >> 8) % 11 != 0;
	if (op == SHM_FEED_DELETE && (h >> 12) % 2) {
		b->pub.flags = SHM_FEED_RELIST | SHM_FEED_TOMBSTONE;
		has_old = true;
	} else if ((h >> 16) % 5 == 0) {
		b->pub.flags = SHM_FEED_RELIST;
	}
	if (has_old) {
		fo_obj_build(seq, gen, 1, &b->o, &nl, &no, &nw);
		b->old = (struct shm_obj){
		        .type = b->pub.type,
		        .kind = (enum shm_record_kind)((seq + 1) % 3),
		        .handle = b->pub.handle,
		        .ns = b->o.ns,
		        .name = b->o.name,
		        .uid = b->o.uid,
		        .rv = b->o.rv,
		        .labels = nl ? b->o.labels : NULL,
		        .n_labels = nl,
		        .owners = no ? b->o.owners : NULL,
		        .n_owners = no,
		        .payload = nw ? b->o.payload : NULL,
		        .payload_len = nw * 8,
		};
		b->pub.old_obj = &b->old;
	}
}

static bool fo_str_eq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static bool fo_obj_eq(const struct shm_obj *got, const struct shm_obj *want, uint16_t type,
                      uint32_t handle)
{
	if (!got || got->type != type || got->handle != handle || got->kind != want->kind ||
	    !fo_str_eq(got->ns, want->ns) || !fo_str_eq(got->name, want->name) ||
	    !fo_str_eq(got->uid, want->uid) || !fo_str_eq(got->rv, want->rv) ||
	    got->n_labels != want->n_labels || got->n_owners != want->n_owners ||
	    got->payload_len != want->payload_len)
		return false;
	for (size_t i = 0; i < want->n_labels; i++)
		if (!fo_str_eq(got->labels[i].key, want->labels[i].key) ||
		    !fo_str_eq(got->labels[i].value, want->labels[i].value))
			return false;
	for (size_t i = 0; i < want->n_owners; i++) {
		const struct shm_owner_ref *g = &got->owners[i], *w = &want->owners[i];
		if (!fo_str_eq(g->api_version, w->api_version) || !fo_str_eq(g->kind, w->kind) ||
		    !fo_str_eq(g->name, w->name) || !fo_str_eq(g->uid, w->uid) ||
		    g->controller != w->controller ||
		    g->block_owner_deletion != w->block_owner_deletion)
			return false;
	}
	return want->payload_len == 0 ||
	       (got->payload && memcmp(got->payload, want->payload, want->payload_len) == 0);
}

/* The gen an entry claims (from arena_seq), or -1 if its low bits do not match its seq. */
static int64_t fo_gen_of(const struct shm_feed_event *ev)
{
	if ((ev->arena_seq & 0xffffffffffffu) != (ev->seq & 0xffffffffffffu))
		return -1;
	return (int64_t)(ev->arena_seq >> 48);
}

/* true if ev is exactly the entry of (ev->seq, its gen). scratch: a caller's fo_buf. */
static bool fo_check(const struct shm_feed_event *ev, struct fo_buf *scratch)
{
	int64_t gen = fo_gen_of(ev);
	if (gen < 0)
		return false;
	fo_build(ev->seq, (uint64_t)gen, scratch);
	const struct shm_feed_pub *p = &scratch->pub;
	if (ev->op != p->op || ev->flags != p->flags || ev->type != p->type ||
	    ev->handle != p->handle || ev->arena_seq != p->arena_seq)
		return false;
	if (p->new_obj) {
		struct shm_obj want = {
		        .kind = p->new_obj->kind,
		        .ns = p->new_obj->ns,
		        .name = p->new_obj->name,
		        .uid = p->new_obj->uid,
		        .rv = p->new_obj->rv,
		        .labels = p->new_obj->labels,
		        .n_labels = p->new_obj->n_labels,
		        .owners = p->new_obj->owners,
		        .n_owners = p->new_obj->n_owners,
		        .payload = p->new_obj->payload,
		        .payload_len = p->new_obj->payload_len,
		};
		if (!fo_obj_eq(ev->new_obj, &want, p->type, p->handle))
			return false;
	} else if (ev->new_obj) {
		return false;
	}
	if (p->old_obj)
		return fo_obj_eq(ev->old_obj, p->old_obj, p->type, p->handle);
	return ev->old_obj == NULL;
}
