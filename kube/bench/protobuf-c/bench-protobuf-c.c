/* SPDX-License-Identifier: Apache-2.0 */
/* kube/bench/protobuf-c/bench-protobuf-c.c - the dependency kcmd did not take, measured: the same
 * 20,000-pod protobuf PodList as kube/bench/bench-proto.c, unpacked by protobuf-c with code
 * generated from k8s.io/api's generated.proto (run.sh beside this file builds it; protobuf-c is
 * not a kcmd dependency). Reports unpack + free only, i.e. BEFORE any copy into kcmd's model, so
 * the figure is a lower bound on what protobuf-c would cost. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "k8s.io/api/core/v1/generated.pb-c.h"
#include "k8s.io/apimachinery/pkg/runtime/generated.pb-c.h"

#define NPODS 20000

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

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct out {
	uint8_t *p;
	size_t n, cap;
};
static void put(struct out *o, const void *p, size_t n)
{
	if (o->n + n > o->cap) {
		o->cap = (o->n + n) * 2;
		if (!(o->p = realloc(o->p, o->cap)))
			exit(1);
	}
	memcpy(o->p + o->n, p, n);
	o->n += n;
}
static void put_varint(struct out *o, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		if (v)
			c |= 0x80;
		put(o, &c, 1);
	} while (v);
}
static void put_field(struct out *o, unsigned f, const void *p, size_t n)
{
	put_varint(o, (uint64_t)f << 3 | 2);
	put_varint(o, n);
	put(o, p, n);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "kube/tests/fixtures/proto/pod-rich.pb";
	FILE *f = fopen(path, "rb");
	if (!f)
		return 1;
	static uint8_t buf[1 << 20];
	size_t len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	K8s__Io__Apimachinery__Pkg__Runtime__Unknown *u =
	        k8s__io__apimachinery__pkg__runtime__unknown__unpack(NULL, len - 4, buf + 4);
	if (!u || !u->has_raw)
		return 1;
	K8s__Io__Api__Core__V1__Pod *pod =
	        k8s__io__api__core__v1__pod__unpack(NULL, u->raw.len, u->raw.data);
	if (!pod)
		return 1;
	char uid[64];
	snprintf(uid, sizeof(uid), "%s", pod->metadata->uid);
	k8s__io__api__core__v1__pod__free_unpacked(pod, NULL);

	struct out raw = {0}, env = {0}, tm = {0};
	put_field(&raw, 1,
	          "\x12\x06"
	          "884213",
	          8);
	uint8_t *copy = malloc(u->raw.len);
	for (int i = 0; i < NPODS; i++) {
		memcpy(copy, u->raw.data, u->raw.len);
		uint8_t *q = memmem(copy, u->raw.len, uid, strlen(uid));
		char hex[5];
		snprintf(hex, sizeof(hex), "%04x", i & 0xffff);
		if (q)
			memcpy(q, hex, 4);
		put_field(&raw, 2, copy, u->raw.len);
	}
	put_field(&tm, 1, "v1", 2);
	put_field(&tm, 2, "PodList", 7);
	put_field(&env, 1, tm.p, tm.n);
	put_field(&env, 2, raw.p, raw.n);
	k8s__io__apimachinery__pkg__runtime__unknown__free_unpacked(u, NULL);

	long a0 = n_allocs;
	size_t b0 = alloc_bytes;
	double t0 = cpu_s(), t1;
	long n = 0;
	do {
		K8s__Io__Apimachinery__Pkg__Runtime__Unknown *e =
		        k8s__io__apimachinery__pkg__runtime__unknown__unpack(NULL, env.n, env.p);
		K8s__Io__Api__Core__V1__PodList *l =
		        k8s__io__api__core__v1__pod_list__unpack(NULL, e->raw.len, e->raw.data);
		if (!l || l->n_items != NPODS)
			return 1;
		k8s__io__api__core__v1__pod_list__free_unpacked(l, NULL);
		k8s__io__apimachinery__pkg__runtime__unknown__free_unpacked(e, NULL);
		if (!n) {
			printf("# protobuf-c: %.1f mallocs, %.0f B requested per pod (one list)\n",
			       (double)(n_allocs - a0) / NPODS, (double)(alloc_bytes - b0) / NPODS);
			printf("bench: kube.list20k_protobuf_c_allocs_per_pod %.1f allocs\n",
			       (double)(n_allocs - a0) / NPODS);
		}
		n += NPODS;
		t1 = cpu_s();
	} while (t1 - t0 < 2.0);
	printf("bench: kube.list20k_protobuf_c_unpack_pods_per_s %.0f pods/s\n",
	       (double)n / (t1 - t0));
	printf("bench: kube.list20k_protobuf_c_unpack_us_per_pod %.3f us\n",
	       1e6 * (t1 - t0) / (double)n);
	return 0;
}
