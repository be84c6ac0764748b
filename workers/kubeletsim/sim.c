/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/kubeletsim/sim.c: the kubelet simulator's decisions and bodies (see sim.h).
 */
#include "workers/kubeletsim/sim.h"

#include "lib/goflag.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ks_action_name(enum ks_action a)
{
	switch (a) {
	case KS_NONE:
		return "none";
	case KS_BIND:
		return "bind";
	case KS_RUN:
		return "run";
	case KS_COMPLETE:
		return "complete";
	case KS_DELETE:
		return "delete";
	case KS_WAIT:
		return "wait";
	}
	return "unknown";
}

long ks_node_index(const char *node)
{
	size_t pl = sizeof(KS_NODE_PREFIX) - 1, n;
	long v = 0;

	if (!node || strncmp(node, KS_NODE_PREFIX, pl) != 0)
		return -1;
	node += pl;
	n = strlen(node);
	if (n == 0 || n > 6 || (n > 1 && node[0] == '0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (node[i] < '0' || node[i] > '9')
			return -1;
		v = v * 10 + (node[i] - '0');
	}
	return v;
}

bool ks_is_sim_node(const char *node)
{
	return ks_node_index(node) >= 0;
}

void ks_node_name(unsigned i, char *buf, size_t n)
{
	snprintf(buf, n, KS_NODE_PREFIX "%u", i);
}

enum ks_action ks_decide(const struct ks_pod *p, uint64_t now_us, uint64_t bound_since_us,
                         uint64_t ready_delay_us, uint64_t *wait_us)
{
	bool bound = p->node_name && p->node_name[0];

	if (wait_us)
		*wait_us = 0;
	if (bound && !ks_is_sim_node(p->node_name))
		return KS_NONE; /* a real node's kubelet owns it */
	if (p->deletion_ts)
		/* An unbound pod is deleted at once by the apiserver; one that lingers waits for
		 * its finalizers, which a kubelet does not own either. */
		return bound ? KS_DELETE : KS_NONE;
	/* A DaemonSet's pod belongs on the node of its required node affinity, which the arena
	 * does not keep: round-robin would bind it to the wrong node. Left to a scheduler (kcmd
	 * bench --workload=daemonsets binds them itself). */
	if (!bound && p->ds_owned)
		return KS_NONE;
	if (!bound)
		return p->phase == KUBE_POD_PENDING || p->phase == KUBE_POD_PHASE_UNSET ? KS_BIND
		                                                                        : KS_NONE;
	switch (p->phase) {
	case KUBE_POD_PHASE_UNSET:
	case KUBE_POD_PENDING:
	case KUBE_POD_RUNNING:
		if (p->phase == KUBE_POD_RUNNING && p->ready)
			return p->job_owned ? KS_COMPLETE : KS_NONE;
		if (ready_delay_us && bound_since_us && now_us < bound_since_us + ready_delay_us) {
			if (wait_us)
				*wait_us = bound_since_us + ready_delay_us - now_us;
			return KS_WAIT;
		}
		return KS_RUN;
	default: /* Succeeded, Failed, Unknown: nothing left to simulate */
		return KS_NONE;
	}
}

unsigned ks_pick_node(unsigned *cursor, unsigned n)
{
	unsigned i;

	if (n == 0)
		return 0;
	i = *cursor % n;
	*cursor = (i + 1) % n;
	return i;
}

void ks_node_ip(unsigned i, char *buf, size_t n)
{
	snprintf(buf, n, "10.200.%u.%u", (i >> 8) & 255u, i & 255u);
}

void ks_pod_ip(uint64_t seq, char *buf, size_t n)
{
	/* 10.128.0.1 .. 10.255.255.254: 2^23 addresses, skipping .0 and .255 host bytes */
	uint64_t k = seq % (128ull * 256 * 254);
	unsigned host = (unsigned)(k % 254) + 1;
	k /= 254;
	snprintf(buf, n, "10.%u.%u.%u", 128u + (unsigned)(k / 256), (unsigned)(k % 256), host);
}

/* ---- JSON helpers -----------------------------------------------------------------------------
 */

static int finish(cJSON *root, char **ret)
{
	char *s;

	if (!root)
		return -ENOMEM;
	s = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

/* cJSON's Add* return NULL on allocation failure and leave the tree valid; a single check of
 * a flag at the end is enough (every builder below sets *bad on any NULL). */
static cJSON *add_obj(cJSON *parent, const char *name, bool *bad)
{
	cJSON *o = cJSON_AddObjectToObject(parent, name);
	if (!o)
		*bad = true;
	return o;
}

static void add_str(cJSON *o, const char *name, const char *v, bool *bad)
{
	if (!o || !cJSON_AddStringToObject(o, name, v ? v : ""))
		*bad = true;
}

static cJSON *add_arr(cJSON *parent, const char *name, bool *bad)
{
	cJSON *a = parent ? cJSON_AddArrayToObject(parent, name) : NULL;
	if (!a)
		*bad = true;
	return a;
}

static cJSON *arr_obj(cJSON *arr, bool *bad)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !arr || !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		*bad = true;
		return NULL;
	}
	return o;
}

static void add_num(cJSON *o, const char *name, double v, bool *bad)
{
	if (!o || !cJSON_AddNumberToObject(o, name, v))
		*bad = true;
}

static void add_bool(cJSON *o, const char *name, bool v, bool *bad)
{
	if (!o || !cJSON_AddBoolToObject(o, name, v))
		*bad = true;
}

static void add_cond(cJSON *arr, const char *type, const char *status, const char *reason,
                     const char *ts, bool *bad)
{
	cJSON *c = arr_obj(arr, bad);
	add_str(c, "type", type, bad);
	add_str(c, "status", status, bad);
	if (reason)
		add_str(c, "reason", reason, bad);
	if (!c || !cJSON_AddNullToObject(c, "lastProbeTime"))
		*bad = true;
	add_str(c, "lastTransitionTime", ts, bad);
}

static int done(cJSON *root, bool bad, char **ret)
{
	if (bad) {
		cJSON_Delete(root);
		return -ENOMEM;
	}
	return finish(root, ret);
}

/* ---- pods -------------------------------------------------------------------------------------
 */

int ks_template_containers(const char *template_json, size_t len, struct ks_container *out,
                           size_t max, char **storage)
{
	cJSON *root, *spec, *cs, *c;
	size_t n = 0, bytes = 0;
	char *st, *p;

	*storage = NULL;
	if (!template_json || !len)
		return -EBADMSG;
	root = cJSON_ParseWithLength(template_json, len);
	if (!root)
		return -EBADMSG;
	spec = cJSON_GetObjectItemCaseSensitive(root, "spec");
	cs = spec ? cJSON_GetObjectItemCaseSensitive(spec, "containers") : NULL;
	if (!cJSON_IsArray(cs)) {
		cJSON_Delete(root);
		return -EBADMSG;
	}
	cJSON_ArrayForEach(c, cs)
	{
		cJSON *nm = cJSON_GetObjectItemCaseSensitive(c, "name");
		cJSON *im = cJSON_GetObjectItemCaseSensitive(c, "image");
		if (!cJSON_IsString(nm) || !nm->valuestring[0])
			continue;
		bytes += strlen(nm->valuestring) + 1 +
		         (cJSON_IsString(im) ? strlen(im->valuestring) : 0) + 1;
	}
	st = malloc(bytes + 1);
	if (!st) {
		cJSON_Delete(root);
		return -ENOMEM;
	}
	p = st;
	cJSON_ArrayForEach(c, cs)
	{
		cJSON *nm = cJSON_GetObjectItemCaseSensitive(c, "name");
		cJSON *im = cJSON_GetObjectItemCaseSensitive(c, "image");
		size_t l;
		if (!cJSON_IsString(nm) || !nm->valuestring[0])
			continue;
		if (n >= max)
			break;
		l = strlen(nm->valuestring) + 1;
		memcpy(p, nm->valuestring, l);
		out[n].name = p;
		p += l;
		l = cJSON_IsString(im) ? strlen(im->valuestring) : 0;
		memcpy(p, l ? im->valuestring : "", l);
		p[l] = 0;
		out[n].image = p;
		p += l + 1;
		n++;
	}
	cJSON_Delete(root);
	*storage = st;
	return (int)n;
}

int ks_binding_body(const char *pod, const char *uid, const char *node, char **ret)
{
	cJSON *root = cJSON_CreateObject(), *meta, *target;
	bool bad = !root;

	if (!pod || !*pod || !node || !*node) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	if (bad)
		return -ENOMEM;
	add_str(root, "apiVersion", "v1", &bad);
	add_str(root, "kind", "Binding", &bad);
	meta = add_obj(root, "metadata", &bad);
	add_str(meta, "name", pod, &bad);
	if (uid && *uid)
		add_str(meta, "uid", uid, &bad);
	target = add_obj(root, "target", &bad);
	add_str(target, "apiVersion", "v1", &bad);
	add_str(target, "kind", "Node", &bad);
	add_str(target, "name", node, &bad);
	return done(root, bad, ret);
}

int ks_run_status_body(const char *host_ip, const char *pod_ip, kube_time_t now,
                       const struct ks_container *c, size_t n_containers, char **ret)
{
	char ts[KUBE_TIME_BUF];
	cJSON *root = cJSON_CreateObject(), *st, *conds, *arr, *o;
	bool bad = !root;

	if (!host_ip || !pod_ip) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	if (bad)
		return -ENOMEM;
	if (kube_time_format(now, ts) < 0) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	st = add_obj(root, "status", &bad);
	add_str(st, "phase", "Running", &bad);
	conds = add_arr(st, "conditions", &bad);
	add_cond(conds, "PodReadyToStartContainers", "True", NULL, ts, &bad);
	add_cond(conds, "Initialized", "True", NULL, ts, &bad);
	add_cond(conds, "Ready", "True", NULL, ts, &bad);
	add_cond(conds, "ContainersReady", "True", NULL, ts, &bad);
	add_cond(conds, "PodScheduled", "True", NULL, ts, &bad);
	add_str(st, "hostIP", host_ip, &bad);
	arr = add_arr(st, "hostIPs", &bad);
	add_str(arr_obj(arr, &bad), "ip", host_ip, &bad);
	add_str(st, "podIP", pod_ip, &bad);
	arr = add_arr(st, "podIPs", &bad);
	add_str(arr_obj(arr, &bad), "ip", pod_ip, &bad);
	add_str(st, "startTime", ts, &bad);
	if (n_containers) {
		arr = add_arr(st, "containerStatuses", &bad);
		for (size_t i = 0; i < n_containers; i++) {
			o = arr_obj(arr, &bad);
			add_str(o, "name", c[i].name, &bad);
			add_bool(o, "ready", true, &bad);
			add_bool(o, "started", true, &bad);
			add_num(o, "restartCount", 0, &bad);
			add_str(o, "image", c[i].image, &bad);
			add_str(o, "imageID", "", &bad);
			add_str(o, "containerID", "", &bad);
			cJSON *state = add_obj(o, "state", &bad);
			cJSON *running = state ? add_obj(state, "running", &bad) : NULL;
			add_str(running, "startedAt", ts, &bad);
		}
	}
	return done(root, bad, ret);
}

int ks_complete_status_body(kube_time_t now, const struct ks_container *c, size_t n_containers,
                            char **ret)
{
	char ts[KUBE_TIME_BUF];
	cJSON *root = cJSON_CreateObject(), *st, *conds, *arr, *o;
	bool bad = !root;

	if (bad)
		return -ENOMEM;
	if (kube_time_format(now, ts) < 0) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	st = add_obj(root, "status", &bad);
	add_str(st, "phase", "Succeeded", &bad);
	conds = add_arr(st, "conditions", &bad);
	add_cond(conds, "PodReadyToStartContainers", "False", NULL, ts, &bad);
	add_cond(conds, "Ready", "False", "PodCompleted", ts, &bad);
	add_cond(conds, "ContainersReady", "False", "PodCompleted", ts, &bad);
	if (n_containers) {
		arr = add_arr(st, "containerStatuses", &bad);
		for (size_t i = 0; i < n_containers; i++) {
			o = arr_obj(arr, &bad);
			add_str(o, "name", c[i].name, &bad);
			add_bool(o, "ready", false, &bad);
			add_bool(o, "started", false, &bad);
			add_num(o, "restartCount", 0, &bad);
			add_str(o, "image", c[i].image, &bad);
			add_str(o, "imageID", "", &bad);
			add_str(o, "containerID", "", &bad);
			cJSON *state = add_obj(o, "state", &bad);
			cJSON *term = state ? add_obj(state, "terminated", &bad) : NULL;
			add_num(term, "exitCode", 0, &bad);
			add_str(term, "reason", "Completed", &bad);
			add_str(term, "startedAt", ts, &bad);
			add_str(term, "finishedAt", ts, &bad);
		}
	}
	return done(root, bad, ret);
}

/* ---- Job pods ---------------------------------------------------------------------------------
 */

static const char *ann_of(cJSON *anns, const char *key)
{
	cJSON *x = cJSON_GetObjectItemCaseSensitive(anns, key);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

int ks_job_plan_parse(const char *job_json, size_t len, struct ks_job_plan *plan,
                      struct ks_container *out, size_t max, char **storage)
{
	cJSON *root, *tmpl, *anns, *rp;
	const char *v;
	char *tj;
	int n;

	*plan = (struct ks_job_plan){.fail_count = -1};
	*storage = NULL;
	if (!job_json || !len || !(root = cJSON_ParseWithLength(job_json, len)))
		return -EBADMSG;
	tmpl = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "spec"),
	                                        "template");
	anns = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tmpl, "metadata"),
	                                        "annotations");
	if ((v = ann_of(anns, KS_ANN_EXIT_CODE))) {
		char *end;
		long x = strtol(v, &end, 10);
		if (*v && !*end && x >= 0 && x <= 255)
			plan->exit_code = (int32_t)x;
	}
	if ((v = ann_of(anns, KS_ANN_RUN_DURATION)))
		ks_parse_duration(v, &plan->run_us);
	if ((v = ann_of(anns, KS_ANN_FAIL_COUNT))) {
		char *end;
		long long x = strtoll(v, &end, 10);
		if (*v && !*end && x >= 0)
			plan->fail_count = x;
	}
	if ((v = ann_of(anns, KS_ANN_FAIL_INDEXES)))
		snprintf(plan->fail_indexes, sizeof(plan->fail_indexes), "%s", v);
	rp = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tmpl, "spec"),
	                                      "restartPolicy");
	plan->on_failure = cJSON_IsString(rp) && !strcmp(rp->valuestring, "OnFailure");
	tj = tmpl ? cJSON_PrintUnformatted(tmpl) : NULL;
	cJSON_Delete(root);
	if (!tj)
		return 0; /* no template: no containers */
	n = ks_template_containers(tj, strlen(tj), out, max, storage);
	free(tj);
	return n < 0 ? 0 : n;
}

int32_t ks_job_exit_code(const struct ks_job_plan *plan, int64_t index, int64_t failures)
{
	if (plan->exit_code == 0)
		return 0;
	if (plan->fail_indexes[0]) {
		bool listed = false;
		for (const char *p = plan->fail_indexes; *p;) {
			char *end;
			long long x = strtoll(p, &end, 10);
			if (end != p && index >= 0 && x == index)
				listed = true;
			p = *end ? end + 1 : end;
		}
		if (!listed)
			return 0;
	}
	if (plan->fail_count >= 0 && failures >= plan->fail_count)
		return 0;
	return plan->exit_code;
}

static void add_container_statuses(cJSON *st, kube_time_t now, kube_time_t started,
                                   int32_t exit_code, int32_t restarts, bool restart,
                                   const struct ks_container *c, size_t n, bool *bad)
{
	char ts[KUBE_TIME_BUF], ss[KUBE_TIME_BUF];
	cJSON *arr;

	if (!n)
		return;
	kube_time_format(now, ts);
	kube_time_format(started ? started : now, ss);
	arr = add_arr(st, "containerStatuses", bad);
	for (size_t i = 0; i < n; i++) {
		int32_t code = i == 0 ? exit_code : 0;
		cJSON *o = arr_obj(arr, bad);
		add_str(o, "name", c[i].name, bad);
		add_bool(o, "ready", restart, bad);
		add_bool(o, "started", restart, bad);
		add_num(o, "restartCount", restarts + (restart && i == 0 ? 1 : 0), bad);
		add_str(o, "image", c[i].image, bad);
		add_str(o, "imageID", "", bad);
		add_str(o, "containerID", "", bad);
		cJSON *state = add_obj(o, "state", bad);
		cJSON *term;
		if (restart) {
			cJSON *run = state ? add_obj(state, "running", bad) : NULL;
			add_str(run, "startedAt", ts, bad);
			if (i != 0)
				continue;
			cJSON *last = add_obj(o, "lastState", bad);
			term = last ? add_obj(last, "terminated", bad) : NULL;
		} else {
			term = state ? add_obj(state, "terminated", bad) : NULL;
		}
		add_num(term, "exitCode", code, bad);
		add_str(term, "reason", code ? "Error" : "Completed", bad);
		add_str(term, "startedAt", ss, bad);
		add_str(term, "finishedAt", ts, bad);
	}
}

int ks_finish_status_body(kube_time_t now, kube_time_t started, int32_t exit_code, int32_t restarts,
                          const struct ks_container *c, size_t n_containers, char **ret)
{
	char ts[KUBE_TIME_BUF];
	cJSON *root = cJSON_CreateObject(), *st, *conds;
	const char *why = exit_code ? "PodFailed" : "PodCompleted";
	bool bad = !root;

	if (bad)
		return -ENOMEM;
	if (kube_time_format(now, ts) < 0) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	st = add_obj(root, "status", &bad);
	add_str(st, "phase", exit_code ? "Failed" : "Succeeded", &bad);
	conds = add_arr(st, "conditions", &bad);
	add_cond(conds, "PodReadyToStartContainers", "False", NULL, ts, &bad);
	add_cond(conds, "Ready", "False", why, ts, &bad);
	add_cond(conds, "ContainersReady", "False", why, ts, &bad);
	add_container_statuses(st, now, started, exit_code, restarts, false, c, n_containers, &bad);
	return done(root, bad, ret);
}

int ks_restart_status_body(kube_time_t now, kube_time_t started, int32_t exit_code,
                           int32_t restarts, const struct ks_container *c, size_t n_containers,
                           char **ret)
{
	char ts[KUBE_TIME_BUF];
	cJSON *root = cJSON_CreateObject(), *st, *conds;
	bool bad = !root;

	if (bad)
		return -ENOMEM;
	if (kube_time_format(now, ts) < 0) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	st = add_obj(root, "status", &bad);
	add_str(st, "phase", "Running", &bad);
	conds = add_arr(st, "conditions", &bad);
	add_cond(conds, "Ready", "True", NULL, ts, &bad);
	add_cond(conds, "ContainersReady", "True", NULL, ts, &bad);
	add_container_statuses(st, now, started, exit_code, restarts, true, c, n_containers, &bad);
	return done(root, bad, ret);
}

/* ---- nodes ------------------------------------------------------------------------------------
 */

int ks_node_body(unsigned i, char **ret)
{
	char name[64];
	cJSON *root = cJSON_CreateObject(), *meta, *labels, *ann, *spec, *taints, *t;
	bool bad = !root;

	if (bad)
		return -ENOMEM;
	ks_node_name(i, name, sizeof(name));
	add_str(root, "apiVersion", "v1", &bad);
	add_str(root, "kind", "Node", &bad);
	meta = add_obj(root, "metadata", &bad);
	add_str(meta, "name", name, &bad);
	labels = meta ? add_obj(meta, "labels", &bad) : NULL;
	add_str(labels, KS_LABEL, "true", &bad);
	add_str(labels, "type", "kcmd-sim", &bad);
	add_str(labels, "kubernetes.io/hostname", name, &bad);
	add_str(labels, "kubernetes.io/os", "linux", &bad);
	add_str(labels, "kubernetes.io/arch", "amd64", &bad);
	add_str(labels, "node-role.kubernetes.io/agent", "", &bad);
	ann = meta ? add_obj(meta, "annotations", &bad) : NULL;
	add_str(ann, KS_LABEL, "true", &bad);
	add_str(ann, "node.alpha.kubernetes.io/ttl", "0", &bad);
	spec = add_obj(root, "spec", &bad);
	taints = add_arr(spec, "taints", &bad);
	t = arr_obj(taints, &bad);
	add_str(t, "key", KS_LABEL, &bad);
	add_str(t, "value", "true", &bad);
	add_str(t, "effect", "NoSchedule", &bad);
	return done(root, bad, ret);
}

static void add_node_cond(cJSON *arr, const char *type, const char *status, const char *reason,
                          const char *msg, const char *ts, bool *bad)
{
	cJSON *c = arr_obj(arr, bad);
	add_str(c, "type", type, bad);
	add_str(c, "status", status, bad);
	add_str(c, "reason", reason, bad);
	add_str(c, "message", msg, bad);
	add_str(c, "lastHeartbeatTime", ts, bad);
	add_str(c, "lastTransitionTime", ts, bad);
}

int ks_node_status_body(unsigned i, kube_time_t now, char **ret)
{
	char ts[KUBE_TIME_BUF], name[64], ip[32];
	cJSON *root = cJSON_CreateObject(), *st, *conds, *cap, *alloc, *addrs, *a, *info, *de, *ke;
	bool bad = !root;

	if (bad)
		return -ENOMEM;
	if (kube_time_format(now, ts) < 0) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	ks_node_name(i, name, sizeof(name));
	ks_node_ip(i, ip, sizeof(ip));
	st = add_obj(root, "status", &bad);
	conds = add_arr(st, "conditions", &bad);
	add_node_cond(conds, "Ready", "True", "KubeletReady",
	              "kubelet is posting ready status (kcmd kubelet simulator)", ts, &bad);
	add_node_cond(conds, "MemoryPressure", "False", "KubeletHasSufficientMemory",
	              "kubelet has sufficient memory available", ts, &bad);
	add_node_cond(conds, "DiskPressure", "False", "KubeletHasNoDiskPressure",
	              "kubelet has no disk pressure", ts, &bad);
	add_node_cond(conds, "PIDPressure", "False", "KubeletHasSufficientPID",
	              "kubelet has sufficient PID available", ts, &bad);
	cap = add_obj(st, "capacity", &bad);
	alloc = add_obj(st, "allocatable", &bad);
	for (int k = 0; k < 2; k++) {
		cJSON *o = k ? alloc : cap;
		add_str(o, "cpu", "32", &bad);
		add_str(o, "memory", "256Gi", &bad);
		add_str(o, "pods", "110", &bad);
		add_str(o, "ephemeral-storage", "1Ti", &bad);
	}
	addrs = add_arr(st, "addresses", &bad);
	a = arr_obj(addrs, &bad);
	add_str(a, "type", "InternalIP", &bad);
	add_str(a, "address", ip, &bad);
	a = arr_obj(addrs, &bad);
	add_str(a, "type", "Hostname", &bad);
	add_str(a, "address", name, &bad);
	info = add_obj(st, "nodeInfo", &bad);
	add_str(info, "machineID", "", &bad);
	add_str(info, "systemUUID", "", &bad);
	add_str(info, "bootID", "", &bad);
	add_str(info, "kernelVersion", "", &bad);
	add_str(info, "osImage", "", &bad);
	add_str(info, "containerRuntimeVersion", "kcmd-sim://" KCMD_VERSION, &bad);
	add_str(info, "kubeletVersion", "kcmd-sim-" KCMD_VERSION, &bad);
	add_str(info, "kubeProxyVersion", "", &bad);
	add_str(info, "operatingSystem", "linux", &bad);
	add_str(info, "architecture", "amd64", &bad);
	de = add_obj(st, "daemonEndpoints", &bad);
	ke = de ? add_obj(de, "kubeletEndpoint", &bad) : NULL;
	add_num(ke, "Port", 10250, &bad);
	return done(root, bad, ret);
}

int ks_lease_body(const char *node, const char *node_uid, kube_time_t now, char **ret)
{
	char ts[KUBE_TIME_BUF];
	cJSON *root = cJSON_CreateObject(), *meta, *spec, *refs, *r;
	bool bad = !root;

	if (bad)
		return -ENOMEM;
	if (!node || !*node || kube_microtime_format(now, ts) < 0) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	add_str(root, "apiVersion", "coordination.k8s.io/v1", &bad);
	add_str(root, "kind", "Lease", &bad);
	meta = add_obj(root, "metadata", &bad);
	add_str(meta, "name", node, &bad);
	add_str(meta, "namespace", KS_LEASE_NS, &bad);
	if (node_uid && *node_uid) {
		/* As the kubelet does: the Lease goes with its Node (garbage collector). */
		refs = meta ? add_arr(meta, "ownerReferences", &bad) : NULL;
		r = arr_obj(refs, &bad);
		add_str(r, "apiVersion", "v1", &bad);
		add_str(r, "kind", "Node", &bad);
		add_str(r, "name", node, &bad);
		add_str(r, "uid", node_uid, &bad);
	}
	spec = add_obj(root, "spec", &bad);
	add_str(spec, "holderIdentity", node, &bad);
	add_num(spec, "leaseDurationSeconds", KS_LEASE_SECONDS, &bad);
	add_str(spec, "renewTime", ts, &bad);
	return done(root, bad, ret);
}

int ks_lease_renew_body(const char *node, kube_time_t now, char **ret)
{
	char ts[KUBE_TIME_BUF];
	cJSON *root = cJSON_CreateObject(), *spec;
	bool bad = !root;

	if (bad)
		return -ENOMEM;
	if (!node || !*node || kube_microtime_format(now, ts) < 0) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	spec = add_obj(root, "spec", &bad);
	add_str(spec, "holderIdentity", node, &bad);
	add_num(spec, "leaseDurationSeconds", KS_LEASE_SECONDS, &bad);
	add_str(spec, "renewTime", ts, &bad);
	return done(root, bad, ret);
}

int ks_scan_node_list(const char *json, size_t len, char *first_foreign, size_t ff_len, bool *have,
                      size_t n_have)
{
	cJSON *root = cJSON_ParseWithLength(json, len), *items, *it;
	int foreign = 0;

	if (first_foreign && ff_len)
		first_foreign[0] = 0;
	if (!root)
		return -EBADMSG;
	items = cJSON_GetObjectItemCaseSensitive(root, "items");
	if (!cJSON_IsArray(items) && !cJSON_IsNull(items) && items) {
		cJSON_Delete(root);
		return -EBADMSG;
	}
	cJSON_ArrayForEach(it, items)
	{
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		cJSON *name = meta ? cJSON_GetObjectItemCaseSensitive(meta, "name") : NULL;
		cJSON *labels = meta ? cJSON_GetObjectItemCaseSensitive(meta, "labels") : NULL;
		cJSON *sim = labels ? cJSON_GetObjectItemCaseSensitive(labels, KS_LABEL) : NULL;
		const char *nm = cJSON_IsString(name) ? name->valuestring : "";

		if (cJSON_IsString(sim) && strcmp(sim->valuestring, "true") == 0) {
			long idx = ks_node_index(nm);
			if (have && idx >= 0 && (size_t)idx < n_have)
				have[idx] = true;
			continue;
		}
		if (foreign++ == 0 && first_foreign && ff_len)
			snprintf(first_foreign, ff_len, "%s", nm);
	}
	cJSON_Delete(root);
	return foreign;
}

int ks_parse_duration(const char *s, uint64_t *ret_us)
{
	return kcmd_parse_duration(s, ret_us); /* one Go duration parser for every kcmd program */
}
