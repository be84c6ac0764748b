/* SPDX-License-Identifier: Apache-2.0 */
/* kube/fuzz/fuzz-decode.c - every decoder on arbitrary bytes. The first byte picks the decoder;
 * the rest is the document. Invariants: no crash, no leak, failure leaves the out-param alone,
 * success yields an object whose strings are all readable. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/auth.h"
#include "kube/discovery.h"
#include "kube/errors.h"
#include "kube/model.h"

static int drop(void *obj, void *ud)
{
	(void)ud;
	kube_object_free(obj);
	return 0;
}

static void touch_meta(const struct kube_object_meta *m)
{
	volatile size_t sink = 0;
	if (m->name)
		sink += strlen(m->name);
	for (uint32_t i = 0; i < m->n_labels; i++)
		sink += strlen(m->labels[i].key) + strlen(m->labels[i].value);
	for (uint32_t i = 0; i < m->n_owner_refs; i++)
		sink += m->owner_refs[i].uid ? strlen(m->owner_refs[i].uid) : 0;
	for (uint32_t i = 0; i < m->n_finalizers; i++)
		sink += strlen(m->finalizers[i]);
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t sel = data[0];
	const char *doc = (const char *)data + 1;
	size_t n = size - 1;
	void *o = (void *)0x1;
	int r;
	switch (sel % 12) {
	case 0:
	case 1:
	case 2:
	case 3:
	case 4:
	case 5: {
		enum kube_kind k = (enum kube_kind)(sel % 6 + 1);
		r = kube_decode(k, doc, n, sel & 0x80 ? KUBE_DECODE_ALL_ANNOTATIONS : 0, &o);
		if (r < 0) {
			if (o != (void *)0x1)
				abort();
		} else {
			if (k != KUBE_KIND_STATUS)
				touch_meta((const struct kube_object_meta *)o);
			kube_object_free(o);
		}
		/* the same through a scratch reused across inputs (tests arena reset) */
		static struct kube_scratch *scr;
		void *so;
		if (!scr && kube_scratch_new(&scr) < 0)
			abort();
		if ((kube_decode_scratch(scr, k, doc, n, 0, &so) < 0) != (r < 0))
			abort();
		if (r >= 0 && k != KUBE_KIND_STATUS)
			touch_meta((const struct kube_object_meta *)so);
		break;
	}
	case 6:
		kube_decode_list((enum kube_kind)((sel >> 4) % 6 + 1), doc, n, 0, drop, NULL, NULL);
		break;
	case 7: {
		enum kube_watch_type t;
		if (kube_decode_watch_event(KUBE_KIND_POD, doc, n, 0, &t, &o) == 0)
			kube_object_free(o);
		break;
	}
	case 8: {
		struct kube_error e;
		kube_error_from_response(400 + sel % 200, doc, n, NULL, &e);
		break;
	}
	case 10: {
		struct kube_discovery *d;
		if (kube_decode_discovery_v2(doc, n, &d) == 0) {
			if (d->n && !kube_discovery_find(d, d->res[0].group, d->res[0].resource,
			                                 d->res[0].version))
				abort();
			kube_object_free(d);
		}
		if (kube_decode_api_resource_list(doc, n, true, &d) == 0)
			kube_object_free(d);
		break;
	}
	case 11: {
		struct kube_api_group_list *g;
		if (kube_decode_api_group_list(doc, n, &g) == 0)
			kube_object_free(g);
		break;
	}
	default: {
		kube_time_t t;
		struct kube_exec_credential ec;
		kube_time_parse(doc, n, &t);
		if (kube_parse_exec_credential(
		            doc, n, sel & 0x80 ? NULL : "client.authentication.k8s.io/v1", &ec) ==
		    0)
			kube_exec_credential_clear(&ec);
		break;
	}
	}
	return 0;
}
