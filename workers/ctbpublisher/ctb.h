/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/ctbpublisher/ctb.h: the kube-apiserver-serving-clustertrustbundle-publisher-
 * controller's decisions and bodies, pure (no I/O).
 *
 * Design note.
 *   Upstream (pkg/controller/certificates/clustertrustbundlepublisher/publisher.go, v1.37.2;
 *   kcm starts it with the ClusterTrustBundle gate, GA and on in v1.37, when the root CA is not
 *   empty and certificates.k8s.io serves clustertrustbundles) keeps exactly one
 *   ClusterTrustBundle of signer kubernetes.io/kube-apiserver-serving: named
 *   "kubernetes.io:kube-apiserver-serving:" + the hex of the first 12 bytes of SHA-256(root CA),
 *   spec.trustBundle the root CA (--root-ca-file or the kubeconfig's CA, read once). One key;
 *   every add, update and delete of a bundle of that signer queues it, as does the start. The
 *   sync creates the bundle when the cache has none of that name, updates it when its
 *   trustBundle differs, then deletes every other bundle of the signer (NotFound is fine;
 *   another error fails the sync after trying them all). Metrics
 *   clustertrustbundle_publisher_sync_total and _sync_duration_seconds by code (200, the
 *   apiserver's code, or 500), as the root CA publisher's.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcmd/controller.h"
#include "kcmd/metrics.h"

#define CTB_CONTROLLER "kube-apiserver-serving-clustertrustbundle-publisher-controller"
#define CTB_QUEUE      "ca_cert_publisher_cluster_trust_bundles"
#define CTB_KEY        "kubernetes.io/kube-apiserver-serving"
#define CTB_SIGNER     "kubernetes.io/kube-apiserver-serving"

/* constructBundleName: signer with '/' as ':', ':', then 24 hex digits. out needs 128 bytes. */
void ctb_bundle_name(const char *signer, const char *ca, size_t ca_len, char out[static 128]);

/* The create body of the bundle. *ret malloc'd. 0, -ENOMEM. */
int ctb_create_body(const char *name, const char *signer, const char *ca, char **ret);

/* A cached bundle's facts: its name, signer and whether its trustBundle is ca. 0, -EBADMSG. */
struct ctb_facts {
	char name[256];
	char signer[256];
	bool same_bundle;
};
int ctb_facts(const char *json, size_t len, const char *ca, struct ctb_facts *f);

/* The update body: the cached object with spec.trustBundle = ca. 0, -EBADMSG, -ENOMEM. */
int ctb_update_body(const char *json, size_t len, const char *ca, char **ret);

enum {
	CTB_M_DURATION = 0,
	CTB_M_SYNCS,
	CTB_M_N,
};
#define CTB_METRIC_SERIES 64u
extern const struct kcmd_metric ctb_metric_decl[CTB_M_N];
/* The families are laid out as the root CA publisher's (duration histogram first, counter
 * second, both by code), so its rc_metrics_observe records a sync here too. */
