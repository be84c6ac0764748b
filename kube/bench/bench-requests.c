/* SPDX-License-Identifier: Apache-2.0 */
/* kube/bench/bench-requests.c - CPU of the request path per API request, against the real
 * apiserver (issue 20: "<= 50 us of CPU per request").
 *
 * Runs only with the test cluster's env (KCMD_TEST_SERVER, `eval $(tests/cluster/cluster env)`),
 * else exits 77. In a fresh namespace it creates N pods (the ReplicaSet controller's body: a
 * template pod with an ownerReference) and deletes them again (unscheduled pods go at once),
 * in three shapes:
 *   seq    one blocking request at a time (kube_client_request), as a GC process made them
 *   many   batches of 20 in flight (kube_client_request_many: upstream's 20 GC workers)
 *   pb     the many shape with protobuf create bodies and answers
 *   threads  20 threads, each with its own client and connection, one blocking request at a
 *            time each (the garbage collector's lanes before kube_client_share_threads)
 *   shared   20 threads, one blocking request at a time each, on one client shared with
 *            kube_client_share_threads (the garbage collector's lanes now)
 * and prints the CPU time of this process (user + system, getrusage) per request, and the
 * wall-clock rate. The apiserver's own CPU is not in these numbers (kcmd bench measures it).
 *
 *   eval $(tests/cluster/cluster env); build/t/kube/bench/bench-requests [N]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/encode.h"
#include "kube/proto.h"

#define BATCH 20

static struct kube_client *cl;
static char ns[64];

static double cpu_us(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char TEMPLATE[] =
        "{\"metadata\":{\"labels\":{\"app\":\"bench\",\"pod-template-hash\":\"abc\"}},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.10\","
        "\"resources\":{\"requests\":{\"cpu\":\"10m\",\"memory\":\"16Mi\"}},"
        "\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":"
        "\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],\"restartPolicy\":\"Always\","
        "\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\","
        "\"securityContext\":{},\"schedulerName\":\"default-scheduler\"}}";

static char **names; /* the created pods, per run */

static int created_name(const struct kube_response *resp, size_t i)
{
	struct kube_pod *p;
	if (kube_decode_any(KUBE_KIND_POD, resp->body, resp->body_len, 0, (void **)&p) < 0)
		return -EPROTO;
	names[i] = strdup(p->meta.name);
	kube_object_free(p);
	return names[i] ? 0 : -ENOMEM;
}

/* creates n pods; shape: 0 seq, 1 many, 2 many+protobuf. Returns CPU us per request. */
static double run_create(size_t n, int shape, double *rate)
{
	struct kube_owner_ref ref = {.api_version = "apps/v1",
	                             .kind = "ReplicaSet",
	                             .name = "bench",
	                             .uid = "6b1c7d0e-0000-4000-8000-000000000001",
	                             .controller = 1,
	                             .block_owner_deletion = 1};
	double c0 = cpu_us(), w0 = wall_s();
	struct kube_request reqs[BATCH];
	struct kube_response resps[BATCH];
	for (size_t done = 0; done < n;) {
		size_t k = shape == 0 ? 1 : (n - done < BATCH ? n - done : BATCH);
		/* the RS worker's path: the body encoded per batch */
		char *body = NULL;
		void *pb = NULL;
		size_t pb_len = 0;
		if (kube_encode_pod_from_template(TEMPLATE, sizeof(TEMPLATE) - 1, "bench", &ref,
		                                  &body) < 0 ||
		    (shape == 2 &&
		     kube_proto_encode_pod_json(body, strlen(body), &pb, &pb_len) < 0))
			exit(1);
		for (size_t i = 0; i < k; i++)
			reqs[i] = (struct kube_request){.verb = KUBE_CREATE,
			                                .version = "v1",
			                                .resource = "pods",
			                                .ns = ns,
			                                .body = pb ? pb : body,
			                                .body_len = pb ? pb_len : strlen(body),
			                                .body_protobuf = pb != NULL};
		int r = shape == 0 ? kube_client_request(cl, reqs, NULL, NULL, resps)
		                   : kube_client_request_many(cl, reqs, k, resps, NULL);
		for (size_t i = 0; i < k; i++) {
			if (r < 0 || resps[i].error.err < 0 ||
			    created_name(&resps[i], done + i) < 0) {
				fprintf(stderr, "create failed: %d %d %s\n", r, resps[i].error.err,
				        resps[i].error.message);
				exit(1);
			}
			kube_response_clear(&resps[i]);
		}
		free(body);
		free(pb);
		done += k;
	}
	*rate = (double)n / (wall_s() - w0);
	return (cpu_us() - c0) / (double)n;
}

static double run_delete(size_t n, int shape, double *rate)
{
	double c0 = cpu_us(), w0 = wall_s();
	struct kube_request reqs[BATCH];
	struct kube_response resps[BATCH];
	for (size_t done = 0; done < n;) {
		size_t k = shape == 0 ? 1 : (n - done < BATCH ? n - done : BATCH);
		for (size_t i = 0; i < k; i++)
			reqs[i] = (struct kube_request){.verb = KUBE_DELETE,
			                                .version = "v1",
			                                .resource = "pods",
			                                .ns = ns,
			                                .name = names[done + i],
			                                .propagation_policy = "Background"};
		int r = shape == 0 ? kube_client_request(cl, reqs, NULL, NULL, resps)
		                   : kube_client_request_many(cl, reqs, k, resps, NULL);
		for (size_t i = 0; i < k; i++) {
			if (r < 0 || resps[i].error.err < 0) {
				fprintf(stderr, "delete failed: %d %s\n", resps[i].error.err,
				        resps[i].error.message);
				exit(1);
			}
			kube_response_clear(&resps[i]);
			free(names[done + i]);
		}
		done += k;
	}
	*rate = (double)n / (wall_s() - w0);
	return (cpu_us() - c0) / (double)n;
}

/* ---- the threaded shapes: BATCH threads, blocking requests ---------------------------------- */
struct th_arg {
	struct kube_client *c;
	size_t t, n;
	bool create;
	int err;
};

static void *th_main(void *arg)
{
	struct th_arg *a = arg;
	struct kube_owner_ref ref = {.api_version = "apps/v1",
	                             .kind = "ReplicaSet",
	                             .name = "bench",
	                             .uid = "6b1c7d0e-0000-4000-8000-000000000001",
	                             .controller = 1,
	                             .block_owner_deletion = 1};
	for (size_t i = a->t; i < a->n && !a->err; i += BATCH) {
		char *body = NULL;
		struct kube_request req = {.version = "v1", .resource = "pods", .ns = ns};
		struct kube_response resp;
		if (a->create) {
			if (kube_encode_pod_from_template(TEMPLATE, sizeof(TEMPLATE) - 1, "bench",
			                                  &ref, &body) < 0)
				return a->err = -ENOMEM, NULL;
			req.verb = KUBE_CREATE;
			req.body = body;
			req.body_len = strlen(body);
		} else {
			req.verb = KUBE_DELETE;
			req.name = names[i];
			req.propagation_policy = "Background";
		}
		int r = kube_client_request(a->c, &req, NULL, NULL, &resp);
		if (r < 0 || (a->create && created_name(&resp, i) < 0))
			a->err = r < 0 ? r : -EBADMSG;
		if (!a->create)
			free(names[i]);
		kube_response_clear(&resp);
		free(body);
	}
	return NULL;
}

/* shape 3: a client per thread (clients[t]); shape 4: clients[0] shared */
static double run_threads(size_t n, struct kube_client **clients, bool shared, bool create,
                          double *rate)
{
	double c0 = cpu_us(), w0 = wall_s();
	struct th_arg a[BATCH];
	pthread_t th[BATCH];
	for (size_t t = 0; t < BATCH; t++) {
		a[t] = (struct th_arg){
		        .c = clients[shared ? 0 : t], .t = t, .n = n, .create = create};
		if (pthread_create(&th[t], NULL, th_main, &a[t]) != 0)
			exit(1);
	}
	for (size_t t = 0; t < BATCH; t++) {
		pthread_join(th[t], NULL);
		if (a[t].err < 0) {
			fprintf(stderr, "%s failed: %s\n", create ? "create" : "delete",
			        strerror(-a[t].err));
			exit(1);
		}
	}
	*rate = (double)n / (wall_s() - w0);
	return (cpu_us() - c0) / (double)n;
}

int main(int argc, char **argv)
{
	if (!getenv("KCMD_TEST_SERVER")) {
		printf("KCMD_TEST_SERVER not set: run with the test cluster's env\n");
		return 77;
	}
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	struct kube_config *cfg;
	char err[512] = "";
	struct kube_config_opts o = {.no_in_cluster = true};
	if (kube_config_load(&o, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "kubeconfig: %s\n", err);
		return 1;
	}
	struct kube_client_opts co = {.config = cfg,
	                              .process = "bench",
	                              .controller = "requests",
	                              .content_type = KUBE_CONTENT_PROTOBUF};
	if (kube_client_new(&co, &cl) < 0)
		return 1;
	snprintf(ns, sizeof(ns), "bench-req-%d", (int)getpid());
	char body[160];
	snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"}}", ns);
	struct kube_request r = {
	        .verb = KUBE_CREATE, .version = "v1", .resource = "namespaces", .body = body};
	struct kube_response resp;
	if (kube_client_request(cl, &r, NULL, NULL, &resp) < 0) {
		fprintf(stderr, "namespace: %s\n", resp.error.message);
		return 1;
	}
	kube_response_clear(&resp);
	names = calloc(n, sizeof(*names));
	/* warm up: the connection, TLS, the apiserver's caches */
	double rate;
	run_create(40, 1, &rate);
	run_delete(40, 1, &rate);
	static const char *const shape_name[] = {"seq", "many", "many_pb"};
	for (int s = 0; s < 3; s++) {
		double c = run_create(n, s, &rate);
		printf("bench: kube.req_create_%s_cpu_us %.1f us\n", shape_name[s], c);
		printf("bench: kube.req_create_%s_per_s %.0f req/s\n", shape_name[s], rate);
		c = run_delete(n, s, &rate);
		printf("bench: kube.req_delete_%s_cpu_us %.1f us\n", shape_name[s], c);
		printf("bench: kube.req_delete_%s_per_s %.0f req/s\n", shape_name[s], rate);
	}
	/* the threaded shapes: JSON clients, as the garbage collector's (its GETs alone ask
	 * protobuf); each client's connection and TLS set up before the clock starts */
	struct kube_client *clients[BATCH + 1];
	co.content_type = NULL;
	for (size_t t = 0; t <= BATCH; t++)
		if (kube_client_new(&co, &clients[t]) < 0)
			return 1;
	if (kube_client_share_threads(clients[BATCH]) < 0)
		return 1;
	run_threads(BATCH * 2, clients, false, true, &rate);
	run_threads(BATCH * 2, clients, false, false, &rate);
	run_threads(BATCH * 2, &clients[BATCH], true, true, &rate);
	run_threads(BATCH * 2, &clients[BATCH], true, false, &rate);
	static const char *const th_name[] = {"threads", "shared"};
	for (int s = 0; s < 2; s++) {
		struct kube_client **cs = s ? &clients[BATCH] : clients;
		double c = run_threads(n, cs, s == 1, true, &rate);
		printf("bench: kube.req_create_%s_cpu_us %.1f us\n", th_name[s], c);
		printf("bench: kube.req_create_%s_per_s %.0f req/s\n", th_name[s], rate);
		c = run_threads(n, cs, s == 1, false, &rate);
		printf("bench: kube.req_delete_%s_cpu_us %.1f us\n", th_name[s], c);
		printf("bench: kube.req_delete_%s_per_s %.0f req/s\n", th_name[s], rate);
	}
	for (size_t t = 0; t <= BATCH; t++)
		kube_client_free(clients[t]);
	r = (struct kube_request){
	        .verb = KUBE_DELETE, .version = "v1", .resource = "namespaces", .name = ns};
	kube_client_request(cl, &r, NULL, NULL, &resp);
	kube_response_clear(&resp);
	free(names);
	kube_client_free(cl);
	kube_config_free(cfg);
	return 0;
}
