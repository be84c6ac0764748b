/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-informer: informerd's CPU side of a cold sync, without the network: 100,000 pods in
 * 200 list pages of 500 (realistic kwok-style pods, ~2.5 KB of JSON each, managedFields
 * included), decoded and applied through the store (arena upsert + handler dispatch into a real
 * queue owner), then a relist of the same pages (the re-delivery path) and 10,000 watch events.
 *
 * Prints:
 *   bench: informer.store_100k_pods_s       cold replace of 100k pods (decode + arena + handlers)
 *   bench: informer.store_pods_per_s        the same as a rate
 *   bench: informer.relist_100k_pods_s      the same 100k again (unchanged: no arena write)
 *   bench: informer.watch_events_per_s      MODIFIED events, each a new version
 *   bench: informer.arena_100k_pods_mb      arena bytes in use after the sync
 * The end-to-end figures of the issue (informer.sync_100k_pods_s against a loaded apiserver and
 * the same for kube-controller-manager) need the cluster loader and are not measured here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/handlers.h"
#include "informerd/store.h"
#include "ipc/loop.h"
#include "ipc/queue.h"
#include "shm/arena.h"

#define N_PODS 100000
#define PAGE   500

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int pod_json(char *b, size_t n, int i, int rv)
{
	return snprintf(b, n,
	                "{\"metadata\":{\"name\":\"pod-%d\",\"generateName\":\"rs-%d-\","
	                "\"namespace\":\"ns-%d\","
	                "\"uid\":\"%08x-1111-4222-8333-%012d\",\"resourceVersion\":\"%d\","
	                "\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
	                "\"labels\":{\"app\":\"app-%d\",\"pod-template-hash\":\"h%d\"},"
	                "\"ownerReferences\":[{\"apiVersion\":\"apps/"
	                "v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs-%d\","
	                "\"uid\":\"%08x-2222-4222-8333-000000000000\",\"controller\":true,"
	                "\"blockOwnerDeletion\":true}],"
	                "\"managedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":"
	                "\"Update\",\"apiVersion\":\"v1\","
	                "\"time\":\"2026-01-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\","
	                "\"fieldsV1\":{\"f:metadata\":{\"f:generateName\":{},"
	                "\"f:labels\":{\".\":{},\"f:app\":{},\"f:pod-template-hash\":{}},\"f:"
	                "ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"x\\\"}\":{}}},"
	                "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},"
	                "\"f:image\":{},\"f:name\":{}}}}}}]},"
	                "\"spec\":{\"nodeName\":\"node-%d\",\"containers\":[{\"name\":\"c\","
	                "\"image\":\"registry.k8s.io/pause:3.10\","
	                "\"resources\":{\"requests\":{\"cpu\":\"10m\",\"memory\":\"16Mi\"}}}],"
	                "\"restartPolicy\":\"Always\","
	                "\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\","
	                "\"schedulerName\":\"default-scheduler\"},"
	                "\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":"
	                "\"Initialized\",\"status\":\"True\","
	                "\"lastTransitionTime\":\"2026-01-01T00:00:01Z\"},{\"type\":\"Ready\","
	                "\"status\":\"True\","
	                "\"lastTransitionTime\":\"2026-01-01T00:00:02Z\"},{\"type\":"
	                "\"ContainersReady\",\"status\":\"True\","
	                "\"lastTransitionTime\":\"2026-01-01T00:00:02Z\"},{\"type\":"
	                "\"PodScheduled\",\"status\":\"True\","
	                "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}],\"hostIP\":\"10.0.0.1\","
	                "\"podIP\":\"10.1.%d.%d\","
	                "\"startTime\":\"2026-01-01T00:00:00Z\",\"containerStatuses\":[{\"name\":"
	                "\"c\",\"ready\":true,"
	                "\"restartCount\":0,\"image\":\"registry.k8s.io/"
	                "pause:3.10\",\"imageID\":\"sha256:abc\","
	                "\"started\":true,\"state\":{\"running\":{\"startedAt\":\"2026-01-01T00:00:"
	                "01Z\"}}}],\"qosClass\":\"Burstable\"}}",
	                i, i / 10, i % 50, (unsigned)i, i, rv, i / 10, i / 10, i / 10,
	                (unsigned)(i / 10), i % 100, (i / 250) % 250, i % 250);
}

struct ctx {
	struct inf_store *s;
	uint16_t type;
	int err;
};

static int item(void *obj, void *ud)
{
	struct ctx *c = ud;
	int r = inf_store_replace_add(c->s, c->type, obj);

	kube_object_free(obj);
	if (r < 0)
		c->err = r;
	return 0;
}

static char *page_json(int first, int rv, size_t *len)
{
	size_t cap = (size_t)PAGE * 4096 + 256, l = 0;
	char *b = malloc(cap);

	l += (size_t)snprintf(b + l, cap - l,
	                      "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{"
	                      "\"resourceVersion\":\"%d\"},\"items\":[",
	                      rv);
	for (int i = first; i < first + PAGE; i++) {
		if (i > first)
			b[l++] = ',';
		l += (size_t)pod_json(b + l, cap - l, i, rv);
	}
	l += (size_t)snprintf(b + l, cap - l, "]}");
	*len = l;
	return b;
}

int main(void)
{
	static const struct inf_resource pods = {"", "v1", "pods", "Pod", SHM_RECORD_POD, true};
	struct shm_create_opts so = {.max_size = 8ULL << 30};
	struct shm_arena *a = NULL;
	struct ipc_loop *loop = NULL;
	struct ipc_queue_owner *q = NULL;
	struct inf_dispatch *d = NULL;
	struct ctx c = {0};
	struct shm_stats st;
	char **pages = calloc(N_PODS / PAGE, sizeof(char *));
	size_t *lens = calloc(N_PODS / PAGE, sizeof(size_t));
	int afd, qfd;
	double t0, t1, t2;

	if (shm_arena_create(&so, &afd) < 0 || shm_writer_open(afd, &a) < 0)
		return 77;
	qfd = ipc_queue_memfd_create("informer-test");
	if (qfd < 0 || ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO) < 0)
		return 77;
	struct ipc_queue_owner_config qc = {.qps = -1};
	if (ipc_queue_owner_new(&q, loop, qfd, &qc) < 0 || inf_dispatch_new(&d) < 0 ||
	    inf_dispatch_register(d, &inf_test_handler_table, &q, 1, a) < 0 ||
	    inf_store_new(a, d, &c.s) < 0)
		return 1;
	c.type = (uint16_t)inf_store_add_resource(c.s, &pods);
	for (int p = 0; p < N_PODS / PAGE; p++)
		pages[p] = page_json(p * PAGE, 1000, &lens[p]);

	t0 = now_s();
	inf_store_replace_begin(c.s, c.type);
	for (int p = 0; p < N_PODS / PAGE; p++)
		if (kube_decode_list(KUBE_KIND_POD, pages[p], lens[p], 0, item, &c, NULL) < 0 ||
		    c.err)
			return 1;
	if (inf_store_replace_commit(c.s, c.type, "1000") < 0)
		return 1;
	t1 = now_s();
	inf_store_replace_begin(c.s, c.type);
	for (int p = 0; p < N_PODS / PAGE; p++)
		if (kube_decode_list(KUBE_KIND_POD, pages[p], lens[p], 0, item, &c, NULL) < 0 ||
		    c.err)
			return 1;
	if (inf_store_replace_commit(c.s, c.type, "1000") < 0)
		return 1;
	t2 = now_s();

	/* Watch events: MODIFIED with a new version each. */
	enum { N_EV = 10000 };
	static char buf[8192];
	double t3 = now_s();
	for (int i = 0; i < N_EV; i++) {
		int n = pod_json(buf, sizeof(buf), i * 7 % N_PODS, 2000 + i);
		struct kube_pod *pod = NULL;

		if (kube_decode_pod(buf, (size_t)n, 0, &pod) < 0 ||
		    inf_store_apply(c.s, c.type, KUBE_WATCH_MODIFIED, pod) < 0)
			return 1;
		kube_object_free(pod);
	}
	double t4 = now_s();

	shm_reader_stats(a, &st);
	if (st.objects != N_PODS || ipc_queue_owner_len(q) != N_PODS) {
		fprintf(stderr, "bench-informer: %llu objects, %zu keys\n",
		        (unsigned long long)st.objects, ipc_queue_owner_len(q));
		return 1;
	}
	printf("bench: informer.store_100k_pods_s %.3f s\n", t1 - t0);
	printf("bench: informer.store_pods_per_s %.0f pods/s\n", N_PODS / (t1 - t0));
	printf("bench: informer.relist_100k_pods_s %.3f s\n", t2 - t1);
	printf("bench: informer.watch_events_per_s %.0f events/s\n", N_EV / (t4 - t3));
	printf("bench: informer.arena_100k_pods_mb %.1f MB\n", (double)st.live_bytes / 1e6);
	for (int p = 0; p < N_PODS / PAGE; p++)
		free(pages[p]);
	free(pages);
	free(lens);
	inf_store_free(c.s);
	inf_dispatch_free(d);
	ipc_queue_owner_free(q);
	ipc_loop_free(loop);
	shm_arena_close(a);
	close(qfd);
	close(afd);
	return 0;
}
