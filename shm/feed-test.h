/* SPDX-License-Identifier: Apache-2.0 */
/* shm/feed-test.h - test seams of shm/feed.c (tests only; production never sets them).
 *
 * SHM_FEED_TEST_NO_VALIDATE: readers skip the tail re-check after copying an entry (INVARIANT
 * F2 off): the torture test's negative control, whose torn entries the oracle must catch.
 * SHM_FEED_TEST_EARLY_PUBLISH: the writer stores an entry's seq before its body (F1 off): the
 * second negative control.
 * SHM_FEED_TEST_SLOW_COPY: readers pause 20 us half-way through every copy (as a preemption
 * would), so that copies race with overwrites by design, not by luck.
 * SHM_FEED_TEST_TRIM_ALL: the writer's trim ignores the consumer slots and punches everything
 * behind the newest entry, so that copies race with hole punches (F7) by design.
 * SHM_FEED_TEST_TRIM_NO_TAIL: the trim punches without moving tail first (F7 off): the third
 * negative control.
 * SHM_FEED_TEST_NO_RESUME: a durable consumer ignores its committed position and starts at the
 * end (F8 off): the negative control of the durable-consumer kill test.
 * SHM_FEED_TEST_WRONG_MASK: the writer wakes with the complement of the batch's classes and
 * never sweeps (F9 off): the negative control of the masked consumers' missed-wake oracle.
 * shm_feed__test_sweep: the lag sweep distance (F9); UINT64_MAX turns the sweeps off.
 * shm_feed__test_crash_step / _count: the writer raises SIGKILL at publication step n on the
 * count-th visit (steps: SHM_FEED_STEP_*). */
#pragma once

#include <stdint.h>

#define SHM_FEED_TEST_NO_VALIDATE   0x1u
#define SHM_FEED_TEST_EARLY_PUBLISH 0x2u
#define SHM_FEED_TEST_SLOW_COPY     0x4u
#define SHM_FEED_TEST_TRIM_ALL      0x8u
#define SHM_FEED_TEST_TRIM_NO_TAIL  0x10u
#define SHM_FEED_TEST_NO_RESUME     0x20u
#define SHM_FEED_TEST_WRONG_MASK    0x40u
extern unsigned shm_feed__test_flags;
extern uint64_t shm_feed__test_trim_chunk; /* 0: the default (ring / 16, at most 256 KiB) */
/* 0: the default lag sweep distance (F9); UINT64_MAX: never sweep (wakes by class only) */
extern uint64_t shm_feed__test_sweep;
extern int shm_feed__test_crash_step;
extern long shm_feed__test_crash_count;

enum {
	SHM_FEED_STEP_TAIL = 1,      /* after advancing tail, before any overwrite */
	SHM_FEED_STEP_PAD_HDR,       /* a pad's header written, its seq not yet */
	SHM_FEED_STEP_PAD_PUBLISHED, /* the pad published, the entry not started */
	SHM_FEED_STEP_BODY_HALF,     /* half the entry's words written */
	SHM_FEED_STEP_BODY,          /* the body and the next word 0 written, seq not yet */
	SHM_FEED_STEP_PUBLISHED,     /* seq stored, hints (last_pos, futex) not yet */
	SHM_FEED_STEP_HINT_POS,      /* last_pos stored, the futex word not yet */
	SHM_FEED_STEP_HINTS,         /* hints stored, nobody woken */
	SHM_FEED_STEP_MAX = SHM_FEED_STEP_HINTS,
};
