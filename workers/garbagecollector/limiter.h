/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/garbagecollector/limiter.h: the GC's client-side rate limiter, one token bucket shared
 * by every GC worker process.
 *
 * Design note.
 *   kube-controller-manager gives the garbage collector one metadata client whose QPS is twice
 *   --kube-api-qps (burst unchanged, --kube-api-burst), shared by all its workers. kcmd's GC
 *   workers are processes, so the bucket lives in a small memfd the manager creates
 *   (gc_limiter_memfd_create) and passes to each GC worker (KCMD_GC_LIMITER_FD). Without the
 *   fd (a worker started by hand, tests) the bucket is private to the process.
 *   The bucket is a GCRA: one 64-bit "theoretical arrival time" in nanoseconds of
 *   CLOCK_MONOTONIC (the same clock in every process), advanced with compare-and-swap. A
 *   request reserves the next slot, max(tat, now) + 1/qps, and waits until that slot minus
 *   burst/qps: exactly a token bucket of `burst` tokens refilled at qps, as client-go's
 *   x/time/rate Wait. A worker killed while waiting has only spent its slot.
 *
 * INVARIANTS
 *   L1 tat only grows (CAS from the value read); one slot per successful CAS.
 *   Who writes: every GC worker (lock-free CAS). Who reads: the same.
 */
#include <stdint.h>

struct gc_limiter;

/* Creates the shared state (close-on-exec memfd). Returns the fd or -errno. */
int gc_limiter_memfd_create(void);
/* Maps fd (or private state when fd < 0). qps <= 0: no limit. 0 or -errno. */
int gc_limiter_open(int fd, double qps, int burst, struct gc_limiter **ret);
void gc_limiter_free(struct gc_limiter *l);
/* Reserves one request at now_ns; returns how long to wait before sending it (ns). */
int64_t gc_limiter_reserve(struct gc_limiter *l, int64_t now_ns);
/* Reserves and sleeps (CLOCK_MONOTONIC). NULL: returns at once. */
void gc_limiter_wait(struct gc_limiter *l);
