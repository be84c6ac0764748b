/* SPDX-License-Identifier: Apache-2.0 */
/* ipc/journal.c: durable keys (see journal.h; the INVARIANTS J1-J4 are named below). */
#include "ipc/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ipc/queue-abi.h"

#define MAGIC   UINT64_C(0x314c4e524a444d4b) /* "KMDJRNL1" */
#define VERSION 1u
#define FREE    0u
#define LIVE    0x4556494cu /* "LIVE" */

unsigned ipc_journal__test_early_live;

struct jhdr {
	uint64_t magic;
	uint32_t version;
	uint32_t slot_size;
};

struct jslot {
	_Atomic uint32_t state;
	uint16_t keylen;
	uint16_t reserved0;
	uint32_t sum;
	uint32_t reserved1;
	char key[IPC_JOURNAL_SLOT - 16];
};
_Static_assert(sizeof(struct jslot) == IPC_JOURNAL_SLOT, "journal slot");
_Static_assert(IPC_QUEUE_KEY_MAX < sizeof(((struct jslot *)0)->key), "a key fits a slot");

struct ipc_journal {
	int fd;
	uint8_t *map;
	size_t size;     /* bytes mapped (the memfd's size) */
	uint32_t n;      /* slots */
	uint32_t *free_; /* stack of free slots */
	uint32_t nfree, capfree;
	uint64_t live, corrupt;
};

static uint32_t key_sum(const char *k, size_t n)
{
	uint32_t h = 2166136261u ^ (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)k[i]) * 16777619u;
	return h;
}

static inline struct jslot *slot_at(const struct ipc_journal *j, uint32_t i)
{
	return (struct jslot *)(j->map + IPC_JOURNAL_HDR + (size_t)i * IPC_JOURNAL_SLOT);
}

static uint32_t slots_in(size_t size)
{
	return size < IPC_JOURNAL_HDR ? 0 : (uint32_t)((size - IPC_JOURNAL_HDR) / IPC_JOURNAL_SLOT);
}

int ipc_journal_memfd_create(const char *name)
{
	char mname[80] = "kcmd-journal-";
	if (name)
		strncat(mname, name, sizeof(mname) - strlen(mname) - 1);
	int fd = memfd_create(mname, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	struct jhdr h = {MAGIC, VERSION, IPC_JOURNAL_SLOT};
	if (ftruncate(fd, IPC_JOURNAL_FIRST) < 0 || pwrite(fd, &h, sizeof(h), 0) != sizeof(h) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static int push_free(struct ipc_journal *j, uint32_t i)
{
	if (j->nfree == j->capfree) {
		uint32_t c = j->capfree ? j->capfree * 2 : 128;
		uint32_t *p = realloc(j->free_, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		j->free_ = p;
		j->capfree = c;
	}
	j->free_[j->nfree++] = i;
	return 0;
}

int ipc_journal_open(int memfd, struct ipc_journal **ret)
{
	struct stat st;
	struct jhdr h;
	if (!ret || memfd < 0)
		return -EINVAL;
	if (fstat(memfd, &st) < 0)
		return -errno;
	if ((size_t)st.st_size < IPC_JOURNAL_FIRST || pread(memfd, &h, sizeof(h), 0) != sizeof(h) ||
	    h.magic != MAGIC || h.version != VERSION || h.slot_size != IPC_JOURNAL_SLOT)
		return -EPROTO;
	struct ipc_journal *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->fd = fcntl(memfd, F_DUPFD_CLOEXEC, 3);
	j->size = IPC_JOURNAL_HDR + (size_t)slots_in((size_t)st.st_size) * IPC_JOURNAL_SLOT;
	j->n = slots_in(j->size);
	if (j->fd < 0) {
		free(j);
		return -errno;
	}
	j->map = mmap(NULL, j->size, PROT_READ | PROT_WRITE, MAP_SHARED, j->fd, 0);
	if (j->map == MAP_FAILED) {
		int r = -errno;
		close(j->fd);
		free(j);
		return r;
	}
	/* J3: check every LIVE slot; free what fails. Free slots go on the stack high to low, so
	 * put takes the lowest first (the first pages stay the busy ones). */
	for (uint32_t i = j->n; i-- > 0;) {
		struct jslot *s = slot_at(j, i);
		uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
		if (state == LIVE) {
			size_t n = s->keylen;
			if (n >= 1 && n <= IPC_QUEUE_KEY_MAX && !memchr(s->key, 0, n) &&
			    s->sum == key_sum(s->key, n)) {
				j->live++;
				continue;
			}
			j->corrupt++;
		}
		if (state != FREE)
			atomic_store_explicit(&s->state, FREE, memory_order_relaxed);
		if (push_free(j, i) < 0) {
			ipc_journal_close(j);
			return -ENOMEM;
		}
	}
	*ret = j;
	return 0;
}

void ipc_journal_close(struct ipc_journal *j)
{
	if (!j)
		return;
	if (j->map && j->map != MAP_FAILED)
		munmap(j->map, j->size);
	if (j->fd >= 0)
		close(j->fd);
	free(j->free_);
	free(j);
}

int ipc_journal_foreach(struct ipc_journal *j, int (*fn)(const char *key, uint32_t slot, void *ud),
                        void *ud)
{
	char key[IPC_QUEUE_KEY_MAX + 1];
	if (!j || !fn)
		return -EINVAL;
	for (uint32_t i = 0; i < j->n; i++) {
		struct jslot *s = slot_at(j, i);
		if (atomic_load_explicit(&s->state, memory_order_acquire) != LIVE)
			continue;
		memcpy(key, s->key, s->keylen);
		key[s->keylen] = 0;
		int r = fn(key, i, ud);
		if (r)
			return r;
	}
	return 0;
}

/* J4: double the memfd, then the mapping; the new slots are free. */
static int grow(struct ipc_journal *j)
{
	size_t nsize = IPC_JOURNAL_HDR + (size_t)j->n * 2 * IPC_JOURNAL_SLOT;
	if (ftruncate(j->fd, (off_t)nsize) < 0)
		return -errno;
	void *m = mremap(j->map, j->size, nsize, MREMAP_MAYMOVE);
	if (m == MAP_FAILED)
		return -errno;
	uint32_t old = j->n;
	j->map = m;
	j->size = nsize;
	j->n = slots_in(nsize);
	for (uint32_t i = j->n; i-- > old;)
		if (push_free(j, i) < 0)
			return -ENOMEM;
	return 0;
}

int64_t ipc_journal_put(struct ipc_journal *j, const char *key)
{
	size_t n = key ? strnlen(key, IPC_QUEUE_KEY_MAX + 1) : 0;
	if (!j || n == 0 || n > IPC_QUEUE_KEY_MAX)
		return -EINVAL;
	if (!j->nfree) {
		int r = grow(j);
		if (r < 0)
			return r;
	}
	uint32_t i = j->free_[--j->nfree];
	struct jslot *s = slot_at(j, i);
	if (ipc_journal__test_early_live) { /* J2 off: LIVE before the body */
		atomic_store_explicit(&s->state, LIVE, memory_order_release);
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
	}
	memcpy(s->key, key, n);
	s->keylen = (uint16_t)n;
	s->sum = key_sum(key, n);
	/* J2: the body before the state (release) */
	atomic_store_explicit(&s->state, LIVE, memory_order_release);
	j->live++;
	return i;
}

void ipc_journal_drop(struct ipc_journal *j, uint32_t slot)
{
	if (!j || slot >= j->n)
		return;
	struct jslot *s = slot_at(j, slot);
	if (atomic_load_explicit(&s->state, memory_order_relaxed) != LIVE)
		return;
	atomic_store_explicit(&s->state, FREE, memory_order_release);
	j->live--;
	if (push_free(j, slot) < 0) {
		/* cannot track it: it stays FREE in the memfd, only unused by this writer */
	}
	/* the last key gone: give the grown pages back (J4: nothing LIVE beyond the first size) */
	if (j->live == 0 && j->size > IPC_JOURNAL_FIRST &&
	    ftruncate(j->fd, IPC_JOURNAL_FIRST) == 0) {
		void *m = mremap(j->map, j->size, IPC_JOURNAL_FIRST, 0);
		if (m != MAP_FAILED) {
			j->map = m;
			j->size = IPC_JOURNAL_FIRST;
			j->n = slots_in(j->size);
			j->nfree = 0;
			for (uint32_t i = j->n; i-- > 0;)
				(void)push_free(j, i);
		}
	}
}

void ipc_journal_stats(const struct ipc_journal *j, struct ipc_journal_stats *ret)
{
	if (!j || !ret)
		return;
	*ret = (struct ipc_journal_stats){.live = j->live, .slots = j->n, .corrupt = j->corrupt};
}
