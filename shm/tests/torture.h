/* SPDX-License-Identifier: Apache-2.0 */
/* shm/tests/torture.h - the multi-process kill -9 torture harness (included by test-torture.c
 * for the short run in `make unit` and by soak-torture.c for `make soak`).
 *
 * A supervisor (this process) owns the memfd, forks one writer and R readers and, until the
 * deadline, SIGKILLs a random one every few milliseconds and respawns it. A respawned writer
 * recovers the arena (mark/sweep, index rebuild) and continues in it.
 *
 * Oracles (every object a reader returns is checked):
 *  - content: the object is a deterministic function of (key, rv): namespace, uid, labels,
 *    owner references and every payload byte are recomputed from the name and resourceVersion
 *    and compared. Any mismatch is a torn or mixed read ("torn").
 *  - membership: an object returned by an owner walk has that controller, or is an orphan of
 *    the namespace asked for; by a namespace walk, that namespace.
 *  - monotonicity: per reader process and key, the resourceVersion never goes backwards, also
 *    across writer restarts (the restarted writer resumes after the highest version published).
 *  - recovery: every writer start runs shm_writer_check (0 violations expected) and the recovery
 *    must drop nothing (stats.violations == 0); the final state is checked once more.
 *  - types (arena.h T2, T3): the writer also churns T_TYPES resources "crd-<j>" (register,
 *    one object, sync mark; delete, retire), about half of them live at once, so ids are reused
 *    under new generations in every chunk of the resource table and the table grows over
 *    T_TYPES / SHM_ABI_TCHUNK_SLOTS chunks while the writer is being killed. Readers resolve
 *    random ids: a registered "crd-<j>" must have kind "Crd<j>", a sync mark "" or "s<j>", and
 *    its object "o-<j>" of the same generation the uid of j. Anything else is "type_torn".
 * Negative control: with SHM_TEST_NO_VALIDATE in the readers the same oracle must report torn
 * reads; the test asserts it does. Both runs use SHM_TEST_NO_QUARANTINE in the writer (the block
 * freed last is reused first) and SHM_TEST_SLOW_COPY in the readers (a 20 us pause half-way
 * through copying a large block, as a preemption would), so the hot keys' blocks are rewritten
 * during reads all the time: the harshest case for validation, and a negative control that does
 * not depend on luck.
 * Type negative control: a writer with SHM_TEST_TYPE_EARLY publishes a registration before its
 * strings (pausing between them); the type oracle must report type_torn.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/arena.h"
#include "shm/shm-internal.h"

#define T_KEYS    1000
#define T_NS      4
#define T_OWNERS  5
#define T_READERS 4
#define T_HOT     8 /* hot keys: half the traffic, so reads race with reuse */
#define T_HOT_LEN 8000
#define T_TYPES   1600 /* churned resource names: ~800 live ids, over 3 chunks */

struct t_stats {
	_Atomic uint64_t reads, objects, torn, backwards, wrong_member, errors;
	_Atomic uint64_t writer_ops, writer_starts, writer_resumed_objects, check_fail,
	        recover_violations;
	_Atomic uint64_t max_rv_published;
	_Atomic uint64_t type_checked, type_torn, type_ops, max_n_types;
};

static struct t_stats *ts;

static uint64_t t_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t t_rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- the deterministic object of (key, rv) --------------------------------------------------- */
static size_t t_payload_len(unsigned k, uint64_t rv)
{
	/* hot keys: large, one size class, so a preempted reader's copy overlaps a reuse */
	if (k < T_HOT)
		return T_HOT_LEN;
	uint64_t s = (uint64_t)k * 1000003u + rv * 7919u + 1;
	return 16 + 8 * (size_t)(t_rng(&s) % 60);
}

/* Payload word i of (k, rv): cheap to produce and to check, different for every (k, rv, i). */
static inline uint64_t t_word(unsigned k, uint64_t rv, size_t i)
{
	return ((uint64_t)k << 44 ^ rv * UINT64_C(0x9e3779b97f4a7c15)) +
	       i * UINT64_C(0xbf58476d1ce4e5b9);
}

static size_t t_payload(unsigned k, uint64_t rv, uint8_t *out)
{
	size_t len = t_payload_len(k, rv);
	for (size_t i = 0; i < len / 8; i++) {
		uint64_t w = t_word(k, rv, i);
		memcpy(out + 8 * i, &w, 8);
	}
	return len;
}

static bool t_payload_ok(unsigned k, uint64_t rv, const uint8_t *p, size_t len)
{
	if (len != t_payload_len(k, rv))
		return false;
	for (size_t i = 0; i < len / 8; i++) {
		uint64_t w;
		memcpy(&w, p + 8 * i, 8);
		if (w != t_word(k, rv, i))
			return false;
	}
	return true;
}

static void t_name(unsigned k, char *out, size_t n)
{
	snprintf(out, n, "obj-%u", k);
}
static void t_ns(unsigned k, char *out, size_t n)
{
	snprintf(out, n, "ns-%u", k % T_NS);
}
static void t_uid(unsigned k, char *out)
{
	snprintf(out, 37, "%08x-1111-4222-8333-%012x", k, k * 31u);
}
static void t_owner(uint64_t rv, char *out)
{
	snprintf(out, 37, "0000000%u-aaaa-4bbb-8ccc-dddddddddddd", (unsigned)(rv % T_OWNERS));
}
static bool t_controlled(uint64_t rv)
{
	return rv % 3 != 0;
}

static int t_upsert(struct shm_arena *w, int type, unsigned k, uint64_t rv)
{
	char name[32], ns[16], uid[37], rvs[24], owner[37], key[16], mod[8];
	static uint8_t payload[T_HOT_LEN];
	t_name(k, name, sizeof(name));
	t_ns(k, ns, sizeof(ns));
	t_uid(k, uid);
	t_owner(rv, owner);
	snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
	snprintf(key, sizeof(key), "%u", k);
	snprintf(mod, sizeof(mod), "%u", (unsigned)(rv % 7));
	struct shm_label labels[] = {{"key", key}, {"rvmod", mod}};
	struct shm_owner_ref own = {"apps/v1", "ReplicaSet", "rs", owner, t_controlled(rv), true};
	size_t plen = t_payload(k, rv, payload);
	struct shm_record_in r = {.type = (uint16_t)type,
	                          .kind = SHM_RECORD_POD,
	                          .ns = ns,
	                          .name = name,
	                          .uid = uid,
	                          .rv = rvs,
	                          .labels = labels,
	                          .n_labels = 2,
	                          .owners = &own,
	                          .n_owners = 1,
	                          .payload = payload,
	                          .payload_len = plen};
	return shm_writer_upsert(w, &r);
}

static _Atomic int t_reports;

static void t_report(const char *what, const struct shm_obj *o)
{
	if (atomic_fetch_add(&t_reports, 1) < 5)
		fprintf(stderr, "torture: %s: %s/%s rv=%s\n", what, o->ns ? o->ns : "?",
		        o->name ? o->name : "?", o->rv ? o->rv : "?");
}

/* Verify obj against its (key, rv); returns the key or -1 (counted as torn). */
static int t_verify(const struct shm_obj *o, uint64_t *ret_rv)
{
	unsigned k;
	char *end;
	char buf[64];
	if (sscanf(o->name, "obj-%u", &k) != 1 || k >= T_KEYS)
		goto torn;
	errno = 0;
	uint64_t rv = strtoull(o->rv, &end, 10);
	if (errno || *end || end == o->rv)
		goto torn;
	t_ns(k, buf, sizeof(buf));
	if (strcmp(o->ns, buf))
		goto torn;
	t_uid(k, buf);
	if (strcmp(o->uid, buf))
		goto torn;
	snprintf(buf, sizeof(buf), "%u", k);
	const char *lv = shm_obj_label(o, "key");
	if (o->n_labels != 2 || !lv || strcmp(lv, buf))
		goto torn;
	snprintf(buf, sizeof(buf), "%u", (unsigned)(rv % 7));
	lv = shm_obj_label(o, "rvmod");
	if (!lv || strcmp(lv, buf))
		goto torn;
	t_owner(rv, buf);
	if (o->n_owners != 1 || strcmp(o->owners[0].uid, buf) ||
	    o->owners[0].controller != (int8_t)t_controlled(rv) ||
	    o->owners[0].block_owner_deletion != 1 || strcmp(o->owners[0].kind, "ReplicaSet"))
		goto torn;
	if (!t_payload_ok(k, rv, o->payload, o->payload_len))
		goto torn;
	*ret_rv = rv;
	return (int)k;
torn:
	atomic_fetch_add(&ts->torn, 1);
	t_report("torn", o);
	return -1;
}

/* ---- reader -------------------------------------------------------------------------------------
 */
struct t_reader {
	uint64_t last[T_KEYS];
	const char *want_owner, *want_ns;
	bool owner_walk;
};

static int t_seen(const struct shm_obj *o, void *ud)
{
	struct t_reader *r = ud;
	uint64_t rv;
	atomic_fetch_add_explicit(&ts->objects, 1, memory_order_relaxed);
	int k = t_verify(o, &rv);
	if (k < 0)
		return 0;
	if (rv < r->last[k]) {
		atomic_fetch_add(&ts->backwards, 1);
		t_report("backwards", o);
	}
	r->last[k] = rv;
	if (r->owner_walk) {
		const struct shm_owner_ref *c = shm_obj_controller(o);
		bool ok = c ? strcmp(c->uid, r->want_owner) == 0 : strcmp(o->ns, r->want_ns) == 0;
		if (!ok) {
			atomic_fetch_add(&ts->wrong_member, 1);
			t_report("wrong member (owner walk)", o);
		}
	} else if (r->want_ns && strcmp(o->ns, r->want_ns) != 0) {
		atomic_fetch_add(&ts->wrong_member, 1);
		t_report("wrong member (ns walk)", o);
	}
	return 0;
}

/* The type oracle: one random id, its entry and its object checked against its name. */
static void t_check_type(struct shm_arena *a, uint64_t *s)
{
	struct shm_stats st;
	if (shm_reader_stats(a, &st) < 0 || st.n_types < 2)
		return;
	uint64_t seen = atomic_load(&ts->max_n_types);
	while (st.n_types > seen &&
	       !atomic_compare_exchange_weak(&ts->max_n_types, &seen, st.n_types))
		;
	uint16_t id = (uint16_t)(1 + t_rng(s) % (st.n_types - 1));
	struct shm_type_info ti;
	if (shm_reader_type_info(a, id, &ti) < 0 || strcmp(ti.group, "churn.io") != 0)
		return;
	atomic_fetch_add_explicit(&ts->type_checked, 1, memory_order_relaxed);
	unsigned j;
	char buf[64], uid[37];
	bool ok = sscanf(ti.resource, "crd-%u", &j) == 1 && j < T_TYPES;
	if (ok) {
		snprintf(buf, sizeof(buf), "Crd%u", j);
		ok = strcmp(ti.kind, buf) == 0 && strcmp(ti.version, "v1") == 0;
		snprintf(buf, sizeof(buf), "s%u", j);
		ok = ok && (ti.rv[0] == 0 || strcmp(ti.rv, buf) == 0);
	}
	if (ok) {
		struct shm_obj o = SHM_OBJ_INIT;
		snprintf(buf, sizeof(buf), "o-%u", j);
		if (shm_reader_get(a, id, "churn", buf, &o) == 0 && o.type_gen == ti.gen) {
			snprintf(uid, sizeof(uid), "%08x-2222-4333-8444-000000000000", j);
			ok = strcmp(o.uid, uid) == 0 && o.type == id;
		}
		shm_obj_release(&o);
	}
	if (!ok) {
		atomic_fetch_add(&ts->type_torn, 1);
		if (atomic_fetch_add(&t_reports, 1) < 5)
			fprintf(stderr, "torture: type torn: id %u %s/%s kind %s rv %s\n", id,
			        ti.group, ti.resource, ti.kind, ti.rv);
	}
}

static _Noreturn void t_reader_main(int fd, unsigned seed, bool broken)
{
	struct shm_arena *a;
	shm__test_flags |= SHM_TEST_SLOW_COPY; /* both runs: the same widened race windows */
	if (broken)
		shm__test_flags |= SHM_TEST_NO_VALIDATE;
	if (shm_reader_open(fd, &a) < 0)
		_exit(3);
	static struct t_reader st;
	memset(&st, 0, sizeof(st));
	struct shm_obj o = SHM_OBJ_INIT;
	uint64_t s = seed * 2654435761u + 1;
	int type = -1;
	for (;;) {
		if (type < 0) {
			type = shm_reader_find_type(a, "", "v1", "pods");
			if (type < 0) {
				usleep(1000);
				continue;
			}
		}
		unsigned op = (unsigned)(t_rng(&s) % 100), k = (unsigned)(t_rng(&s) % T_KEYS);
		if (t_rng(&s) & 1)
			k %= T_HOT; /* half the reads go to the keys the writer updates most */
		char name[32], ns[16], uid[37], owner[37];
		int r;
		st.owner_walk = false;
		st.want_ns = NULL;
		if (op < 15) {
			t_check_type(a, &s);
			r = 0;
		} else if (op < 75) {
			t_name(k, name, sizeof(name));
			t_ns(k, ns, sizeof(ns));
			r = shm_reader_get(a, (uint16_t)type, ns, name, &o);
			if (r == 0)
				t_seen(&o, &st);
		} else if (op < 95) {
			t_uid(k, uid);
			r = shm_reader_get_uid(a, uid, &o);
			if (r == 0)
				t_seen(&o, &st);
		} else if (op < 98) {
			t_owner(k, owner);
			t_ns(k, ns, sizeof(ns));
			st.owner_walk = true;
			st.want_owner = owner;
			st.want_ns = ns;
			r = shm_reader_list_controlled(a, (uint16_t)type, owner, ns, t_seen, &st);
		} else {
			t_ns(k, ns, sizeof(ns));
			st.want_ns = ns;
			r = shm_reader_list_ns(a, (uint16_t)type, ns, t_seen, &st);
		}
		if (r < 0 && r != -ENOENT)
			atomic_fetch_add(&ts->errors, 1);
		atomic_fetch_add_explicit(&ts->reads, 1, memory_order_relaxed);
	}
}

/* ---- writer -------------------------------------------------------------------------------------
 */
struct t_max {
	uint64_t max;
};
static int t_max_fn(const struct shm_obj *o, void *ud)
{
	struct t_max *m = ud;
	uint64_t rv = strtoull(o->rv, NULL, 10);
	if (rv > m->max)
		m->max = rv;
	return 0;
}

/* One step of the type churn: resource crd-<j> appears (registered, its object, its sync mark)
 * or goes (object deleted, type retired). A kill between the steps leaves a state the next
 * step of the same j completes. */
static int t_type_step(struct shm_arena *w, unsigned j)
{
	char res[32], kind[32], name[32], uid[37], sync[16];
	snprintf(res, sizeof(res), "crd-%u", j);
	snprintf(kind, sizeof(kind), "Crd%u", j);
	snprintf(name, sizeof(name), "o-%u", j);
	snprintf(uid, sizeof(uid), "%08x-2222-4333-8444-000000000000", j);
	snprintf(sync, sizeof(sync), "s%u", j);
	int id = shm_reader_find_type(w, "churn.io", "v1", res), r;
	if (id >= 0) {
		r = shm_writer_delete(w, (uint16_t)id, "churn", name);
		if (r < 0 && r != -ENOENT)
			return r;
		return shm_writer_retire_type(w, (uint16_t)id);
	}
	id = shm_writer_register_type(
	        w, &(struct shm_type_desc){"churn.io", "v1", res, kind, SHM_RECORD_META});
	if (id < 0)
		return id;
	struct shm_record_in rec = {.type = (uint16_t)id,
	                            .kind = SHM_RECORD_META,
	                            .ns = "churn",
	                            .name = name,
	                            .uid = uid,
	                            .rv = "1"};
	if ((r = shm_writer_upsert(w, &rec)) < 0)
		return r;
	return shm_writer_set_sync(w, (uint16_t)id, sync, true);
}

static _Noreturn void t_writer_main(int fd, unsigned seed, bool type_early)
{
	struct shm_arena *w;
	int r;
	shm__test_flags |= SHM_TEST_NO_QUARANTINE | (type_early ? SHM_TEST_TYPE_EARLY : 0);
	while ((r = shm_writer_open(fd, &w)) == -EBUSY)
		usleep(1000);
	if (r < 0) {
		fprintf(stderr, "torture: writer open: %s\n", strerror(-r));
		_exit(4);
	}
	atomic_fetch_add(&ts->writer_starts, 1);
	if (shm_writer_check(w) != 0)
		atomic_fetch_add(&ts->check_fail, 1);
	struct shm_stats st;
	shm_reader_stats(w, &st);
	atomic_fetch_add(&ts->recover_violations, st.violations);
	atomic_fetch_add(&ts->writer_resumed_objects, st.objects);
	int type = shm_writer_register_type(
	        w, &(struct shm_type_desc){"", "v1", "pods", "Pod", SHM_RECORD_POD});
	if (type < 0)
		_exit(5);
	/* resume after the highest version ever published (objects, or the sync mark for deletes)
	 */
	struct t_max m = {0};
	shm_reader_list(w, (uint16_t)type, t_max_fn, &m);
	struct shm_type_info ti;
	if (shm_reader_type_info(w, (uint16_t)type, &ti) == 0 && strtoull(ti.rv, NULL, 10) > m.max)
		m.max = strtoull(ti.rv, NULL, 10);
	uint64_t rv = m.max + 1;
	uint64_t s = seed * 0x9e3779b97f4a7c15u + 7;
	char rvs[24], name[32], ns[16];
	for (uint64_t i = 0;; i++) {
		unsigned k = (unsigned)(t_rng(&s) % T_KEYS);
		if (t_rng(&s) & 1)
			k %= T_HOT;
		if (t_rng(&s) % 10 == 0) {
			snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
			shm_writer_set_sync(w, (uint16_t)type, rvs,
			                    true); /* before the delete is visible */
			t_name(k, name, sizeof(name));
			t_ns(k, ns, sizeof(ns));
			r = shm_writer_delete(w, (uint16_t)type, ns, name);
			if (r < 0 && r != -ENOENT)
				_exit(6);
		} else if ((r = t_upsert(w, type, k, rv)) < 0) {
			fprintf(stderr, "torture: upsert: %s\n", strerror(-r));
			_exit(7);
		}
		rv++;
		atomic_fetch_add_explicit(&ts->writer_ops, 1, memory_order_relaxed);
		if ((i & 7) == 0) {
			if ((r = t_type_step(w, (unsigned)(t_rng(&s) % T_TYPES))) < 0) {
				fprintf(stderr, "torture: type churn: %s\n", strerror(-r));
				_exit(8);
			}
			atomic_fetch_add_explicit(&ts->type_ops, 1, memory_order_relaxed);
		}
		if ((i & 63) == 0) {
			snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
			shm_writer_set_sync(w, (uint16_t)type, rvs, true);
		}
	}
}

/* ---- supervisor -------------------------------------------------------------------------------
 */
struct t_result {
	uint64_t reads, objects, torn, backwards, wrong_member, errors, writer_ops, writer_starts;
	uint64_t writer_kills, reader_kills, resumed_objects, check_fail, recover_violations,
	        final_check;
	uint64_t final_objects;
	uint64_t type_checked, type_torn, type_ops, max_n_types;
};

/* The variants: the healthy run, readers without validation (object oracle), a writer with
 * the broken type publication order (type oracle). */
enum t_mode { T_HEALTHY, T_NO_VALIDATE, T_TYPE_EARLY };

static pid_t t_spawn(int fd, int role, unsigned seed, enum t_mode mode)
{
	pid_t p = fork();
	if (p == 0) {
		if (role == 0)
			t_writer_main(fd, seed, mode == T_TYPE_EARLY);
		t_reader_main(fd, seed, mode == T_NO_VALIDATE);
	}
	return p;
}

static void t_kill(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

static int t_run(double seconds, enum t_mode broken, struct t_result *res)
{
	ts = mmap(NULL, sizeof(*ts), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ts == MAP_FAILED)
		return -errno;
	memset(ts, 0, sizeof(*ts));
	int fd, ro, r;
	if ((r = shm_arena_create(&(struct shm_create_opts){.max_size = UINT64_C(1) << 32}, &fd)) <
	            0 ||
	    (r = shm_arena_reader_fd(fd, &ro)) < 0)
		return r;
	memset(res, 0, sizeof(*res));
	pid_t writer = t_spawn(fd, 0, 1, broken);
	pid_t readers[T_READERS];
	for (int i = 0; i < T_READERS; i++)
		readers[i] = t_spawn(ro, 1, 100 + (unsigned)i, broken);
	uint64_t end = t_now_ns() + (uint64_t)(seconds * 1e9);
	uint64_t s = (uint64_t)getpid() * 77 + 3;
	unsigned gen = 2;
	while (t_now_ns() < end) {
		usleep(2000 + (useconds_t)(t_rng(&s) % 30000));
		if (t_rng(&s) % 3 == 0) {
			t_kill(writer);
			res->writer_kills++;
			writer = t_spawn(fd, 0, gen++, broken);
		} else {
			int i = (int)(t_rng(&s) % T_READERS);
			t_kill(readers[i]);
			res->reader_kills++;
			readers[i] = t_spawn(ro, 1, gen++, broken);
		}
	}
	for (int i = 0; i < T_READERS; i++)
		t_kill(readers[i]);
	t_kill(writer);
	/* final recovery and check, in this process */
	struct shm_arena *w;
	shm__test_flags = 0;
	if ((r = shm_writer_open(fd, &w)) < 0)
		return r;
	res->final_check = (uint64_t)shm_writer_check(w);
	struct shm_stats st;
	shm_reader_stats(w, &st);
	res->final_objects = st.objects;
	res->recover_violations = st.violations;
	shm_arena_close(w);
	close(ro);
	close(fd);
	res->reads = ts->reads;
	res->objects = ts->objects;
	res->torn = ts->torn;
	res->backwards = ts->backwards;
	res->wrong_member = ts->wrong_member;
	res->errors = ts->errors;
	res->writer_ops = ts->writer_ops;
	res->writer_starts = ts->writer_starts;
	res->resumed_objects = ts->writer_resumed_objects;
	res->check_fail = ts->check_fail;
	res->recover_violations += ts->recover_violations;
	res->type_checked = ts->type_checked;
	res->type_torn = ts->type_torn;
	res->type_ops = ts->type_ops;
	res->max_n_types = ts->max_n_types;
	munmap(ts, sizeof(*ts));
	return 0;
}

static void t_print(const char *label, const struct t_result *r, double secs)
{
	printf("%s (%.0f s): %llu reads, %llu objects checked, %llu writer ops, %llu writer kills "
	       "(%llu starts, "
	       "%llu objects found on restart), %llu reader kills\n"
	       "  torn=%llu backwards=%llu wrong_member=%llu errors=%llu check_fail=%llu "
	       "recover_violations=%llu "
	       "final_check=%llu final_objects=%llu\n"
	       "  types: %llu churn steps, %llu ids at most (%llu chunks), %llu checked, "
	       "type_torn=%llu\n",
	       label, secs, (unsigned long long)r->reads, (unsigned long long)r->objects,
	       (unsigned long long)r->writer_ops, (unsigned long long)r->writer_kills,
	       (unsigned long long)r->writer_starts, (unsigned long long)r->resumed_objects,
	       (unsigned long long)r->reader_kills, (unsigned long long)r->torn,
	       (unsigned long long)r->backwards, (unsigned long long)r->wrong_member,
	       (unsigned long long)r->errors, (unsigned long long)r->check_fail,
	       (unsigned long long)r->recover_violations, (unsigned long long)r->final_check,
	       (unsigned long long)r->final_objects, (unsigned long long)r->type_ops,
	       (unsigned long long)r->max_n_types,
	       (unsigned long long)((r->max_n_types + SHM_ABI_TCHUNK_SLOTS - 1) /
	                            SHM_ABI_TCHUNK_SLOTS),
	       (unsigned long long)r->type_checked, (unsigned long long)r->type_torn);
	fflush(stdout);
}

/* 0 if the healthy run is clean and busy enough to mean something. */
static int t_judge_healthy(const struct t_result *r)
{
	int bad = 0;
	if (r->torn || r->backwards || r->wrong_member || r->errors || r->check_fail ||
	    r->recover_violations || r->final_check || r->type_torn)
		bad = 1;
	if (r->writer_kills < 5 || r->reader_kills < 5 || r->objects < 10000 ||
	    r->writer_ops < 10000 || r->resumed_objects == 0 || r->final_objects == 0 ||
	    r->type_checked < 1000 || r->max_n_types <= 2 * SHM_ABI_TCHUNK_SLOTS) {
		printf("torture: run too idle to judge\n");
		bad = 1;
	}
	return bad;
}
