/* SPDX-License-Identifier: Apache-2.0 */
/* shm/fuzz/fuzz-records.c - the record decoder (shm/record-model.h) over arbitrary payload
 * bytes: the first byte picks the view (meta, pod, replicaset, full object), the rest is the
 * payload.
 * Invariant: every view either fails with an errno or succeeds, never reading outside the
 * payload (ASan), and a successful view's strings are NUL-terminated inside the record. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/record-model.h"
#include "shm/records.h"

static void touch(const char *s)
{
	if (s && strlen(s) > SIZE_MAX / 2)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct shm_obj tmp = {.kind = (enum shm_record_kind)(data[0] % 4),
	                      .name = "n",
	                      .ns = "",
	                      .uid = "u",
	                      .rv = "1",
	                      .payload = size > 1 ? data + 1 : NULL,
	                      .payload_len = size - 1};
	struct shm_obj o;
	if (shm_obj_clone(&tmp, &o) < 0)
		return 0;
	switch (tmp.kind) {
	case SHM_RECORD_POD: {
		struct shm_pod_view v;
		if (shm_pod_view_init(&o, &v) == 0) {
			touch(v.pod.node_name);
			touch(v.pod.affinity_node);
			for (uint32_t i = 0; i < v.pod.meta.n_finalizers; i++)
				touch(v.pod.meta.finalizers[i]);
			touch(v.pod.ep.hostname);
			touch(v.pod.ep.subdomain);
			touch(v.pod.ep.pod_ip);
			for (uint32_t i = 0; i < v.pod.ep.n_pod_ips; i++)
				touch(v.pod.ep.pod_ips[i]);
			for (uint32_t i = 0; i < v.pod.ep.n_ports; i++) {
				touch(v.pod.ep.ports[i].name);
				touch(v.pod.ep.ports[i].protocol);
			}
		}
		shm_pod_view_free(&v);
		break;
	}
	case SHM_RECORD_REPLICASET: {
		struct shm_rs_view v;
		if (shm_rs_view_init(&o, &v) == 0) {
			for (uint32_t i = 0; i < v.rs.status.n_conditions; i++) {
				touch(v.rs.status.conditions[i].type);
				touch(v.rs.status.conditions[i].message);
			}
			for (uint32_t i = 0; i < v.rs.n_template_labels; i++)
				touch(v.rs.template_labels[i].key);
		}
		shm_rs_view_free(&v);
		break;
	}
	case SHM_RECORD_OBJECT: {
		struct shm_object_view v;
		if (shm_object_view_init(&o, &v) == 0) {
			touch(v.o.api_version);
			touch(v.o.raw);
			for (uint32_t i = 0; i < v.o.meta.n_annotations; i++)
				touch(v.o.meta.annotations[i].value);
		}
		shm_object_view_free(&v);
		break;
	}
	default: {
		struct shm_meta_view v;
		if (shm_meta_view_init(&o, &v) == 0)
			for (uint32_t i = 0; i < v.p.meta.n_finalizers; i++)
				touch(v.p.meta.finalizers[i]);
		shm_meta_view_free(&v);
		break;
	}
	}
	return 0;
}
