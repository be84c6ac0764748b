/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/tainteviction/store.c: pending evictions in a memfd that outlives the worker
 * (store.h has the layout and the INVARIANTS).
 *
 * Design note.
 *   The worker's table (te_schedule) stays the index; the store is only its durable copy, one
 *   fixed-size slot per pending eviction, written through on every change and read back once
 *   when a worker attaches. Fixed-size slots allocated from the lowest free index keep a crash
 *   to "one slot half written", which recovery drops. Rejected: a journal (needs compaction and
 *   a crash-safe switch between generations); a shared hash table (only one process ever
 *   writes, and the worker already has an index in its own memory).
 */
#include "workers/tainteviction/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TE_STORE_MAGIC   0x54455354u /* "TEST": taint eviction store */
#define TE_STORE_VERSION 1u

enum { SLOT_FREE = 0, SLOT_WRITING = 1, SLOT_LIVE = 2 };

struct te_store_hdr {
	uint32_t magic, version, slot_size, n_slots;
	_Atomic uint32_t hwm; /* slots below it have been handed out at least once */
};

struct te_store_slot {
	_Atomic uint32_t state;
	uint32_t reserved;
	int64_t created_at, fire_at;
	char key[TE_STORE_KEY_MAX];
	char node[TE_STORE_NODE_MAX];
};

struct te_store {
	struct te_store_hdr *hdr;
	struct te_store_slot *slots;
	size_t map_len;
	uint32_t n_slots, used;
	uint32_t *free; /* free slot indexes below hwm, a stack */
	uint32_t n_free;
};

static size_t region_len(uint32_t n)
{
	return TE_STORE_HDR + (size_t)n * sizeof(struct te_store_slot);
}

int te_store_memfd_create(uint32_t n_slots)
{
	struct te_store_hdr *h;
	int fd, r;

	if (!n_slots)
		n_slots = TE_STORE_SLOTS;
	if ((fd = memfd_create("kcmd-taint-eviction", MFD_CLOEXEC)) < 0)
		return -errno;
	if (ftruncate(fd, (off_t)region_len(n_slots)) < 0 ||
	    (h = mmap(NULL, TE_STORE_HDR, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
	            MAP_FAILED) {
		r = -errno;
		close(fd);
		return r;
	}
	*h = (struct te_store_hdr){.magic = TE_STORE_MAGIC,
	                           .version = TE_STORE_VERSION,
	                           .slot_size = (uint32_t)sizeof(struct te_store_slot),
	                           .n_slots = n_slots};
	munmap(h, TE_STORE_HDR);
	return fd;
}

int te_store_attach(int fd, te_store_visit_fn fn, void *ud, struct te_store **ret)
{
	struct te_store *st = calloc(1, sizeof(*st));
	struct te_store_hdr h;
	struct stat sb;
	uint32_t hwm;
	int r = 0;

	*ret = NULL;
	if (!st)
		return -ENOMEM;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || fstat(fd, &sb) < 0) {
		r = errno ? -errno : -EPROTO;
		goto fail;
	}
	if (h.magic != TE_STORE_MAGIC || h.version != TE_STORE_VERSION ||
	    h.slot_size != sizeof(struct te_store_slot) || !h.n_slots ||
	    (uint64_t)sb.st_size < region_len(h.n_slots)) {
		r = -EPROTO;
		goto fail;
	}
	st->map_len = region_len(h.n_slots);
	st->n_slots = h.n_slots;
	void *m = mmap(NULL, st->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	st->hdr = m;
	st->slots = (struct te_store_slot *)((char *)m + TE_STORE_HDR);
	/* acquire: pairs with the release that raised hwm before a slot was written */
	hwm = atomic_load_explicit(&st->hdr->hwm, memory_order_acquire);
	if (hwm > st->n_slots)
		hwm = st->n_slots;
	if (!(st->free = calloc(st->n_slots, sizeof(*st->free)))) {
		r = -ENOMEM;
		goto fail;
	}
	/* pushed from the top, so the lowest free index is popped first */
	for (uint32_t i = hwm; i-- > 0;) {
		struct te_store_slot *s = &st->slots[i];
		/* acquire: pairs with the release store of LIVE after the fields */
		if (atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_LIVE &&
		    memchr(s->key, 0, sizeof(s->key)) && memchr(s->node, 0, sizeof(s->node))) {
			st->used++;
			continue;
		}
		/* FREE, or WRITING left by a writer that died mid-write: free */
		atomic_store_explicit(&s->state, SLOT_FREE, memory_order_relaxed);
		st->free[st->n_free++] = i;
	}
	for (uint32_t i = 0; fn && i < hwm && r >= 0; i++) {
		struct te_store_slot *s = &st->slots[i];
		if (atomic_load_explicit(&s->state, memory_order_relaxed) != SLOT_LIVE)
			continue;
		struct te_sched v = {
		        .created_at = s->created_at, .fire_at = s->fire_at, .slot = i + 1};
		r = fn(s->key, s->node, &v, ud);
	}
	if (r < 0)
		goto fail;
	*ret = st;
	return 0;
fail:
	te_store_detach(st);
	return r;
}

void te_store_detach(struct te_store *st)
{
	if (!st)
		return;
	if (st->hdr)
		munmap(st->hdr, st->map_len);
	free(st->free);
	free(st);
}

int te_store_put(struct te_store *st, const char *key, const char *node, struct te_sched *v)
{
	size_t kl = strlen(key), nl = strlen(node ? node : "");
	uint32_t i;

	if (kl >= TE_STORE_KEY_MAX || nl >= TE_STORE_NODE_MAX)
		return -EINVAL;
	if (v->slot) {
		i = v->slot - 1;
		if (i >= st->n_slots)
			return -EINVAL;
	} else if (st->n_free) {
		i = st->free[--st->n_free];
		st->used++;
	} else {
		i = atomic_load_explicit(&st->hdr->hwm, memory_order_relaxed);
		if (i >= st->n_slots)
			return -ENOSPC;
		/* release: the new mark is visible no later than the slot's first write */
		atomic_store_explicit(&st->hdr->hwm, i + 1, memory_order_release);
		st->used++;
	}
	struct te_store_slot *s = &st->slots[i];
	atomic_store_explicit(&s->state, SLOT_WRITING, memory_order_relaxed);
	/* the fields may not move above WRITING: a fence orders the two */
	atomic_thread_fence(memory_order_release);
	s->created_at = v->created_at;
	s->fire_at = v->fire_at;
	memcpy(s->key, key, kl + 1);
	memcpy(s->node, node ? node : "", nl + 1);
	/* release: pairs with te_store_attach's acquire load of the state */
	atomic_store_explicit(&s->state, SLOT_LIVE, memory_order_release);
	v->slot = i + 1;
	return 0;
}

void te_store_del(struct te_store *st, uint32_t slot)
{
	if (!st || !slot || slot > st->n_slots)
		return;
	struct te_store_slot *s = &st->slots[slot - 1];
	if (atomic_load_explicit(&s->state, memory_order_relaxed) == SLOT_FREE)
		return;
	atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
	st->free[st->n_free++] = slot - 1;
	st->used--;
}

uint32_t te_store_used(const struct te_store *st)
{
	return st ? st->used : 0;
}
