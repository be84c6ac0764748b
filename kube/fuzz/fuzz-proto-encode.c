/* SPDX-License-Identifier: Apache-2.0 */
/* kube/fuzz/fuzz-proto-encode.c - the JSON -> protobuf transcoder (kube/proto-encode.c). Its
 * input is a pod template read from the cache (whatever the apiserver stored), so it gets
 * arbitrary JSON here. The first byte picks the entry point:
 *   odd:  kube_proto_rs_with_status(the captured ReplicaSet, rest as the status)
 *   even: kube_proto_encode_json(KINDS[(byte >> 1) % N], rest); 0 is the Pod
 * Invariants: no crash, no leak, only the documented errnos, and every body produced is
 * well-formed protobuf that the decoder reads back as the kind it claims to be (Pods and
 * ReplicaSets as such, the other kinds as their metadata; a decode may still refuse a value
 * with -EPROTO, e.g. a time the model cannot hold, never -EBADMSG). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/model.h"
#include "kube/proto.h"

/* kube/tests/fixtures/proto/replicaset.pb's shape, reduced: envelope + RS{meta{name, rv},
 * spec{replicas 1}, status{replicas 1}} */
static const uint8_t RS[] = {'k', '8', 's',  0,    0x0a, 0x15, 0x0a, 0x07, 'a',  'p', 'p',  's',
                             '/', 'v', '1',  0x12, 0x0a, 'R',  'e',  'p',  'l',  'i', 'c',  'a',
                             'S', 'e', 't',  0x12, 0x11, 0x0a, 0x07, 0x0a, 0x01, 'x', 0x32, 0x02,
                             '4', '2', 0x12, 0x02, 0x08, 0x01, 0x1a, 0x02, 0x08, 0x01};

static const struct {
	const char *api_version, *kind;
} KINDS[] = {
        {"v1", "Pod"},
        {"coordination.k8s.io/v1", "Lease"},
        {"v1", "Event"},
        {"v1", "Endpoints"},
        {"discovery.k8s.io/v1", "EndpointSlice"},
        {"apps/v1", "ReplicaSet"},
        {"batch/v1", "Job"},
        /* appended, so that the corpus's first bytes keep their kinds */
        {"v1", "Node"},
        {"v1", "Namespace"},
        {"v1", "ServiceAccount"},
        {"v1", "Secret"},
        {"v1", "ConfigMap"},
        {"v1", "PersistentVolume"},
        {"v1", "PersistentVolumeClaim"},
        {"v1", "ResourceQuota"},
        {"v1", "ReplicationController"},
        {"apps/v1", "Deployment"},
        {"apps/v1", "StatefulSet"},
        {"apps/v1", "DaemonSet"},
        {"apps/v1", "ControllerRevision"},
        {"batch/v1", "CronJob"},
        {"policy/v1", "PodDisruptionBudget"},
        {"autoscaling/v2", "HorizontalPodAutoscaler"},
        {"certificates.k8s.io/v1", "CertificateSigningRequest"},
        {"certificates.k8s.io/v1", "ClusterTrustBundle"},
        {"authorization.k8s.io/v1", "SubjectAccessReview"},
        {"authentication.k8s.io/v1", "TokenReview"},
        {"storage.k8s.io/v1", "VolumeAttachment"},
        {"storage.k8s.io/v1", "VolumeAttributesClass"},
        {"resource.k8s.io/v1", "ResourceClaim"},
        {"resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest"},
        {"scheduling.k8s.io/v1beta1", "PodGroup"},
        {"internal.apiserver.k8s.io/v1alpha1", "StorageVersion"},
        {"storagemigration.k8s.io/v1", "StorageVersionMigration"},
};

static void check_err(int r)
{
	if (r < 0 && r != -EBADMSG && r != -EPROTO && r != -E2BIG && r != -ENOMEM &&
	    r != -EOPNOTSUPP)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *json = (const char *)data + 1;
	size_t n = size - 1;
	void *body = NULL, *obj = NULL;
	size_t len = 0;
	enum kube_kind kind = KUBE_KIND_POD;
	int r;
	if (data[0] & 1) {
		r = kube_proto_rs_with_status(RS, sizeof(RS), json, n, &body, &len);
		kind = KUBE_KIND_REPLICASET;
	} else {
		size_t k = (size_t)(data[0] >> 1) % (sizeof(KINDS) / sizeof(KINDS[0]));
		r = kube_proto_encode_json(KINDS[k].api_version, KINDS[k].kind, json, n, &body,
		                           &len);
		kind = k == 0 ? KUBE_KIND_POD : k == 5 ? KUBE_KIND_REPLICASET : KUBE_KIND_PARTIAL;
	}
	check_err(r);
	if (r < 0)
		return 0;
	r = kube_proto_decode(kind, body, len, KUBE_DECODE_ALL_ANNOTATIONS, &obj);
	if (r < 0 && r != -EPROTO && r != -ENOMEM)
		abort();
	kube_object_free(obj);
	free(body);
	return 0;
}
