/* SPDX-License-Identifier: Apache-2.0 */
/* shm/bench/bench-shm.c - arena figures at informer scale.
 *
 * Workload: 1,000 ReplicaSets (10 namespaces, a 1 KiB raw-JSON template each) and 100 pods per
 * ReplicaSet as the RS controller creates them: name "<rs>-<5 chars>", labels {app,
 * pod-template-hash} shared by the RS's pods, one controller reference, a 64-byte typed payload
 * (phase, ready condition and its time, creation/deletion timestamps, node name index, restarts),
 * a canonical UUID and a 7-8 digit resourceVersion.
 *
 * Prints:
 *   bench: shm.bytes_per_pod N B          arena bytes live for the pods / pods (records, interned
 *                                          strings and label/owner sets, handle slots, all indexes)
 *   bench: shm.get_ns_p99 N ns            p99 of shm_reader_get from a reader mapping (random pods)
 *   bench: shm.list_rs_pods_us N us       mean time to walk one RS's 100 pods (+ orphans of its ns)
 *   bench: shm.writer_updates_per_s N ops/s  pod updates with 4 reader processes doing gets
 *   bench: shm.find_type_sweep_2000_scan_us N us  2,000 shm_reader_find_type calls over 2,000
 *                                          CRD types, each found by scanning the table
 *   bench: shm.find_type_sweep_2000_us N us  the same sweep again, answered from the hints
 * BENCH_PODS overrides the pod count (default 100000).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/arena.h"

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static unsigned n_pods = 100000, n_rs;
static int t_pods, t_rs;

/* Deployment "web-<n>" (5-9 chars), pod-template-hash of 10 chars as upstream makes them (a
 * hash printed in a consonant-and-digit alphabet), pod name "<rs>-<5 chars>": 24-28 chars. */
static void rs_hash(unsigned r, char *out, size_t n)
{
	static const char al[] = "bcdfghjklmnpqrstvwxz2456789";
	uint64_t s = r * 0x2545f4914f6cdd1du + 17;
	size_t i = 0;
	for (; i < 10 && i + 1 < n; i++)
		out[i] = al[rng(&s) % 27];
	out[i] = 0;
}
static void rs_name(unsigned r, char *out, size_t n)
{
	char h[12];
	rs_hash(r, h, sizeof(h));
	snprintf(out, n, "web-%u-%s", r % 100000u, h);
}
static void rs_uid(unsigned r, char *out)
{
	snprintf(out, 37, "%08x-7a1c-4e2b-9f00-%012x", r, r * 977u);
}
static void pod_ns(unsigned r, char *out, size_t n)
{
	snprintf(out, n, "team-%u", r % 10);
}
static void pod_name(unsigned p, char *out, size_t n)
{
	static const char al[] = "bcdfghjklmnpqrstvwxz2456789";
	char rs[40], sfx[6];
	uint64_t s = p * 0x9e3779b97f4a7c15u + 1;
	for (int i = 0; i < 5; i++)
		sfx[i] = al[rng(&s) % 27];
	sfx[5] = 0;
	rs_name(p / 100, rs, sizeof(rs));
	snprintf(out, n, "%s-%s", rs, sfx);
}

/* Strings are made once up front so the timed loops measure the arena, not snprintf. */
struct pod_str {
	char name[72], uid[37];
};
struct rs_str {
	char ns[16], name[48], uid[37], app[24], hash[12];
};
static struct pod_str *ps;
static struct rs_str *rss;

static void make_strings(void)
{
	ps = calloc(n_pods, sizeof(*ps));
	rss = calloc(n_rs, sizeof(*rss));
	for (unsigned p = 0; p < n_pods; p++) {
		pod_name(p, ps[p].name, sizeof(ps[p].name));
		snprintf(ps[p].uid, sizeof(ps[p].uid), "%08x-3b2d-4c1e-8a7f-%012x", p, p * 131u);
	}
	for (unsigned r = 0; r < n_rs; r++) {
		pod_ns(r, rss[r].ns, sizeof(rss[r].ns));
		rs_name(r, rss[r].name, sizeof(rss[r].name));
		rs_uid(r, rss[r].uid);
		snprintf(rss[r].app, sizeof(rss[r].app), "app-%u", r);
		rs_hash(r, rss[r].hash, sizeof(rss[r].hash));
	}
}

static void utoa(unsigned v, char *out)
{
	char t[16];
	int n = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (int i = 0; i < n; i++)
		out[i] = t[n - 1 - i];
	out[n] = 0;
}

static int put_pod(struct shm_arena *w, unsigned p, unsigned rv)
{
	const struct rs_str *rs = &rss[p / 100];
	const char *ns = rs->ns, *name = ps[p].name, *uid = ps[p].uid;
	char rvs[16];
	utoa(rv, rvs);
	struct shm_label labels[] = {{"app", rs->app}, {"pod-template-hash", rs->hash}};
	struct shm_owner_ref own = {"apps/v1", "ReplicaSet", rs->name, rs->uid, true, true};
	uint8_t payload[64];
	memset(payload, 0, sizeof(payload));
	memcpy(payload, &rv, sizeof(rv));
	struct shm_record_in rec = {.type = (uint16_t)t_pods,
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
	                            .payload_len = sizeof(payload)};
	return shm_writer_upsert(w, &rec);
}

static int put_rs(struct shm_arena *w, unsigned r)
{
	char ns[16], name[48], uid[37], app[32], hash[16];
	static char tmpl[1024];
	pod_ns(r, ns, sizeof(ns));
	rs_name(r, name, sizeof(name));
	rs_uid(r, uid);
	snprintf(app, sizeof(app), "app-%u", r);
	rs_hash(r, hash, sizeof(hash));
	memset(tmpl, ' ', sizeof(tmpl));
	struct shm_label labels[] = {{"app", app}, {"pod-template-hash", hash}};
	struct shm_owner_ref own = {
	        "apps/v1", "Deployment", app, "dddddddd-0000-4000-8000-000000000000", true, true};
	struct shm_record_in rec = {.type = (uint16_t)t_rs,
	                            .kind = SHM_RECORD_REPLICASET,
	                            .ns = ns,
	                            .name = name,
	                            .uid = uid,
	                            .rv = "1000",
	                            .labels = labels,
	                            .n_labels = 2,
	                            .owners = &own,
	                            .n_owners = 1,
	                            .payload = tmpl,
	                            .payload_len = sizeof(tmpl)};
	return shm_writer_upsert(w, &rec);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int count_fn(const struct shm_obj *o, void *ud)
{
	(void)o;
	(*(int *)ud)++;
	return 0;
}

int main(void)
{
	const char *e = getenv("BENCH_PODS");
	if (e && atoi(e) >= 100)
		n_pods = (unsigned)strtoul(e, NULL, 10);
	n_rs = n_pods / 100;
	int fd, ro, r;
	struct shm_arena *w, *rd;
	if ((r = shm_arena_create(&(struct shm_create_opts){.max_size = UINT64_C(8) << 30}, &fd)) <
	            0 ||
	    (r = shm_arena_reader_fd(fd, &ro)) < 0 || (r = shm_writer_open(fd, &w)) < 0 ||
	    (r = shm_reader_open(ro, &rd)) < 0) {
		fprintf(stderr, "bench: setup: %s\n", strerror(-r));
		return 1;
	}
	make_strings();
	t_pods = shm_writer_register_type(
	        w, &(struct shm_type_desc){"", "v1", "pods", "Pod", SHM_RECORD_POD});
	t_rs = shm_writer_register_type(w, &(struct shm_type_desc){"apps", "v1", "replicasets",
	                                                           "ReplicaSet",
	                                                           SHM_RECORD_REPLICASET});
	for (unsigned i = 0; i < n_rs; i++)
		if (put_rs(w, i) < 0)
			return 1;
	struct shm_stats s0, s1;
	shm_reader_stats(w, &s0);
	uint64_t t0 = now_ns();
	for (unsigned p = 0; p < n_pods; p++)
		if ((r = put_pod(w, p, 2000000 + p)) != 1) {
			fprintf(stderr, "bench: put_pod %u: %d\n", p, r);
			return 1;
		}
	uint64_t t1 = now_ns();
	shm_reader_stats(w, &s1);
	double bpp = (double)(s1.live_bytes - s0.live_bytes) / n_pods;
	fprintf(stderr,
	        "bench: %u pods created in %.1f ms (%.0f creates/s); arena size %llu MiB, carved "
	        "%llu MiB\n",
	        n_pods, (t1 - t0) / 1e6, n_pods / ((t1 - t0) / 1e9),
	        (unsigned long long)(s1.size >> 20), (unsigned long long)(s1.carved >> 20));
	printf("bench: shm.bytes_per_pod %.0f B\n", bpp);

	/* gets from a reader mapping */
	enum { NGET = 1000000 };
	uint64_t *lat = malloc(NGET * sizeof(*lat));
	struct shm_obj o = SHM_OBJ_INIT;
	uint64_t s = 12345;
	char ns[16];
	for (int i = 0; i < NGET; i++) {
		unsigned p = (unsigned)(rng(&s) % n_pods);
		uint64_t a = now_ns();
		r = shm_reader_get(rd, (uint16_t)t_pods, rss[p / 100].ns, ps[p].name, &o);
		lat[i] = now_ns() - a;
		if (r < 0) {
			fprintf(stderr, "bench: get: %s\n", strerror(-r));
			return 1;
		}
	}
	qsort(lat, NGET, sizeof(*lat), cmp_u64);
	fprintf(stderr, "bench: get p50 %llu ns, p90 %llu ns, p99 %llu ns, p99.9 %llu ns\n",
	        (unsigned long long)lat[NGET / 2], (unsigned long long)lat[NGET * 9 / 10],
	        (unsigned long long)lat[NGET * 99 / 100],
	        (unsigned long long)lat[NGET * 999 / 1000]);
	printf("bench: shm.get_ns_p99 %llu ns\n", (unsigned long long)lat[NGET * 99 / 100]);

	/* one RS's pods (+ the orphans of its namespace: none here) */
	uint64_t total = 0;
	int lists = 2000;
	for (int i = 0; i < lists; i++) {
		unsigned rr = (unsigned)(rng(&s) % n_rs);
		char ruid[37];
		rs_uid(rr, ruid);
		pod_ns(rr, ns, sizeof(ns));
		int n = 0;
		uint64_t a = now_ns();
		r = shm_reader_list_controlled(rd, (uint16_t)t_pods, ruid, ns, count_fn, &n);
		total += now_ns() - a;
		if (r != 100 || n != 100) {
			fprintf(stderr, "bench: list_controlled gave %d/%d\n", r, n);
			return 1;
		}
	}
	printf("bench: shm.list_rs_pods_us %.1f us\n", total / 1e3 / lists);

	/* writer updates while 4 reader processes do random gets */
	pid_t kids[4];
	for (int k = 0; k < 4; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			struct shm_arena *ra;
			if (shm_reader_open(ro, &ra) < 0)
				_exit(1);
			struct shm_obj ko = SHM_OBJ_INIT;
			uint64_t ks = 999 + (uint64_t)k;
			for (;;) {
				unsigned p = (unsigned)(rng(&ks) % n_pods);
				shm_reader_get(ra, (uint16_t)t_pods, rss[p / 100].ns, ps[p].name,
				               &ko);
			}
		}
	}
	usleep(100000);
	uint64_t ops = 0, a = now_ns(), deadline = a + 3000000000u;
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	unsigned rv = 5000000;
	while (now_ns() < deadline) {
		for (int i = 0; i < 1000; i++) {
			unsigned p = (unsigned)(rng(&s) % n_pods);
			if (put_pod(w, p, rv++) != 0)
				return 1;
		}
		ops += 1000;
	}
	double secs = (now_ns() - a) / 1e9;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double cpu = (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9;
	fprintf(stderr, "bench: writer had %.0f%% of a CPU: %.0f updates per CPU-second\n",
	        100 * cpu / secs, ops / cpu);
	for (int k = 0; k < 4; k++) {
		kill(kids[k], SIGKILL);
		waitpid(kids[k], NULL, 0);
	}
	printf("bench: shm.writer_updates_per_s %.0f ops/s\n", ops / secs);
	struct shm_stats s2;
	shm_reader_stats(w, &s2);
	/* warm restart: a new writer recovers the arena (mark, sweep, index rebuild) */
	shm_arena_close(w);
	uint64_t ra = now_ns();
	if ((r = shm_writer_open(fd, &w)) < 0)
		return 1;
	fprintf(stderr, "bench: writer recovery of %llu objects took %.1f ms\n",
	        (unsigned long long)s2.objects, (now_ns() - ra) / 1e6);
	fprintf(stderr,
	        "bench: after %llu updates: carved %llu MiB (was %llu), live %llu MiB, quarantine "
	        "%llu KiB\n",
	        (unsigned long long)ops, (unsigned long long)(s2.carved >> 20),
	        (unsigned long long)(s1.carved >> 20), (unsigned long long)(s2.live_bytes >> 20),
	        (unsigned long long)(s2.quarantine_bytes >> 10));
	/* the resource table at CRD scale: a garbage collector checks every resource's type each
	 * time it asks whether its monitors synced (2,000 lookups). The first sweep finds each type
	 * by scanning the table, as every lookup did before the reader kept hints; later sweeps
	 * answer from the hints (each re-validated against its slot). */
	enum { NCRD = 2000, SWEEPS = 50 };
	char crd[32];
	for (unsigned i = 0; i < NCRD; i++) {
		snprintf(crd, sizeof(crd), "widgets%u", i);
		if (shm_writer_register_type(w, &(struct shm_type_desc){"bench.example.com", "v1",
		                                                        crd, "Widget", 0}) < 0)
			return 1;
	}
	uint64_t sweep[SWEEPS];
	for (unsigned k = 0; k < SWEEPS; k++) {
		uint64_t a0 = now_ns();
		for (unsigned i = 0; i < NCRD; i++) {
			snprintf(crd, sizeof(crd), "widgets%u", i);
			if (shm_reader_find_type(rd, "bench.example.com", "v1", crd) < 0)
				return 1;
		}
		sweep[k] = now_ns() - a0;
	}
	uint64_t warm = 0;
	for (unsigned k = 1; k < SWEEPS; k++)
		warm += sweep[k];
	printf("bench: shm.find_type_sweep_2000_scan_us %.1f us\n", sweep[0] / 1e3);
	printf("bench: shm.find_type_sweep_2000_us %.1f us\n", warm / 1e3 / (SWEEPS - 1));
	shm_obj_release(&o);
	free(lat);
	shm_arena_close(rd);
	shm_arena_close(w);
	close(ro);
	close(fd);
	return 0;
}
