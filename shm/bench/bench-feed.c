/* SPDX-License-Identifier: Apache-2.0 */
/* shm/bench/bench-feed.c - change-feed figures (shm/feed.h).
 *
 * Entries are pod UPDATEs as informerd would publish them: new and old version of a pod with
 * a 15-char name, a canonical uid, an 8-digit resourceVersion, labels {app,
 * pod-template-hash}, one controller reference and the 64-byte typed payload (about 600 B per
 * entry).
 *
 * Prints:
 *   bench: feed.entry_bytes N B                 bytes one such entry takes in the ring
 *   bench: feed.publish_per_s N entries/s       one writer, nobody reading
 *   bench: feed.publish_wake_per_s N entries/s  the same with a FUTEX_WAKE after every entry
 *   bench: feed.consume_1_per_s N entries/s     one consumer draining a filled ring
 *   bench: feed.consume_4_per_s N entries/s     each of 4 consumers draining it at once (mean)
 *   bench: feed.consume_4_total_per_s N entries/s  the 4 together
 *   bench: feed.live_1_lag_max N entries        writer flat out, 1 consumer: its largest lag
 *   bench: feed.wake_latency_p50_us / _p99_us N us  publish+wake to a futex-waiting consumer
 *                                               (another process) returning from its wait
 *   bench: feed.churn_publish_per_s N entries/s  64 MiB ring, 2 registered consumers in other
 *                                               processes, a wake (and trim, F7) per 256 entries
 *   bench: feed.churn_resident_peak_mb / _end_mb N MB  the feed memfd's resident bytes during
 *                                               that run and after a last trim
 *   bench: feed.churn_notrim_* the same with trimming off (the feed before F7)
 * BENCH_FEED_N overrides the entry count of the drains (default 200000).
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include "shm/feed-test.h"
#include "shm/feed.h"

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

struct pod {
	char name[24], uid[40], rv[16], orv[16], hash[16];
	struct shm_label labels[2];
	struct shm_owner_ref owner;
	uint8_t payload[64];
	struct shm_record_in in;
	struct shm_obj old;
	struct shm_feed_pub pub;
};

static void pod_build(struct pod *p, unsigned i)
{
	snprintf(p->name, sizeof(p->name), "web-%05u-%05u", i % 1000, i);
	snprintf(p->uid, sizeof(p->uid), "%08x-1111-4222-8333-%012x", i, i * 31u);
	snprintf(p->rv, sizeof(p->rv), "%08u", 10000000u + i);
	snprintf(p->orv, sizeof(p->orv), "%08u", 9000000u + i);
	snprintf(p->hash, sizeof(p->hash), "7d9f8%05u", i % 1000);
	p->labels[0] = (struct shm_label){"app", "web"};
	p->labels[1] = (struct shm_label){"pod-template-hash", p->hash};
	p->owner = (struct shm_owner_ref){"apps/v1", "ReplicaSet", "web-7d9f8", p->uid, 1, 1};
	memset(p->payload, (int)(i & 0xff), sizeof(p->payload));
	p->in = (struct shm_record_in){.type = 1,
	                               .kind = SHM_RECORD_POD,
	                               .ns = "bench-ns-3",
	                               .name = p->name,
	                               .uid = p->uid,
	                               .rv = p->rv,
	                               .labels = p->labels,
	                               .n_labels = 2,
	                               .owners = &p->owner,
	                               .n_owners = 1,
	                               .payload = p->payload,
	                               .payload_len = sizeof(p->payload)};
	p->old = (struct shm_obj){.type = 1,
	                          .kind = SHM_RECORD_POD,
	                          .ns = "bench-ns-3",
	                          .name = p->name,
	                          .uid = p->uid,
	                          .rv = p->orv,
	                          .labels = p->labels,
	                          .n_labels = 2,
	                          .owners = &p->owner,
	                          .n_owners = 1,
	                          .payload = p->payload,
	                          .payload_len = sizeof(p->payload)};
	p->pub = (struct shm_feed_pub){.op = SHM_FEED_UPDATE,
	                               .type = 1,
	                               .handle = i + 1,
	                               .new_obj = &p->in,
	                               .old_obj = &p->old};
}

#define NPODS 256
static struct pod pods[NPODS];

static void die(const char *what, int r)
{
	fprintf(stderr, "bench-feed: %s: %s\n", what, strerror(-r));
	exit(1);
}

static void publish_n(struct shm_feed *w, uint64_t n, bool wake)
{
	for (uint64_t i = 0; i < n; i++) {
		int r = shm_feed_publish(w, &pods[i % NPODS].pub, NULL);
		if (r < 0)
			die("publish", r);
		if (wake)
			shm_feed_wake(w);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double resident_mb(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? (double)st.st_blocks * 512 / 1048576.0 : -1;
}

/* Steady churn through a 64 MiB ring: n entries in batches of 256 with a wake (which trims)
 * after each, two registered consumers in other processes keeping up as they can. */
static void churn(uint64_t n, bool trim, const char *label)
{
	int fd, r;
	struct shm_feed *w;
	if ((r = shm_feed_create(&(struct shm_feed_create_opts){.ring_size = UINT64_C(64) << 20},
	                         &fd)) < 0 ||
	    (r = shm_feed_writer_open(fd, &w)) < 0)
		die("create", r);
	_Atomic uint64_t *sh =
	        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap", -errno);
	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		if ((kids[k] = fork()) == 0) {
			struct shm_feed *rd;
			struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
			if (shm_feed_reader_open(fd, &rd) < 0)
				_exit(2);
			atomic_fetch_add(&sh[0], 1); /* ready */
			for (;;) {
				uint32_t tok = shm_feed_wait_token(rd);
				int x = shm_feed_next(rd, &ev);
				if (x == 1)
					continue;
				if (x == 0) {
					if (atomic_load(&sh[1]))
						_exit(0);
					shm_feed_wait(rd, tok, 1000);
				} else if (x == -ESTALE) {
					atomic_fetch_add(&sh[2], 1);
					shm_feed_seek_end(rd, NULL);
				} else
					_exit(3);
			}
		}
	}
	while (atomic_load(&sh[0]) < 2)
		usleep(100);
	shm_feed__test_trim_chunk = trim ? 0 : UINT64_C(1) << 62;
	double peak = 0;
	uint64_t t0 = now_ns();
	for (uint64_t b = 0; b < n / 256; b++) {
		publish_n(w, 256, false);
		shm_feed_wake(w);
		if (b % 16 == 0 && resident_mb(fd) > peak)
			peak = resident_mb(fd);
	}
	uint64_t t1 = now_ns();
	atomic_store(&sh[1], 1);
	shm_feed_wake(w);
	for (int k = 0; k < 2; k++)
		waitpid(kids[k], NULL, 0);
	shm_feed_trim(w); /* informerd's tick */
	printf("bench: feed.churn%s_publish_per_s %.0f entries/s\n", label,
	       (double)(n / 256 * 256) / ((double)(t1 - t0) / 1e9));
	printf("bench: feed.churn%s_resident_peak_mb %.1f MB\n", label, peak);
	printf("bench: feed.churn%s_resident_end_mb %.1f MB\n", label, resident_mb(fd));
	printf("bench: feed.churn%s_laps %llu laps\n", label, (unsigned long long)sh[2]);
	shm_feed__test_trim_chunk = 0;
	munmap((void *)sh, 4096);
	shm_feed_close(w);
	close(fd);
}

int main(void)
{
	uint64_t n = 200000;
	const char *e = getenv("BENCH_FEED_N");
	if (e && strtoull(e, NULL, 10) > 0)
		n = strtoull(e, NULL, 10);
	for (unsigned i = 0; i < NPODS; i++)
		pod_build(&pods[i], i);

	/* publish rate, steady state: a 64 MiB ring that has wrapped once (its pages are resident,
	 * as informerd's are after the first minutes) */
	int fa, fd, r;
	struct shm_feed *wa, *w;
	if ((r = shm_feed_create(&(struct shm_feed_create_opts){.ring_size = UINT64_C(64) << 20},
	                         &fa)) < 0 ||
	    (r = shm_feed_writer_open(fa, &wa)) < 0)
		die("create", r);
	publish_n(wa, ((UINT64_C(64) << 20) / 500) * 5 / 4, false);
	uint64_t t0 = now_ns();
	publish_n(wa, n, false);
	uint64_t t1 = now_ns();
	struct shm_feed_stats st;
	shm_feed_stats(wa, &st);
	uint64_t entry;
	{
		/* one entry's bytes: the distance between two consecutive publications */
		uint64_t before = st.last_pos;
		publish_n(wa, 1, false);
		shm_feed_stats(wa, &st);
		entry = st.last_pos - before;
	}
	double pub_s = (double)n / ((double)(t1 - t0) / 1e9);
	printf("bench: feed.entry_bytes %llu B\n", (unsigned long long)entry);
	printf("bench: feed.publish_per_s %.0f entries/s\n", pub_s);
	printf("bench: feed.publish_mb_per_s %.0f MB/s\n", pub_s * (double)entry / 1e6);
	/* with a wake after every entry (no waiter: the syscall's own cost) */
	uint64_t nw = n / 4;
	t0 = now_ns();
	publish_n(wa, nw, true);
	t1 = now_ns();
	printf("bench: feed.publish_wake_per_s %.0f entries/s\n",
	       (double)nw / ((double)(t1 - t0) / 1e9));
	shm_feed_close(wa);
	close(fa);

	/* the drains: a ring that holds every entry, consumers attached before the fill */
	if ((r = shm_feed_create(&(struct shm_feed_create_opts){.ring_size = UINT64_C(512) << 20},
	                         &fd)) < 0 ||
	    (r = shm_feed_writer_open(fd, &w)) < 0)
		die("create", r);
	enum { KMAX = 4 };
	struct shm_feed *rd[1 + KMAX];
	for (int c = 0; c < 1 + KMAX; c++)
		if ((r = shm_feed_reader_open(fd, &rd[c])) < 0)
			die("reader", r);
	publish_n(w, n, false);

	/* consume: 1 consumer, then 4 at once, each draining the n entries just published */
	_Atomic uint64_t *res =
	        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	for (int round = 0; round < 2; round++) {
		int k = round == 0 ? 1 : KMAX;
		pid_t pids[KMAX];
		for (int c = 0; c < k; c++) {
			if ((pids[c] = fork()) == 0) {
				struct shm_feed *f = rd[round == 0 ? 0 : 1 + c];
				struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
				uint64_t a = now_ns(), got = 0, bytes = 0;
				while (got < n) {
					int x = shm_feed_next(f, &ev);
					if (x != 1)
						_exit(2);
					got++;
					bytes += ev.new_obj->payload_len;
				}
				res[c] = now_ns() - a;
				res[8 + c] = bytes;
				_exit(0);
			}
		}
		double sum = 0, maxt = 0;
		int bad = 0;
		for (int c = 0; c < k; c++) {
			int status;
			waitpid(pids[c], &status, 0);
			bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
			double secs = (double)res[c] / 1e9;
			sum += (double)n / secs;
			if (secs > maxt)
				maxt = secs;
		}
		if (bad) {
			fprintf(stderr, "bench-feed: a consumer failed\n");
			return 1;
		}
		if (k == 1) {
			printf("bench: feed.consume_1_per_s %.0f entries/s\n", sum);
		} else {
			printf("bench: feed.consume_4_per_s %.0f entries/s\n", sum / k);
			printf("bench: feed.consume_4_total_per_s %.0f entries/s\n",
			       (double)n * k / maxt);
		}
	}
	for (int c = 0; c < 1 + KMAX; c++)
		shm_feed_close(rd[c]);

	/* live: the writer flat out in this process, one consumer keeping up in another */
	{
		struct shm_feed *lr;
		if ((r = shm_feed_reader_open(fd, &lr)) < 0)
			die("reader", r);
		res[0] = 0;
		res[1] = 0;
		pid_t p = fork();
		if (p == 0) {
			struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
			uint64_t got = 0, maxlag = 0, laps = 0;
			while (got < n) {
				uint64_t lag = shm_feed_lag(lr);
				if (lag > maxlag)
					maxlag = lag;
				uint32_t tok = shm_feed_wait_token(lr);
				int x = shm_feed_next(lr, &ev);
				if (x == 1)
					got++;
				else if (x == 0)
					shm_feed_wait(lr, tok, 1000);
				else if (x == -ESTALE) {
					laps++;
					shm_feed_seek_end(lr, NULL);
				} else
					_exit(2);
			}
			res[0] = maxlag;
			res[1] = laps;
			_exit(0);
		}
		publish_n(w, n, false);
		/* keep feeding (with wakes) until the consumer has its n */
		for (;;) {
			int status;
			pid_t q = waitpid(p, &status, WNOHANG);
			if (q == p)
				break;
			publish_n(w, 64, false);
			shm_feed_wake(w);
			usleep(100);
		}
		printf("bench: feed.live_1_lag_max %llu entries\n", (unsigned long long)res[0]);
		printf("bench: feed.live_1_laps %llu laps\n", (unsigned long long)res[1]);
		shm_feed_close(lr);
	}

	/* wake latency: publish + wake, a consumer blocked in FUTEX_WAIT returns */
	{
		struct shm_feed *lr;
		if ((r = shm_feed_reader_open(fd, &lr)) < 0)
			die("reader", r);
		enum { ROUNDS = 2000 };
		uint64_t *lat = mmap(NULL, ROUNDS * 8, PROT_READ | PROT_WRITE,
		                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		_Atomic uint64_t *stamp = res + 16;
		_Atomic uint64_t *ready = res + 17;
		*stamp = 0;
		*ready = 0;
		pid_t p = fork();
		if (p == 0) {
			struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
			for (int i = 0; i < ROUNDS; i++) {
				for (;;) {
					uint32_t tok = shm_feed_wait_token(lr);
					int x = shm_feed_next(lr, &ev);
					if (x == 1)
						break;
					if (x < 0)
						_exit(2);
					atomic_store(ready, (uint64_t)i + 1);
					shm_feed_wait(lr, tok, 1000000);
				}
				lat[i] = now_ns() - atomic_load(stamp);
			}
			_exit(0);
		}
		for (int i = 0; i < ROUNDS; i++) {
			while (atomic_load(ready) !=
			       (uint64_t)i + 1) /* the consumer is about to wait */
				usleep(50);
			usleep(200); /* ... and is asleep by now */
			atomic_store(stamp, now_ns());
			publish_n(w, 1, true);
		}
		int status;
		waitpid(p, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "bench-feed: the latency consumer failed\n");
			return 1;
		}
		qsort(lat, ROUNDS, 8, cmp_u64);
		printf("bench: feed.wake_latency_p50_us %.1f us\n", (double)lat[ROUNDS / 2] / 1e3);
		printf("bench: feed.wake_latency_p99_us %.1f us\n",
		       (double)lat[ROUNDS * 99 / 100] / 1e3);
		munmap(lat, ROUNDS * 8);
		shm_feed_close(lr);
	}
	churn(n, true, "");
	churn(n, false, "_notrim");
	double load = 0;
	FILE *la = fopen("/proc/loadavg", "r");
	if (la) {
		if (fscanf(la, "%lf", &load) != 1)
			load = 0;
		fclose(la);
	}
	fprintf(stderr, "bench-feed: %llu entries per drain, load average %.1f\n",
	        (unsigned long long)n, load);
	shm_feed_close(w);
	close(fd);
	return 0;
}
