/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/rootcacert/rootca.h: the root-ca-certificate-publisher-controller's decisions and
 * bodies, pure (no I/O).
 *
 * Design note.
 *   Upstream's Publisher (pkg/controller/certificates/rootcacertpublisher/publisher.go, v1.37)
 *   keeps a ConfigMap `kube-root-ca.crt` in every namespace whose data is exactly
 *   {"ca.crt": <the root CA>} and which carries the annotation kubernetes.io/description. Its
 *   key is a namespace name; a namespace's add, an update of an Active namespace, and an
 *   update or delete of a ConfigMap of that name queue it. The sync creates the ConfigMap when
 *   the lister has none (NotFound and NamespaceTerminating answers are done), and otherwise
 *   replaces data and sets the annotation with an update when data differs or the annotation
 *   is empty; any other key of data is dropped, a description with another non-empty text is
 *   left alone (TestConfigMapUpdateNoHotLoop).
 *   The root CA is --root-ca-file's content, checked at start to be PEM certificates, or the
 *   kubeconfig's certificate-authority-data when the flag is empty (kcm's
 *   getKubeAPIServerCAFileContents). Both are read once, at start, as kcm does.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcmd/controller.h"
#include "kcmd/metrics.h"

#define RC_CONTROLLER "root-ca-certificate-publisher-controller"
#define RC_QUEUE      "root_ca_cert_publisher"
#define RC_CONFIGMAP  "kube-root-ca.crt"
#define RC_KEY        "ca.crt"
#define RC_ANNOTATION "kubernetes.io/description"
#define RC_DESCRIPTION                                                                             \
	"Contains a CA bundle that can be used to verify the kube-apiserver when using internal "  \
	"endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "  \
	"guaranteed across distributions of Kubernetes clusters."

/* The create body: name, the annotation, data {"ca.crt": ca}. *ret is malloc'd. 0, -ENOMEM. */
int rc_create_body(const char *ca, char **ret);

/* Given the cached ConfigMap's JSON: 0 and *ret = NULL when it is as wanted, or 0 and *ret =
 * the update body (malloc'd: the object with data replaced and the annotation set); -EBADMSG
 * when json is not a JSON object, -ENOMEM. */
int rc_update_body(const char *json, size_t len, const char *ca, char **ret);

/* A create's outcome: 0 done (created; NotFound: no namespace; the namespace is terminating),
 * or the error to retry with. */
int rc_create_result(int err);

/* Whether data holds at least one PEM CERTIFICATE block that parses as an X.509 certificate
 * (certutil.ParseCertsPEM). 0, or -EINVAL with a reason in err. */
int rc_check_pem(const char *data, size_t len, char *err, size_t errlen);

/* The root CA: --root-ca-file's content when file is set (read and checked with rc_check_pem:
 * -errno and kcm's message "error parsing root-ca-file at <file>: ..." in err), else the
 * kubeconfig's certificate-authority-data, else "". *ret is malloc'd, NUL-terminated. Shared
 * with the serviceaccount-token-controller, which puts the same CA into token Secrets. */
struct kube_config;
int rc_load_root_ca(const char *file, const struct kube_config *kcfg, char **ret, char *err,
                    size_t errlen);

/* A namespace update queues its key only while the namespace is Active (namespaceUpdated). */
bool rc_namespace_update_wanted(const char *phase);

/* The controller's metrics (kcmd/controller.h `metrics`, updated with kcmd/metrics.h by its
 * worker): upstream's root_ca_cert_publisher_sync_duration_seconds (histogram, buckets
 * 0.001 s x 2^i, i < 15) and root_ca_cert_publisher_sync_total (counter), both by `code`.
 * A code is not a fixed set: RC_METRIC_SERIES codes per family, further ones counted in
 * kcmd_metric_series_dropped_total (the sync itself goes on). */
enum {
	RC_M_DURATION = 0,
	RC_M_SYNCS,
	RC_M_N,
};
#define RC_METRIC_SERIES 64u
extern const struct kcmd_metric rc_metric_decl[RC_M_N];
/* upstream's code label for a sync's result: 0 -> 200, an apiserver error -> its HTTP code,
 * anything else -> 500 */
int rc_metrics_code(int err, int http_code);
/* recordMetrics: one sync of that code and duration into both families (no-op on NULL m).
 * Also the ClusterTrustBundle publisher's, whose families have the same layout. */
void rc_metrics_observe(struct kcmd_metrics *m, int code, uint64_t duration_ns);
