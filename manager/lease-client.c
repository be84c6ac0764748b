/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/lease-client.c: the elector's I/O over coordination.k8s.io/v1 Leases (see
 * lease-client.h).
 */
#include "manager/lease-client.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/encode.h"
#include "kube/model.h"

struct mgr_lease_client {
	struct ipc_loop *loop;
	struct kube_client *kc;
	struct mgr_le *le;
	struct ipc_source *timer;
	char *ns, *name, *identity;
	mgr_lease_change_fn on_change;
	void (*on_deadline)(uint64_t deadline_us, void *userdata);
	void (*on_event)(const char *what, void *userdata);
	void *userdata;
	bool record_events;
	long timeout_ms;

	struct kube_call *call;
	enum mgr_le_op call_op;
	char *last_body; /* the Lease as last read or written (JSON) */
	char *body;      /* body of the request in flight */
	bool leading;
	bool freeing;

	void (*release_done)(void *ud);
	void *release_ud;
	bool release_reported;
};

static void drive(struct mgr_lease_client *lc, const struct mgr_le_result *res);

static void event_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	(void)call;
	(void)r;
	free(ud); /* the body; events are best effort, as client-go's recorder */
}

void mgr_lease_client_record_event(struct mgr_lease_client *lc, const char *what)
{
	char msg[512], host[256] = "";
	char *body = NULL;
	struct kube_event ev = {0};
	struct kube_request req = {0};

	if (!lc->record_events)
		return;
	gethostname(host, sizeof(host) - 1);
	snprintf(msg, sizeof(msg), "%s %s", lc->identity, what);
	ev.ns = lc->ns;
	ev.kind = "Lease";
	ev.api_version = "coordination.k8s.io/v1";
	ev.name = lc->name;
	ev.type = "Normal";
	ev.reason = "LeaderElection";
	ev.message = msg;
	ev.component = "kcmd";
	ev.host = host;
	ev.now = kube_time_now();
	if (kube_encode_event(&ev, &body) < 0)
		return;
	req.verb = KUBE_CREATE;
	req.version = "v1";
	req.resource = "events";
	req.body_kind = "Event";
	req.ns = lc->ns;
	req.body = body;
	req.body_len = strlen(body);
	req.timeout_ms = lc->timeout_ms;
	if (kube_call_start(lc->kc, &req, event_done, NULL, body, NULL) < 0)
		free(body);
}

/* The Lease JSON to PUT: the last read object with `spec` replaced by the elector's record. */
static int update_body(struct mgr_lease_client *lc, const struct kube_lease_spec *spec, char **ret)
{
	cJSON *obj, *fresh, *fspec;
	char *enc = NULL, *rv = NULL;
	int r;

	if (!lc->last_body)
		return -EINVAL;
	obj = cJSON_Parse(lc->last_body);
	if (!obj)
		return -EBADMSG;
	cJSON *rvj = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "resourceVersion");
	rv = cJSON_IsString(rvj) ? rvj->valuestring : "";
	r = kube_encode_lease(lc->ns, lc->name, rv, spec, &enc);
	if (r < 0) {
		cJSON_Delete(obj);
		return r;
	}
	fresh = cJSON_Parse(enc);
	free(enc);
	fspec = fresh ? cJSON_DetachItemFromObjectCaseSensitive(fresh, "spec") : NULL;
	cJSON_Delete(fresh);
	if (!fspec) {
		cJSON_Delete(obj);
		return -ENOMEM;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(obj, "spec");
	cJSON_AddItemToObject(obj, "spec", fspec);
	*ret = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	return *ret ? 0 : -ENOMEM;
}

static void call_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct mgr_lease_client *lc = ud;
	struct mgr_le_result res = {.op = lc->call_op, .err = r->err};
	struct kube_lease *l = NULL;

	(void)call;
	lc->call = NULL;
	free(lc->body);
	lc->body = NULL;
	if (lc->freeing) /* cancelled by mgr_lease_client_free */
		return;
	if (r->err == 0) {
		int e = kube_decode_lease(r->body, r->body_len, 0, &l);
		if (e < 0) {
			res.err = e;
		} else {
			snprintf(res.record.holder, sizeof(res.record.holder), "%s",
			         l->holder_identity ? l->holder_identity : "");
			res.record.lease_duration_s = l->lease_duration_seconds;
			res.record.acquire_time = l->acquire_time;
			res.record.renew_time = l->renew_time;
			res.record.transitions = l->lease_transitions;
			kube_object_free(l);
			char *copy = malloc(r->body_len + 1);
			if (copy) {
				memcpy(copy, r->body, r->body_len);
				copy[r->body_len] = 0;
				free(lc->last_body);
				lc->last_body = copy;
			}
		}
	}
	drive(lc, &res);
}

static int send_req(struct mgr_lease_client *lc, const struct mgr_le_request *q)
{
	struct kube_request req = {0};
	struct kube_lease_spec spec = {0};
	int r;

	req.group = "coordination.k8s.io";
	req.version = "v1";
	req.resource = "leases";
	req.body_kind = "Lease"; /* protobuf on a protobuf client (GETs stay JSON) */
	req.ns = lc->ns;
	req.timeout_ms = lc->timeout_ms;
	spec.holder_identity = q->record.holder;
	spec.lease_duration_seconds = q->record.lease_duration_s;
	spec.acquire_time = q->record.acquire_time;
	spec.renew_time = q->record.renew_time;
	spec.lease_transitions = q->record.transitions;
	switch (q->op) {
	case MGR_LE_OP_GET:
		req.verb = KUBE_GET;
		req.name = lc->name;
		break;
	case MGR_LE_OP_CREATE:
		req.verb = KUBE_CREATE;
		r = kube_encode_lease(lc->ns, lc->name, NULL, &spec, &lc->body);
		if (r < 0)
			return r;
		break;
	case MGR_LE_OP_UPDATE:
		req.verb = KUBE_UPDATE;
		req.name = lc->name;
		r = update_body(lc, &spec, &lc->body);
		if (r < 0)
			return r;
		break;
	default:
		return -EINVAL;
	}
	if (lc->body) {
		req.body = lc->body;
		req.body_len = strlen(lc->body);
	}
	lc->call_op = q->op;
	r = kube_call_start(lc->kc, &req, call_done, NULL, lc, &lc->call);
	if (r < 0) {
		free(lc->body);
		lc->body = NULL;
		lc->call = NULL;
	}
	return r;
}

static void leader_event(struct mgr_lease_client *lc, const char *what)
{
	if (lc->on_event)
		lc->on_event(what, lc->userdata);
	else
		mgr_lease_client_record_event(lc, what);
}

static void drive(struct mgr_lease_client *lc, const struct mgr_le_result *res)
{
	struct mgr_le_request q;
	uint64_t now = ipc_now_usec();
	int n = mgr_le_step(lc->le, now, kube_time_now(), res, &q);

	while (n == 1) {
		int r = send_req(lc, &q);
		if (r >= 0)
			break;
		/* Could not even send: report it as a failed request of that kind. */
		struct mgr_le_result fail = {.op = q.op, .err = r};
		n = mgr_le_step(lc->le, now, kube_time_now(), &fail, &q);
	}
	bool leading = mgr_le_is_leader(lc->le, now);
	/* the deadline first: a worker checks it before every write, whatever this loop does next
	 */
	if (lc->on_deadline)
		lc->on_deadline(leading ? mgr_le_fence_deadline(lc->le) : 0, lc->userdata);
	if (leading != lc->leading) {
		lc->leading = leading;
		/* "stopped leading" is asked for after on_change killed the workers; with on_event
		 * the manager records it once they are reaped (manager/termend.h) */
		if (leading)
			leader_event(lc, "became leader");
		if (lc->on_change)
			lc->on_change(leading, lc->userdata);
		if (!leading)
			leader_event(lc, "stopped leading");
	}
	if (lc->release_done && !lc->release_reported && mgr_le_released(lc->le)) {
		lc->release_reported = true;
		lc->release_done(lc->release_ud);
	}
	uint64_t wake = mgr_le_next_wakeup(lc->le);
	ipc_source_set_time(lc->timer, wake == UINT64_MAX ? 0 : (wake > now ? wake : now + 1));
}

static int on_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	(void)s;
	(void)now;
	drive(ud, NULL);
	return 0;
}

int mgr_lease_client_new(struct ipc_loop *loop, struct kube_client *kc,
                         const struct mgr_lease_client_opts *o, struct mgr_lease_client **ret,
                         char *err, size_t errlen)
{
	struct mgr_le_config cfg = {
	        .identity = o->identity,
	        .lease_duration_us = o->lease_duration_us,
	        .renew_deadline_us = o->renew_deadline_us,
	        .retry_period_us = o->retry_period_us,
	        .attempt_at_expiry = o->attempt_at_expiry,
	};
	struct mgr_lease_client *lc;
	int r = mgr_le_config_validate(&cfg, err, errlen);

	if (r < 0)
		return r;
	lc = calloc(1, sizeof(*lc));
	if (!lc)
		return -ENOMEM;
	lc->loop = loop;
	lc->kc = kc;
	lc->ns = strdup(o->ns);
	lc->name = strdup(o->name);
	lc->identity = strdup(o->identity);
	lc->on_change = o->on_change;
	lc->on_deadline = o->on_deadline;
	lc->on_event = o->on_event;
	lc->userdata = o->userdata;
	lc->record_events = o->record_events;
	lc->timeout_ms = (long)(o->renew_deadline_us / 2000);
	if (lc->timeout_ms < 1000)
		lc->timeout_ms = 1000;
	if (!lc->ns || !lc->name || !lc->identity || (r = mgr_le_new(&cfg, &lc->le)) < 0 ||
	    (r = ipc_loop_add_timer(loop, &lc->timer, ipc_now_usec(), on_timer, lc)) < 0) {
		mgr_lease_client_free(lc);
		return r < 0 ? r : -ENOMEM;
	}
	*ret = lc;
	return 0;
}

struct mgr_lease_client *mgr_lease_client_free(struct mgr_lease_client *lc)
{
	if (!lc)
		return NULL;
	lc->freeing = true;
	if (lc->call)
		kube_call_cancel(lc->call);
	ipc_source_free(lc->timer);
	mgr_le_free(lc->le);
	free(lc->ns);
	free(lc->name);
	free(lc->identity);
	free(lc->last_body);
	free(lc->body);
	free(lc);
	return NULL;
}

bool mgr_lease_client_leading(const struct mgr_lease_client *lc)
{
	return lc->leading && mgr_le_is_leader(lc->le, ipc_now_usec());
}

void mgr_lease_client_release(struct mgr_lease_client *lc, void (*done)(void *ud), void *ud)
{
	lc->release_done = done;
	lc->release_ud = ud;
	lc->release_reported = false;
	mgr_le_begin_release(lc->le);
	drive(lc, NULL);
}

bool mgr_lease_client_prime(struct mgr_lease_client *lc, const struct mgr_le_record *r,
                            uint64_t observed_mono)
{
	return mgr_le_prime(lc->le, r, observed_mono);
}

const struct mgr_le *mgr_lease_client_elector(const struct mgr_lease_client *lc)
{
	return lc->le;
}

uint64_t mgr_lease_client_rv(const struct mgr_lease_client *lc)
{
	cJSON *obj = lc && lc->last_body ? cJSON_Parse(lc->last_body) : NULL;
	cJSON *rvj = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "resourceVersion");
	uint64_t rv = 0;

	if (cJSON_IsString(rvj) && rvj->valuestring[0]) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(rvj->valuestring, &end, 10);
		if (!errno && !*end && rvj->valuestring[0] != '-')
			rv = v;
	}
	cJSON_Delete(obj);
	return rv;
}
