/* SPDX-License-Identifier: Apache-2.0 */
/* kube/bench/bench-kube.c - decoder throughput and memory per decoded pod.
 *
 * Input: the realistic 3.5 KB pod fixture (managedFields included, as the apiserver sends it),
 * replicated into 1024 buffers with distinct uids/names so the branch predictor and caches see
 * more than one document. Reports pods/s of kube_decode_pod() on one core (decode + free), and
 * the bytes held per decoded pod (malloc'd arena bytes, measured by keeping 1024 pods alive), plus
 * the same figure for a plain cJSON DOM parse for comparison.
 */
#include <cjson/cJSON.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/model.h"

#define NBUF 1024

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

/* CPU time of this thread: "pods/s on one core" stays meaningful when other jobs (the Go
 * cluster build, other helpers' tests) share the machine's two cores. Wall time is printed too. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int count_cb(void *obj, void *ud)
{
	(void)obj;
	(void)ud;
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "kube/tests/fixtures/pod-kwok.json";
	size_t len;
	char *tmpl = slurp(path, &len);
	if (!tmpl) {
		fprintf(stderr, "cannot read %s\n", path);
		return 1;
	}
	char **bufs = calloc(NBUF, sizeof(*bufs));
	for (int i = 0; i < NBUF; i++) {
		bufs[i] = malloc(len + 1);
		memcpy(bufs[i], tmpl, len + 1);
		/* vary the uid and name digits in place (same length) */
		char *u = strstr(bufs[i], "\"uid\":\"");
		char *nm = strstr(bufs[i], "\"name\":\"");
		if (u)
			snprintf(u + 7, 5, "%04x", i), u[11] = 'a';
		if (nm)
			snprintf(nm + 8, 5, "p%03d", i % 1000), nm[12] = '-';
	}
	/* sanity */
	struct kube_pod *p;
	if (kube_decode_pod(bufs[0], len, 0, &p) < 0) {
		fprintf(stderr, "decode failed\n");
		return 1;
	}
	kube_object_free(p);

	double target = getenv("BENCH_SECONDS") ? strtod(getenv("BENCH_SECONDS"), NULL) : 2.0;
	long n = 0;
	double w0 = wall_s();
	double t0 = now_s(), t1;
	do {
		for (int i = 0; i < NBUF; i++) {
			if (kube_decode_pod(bufs[i], len, 0, &p) < 0)
				return 1;
			kube_object_free(p);
		}
		n += NBUF;
		t1 = now_s();
	} while (t1 - t0 < target);
	double pods_s = (double)n / (t1 - t0);
	double wall_pods_s = (double)n / (wall_s() - w0);

	/* scratch decoding: the same memory every time, no malloc in the steady state */
	struct kube_scratch *scr;
	if (kube_scratch_new(&scr) < 0)
		return 1;
	long ns = 0;
	t0 = now_s();
	do {
		for (int i = 0; i < NBUF; i++) {
			void *o;
			if (kube_decode_scratch(scr, KUBE_KIND_POD, bufs[i], len, 0, &o) < 0)
				return 1;
		}
		ns += NBUF;
		t1 = now_s();
	} while (t1 - t0 < target);
	double scratch_s = (double)ns / (t1 - t0);

	/* a 500-pod list page (the reflector's page size) through the scratch list decoder */
	size_t cap = (size_t)500 * (len + 1) + 256, off = 0;
	char *page = malloc(cap);
	off += (size_t)snprintf(page, cap,
	                        "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
	                        "{\"resourceVersion\":\"884213\",\"continue\":\"x\"},\"items\":[");
	for (int i = 0; i < 500; i++) {
		if (i)
			page[off++] = ',';
		size_t l = len;
		while (l && (bufs[i][l - 1] == '\n' || bufs[i][l - 1] == ' '))
			l--;
		memcpy(page + off, bufs[i], l);
		off += l;
	}
	off += (size_t)snprintf(page + off, cap - off, "]}");
	long nl = 0;
	t0 = now_s();
	do {
		if (kube_decode_list_scratch(scr, KUBE_KIND_POD, page, off, 0, count_cb, NULL,
		                             NULL) != 500)
			return 1;
		nl += 500;
		t1 = now_s();
	} while (t1 - t0 < target / 2);
	double list_s = (double)nl / (t1 - t0);
	free(page);
	kube_scratch_free(scr);

	long m = 0;
	t0 = now_s();
	do {
		for (int i = 0; i < NBUF; i++) {
			cJSON *c = cJSON_ParseWithLength(bufs[i], len);
			if (!c)
				return 1;
			cJSON_Delete(c);
		}
		m += NBUF;
		t1 = now_s();
	} while (t1 - t0 < target / 2);
	double cjson_s = (double)m / (t1 - t0);

	/* bytes held per pod */
	struct kube_pod **keep = calloc(NBUF, sizeof(*keep));
	struct mallinfo2 a = mallinfo2();
	size_t arena_bytes = 0;
	for (int i = 0; i < NBUF; i++) {
		if (kube_decode_pod(bufs[i], len, 0, &keep[i]) < 0)
			return 1;
		arena_bytes += kube_object_bytes(keep[i]);
	}
	struct mallinfo2 b = mallinfo2();
	for (int i = 0; i < NBUF; i++)
		kube_object_free(keep[i]);
	free(keep);

	printf("# input %s, %zu bytes per pod; cJSON DOM parse+free: %.0f pods/s (%.0f MB/s)\n",
	       path, len, cjson_s, cjson_s * (double)len / 1e6);
	printf("# kube decoder: %.0f MB/s per CPU-second (%.0f pods/s wall clock); arena bytes per "
	       "pod %zu; "
	       "heap delta per pod %zu\n",
	       pods_s * (double)len / 1e6, wall_pods_s, arena_bytes / NBUF,
	       (b.uordblks - a.uordblks) / NBUF);
	printf("bench: kube.decode_pods_per_s %.0f pods/s\n", pods_s);
	printf("bench: kube.decode_bytes_alloc_per_pod %zu B\n", (b.uordblks - a.uordblks) / NBUF);
	printf("bench: kube.decode_scratch_pods_per_s %.0f pods/s\n", scratch_s);
	printf("bench: kube.decode_list_pods_per_s %.0f pods/s\n", list_s);
	printf("bench: kube.cjson_dom_pods_per_s %.0f pods/s\n", cjson_s);
	for (int i = 0; i < NBUF; i++)
		free(bufs[i]);
	free(bufs);
	free(tmpl);
	return 0;
}
