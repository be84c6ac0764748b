/* SPDX-License-Identifier: Apache-2.0 */
/* kube/bench/bench-proto-encode.c - request body size, JSON vs protobuf, per kind kcmd sends as
 * protobuf (kube_proto_encode_json), over the fixtures kube/tests/fixtures/proto/encode-*.json
 * (one per kind kcmd writes) and pod-rich.json. With a count argument it transcodes each body that
 * many times, for an instruction count under valgrind --tool=callgrind (load-independent;
 * docs/kube.md): valgrind --tool=callgrind build/t/kube/bench/bench-proto-encode
 * kube/tests/fixtures/proto 1000 callgrind_annotate --inclusive=yes callgrind.out.<pid> | grep
 * kube_proto_encode_json A third argument (a kind: Lease, Event, ...) limits the run to that kind.
 * It measures no time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/proto.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap);
	size_t k;
	while (p && (k = fread(p + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			char *q = realloc(p, cap *= 2);
			if (!q) {
				free(p);
				fclose(f);
				return NULL;
			}
			p = q;
		}
	}
	fclose(f);
	while (p && n && (p[n - 1] == '\n' || p[n - 1] == ' '))
		n--;
	*len = n;
	return p;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *file, *api_version, *kind;
	} kinds[] = {
	        {"pod-rich", "v1", "Pod"},
	        {"encode-lease", "coordination.k8s.io/v1", "Lease"},
	        {"encode-event", "v1", "Event"},
	        {"encode-endpoints", "v1", "Endpoints"},
	        {"encode-endpointslice", "discovery.k8s.io/v1", "EndpointSlice"},
	        {"encode-replicaset", "apps/v1", "ReplicaSet"},
	        {"encode-job", "batch/v1", "Job"},
	        {"encode-node", "v1", "Node"},
	        {"encode-namespace", "v1", "Namespace"},
	        {"encode-serviceaccount", "v1", "ServiceAccount"},
	        {"encode-secret", "v1", "Secret"},
	        {"encode-configmap", "v1", "ConfigMap"},
	        {"encode-persistentvolume", "v1", "PersistentVolume"},
	        {"encode-persistentvolumeclaim", "v1", "PersistentVolumeClaim"},
	        {"encode-resourcequota", "v1", "ResourceQuota"},
	        {"encode-replicationcontroller", "v1", "ReplicationController"},
	        {"encode-deployment", "apps/v1", "Deployment"},
	        {"encode-statefulset", "apps/v1", "StatefulSet"},
	        {"encode-daemonset", "apps/v1", "DaemonSet"},
	        {"encode-controllerrevision", "apps/v1", "ControllerRevision"},
	        {"encode-cronjob", "batch/v1", "CronJob"},
	        {"encode-poddisruptionbudget", "policy/v1", "PodDisruptionBudget"},
	        {"encode-horizontalpodautoscaler", "autoscaling/v2", "HorizontalPodAutoscaler"},
	        {"encode-certificatesigningrequest", "certificates.k8s.io/v1",
	         "CertificateSigningRequest"},
	        {"encode-clustertrustbundle", "certificates.k8s.io/v1", "ClusterTrustBundle"},
	        {"encode-subjectaccessreview", "authorization.k8s.io/v1", "SubjectAccessReview"},
	        {"encode-tokenreview", "authentication.k8s.io/v1", "TokenReview"},
	        {"encode-volumeattachment", "storage.k8s.io/v1", "VolumeAttachment"},
	        {"encode-volumeattributesclass", "storage.k8s.io/v1", "VolumeAttributesClass"},
	        {"encode-resourceclaim", "resource.k8s.io/v1", "ResourceClaim"},
	        {"encode-resourcepoolstatusrequest", "resource.k8s.io/v1alpha3",
	         "ResourcePoolStatusRequest"},
	        {"encode-podgroup", "scheduling.k8s.io/v1beta1", "PodGroup"},
	        {"encode-storageversion", "internal.apiserver.k8s.io/v1alpha1", "StorageVersion"},
	        {"encode-storageversionmigration", "storagemigration.k8s.io/v1",
	         "StorageVersionMigration"},
	};
	const char *dir = argc > 1 ? argv[1] : "kube/tests/fixtures/proto";
	long reps = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	const char *only = argc > 3 ? argv[3] : NULL;
	int rc = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (only && strcmp(only, kinds[i].kind) != 0)
			continue;
		char path[512];
		size_t jl;
		snprintf(path, sizeof(path), "%s/%s.json", dir, kinds[i].file);
		char *json = slurp(path, &jl);
		if (!json) {
			fprintf(stderr, "cannot read %s\n", path);
			return 1;
		}
		void *body;
		size_t pl;
		int r = kube_proto_encode_json(kinds[i].api_version, kinds[i].kind, json, jl, &body,
		                               &pl);
		if (r < 0) {
			fprintf(stderr, "%s: %d\n", path, r);
			rc = 1;
			free(json);
			continue;
		}
		free(body);
		for (long k = 0; k < reps; k++) {
			if (kube_proto_encode_json(kinds[i].api_version, kinds[i].kind, json, jl,
			                           &body, &pl) < 0)
				return 1;
			free(body);
		}
		printf("bench: proto_body_%s_json_bytes %zu bytes\n", kinds[i].kind, jl);
		printf("bench: proto_body_%s_pb_bytes %zu bytes\n", kinds[i].kind, pl);
		free(json);
	}
	return rc;
}
