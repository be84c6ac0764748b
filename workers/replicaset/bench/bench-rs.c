/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/bench/bench-rs.c: micro-benchmarks of the controller's pure parts (no
 * apiserver): deletion ranking, calculateStatus, and the shared expectations' hot calls. The
 * end-to-end figures of issue 8 (rs.* vs rs.upstream.*) come from the integration bench; these
 * are named rs.unit.* so they cannot be confused with them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workers/replicaset/expectations.h"
#include "workers/replicaset/ranking.h"
#include "workers/replicaset/sync.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID,
	              &ts); /* CPU time: the figures survive a loaded machine */
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define NPODS 10000

int main(void)
{
	static struct kube_pod pods[NPODS];
	static const struct kube_pod *ptrs[NPODS];
	static char uids[NPODS][40], nodes[64][16];
	static struct kube_kv labels[] = {{"app", "web"}};
	const kube_time_t NOW = (kube_time_t)1700000000 * 1000000000;
	unsigned seed = 12345;
	for (int i = 0; i < 64; i++)
		snprintf(nodes[i], sizeof nodes[i], "node-%02d", i);
	for (int i = 0; i < NPODS; i++) {
		struct kube_pod *p = &pods[i];
		snprintf(uids[i], sizeof uids[i], "%08x-0000-4000-8000-%012d", rand_r(&seed), i);
		p->meta.uid = uids[i];
		p->meta.name = uids[i];
		p->meta.namespace = "ns";
		p->meta.labels = labels;
		p->meta.n_labels = 1;
		p->meta.creation_timestamp =
		        NOW - (kube_time_t)(rand_r(&seed) % 86400) * 1000000000;
		p->node_name = nodes[rand_r(&seed) % 64];
		p->phase = KUBE_POD_RUNNING;
		p->ready = rand_r(&seed) % 10 != 0;
		p->ready_transition_time = p->meta.creation_timestamp + 5000000000;
		p->max_restarts = (int32_t)(rand_r(&seed) % 3);
	}
	struct rs_rank_opts o = {.now = NOW, .pod_deletion_cost = true};
	int reps = 10;
	double t0 = now_s();
	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < NPODS; i++)
			ptrs[i] = &pods[i];
		if (rs_pods_to_delete(ptrs, NPODS, ptrs, NPODS, NPODS / 2, &o) < 0)
			return 1;
	}
	printf("bench: rs.unit.rank_10k_pods %.3f ms\n", (now_s() - t0) * 1e3 / reps);

	/* calculateStatus over 1000 pods */
	struct kube_replicaset rs;
	memset(&rs, 0, sizeof rs);
	rs.meta.name = "rs";
	rs.meta.namespace = "ns";
	rs.spec_replicas = 1000;
	rs.min_ready_seconds = 10;
	rs.template_labels = labels;
	rs.n_template_labels = 1;
	struct rs_features f = RS_FEATURES_DEFAULT;
	t0 = now_s();
	reps = 1000;
	for (int r = 0; r < reps; r++) {
		struct rs_status st;
		if (rs_calculate_status(&rs, ptrs, 1000, 3, &f, NULL, NOW, &st) < 0)
			return 1;
		rs_status_free(&st);
	}
	printf("bench: rs.unit.calculate_status_1k_pods %.3f us\n", (now_s() - t0) * 1e6 / reps);

	/* expectations */
	struct rs_exp_create_opts eo = {.capacity = 4096};
	int fd = rs_exp_memfd_create(&eo);
	struct rs_exp *w, *inf;
	if (fd < 0 || rs_exp_attach(fd, RS_EXP_WORKER, 0, &w) < 0 ||
	    rs_exp_attach(fd, RS_EXP_INFORMER, 0, &inf) < 0)
		return 1;
	char keys[2000][32];
	for (int i = 0; i < 2000; i++)
		snprintf(keys[i], sizeof keys[i], "ns%d/rs-%d", i % 17, i);
	int64_t mono = rs_exp_now();
	for (int i = 0; i < 2000; i++)
		rs_exp_expect_creations(w, keys[i], 100, mono);
	int ops = 2000000;
	t0 = now_s();
	for (int i = 0; i < ops; i++)
		rs_exp_creation_observed(inf, keys[i % 2000]);
	printf("bench: rs.unit.exp_creation_observed %.1f ns/op\n", (now_s() - t0) * 1e9 / ops);
	t0 = now_s();
	int sat = 0;
	for (int i = 0; i < ops; i++)
		sat += rs_exp_satisfied(w, keys[i % 2000], mono, NULL);
	printf("bench: rs.unit.exp_satisfied %.1f ns/op\n", (now_s() - t0) * 1e9 / ops);
	/* a full deletion batch: ExpectDeletions(500) + 500 observations + satisfied */
	static char pk[500][48];
	static const char *pkp[500];
	for (int i = 0; i < 500; i++) {
		snprintf(pk[i], sizeof pk[i], "ns/rs-%d", i);
		pkp[i] = pk[i];
	}
	reps = 200;
	t0 = now_s();
	for (int r = 0; r < reps; r++) {
		rs_exp_expect_deletions(w, "ns/big", pkp, 500, mono);
		for (int i = 0; i < 500; i++)
			rs_exp_deletion_observed(inf, "ns/big", pkp[i]);
		sat += rs_exp_satisfied(w, "ns/big", mono, NULL);
	}
	printf("bench: rs.unit.exp_delete_batch_500 %.1f us\n", (now_s() - t0) * 1e6 / reps);
	rs_exp_detach(w);
	rs_exp_detach(inf);
	return sat < 0;
}
