/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/evcorr.h: client-go's EventCorrelator (tools/record/events_cache.go) for
 * the Events a controller writes, so that `kubectl describe` shows repeats the way upstream's
 * recorder leaves them. State is per process, like upstream's (one correlator per broadcaster).
 *
 * Per event, in upstream's order:
 *  1. aggregator: events that differ only by message (same source, involvedObject, type,
 *     reason, reporting controller/instance) are tracked per group with the set of their
 *     messages; a group idle for more than 600 s starts over. Once 10 distinct messages were
 *     seen, the event is replaced by a new one "(combined from similar events): <message>"
 *     keyed by the group (so the next ones count on it); the set then drops one message.
 *  2. logger: a key seen before (full key incl. message, or the group key for aggregates) gives
 *     the same Event object with count + 1, its first timestamp and name: a strategic merge
 *     PATCH {"count","lastTimestamp","message"}; a new key gives a CREATE with count 1.
 *  3. spam filter: a token bucket per source + involvedObject (burst 25, refill 1 per 300 s);
 *     an event without a token is dropped (after 1 and 2 were recorded, as upstream).
 * Each cache holds at most 4096 keys, least recently used evicted (groupcache lru).
 */
#include <stdbool.h>
#include <stdint.h>

#include "kube/model.h"

#define RS_EVC_CACHE_SIZE     4096
#define RS_EVC_AGG_MAX_EVENTS 10
#define RS_EVC_AGG_INTERVAL_S 600
#define RS_EVC_SPAM_BURST     25
#define RS_EVC_SPAM_QPS       (1.0 / 300.0)
#define RS_EVC_AGG_PREFIX     "(combined from similar events): "

/* The event as the recorder builds it (makeEvent); fieldPath is always empty here. */
struct rs_evc_event {
	const char *component, *host;                     /* source; reporting = the same */
	const char *kind, *ns, *name, *uid, *api_version; /* involvedObject */
	const char *type, *reason, *message;
	kube_time_t t; /* when it was recorded (makeEvent: name, first/last timestamps); 0 = now */
};

enum rs_evc_action {
	RS_EVC_SKIP = 0, /* spam filter: not written */
	RS_EVC_CREATE,   /* POST a new Event */
	RS_EVC_PATCH,    /* PATCH the existing Event (on 404: POST it with these values) */
};

struct rs_evc_result {
	enum rs_evc_action action;
	bool aggregated;  /* the combined event: no reportingComponent/Instance */
	char *event_name; /* metadata.name (malloc'd) */
	char *message;    /* the message to write (malloc'd) */
	int32_t count;
	kube_time_t first, last;
};

struct rs_evc;
int rs_evc_new(struct rs_evc **ret);
void rs_evc_free(struct rs_evc *c);
/* EventCorrelate at time now. 0 or -ENOMEM / -EINVAL. Free *ret with rs_evc_result_free. */
int rs_evc_correlate(struct rs_evc *c, const struct rs_evc_event *ev, kube_time_t now,
                     struct rs_evc_result *ret);
void rs_evc_result_free(struct rs_evc_result *r);
/* UpdateState after the server accepted r (created or patched): keyed by the full key of the
 * written event (its message), as upstream does with the returned object. */
int rs_evc_update_state(struct rs_evc *c, const struct rs_evc_event *ev,
                        const struct rs_evc_result *r);
/* The PATCH body of a counted event: {"count":N,"lastTimestamp":"…","message":"…"}. */
int rs_evc_patch_body(const struct rs_evc_result *r, char **ret);
