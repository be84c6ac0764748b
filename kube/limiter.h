/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kube/limiter.h: a client-side rate limiter (token bucket) that several processes can share.
 *
 * Design note.
 *   kube-controller-manager gives each controller one client, and so one client-go token bucket
 *   (--kube-api-qps, --kube-api-burst; the garbage collector's metadata client runs at twice
 *   the qps), shared by all its goroutines. kcmd runs a controller as several worker processes,
 *   so the bucket lives in a small memfd the manager creates per controller
 *   (kube_limiter_memfd_create) and passes to that controller's workers (KCMD_CLIENT_LIMITER_FD
 *   for the workers' API client, KCMD_GC_LIMITER_FD for the GC's own client). Without the fd (a
 *   worker started by hand, tests) the bucket is private to the process.
 *   The bucket is a GCRA: one 64-bit "theoretical arrival time" in nanoseconds of
 *   CLOCK_MONOTONIC (the same clock in every process), advanced with compare-and-swap. A
 *   request reserves the next slot, max(tat, now) + 1/qps, and waits until that slot minus
 *   burst/qps: exactly a token bucket of `burst` tokens refilled at qps, as client-go's
 *   x/time/rate Wait. A process killed while waiting has only spent its slot.
 *   kube_client uses it through kube_client_opts.limiter: a queued call reserves its slot once
 *   it is otherwise ready to go and is sent when the slot comes (each retry reserves anew).
 *
 * INVARIANTS (the page: magic, then one _Atomic int64_t tat_ns; struct in limiter.c)
 *   Who writes: every process sharing the bucket (lock-free CAS). Who reads: the same.
 *   L1 tat only grows (CAS from the value read); one slot per successful CAS.
 *   L2 Ordering: tat is the only shared word and guards no other data, so every access is
 *      relaxed; the CAS alone makes two processes' reservations distinct (L1).
 *   Retry rule: a failed CAS reloads tat and recomputes the slot (lock-free: some process's
 *      CAS succeeds in every round).
 *   Death: a process killed at any point has at most reserved a slot it will not use (the
 *      bucket lends that token to nobody, as a canceled client-go Wait would not return it);
 *      there is nothing to reclaim.
 *   Version rule: magic (KUBE_LIMITER_MAGIC, "GLM1") carries the version; a mismatch is
 *      -EBADMSG at open; any layout change bumps it.
 */
#include <stdint.h>

struct kube_limiter;

/* Creates the shared state (close-on-exec memfd). Returns the fd or -errno. */
int kube_limiter_memfd_create(void);
/* Maps fd (or private state when fd < 0). qps <= 0: no limit. 0 or -errno. */
int kube_limiter_open(int fd, double qps, int burst, struct kube_limiter **ret);
void kube_limiter_free(struct kube_limiter *l);
/* Reserves one request at now_ns; returns how long to wait before sending it (ns). */
int64_t kube_limiter_reserve(struct kube_limiter *l, int64_t now_ns);
/* Reserves and sleeps (CLOCK_MONOTONIC). NULL: returns at once. */
void kube_limiter_wait(struct kube_limiter *l);
