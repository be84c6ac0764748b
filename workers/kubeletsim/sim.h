/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/kubeletsim/sim.h: the kubelet simulator's pure parts (no I/O): which pods it acts on,
 * what it does to them, and the JSON bodies it sends. See docs/bench.md "Kubelet simulator".
 *
 * Design note.
 *   The simulator plays kwok's "fast" stages for fake Nodes named KS_NODE_PREFIX<i>:
 *   bind a Pending unbound pod, mark a bound pod Running+Ready, complete a Job's pod, and finish
 *   a graceful deletion with a grace-0 DELETE. ks_decide() is the one place that maps a pod's
 *   cached state to that action; informerd's handler table uses the same function to decide
 *   which pod events are worth a key, so the two can never disagree.
 *   Bodies are built with cJSON (escaping is its job), each returned as a malloc'd string.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/model.h"

#define KS_CONTROLLER    "kubelet-simulator"
#define KS_QUEUE         "kubelet-sim"
#define KS_NODE_PREFIX   "kcmd-sim-node-"
#define KS_LABEL         "kcmd.io/simulated"
#define KS_LEASE_NS      "kube-node-lease"
#define KS_LEASE_SECONDS 40
#define KS_MAX_NODES     100000

enum ks_action {
	KS_NONE = 0,
	KS_BIND,     /* POST pods/<name>/binding */
	KS_RUN,      /* PATCH pods/<name>/status: Running + Ready */
	KS_COMPLETE, /* PATCH pods/<name>/status: Succeeded (Job pods) */
	KS_DELETE,   /* DELETE gracePeriodSeconds=0, uid precondition */
	KS_WAIT,     /* RUN later: the ready delay has not elapsed */
};

const char *ks_action_name(enum ks_action a);

/* What the simulator knows of a pod (from the arena or a decoded event). */
struct ks_pod {
	const char *ns, *name, *uid, *rv;
	const char *node_name; /* NULL or "" when unbound */
	enum kube_pod_phase phase;
	bool ready;
	kube_time_t deletion_ts; /* 0: not being deleted */
	bool job_owned;          /* controller reference to a batch/v1 Job */
	bool ds_owned;           /* controller reference to an apps/v1 DaemonSet */
	kube_time_t ready_since; /* the Ready condition's lastTransitionTime (0: none) */
	int32_t restarts;        /* largest container restartCount */
};

/* True for KS_NODE_PREFIX followed by 1..6 decimal digits (no leading zero but "0"). */
bool ks_is_sim_node(const char *node);
/* The index in a simulated node name, or -1. */
long ks_node_index(const char *node);
/* Writes KS_NODE_PREFIX<i>. */
void ks_node_name(unsigned i, char *buf, size_t n);

/* The action for p. bound_since_us: when the simulator first saw p bound to one of its nodes
 * (0: unknown, treated as "long ago"); now_us on the same clock. For KS_WAIT, *wait_us is how
 * long until KS_RUN. */
enum ks_action ks_decide(const struct ks_pod *p, uint64_t now_us, uint64_t bound_since_us,
                         uint64_t ready_delay_us, uint64_t *wait_us);

/* Round-robin node choice over n nodes; *cursor advances. Returns the index. */
unsigned ks_pick_node(unsigned *cursor, unsigned n);

/* Addresses: node i's InternalIP, and the n-th pod IP handed out. */
void ks_node_ip(unsigned i, char *buf, size_t n);
void ks_pod_ip(uint64_t seq, char *buf, size_t n);

struct ks_container {
	const char *name, *image;
};

/* Container names and images of a pod template (spec.template JSON of a ReplicaSet): fills
 * out[0..max) with pointers into *storage (free it with free()). Returns the count (>= 0),
 * -EBADMSG (not JSON / no spec.containers), -ENOMEM. */
int ks_template_containers(const char *template_json, size_t len, struct ks_container *out,
                           size_t max, char **storage);

/* Bodies (malloc'd, NUL-terminated JSON). Return 0, -ENOMEM, -EINVAL. */
int ks_binding_body(const char *pod, const char *uid, const char *node, char **ret);
/* Strategic merge patch of pods/<name>/status making the pod Running and Ready (kwok's
 * pod-ready): phase, conditions, hostIP(s), podIP(s), startTime, and one running+ready
 * containerStatus per container (none when n_containers is 0). */
int ks_run_status_body(const char *host_ip, const char *pod_ip, kube_time_t now,
                       const struct ks_container *c, size_t n_containers, char **ret);
/* Strategic merge patch for a Job's pod (kwok's pod-complete): phase Succeeded, Ready and
 * ContainersReady False with reason PodCompleted, containers terminated with exit code 0. */
int ks_complete_status_body(kube_time_t now, const struct ks_container *c, size_t n_containers,
                            char **ret);
/* ---- Job pods (docs/bench.md "Kubelet simulator", "Job pods") --------------------------------
 * What a Job asks of the simulator, read from its spec.template: the annotations below (pods
 * carry them too, but the simulator's cache keeps a pod's labels, not its annotations, so it
 * reads them from the owning Job) and spec.restartPolicy. */
#define KS_ANN_EXIT_CODE    "kubeletsim.kcmd.io/exit-code"    /* int, default 0 */
#define KS_ANN_RUN_DURATION "kubeletsim.kcmd.io/run-duration" /* Go duration, default 0 */
#define KS_ANN_FAIL_COUNT   "kubeletsim.kcmd.io/fail-count"   /* the first N runs fail */
#define KS_ANN_FAIL_INDEXES "kubeletsim.kcmd.io/fail-indexes" /* "1,3": only these indexes */
struct ks_job_plan {
	int32_t exit_code;
	uint64_t run_us;
	int64_t fail_count; /* -1: every run exits with exit_code */
	char fail_indexes[256];
	bool on_failure; /* restartPolicy OnFailure: a failed run restarts in place */
};
/* From a Job's JSON: the plan and the template's containers (as ks_template_containers).
 * Returns the container count (>= 0), -EBADMSG, -ENOMEM. Bad annotation values are ignored
 * (their defaults apply). */
int ks_job_plan_parse(const char *job_json, size_t len, struct ks_job_plan *plan,
                      struct ks_container *out, size_t max, char **storage);
/* The exit code of a run: index is the pod's completion index (-1: none); failures is how many
 * runs of the Job failed so far (its Failed pods plus this pod's restarts). */
int32_t ks_job_exit_code(const struct ks_job_plan *plan, int64_t index, int64_t failures);
/* Strategic merge patch finishing a Job's pod: Succeeded (exit code 0) or Failed (else), Ready
 * and ContainersReady False (PodCompleted / PodFailed), the first container terminated with
 * exit_code (reason Completed / Error), the others with 0; restarts is kept as restartCount. */
int ks_finish_status_body(kube_time_t now, kube_time_t started, int32_t exit_code, int32_t restarts,
                          const struct ks_container *c, size_t n_containers, char **ret);
/* restartPolicy OnFailure: the failed run restarts in place: phase Running, Ready True (a new
 * transition time, so the next run is timed from it), restartCount restarts + 1 and lastState
 * terminated with exit_code. */
int ks_restart_status_body(kube_time_t now, kube_time_t started, int32_t exit_code,
                           int32_t restarts, const struct ks_container *c, size_t n_containers,
                           char **ret);

/* The fake Node object (POST /api/v1/nodes). */
int ks_node_body(unsigned i, char **ret);
/* Strategic merge patch of nodes/<name>/status: Ready and the pressure conditions, capacity,
 * allocatable, addresses, nodeInfo, daemonEndpoints. */
int ks_node_status_body(unsigned i, kube_time_t now, char **ret);
/* The node's Lease (POST to kube-node-lease); node_uid may be NULL (no owner reference). */
int ks_lease_body(const char *node, const char *node_uid, kube_time_t now, char **ret);
/* Merge patch renewing it. */
int ks_lease_renew_body(const char *node, kube_time_t now, char **ret);

/* From a NodeList JSON: the number of Nodes not labelled KS_LABEL=true (foreign), the first
 * such name in first_foreign, and which simulated node names exist already (have[i] for
 * i < n_have, may be NULL). Returns the foreign count (>= 0), or -EBADMSG. */
int ks_scan_node_list(const char *json, size_t len, char *first_foreign, size_t ff_len, bool *have,
                      size_t n_have);

/* A Go duration ("1.5s", "300ms", "1m30s", "0") in microseconds. Returns 0 or -EINVAL. */
int ks_parse_duration(const char *s, uint64_t *ret_us);
