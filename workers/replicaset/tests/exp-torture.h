/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/tests/exp-torture.h: multi-process kill -9 torture of the shared
 * expectations, shared by test-exp-torture.c (short, in `make unit`) and soak-exp-torture.c.
 *
 * Cast: NW worker processes, each the lease holder of the keys k with k % NW == its id (what
 * the work queue guarantees), one informer process, and the parent, which kill -9s workers and
 * the informer at random and restarts them. Workers "call the API" by sending notices through
 * a SOCK_SEQPACKET socket; the informer receives them (the watch) and records observations.
 * A notice being handled when the informer dies is lost, as an event would be.
 *
 * Oracles (any failure counts a violation, the first one is printed):
 *  P1 exactness: right after ExpectCreations(n), adds_left is n minus at most the notices of
 *     that key still unprocessed at that moment (sent - processed, both counted in shared test
 *     memory); right after ExpectDeletions(m) dels_left == m; after all but one deletion of a
 *     round was reported, the record is not satisfied unless a crash rule expired it.
 *  P2 liveness: no key stays unsatisfied for longer than BLOCKED_NS, whatever was killed.
 *  P3 final: after the chaos stops, every key is satisfied within BLOCKED_NS.
 *  P4 consistency record: EnsureReady only ever reports an RV that was written for that key
 *     (no torn record after kill -9 mid-WroteAt), and WroteAt's maximum reads back.
 *  P5 delete and reuse (E7): now and then a worker deletes its ReplicaSet (the informer gets
 *     the delete event and calls informer_delete, the worker's sync frees the slot) and the
 *     key comes back under a new name (incarnation), so far more distinct keys pass through
 *     the 64 slots than fit: a slot that is never freed ends the run with -ENOSPC. A new
 *     incarnation's first check must be ABSENT, and P1 must hold for it although informerd
 *     still delivers late events of the old name and the slot it reuses carries the old
 *     occupant's tags. A delete interrupted by kill -9 is finished by the restarted worker
 *     (the work queue re-delivers the key). At the end no more than NKEYS slots are LIVE.
 * Negative controls: RS_EXP_FAULT_IGNORE_GEN must trip P1, RS_EXP_FAULT_NO_ORPHAN_RULE must
 * trip P2/P3, RS_EXP_FAULT_RESET_SEQ (a reused slot's seq restarts) must trip P1.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workers/replicaset/expectations-fault.h"
#include "workers/replicaset/expectations.h"

#define NW         4
#define NKEYS      32
#define MS         INT64_C(1000000)
#define GRACE_NS   (300 * MS)
#define BLOCKED_NS (3000 * MS)

enum { N_CREATE = 1, N_DELETE = 2, N_NOISE_DELETE = 3, N_RS_DELETE = 4 };

struct notice {
	uint32_t op, key, round, pod;
};

struct shared {
	_Atomic uint64_t violations;
	_Atomic uint64_t rounds, orphan_expiries, torn;
	_Atomic uint64_t sent[NKEYS], processed[NKEYS];
	_Atomic int64_t pending_since[NKEYS]; /* 0 = not pending */
	_Atomic uint32_t round[NKEYS];
	_Atomic uint64_t cons_written[NKEYS]; /* how many RVs were handed to rs_exp_wrote_at */
	_Atomic uint64_t cons_checks;
	_Atomic uint32_t incarn[NKEYS];   /* the key's current name is rs-<k>-i<incarn> */
	_Atomic uint32_t deleting[NKEYS]; /* 0, or the incarnation a pending delete moves to */
	_Atomic uint64_t rs_deletes, fresh_checks;
	_Atomic int stop;
	char first[256];
	_Atomic int first_taken;
};

static struct shared *T;

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	atomic_fetch_add(&T->violations, 1);
	int z = 0;
	if (atomic_compare_exchange_strong(&T->first_taken, &z, 1)) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(T->first, sizeof T->first, fmt, ap);
		va_end(ap);
	}
}

static void keyname_i(char *buf, size_t n, unsigned k, uint32_t incarn)
{
	snprintf(buf, n, "ns/rs-%02u-i%u", k, incarn);
}

static void keyname(char *buf, size_t n, unsigned k)
{
	keyname_i(buf, n, k, atomic_load(&T->incarn[k]));
}

static void podname(char *buf, size_t n, unsigned k, unsigned round, unsigned p)
{
	snprintf(buf, n, "ns/rs-%02u-r%u-p%u", k, round, p);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void send_notice(int sock, uint32_t op, uint32_t k, uint32_t round, uint32_t pod)
{
	/* the name's incarnation rides in the pod field's high half (the RS delete carries it in
	 * round) */
	if (op != N_RS_DELETE)
		pod |= (atomic_load(&T->incarn[k]) & 0xffff) << 16;
	struct notice m = {op, k, round, pod};
	if (op == N_CREATE)
		atomic_fetch_add(&T->sent[k],
		                 1); /* before the send: an over-estimate when killed */
	while (send(sock, &m, sizeof m, 0) < 0 && errno == EINTR)
		;
}

static void check_blocked(unsigned k, bool pending, int64_t now)
{
	if (!pending) {
		atomic_store(&T->pending_since[k], 0);
		return;
	}
	int64_t since = atomic_load(&T->pending_since[k]);
	if (since == 0)
		atomic_store(&T->pending_since[k], now);
	else if (now - since > BLOCKED_NS && !atomic_load(&T->stop))
		violation("P2: key %u unsatisfied for %lld ms", k, (long long)((now - since) / MS));
}

/* The consistency record under kill -9 (P4): the i-th RV written for key k is
 * j * 10^12 + j with j = i + 1, so successive ones differ in their first and last 8-byte
 * words; whatever EnsureReady reports must be one of them, never a mix of two (torn). */
#define CONS_SPLIT UINT64_C(1000000000000)
static uint64_t cons_value(uint64_t i)
{
	return (i + 1) * CONS_SPLIT + (i + 1);
}
static void cons_round(struct rs_exp *e, const char *key, unsigned k)
{
	const char *read[2] = {"1", "1"};
	struct rs_cons_stale st;
	int r = rs_exp_ensure_ready(e, key, read, &st);
	if (r == 1) {
		uint64_t v = strtoull(st.wrote_rv, NULL, 10);
		uint64_t n = atomic_load(&T->cons_written[k]);
		uint64_t j = v / CONS_SPLIT;
		if (j == 0 || v % CONS_SPLIT != j || j > n)
			violation("P4: key %u consistency record holds %s, never written", k,
			          st.wrote_rv);
		atomic_fetch_add(&T->cons_checks, 1);
	}
	/* upstream keeps the max: write a new maximum, sometimes an older one */
	uint64_t i = atomic_fetch_add(&T->cons_written[k], 1);
	char rv[32];
	snprintf(rv, sizeof rv, "%llu", (unsigned long long)cons_value(i));
	if (rs_exp_wrote_at(e, key, "uid", RS_CONS_PODS, rv) < 0)
		violation("P4: wrote_at failed for key %u", k);
	/* read back: the stored RV is the maximum written, i.e. this one */
	r = rs_exp_ensure_ready(e, key, read, &st);
	if (r != 1 || strcmp(st.wrote_rv, rv) != 0)
		violation("P4: key %u reads back %s after writing %s", k,
		          r == 1 ? st.wrote_rv : "(none)", rv);
}

static void send_notice(int sock, uint32_t op, uint32_t k, uint32_t round, uint32_t pod);

/* P5: the RS of key k is deleted. deleting[k] = next incarnation marks the delete as pending
 * until the slot is freed; a worker killed in between finishes it when restarted (as the work
 * queue re-delivers the key), so the step is idempotent. */
static void rs_delete_finish(struct rs_exp *e, unsigned k)
{
	uint32_t next = atomic_load(&T->deleting[k]);
	if (!next)
		return;
	char key[64];
	keyname_i(key, sizeof key, k, next - 1);
	int r = rs_exp_delete(e, key); /* the sync finds the RS gone: DeleteExpectations */
	if (r < 0 && r != -ENOENT)
		violation("P5: deleting key %u failed: %d", k, r);
	atomic_store(&T->incarn[k], next);
	atomic_store(&T->deleting[k], 0);
	atomic_fetch_add(&T->rs_deletes, 1);
}

static void rs_delete(struct rs_exp *e, int sock, unsigned k, uint64_t *r)
{
	uint32_t cur = atomic_load(&T->incarn[k]);
	atomic_store(&T->deleting[k], cur + 1);
	send_notice(sock, N_RS_DELETE, k, cur, 0); /* the informer's delete event */
	usleep((useconds_t)(rnd(r) % 300));
	rs_delete_finish(e, k);
}

static void worker_main(int fd, int sock, unsigned id, uint64_t seed)
{
	struct rs_exp *e;
	if (rs_exp_attach(fd, RS_EXP_WORKER, 0, &e) < 0)
		_exit(2);
	uint64_t r = seed | 1;
	char key[64];
	for (unsigned k = id; k < NKEYS; k += NW)
		rs_delete_finish(e, k); /* a delete the killed predecessor did not finish */
	while (!atomic_load(&T->stop)) {
		unsigned k = id + NW * (unsigned)(rnd(&r) % (NKEYS / NW));
		keyname(key, sizeof key, k);
		struct rs_exp_state st;
		int64_t now = rs_exp_now();
		bool ok = rs_exp_satisfied(e, key, now, &st);
		if (atomic_load(&T->round[k]) == 0) {
			/* P5: a new incarnation starts clean in whatever slot it will reuse */
			if (st.verdict != RS_EXP_ABSENT)
				violation("P5: new key %s found a record (verdict %d)", key,
				          st.verdict);
			atomic_fetch_add(&T->fresh_checks, 1);
		}
		check_blocked(k, !ok, now);
		if (!ok) {
			usleep(200);
			continue;
		}
		if (st.verdict == RS_EXP_ORPHAN_EXPIRED)
			atomic_fetch_add(&T->orphan_expiries, 1);
		if (st.verdict == RS_EXP_TORN)
			atomic_fetch_add(&T->torn, 1);
		uint32_t round = atomic_load(&T->round[k]) + 1;
		atomic_store(&T->round[k], round);
		if (rnd(&r) & 1) {
			int64_t n = 1 + (int64_t)(rnd(&r) % 6);
			uint64_t processed = atomic_load(&T->processed[k]);
			uint64_t sent = atomic_load(&T->sent[k]);
			if (rs_exp_expect_creations(e, key, n, rs_exp_now()) < 0)
				_exit(3);
			rs_exp_satisfied(e, key, rs_exp_now(), &st);
			int64_t stale = (int64_t)(sent - processed);
			if (st.adds_left > n || st.adds_left < n - stale)
				violation("P1: key %u adds_left %lld after ExpectCreations(%lld), "
				          "stale <= %lld",
				          k, (long long)st.adds_left, (long long)n,
				          (long long)stale);
			/* some creations "fail": slow start skips them */
			int64_t skipped = (rnd(&r) % 4 == 0) ? (int64_t)(rnd(&r) % (uint64_t)n) : 0;
			for (int64_t i = 0; i < n - skipped; i++) {
				send_notice(sock, N_CREATE, k, round, 0);
				if (rnd(&r) % 8 == 0)
					usleep(50);
			}
			if (skipped)
				rs_exp_lower_creations(e, key, skipped);
			rs_exp_settle(e, key);
		} else {
			unsigned m = 1 + (unsigned)(rnd(&r) % 6);
			char names[6][80];
			const char *keys[6];
			for (unsigned i = 0; i < m; i++) {
				podname(names[i], sizeof names[i], k, round, i);
				keys[i] = names[i];
			}
			if (rs_exp_expect_deletions(e, key, keys, m, rs_exp_now()) < 0)
				_exit(3);
			rs_exp_satisfied(e, key, rs_exp_now(), &st);
			if (st.dels_left != (int64_t)m)
				violation("P1: key %u dels_left %lld after ExpectDeletions(%u)", k,
				          (long long)st.dels_left, m);
			unsigned failed = (unsigned)(rnd(&r) % m); /* this one's DELETE fails */
			for (unsigned i = 0; i + 1 < m; i++) {
				if (i == failed)
					rs_exp_deletion_failed(e, key, keys[i]);
				else
					send_notice(sock, N_DELETE, k, round, i);
				if (rnd(&r) % 3 == 0) /* the same deletion seen twice */
					send_notice(sock, N_DELETE, k, round, i);
			}
			send_notice(sock, N_NOISE_DELETE, k, round, 99); /* not ours */
			usleep(100 + (unsigned)(rnd(&r) % 400));
			/* one deletion still outstanding: never satisfied except by a crash rule */
			bool sat = rs_exp_satisfied(e, key, rs_exp_now(), &st);
			if (sat && st.verdict != RS_EXP_ORPHAN_EXPIRED &&
			    st.verdict != RS_EXP_EXPIRED)
				violation("P1: key %u satisfied (verdict %d) with a deletion "
				          "outstanding",
				          k, st.verdict);
			if (failed == m - 1)
				rs_exp_deletion_failed(e, key, keys[m - 1]);
			else
				send_notice(sock, N_DELETE, k, round, m - 1);
			rs_exp_settle(e, key);
		}
		atomic_fetch_add(&T->rounds, 1);
		cons_round(e, key, k);
		if (rnd(&r) % 8 == 0) {
			rs_delete(e, sock, k, &r);
			atomic_store(&T->round[k], 0);
			atomic_store(&T->pending_since[k], 0);
		}
	}
	rs_exp_detach(e);
	_exit(0);
}

static void informer_main(int fd, int sock)
{
	struct rs_exp *e;
	if (rs_exp_attach(fd, RS_EXP_INFORMER, rs_exp_now(), &e) < 0)
		_exit(2);
	char key[64], pod[80];
	for (;;) {
		struct notice m;
		ssize_t n = recv(sock, &m, sizeof m, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof m)
			_exit(4);
		/* events carry the name they were sent for (late events of an old incarnation) */
		keyname_i(key, sizeof key, m.key, m.op == N_RS_DELETE ? m.round : m.pod >> 16);
		m.pod &= 0xffff;
		if (m.op == N_RS_DELETE) {
			rs_exp_informer_delete(e, key);
		} else if (m.op == N_CREATE) {
			rs_exp_creation_observed(e, key);
			atomic_fetch_add(&T->processed[m.key], 1);
		} else {
			podname(pod, sizeof pod, m.key, m.round,
			        m.op == N_NOISE_DELETE ? 999 : m.pod);
			rs_exp_deletion_observed(e, key, pod);
		}
	}
}

struct torture_result {
	uint64_t violations, rounds, worker_kills, informer_kills, orphan_expiries, torn,
	        cons_checks;
	uint64_t rs_deletes, fresh_checks, live_at_end;
	char first[256];
};

static int torture_run(int64_t duration_ms, unsigned fault, uint64_t seed,
                       struct torture_result *res)
{
	T = mmap(NULL, sizeof *T, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (T == MAP_FAILED)
		return -errno;
	memset(T, 0, sizeof *T);
	rs_exp_fault_mask = fault; /* inherited by every child */
	struct rs_exp_create_opts o = {.capacity = 64, .orphan_grace_ns = GRACE_NS};
	int fd = rs_exp_memfd_create(&o);
	if (fd < 0)
		return fd;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	int rcvbuf = 4 << 20;
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	pid_t workers[NW], inf;
	uint64_t r = seed | 1;
	for (unsigned i = 0; i < NW; i++)
		if ((workers[i] = fork()) == 0)
			worker_main(fd, sv[0], i, rnd(&r));
	if ((inf = fork()) == 0)
		informer_main(fd, sv[1]);
	memset(res, 0, sizeof *res);
	int64_t end = rs_exp_now() + duration_ms * MS;
	while (rs_exp_now() < end) {
		usleep(5000 + (useconds_t)(rnd(&r) % 20000));
		uint64_t dice = rnd(&r) % 100;
		if (dice < 30) {
			unsigned i = (unsigned)(rnd(&r) % NW);
			kill(workers[i], SIGKILL);
			waitpid(workers[i], NULL, 0);
			res->worker_kills++;
			if ((workers[i] = fork()) == 0)
				worker_main(fd, sv[0], i, rnd(&r));
		} else if (dice < 32 ||
		           /* at 2 % a turn a short run could end without one (seen once in ~370
		            * turns): the second half always has at least one informer kill */
		           (res->informer_kills == 0 &&
		            rs_exp_now() > end - duration_ms * MS / 2)) {
			kill(inf, SIGKILL);
			waitpid(inf, NULL, 0);
			res->informer_kills++;
			if ((inf = fork()) == 0)
				informer_main(fd, sv[1]);
		}
	}
	/* quiesce: workers finish their round and exit; the informer drains the socket */
	atomic_store(&T->stop, 1);
	for (unsigned i = 0; i < NW; i++) {
		int status;
		waitpid(workers[i], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			violation("worker %u exited with status %d", i, status);
	}
	/* P3: every key satisfied within BLOCKED_NS */
	struct rs_exp *e;
	if (rs_exp_attach(fd, RS_EXP_WORKER, 0, &e) < 0)
		return -EPROTO;
	int64_t deadline = rs_exp_now() + BLOCKED_NS;
	for (unsigned k = 0; k < NKEYS; k++) {
		char key[64];
		keyname(key, sizeof key, k);
		struct rs_exp_state st;
		while (!rs_exp_satisfied(e, key, rs_exp_now(), &st)) {
			if (rs_exp_now() > deadline) {
				violation("P3: key %u still unsatisfied after the chaos (adds %lld "
				          "dels %lld)",
				          k, (long long)st.adds_left, (long long)st.dels_left);
				break;
			}
			usleep(1000);
		}
	}
	/* P5: freed slots do not leak; what is LIVE is at most one record per key */
	uint32_t counts[4];
	rs_exp_count(e, counts);
	res->live_at_end = counts[RS_EXP_SLOT_LIVE];
	if (counts[RS_EXP_SLOT_LIVE] + counts[RS_EXP_SLOT_CLAIMED] > NKEYS)
		violation("P5: %u slots LIVE and %u CLAIMED for %u keys", counts[RS_EXP_SLOT_LIVE],
		          counts[RS_EXP_SLOT_CLAIMED], NKEYS);
	rs_exp_detach(e);
	kill(inf, SIGKILL);
	waitpid(inf, NULL, 0);
	close(sv[0]);
	close(sv[1]);
	close(fd);
	res->violations = atomic_load(&T->violations);
	res->rounds = atomic_load(&T->rounds);
	res->orphan_expiries = atomic_load(&T->orphan_expiries);
	res->torn = atomic_load(&T->torn);
	res->cons_checks = atomic_load(&T->cons_checks);
	res->rs_deletes = atomic_load(&T->rs_deletes);
	res->fresh_checks = atomic_load(&T->fresh_checks);
	memcpy(res->first, T->first, sizeof res->first);
	munmap(T, sizeof *T);
	rs_exp_fault_mask = 0;
	return 0;
}

static void torture_print(const char *name, const struct torture_result *r)
{
	printf("%s: rounds=%llu worker_kills=%llu informer_kills=%llu orphan_expiries=%llu "
	       "torn=%llu "
	       "cons_checks=%llu rs_deletes=%llu fresh_checks=%llu live_at_end=%llu "
	       "violations=%llu%s%s\n",
	       name, (unsigned long long)r->rounds, (unsigned long long)r->worker_kills,
	       (unsigned long long)r->informer_kills, (unsigned long long)r->orphan_expiries,
	       (unsigned long long)r->torn, (unsigned long long)r->cons_checks,
	       (unsigned long long)r->rs_deletes, (unsigned long long)r->fresh_checks,
	       (unsigned long long)r->live_at_end, (unsigned long long)r->violations,
	       r->violations ? " first: " : "", r->violations ? r->first : "");
}
