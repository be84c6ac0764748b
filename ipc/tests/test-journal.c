/* SPDX-License-Identifier: Apache-2.0 */
/* ipc/tests/test-journal.c: durable keys (ipc/journal.h) and the queue owner's use of them.
 *
 * Units: put/drop/reopen, growth past the first size and the shrink back, hostile slots freed
 * at open (J3), and the owner: a key added in durable mode outlives the owner and is queued by
 * the next one, leaves the journal only once its work is done (not while it waits in the delay
 * heap), and a key added outside durable mode is not kept.
 *
 * Kill test (J2): a child owns the journal and puts keys key-<n> (n counting up) and drops
 * random live ones, reporting "put n" after put returned and "drop n" before it drops. The
 * parent SIGKILLs it every 1-4 ms, opens the journal as the next owner and checks: no slot
 * fails J3 (corrupt == 0); every key reported put and not reported dropped is there (nothing
 * promised lost); every key there was put at some time (n <= the last n started). Then a new
 * child continues from what is there. Negative control: the children publish LIVE before the
 * body (ipc_journal__test_early_live): the opener must find corrupt slots.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/journal.h"
#include "ipc/loop.h"
#include "ipc/queue.h"
#include "ipc/tests/tests.h"

static int count_cb(const char *key, uint32_t slot, void *ud)
{
	(void)key;
	(void)slot;
	(*(int *)ud)++;
	return 0;
}

static int journal_count(int fd)
{
	struct ipc_journal *j;
	int n = 0;
	CHECK_EQ(ipc_journal_open(fd, &j), 0);
	CHECK_EQ(ipc_journal_foreach(j, count_cb, &n), 0);
	ipc_journal_close(j);
	return n;
}

static void test_units(void)
{
	int fd = ipc_journal_memfd_create("t");
	CHECK(fd >= 0);
	struct ipc_journal *j;
	struct ipc_journal_stats st;
	CHECK_EQ(ipc_journal_open(fd, &j), 0);
	CHECK_EQ(ipc_journal_put(j, ""), -EINVAL);
	char big[IPC_QUEUE_KEY_MAX + 2];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	CHECK_EQ(ipc_journal_put(j, big), -EINVAL);
	big[IPC_QUEUE_KEY_MAX] = 0; /* the longest key fits */
	int64_t a = ipc_journal_put(j, big), b = ipc_journal_put(j, "ns/b");
	CHECK(a >= 0 && b >= 0 && a != b);
	ipc_journal_drop(j, (uint32_t)a);
	ipc_journal_drop(j, (uint32_t)a); /* twice: ignored */
	ipc_journal_drop(j, 1u << 30);    /* out of range: ignored */
	ipc_journal_close(j);
	CHECK_EQ(journal_count(fd), 1);
	/* growth: 1,000 keys (the first size holds 120), then back to the first size */
	CHECK_EQ(ipc_journal_open(fd, &j), 0);
	int64_t sl[1000];
	for (int i = 0; i < 1000; i++) {
		char k[32];
		snprintf(k, sizeof(k), "ns/k%d", i);
		sl[i] = ipc_journal_put(j, k);
		CHECK(sl[i] >= 0);
	}
	ipc_journal_stats(j, &st);
	CHECK_EQ(st.live, 1001);
	CHECK(st.slots >= 1001);
	ipc_journal_close(j);
	CHECK_EQ(journal_count(fd), 1001);
	CHECK_EQ(ipc_journal_open(fd, &j), 0);
	for (int i = 0; i < 1000; i++)
		ipc_journal_drop(j, (uint32_t)sl[i]);
	ipc_journal_drop(j, (uint32_t)b);
	ipc_journal_stats(j, &st);
	CHECK_EQ(st.live, 0);
	ipc_journal_close(j);
	struct stat sb;
	CHECK_EQ(fstat(fd, &sb), 0);
	CHECK_EQ(sb.st_size, IPC_JOURNAL_FIRST);
	/* hostile slots (J3): a LIVE slot with a bad length, and one with a bad checksum */
	CHECK_EQ(ipc_journal_open(fd, &j), 0);
	int64_t c = ipc_journal_put(j, "ns/c"), d = ipc_journal_put(j, "ns/d");
	ipc_journal_close(j);
	uint16_t badlen = IPC_QUEUE_KEY_MAX + 100;
	CHECK_EQ(pwrite(fd, &badlen, 2, IPC_JOURNAL_HDR + c * IPC_JOURNAL_SLOT + 4), 2);
	CHECK_EQ(pwrite(fd, "X", 1, IPC_JOURNAL_HDR + d * IPC_JOURNAL_SLOT + 16), 1);
	CHECK_EQ(ipc_journal_open(fd, &j), 0);
	ipc_journal_stats(j, &st);
	CHECK_EQ(st.live, 0);
	CHECK_EQ(st.corrupt, 2);
	ipc_journal_close(j);
	CHECK_EQ(journal_count(fd), 0);
	/* not a journal */
	int q = ipc_queue_memfd_create("q");
	CHECK_EQ(ipc_journal_open(q, &j), -EPROTO);
	close(q);
	close(fd);
}

static void settle(struct ipc_queue_owner *o, struct ipc_loop *loop)
{
	for (int i = 0; i < 3; i++) {
		CHECK(ipc_queue_owner_pump(o) >= 0);
		CHECK(ipc_loop_run_once(loop, 0) >= 0);
	}
}

static void test_owner(void)
{
	struct ipc_loop *loop;
	struct ipc_queue_owner *o;
	char got[IPC_QUEUE_KEY_MAX + 1];
	CHECK_EQ(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	int qfd = ipc_queue_memfd_create("test"), jfd = ipc_journal_memfd_create("test");
	CHECK(qfd >= 0 && jfd >= 0);
	CHECK_EQ(ipc_queue_owner_new(&o, loop, qfd, NULL), 0);
	CHECK_EQ(ipc_queue_owner_attach_journal(o, jfd), 0);
	CHECK_EQ(ipc_queue_owner_add(o, "plain"), 0);
	ipc_queue_owner_set_durable(o, true);
	CHECK_EQ(ipc_queue_owner_add(o, "ns/deleted"), 0);
	CHECK_EQ(ipc_queue_owner_add_after(o, "ns/later", 60u * 1000000u), 0);
	ipc_queue_owner_set_durable(o, false);
	CHECK_EQ(ipc_queue_owner_durable_keys(o), 2);
	/* the owner goes away with all three queued: only the durable two come back */
	o = ipc_queue_owner_free(o);
	CHECK_EQ(ipc_queue_owner_new(&o, loop, qfd, NULL), 0);
	CHECK_EQ(ipc_queue_owner_attach_journal(o, jfd), 2);
	settle(o, loop);
	CHECK_EQ(ipc_queue_owner_len(o), 2);
	struct ipc_queue *w;
	CHECK_EQ(ipc_queue_attach(&w, qfd, IPC_QUEUE_WORKER, 1), 0);
	int seen = 0;
	for (int i = 0; i < 2; i++) {
		settle(o, loop);
		CHECK(ipc_queue_get(w, got, sizeof(got), 0) > 0);
		CHECK(!strcmp(got, "ns/deleted") || !strcmp(got, "ns/later"));
		seen++;
		/* the first fails and waits in the delay heap: still durable */
		CHECK_EQ(ipc_queue_done(w, i == 0 ? IPC_QUEUE_DONE_RATE_LIMITED : 0, 0), 0);
		settle(o, loop);
		CHECK_EQ(ipc_queue_owner_durable_keys(o), i == 0 ? 2 : 1);
	}
	CHECK_EQ(seen, 2);
	/* the retried one comes back from the heap and finishes: the journal is empty */
	for (int t = 0; t < 200 && ipc_queue_owner_durable_keys(o); t++) {
		settle(o, loop);
		if (ipc_queue_get(w, got, sizeof(got), 0) > 0)
			CHECK_EQ(ipc_queue_done(w, IPC_QUEUE_DONE_FORGET, 0), 0);
		usleep(1000);
	}
	CHECK_EQ(ipc_queue_owner_durable_keys(o), 0);
	ipc_queue_free(w);
	o = ipc_queue_owner_free(o);
	CHECK_EQ(journal_count(jfd), 0);
	close(qfd);
	close(jfd);
	ipc_loop_free(loop);
}

/* ---- kill test ---- */
struct msg {
	uint32_t op; /* 1 put done, 2 drop starting, 3 put starting */
	uint32_t n;
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#define MAXN 400000
static uint8_t state_[MAXN]; /* parent's view: 0 never, 1 put acknowledged, 2 drop started */

struct kid_key {
	uint32_t n, slot;
};

static int collect(const char *key, uint32_t slot, void *ud)
{
	struct {
		struct kid_key *k;
		size_t n;
	} *c = ud;
	unsigned n;
	if (sscanf(key, "key-%u", &n) != 1)
		n = UINT32_MAX;
	c->k[c->n++] = (struct kid_key){n, slot};
	return 0;
}

static void kid(int fd, int wp, uint32_t start, bool early)
{
	struct ipc_journal *j;
	ipc_journal__test_early_live = early;
	if (ipc_journal_open(fd, &j) < 0)
		_exit(1);
	static struct kid_key live[MAXN];
	struct {
		struct kid_key *k;
		size_t n;
	} c = {live, 0};
	ipc_journal_foreach(j, collect, &c);
	srand((unsigned)getpid());
	for (uint32_t n = start;; n++) {
		if (c.n > 50 && rand() % 2) {
			size_t i = (size_t)rand() % c.n;
			struct msg m = {2, live[i].n};
			if (write(wp, &m, sizeof(m)) != sizeof(m))
				_exit(2);
			ipc_journal_drop(j, live[i].slot);
			live[i] = live[--c.n];
		}
		char key[40];
		snprintf(key, sizeof(key), "key-%u", n);
		struct msg m = {3, n};
		if (write(wp, &m, sizeof(m)) != sizeof(m))
			_exit(2);
		int64_t s = ipc_journal_put(j, key);
		if (s < 0)
			_exit(3);
		live[c.n++] = (struct kid_key){n, (uint32_t)s};
		m.op = 1;
		if (write(wp, &m, sizeof(m)) != sizeof(m))
			_exit(2);
		if (n % 8 == 0)
			usleep(50);
	}
}

struct kres {
	unsigned kills, lost, foreign, corrupt, checked;
};

static void kill_run(bool early, uint64_t ms, struct kres *r)
{
	int fd = ipc_journal_memfd_create("kill"), p[2];
	CHECK(fd >= 0);
	CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
	memset(state_, 0, sizeof(state_));
	*r = (struct kres){0};
	uint32_t next = 1, started_max = 0;
	uint64_t end = now_ms() + ms;
	static struct kid_key live[MAXN];
	while (now_ms() < end && next < MAXN - 100000) {
		pid_t pid = fork();
		if (pid == 0) {
			close(p[0]);
			kid(fd, p[1], next, early);
		}
		usleep(1000 + (unsigned)(rand() % 3000));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		r->kills++;
		/* what the child said (the pipe holds it all: it is read after each kill) */
		fcntl(p[0], F_SETFL, O_NONBLOCK);
		struct msg m;
		while (read(p[0], &m, sizeof(m)) == sizeof(m)) {
			if (m.n >= MAXN)
				continue;
			if (m.op == 1)
				state_[m.n] = 1;
			else if (m.op == 2)
				state_[m.n] = 2;
			else if (m.n > started_max)
				started_max = m.n;
		}
		/* the next owner's view */
		struct ipc_journal *j;
		struct ipc_journal_stats st;
		CHECK_EQ(ipc_journal_open(fd, &j), 0);
		ipc_journal_stats(j, &st);
		r->corrupt += (unsigned)st.corrupt;
		struct {
			struct kid_key *k;
			size_t n;
		} c = {live, 0};
		ipc_journal_foreach(j, collect, &c);
		ipc_journal_close(j);
		static uint8_t present[MAXN];
		memset(present, 0, sizeof(present));
		for (size_t i = 0; i < c.n; i++) {
			if (c.k[i].n == UINT32_MAX || c.k[i].n > started_max)
				r->foreign++;
			else
				present[c.k[i].n] = 1;
		}
		for (uint32_t n = 1; n <= started_max; n++) {
			if (state_[n] == 1 && !present[n])
				r->lost++;
			if (present[n] && state_[n] != 2)
				state_[n] = 1; /* a put the kill cut after LIVE: it is there */
			if (state_[n] == 2 && !present[n])
				state_[n] = 0;
			if (state_[n] == 2 && present[n])
				state_[n] = 1; /* the drop had not happened */
			r->checked++;
		}
		next = started_max + 1;
	}
	close(p[0]);
	close(p[1]);
	close(fd);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	srand((unsigned)getpid());
	test_units();
	fprintf(stderr, "units: ok\n");
	test_owner();
	fprintf(stderr, "queue owner with a journal: ok\n");
	struct kres ok, neg;
	uint64_t t0 = now_ms();
	kill_run(false, 2000, &ok);
	fprintf(stderr,
	        "journal under kill -9 (%.1f s): %u kills, %u key checks, lost=%u foreign=%u "
	        "corrupt=%u\n",
	        (double)(now_ms() - t0) / 1e3, ok.kills, ok.checked, ok.lost, ok.foreign,
	        ok.corrupt);
	t0 = now_ms();
	kill_run(true, 1000, &neg);
	fprintf(stderr,
	        "negative control (LIVE before the body) (%.1f s): %u kills, lost=%u foreign=%u "
	        "corrupt=%u\n",
	        (double)(now_ms() - t0) / 1e3, neg.kills, neg.lost, neg.foreign, neg.corrupt);
	bool pass = ok.kills >= 100 && !ok.lost && !ok.foreign && !ok.corrupt && neg.corrupt > 0;
	fprintf(stderr, "journal: %s\n", pass ? "PASS" : "FAIL");
	return pass ? 0 : 1;
}
