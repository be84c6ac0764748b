/* SPDX-License-Identifier: Apache-2.0 */
/* workers/endpointslice/podlist.c: the pods a Service selects, from the cache (podlist.h). */
#include "workers/endpointslice/podlist.h"

#include <errno.h>
#include <stdio.h>

#include "kcmd/cache.h"
#include "shm/record-model.h"
#include "workers/endpointslice/reconcile.h"

struct pod_collect {
	const cJSON *svc;
	cJSON *items;
	int err;
};

static const char *label_of(const void *ud, const char *k)
{
	return kcmd_obj_label(ud, k);
}

static cJSON *add_ports(cJSON *parent, const struct kube_pod_endpoint *ep, bool sidecar)
{
	cJSON *c = cJSON_CreateObject(), *ports;

	if (!c || !cJSON_AddItemToArray(parent, c) || !(ports = cJSON_AddArrayToObject(c, "ports")))
		return NULL;
	for (uint32_t i = 0; i < ep->n_ports; i++) {
		const struct kube_pod_port *pp = &ep->ports[i];
		cJSON *o;
		if (pp->sidecar != sidecar)
			continue;
		if (!(o = cJSON_CreateObject()) || !cJSON_AddItemToArray(ports, o) ||
		    !cJSON_AddStringToObject(o, "name", pp->name) ||
		    !cJSON_AddNumberToObject(o, "containerPort", pp->container_port) ||
		    (pp->protocol && !cJSON_AddStringToObject(o, "protocol", pp->protocol)))
			return NULL;
	}
	return c;
}

cJSON *eps_pod_json(const struct kube_pod *p)
{
	const struct kube_pod_endpoint *ep = &p->ep;
	cJSON *pod = cJSON_CreateObject(), *md, *spec, *st, *arr, *c;
	char tbuf[64];
	bool ok;

	if (!pod)
		return NULL;
	md = cJSON_AddObjectToObject(pod, "metadata");
	spec = cJSON_AddObjectToObject(pod, "spec");
	st = cJSON_AddObjectToObject(pod, "status");
	ok = md && spec && st && cJSON_AddStringToObject(md, "name", p->meta.name) &&
	     cJSON_AddStringToObject(md, "namespace", p->meta.namespace) &&
	     cJSON_AddStringToObject(md, "uid", p->meta.uid);
	if (ok && p->meta.deletion_timestamp) {
		eps_format_time((long long)(p->meta.deletion_timestamp / 1000000000), tbuf,
		                sizeof(tbuf));
		ok = cJSON_AddStringToObject(md, "deletionTimestamp", tbuf) != NULL;
	}
	if (ok && p->node_name)
		ok = cJSON_AddStringToObject(spec, "nodeName", p->node_name) != NULL;
	if (ok && ep->hostname)
		ok = cJSON_AddStringToObject(spec, "hostname", ep->hostname) != NULL;
	if (ok && ep->subdomain)
		ok = cJSON_AddStringToObject(spec, "subdomain", ep->subdomain) != NULL;
	if (ok && ep->n_ports) {
		ok = (arr = cJSON_AddArrayToObject(spec, "containers")) &&
		     add_ports(arr, ep, false) &&
		     (arr = cJSON_AddArrayToObject(spec, "initContainers")) &&
		     (c = add_ports(arr, ep, true)) &&
		     cJSON_AddStringToObject(c, "restartPolicy", "Always");
	}
	if (ok && kube_pod_phase_name(p->phase))
		ok = cJSON_AddStringToObject(st, "phase", kube_pod_phase_name(p->phase)) != NULL;
	if (ok && ep->pod_ip)
		ok = cJSON_AddStringToObject(st, "podIP", ep->pod_ip) != NULL;
	if (ok)
		ok = (arr = cJSON_AddArrayToObject(st, "podIPs")) != NULL;
	for (uint32_t i = 0; ok && i < ep->n_pod_ips; i++)
		ok = (c = cJSON_CreateObject()) && cJSON_AddItemToArray(arr, c) &&
		     cJSON_AddStringToObject(c, "ip", ep->pod_ips[i]);
	/* the Ready condition: its status (eps_pod_ready) and lastTransitionTime (the trigger
	 * time); a pod without one is not ready and has no trigger time, as with none here */
	if (ok && (p->ready || p->ready_transition_time)) {
		ok = (arr = cJSON_AddArrayToObject(st, "conditions")) &&
		     (c = cJSON_CreateObject()) && cJSON_AddItemToArray(arr, c) &&
		     cJSON_AddStringToObject(c, "type", "Ready") &&
		     cJSON_AddStringToObject(c, "status", p->ready ? "True" : "False");
		if (ok && p->ready_transition_time) {
			eps_format_time((long long)(p->ready_transition_time / 1000000000), tbuf,
			                sizeof(tbuf));
			ok = cJSON_AddStringToObject(c, "lastTransitionTime", tbuf) != NULL;
		}
	}
	if (!ok) {
		cJSON_Delete(pod);
		return NULL;
	}
	return pod;
}

/* The pods of the namespace the Service's selector matches (upstream's podLister.Pods(ns).
 * List(selector)); a record this build cannot read is skipped. */
static int collect_pod(const struct shm_obj *o, void *ud)
{
	struct pod_collect *pc = ud;
	struct shm_obj copy;
	struct shm_pod_view v;
	cJSON *j;
	int r;

	if (!eps_selector_matches(pc->svc, label_of, o))
		return 0;
	if ((r = shm_obj_dup(o, &copy)) < 0)
		return pc->err = r;
	if ((r = shm_pod_view_init(&copy, &v)) < 0) {
		shm_pod_view_free(&v);
		return r == -ENOMEM ? (pc->err = r) : 0;
	}
	j = eps_pod_json(&v.pod);
	shm_pod_view_free(&v);
	if (!j || !cJSON_AddItemToArray(pc->items, j)) {
		cJSON_Delete(j);
		return pc->err = -ENOMEM;
	}
	return 0;
}

int eps_cached_selected_pods(struct shm_arena *a, const char *ns, const cJSON *svc, cJSON **ret)
{
	struct pod_collect pc = {.svc = svc};
	int r;

	*ret = NULL;
	if (!(pc.items = cJSON_CreateArray()))
		return -ENOMEM;
	r = kcmd_cache_list(a, "", "pods", ns, collect_pod, &pc);
	if (r == -ENOENT)
		r = 0;
	if (r >= 0 && pc.err < 0)
		r = pc.err;
	if (r < 0) {
		cJSON_Delete(pc.items);
		return r;
	}
	*ret = pc.items;
	return 0;
}
