/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/ctlmetrics.c: controllers' declared metrics in shared memory (see ctlmetrics.h for the
 * layout and the INVARIANTS).
 */
#include "lib/ctlmetrics.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CTLM_MAGIC    0x314d4c54434b0001ull /* "KCTLM1", layout 1 */
#define ST_FREE       0ull
#define ST_PUBLISHED  2ull
#define ST_CLAIMED(p) (((uint64_t)(uint32_t)(p) << 2) | 1ull)
#define CLAIM_SPINS   4096

struct ctlm_hdr {
	uint64_t magic;
	uint64_t layout; /* hash of the declaration */
	uint64_t size;
	uint32_t n_metrics;
	uint32_t reserved0;
	uint64_t reserved[4];
	_Atomic uint64_t dropped[]; /* n_metrics */
};
_Static_assert(sizeof(struct ctlm_hdr) == 64, "ctlm_hdr layout");

/* A slot: _Atomic uint64_t state; (hash tables) uint64_t key_len, char key[CTLM_KEY_MAX];
 * _Atomic uint64_t cell[n_cells]. */
struct mlay {
	size_t off;       /* of the table, from the region's start */
	size_t slot_size; /* bytes */
	size_t n_slots;
	size_t n_cells;
	size_t cell_off; /* within a slot */
	bool hashed;
	unsigned order[CTLM_MAX_LABELS]; /* label indexes sorted by name */
};

struct kcmd_metrics {
	const struct kcmd_controller *c;
	uint8_t *base;
	size_t size;
	bool writer;
	struct mlay lay[];
};

static struct ctlm_hdr *hdr(const struct kcmd_metrics *m)
{
	return (struct ctlm_hdr *)m->base;
}

static size_t n_values(const struct kcmd_metric_label *l)
{
	size_t n = 0;
	while (l->values && l->values[n])
		n++;
	return n;
}

static bool name_ok(const char *s, bool label)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		bool alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
		             (!label && *p == ':');
		if (!alpha && !(p > s && *p >= '0' && *p <= '9'))
			return false;
	}
	return !(label && !strcmp(s, "le"));
}

int ctlm_check(const struct kcmd_controller *c)
{
	if (!c || (c->n_metrics && !c->metrics))
		return -EINVAL;
	for (size_t i = 0; i < c->n_metrics; i++) {
		const struct kcmd_metric *d = &c->metrics[i];
		size_t combos = 1;
		bool free_label = false;
		if (!name_ok(d->name, false) || !d->help || d->n_labels > CTLM_MAX_LABELS ||
		    (d->n_labels && !d->labels) || d->type < KCMD_METRIC_COUNTER ||
		    d->type > KCMD_METRIC_HISTOGRAM || d->stability > KCMD_METRIC_STABLE)
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->metrics[j].name, d->name))
				return -EINVAL;
		for (size_t l = 0; l < d->n_labels; l++) {
			if (!name_ok(d->labels[l].name, true))
				return -EINVAL;
			for (size_t k = 0; k < l; k++)
				if (!strcmp(d->labels[k].name, d->labels[l].name))
					return -EINVAL;
			size_t nv = n_values(&d->labels[l]);
			if (d->labels[l].values && nv == 0)
				return -EINVAL;
			if (!d->labels[l].values)
				free_label = true;
			else if ((combos *= nv) > CTLM_MAX_SERIES)
				return -EINVAL;
		}
		if (free_label && d->max_series > CTLM_MAX_SERIES)
			return -EINVAL;
		if (d->type == KCMD_METRIC_HISTOGRAM) {
			if (!d->buckets || !d->n_buckets || d->n_buckets > CTLM_MAX_BUCKETS)
				return -EINVAL;
			for (size_t b = 0; b < d->n_buckets; b++)
				if (isnan(d->buckets[b]) || isinf(d->buckets[b]) ||
				    (b && !(d->buckets[b] > d->buckets[b - 1])))
					return -EINVAL;
		} else if (d->n_buckets) {
			return -EINVAL;
		}
	}
	return 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return fnv(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

static uint64_t layout_hash(const struct kcmd_controller *c)
{
	uint64_t h = 1469598103934665603ull;
	h = fnv(h, &(uint64_t){CTLM_MAGIC}, 8);
	for (size_t i = 0; i < c->n_metrics; i++) {
		const struct kcmd_metric *d = &c->metrics[i];
		uint32_t t[4] = {(uint32_t)d->type, (uint32_t)d->n_labels, (uint32_t)d->n_buckets,
		                 d->max_series};
		h = fnv_str(h, d->name);
		h = fnv(h, t, sizeof(t));
		for (size_t l = 0; l < d->n_labels; l++) {
			h = fnv_str(h, d->labels[l].name);
			h = fnv(h, &(uint8_t){d->labels[l].values != NULL}, 1);
			for (size_t k = 0; d->labels[l].values && d->labels[l].values[k]; k++)
				h = fnv_str(h, d->labels[l].values[k]);
		}
		for (size_t b = 0; b < d->n_buckets; b++)
			h = fnv(h, &d->buckets[b], sizeof(double));
	}
	return h;
}

/* Computes every table's place; returns the region's size. */
static size_t compute_layout(const struct kcmd_controller *c, struct mlay *lay)
{
	size_t off = sizeof(struct ctlm_hdr) + c->n_metrics * sizeof(uint64_t);

	off = (off + 63) & ~(size_t)63;
	for (size_t i = 0; i < c->n_metrics; i++) {
		const struct kcmd_metric *d = &c->metrics[i];
		struct mlay *L = &lay[i];
		size_t combos = 1;
		*L = (struct mlay){0};
		for (size_t l = 0; l < d->n_labels; l++) {
			if (!d->labels[l].values)
				L->hashed = true;
			else
				combos *= n_values(&d->labels[l]);
		}
		L->n_slots = L->hashed ? (d->max_series ? d->max_series : CTLM_DEF_SERIES) : combos;
		L->n_cells = d->type == KCMD_METRIC_HISTOGRAM ? d->n_buckets + 3 : 1;
		L->cell_off = L->hashed ? 16 + CTLM_KEY_MAX : 8;
		L->slot_size = L->cell_off + L->n_cells * 8;
		L->off = off;
		off += L->n_slots * L->slot_size;
		off = (off + 63) & ~(size_t)63;
		/* label indexes by name: client_golang writes a series' labels sorted */
		for (unsigned l = 0; l < d->n_labels; l++) {
			unsigned k = l;
			while (k > 0 &&
			       strcmp(d->labels[L->order[k - 1]].name, d->labels[l].name) > 0) {
				L->order[k] = L->order[k - 1];
				k--;
			}
			L->order[k] = l;
		}
	}
	return off;
}

int ctlm_create(const struct kcmd_controller *c)
{
	struct mlay *lay;
	size_t size;
	int fd, r;
	void *p;

	if ((r = ctlm_check(c)) < 0)
		return r;
	if (!c->n_metrics)
		return -ENOENT;
	if (!(lay = calloc(c->n_metrics, sizeof(*lay))))
		return -ENOMEM;
	size = compute_layout(c, lay);
	free(lay);
	fd = memfd_create("kcmd-ctlmetrics", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0)
		goto fail;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	struct ctlm_hdr *h = p;
	h->layout = layout_hash(c);
	h->size = size;
	h->n_metrics = (uint32_t)c->n_metrics;
	h->magic = CTLM_MAGIC; /* before any other process is given the fd */
	munmap(p, size);
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail;
	return fd;
fail:;
	int e = -errno;
	close(fd);
	return e;
}

int ctlm_attach(const struct kcmd_controller *c, int fd, bool writer, struct kcmd_metrics **ret)
{
	struct kcmd_metrics *m;
	struct stat st;
	size_t size;
	int r;

	if (!ret || fd < 0)
		return -EINVAL;
	if ((r = ctlm_check(c)) < 0)
		return r;
	if (!c->n_metrics)
		return -ENOENT;
	if (!(m = calloc(1, sizeof(*m) + c->n_metrics * sizeof(struct mlay))))
		return -ENOMEM;
	size = compute_layout(c, m->lay);
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	if ((uint64_t)st.st_size < size) {
		r = -EPROTO;
		goto fail;
	}
	void *p = mmap(NULL, size, writer ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	m->c = c;
	m->base = p;
	m->size = size;
	m->writer = writer;
	if (hdr(m)->magic != CTLM_MAGIC || hdr(m)->layout != layout_hash(c) ||
	    hdr(m)->size != size || hdr(m)->n_metrics != c->n_metrics) {
		munmap(p, size);
		r = -EPROTO;
		goto fail;
	}
	*ret = m;
	return 0;
fail:
	free(m);
	return r;
}

void ctlm_detach(struct kcmd_metrics *m)
{
	if (!m)
		return;
	munmap(m->base, m->size);
	free(m);
}

uint64_t ctlm_dropped(struct kcmd_metrics *m, unsigned id)
{
	if (!m || id >= m->c->n_metrics)
		return 0;
	return atomic_load_explicit(&hdr(m)->dropped[id], memory_order_relaxed);
}

void ctlm_table(struct kcmd_metrics *m, unsigned id, size_t *ret_off, size_t *ret_slot_size,
                size_t *ret_n_slots)
{
	*ret_off = m->lay[id].off;
	*ret_slot_size = m->lay[id].slot_size;
	*ret_n_slots = m->lay[id].n_slots;
}

/* ---- writing ------------------------------------------------------------------------------- */
static _Atomic uint64_t *slot_state(const struct kcmd_metrics *m, const struct mlay *L, size_t i)
{
	return (_Atomic uint64_t *)(m->base + L->off + i * L->slot_size);
}

static _Atomic uint64_t *slot_cells(const struct kcmd_metrics *m, const struct mlay *L, size_t i)
{
	return (_Atomic uint64_t *)(m->base + L->off + i * L->slot_size + L->cell_off);
}

static int drop(struct kcmd_metrics *m, unsigned id, int err)
{
	/* relaxed: a monotonic counter read on its own */
	atomic_fetch_add_explicit(&hdr(m)->dropped[id], 1, memory_order_relaxed);
	return err;
}

/* The key of a series in a hash table: every value NUL-terminated, in declaration order. */
static int make_key(const struct kcmd_metric *d, const char *const *labels, char *key,
                    size_t *ret_len)
{
	size_t len = 0;

	for (size_t l = 0; l < d->n_labels; l++) {
		size_t n = strlen(labels[l]) + 1;
		if (len + n > CTLM_KEY_MAX)
			return -ENAMETOOLONG;
		memcpy(key + len, labels[l], n);
		len += n;
	}
	*ret_len = len;
	return 0;
}

static int find_hashed(struct kcmd_metrics *m, unsigned id, const char *const *labels,
                       _Atomic uint64_t **ret)
{
	const struct kcmd_metric *d = &m->c->metrics[id];
	const struct mlay *L = &m->lay[id];
	char key[CTLM_KEY_MAX];
	size_t len;
	int r;

	if ((r = make_key(d, labels, key, &len)) < 0)
		return drop(m, id, r);
	uint64_t h = fnv(1469598103934665603ull, key, len);
	uint64_t mine = ST_CLAIMED(getpid());
	for (size_t p = 0; p < L->n_slots; p++) {
		size_t i = (size_t)((h + p) % L->n_slots);
		_Atomic uint64_t *st = slot_state(m, L, i);
		uint64_t *klen = (uint64_t *)(st + 1);
		char *k = (char *)(st + 2);
		int spins = 0;
	again:;
		/* acquire: pairs with the release store of PUBLISHED below (the key is complete) */
		uint64_t s = atomic_load_explicit(st, memory_order_acquire);
		if (s == ST_PUBLISHED) {
			if (*klen == len && !memcmp(k, key, len)) {
				*ret = slot_cells(m, L, i);
				return 0;
			}
			continue;
		}
		if (s == ST_FREE || (s != mine && spins >= CLAIM_SPINS &&
		                     kill((pid_t)(s >> 2), 0) < 0 && errno == ESRCH)) {
			/* acq_rel: claims the slot (FREE, or a dead claimer's) against other
			 * writers; the key written next is published by the release below */
			if (!atomic_compare_exchange_strong_explicit(
			            st, &s, mine, memory_order_acq_rel, memory_order_acquire))
				goto again;
			memcpy(k, key, len);
			*klen = len;
			/* release: the key is visible before the slot counts as published */
			atomic_store_explicit(st, ST_PUBLISHED, memory_order_release);
			*ret = slot_cells(m, L, i);
			return 0;
		}
		if (spins++ < CLAIM_SPINS)
			goto again; /* claimed by another writer: wait for its key */
		/* a live, slow claimer: probe on (the reader merges a key published twice) */
	}
	return drop(m, id, -ENOSPC);
}

static int find(struct kcmd_metrics *m, unsigned id, enum kcmd_metric_type type,
                const char *const *labels, _Atomic uint64_t **ret)
{
	const struct kcmd_metric *d;
	const struct mlay *L;
	size_t idx = 0;

	if (!m)
		return -EBADF;
	if (!m->writer)
		return -EBADF;
	if (id >= m->c->n_metrics)
		return -EINVAL;
	d = &m->c->metrics[id];
	L = &m->lay[id];
	if (d->type != type || (d->n_labels && !labels))
		return -EINVAL;
	for (size_t l = 0; l < d->n_labels; l++)
		if (!labels[l])
			return -EINVAL;
	if (L->hashed) {
		for (size_t l = 0; l < d->n_labels; l++) {
			const char *const *v = d->labels[l].values;
			size_t k = 0;
			while (v && v[k] && strcmp(v[k], labels[l]))
				k++;
			if (v && !v[k])
				return -EINVAL;
		}
		return find_hashed(m, id, labels, ret);
	}
	for (size_t l = 0; l < d->n_labels; l++) {
		const char *const *v = d->labels[l].values;
		size_t k = 0, n = n_values(&d->labels[l]);
		while (k < n && strcmp(v[k], labels[l]))
			k++;
		if (k == n)
			return -EINVAL;
		idx = idx * n + k;
	}
	_Atomic uint64_t *st = slot_state(m, L, idx);
	/* relaxed load, release store: the series exists from here on; pairs with the reader's
	 * acquire load of the state (nothing else to publish: the slot's key is its index) */
	if (atomic_load_explicit(st, memory_order_relaxed) != ST_PUBLISHED)
		atomic_store_explicit(st, ST_PUBLISHED, memory_order_release);
	*ret = slot_cells(m, L, idx);
	return 0;
}

static void add_double(_Atomic uint64_t *cell, double d)
{
	/* relaxed CAS loop: no concurrent addition is lost; nothing else is ordered by it */
	uint64_t old = atomic_load_explicit(cell, memory_order_relaxed), next;
	double v;
	do {
		memcpy(&v, &old, sizeof(v));
		v += d;
		memcpy(&next, &v, sizeof(next));
	} while (!atomic_compare_exchange_weak_explicit(cell, &old, next, memory_order_relaxed,
	                                                memory_order_relaxed));
}

int kcmd_metric_add(struct kcmd_metrics *m, unsigned id, const char *const *labels, uint64_t n)
{
	_Atomic uint64_t *c;
	int r = find(m, id, KCMD_METRIC_COUNTER, labels, &c);

	if (r < 0)
		return r;
	if (n)
		atomic_fetch_add_explicit(c, n, memory_order_relaxed); /* INVARIANTS: values */
	return 0;
}

int kcmd_metric_observe(struct kcmd_metrics *m, unsigned id, const char *const *labels, double v)
{
	_Atomic uint64_t *c;
	int r;

	if (m && isnan(v))
		return -EINVAL;
	if ((r = find(m, id, KCMD_METRIC_HISTOGRAM, labels, &c)) < 0)
		return r;
	const struct kcmd_metric *d = &m->c->metrics[id];
	size_t b = 0;
	while (b < d->n_buckets && v > d->buckets[b])
		b++;
	/* relaxed, bucket then sum then count (INVARIANTS: the reader's max) */
	atomic_fetch_add_explicit(&c[b], 1, memory_order_relaxed);
	add_double(&c[d->n_buckets + 2], v);
	atomic_fetch_add_explicit(&c[d->n_buckets + 1], 1, memory_order_relaxed);
	return 0;
}

int kcmd_metric_set(struct kcmd_metrics *m, unsigned id, const char *const *labels, double v)
{
	_Atomic uint64_t *c;
	uint64_t bits;
	int r = find(m, id, KCMD_METRIC_GAUGE, labels, &c);

	if (r < 0)
		return r;
	memcpy(&bits, &v, sizeof(bits));
	atomic_store_explicit(c, bits, memory_order_relaxed); /* last writer wins */
	return 0;
}

int kcmd_metric_gauge_add(struct kcmd_metrics *m, unsigned id, const char *const *labels, double d)
{
	_Atomic uint64_t *c;
	int r = find(m, id, KCMD_METRIC_GAUGE, labels, &c);

	if (r < 0)
		return r;
	add_double(c, d);
	return 0;
}

/* This process's region: one controller per process, mapped once at start-up. */
static _Atomic(struct kcmd_metrics *) self;

int ctlm_open_self(const struct kcmd_controller *c)
{
	struct kcmd_metrics *m, *exp = NULL;
	const char *s = getenv(CTLM_ENV);
	char *end;
	long fd;
	int r;

	if (!c || !c->n_metrics || !s || !*s)
		return -ENOENT;
	fd = strtol(s, &end, 10);
	if (*end || fd < 0 || fd > 1 << 20)
		return -EBADF;
	if ((r = ctlm_attach(c, (int)fd, true, &m)) < 0)
		return r;
	/* release: publishes the handle built above to kcmd_metrics_get's acquire load */
	if (!atomic_compare_exchange_strong_explicit(&self, &exp, m, memory_order_release,
	                                             memory_order_relaxed)) {
		ctlm_detach(m);
		return -EALREADY;
	}
	return 0;
}

struct kcmd_metrics *kcmd_metrics_get(void)
{
	/* acquire: pairs with the release CAS of ctlm_open_self (the handle is complete) */
	return atomic_load_explicit(&self, memory_order_acquire);
}

/* ---- rendering ----------------------------------------------------------------------------- */
void ctlm_format_float(char *out, size_t len, double v)
{
	char e[40];
	int p, x;

	if (isnan(v)) {
		snprintf(out, len, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(out, len, "%sInf", v > 0 ? "+" : "-");
		return;
	}
	if (v == 0) {
		snprintf(out, len, "%s0", signbit(v) ? "-" : "");
		return;
	}
	/* the shortest digits that read back as v */
	for (p = 1; p < 17; p++) {
		snprintf(e, sizeof(e), "%.*e", p - 1, v);
		if (strtod(e, NULL) == v)
			break;
	}
	snprintf(e, sizeof(e), "%.*e", p - 1, v);
	x = (int)strtol(strchr(e, 'e') + 1, NULL, 10);
	/* Go's 'g' with the shortest precision: %e when the exponent is < -4 or >= 6 */
	if (x < -4 || x >= 6)
		snprintf(out, len, "%s", e);
	else
		snprintf(out, len, "%.*f", p - 1 - x > 0 ? p - 1 - x : 0, v);
}

static void escape(FILE *f, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (quote && *s == '"')
			fputs("\\\"", f);
		else
			fputc(*s, f);
	}
}

struct series {
	const char *v[CTLM_MAX_LABELS]; /* label values, declaration order */
	char *key;                      /* a hash slot's key, copied (keys[], never moves) */
	_Atomic uint64_t *cells;
	_Atomic uint64_t *dup[4]; /* more slots with the same key (merged) */
	size_t n_dup;
};

struct sort_ctx {
	const struct kcmd_metric *d;
	const struct mlay *L;
};

static int series_cmp(const void *a, const void *b, void *ctx)
{
	const struct series *x = a, *y = b;
	const struct sort_ctx *sc = ctx;
	for (size_t l = 0; l < sc->d->n_labels; l++) {
		unsigned o = sc->L->order[l];
		int c = strcmp(x->v[o], y->v[o]);
		if (c)
			return c;
	}
	return 0;
}

static void labels_out(FILE *f, const struct kcmd_metric *d, const struct mlay *L,
                       const struct series *s, const char *le)
{
	if (!d->n_labels && !le)
		return;
	fputc('{', f);
	for (size_t l = 0; l < d->n_labels; l++) {
		unsigned o = L->order[l];
		fprintf(f, "%s%s=\"", l ? "," : "", d->labels[o].name);
		escape(f, s->v[o], true);
		fputc('"', f);
	}
	if (le)
		fprintf(f, "%sle=\"%s\"", d->n_labels ? "," : "", le);
	fputc('}', f);
}

static uint64_t cell(const struct series *s, size_t k)
{
	/* relaxed: INVARIANTS, values */
	uint64_t v = atomic_load_explicit(&s->cells[k], memory_order_relaxed);
	for (size_t i = 0; i < s->n_dup; i++)
		v += atomic_load_explicit(&s->dup[i][k], memory_order_relaxed);
	return v;
}

static double cell_double(const struct series *s, size_t k)
{
	uint64_t bits = atomic_load_explicit(&s->cells[k], memory_order_relaxed);
	double v, w;
	memcpy(&v, &bits, sizeof(v));
	for (size_t i = 0; i < s->n_dup; i++) {
		bits = atomic_load_explicit(&s->dup[i][k], memory_order_relaxed);
		memcpy(&w, &bits, sizeof(w));
		v += w;
	}
	return v;
}

static void render_one(struct kcmd_metrics *m, unsigned id, FILE *f)
{
	static const char *const types[] = {"", "counter", "gauge", "histogram"};
	static const char *const levels[] = {"", "[ALPHA] ", "[BETA] ", "[STABLE] "};
	const struct kcmd_metric *d = &m->c->metrics[id];
	const struct mlay *L = &m->lay[id];
	size_t n = 0, cap = 0;
	char num[40];

	/* room for the series published now; any published after this pass wait for the next
	 * scrape (acquire: pairs with the writers' release store of PUBLISHED) */
	for (size_t i = 0; i < L->n_slots; i++)
		cap += !d->n_labels || atomic_load_explicit(slot_state(m, L, i),
		                                            memory_order_acquire) == ST_PUBLISHED;
	struct series *ser = calloc(cap ? cap : 1, sizeof(*ser));
	char *keys = L->hashed ? malloc((cap ? cap : 1) * CTLM_KEY_MAX) : NULL;
	if (!ser || (L->hashed && !keys)) {
		free(ser);
		free(keys);
		return;
	}
	for (size_t i = 0; i < L->n_slots && n < cap; i++) {
		_Atomic uint64_t *st = slot_state(m, L, i);
		struct series *s = &ser[n];
		/* acquire: pairs with the writer's release store of PUBLISHED (the key, for a
		 * hash slot, is complete and never changes again) */
		if (d->n_labels && atomic_load_explicit(st, memory_order_acquire) != ST_PUBLISHED)
			continue;
		s->cells = slot_cells(m, L, i);
		if (L->hashed) {
			uint64_t klen = *(uint64_t *)(st + 1);
			if (klen > CTLM_KEY_MAX || !klen)
				continue; /* never written so: a corrupt region */
			s->key = keys + n * CTLM_KEY_MAX;
			memcpy(s->key, (char *)(st + 2), klen);
			size_t pos = 0, l = 0;
			for (; l < d->n_labels && pos < klen; l++) {
				s->v[l] = s->key + pos;
				pos += strnlen(s->key + pos, klen - pos) + 1;
			}
			if (l < d->n_labels || pos != klen || s->key[klen - 1])
				continue; /* corrupt: skip rather than read past the key */
		} else {
			size_t rest = i;
			for (size_t l = d->n_labels; l-- > 0;) {
				size_t nv = n_values(&d->labels[l]);
				s->v[l] = d->labels[l].values[rest % nv];
				rest /= nv;
			}
		}
		n++;
	}
	struct sort_ctx sc = {d, L};
	qsort_r(ser, n, sizeof(*ser), series_cmp, &sc);
	/* equal keys (a slow claimer's key published twice, INVARIANTS): one series */
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (w && !series_cmp(&ser[w - 1], &ser[i], &sc) && ser[w - 1].n_dup < 4) {
			ser[w - 1].dup[ser[w - 1].n_dup++] = ser[i].cells;
			continue;
		}
		if (w != i)
			ser[w] = ser[i];
		w++;
	}
	n = w;
	if (n) {
		fprintf(f, "# HELP %s %s", d->name, levels[d->stability]);
		escape(f, d->help, false);
		fprintf(f, "\n# TYPE %s %s\n", d->name, types[d->type]);
	}
	for (size_t i = 0; i < n; i++) {
		const struct series *s = &ser[i];
		if (d->type == KCMD_METRIC_COUNTER) {
			fputs(d->name, f);
			labels_out(f, d, L, s, NULL);
			fprintf(f, " %llu\n", (unsigned long long)cell(s, 0));
		} else if (d->type == KCMD_METRIC_GAUGE) {
			fputs(d->name, f);
			labels_out(f, d, L, s, NULL);
			ctlm_format_float(num, sizeof(num), cell_double(s, 0));
			fprintf(f, " %s\n", num);
		} else {
			uint64_t cum = 0;
			for (size_t b = 0; b < d->n_buckets; b++) {
				cum += cell(s, b);
				ctlm_format_float(num, sizeof(num), d->buckets[b]);
				fprintf(f, "%s_bucket", d->name);
				labels_out(f, d, L, s, num);
				fprintf(f, " %llu\n", (unsigned long long)cum);
			}
			cum += cell(s, d->n_buckets);
			uint64_t count = cell(s, d->n_buckets + 1);
			if (count < cum)
				count = cum; /* INVARIANTS: +Inf never below a bucket */
			fprintf(f, "%s_bucket", d->name);
			labels_out(f, d, L, s, "+Inf");
			fprintf(f, " %llu\n%s_sum", (unsigned long long)count, d->name);
			labels_out(f, d, L, s, NULL);
			ctlm_format_float(num, sizeof(num), cell_double(s, d->n_buckets + 2));
			fprintf(f, " %s\n%s_count", num, d->name);
			labels_out(f, d, L, s, NULL);
			fprintf(f, " %llu\n", (unsigned long long)count);
		}
	}
	free(ser);
	free(keys);
}

void ctlm_render(struct kcmd_metrics *m, FILE *f)
{
	for (unsigned i = 0; m && i < m->c->n_metrics; i++)
		render_one(m, i, f);
}

void ctlm_render_dropped(struct kcmd_metrics *const *ms, size_t n, FILE *f)
{
	bool head = false;

	for (size_t r = 0; r < n; r++)
		for (unsigned i = 0; ms[r] && i < ms[r]->c->n_metrics; i++) {
			uint64_t d = ctlm_dropped(ms[r], i);
			if (!d)
				continue;
			if (!head)
				fputs("# HELP kcmd_metric_series_dropped_total kcmd: updates of a "
				      "controller metric not recorded (its series table was full, "
				      "or "
				      "the label values too long)\n"
				      "# TYPE kcmd_metric_series_dropped_total counter\n",
				      f);
			head = true;
			fprintf(f, "kcmd_metric_series_dropped_total{metric=\"%s\"} %llu\n",
			        ms[r]->c->metrics[i].name, (unsigned long long)d);
		}
}
