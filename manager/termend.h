/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/termend.h: holds the "stopped leading" Event (and its log line) back until every worker
 * process of the leadership term that ended has been reaped.
 *
 * Design note.
 *   When leadership ends the manager closes the fence and SIGKILLs the term's workers, but
 *   kill(2) returns before they die: a worker in the middle of a write may still be running.
 *   An operator reading Events must never see "stopped leading" while such a process exists, so
 *   the manager registers the pid of every worker it killed (mgr_term_end_add), and the events
 *   the elector wants recorded go through mgr_term_end_event: while a registered pid is still
 *   unreaped they are queued in order ("stopped leading", then a "became leader" of a term won
 *   again meanwhile, so the order of the Events stays the order of the terms), and they are
 *   emitted, in that order, when the last registered pid is reaped (mgr_term_end_reaped, from
 *   the supervisor's exit callback). With nothing registered an event goes out at once.
 *
 *   Pure bookkeeping (no I/O, no clock): the emit callback does the recording.
 *   Rejected: counting the workers group's running children (a term won again before the old
 *   workers were reaped restarts the group, so the count never reaches 0 at the right moment);
 *   a timeout that emits anyway (it would break the rule exactly when a worker hangs, e.g. in
 *   uninterruptible sleep, which is when the rule matters).
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mgr_term_end;

typedef void (*mgr_term_end_emit_fn)(const char *what, void *userdata);

int mgr_term_end_new(mgr_term_end_emit_fn emit, void *userdata, struct mgr_term_end **ret);
struct mgr_term_end *mgr_term_end_free(struct mgr_term_end *t); /* NULL-safe */

/* A worker of the ending term that was signalled and is not reaped yet. -ENOMEM, -EINVAL
 * (pid <= 0); a pid already registered is counted once. */
int mgr_term_end_add(struct mgr_term_end *t, pid_t pid);
/* An event the elector wants recorded: emitted now when no registered pid is left, else queued.
 * -ENOMEM when it cannot be queued (then it is emitted at once rather than lost). */
int mgr_term_end_event(struct mgr_term_end *t, const char *what);
/* The supervisor reaped pid: forgotten; when it was the last one, the queued events are emitted
 * in the order they came. Returns the number emitted. Unknown pids are ignored. */
int mgr_term_end_reaped(struct mgr_term_end *t, pid_t pid);
/* Registered pids not reaped yet. */
size_t mgr_term_end_pending(const struct mgr_term_end *t);
/* Events waiting for them. */
size_t mgr_term_end_queued(const struct mgr_term_end *t);
