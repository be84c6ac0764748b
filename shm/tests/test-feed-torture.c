/* SPDX-License-Identifier: Apache-2.0 */
/* shm/tests/test-feed-torture.c - the change feed under kill -9 (shm/feed.h).
 *
 * A supervisor owns the feed memfd and forks one writer and T_CONSUMERS consumers; until the
 * deadline it SIGKILLs a random one every 2-30 ms and respawns it. A respawned writer recovers
 * the feed and continues the sequence in it; a respawned consumer attaches at the end. The
 * ring is small (256 KiB), half the consumers pause 20 us half-way through every copy (as a
 * preemption would) and the writer publishes in bursts, so consumers are lapped all the time
 * and copies race with overwrites by design.
 *
 * Oracles (every delivered entry is checked, shm/tests/feed-oracle.h):
 *  - content ("torn"): every field of the entry and of both objects, every payload word, is
 *    recomputed from (seq, gen) and compared;
 *  - order: a consumer delivers exactly the seq it expects next; only an -ESTALE (lap) may
 *    move it, through shm_feed_seek_end, and never backwards;
 *  - uniqueness ("conflict"): a shared table remembers which writer generation published each
 *    seq; two consumers (or one, across a writer restart) seeing one seq with two different
 *    generations means a seq was published twice;
 *  - corruption: a consumer never gets -EBADMSG; every writer start recovers (no -EUCLEAN).
 * Liveness: entries delivered, laps reported, writer and consumer kills, and consumers that
 * read across a writer restart without a lap ("continued") must all be non-zero.
 * Consumers register (F7) and the writer trims (punches ring pages behind the slowest) in
 * every wake; the healthy run must have punched something. A second healthy run makes the
 * trims ignore the slots (SHM_FEED_TEST_TRIM_ALL), so copies race with hole punches all the
 * time: every oracle must stay at 0 there too.
 * Masked consumers (F9): T_MASKED more consumers take only two of the seven types' wake
 * classes (the writer's entry of type t wakes class t) and sleep in blocking waits of at most
 * T_WAKE_BOUND_MS; they step over the other types' entries (shm_feed_set_type_filter) and go
 * through the same oracles (every entry of their types, in order, whole: the next seq they
 * deliver is the next of their types, fo_build's type being seq % 7). Their own oracle ("missed"):
 * a wait that timed out while the writer went on publishing their types (32 of them, three batches'
 * worth, or a lap, found after the timeout) is a wake that did not come. The writer never sweeps in
 * these runs (shm_feed__test_sweep), so class wakes alone must wake them. Negative control 4: a
 * writer that wakes the complement of the batch's classes (SHM_FEED_TEST_WRONG_MASK; consumers
 * killed, the writer not, as a writer attach wakes everyone): the oracle must fire. Negative
 * controls: the same harness with (1) consumers that skip the tail re-check
 * (SHM_FEED_TEST_NO_VALIDATE), (2) a writer that publishes the seq before the body
 * (SHM_FEED_TEST_EARLY_PUBLISH, pausing half-way through the body) and (3) trims that punch
 * without moving tail first (SHM_FEED_TEST_TRIM_NO_TAIL, with TRIM_ALL); the oracle must fire
 * in all three.
 *
 * Usage: test-feed-torture [seconds]  (default FEED_TORTURE_SECS; SHM_FEED_TORTURE_SECONDS too)
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/feed-test.h"
#include "shm/feed.h"
#include "shm/tests/feed-oracle.h"

#ifndef FEED_TORTURE_SECS
#define FEED_TORTURE_SECS 3.0
#endif
#define T_CONSUMERS     4
#define T_MASKED        2 /* consumers with a wake interest (F9), after the T_CONSUMERS others */
#define T_INTEREST      (UINT32_C(1) << 1 | UINT32_C(1) << 4) /* types 1 and 4 of fo_build's 7 */
#define T_WAKE_BOUND_MS 100
#define T_RING          (256u << 10)
#define T_TABLE         (1u << 18)

struct t_shared {
	_Atomic uint64_t delivered, torn, order, conflict, badmsg, laps, continued, errors;
	_Atomic uint64_t masked_mine, masked_wakes, masked_timeouts, missed;
	_Atomic uint64_t published, writer_starts, writer_open_fail;
	_Atomic uint64_t seen[T_TABLE]; /* seq << 16 | gen of the last seq seen in this slot */
};
static struct t_shared *sh;

enum mode { HEALTHY, TRIM_RACE, NO_VALIDATE, EARLY_PUBLISH, TRIM_NO_TAIL, WRONG_MASK };

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static _Noreturn void writer_main(int fd, unsigned seed, enum mode m)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (m == EARLY_PUBLISH)
		shm_feed__test_flags = SHM_FEED_TEST_EARLY_PUBLISH | SHM_FEED_TEST_SLOW_COPY;
	/* healthy runs trim in 64 KiB steps (a quarter of the ring: every page is still punched
	 * once per lap), the punch race and its control in the default 16 KiB */
	if (m != TRIM_RACE && m != TRIM_NO_TAIL)
		shm_feed__test_trim_chunk = 64u << 10;
	if (m == TRIM_RACE)
		shm_feed__test_flags = SHM_FEED_TEST_TRIM_ALL;
	if (m == TRIM_NO_TAIL)
		shm_feed__test_flags = SHM_FEED_TEST_TRIM_ALL | SHM_FEED_TEST_TRIM_NO_TAIL;
	if (m == WRONG_MASK)
		shm_feed__test_flags = SHM_FEED_TEST_WRONG_MASK;
	shm_feed__test_sweep = UINT64_MAX; /* F9: class wakes alone wake the masked consumers */
	struct shm_feed *w;
	int r;
	while ((r = shm_feed_writer_open(fd, &w)) == -EBUSY)
		usleep(200);
	if (r < 0) {
		atomic_fetch_add(&sh->writer_open_fail, 1);
		if (m == HEALTHY || m == TRIM_RACE) /* the broken writers leave -EUCLEAN */
			fprintf(stderr, "feed-torture: writer open: %s\n", strerror(-r));
		_exit(4);
	}
	atomic_fetch_add(&sh->writer_starts, 1);
	struct shm_feed_stats st;
	shm_feed_stats(w, &st);
	uint64_t gen = st.incarnation & 0xffff, seq = st.position;
	static struct fo_buf b;
	uint64_t s = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	for (uint64_t i = 1;; i++) {
		fo_build(seq, gen, &b);
		b.pub.wake = UINT32_C(1) << (b.pub.type % 31); /* F9: type t wakes class t */
		uint64_t got;
		if ((r = shm_feed_publish(w, &b.pub, &got)) < 0 || got != seq) {
			fprintf(stderr, "feed-torture: publish: %s\n", strerror(-r));
			_exit(5);
		}
		seq = seq + 1 ? seq + 1 : 1;
		atomic_fetch_add_explicit(&sh->published, 1, memory_order_relaxed);
		if (i % 32 == 0)
			shm_feed_wake(w);
		if (i % 256 == 0 && rng(&s) % 4 == 0) /* bursts, so consumers catch up at times */
			usleep((useconds_t)(rng(&s) % 400));
	}
}

static void note_seen(uint64_t seq, uint64_t gen)
{
	_Atomic uint64_t *slot = &sh->seen[seq & (T_TABLE - 1)];
	uint64_t want = (seq & 0xffffffffffffu) << 16 | gen;
	uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);
	for (;;) {
		if (v >> 16 == (seq & 0xffffffffffffu)) {
			if ((v & 0xffff) != gen)
				atomic_fetch_add(&sh->conflict, 1);
			return;
		}
		if ((v >> 16) > (seq & 0xffffffffffffu))
			return; /* a later seq owns the slot */
		if (atomic_compare_exchange_weak_explicit(slot, &v, want, memory_order_relaxed,
		                                          memory_order_relaxed))
			return;
	}
}

/* the masked consumers also step over the other types' entries (F9): types 1 and 4 */
static bool want_interest(uint16_t type, void *ud)
{
	(void)ud;
	return (T_INTEREST & (UINT32_C(1) << (type % 31))) != 0;
}

static _Noreturn void consumer_main(int fd, unsigned seed, enum mode m, bool slow,
                                    uint32_t interest)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (slow)
		shm_feed__test_flags |= SHM_FEED_TEST_SLOW_COPY;
	if (m == NO_VALIDATE)
		shm_feed__test_flags |= SHM_FEED_TEST_NO_VALIDATE;
	struct shm_feed *f;
	int r;
	if ((r = shm_feed_reader_open(fd, &f)) < 0) {
		fprintf(stderr, "feed-torture: reader open: %s\n", strerror(-r));
		atomic_fetch_add(&sh->errors, 1);
		_exit(6);
	}
	if (interest) {
		shm_feed_set_interest(f, interest);
		shm_feed_set_type_filter(f, want_interest, NULL);
	}
	static struct fo_buf scratch;
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	uint64_t expect = shm_feed_position(f), s = seed + 17, idle = 0;
	int64_t last_gen = -1;
	/* masked: entries of its types read since a wait that timed out (-1: none timed out) */
	int64_t after_timeout = -1;
	for (;;) {
		uint32_t tok = shm_feed_wait_token(f);
		r = shm_feed_next(f, &ev);
		if (r == 1 && interest && (interest & (UINT32_C(1) << (ev.type % 31)))) {
			atomic_fetch_add_explicit(&sh->masked_mine, 1, memory_order_relaxed);
			if (after_timeout >= 0 && ++after_timeout == 32)
				atomic_fetch_add(&sh->missed, 1); /* published while it slept */
		}
		if (r == 1) {
			idle = 0;
			atomic_fetch_add_explicit(&sh->delivered, 1, memory_order_relaxed);
			/* a filtered consumer: the next seq of its types (fo_build: type = seq % 7)
			 */
			while (interest && !(interest & (UINT32_C(1) << (expect % 7))))
				expect++;
			if (ev.seq != expect)
				atomic_fetch_add(&sh->order, 1);
			if (!fo_check(&ev, &scratch)) {
				atomic_fetch_add(&sh->torn, 1);
				last_gen = -1;
			} else {
				int64_t g = fo_gen_of(&ev);
				note_seen(ev.seq, (uint64_t)g);
				if (last_gen >= 0 && g != last_gen)
					atomic_fetch_add(&sh->continued, 1);
				last_gen = g;
			}
			expect = ev.seq + 1 ? ev.seq + 1 : 1;
		} else if (r == 0 && interest) {
			/* caught up: what a timed-out wait let pile up was judged above */
			after_timeout = -1;
			int x = shm_feed_wait(f, tok, T_WAKE_BOUND_MS * 1000u);
			if (x == 0)
				atomic_fetch_add_explicit(&sh->masked_wakes, 1,
				                          memory_order_relaxed);
			else if (x == -ETIMEDOUT) {
				atomic_fetch_add(&sh->masked_timeouts, 1);
				after_timeout = 0;
			}
		} else if (r == 0) {
			if (++idle % 64 == 0)
				shm_feed_wait(f, tok, 1000);
			else
				sched_yield();
		} else if (r == -ESTALE) {
			atomic_fetch_add_explicit(&sh->laps, 1, memory_order_relaxed);
			if (after_timeout >=
			    0) /* lapped while asleep: its types' wakes did not come */
				atomic_fetch_add(&sh->missed, 1);
			after_timeout = -1;
			uint64_t at;
			if (shm_feed_seek_end(f, &at) < 0) {
				atomic_fetch_add(&sh->errors, 1);
				_exit(7);
			}
			if ((int64_t)(at - expect) < 0)
				atomic_fetch_add(&sh->order, 1); /* a resync never goes backwards */
			expect = at;
			last_gen = -1;
			if (rng(&s) % 8 == 0)
				usleep(50);
		} else if (r == -EBADMSG) {
			atomic_fetch_add(&sh->badmsg, 1);
			uint64_t at; /* step over it the only way a consumer can */
			if (shm_feed_seek_end(f, &at) < 0)
				_exit(8);
			expect = at;
			last_gen = -1;
		} else {
			atomic_fetch_add(&sh->errors, 1);
			_exit(9);
		}
	}
}

struct t_result {
	uint64_t delivered, torn, order, conflict, badmsg, laps, continued, errors;
	uint64_t masked_mine, masked_wakes, masked_timeouts, missed;
	uint64_t published, writer_starts, writer_open_fail, writer_kills, consumer_kills;
	uint64_t trimmed;
	int final_open;
};

static pid_t spawn(int fd, int role, unsigned seed, enum mode m)
{
	pid_t p = fork();
	if (p == 0) {
		if (role < 0)
			writer_main(fd, seed, m);
		consumer_main(fd, seed, m, role < T_CONSUMERS && role % 2 == 1,
		              role >= T_CONSUMERS ? T_INTEREST : 0);
	}
	return p;
}

static void kill_wait(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

static int run(double secs, enum mode m, struct t_result *res)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -errno;
	memset(sh, 0, sizeof(*sh));
	fo_words = 200;
	int fd, ro, r;
	/* consumers register (F7): the writer's trims (in every wake) follow them */
	if ((r = shm_feed_create(&(struct shm_feed_create_opts){.ring_size = T_RING}, &fd)) < 0 ||
	    (r = shm_feed_consumer_fd(fd, &ro)) < 0)
		return r;
	memset(res, 0, sizeof(*res));
	pid_t writer = spawn(fd, -1, 1, m), cons[T_CONSUMERS + T_MASKED];
	for (int i = 0; i < T_CONSUMERS + T_MASKED; i++)
		cons[i] = spawn(ro, i, 100 + (unsigned)i, m);
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9), s = (uint64_t)getpid() * 77 + 3;
	unsigned gen = 2;
	while (now_ns() < end) {
		usleep(2000 + (useconds_t)(rng(&s) % 30000));
		if (rng(&s) % 3 == 0 && m != WRONG_MASK) { /* an attach wakes every consumer */
			kill_wait(writer);
			res->writer_kills++;
			writer = spawn(fd, -1, gen++, m);
		} else {
			int i = (int)(rng(&s) % (T_CONSUMERS + T_MASKED));
			kill_wait(cons[i]);
			res->consumer_kills++;
			cons[i] = spawn(ro, i, gen++, m);
		}
	}
	for (int i = 0; i < T_CONSUMERS + T_MASKED; i++)
		kill_wait(cons[i]);
	kill_wait(writer);
	/* the final recovery, in this process */
	struct shm_feed *w;
	shm_feed__test_flags = 0;
	res->final_open = shm_feed_writer_open(fd, &w);
	if (res->final_open == 0) {
		struct shm_feed_stats st;
		shm_feed_stats(w, &st);
		res->trimmed = st.trimmed;
		shm_feed_close(w);
	}
	close(ro);
	close(fd);
	res->delivered = sh->delivered;
	res->torn = sh->torn;
	res->order = sh->order;
	res->conflict = sh->conflict;
	res->badmsg = sh->badmsg;
	res->laps = sh->laps;
	res->continued = sh->continued;
	res->errors = sh->errors;
	res->masked_mine = sh->masked_mine;
	res->masked_wakes = sh->masked_wakes;
	res->masked_timeouts = sh->masked_timeouts;
	res->missed = sh->missed;
	res->published = sh->published;
	res->writer_starts = sh->writer_starts;
	res->writer_open_fail = sh->writer_open_fail;
	munmap(sh, sizeof(*sh));
	return 0;
}

static void print(const char *label, const struct t_result *r, double secs)
{
	printf("%s (%.1f s): %llu published, %llu delivered and checked, %llu laps, %llu writer "
	       "kills (%llu starts), %llu consumer kills, %llu reads across a writer restart, "
	       "%llu KiB punched\n"
	       "  masked consumers: %llu entries of their types, %llu wakes, %llu timed-out waits\n"
	       "  torn=%llu order=%llu conflict=%llu badmsg=%llu errors=%llu open_fail=%llu "
	       "final_open=%d missed=%llu\n",
	       label, secs, (unsigned long long)r->published, (unsigned long long)r->delivered,
	       (unsigned long long)r->laps, (unsigned long long)r->writer_kills,
	       (unsigned long long)r->writer_starts, (unsigned long long)r->consumer_kills,
	       (unsigned long long)r->continued, (unsigned long long)(r->trimmed >> 10),
	       (unsigned long long)r->masked_mine, (unsigned long long)r->masked_wakes,
	       (unsigned long long)r->masked_timeouts, (unsigned long long)r->torn,
	       (unsigned long long)r->order, (unsigned long long)r->conflict,
	       (unsigned long long)r->badmsg, (unsigned long long)r->errors,
	       (unsigned long long)r->writer_open_fail, r->final_open,
	       (unsigned long long)r->missed);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	double secs = FEED_TORTURE_SECS;
	const char *e = getenv("SHM_FEED_TORTURE_SECONDS");
	if (argc > 1 && atof(argv[1]) > 0)
		secs = atof(argv[1]);
	else if (e && atof(e) > 0)
		secs = atof(e);
	double neg = secs < 3 ? secs / 2 : 1.5;
	struct t_result ok, tr, nv, ep, nt, wm;
	int bad = 0;
	if (run(secs, HEALTHY, &ok) < 0)
		return 1;
	print("healthy", &ok, secs);
	if (ok.torn || ok.order || ok.conflict || ok.badmsg || ok.errors || ok.writer_open_fail ||
	    ok.final_open || ok.missed) {
		printf("feed-torture: FAIL: the healthy run broke an oracle\n");
		bad = 1;
	}
	if (ok.delivered < 1000 || ok.laps == 0 || ok.writer_kills < 3 || ok.consumer_kills < 3 ||
	    ok.continued == 0 || ok.trimmed == 0 || ok.masked_mine < 100 || ok.masked_wakes == 0) {
		printf("feed-torture: FAIL: run too idle to judge\n");
		bad = 1;
	}
	/* F7 raced on purpose: the writer's trims ignore the slots and punch everything behind
	 * the newest entry, under the readers' (slow) copies */
	if (run(neg, TRIM_RACE, &tr) < 0)
		return 1;
	print("punch race (trims ignore the consumers' slots)", &tr, neg);
	if (tr.torn || tr.order || tr.conflict || tr.badmsg || tr.errors || tr.writer_open_fail ||
	    tr.final_open) {
		printf("feed-torture: FAIL: a read raced by a hole punch broke an oracle\n");
		bad = 1;
	}
	if (tr.delivered < 100 || tr.laps == 0 || tr.trimmed == 0) {
		printf("feed-torture: FAIL: punch race too idle to judge\n");
		bad = 1;
	}
	if (run(neg, NO_VALIDATE, &nv) < 0)
		return 1;
	print("negative control 1 (consumers skip the tail check)", &nv, neg);
	if (nv.torn + nv.badmsg + nv.order == 0) {
		printf("feed-torture: FAIL: the oracle missed the unvalidated copies\n");
		bad = 1;
	}
	if (run(neg, EARLY_PUBLISH, &ep) < 0)
		return 1;
	print("negative control 2 (seq published before the body)", &ep, neg);
	if (ep.torn + ep.badmsg + ep.order == 0) {
		printf("feed-torture: FAIL: the oracle missed the early publication\n");
		bad = 1;
	}
	/* a reader sees an unannounced punch only when it races one mid-copy (one at a punched
	 * word 0 just waits): on a loaded machine that may take more than one run */
	for (int attempt = 0; attempt < 3; attempt++) {
		if (run(neg, TRIM_NO_TAIL, &nt) < 0)
			return 1;
		print("negative control 3 (punch without moving tail first)", &nt, neg);
		if (nt.torn + nt.badmsg + nt.order > 0)
			break;
	}
	if (nt.torn + nt.badmsg + nt.order == 0) {
		printf("feed-torture: FAIL: the oracle missed the unannounced punches\n");
		bad = 1;
	}
	/* F9 broken: the writer wakes the other classes; the masked consumers must miss wakes */
	if (run(neg, WRONG_MASK, &wm) < 0)
		return 1;
	print("negative control 4 (wakes with the wrong classes)", &wm, neg);
	if (wm.missed == 0) {
		printf("feed-torture: FAIL: the oracle missed the wrong wake classes\n");
		bad = 1;
	}
	printf("feed-torture: %s\n", bad ? "FAIL" : "PASS");
	return bad;
}
