/* SPDX-License-Identifier: Apache-2.0 */
/*
 * informerd/tests/e2e-informer.c: informer.c against the real test cluster, for what only a
 * real apiserver shows (issue 21): an object the store cannot write is never skipped.
 *
 * Runs only when KCMD_TEST_SERVER is set (the Go wrapper TestTables_InformerNeverSkips passes
 * the shared cluster's kubeconfig), else exits 77. One informer of configmaps (metadata-only)
 * over an arena of its own; the arena's fault seam (shm__test_fail_alloc_at) makes the writer's
 * next allocation fail with -ENOMEM:
 *  1. during the first LIST: the list fails and is retried after the reflector's backoff; the
 *     informer syncs with every configmap of the namespace in the arena;
 *  2. during a WATCH event (a configmap created after the sync): the watch ends as an ERROR and
 *     the informer relists, so the configmap reaches the arena within seconds, and the type's
 *     stored resourceVersion is never one past a missing object. Before issue 21 the event was
 *     skipped and the version advanced: the configmap stayed missing until the next relist
 *     (minutes: a watch lasts 5 to 10 minutes).
 * Plain program: 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "informerd/informer.h"
#include "informerd/store.h"
#include "ipc/loop.h"
#include "kube/client.h"
#include "kube/config.h"
#include "lib/kube-loop.h"
#include "shm/arena.h"
#include "shm/shm-internal.h"

static struct kube_client *cl, *lcl; /* blocking calls; the informers' (in the loop) */
static char ns[64];
static int fails;
static unsigned store_errors;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);      \
			fails++;                                                                   \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

static int call(enum kube_verb v, const char *res, const char *name, const char *body,
                const char *in_ns)
{
	struct kube_request r = {.verb = v,
	                         .version = "v1",
	                         .resource = res,
	                         .name = name,
	                         .body = body,
	                         .ns = in_ns};
	struct kube_response resp;
	int e = kube_client_request(cl, &r, NULL, NULL, &resp);
	kube_response_clear(&resp);
	return e;
}

static int create_cm(const char *name)
{
	char body[256];
	snprintf(body, sizeof(body),
	         "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"}}",
	         name);
	return call(KUBE_CREATE, "configmaps", NULL, body, ns);
}

static void on_error(void *ud, const struct inf_resource *res, const char *what, int err)
{
	(void)ud;
	(void)res;
	if (strstr(what, "cannot store")) {
		store_errors++;
		fprintf(stderr, "informer: %s: %s\n", what, strerror(-err));
	}
}

/* Arms the seam: the writer's next block allocation fails. */
static void fail_next_alloc(struct shm_arena *a)
{
	a->w->n_allocs = 0;
	shm__test_fail_alloc_at = 1;
}

static bool in_arena(struct shm_arena *a, int type, const char *name)
{
	struct shm_obj o = SHM_OBJ_INIT;
	bool ok = shm_reader_get(a, (uint16_t)type, ns, name, &o) == 0;
	shm_obj_release(&o);
	return ok;
}

/* Runs the loop until cond or timeout_ms; returns cond. */
static bool run_until(struct ipc_loop *loop, int ms, bool (*cond)(void *), void *ud)
{
	uint64_t end = ipc_now_usec() + (uint64_t)ms * 1000;
	while (!cond(ud) && ipc_now_usec() < end)
		if (ipc_loop_run_once(loop, 20000) < 0)
			return false;
	return cond(ud);
}

struct ctx {
	struct inf_informers *ii;
	struct shm_arena *a;
	int type;
	const char *name;
};
static bool synced(void *ud)
{
	return inf_informers_all_synced(((struct ctx *)ud)->ii);
}
static bool present(void *ud)
{
	struct ctx *c = ud;
	return in_arena(c->a, c->type, c->name);
}

int main(void)
{
	if (!getenv("KCMD_TEST_SERVER")) {
		printf("KCMD_TEST_SERVER not set: run through TestTables_InformerNeverSkips (make "
		       "e2e)\n");
		return 77;
	}
	char err[512] = "";
	struct kube_config *cfg = NULL;
	struct kube_config_opts o = {.no_in_cluster = true};
	if (kube_config_load(&o, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "kubeconfig: %s\n", err);
		return 1;
	}
	struct kube_client_opts co = {.config = cfg, .process = "e2e", .controller = "informer"};
	int e = kube_client_new(&co, &cl);
	if (e < 0) {
		fprintf(stderr, "client: %s\n", strerror(-e));
		return 1;
	}
	if ((e = kube_client_new(&co, &lcl)) < 0) {
		fprintf(stderr, "client: %s\n", strerror(-e));
		return 1;
	}
	snprintf(ns, sizeof(ns), "inf-e2e-%d", (int)getpid());
	char body[256];
	snprintf(body, sizeof(body),
	         "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
	         ns);
	if ((e = call(KUBE_CREATE, "namespaces", NULL, body, NULL)) < 0) {
		fprintf(stderr, "creating namespace %s: %s\n", ns, strerror(-e));
		return 1;
	}

	struct ipc_loop *loop = NULL;
	struct kube_loop *kl = NULL;
	struct shm_arena *a = NULL;
	struct inf_store *st = NULL;
	struct inf_informers *ii = NULL;
	int afd = -1;
	static const struct inf_resource cms = {
	        "", "v1", "configmaps", "ConfigMap", SHM_RECORD_META, true};
	char name[32];

	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "cm-%d", i);
		CHECK(create_cm(name) == 0);
	}
	CHECK(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO) == 0);
	CHECK(kube_loop_attach(loop, lcl, &kl) == 0);
	CHECK(shm_arena_create(&(struct shm_create_opts){.max_size = UINT64_C(1) << 30}, &afd) ==
	      0);
	CHECK(shm_writer_open(afd, &a) == 0);
	CHECK(inf_store_new(a, NULL, &st) == 0);
	struct inf_informers_config ic = {.loop = loop,
	                                  .client = lcl,
	                                  .store = st,
	                                  .on_error = on_error,
	                                  .no_warm_start = true};
	CHECK(inf_informers_new(&ic, &ii) == 0);

	/* 1: the first LIST fails on the writer's next allocation, then is retried. Armed after
	 * the add: registering the type may allocate (the first resource-table chunk, shm ABI 4);
	 * the LIST itself starts from the loop, below. */
	CHECK(inf_informers_add(ii, &cms) == 0);
	fail_next_alloc(a);
	struct ctx c = {.ii = ii, .a = a};
	CHECK(run_until(loop, 30000, synced, &c));
	c.type = shm_reader_find_type(a, "", "v1", "configmaps");
	CHECK(c.type >= 0);
	CHECK(store_errors >= 1);
	CHECK(inf_informers_lists(ii) >= 2);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "cm-%d", i);
		CHECK(in_arena(a, c.type, name));
	}
	fprintf(stderr, "list: synced after %u store error(s), %llu lists\n", store_errors,
	        (unsigned long long)inf_informers_lists(ii));

	/* 2: a watch event whose write fails: the object still arrives, by a relist */
	unsigned before = store_errors;
	uint64_t lists = inf_informers_lists(ii);
	for (int i = 0; i < 20; i++) /* let the watch start */
		ipc_loop_run_once(loop, 20000);
	fail_next_alloc(a);
	CHECK(create_cm("cm-watch") == 0);
	c.name = "cm-watch";
	uint64_t t0 = ipc_now_usec();
	CHECK(run_until(loop, 20000, present, &c));
	fprintf(stderr,
	        "watch: cm-watch in the arena %.1f s after its create (%u store error(s), %llu "
	        "relists)\n",
	        (double)(ipc_now_usec() - t0) / 1e6, store_errors - before,
	        (unsigned long long)(inf_informers_lists(ii) - lists));
	CHECK(store_errors > before);
	CHECK(inf_informers_lists(ii) > lists);
	CHECK(shm_writer_check(a) == 0);
out:
	shm__test_fail_alloc_at = 0;
	inf_informers_free(ii);
	inf_store_free(st);
	shm_arena_close(a);
	if (afd >= 0)
		close(afd);
	kube_loop_detach(kl);
	ipc_loop_free(loop);
	call(KUBE_DELETE, "namespaces", ns, NULL, NULL);
	kube_client_free(lcl);
	kube_client_free(cl);
	kube_config_free(cfg);
	if (fails)
		return 1;
	printf("e2e-informer: ok\n");
	return 0;
}
