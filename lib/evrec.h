/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/evrec.h: the Event recorder of a kcmd process, client-go's record.EventBroadcaster with
 * its StartRecordingToSink (tools/record/event.go), in two parts:
 *
 *  - the sink (struct evrec_sink): recordToSink for one event. The one EventCorrelator
 *    (kube/evcorr.h: aggregation, counting, spam filter) decides; a new Event is POSTed, a
 *    counted repeat PATCHed (count, lastTimestamp, message; POSTed with its count when the
 *    server lost it, 404); a write that got no answer (no Status) is tried up to 12 times,
 *    10 s apart, the first wait random within those 10 s; a write refused with a Status is
 *    not retried. Blocking: it runs in the thread that owns the client it is given.
 *  - the process recorder (kcmd_event_record once evrec_start ran, workers/main.c): every
 *    event is copied onto a bounded FIFO (EVREC_QUEUE_CAP, client-go's maxQueuedEvents) and
 *    the call returns at once; one sink thread with a client of its own (on the controller's
 *    shared token bucket) takes them in order through the sink. A push to a full queue drops
 *    the event, as the broadcaster's non-blocking send does, logs it, and counts it
 *    (evrec_dropped, and kcmd_events_dropped_total on the manager's /metrics via the
 *    process-shared REST metrics table).
 *
 * The ReplicaSet controller keeps its own queue, shared by its worker processes in shared
 * memory (workers/replicaset/evq.h), and writes through the same sink.
 *
 * Rejected: writing from the sync (the former kcmd_event_record): a sync that records an Event
 * per pod waited one round trip per Event, where upstream's sync does not wait at all.
 * Rejected: the worker's io_uring loop as the sink: the loop only runs between syncs, so a
 * long sync would hold the Events back; upstream's sink is a goroutine of its own.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/evcorr.h"
#include "kube/model.h"

#define EVREC_MAX_TRIES 12   /* client-go's maxTriesPerEvent */
#define EVREC_QUEUE_CAP 1000 /* client-go's maxQueuedEvents */

/* One event as makeEvent builds it. Strings may be NULL ("" then); host and rv usually "". */
struct evrec_event {
	kube_time_t t; /* when it was recorded (0: now) */
	const char *component, *host;
	const char *kind, *api_version, *ns, *name, *uid, *rv; /* involvedObject */
	const char *type, *reason, *message;
};

/* ---- the sink -------------------------------------------------------------------------------- */
struct evrec_sink;
/* 0 or -ENOMEM. */
int evrec_sink_new(struct evrec_sink **ret);
void evrec_sink_free(struct evrec_sink *s); /* NULL is a no-op */
/* recordToSink for ev through kc (owned by the calling thread). Waits between retries unless
 * *stop (may be NULL) turns true. Returns 1 written, 0 dropped by the spam filter, -EIO given
 * up after EVREC_MAX_TRIES unanswered tries, -ECANCELED stopped while waiting, -EREMOTEIO
 * refused by the server (not retried), -ENOMEM. */
int evrec_sink_record(struct evrec_sink *s, struct kube_client *kc, const struct evrec_event *ev,
                      const _Atomic bool *stop);
/* the wait between tries, in microseconds (client-go: 10 s); tests shorten it */
extern uint64_t evrec_retry_usec;

/* ---- the process recorder -------------------------------------------------------------------- */
struct evrec_opts {
	const struct kube_config *config; /* the sink thread's client is made from it */
	const char *controller;           /* for the client's user agent and metrics */
	double qps;                       /* the controller's token bucket, */
	int burst;
	int limiter_fd; /* shared with its other processes (KCMD_CLIENT_LIMITER_FD), or -1 */
	const char *content_type;
	size_t cap; /* 0: EVREC_QUEUE_CAP */
};
/* Makes this process's recorder: kcmd_event_record then queues instead of writing. The sink
 * thread starts with the first event. 0, -EALREADY, -EINVAL, -ENOMEM. */
int evrec_start(const struct evrec_opts *o);
/* Stops the sink after it wrote what is queued, waiting at most timeout_ms (then what is left
 * is dropped). true when the thread ended; false when it is stuck in a request (its state is
 * then left alone: the process is exiting). */
bool evrec_stop(int timeout_ms);
/* Queues an event (copies it). 0, -ENOBUFS (queue full: dropped, counted), -ENOMEM, -ENODEV
 * (no recorder: the caller writes it itself). Never blocks on the network; safe from any
 * thread. */
int evrec_push(const struct evrec_event *ev);
/* Events dropped because the queue was full, since evrec_start. */
uint64_t evrec_dropped(void);
/* Events queued now (not yet taken by the sink). */
size_t evrec_queued(void);
/* Waits until the sink took and wrote everything queued: true, or false after timeout_ms. */
bool evrec_flush(int timeout_ms);
