/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/endpointslicemirroring/mirror.h: the endpointslice-mirroring-controller's reconciler,
 * pure (no I/O).
 *
 * Design note.
 *   Upstream (pkg/controller/endpointslicemirroring, v1.37) mirrors the v1 Endpoints of a
 *   Service without a selector into EndpointSlices: the subsets are first repacked (upstream's
 *   RepackSubsets: every port mapped to the addresses offering it, an address both ready and
 *   not ready for a port counted not ready, ports with the same address set joined into one
 *   subset, a subset without ports kept under a sentinel port); then per repacked subset and
 *   per address type (IPv4, IPv6: each address parsed "sloppily", leading zeros allowed, and
 *   written back in its canonical form) the desired endpoints (ready addresses first, at most
 *   max_per_subset per subset; identity = sorted addresses, hostname, targetRef namespace and
 *   name) are compared with the existing mirrored slices of the same address type and port
 *   set: the first is kept when its endpoints, its labels (less managed-by and service-name)
 *   and its annotations (against the Endpoints' less last-change-trigger-time and
 *   last-applied-configuration) match and it is not owned by an Endpoints of that name with
 *   another uid; otherwise it is rewritten whole (PUT); the others are deleted; creates are
 *   turned into updates of slices of the same address type that would be deleted. Creates are
 *   skipped while the Endpoints is being deleted.
 *   Here over cJSON objects as the apiserver serves them, tested without a cluster
 *   (tests/test-mirror.c: the cases of upstream's reconciler_test.go, reconciler_helpers_test.go
 *   and utils_test.go).
 *   Deviations (no observable meaning): the endpoints of a slice and its ports are written in a
 *   sorted order (upstream: map order and hash order); slices of one port set are taken in name
 *   order (upstream: lister order).
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define ESM_CONTROLLER  "endpointslice-mirroring-controller"
#define ESM_MANAGED_BY  "endpointslicemirroring-controller.k8s.io"
#define ESM_QUEUE       "endpoint_slice_mirroring"            /* upstream's workqueue name */
#define ESM_COMPONENT   "endpoint-slice-mirroring-controller" /* its Events' source */
#define ESM_LABEL_SVC   "kubernetes.io/service-name"
#define ESM_LABEL_MGD   "endpointslice.kubernetes.io/managed-by"
#define ESM_LABEL_SKIP  "endpointslice.kubernetes.io/skip-mirror"
#define ESM_ANN_TRIGGER "endpoints.kubernetes.io/last-change-trigger-time"
#define ESM_ANN_APPLIED "kubectl.kubernetes.io/last-applied-configuration"
#define ESM_ANN_LEADER  "control-plane.alpha.kubernetes.io/leader"

enum esm_op { ESM_CREATE = 1, ESM_UPDATE, ESM_DELETE, ESM_KEEP };

struct esm_action {
	enum esm_op op;
	/* CREATE: the body (generateName); UPDATE: the whole slice to PUT; DELETE: a copy of the
	 * slice to delete; KEEP: a copy of an unchanged slice (for the tracker) */
	cJSON *obj;
};

struct esm_plan {
	struct esm_action *v; /* creates, updates, deletes (finalize's order), then keeps */
	size_t n, cap;
	int invalid; /* addresses that are not IPs (InvalidIPAddress Event) */
	int skipped; /* addresses left out: invalid or beyond max_per_subset */
	int desired; /* endpoints desired in all */
	/* upstream's totalsByAction (the per-sync histograms) */
	int added, updated, removed;
	/* upstream's EndpointPortCache of this Endpoints, summed over its desired (address type,
	 * ports) keys: endpoints, the slices each key will have (existing + created - deleted),
	 * ceil(endpoints / max_per_subset) */
	int cache_endpoints, cache_slices, cache_desired_slices;
};

/* endpoints: the Endpoints object; slices: its mirrored slices (managed by this controller,
 * labelled with its name); max_per_subset >= 1. Returns 0 with *ret filled (free with
 * esm_plan_free, also after a failure), -ENOMEM. */
int esm_reconcile(const cJSON *endpoints, const cJSON *const *slices, size_t n_slices,
                  int max_per_subset, struct esm_plan *ret);
void esm_plan_free(struct esm_plan *p);

/* shouldMirror's label and annotation tests: skip-mirror == "true", the leader-election
 * annotation present. */
bool esm_should_mirror(const char *skip_label, bool has_leader_annotation);

/* netutils.ParseIPSloppy + IP.String(): 0 with the canonical text in buf and *v6 (an IPv4 in
 * IPv6 form is IPv4), -EINVAL when ip is not an IP. */
int esm_canon_ip(const char *ip, char *buf, size_t len, bool *v6);

/* getEndpointSlicePrefix: name + "-", or name when that would be too long a name. */
void esm_slice_prefix(const char *name, char *buf, size_t len);

/* Whether the Service has a selector (Go: spec.selector != nil; an empty map decodes as nil). */
bool esm_service_has_selector(const cJSON *svc);
