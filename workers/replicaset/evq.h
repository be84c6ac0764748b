/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/evq.h: the ReplicaSet controller's one event pipeline, shared by all its
 * worker processes, as upstream's one EventBroadcaster per controller.
 *
 * Upstream (client-go tools/record, as NewReplicaSetController builds it): every Eventf goes
 * into the broadcaster's queue (non-blocking; dropped when the queue is full: 1000 incoming +
 * 1000 buffered for the sink watcher, watch.DropIfChannelFull); ONE goroutine takes them in
 * order, runs the one EventCorrelator (aggregation, counting, spam filter) and writes each
 * Event with a blocking call through the controller's client (so its token bucket), one at a
 * time, retrying a write without an answer up to 12 times, 10 s apart. The sink's pace is what
 * bounds how many Events go out while the controller is busy creating pods.
 *
 * Here: a bounded FIFO of event records in shared memory (a region of the expectations memfd,
 * which every RS worker maps) that any worker process pushes to, and a sink lock. Each worker
 * process runs a sink thread that waits for the sink lock; the holder pops, correlates and
 * writes, so exactly one sink (and one correlator) runs per controller. When the holder dies,
 * another worker's thread takes over (its correlator starts empty, as upstream's after a
 * restart).
 *
 * INVARIANTS
 *   Q1 head/tail/slots change only under `mu` (a robust, process-shared mutex); a push copies
 *      the record into slots[tail % cap] and then advances tail, a pop copies slots[head % cap]
 *      out and then advances head. A process killed under `mu` (EOWNERDEAD) left at most the
 *      slot past tail (not yet published) or the slot at head (still queued) half-copied, so
 *      the next owner marks the mutex consistent and goes on.
 *   Q2 tail - head <= cap; a push to a full queue drops the record (counted in `dropped`).
 *   Q3 `wake` (a futex word) is incremented after every push; the sink waits on it.
 *   Q4 `sink` (robust, process-shared) is held by the one sink thread for as long as it runs.
 *   Who writes: any RS worker (push), the sink holder (pop). Strings are NUL-terminated and
 *   truncated to their field (a longer message than RS_EVQ_MSG_MAX is cut, never overflowed).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/model.h"

#define RS_EVQ_CAP     2000 /* client-go: maxQueuedEvents (1000) incoming + 1000 on the watcher */
#define RS_EVQ_MSG_MAX 4096
#define RS_EVQ_MAGIC   0x6b63657671303031ULL /* "kcevq001" */

struct rs_evq_rec {
	kube_time_t t; /* when the event was recorded (makeEvent's timestamp) */
	char ns[64], name[256], uid[64], rv[32];
	char type[16], reason[64];
	char message[RS_EVQ_MSG_MAX];
};

struct rs_evq;

/* Bytes of the shared region (a multiple of the page size). */
size_t rs_evq_region_size(void);
/* Initialises a zeroed region (the creator, before sharing it). 0 or -errno. */
int rs_evq_init(void *region, size_t len);
/* Maps the region at `off` of fd (MAP_SHARED) and checks it. 0, -EPROTO or -errno. */
int rs_evq_attach(int fd, uint64_t off, struct rs_evq **ret);
/* A queue of this process only (tests, a worker started without the memfd). */
int rs_evq_new_private(struct rs_evq **ret);
void rs_evq_free(struct rs_evq *q);

/* Non-blocking: 0, or -ENOBUFS when the queue is full (the record is dropped). */
int rs_evq_push(struct rs_evq *q, const struct rs_evq_rec *rec);
/* Takes the oldest record: 1, or 0 when none came within timeout_ms (0: do not wait). */
int rs_evq_pop(struct rs_evq *q, struct rs_evq_rec *ret, int timeout_ms);
/* Queued records now; dropped since the region was made. */
uint32_t rs_evq_len(struct rs_evq *q);
uint64_t rs_evq_dropped(struct rs_evq *q);
/* Wakes a sink waiting in rs_evq_pop (shutdown). */
void rs_evq_wake(struct rs_evq *q);

/* The sink lock: 1 when this thread now holds it, 0 when not within timeout_ms. */
int rs_evq_sink_lock(struct rs_evq *q, int timeout_ms);
void rs_evq_sink_unlock(struct rs_evq *q);
