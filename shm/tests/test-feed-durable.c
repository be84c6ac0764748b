/* SPDX-License-Identifier: Apache-2.0 */
/* shm/tests/test-feed-durable.c - a durable consumer of the change feed under kill -9
 * (shm/feed.h F8).
 *
 * The parent is the writer: it publishes entries steadily and trims the ring after every batch
 * (a small trim chunk, so pages go back all the time). A child process is the durable consumer
 * "dispatcher/test": it reads each entry, "handles" it by writing its seq into a pipe, then
 * commits. The parent SIGKILLs the child every 2-8 ms and starts a new one, which must resume
 * where the dead one stopped.
 *
 * Oracle (on the seqs handled, in pipe order): within one child, every seq is the previous + 1;
 * a new child's first seq is the last one handled (its commit was cut by the kill) or the next;
 * anything higher is a lost entry (GAP), anything lower a repeat beyond the one allowed (DUP).
 * At the end the last child catches up and the last seq handled is the last published (no loss
 * at the tail). Every entry is checked against the deterministic oracle (fo_check): no torn
 * entry. A lap (the writer overran a dead child's position) would be an honest refusal, but the
 * parent paces itself so that none happens; laps are counted and must be 0.
 *
 * Negative control: the children run with SHM_FEED_TEST_NO_RESUME (a new child starts at the
 * end, as before F8): the oracle must report GAPs.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/feed-test.h"
#include "shm/feed.h"
#include "shm/tests/feed-oracle.h"

#define LAP_MARK UINT64_MAX
#define BAD_MARK (UINT64_MAX - 1)

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void child(int fd, int wpipe, unsigned flags)
{
	struct shm_feed *c;
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	static struct fo_buf scratch;
	shm_feed__test_flags = flags;
	if (shm_feed_consumer_open(fd, "dispatcher/test", &c, NULL) < 0)
		_exit(1);
	for (;;) {
		uint32_t tok = shm_feed_wait_token(c);
		int r = shm_feed_next(c, &ev);
		if (r == 1) {
			uint64_t s = fo_check(&ev, &scratch) ? ev.seq : BAD_MARK;
			if (write(wpipe, &s, sizeof(s)) != sizeof(s))
				_exit(3);
			shm_feed_commit(c);
		} else if (r == 0) {
			(void)shm_feed_wait(c, tok, 10000);
		} else if (r == -ESTALE) {
			uint64_t s = LAP_MARK;
			if (write(wpipe, &s, sizeof(s)) != sizeof(s))
				_exit(3);
			if (shm_feed_seek_end(c, NULL) < 0)
				_exit(4);
		} else {
			_exit(5);
		}
	}
}

struct result {
	uint64_t published, handled, kills, gaps, dups, bad, laps, lost_tail;
};

static pid_t spawn(int fd, int p[2], unsigned flags)
{
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(fd, p[1], flags);
	}
	return pid;
}

/* reads every seq in the pipe and applies the oracle */
static void take(int rfd, struct result *res, uint64_t *last, bool *fresh)
{
	uint64_t s;
	while (read(rfd, &s, sizeof(s)) == sizeof(s)) {
		if (s == LAP_MARK) {
			res->laps++;
			*fresh = true;
			continue;
		}
		if (s == BAD_MARK) {
			res->bad++;
			continue;
		}
		res->handled++;
		if (*last == 0 || s == *last + 1 || (*fresh && s == *last)) {
			/* in order, or the one repeat a kill between handling and commit allows */
		} else if (s > *last + 1) {
			res->gaps += s - *last - 1;
		} else {
			res->dups++;
		}
		*fresh = false;
		if (s > *last || *last == 0)
			*last = s;
	}
}

static int run(unsigned child_flags, uint64_t duration_ms, struct result *res)
{
	struct shm_feed_create_opts o = {.ring_size = 4u << 20};
	struct shm_feed *w;
	struct fo_buf fb;
	int fd, p[2];
	*res = (struct result){0};
	if (shm_feed_create(&o, &fd) < 0 || shm_feed_writer_open(fd, &w) < 0 ||
	    pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	shm_feed__test_trim_chunk = 4096;
	uint64_t last = 0, seq = 1;
	bool fresh = true;
	pid_t pid = spawn(fd, p, child_flags);
	usleep(20000); /* the first child opens at the end before anything is published */
	uint64_t end = now_ms() + duration_ms, next_kill = now_ms() + 2 + (uint64_t)(rand() % 7);
	while (now_ms() < end) {
		/* pace: at most 2,000 entries (~1 MiB) ahead of what was handled */
		if (seq - 1 - last < 2000)
			for (int i = 0; i < 20; i++, seq++) {
				fo_build(seq, 1, &fb);
				if (shm_feed_publish(w, &fb.pub, NULL) < 0)
					return -1;
			}
		(void)shm_feed_wake(w);
		usleep(200);
		take(p[0], res, &last, &fresh);
		if (now_ms() >= next_kill) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			res->kills++;
			take(p[0], res, &last, &fresh);
			fresh = true;
			pid = spawn(fd, p, child_flags);
			next_kill = now_ms() + 2 + (uint64_t)(rand() % 7);
		}
	}
	res->published = seq - 1;
	(void)shm_feed_wake(w);
	for (uint64_t t = now_ms() + 5000; last != res->published && now_ms() < t;) {
		usleep(1000);
		take(p[0], res, &last, &fresh);
		(void)shm_feed_wake(w);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	take(p[0], res, &last, &fresh);
	if (last != res->published && !(child_flags & SHM_FEED_TEST_NO_RESUME))
		res->lost_tail = res->published - last;
	close(p[0]);
	close(p[1]);
	shm_feed_close(w);
	close(fd);
	shm_feed__test_trim_chunk = 0;
	return 0;
}

int main(void)
{
	struct result ok, neg;
	signal(SIGPIPE, SIG_IGN);
	srand((unsigned)getpid());
	uint64_t t0 = now_ms();
	if (run(0, 2500, &ok) < 0) {
		perror("feed-durable: setup");
		return 1;
	}
	printf("durable consumer under kill -9 (%.1f s): %llu published, %llu handled, %llu "
	       "kills, gaps=%llu dups=%llu bad=%llu laps=%llu lost_tail=%llu\n",
	       (double)(now_ms() - t0) / 1e3, (unsigned long long)ok.published,
	       (unsigned long long)ok.handled, (unsigned long long)ok.kills,
	       (unsigned long long)ok.gaps, (unsigned long long)ok.dups, (unsigned long long)ok.bad,
	       (unsigned long long)ok.laps, (unsigned long long)ok.lost_tail);
	t0 = now_ms();
	if (run(SHM_FEED_TEST_NO_RESUME, 1000, &neg) < 0) {
		perror("feed-durable: setup");
		return 1;
	}
	printf("negative control (no resume) (%.1f s): %llu published, %llu handled, %llu kills, "
	       "gaps=%llu dups=%llu\n",
	       (double)(now_ms() - t0) / 1e3, (unsigned long long)neg.published,
	       (unsigned long long)neg.handled, (unsigned long long)neg.kills,
	       (unsigned long long)neg.gaps, (unsigned long long)neg.dups);
	bool pass = ok.kills >= 100 && ok.handled >= ok.published && !ok.gaps && !ok.dups &&
	            !ok.bad && !ok.laps && !ok.lost_tail && neg.gaps > 0;
	printf("feed-durable: %s\n", pass ? "PASS" : "FAIL");
	return pass ? 0 : 1;
}
