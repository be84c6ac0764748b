/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-ipc: the work queue against two controls, all measured in this one run (ratios only
 * mean something within one run on this noisy 2-vCPU VM, ipc-calibration.md).
 *
 *   queue     : owner process (adds locally, as informerd does) -> worker process (Get/Done),
 *               the full client-go protocol: dedup hash, FIFO, lease, reply, Done.
 *   baseline  : plain eventfd + epoll hand-off of u64 items through an SPSC ring, one
 *               unconditional eventfd write per batch (per item at b=1), consumer in epoll_wait.
 *   efdproto  : the same ring driven by eventfd with the queue's wake protocol (sleep flag,
 *               no wake while the consumer is awake, adaptive spin before sleeping): separates
 *               the primitive from the protocol (calibration finding 4).
 *
 * Lines (bench: <name> <value> <unit>):
 *   ipc.wake_p99_us / ipc.baseline_wake_p99_us : one item, consumer asleep, cross-core, one-way
 *       (CLOCK_MONOTONIC at hand-off start -> consumer has the item)
 *   ipc.hot_p99_us : item handed over while the consumer spins, cross-core
 *   ipc.ops_per_s.b<N>.<cross|same>, ipc.baseline_ops_per_s..., ipc.efdproto_ops_per_s...
 *   and the ratios ipc.wake_ratio, ipc.ops_ratio.b<N>.<placement> (queue / baseline).
 * Usage: bench-ipc [seconds-per-throughput-cell]   (default 0.5)
 */
#include "ipc/queue.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING       4096u
#define MAXSAMPLES 20000

struct shared {
	_Alignas(64) _Atomic uint32_t go;
	_Atomic uint32_t ready;
	_Alignas(64) _Atomic uint64_t t0; /* producer's stamp of the item in flight */
	_Alignas(64) _Atomic uint64_t count;
	_Atomic uint64_t t_end;
	_Atomic uint32_t nsamples;
	uint64_t samples[MAXSAMPLES];
	/* eventfd ring */
	_Alignas(64) _Atomic uint32_t tail;
	_Alignas(64) _Atomic uint32_t head;
	_Alignas(64) _Atomic uint32_t cons_waiting;
	_Alignas(64) _Atomic uint32_t prod_waiting;
	_Alignas(64) uint64_t ring[RING];
};

static struct shared *sh;
static int ncpu;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu % ncpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double p99_us(void)
{
	uint32_t n = atomic_load(&sh->nsamples);
	if (n == 0)
		return -1;
	qsort(sh->samples, n, sizeof(uint64_t), cmp_u64);
	fprintf(stderr, "  (n=%u p50 %.3f us, p90 %.3f us, p99 %.3f us, p999 %.3f us)\n", n,
	        (double)sh->samples[n / 2] / 1000.0,
	        (double)sh->samples[(size_t)(n * 0.9)] / 1000.0,
	        (double)sh->samples[(size_t)(n * 0.99)] / 1000.0,
	        (double)sh->samples[(size_t)(n * 0.999)] / 1000.0);
	return (double)sh->samples[(size_t)((double)n * 0.99)] / 1000.0;
}

static void reset(void)
{
	memset(sh, 0, sizeof(*sh));
}

static void wait_child(pid_t p)
{
	int st;
	waitpid(p, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench child failed (status %d)\n", st);
		exit(1);
	}
}

static void busy_wait_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		;
}

/* ---- eventfd ring (baseline and efdproto) ------------------------------------------------- */
enum mode { BASELINE, EFDPROTO };

static void efd_wait(int ep)
{
	struct epoll_event ev;
	while (epoll_wait(ep, &ev, 1, -1) < 0 && errno == EINTR)
		;
	uint64_t v;
	ssize_t r = read(ev.data.fd, &v, sizeof(v));
	(void)r;
}

static void efd_signal(int fd)
{
	uint64_t one = 1;
	ssize_t r = write(fd, &one, sizeof(one));
	(void)r;
}

/* conditional wake (W3 in queue-abi.h) */
static void wake_if_waiting(_Atomic uint32_t *flag, int fd)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(flag, memory_order_relaxed) &&
	    atomic_exchange_explicit(flag, 0, memory_order_seq_cst))
		efd_signal(fd);
}

static int mkep(int fd)
{
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	return ep;
}

/* Consumer: drains items; UINT64_MAX ends; latency mode records now - item. */
static void ring_consumer(enum mode m, int efd_data, int efd_space, bool latency, int cpu)
{
	pin(cpu);
	int ep = mkep(efd_data);
	uint32_t head = 0;
	/* the queue's rule: spin only when the peer (pinned to cpu0) is on another CPU */
	uint64_t count = 0, spin_ns = cpu != 0 ? 20000 : 0;
	atomic_store(&sh->ready, 1);
	for (;;) {
		uint32_t tail = atomic_load_explicit(&sh->tail, memory_order_acquire);
		if (tail == head) {
			if (m == BASELINE) {
				efd_wait(ep);
				continue;
			}
			/* efdproto: spin (not on a shared core), then sleep on the flag protocol */
			bool got = false;
			if (spin_ns && !latency) {
				uint64_t end = now_ns() + spin_ns;
				for (unsigned k = 0; !got; k++) {
					__builtin_ia32_pause();
					got = atomic_load_explicit(&sh->tail,
					                           memory_order_acquire) != head;
					if ((k & 63) == 63 && now_ns() > end)
						break;
				}
			}
			if (got)
				continue;
			atomic_store_explicit(&sh->cons_waiting, 1, memory_order_relaxed);
			atomic_thread_fence(memory_order_seq_cst);
			if (atomic_load_explicit(&sh->tail, memory_order_acquire) == head)
				efd_wait(ep);
			atomic_store_explicit(&sh->cons_waiting, 0, memory_order_relaxed);
			continue;
		}
		bool stop = false;
		for (; head != tail; head++) {
			uint64_t v = sh->ring[head & (RING - 1)];
			if (v == UINT64_MAX) {
				stop = true;
				head++;
				break;
			}
			if (latency) {
				uint64_t t = now_ns();
				uint32_t n =
				        atomic_load_explicit(&sh->nsamples, memory_order_relaxed);
				if (n < MAXSAMPLES) {
					sh->samples[n] = t - v;
					atomic_store_explicit(&sh->nsamples, n + 1,
					                      memory_order_release);
				}
			}
			count++;
		}
		atomic_store_explicit(&sh->head, head, memory_order_release);
		wake_if_waiting(&sh->prod_waiting, efd_space);
		if (stop)
			break;
	}
	atomic_store(&sh->count, count);
	atomic_store(&sh->t_end, now_ns());
	_exit(0);
}

static void ring_push(enum mode m, int efd_data, int ep_space, const uint64_t *v, uint32_t n,
                      uint32_t *tailp)
{
	uint32_t tail = *tailp;
	while (tail + n - atomic_load_explicit(&sh->head, memory_order_acquire) > RING) {
		atomic_store_explicit(&sh->prod_waiting, 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		if (tail + n - atomic_load_explicit(&sh->head, memory_order_acquire) > RING)
			efd_wait(ep_space);
		atomic_store_explicit(&sh->prod_waiting, 0, memory_order_relaxed);
	}
	for (uint32_t i = 0; i < n; i++)
		sh->ring[(tail + i) & (RING - 1)] = v[i];
	tail += n;
	atomic_store_explicit(&sh->tail, tail, memory_order_release);
	if (m == BASELINE)
		efd_signal(efd_data); /* one unconditional wake per batch */
	else
		wake_if_waiting(&sh->cons_waiting, efd_data);
	*tailp = tail;
}

static double ring_throughput(enum mode m, uint32_t batch, bool cross, double secs)
{
	reset();
	int efd_data = eventfd(0, EFD_CLOEXEC), efd_space = eventfd(0, EFD_CLOEXEC);
	pid_t c = fork();
	if (c == 0)
		ring_consumer(m, efd_data, efd_space, false, cross ? 1 : 0);
	pin(0);
	int ep_space = mkep(efd_space);
	while (!atomic_load(&sh->ready))
		sched_yield();
	uint64_t v[256];
	uint32_t tail = 0;
	uint64_t seq = 0, t_start = now_ns(), t_stop = t_start + (uint64_t)(secs * 1e9);
	while (now_ns() < t_stop) {
		for (int rep = 0; rep < 16; rep++) {
			for (uint32_t i = 0; i < batch; i++)
				v[i] = seq++;
			ring_push(m, efd_data, ep_space, v, batch, &tail);
		}
	}
	uint64_t end = UINT64_MAX;
	ring_push(m, efd_data, ep_space, &end, 1, &tail);
	wait_child(c);
	close(efd_data);
	close(efd_space);
	close(ep_space);
	return (double)atomic_load(&sh->count) /
	       ((double)(atomic_load(&sh->t_end) - t_start) / 1e9);
}

static double ring_cold_latency(int samples)
{
	reset();
	int efd_data = eventfd(0, EFD_CLOEXEC), efd_space = eventfd(0, EFD_CLOEXEC);
	pid_t c = fork();
	if (c == 0)
		ring_consumer(BASELINE, efd_data, efd_space, true, 1);
	pin(0);
	int ep_space = mkep(efd_space);
	while (!atomic_load(&sh->ready))
		sched_yield();
	uint32_t tail = 0;
	for (int i = 0; i < samples; i++) {
		usleep(300); /* the consumer is asleep in epoll_wait */
		uint64_t t = now_ns();
		ring_push(BASELINE, efd_data, ep_space, &t, 1, &tail);
	}
	uint64_t end = UINT64_MAX;
	ring_push(BASELINE, efd_data, ep_space, &end, 1, &tail);
	wait_child(c);
	close(efd_data);
	close(efd_space);
	close(ep_space);
	return p99_us();
}

static void mkkey(char *buf, uint64_t seq)
{
	char tmp[24];
	int n = 0;
	do
		tmp[n++] = (char)('0' + seq % 10);
	while ((seq /= 10) && n < 20);
	buf[0] = 'k';
	for (int i = 0; i < n; i++)
		buf[1 + i] = tmp[n - 1 - i];
	buf[n + 1] = 0;
}

/* ---- the queue ------------------------------------------------------------------------------ */
enum qmode { Q_THROUGHPUT, Q_COLD, Q_HOT };

static void queue_worker(int fd, enum qmode m, int cpu)
{
	pin(cpu);
	struct ipc_queue *q;
	if (ipc_queue_attach(&q, fd, IPC_QUEUE_WORKER, m == Q_THROUGHPUT ? 256 : 1) < 0)
		_exit(2);
	atomic_store(&sh->ready, 1);
	char key[IPC_QUEUE_KEY_MAX + 1];
	uint64_t count = 0;
	for (;;) {
		int r = ipc_queue_get(q, key, sizeof(key), UINT64_MAX);
		if (r < 0)
			_exit(3);
		if (m != Q_THROUGHPUT) {
			uint64_t t = now_ns();
			uint32_t n = atomic_load_explicit(&sh->nsamples, memory_order_relaxed);
			if (key[0] == 'k' && n < MAXSAMPLES) {
				sh->samples[n] =
				        t - atomic_load_explicit(&sh->t0, memory_order_acquire);
				atomic_store_explicit(&sh->nsamples, n + 1, memory_order_release);
			}
		}
		ipc_queue_done(q, 0, 0);
		if (key[0] == 's')
			break;
		count++;
	}
	atomic_store(&sh->count, count);
	atomic_store(&sh->t_end, now_ns());
	ipc_queue_free(q);
	_exit(0);
}

static void owner_setup(int fd, struct ipc_loop **loop, struct ipc_queue_owner **o)
{
	if (ipc_loop_new(loop, IPC_LOOP_BACKEND_AUTO) < 0 ||
	    ipc_queue_owner_new(o, *loop, fd, NULL) < 0) {
		fprintf(stderr, "owner setup failed\n");
		exit(1);
	}
}

/* the worker's slot is tracked once the owner has seen its attach */
static void owner_wait_worker(struct ipc_loop *loop, struct ipc_queue_owner *o)
{
	while (!atomic_load(&sh->ready))
		ipc_loop_run_once(loop, 1000);
	for (int i = 0; i < 10; i++) {
		ipc_queue_owner_pump(o);
		ipc_loop_run_once(loop, 1000);
	}
}

static double queue_run(enum qmode m, uint32_t batch, bool cross, double secs, int samples)
{
	reset();
	int fd = ipc_queue_memfd_create("bench");
	if (fd < 0)
		exit(1);
	pid_t c = fork();
	if (c == 0)
		queue_worker(fd, m, cross ? 1 : 0);
	pin(0);
	struct ipc_loop *loop;
	struct ipc_queue_owner *o;
	owner_setup(fd, &loop, &o);
	owner_wait_worker(loop, o);
	char key[32];
	uint64_t seq = 0, t_start = now_ns();
	if (m == Q_THROUGHPUT) {
		uint64_t t_stop = t_start + (uint64_t)(secs * 1e9);
		for (unsigned it = 0;; it++) {
			if ((it & 15) == 0 && now_ns() >= t_stop)
				break;
			if (ipc_queue_owner_len(o) + batch <= RING) {
				for (uint32_t i = 0; i < batch; i++) {
					mkkey(key, seq++);
					ipc_queue_owner_add(o, key);
				}
				ipc_queue_owner_pump(o);
			} else
				ipc_loop_run_once(
				        loop,
				        1000); /* sleeps on the doorbell until Done frees room */
		}
	} else {
		for (int i = 0; i < samples; i++) {
			if (m == Q_COLD) {
				/* let everyone fall asleep: the owner sleeps in its loop, the
				 * worker in Get */
				uint64_t until = now_ns() + 300000;
				while (now_ns() < until)
					ipc_loop_run_once(loop, (until - now_ns()) / 1000 + 1);
			} else {
				while (ipc_queue_owner_processing(o) || ipc_queue_owner_len(o))
					ipc_queue_owner_pump(o);
				busy_wait_ns(1000); /* the worker is spinning in Get now */
			}
			mkkey(key, seq++);
			atomic_store_explicit(&sh->t0, now_ns(), memory_order_release);
			ipc_queue_owner_add(o, key);
			ipc_queue_owner_pump(o); /* in a loop the post source does this */
		}
	}
	ipc_queue_owner_add(o, "stop");
	while (waitpid(c, NULL, WNOHANG) == 0)
		ipc_loop_run_once(loop, 1000);
	ipc_queue_owner_free(o);
	ipc_loop_free(loop);
	close(fd);
	if (m == Q_THROUGHPUT)
		return (double)atomic_load(&sh->count) /
		       ((double)(atomic_load(&sh->t_end) - t_start) / 1e9);
	return p99_us();
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? strtod(argv[1], NULL) : 0.5;
	if (secs <= 0)
		secs = 0.5;
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 2)
		fprintf(stderr, "bench-ipc: only %d CPU; 'cross' equals 'same'\n", ncpu);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	{
		struct ipc_loop *l;
		if (ipc_loop_new(&l, IPC_LOOP_BACKEND_AUTO) == 0) {
			fprintf(stderr, "bench-ipc: owner loop backend %s\n", ipc_loop_backend(l));
			ipc_loop_free(l);
		}
	}
	const char *only = getenv("BENCH_IPC_ONLY"); /* dev aid: "hot" runs just the hot latency */
	if (only && strcmp(only, "hot") == 0) {
		printf("bench: ipc.hot_p99_us %.3f us\n", queue_run(Q_HOT, 1, true, 0, 20000));
		return 0;
	}
	double qcold = queue_run(Q_COLD, 1, true, 0, 2000);
	double bcold = ring_cold_latency(2000);
	double qhot = queue_run(Q_HOT, 1, true, 0, 20000);
	printf("bench: ipc.wake_p99_us %.2f us\n", qcold);
	printf("bench: ipc.baseline_wake_p99_us %.2f us\n", bcold);
	printf("bench: ipc.wake_ratio %.3f x\n", qcold / bcold);
	printf("bench: ipc.hot_p99_us %.3f us\n", qhot);
	fflush(stdout);
	const uint32_t batches[] = {1, 16, 256};
	for (int pl = 0; pl < 2; pl++) {
		bool cross = pl == 0;
		const char *pn = cross ? "cross" : "same";
		for (int b = 0; b < 3; b++) {
			uint32_t n = batches[b];
			double q = queue_run(Q_THROUGHPUT, n, cross, secs, 0);
			double base = ring_throughput(BASELINE, n, cross, secs);
			double proto = ring_throughput(EFDPROTO, n, cross, secs);
			printf("bench: ipc.ops_per_s.b%u.%s %.0f ops/s\n", n, pn, q);
			printf("bench: ipc.baseline_ops_per_s.b%u.%s %.0f ops/s\n", n, pn, base);
			printf("bench: ipc.efdproto_ops_per_s.b%u.%s %.0f ops/s\n", n, pn, proto);
			printf("bench: ipc.ops_ratio.b%u.%s %.2f x\n", n, pn, q / base);
			fflush(stdout);
		}
	}
	return 0;
}
