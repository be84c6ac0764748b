/* SPDX-License-Identifier: Apache-2.0 */
/* shm/tests/soak-torture.c - the long runs for `make soak`:
 *  1. SHM_SOAK_SECONDS (default 300) of the kill -9 torture (shm/tests/torture.h), then its
 *     negative control;
 *  2. the reclamation bound of the issue: 10,000 objects updated 10 million times (sizes varying
 *     over many classes, owners and labels changing) must keep the carved arena where it was
 *     after the first million updates. SHM_SOAK_UPDATES overrides the count. */
#include "shm/tests/torture.h"

static int reclaim_soak(uint64_t updates)
{
	int fd, r;
	struct shm_arena *w;
	shm__test_flags = 0;
	if ((r = shm_arena_create(&(struct shm_create_opts){.max_size = UINT64_C(1) << 32}, &fd)) <
	            0 ||
	    (r = shm_writer_open(fd, &w)) < 0)
		return 1;
	int type = shm_writer_register_type(
	        w, &(struct shm_type_desc){"", "v1", "pods", "Pod", SHM_RECORD_POD});
	uint64_t s = 42, carved_warm = 0, t0 = t_now_ns();
	for (uint64_t i = 0; i < updates; i++) {
		unsigned k = (unsigned)(t_rng(&s) % 10000);
		/* the torture's deterministic objects (the oracle is not needed here) */
		if ((r = t_upsert(w, type, k, i + 1)) < 0) {
			fprintf(stderr, "reclaim soak: upsert: %s\n", strerror(-r));
			return 1;
		}
		if (i == updates / 10) {
			struct shm_stats st;
			shm_reader_stats(w, &st);
			carved_warm = st.carved;
		}
	}
	struct shm_stats st;
	shm_reader_stats(w, &st);
	int bad = shm_writer_check(w) != 0 || st.carved > carved_warm + (UINT64_C(4) << 20);
	printf("reclaim soak: %llu updates in %.1f s: carved %llu KiB after 10%%, %llu KiB at the "
	       "end; live %llu KiB, "
	       "quarantine %llu KiB: %s\n",
	       (unsigned long long)updates, (t_now_ns() - t0) / 1e9,
	       (unsigned long long)(carved_warm >> 10), (unsigned long long)(st.carved >> 10),
	       (unsigned long long)(st.live_bytes >> 10),
	       (unsigned long long)(st.quarantine_bytes >> 10), bad ? "FAIL" : "ok");
	shm_arena_close(w);
	close(fd);
	return bad;
}

int main(void)
{
	double secs = 300;
	const char *e = getenv("SHM_SOAK_SECONDS");
	if (e && atof(e) > 0)
		secs = atof(e);
	uint64_t updates = 10000000;
	e = getenv("SHM_SOAK_UPDATES");
	if (e && strtoull(e, NULL, 10) > 0)
		updates = strtoull(e, NULL, 10);
	int bad = reclaim_soak(updates);
	struct t_result ok, broken;
	int r = t_run(secs, T_HEALTHY, &ok);
	if (r < 0)
		return 1;
	t_print("soak healthy", &ok, secs);
	bad |= t_judge_healthy(&ok);
	if (t_run(10, T_NO_VALIDATE, &broken) < 0)
		return 1;
	t_print("soak negative control", &broken, 10);
	bad |= broken.torn + broken.backwards == 0;
	printf("soak: %s\n", bad ? "FAIL" : "PASS");
	return bad;
}
