/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet simulator's pure parts: node names, the decision table, node choice, addresses,
 * every JSON body (parsed back with cJSON), the template and node-list readers, durations; and
 * its informerd handler table on a real store + arena + queue owner (which pod events become
 * keys, the arena record view, resync).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/handlers.h"
#include "informerd/store.h"
#include "ipc/loop.h"
#include "ipc/queue.h"
#include "workers/kubeletsim/sim.h"
#include "workers/kubeletsim/table.h"

static void test_node_names(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(ks_node_index("kcmd-sim-node-0"), 0);
	assert_int_equal(ks_node_index("kcmd-sim-node-17"), 17);
	assert_int_equal(ks_node_index("kcmd-sim-node-999999"), 999999);
	assert_int_equal(ks_node_index("kcmd-sim-node-"), -1);
	assert_int_equal(ks_node_index("kcmd-sim-node-01"), -1);
	assert_int_equal(ks_node_index("kcmd-sim-node-1x"), -1);
	assert_int_equal(ks_node_index("kcmd-sim-node-1000000"), -1);
	assert_int_equal(ks_node_index("worker-1"), -1);
	assert_int_equal(ks_node_index(NULL), -1);
	assert_true(ks_is_sim_node("kcmd-sim-node-3"));
	assert_false(ks_is_sim_node("kcmd-sim-nodes-3"));
	ks_node_name(42, buf, sizeof(buf));
	assert_string_equal(buf, "kcmd-sim-node-42");
	assert_int_equal(ks_node_index(buf), 42);
}

static struct ks_pod pod(const char *node, enum kube_pod_phase ph, bool ready, kube_time_t del,
                         bool job)
{
	return (struct ks_pod){.ns = "ns",
	                       .name = "p",
	                       .uid = "u",
	                       .rv = "1",
	                       .node_name = node,
	                       .phase = ph,
	                       .ready = ready,
	                       .deletion_ts = del,
	                       .job_owned = job};
}

static void test_decide(void **state)
{
	const char *ours = "kcmd-sim-node-1", *real = "node-a";
	uint64_t wait = 99;
	struct ks_pod p;

	(void)state;
	/* unbound */
	p = pod(NULL, KUBE_POD_PENDING, false, 0, false);
	assert_int_equal(ks_decide(&p, 0, 0, 0, &wait), KS_BIND);
	assert_int_equal(wait, 0);
	p = pod("", KUBE_POD_PHASE_UNSET, false, 0, false);
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_BIND);
	p = pod(NULL, KUBE_POD_FAILED, false, 0, false);
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_NONE);
	p = pod(NULL, KUBE_POD_PENDING, false, 123, false); /* lingering on finalizers */
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_NONE);
	/* a DaemonSet's pod is not bound round-robin (its node is in its affinity), but once
	 * bound to one of our nodes it runs as any other */
	p = pod(NULL, KUBE_POD_PENDING, false, 0, false);
	p.ds_owned = true;
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_NONE);
	p = pod(ours, KUBE_POD_PENDING, false, 0, false);
	p.ds_owned = true;
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_RUN);
	/* on our node */
	p = pod(ours, KUBE_POD_PENDING, false, 0, false);
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_RUN);
	p = pod(ours, KUBE_POD_RUNNING, false, 0, false);
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_RUN);
	p = pod(ours, KUBE_POD_RUNNING, true, 0, false);
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_NONE);
	p = pod(ours, KUBE_POD_RUNNING, true, 0, true);
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_COMPLETE);
	p = pod(ours, KUBE_POD_PENDING, false, 0, true); /* a Job pod runs first */
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_RUN);
	p = pod(ours, KUBE_POD_SUCCEEDED, false, 0, true);
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_NONE);
	p = pod(ours, KUBE_POD_FAILED, false, 0, false);
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_NONE);
	p = pod(ours, KUBE_POD_RUNNING, true, 5, false);
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_DELETE);
	p = pod(ours, KUBE_POD_SUCCEEDED, false, 5, true);
	assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_DELETE);
	/* ready delay: counted from bound_since */
	p = pod(ours, KUBE_POD_PENDING, false, 0, false);
	assert_int_equal(ks_decide(&p, 1000, 400, 1000, &wait), KS_WAIT);
	assert_int_equal(wait, 400);
	assert_int_equal(ks_decide(&p, 1400, 400, 1000, &wait), KS_RUN);
	assert_int_equal(wait, 0);
	assert_int_equal(ks_decide(&p, 1000, 0, 1000, &wait), KS_RUN); /* unknown: long ago */
	p = pod(ours, KUBE_POD_PENDING, false, 7, false); /* deletion beats the delay */
	assert_int_equal(ks_decide(&p, 1000, 400, 1000, &wait), KS_DELETE);
	/* a real node's pods are never touched */
	static const enum kube_pod_phase phases[] = {KUBE_POD_PHASE_UNSET, KUBE_POD_PENDING,
	                                             KUBE_POD_RUNNING, KUBE_POD_SUCCEEDED,
	                                             KUBE_POD_FAILED};
	for (size_t i = 0; i < 5; i++)
		for (int bits = 0; bits < 8; bits++) {
			p = pod(real, phases[i], bits & 1, (bits & 2) ? 9 : 0, bits & 4);
			assert_int_equal(ks_decide(&p, 0, 0, 0, NULL), KS_NONE);
		}
	assert_string_equal(ks_action_name(KS_DELETE), "delete");
}

static void test_pick_and_addresses(void **state)
{
	unsigned cur = 0, seen[5] = {0};
	char a[32], b[32];

	(void)state;
	for (int i = 0; i < 50; i++)
		seen[ks_pick_node(&cur, 5)]++;
	for (int i = 0; i < 5; i++)
		assert_int_equal(seen[i], 10);
	cur = 7; /* shrunk node set: still in range */
	assert_true(ks_pick_node(&cur, 3) < 3);
	assert_int_equal(ks_pick_node(&cur, 0), 0);
	ks_node_ip(0, a, sizeof(a));
	assert_string_equal(a, "10.200.0.0");
	ks_node_ip(258, a, sizeof(a));
	assert_string_equal(a, "10.200.1.2");
	ks_pod_ip(0, a, sizeof(a));
	assert_string_equal(a, "10.128.0.1");
	ks_pod_ip(254, a, sizeof(a));
	assert_string_equal(a, "10.128.1.1");
	/* distinct over a large run, host byte never 0 or 255 */
	for (uint64_t i = 0; i < 200000; i += 997) {
		unsigned o[4];
		ks_pod_ip(i, a, sizeof(a));
		ks_pod_ip(i + 1, b, sizeof(b));
		assert_string_not_equal(a, b);
		assert_int_equal(sscanf(a, "%u.%u.%u.%u", &o[0], &o[1], &o[2], &o[3]), 4);
		assert_true(o[3] >= 1 && o[3] <= 254 && o[1] >= 128 && o[1] <= 255);
	}
}

static cJSON *parse(char *s)
{
	cJSON *j = cJSON_Parse(s);
	assert_non_null(j);
	free(s);
	return j;
}

static const char *str_at(cJSON *o, const char *path)
{
	char buf[256], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ".", &save); t && o; t = strtok_r(NULL, ".", &save)) {
		if (cJSON_IsArray(o))
			o = cJSON_GetArrayItem(o, atoi(t));
		else
			o = cJSON_GetObjectItemCaseSensitive(o, t);
	}
	return cJSON_IsString(o) ? o->valuestring : NULL;
}

static cJSON *at(cJSON *o, const char *path)
{
	char buf[256], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ".", &save); t && o; t = strtok_r(NULL, ".", &save))
		o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(t))
		                     : cJSON_GetObjectItemCaseSensitive(o, t);
	return o;
}

static void test_binding_body(void **state)
{
	char *s;
	cJSON *j;

	(void)state;
	assert_int_equal(ks_binding_body("web-1", "uid-1", "kcmd-sim-node-2", &s), 0);
	j = parse(s);
	assert_string_equal(str_at(j, "kind"), "Binding");
	assert_string_equal(str_at(j, "apiVersion"), "v1");
	assert_string_equal(str_at(j, "metadata.name"), "web-1");
	assert_string_equal(str_at(j, "metadata.uid"), "uid-1");
	assert_string_equal(str_at(j, "target.kind"), "Node");
	assert_string_equal(str_at(j, "target.name"), "kcmd-sim-node-2");
	cJSON_Delete(j);
	assert_int_equal(ks_binding_body("web-1", NULL, "n", &s), 0);
	j = parse(s);
	assert_null(at(j, "metadata.uid"));
	cJSON_Delete(j);
	assert_int_equal(ks_binding_body("", "u", "n", &s), -EINVAL);
	assert_int_equal(ks_binding_body("p", "u", NULL, &s), -EINVAL);
}

static void test_run_status_body(void **state)
{
	struct ks_container cs[] = {{"app", "registry.k8s.io/pause:3.10"}, {"side\"car", ""}};
	kube_time_t now = 1796000000ll * 1000000000ll + 123456789;
	char *s, ts[KUBE_TIME_BUF];
	cJSON *j, *conds, *c;

	(void)state;
	assert_int_equal(kube_time_format(now, ts), 20);
	assert_int_equal(ks_run_status_body("10.200.0.1", "10.128.0.7", now, cs, 2, &s), 0);
	j = parse(s);
	assert_string_equal(str_at(j, "status.phase"), "Running");
	assert_string_equal(str_at(j, "status.hostIP"), "10.200.0.1");
	assert_string_equal(str_at(j, "status.hostIPs.0.ip"), "10.200.0.1");
	assert_string_equal(str_at(j, "status.podIP"), "10.128.0.7");
	assert_string_equal(str_at(j, "status.podIPs.0.ip"), "10.128.0.7");
	assert_string_equal(str_at(j, "status.startTime"), ts);
	assert_int_equal(strlen(ts), 20); /* RFC 3339 seconds, Z */
	conds = at(j, "status.conditions");
	assert_int_equal(cJSON_GetArraySize(conds), 5);
	static const char *types[] = {"PodReadyToStartContainers", "Initialized", "Ready",
	                              "ContainersReady", "PodScheduled"};
	for (int i = 0; i < 5; i++) {
		bool found = false;
		cJSON_ArrayForEach(c, conds)
		{
			if (strcmp(str_at(c, "type"), types[i]) == 0) {
				found = true;
				assert_string_equal(str_at(c, "status"), "True");
				assert_string_equal(str_at(c, "lastTransitionTime"), ts);
				assert_true(cJSON_IsNull(at(c, "lastProbeTime")));
			}
		}
		assert_true(found);
	}
	assert_int_equal(cJSON_GetArraySize(at(j, "status.containerStatuses")), 2);
	assert_string_equal(str_at(j, "status.containerStatuses.0.name"), "app");
	assert_string_equal(str_at(j, "status.containerStatuses.0.image"),
	                    "registry.k8s.io/pause:3.10");
	assert_string_equal(str_at(j, "status.containerStatuses.1.name"), "side\"car");
	assert_true(cJSON_IsTrue(at(j, "status.containerStatuses.0.ready")));
	assert_true(cJSON_IsTrue(at(j, "status.containerStatuses.1.started")));
	assert_string_equal(str_at(j, "status.containerStatuses.1.state.running.startedAt"), ts);
	cJSON_Delete(j);
	/* without containers: no containerStatuses at all (a strategic merge leaves them alone) */
	assert_int_equal(ks_run_status_body("a", "b", now, NULL, 0, &s), 0);
	j = parse(s);
	assert_null(at(j, "status.containerStatuses"));
	cJSON_Delete(j);
	assert_int_equal(ks_run_status_body(NULL, "b", now, NULL, 0, &s), -EINVAL);
}

static void test_complete_status_body(void **state)
{
	struct ks_container cs[] = {{"job", "busybox"}};
	char *s;
	cJSON *j, *c;
	int n = 0;

	(void)state;
	assert_int_equal(ks_complete_status_body(kube_time_now(), cs, 1, &s), 0);
	j = parse(s);
	assert_string_equal(str_at(j, "status.phase"), "Succeeded");
	cJSON_ArrayForEach(c, at(j, "status.conditions"))
	{
		if (!strcmp(str_at(c, "type"), "Ready") ||
		    !strcmp(str_at(c, "type"), "ContainersReady")) {
			assert_string_equal(str_at(c, "status"), "False");
			assert_string_equal(str_at(c, "reason"), "PodCompleted");
			n++;
		}
	}
	assert_int_equal(n, 2);
	assert_int_equal(at(j, "status.containerStatuses.0.state.terminated.exitCode")->valueint,
	                 0);
	assert_string_equal(str_at(j, "status.containerStatuses.0.state.terminated.reason"),
	                    "Completed");
	assert_true(cJSON_IsFalse(at(j, "status.containerStatuses.0.ready")));
	cJSON_Delete(j);
}

static void test_job_plan(void **state)
{
	static const char job[] =
	        "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{"
	        "\"kubeletsim.kcmd.io/exit-code\":\"3\",\"kubeletsim.kcmd.io/"
	        "run-duration\":\"1.5s\","
	        "\"kubeletsim.kcmd.io/fail-count\":\"2\",\"kubeletsim.kcmd.io/"
	        "fail-indexes\":\"1,4\"}},"
	        "\"spec\":{\"restartPolicy\":\"OnFailure\",\"containers\":[{\"name\":\"a\","
	        "\"image\":\"busybox\"}]}}}}";
	struct ks_container cs[4];
	struct ks_job_plan plan;
	char *st = NULL, *s = NULL;
	cJSON *j;

	(void)state;
	assert_int_equal(ks_job_plan_parse(job, sizeof(job) - 1, &plan, cs, 4, &st), 1);
	assert_string_equal(cs[0].name, "a");
	assert_int_equal(plan.exit_code, 3);
	assert_int_equal(plan.run_us, 1500000);
	assert_int_equal(plan.fail_count, 2);
	assert_true(plan.on_failure);
	free(st);
	/* only listed indexes fail, and only while fewer than fail-count runs failed */
	assert_int_equal(ks_job_exit_code(&plan, 1, 0), 3);
	assert_int_equal(ks_job_exit_code(&plan, 4, 1), 3);
	assert_int_equal(ks_job_exit_code(&plan, 4, 2), 0);
	assert_int_equal(ks_job_exit_code(&plan, 0, 0), 0);
	assert_int_equal(ks_job_exit_code(&plan, -1, 0), 0);
	plan.fail_indexes[0] = 0;
	plan.fail_count = -1;
	assert_int_equal(ks_job_exit_code(&plan, -1, 100), 3); /* every run */
	/* no annotations: exit 0 at once, Never */
	assert_int_equal(ks_job_plan_parse("{\"spec\":{}}", 11, &plan, cs, 4, &st), 0);
	free(st);
	assert_int_equal(plan.exit_code, 0);
	assert_int_equal(plan.run_us, 0);
	assert_false(plan.on_failure);
	assert_int_equal(ks_job_plan_parse("nope", 4, &plan, cs, 4, &st), -EBADMSG);

	/* a failed run: Failed, exit code and reason Error on the first container */
	struct ks_container two[] = {{"a", "i"}, {"b", "i"}};
	assert_int_equal(ks_finish_status_body(kube_time_now(), 0, 3, 0, two, 2, &s), 0);
	j = parse(s);
	assert_string_equal(str_at(j, "status.phase"), "Failed");
	assert_int_equal(at(j, "status.containerStatuses.0.state.terminated.exitCode")->valueint,
	                 3);
	assert_string_equal(str_at(j, "status.containerStatuses.0.state.terminated.reason"),
	                    "Error");
	assert_int_equal(at(j, "status.containerStatuses.1.state.terminated.exitCode")->valueint,
	                 0);
	cJSON_Delete(j);
	/* a restart in place: Running, restartCount + 1, lastState terminated */
	assert_int_equal(ks_restart_status_body(kube_time_now(), 0, 1, 2, two, 2, &s), 0);
	j = parse(s);
	assert_string_equal(str_at(j, "status.phase"), "Running");
	assert_int_equal(at(j, "status.containerStatuses.0.restartCount")->valueint, 3);
	assert_int_equal(
	        at(j, "status.containerStatuses.0.lastState.terminated.exitCode")->valueint, 1);
	assert_non_null(at(j, "status.containerStatuses.0.state.running"));
	cJSON_Delete(j);
}

static void test_node_and_lease_bodies(void **state)
{
	char *s;
	cJSON *j;

	(void)state;
	assert_int_equal(ks_node_body(3, &s), 0);
	j = parse(s);
	assert_string_equal(str_at(j, "metadata.name"), "kcmd-sim-node-3");
	assert_string_equal(
	        cJSON_GetObjectItemCaseSensitive(at(j, "metadata.labels"), KS_LABEL)->valuestring,
	        "true");
	assert_string_equal(
	        cJSON_GetObjectItemCaseSensitive(at(j, "metadata.annotations"), KS_LABEL)
	                ->valuestring,
	        "true");
	assert_string_equal(str_at(j, "spec.taints.0.key"), KS_LABEL);
	assert_string_equal(str_at(j, "spec.taints.0.effect"), "NoSchedule");
	cJSON_Delete(j);

	assert_int_equal(ks_node_status_body(3, kube_time_now(), &s), 0);
	j = parse(s);
	assert_string_equal(str_at(j, "status.conditions.0.type"), "Ready");
	assert_string_equal(str_at(j, "status.conditions.0.status"), "True");
	assert_string_equal(str_at(j, "status.capacity.pods"), "110");
	assert_string_equal(str_at(j, "status.allocatable.pods"), "110");
	assert_string_equal(str_at(j, "status.addresses.0.address"), "10.200.0.3");
	assert_string_equal(str_at(j, "status.addresses.1.address"), "kcmd-sim-node-3");
	cJSON_Delete(j);

	assert_int_equal(ks_lease_body("kcmd-sim-node-3", "nuid", kube_time_now(), &s), 0);
	j = parse(s);
	assert_string_equal(str_at(j, "metadata.namespace"), "kube-node-lease");
	assert_string_equal(str_at(j, "metadata.ownerReferences.0.uid"), "nuid");
	assert_string_equal(str_at(j, "spec.holderIdentity"), "kcmd-sim-node-3");
	assert_int_equal(at(j, "spec.leaseDurationSeconds")->valueint, 40);
	const char *rt = str_at(j, "spec.renewTime");
	assert_non_null(rt);
	assert_int_equal(strlen(rt), 27); /* MicroTime: 6 decimals */
	cJSON_Delete(j);
	assert_int_equal(ks_lease_body("n", NULL, kube_time_now(), &s), 0);
	j = parse(s);
	assert_null(at(j, "metadata.ownerReferences"));
	cJSON_Delete(j);
	assert_int_equal(ks_lease_renew_body("n", kube_time_now(), &s), 0);
	j = parse(s);
	assert_string_equal(str_at(j, "spec.holderIdentity"), "n");
	assert_null(at(j, "metadata"));
	cJSON_Delete(j);
}

static void test_template_containers(void **state)
{
	const char *t = "{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"initContainers\":[{"
	                "\"name\":\"init\"}],"
	                "\"containers\":[{\"name\":\"web\",\"image\":\"nginx:1\"},{\"name\":\"\"},{"
	                "\"name\":\"log\"}]}}";
	struct ks_container out[4];
	char *st;

	(void)state;
	assert_int_equal(ks_template_containers(t, strlen(t), out, 4, &st), 2);
	assert_string_equal(out[0].name, "web");
	assert_string_equal(out[0].image, "nginx:1");
	assert_string_equal(out[1].name, "log");
	assert_string_equal(out[1].image, "");
	free(st);
	assert_int_equal(ks_template_containers(t, strlen(t), out, 1, &st), 1);
	free(st);
	assert_int_equal(ks_template_containers("{", 1, out, 4, &st), -EBADMSG);
	assert_null(st);
	assert_int_equal(ks_template_containers("{\"spec\":{}}", 11, out, 4, &st), -EBADMSG);
	assert_int_equal(ks_template_containers(NULL, 0, out, 4, &st), -EBADMSG);
}

static void test_scan_node_list(void **state)
{
	const char *list = "{\"kind\":\"NodeList\",\"items\":["
	                   "{\"metadata\":{\"name\":\"kcmd-sim-node-0\",\"labels\":{\"kcmd.io/"
	                   "simulated\":\"true\"}}},"
	                   "{\"metadata\":{\"name\":\"kcmd-sim-node-2\",\"labels\":{\"kcmd.io/"
	                   "simulated\":\"true\"}}},"
	                   "{\"metadata\":{\"name\":\"kcmd-sim-node-1\"}},"
	                   "{\"metadata\":{\"name\":\"real-b\",\"labels\":{\"kcmd.io/"
	                   "simulated\":\"false\"}}}]}";
	bool have[3] = {false};
	char first[64];

	(void)state;
	assert_int_equal(ks_scan_node_list(list, strlen(list), first, sizeof(first), have, 3), 2);
	assert_string_equal(first, "kcmd-sim-node-1"); /* our name without our label: not ours */
	assert_true(have[0]);
	assert_false(have[1]);
	assert_true(have[2]);
	assert_int_equal(ks_scan_node_list("{\"items\":[]}", 12, first, sizeof(first), NULL, 0), 0);
	assert_string_equal(first, "");
	assert_int_equal(ks_scan_node_list("{\"items\":null}", 14, NULL, 0, NULL, 0), 0);
	assert_int_equal(ks_scan_node_list("nope", 4, first, sizeof(first), NULL, 0), -EBADMSG);
	assert_int_equal(ks_scan_node_list("{\"items\":5}", 11, first, sizeof(first), NULL, 0),
	                 -EBADMSG);
}

static void test_durations(void **state)
{
	uint64_t us;

	(void)state;
	assert_int_equal(ks_parse_duration("0", &us), 0);
	assert_int_equal(us, 0);
	assert_int_equal(ks_parse_duration("1.5s", &us), 0);
	assert_int_equal(us, 1500000);
	assert_int_equal(ks_parse_duration("1m30s", &us), 0);
	assert_int_equal(us, 90000000);
	assert_int_equal(ks_parse_duration("250ms", &us), 0);
	assert_int_equal(us, 250000);
	assert_int_equal(ks_parse_duration("7us", &us), 0);
	assert_int_equal(us, 7);
	assert_int_equal(ks_parse_duration("5", &us), -EINVAL);
	assert_int_equal(ks_parse_duration("-1s", &us), -EINVAL);
	assert_int_equal(ks_parse_duration("", &us), -EINVAL);
	assert_int_equal(ks_parse_duration("3x", &us), -EINVAL);
}

/* ---- the handler table on a real store, arena and queue owner ----------------------------------
 */

static const struct inf_resource pods_res = {"", "v1", "pods", "Pod", SHM_RECORD_POD, true};

static struct kube_pod *mkpod(const char *name, const char *node, const char *phase, bool ready,
                              bool deleting, bool job, int rv)
{
	char json[2048];
	struct kube_pod *p;

	snprintf(json, sizeof(json),
	         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
	         "\"namespace\":\"ns\","
	         "\"uid\":\"uid-%s\",\"resourceVersion\":\"%d\"%s%s},"
	         "\"spec\":{%s%s%s\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]},"
	         "\"status\":{\"phase\":\"%s\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"%"
	         "s\"}]}}",
	         name, name, rv, deleting ? ",\"deletionTimestamp\":\"2026-12-02T10:00:00Z\"" : "",
	         job ? ",\"ownerReferences\":[{\"apiVersion\":\"batch/"
	               "v1\",\"kind\":\"Job\",\"name\":\"j\","
	               "\"uid\":\"ju\",\"controller\":true}]"
	             : "",
	         node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "", phase,
	         ready ? "True" : "False");
	assert_int_equal(kube_decode_pod(json, strlen(json), 0, &p), 0);
	return p;
}

static void test_handler_table(void **state)
{
	struct ipc_loop *loop;
	struct ipc_queue_owner *q;
	struct inf_dispatch *d;
	struct shm_arena *w, *r;
	struct inf_store *st;
	int afd, qfd = ipc_queue_memfd_create(KS_QUEUE);

	(void)state;
	assert_true(qfd >= 0);
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(ipc_queue_owner_new(&q, loop, qfd, NULL), 0);
	assert_int_equal(shm_arena_create(NULL, &afd), 0);
	assert_int_equal(shm_writer_open(afd, &w), 0);
	assert_int_equal(inf_dispatch_new(&d), 0);
	int ti = inf_dispatch_register(d, &ks_handler_table, &q, 1, w);
	assert_true(ti >= 0);
	assert_int_equal(inf_store_new(w, d, &st), 0);
	int pt = inf_store_add_resource(st, &pods_res);
	assert_true(pt >= 0);

	struct {
		struct kube_pod *p;
		bool key;
		enum ks_action act;
	} cases[] = {
	        {mkpod("unbound", NULL, "Pending", false, false, false, 1), true, KS_BIND},
	        {mkpod("ours-pending", "kcmd-sim-node-0", "Pending", false, false, false, 2), true,
	         KS_RUN},
	        {mkpod("ours-ready", "kcmd-sim-node-1", "Running", true, false, false, 3), false,
	         KS_NONE},
	        {mkpod("ours-job", "kcmd-sim-node-1", "Running", true, false, true, 4), true,
	         KS_COMPLETE},
	        {mkpod("ours-deleting", "kcmd-sim-node-0", "Running", true, true, false, 5), true,
	         KS_DELETE},
	        {mkpod("real-pending", "node-a", "Pending", false, false, false, 6), false,
	         KS_NONE},
	        {mkpod("real-deleting", "node-a", "Running", true, true, false, 7), false, KS_NONE},
	        {mkpod("done", "kcmd-sim-node-2", "Succeeded", false, false, false, 8), false,
	         KS_NONE},
	};
	size_t n = sizeof(cases) / sizeof(cases[0]), want = 0;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(inf_store_apply(st, (uint16_t)pt, KUBE_WATCH_ADDED, cases[i].p),
		                 0);
		want += cases[i].key;
		assert_int_equal(ipc_queue_owner_len(q), want);
	}
	/* The arena view equals the event view, and both decide the same. */
	assert_int_equal(shm_reader_open(afd, &r), 0);
	for (size_t i = 0; i < n; i++) {
		struct shm_obj o = SHM_OBJ_INIT;
		struct ks_pod a, b;
		assert_int_equal(shm_reader_get(r, (uint16_t)pt, "ns", cases[i].p->meta.name, &o),
		                 0);
		assert_int_equal(ks_pod_from_obj(&o, &a), 0);
		ks_pod_from_model(cases[i].p, &b);
		assert_string_equal(a.name, b.name);
		assert_string_equal(a.uid, b.uid);
		assert_string_equal(a.rv, b.rv);
		assert_int_equal(a.phase, b.phase);
		assert_int_equal(a.ready, b.ready);
		assert_int_equal(a.job_owned, b.job_owned);
		assert_int_equal(a.deletion_ts != 0, b.deletion_ts != 0);
		assert_int_equal(!a.node_name, !b.node_name);
		if (a.node_name)
			assert_string_equal(a.node_name, b.node_name);
		assert_int_equal(ks_decide(&a, 0, 0, 0, NULL), cases[i].act);
		assert_int_equal(ks_decide(&b, 0, 0, 0, NULL), cases[i].act);
		shm_obj_release(&o);
	}
	/* An update that needs nothing adds nothing; one that does adds (dedup: already queued). */
	struct kube_pod *up = mkpod("real-pending", "node-a", "Running", true, false, false, 9);
	assert_int_equal(inf_store_apply(st, (uint16_t)pt, KUBE_WATCH_MODIFIED, up), 0);
	assert_int_equal(ipc_queue_owner_len(q), want);
	struct kube_pod *up2 =
	        mkpod("done", "kcmd-sim-node-2", "Succeeded", false, true, false, 10);
	assert_int_equal(inf_store_apply(st, (uint16_t)pt, KUBE_WATCH_MODIFIED, up2), 0);
	assert_int_equal(ipc_queue_owner_len(q), want + 1);

	/* Resync on a fresh queue re-adds exactly the pods that need something. */
	int qfd2 = ipc_queue_memfd_create(KS_QUEUE);
	struct ipc_queue_owner *q2;
	assert_int_equal(ipc_queue_owner_new(&q2, loop, qfd2, NULL), 0);
	struct inf_dispatch *d2;
	assert_int_equal(inf_dispatch_new(&d2), 0);
	int t2 = inf_dispatch_register(d2, &ks_handler_table, &q2, 1, w);
	assert_true(t2 >= 0);
	inf_dispatch_resync(d2, (size_t)t2, 0, true);
	assert_int_equal(ipc_queue_owner_len(q2), want + 1);

	/* not a pod record */
	struct shm_obj bogus = {.kind = SHM_RECORD_META};
	struct ks_pod x;
	assert_int_equal(ks_pod_from_obj(&bogus, &x), -EINVAL);

	kube_object_free(up);
	kube_object_free(up2);
	for (size_t i = 0; i < n; i++)
		kube_object_free(cases[i].p);
	inf_dispatch_free(d2);
	ipc_queue_owner_free(q2);
	inf_store_free(st);
	inf_dispatch_free(d);
	shm_arena_close(r);
	shm_arena_close(w);
	ipc_queue_owner_free(q);
	ipc_loop_free(loop);
	close(afd);
	close(qfd);
	close(qfd2);
}

/* The simulator's queue pattern (prefetch > 1, keys taken outside the watch callback): a watch
 * armed while a lease is already in the ring must fire even when the owner dispatches more in
 * between (it turns the worker's wait flag to 0 before the loop submits the wait). The simulator
 * once hung with 6,000 keys queued this way. */
static int hks_fired;
static void on_fire(struct ipc_queue *q, void *ud)
{
	(void)q;
	(void)ud;
	hks_fired++;
}

static void test_queue_watch_when_ready(void **state)
{
	struct ipc_loop *loop;
	struct ipc_queue_owner *o;
	struct ipc_queue *w;
	char key[IPC_QUEUE_KEY_MAX + 1];
	int fd = ipc_queue_memfd_create(KS_QUEUE);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(ipc_queue_owner_new(&o, loop, fd, NULL), 0);
	assert_int_equal(ipc_queue_attach(&w, fd, IPC_QUEUE_WORKER, 8), 0);
	assert_int_equal(ipc_queue_owner_pump(o), 0);
	assert_int_equal(ipc_queue_owner_add(o, "ns/a"), 0);
	assert_int_equal(ipc_queue_owner_pump(o), 0); /* a lease is in the worker's ring */
	hks_fired = 0;
	assert_int_equal(ipc_queue_watch(w, loop, on_fire, NULL), 0);
	assert_int_equal(ipc_queue_owner_add(o, "ns/b"), 0);
	assert_int_equal(ipc_queue_owner_pump(o), 0); /* dispatch before the wait is submitted */
	for (int i = 0; i < 5 && !hks_fired; i++)
		ipc_loop_run_once(loop, 200000);
	assert_int_equal(hks_fired, 1);
	assert_true(ipc_queue_get(w, key, sizeof(key), 0) > 0);
	assert_int_equal(ipc_queue_done(w, IPC_QUEUE_DONE_FORGET, 0), 0);
	ipc_queue_free(w);
	ipc_queue_owner_free(o);
	ipc_loop_free(loop);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_node_names),
	        cmocka_unit_test(test_decide),
	        cmocka_unit_test(test_pick_and_addresses),
	        cmocka_unit_test(test_binding_body),
	        cmocka_unit_test(test_run_status_body),
	        cmocka_unit_test(test_complete_status_body),
	        cmocka_unit_test(test_job_plan),
	        cmocka_unit_test(test_node_and_lease_bodies),
	        cmocka_unit_test(test_template_containers),
	        cmocka_unit_test(test_scan_node_list),
	        cmocka_unit_test(test_durations),
	        cmocka_unit_test(test_handler_table),
	        cmocka_unit_test(test_queue_watch_when_ready),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
