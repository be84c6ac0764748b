/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kube/evcorr.h: client-go's EventCorrelator (tools/record/events_cache.go) for
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

#define KUBE_EVC_CACHE_SIZE     4096
#define KUBE_EVC_AGG_MAX_EVENTS 10
#define KUBE_EVC_AGG_INTERVAL_S 600
#define KUBE_EVC_SPAM_BURST     25
#define KUBE_EVC_SPAM_QPS       (1.0 / 300.0)
#define KUBE_EVC_AGG_PREFIX     "(combined from similar events): "

/* The event as the recorder builds it (makeEvent); fieldPath is always empty here. */
struct kube_evc_event {
	const char *component, *host;                     /* source; reporting = the same */
	const char *kind, *ns, *name, *uid, *api_version; /* involvedObject */
	const char *type, *reason, *message;
	kube_time_t t; /* when it was recorded (makeEvent: name, first/last timestamps); 0 = now */
};

enum kube_evc_action {
	KUBE_EVC_SKIP = 0, /* spam filter: not written */
	KUBE_EVC_CREATE,   /* POST a new Event */
	KUBE_EVC_PATCH,    /* PATCH the existing Event (on 404: POST it with these values) */
};

struct kube_evc_result {
	enum kube_evc_action action;
	bool aggregated;  /* the combined event: no reportingComponent/Instance */
	char *event_name; /* metadata.name (malloc'd) */
	char *message;    /* the message to write (malloc'd) */
	int32_t count;
	kube_time_t first, last;
};

struct kube_evc;
int kube_evc_new(struct kube_evc **ret);
void kube_evc_free(struct kube_evc *c);
/* EventCorrelate at time now. 0 or -ENOMEM / -EINVAL. Free *ret with kube_evc_result_free. */
int kube_evc_correlate(struct kube_evc *c, const struct kube_evc_event *ev, kube_time_t now,
                       struct kube_evc_result *ret);
void kube_evc_result_free(struct kube_evc_result *r);
/* UpdateState after the server accepted r (created or patched): keyed by the full key of the
 * written event (its message), as upstream does with the returned object. */
int kube_evc_update_state(struct kube_evc *c, const struct kube_evc_event *ev,
                          const struct kube_evc_result *r);
/* The PATCH body of a counted event: {"count":N,"lastTimestamp":"…","message":"…"}. */
int kube_evc_patch_body(const struct kube_evc_result *r, char **ret);
