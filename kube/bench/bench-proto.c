/* SPDX-License-Identifier: Apache-2.0 */
/* kube/bench/bench-proto.c - a 20,000-pod LIST decoded from JSON and from protobuf.
 *
 * Input: the rich pod captured from the real apiserver in both encodings
 * (kube/tests/fixtures/proto/pod-rich.{json,pb}: labels, annotations, three ownerReferences,
 * finalizers, init containers, container statuses, managedFields), replicated 20,000 times with
 * distinct uids into one PodList per encoding, built the way the apiserver frames them.
 * Reported per encoding: CPU time per pod and pods per CPU-second for kube_decode_list() (each
 * item into its own arena, then freed, as informerd's LIST path does) and for the scratch list
 * decoder; malloc calls and bytes requested per pod (counted by wrapping malloc in this program);
 * wire bytes per pod. The same for a 500-pod page (informerd's LIST page size, cache-resident).
 * CPU time of this thread, so the figures hold on a shared machine.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/model.h"
#include "kube/proto.h"

#define NPODS 20000
#define PAGE  500

/* ---- allocation counting --------------------------------------------------------------------- */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static long n_allocs;
static size_t alloc_bytes;

void *malloc(size_t n)
{
	n_allocs++;
	alloc_bytes += n;
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	n_allocs++;
	alloc_bytes += a * b;
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	n_allocs++;
	alloc_bytes += n;
	return __libc_realloc(p, n);
}

/* ---- input ------------------------------------------------------------------------------------
 */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	if (b) {
		b[n] = 0;
		*len = (size_t)n;
	}
	return b;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct out {
	char *p;
	size_t n, cap;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (o->n + n > o->cap) {
		o->cap = (o->n + n) * 2;
		o->p = realloc(o->p, o->cap);
		if (!o->p)
			exit(1);
	}
	memcpy(o->p + o->n, p, n);
	o->n += n;
}

static void put_varint(struct out *o, uint64_t v)
{
	do {
		unsigned char c = v & 0x7f;
		v >>= 7;
		if (v)
			c |= 0x80;
		put(o, &c, 1);
	} while (v);
}

static void put_field(struct out *o, unsigned field, const void *p, size_t n)
{
	put_varint(o, (uint64_t)field << 3 | 2);
	put_varint(o, n);
	put(o, p, n);
}

static uint64_t get_varint(const unsigned char **p)
{
	uint64_t v = 0;
	for (unsigned s = 0;; s += 7) {
		unsigned char c = *(*p)++;
		v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return v;
	}
}

/* the Pod message inside "k8s\0" + Unknown{... 2: raw} */
static const unsigned char *envelope_raw(const char *buf, size_t len, size_t *ret_n)
{
	const unsigned char *p = (const unsigned char *)buf + 4,
	                    *end = (const unsigned char *)buf + len;
	while (p < end) {
		uint64_t tag = get_varint(&p), n = get_varint(&p);
		if ((tag & 7) != 2)
			exit(1);
		if (tag >> 3 == 2) {
			*ret_n = n;
			return p;
		}
		p += n;
	}
	exit(1);
}

/* Overwrites the first 4 characters of every copy of `uid` in buf[0..n) with i in hex. */
static void vary(char *buf, size_t n, const char *uid, int i)
{
	size_t ul = strlen(uid);
	char hex[5];
	snprintf(hex, sizeof(hex), "%04x", i & 0xffff);
	for (char *q = buf; (q = memmem(q, n - (size_t)(q - buf), uid, ul)); q += ul)
		memcpy(q, hex, 4);
}

static int drop(void *obj, void *ud)
{
	(void)ud;
	kube_object_free(obj);
	return 0;
}

static int keep_none(void *obj, void *ud)
{
	(void)obj;
	(void)ud;
	return 0;
}

struct result {
	double us_per_pod, pods_per_s, scratch_pods_per_s, allocs_per_pod, bytes_per_pod;
	double wire_per_pod;
};

typedef int (*list_fn)(enum kube_kind, const void *, size_t, unsigned, kube_item_fn, void *,
                       struct kube_list_meta *);
typedef int (*list_scratch_fn)(struct kube_scratch *, enum kube_kind, const void *, size_t,
                               unsigned, kube_item_fn, void *, struct kube_list_meta *);

static struct result measure(const char *list, size_t len, int npods, list_fn fn,
                             list_scratch_fn sfn, double target)
{
	struct result r = {.wire_per_pod = (double)len / npods};
	long a0 = n_allocs;
	size_t b0 = alloc_bytes;
	if (fn(KUBE_KIND_POD, list, len, 0, drop, NULL, NULL) != npods) {
		fprintf(stderr, "decode failed\n");
		exit(1);
	}
	r.allocs_per_pod = (double)(n_allocs - a0) / npods;
	r.bytes_per_pod = (double)(alloc_bytes - b0) / npods;
	long n = 0;
	double t0 = cpu_s(), t1;
	do {
		fn(KUBE_KIND_POD, list, len, 0, drop, NULL, NULL);
		n += npods;
		t1 = cpu_s();
	} while (t1 - t0 < target);
	r.pods_per_s = (double)n / (t1 - t0);
	r.us_per_pod = 1e6 / r.pods_per_s;

	struct kube_scratch *s;
	if (kube_scratch_new(&s) < 0)
		exit(1);
	n = 0;
	t0 = cpu_s();
	do {
		if (sfn(s, KUBE_KIND_POD, list, len, 0, keep_none, NULL, NULL) != npods)
			exit(1);
		n += npods;
		t1 = cpu_s();
	} while (t1 - t0 < target);
	r.scratch_pods_per_s = (double)n / (t1 - t0);
	kube_scratch_free(s);
	return r;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "kube/tests/fixtures/proto";
	char path[512];
	size_t jl, pl;
	snprintf(path, sizeof(path), "%s/pod-rich.json", dir);
	char *json = slurp(path, &jl);
	snprintf(path, sizeof(path), "%s/pod-rich.pb", dir);
	char *pb = slurp(path, &pl);
	if (!json || !pb) {
		fprintf(stderr, "cannot read the pod-rich fixtures in %s\n", dir);
		return 1;
	}
	struct kube_pod *p;
	if (kube_decode_pod(json, jl, 0, &p) < 0)
		return 1;
	char uid[64];
	snprintf(uid, sizeof(uid), "%s", p->meta.uid);
	kube_object_free(p);
	while (jl && (json[jl - 1] == '\n' || json[jl - 1] == ' '))
		jl--;

	/* {"kind":"PodList",...,"items":[pod,pod,...]} */
	struct out jo = {0}, raw = {0}, po = {0};
	static const char head[] = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
	                           "{\"resourceVersion\":\"884213\"},\"items\":[";
	put(&jo, head, sizeof(head) - 1);
	/* PodList {1 ListMeta {2 resourceVersion}, 2 Pod...} inside the envelope */
	size_t rawn;
	const unsigned char *podraw = envelope_raw(pb, pl, &rawn);
	char *podcopy = malloc(rawn);
	put_field(&raw, 1,
	          "\x12\x06"
	          "884213",
	          8);
	for (int i = 0; i < NPODS; i++) {
		if (i)
			put(&jo, ",", 1);
		size_t at = jo.n;
		put(&jo, json, jl);
		vary(jo.p + at, jl, uid, i);
		memcpy(podcopy, podraw, rawn);
		vary(podcopy, rawn, uid, i);
		put_field(&raw, 2, podcopy, rawn);
	}
	put(&jo, "]}", 2);
	struct out tm = {0};
	put_field(&tm, 1, "v1", 2);
	put_field(&tm, 2, "PodList", 7);
	put(&po, KUBE_PROTO_MAGIC, KUBE_PROTO_MAGIC_LEN);
	put_field(&po, 1, tm.p, tm.n);
	put_field(&po, 2, raw.p, raw.n);

	double target = getenv("BENCH_SECONDS") ? strtod(getenv("BENCH_SECONDS"), NULL) : 2.0;
	/* BENCH_ONLY=proto: skip the JSON half (for profiling) */
	bool only_pb = getenv("BENCH_ONLY") && !strcmp(getenv("BENCH_ONLY"), "proto");
	struct result j = only_pb ? (struct result){.pods_per_s = 1}
	                          : measure(jo.p, jo.n, NPODS, kube_decode_list,
	                                    kube_decode_list_scratch, target);
	struct result b = measure(po.p, po.n, NPODS, kube_proto_decode_list,
	                          kube_proto_decode_list_scratch, target);

	/* a 500-pod page (informerd's LIST page size), which stays in the cache: the first 500
	 * items of each list, re-framed */
	struct out jp = {0}, rp = {0}, pp = {0};
	put(&jp, head, sizeof(head) - 1);
	size_t item_off = sizeof(head) - 1;
	for (int i = 0; i < PAGE; i++) {
		if (i)
			put(&jp, ",", 1);
		put(&jp, jo.p + item_off + (size_t)i * (jl + 1), jl);
	}
	put(&jp, "]}", 2);
	put_field(&rp, 1,
	          "\x12\x06"
	          "884213",
	          8);
	for (int i = 0; i < PAGE; i++) {
		memcpy(podcopy, podraw, rawn);
		vary(podcopy, rawn, uid, i);
		put_field(&rp, 2, podcopy, rawn);
	}
	put(&pp, KUBE_PROTO_MAGIC, KUBE_PROTO_MAGIC_LEN);
	put_field(&pp, 1, tm.p, tm.n);
	put_field(&pp, 2, rp.p, rp.n);
	struct result jpg = only_pb ? (struct result){.pods_per_s = 1}
	                            : measure(jp.p, jp.n, PAGE, kube_decode_list,
	                                      kube_decode_list_scratch, target / 2);
	struct result bpg = measure(pp.p, pp.n, PAGE, kube_proto_decode_list,
	                            kube_proto_decode_list_scratch, target / 2);

	printf("# %d-pod PodList from %s/pod-rich.*: JSON %.1f MB, protobuf %.1f MB\n", NPODS, dir,
	       (double)jo.n / 1e6, (double)po.n / 1e6);
	printf("# per pod: JSON %.2f us, %.1f mallocs, %.0f B requested; protobuf %.2f us, %.1f "
	       "mallocs, %.0f B requested\n",
	       j.us_per_pod, j.allocs_per_pod, j.bytes_per_pod, b.us_per_pod, b.allocs_per_pod,
	       b.bytes_per_pod);
	printf("bench: kube.list20k_json_pods_per_s %.0f pods/s\n", j.pods_per_s);
	printf("bench: kube.list20k_proto_pods_per_s %.0f pods/s\n", b.pods_per_s);
	printf("bench: kube.list20k_json_us_per_pod %.3f us\n", j.us_per_pod);
	printf("bench: kube.list20k_proto_us_per_pod %.3f us\n", b.us_per_pod);
	printf("bench: kube.list20k_json_scratch_pods_per_s %.0f pods/s\n", j.scratch_pods_per_s);
	printf("bench: kube.list20k_proto_scratch_pods_per_s %.0f pods/s\n", b.scratch_pods_per_s);
	printf("bench: kube.list20k_json_allocs_per_pod %.2f allocs\n", j.allocs_per_pod);
	printf("bench: kube.list20k_proto_allocs_per_pod %.2f allocs\n", b.allocs_per_pod);
	printf("bench: kube.list20k_json_alloc_bytes_per_pod %.0f B\n", j.bytes_per_pod);
	printf("bench: kube.list20k_proto_alloc_bytes_per_pod %.0f B\n", b.bytes_per_pod);
	printf("bench: kube.list20k_json_wire_bytes_per_pod %.0f B\n", j.wire_per_pod);
	printf("bench: kube.list20k_proto_wire_bytes_per_pod %.0f B\n", b.wire_per_pod);
	printf("bench: kube.list20k_proto_speedup %.2f x\n", b.pods_per_s / j.pods_per_s);
	printf("bench: kube.page500_json_pods_per_s %.0f pods/s\n", jpg.pods_per_s);
	printf("bench: kube.page500_proto_pods_per_s %.0f pods/s\n", bpg.pods_per_s);
	printf("bench: kube.page500_json_scratch_pods_per_s %.0f pods/s\n", jpg.scratch_pods_per_s);
	printf("bench: kube.page500_proto_scratch_pods_per_s %.0f pods/s\n",
	       bpg.scratch_pods_per_s);
	printf("bench: kube.page500_proto_speedup %.2f x\n", bpg.pods_per_s / jpg.pods_per_s);
	free(jp.p);
	free(rp.p);
	free(pp.p);
	free(jo.p);
	free(raw.p);
	free(po.p);
	free(tm.p);
	free(podcopy);
	free(json);
	free(pb);
	return 0;
}
