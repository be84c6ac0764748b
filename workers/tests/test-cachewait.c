/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/tests/test-cachewait.c: the worker's start barrier (workers/cachewait.h) over a real
 * arena, with the writer's side played by loop timers as informerd's initial lists would land:
 * the first key is handled only once every watched resource has listed, and sees what the list
 * wrote; the same scenario without the barrier (the worker as it was) handles the key before
 * the list and reads the object as absent (the negative control: the check can fail). Also:
 * SIGTERM ends a wait, the progress lines name what is not synced and why, the pool's first
 * worker is told apart.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/loop.h"
#include "kcmd/cache.h"
#include "kcmd/controller.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/records.h"
#include "workers/cachewait.h"

static const struct kcmd_watch watches[] = {
        {.group = "", .version = "v1", .resource = "pods", .kind = "Pod"},
        {.group = "", .version = "v1", .resource = "configmaps", .kind = "ConfigMap"},
};
#define N_WATCHES (sizeof(watches) / sizeof(watches[0]))

/* An arena with pods and configmaps registered (informerd registers a type before it lists). */
struct fx {
	int fd, rfd;
	struct shm_arena *w, *r;
	int pods, cms;
	struct ipc_loop *loop;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(shm_arena_create(NULL, &f->fd), 0);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
	f->pods = shm_writer_register_type(f->w,
	                                   &(struct shm_type_desc){.version = "v1",
	                                                           .resource = "pods",
	                                                           .kind = "Pod",
	                                                           .record_kind = SHM_RECORD_META});
	f->cms = shm_writer_register_type(f->w,
	                                  &(struct shm_type_desc){.version = "v1",
	                                                          .resource = "configmaps",
	                                                          .kind = "ConfigMap",
	                                                          .record_kind = SHM_RECORD_META});
	assert_true(f->pods >= 0 && f->cms >= 0);
	assert_int_equal(shm_arena_reader_fd(f->fd, &f->rfd), 0);
	assert_int_equal(shm_reader_open(f->rfd, &f->r), 0);
	assert_int_equal(ipc_loop_new(&f->loop, IPC_LOOP_BACKEND_AUTO), 0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	ipc_loop_free(f->loop);
	shm_arena_close(f->r);
	shm_arena_close(f->w);
	close(f->rfd);
	close(f->fd);
	free(f);
	return 0;
}

/* informerd's list of configmaps: the object, then the synced flag */
static void list_configmaps(struct fx *f)
{
	assert_int_equal(shm_writer_upsert(f->w, &(struct shm_record_in){.type = (uint16_t)f->cms,
	                                                                 .kind = SHM_RECORD_META,
	                                                                 .ns = "ns1",
	                                                                 .name = "cm",
	                                                                 .uid = "uid-cm",
	                                                                 .rv = "7"}),
	                 1);
	assert_int_equal(shm_writer_set_sync(f->w, (uint16_t)f->cms, "7", true), 0);
}

/* ---- stderr capture ------------------------------------------------------------------------ */
static int cap_fd = -1, cap_saved = -1;
static char cap_path[64];
static char cap_buf[16384];

static void capture_begin(void)
{
	snprintf(cap_path, sizeof(cap_path), "/tmp/kcmd-cachewait-XXXXXX");
	cap_fd = mkstemp(cap_path);
	assert_true(cap_fd >= 0);
	cap_saved = dup(STDERR_FILENO);
	fflush(stderr);
	dup2(cap_fd, STDERR_FILENO);
}

static const char *capture_end(void)
{
	fflush(stderr);
	dup2(cap_saved, STDERR_FILENO);
	close(cap_saved);
	ssize_t n = pread(cap_fd, cap_buf, sizeof(cap_buf) - 1, 0);
	cap_buf[n > 0 ? n : 0] = 0;
	close(cap_fd);
	unlink(cap_path);
	fputs(cap_buf, stderr); /* kept in the test's log */
	return cap_buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* ---- the scenario: a worker's first key against informerd's initial lists ----------------- */
struct scenario {
	struct fx *f;
	int handled;        /* keys handled */
	bool saw_cm;        /* the first key's sync found ns1/cm */
	bool cms_synced_at; /* configmaps were synced when the first key was handled */
	bool pods_listed, cms_listed;
};

/* the controller's sync of the key "ns1" (what the example plug-in reads) */
static void first_key(void *ud)
{
	struct scenario *s = ud;
	struct shm_obj *o = NULL;

	if (s->handled++ == 0) {
		s->saw_cm = kcmd_cache_get(s->f->r, "", "configmaps", "ns1", "cm", &o) == 0;
		s->cms_synced_at = kcmd_cache_synced(s->f->r, "", "configmaps") == 1;
	}
	kcmd_obj_free(o);
}

/* informerd: pods list at 20 ms, configmaps at 150 ms */
static int writer_tick(struct ipc_source *src, uint64_t now, void *ud)
{
	struct scenario *s = ud;

	if (!s->pods_listed) {
		assert_int_equal(shm_writer_set_sync(s->f->w, (uint16_t)s->f->pods, "3", true), 0);
		s->pods_listed = true;
		return ipc_source_set_time(src, now + 130000);
	}
	list_configmaps(s->f);
	s->cms_listed = true;
	return 0;
}

static int stop_loop(struct ipc_source *src, uint64_t now, void *ud)
{
	(void)src;
	(void)now;
	ipc_loop_exit(ud, 0);
	return 0;
}

/* Runs the worker's start with or without the barrier; returns what the first key saw. */
static struct scenario run_scenario(struct fx *f, bool barrier, const char **log)
{
	struct scenario s = {.f = f};
	struct ipc_source *wt, *stop;
	struct wk_cachewait *cw = NULL;
	struct wk_cachewait_opts o = {
	        .controller = "test-controller", .announce = true, .poll_usec = 10000};

	assert_int_equal(ipc_loop_add_timer(f->loop, &wt, ipc_now_usec() + 20000, writer_tick, &s),
	                 0);
	assert_int_equal(
	        ipc_loop_add_timer(f->loop, &stop, ipc_now_usec() + 400000, stop_loop, f->loop), 0);
	capture_begin();
	if (barrier) {
		int r = wk_cachewait_start(f->loop, f->r, watches, N_WATCHES, &o, first_key, &s,
		                           &cw);
		assert_int_equal(r, 0); /* nothing listed yet: it waits */
		assert_non_null(cw);
	} else {
		first_key(&s); /* the worker before the barrier: keys at once */
	}
	assert_int_equal(ipc_loop_run(f->loop), 0);
	*log = capture_end();
	wk_cachewait_free(cw);
	ipc_source_free(wt);
	ipc_source_free(stop);
	assert_true(s.pods_listed && s.cms_listed);
	return s;
}

static void test_first_key_after_every_list(void **state)
{
	struct fx *f = *state;
	const char *log;
	struct scenario s = run_scenario(f, true, &log);

	assert_int_equal(s.handled, 1); /* once */
	assert_true(s.cms_synced_at);   /* not before the configmaps' list */
	assert_true(s.saw_cm);          /* so it read what is there */
	assert_int_equal(count(log, "Waiting for caches to sync for test-controller"), 1);
	assert_int_equal(count(log, "Caches are synced for test-controller"), 1);
}

/* The negative control: without the wait the same key reads ns1/cm as absent, so the
 * assertions above are ones that fail when the barrier is missing. */
static void test_negative_control_without_barrier(void **state)
{
	struct fx *f = *state;
	const char *log;
	struct scenario s = run_scenario(f, false, &log);

	assert_int_equal(s.handled, 1);
	assert_false(s.cms_synced_at);
	assert_false(s.saw_cm);
	assert_int_equal(count(log, "Caches are synced"), 0);
}

static void never(void *ud)
{
	(void)ud;
	fail_msg("done called although a resource never synced");
}

static void count_done(void *ud)
{
	(*(int *)ud)++;
}

static void test_already_synced(void **state)
{
	struct fx *f = *state;
	struct wk_cachewait *cw = (void *)1;
	struct wk_cachewait_opts o = {.controller = "test-controller", .announce = false};

	/* nothing watched: no wait, no line */
	assert_int_equal(wk_cachewait_start(f->loop, f->r, NULL, 0, &o, never, NULL, &cw), 1);
	assert_null(cw);
	assert_int_equal(shm_writer_set_sync(f->w, (uint16_t)f->pods, "3", true), 0);
	list_configmaps(f);
	cw = (void *)1;
	assert_int_equal(
	        wk_cachewait_start(f->loop, f->r, watches, N_WATCHES, &o, never, NULL, &cw), 1);
	assert_null(cw);
	assert_int_equal(wk_cachewait_start(NULL, f->r, watches, 1, &o, never, NULL, &cw), -EINVAL);
	assert_int_equal(wk_cachewait_start(f->loop, f->r, NULL, 1, &o, never, NULL, &cw), -EINVAL);
	assert_int_equal(wk_cachewait_start(f->loop, f->r, watches, 1, &o, NULL, NULL, &cw),
	                 -EINVAL);
}

static int on_term(struct ipc_source *s, const struct signalfd_siginfo *si, void *ud)
{
	(void)s;
	(void)si;
	ipc_loop_exit(ud, 15);
	return 0;
}

static int send_term(struct ipc_source *s, uint64_t now, void *ud)
{
	(void)s;
	(void)now;
	(void)ud;
	raise(SIGTERM);
	return 0;
}

/* A resource that never lists: the worker still ends on SIGTERM (the wait is in the loop). */
static void test_sigterm_ends_wait(void **state)
{
	struct fx *f = *state;
	struct ipc_source *sig, *t;
	struct wk_cachewait *cw;
	struct wk_cachewait_opts o = {.controller = "test-controller", .poll_usec = 5000};
	int done = 0;

	assert_int_equal(ipc_loop_add_signal(f->loop, &sig, SIGTERM, on_term, f->loop), 0);
	assert_int_equal(ipc_loop_add_timer(f->loop, &t, ipc_now_usec() + 50000, send_term, NULL),
	                 0);
	assert_int_equal(
	        wk_cachewait_start(f->loop, f->r, watches, N_WATCHES, &o, count_done, &done, &cw),
	        0);
	assert_int_equal(ipc_loop_run(f->loop), 15);
	assert_int_equal(done, 0);
	wk_cachewait_free(cw);
	ipc_source_free(t);
	ipc_source_free(sig);
}

/* Progress: the resources not synced are named with why, every period; past the suspect time
 * the line is a warning naming the likely cause. A resource that syncs meanwhile drops out. */
static void test_progress_names_what_is_missing(void **state)
{
	struct fx *f = *state;
	static const struct kcmd_watch more[] = {
	        {.group = "", .version = "v1", .resource = "pods", .kind = "Pod"},
	        {.group = "", .version = "v1", .resource = "configmaps", .kind = "ConfigMap"},
	        {.group = "example.com", .version = "v1", .resource = "widgets", .kind = "Widget"},
	};
	struct wk_cachewait_opts o = {.controller = "test-controller",
	                              .announce = true,
	                              .poll_usec = 5000,
	                              .progress_usec = 40000,
	                              .suspect_usec = 200000};
	struct ipc_source *stop;
	struct wk_cachewait *cw;
	int done = 0;
	char buf[256];

	assert_int_equal(wk_cachewait_pending(f->r, more, 3, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "pods (not listed yet), configmaps (not listed yet), "
	                         "widgets.example.com (not in the cache)");
	assert_int_equal(shm_writer_set_sync(f->w, (uint16_t)f->pods, "3", true), 0);
	assert_int_equal(wk_cachewait_pending(f->r, more, 3, buf, sizeof(buf)), 2);
	assert_string_equal(buf,
	                    "configmaps (not listed yet), widgets.example.com (not in the cache)");
	/* truncated, still terminated */
	assert_int_equal(wk_cachewait_pending(f->r, more, 3, buf, 12), 2);
	assert_int_equal(strlen(buf), 11);

	assert_int_equal(
	        ipc_loop_add_timer(f->loop, &stop, ipc_now_usec() + 330000, stop_loop, f->loop), 0);
	capture_begin();
	assert_int_equal(wk_cachewait_start(f->loop, f->r, more, 3, &o, count_done, &done, &cw), 0);
	assert_int_equal(ipc_loop_run(f->loop), 0);
	const char *log = capture_end();
	assert_int_equal(done, 0);
	/* ~8 progress lines in 330 ms: info ones, then warnings past 200 ms */
	size_t n = count(log, "Waiting for caches to sync for test-controller for ");
	assert_true(n >= 3 && n <= 9);
	assert_true(
	        count(log, "configmaps (not listed yet), widgets.example.com (not in the cache)") ==
	        n);
	assert_int_equal(count(log, "pods ("), 0);
	assert_true(count(log, "the apiserver does not serve") >= 1);
	assert_true(count(log, "the apiserver does not serve") < n);
	assert_int_equal(count(log, "Caches are synced"), 0);
	wk_cachewait_free(cw);
	ipc_source_free(stop);
}

static void test_first_worker(void **state)
{
	(void)state;
	assert_true(wk_cachewait_first_worker("worker-foo-controller-0", "foo-controller"));
	assert_false(wk_cachewait_first_worker("worker-foo-controller-1", "foo-controller"));
	assert_false(wk_cachewait_first_worker("worker-foo-controller-12", "foo-controller"));
	assert_true(wk_cachewait_first_worker("worker-foo-0", "foo-0")); /* a name ending -0 */
	assert_false(wk_cachewait_first_worker("worker-foo-0-3", "foo-0"));
	assert_true(wk_cachewait_first_worker("worker", "foo-controller")); /* no pool name */
	assert_true(wk_cachewait_first_worker(NULL, "foo-controller"));
	assert_true(wk_cachewait_first_worker("worker-foo-controller-x", "foo-controller"));
	assert_true(wk_cachewait_first_worker("worker-foo-controller-", "foo-controller"));
}

/* The garbage collector's barrier (wk_cachewait_arena_pending): every registered type, synced at
 * the current leadership epoch once an epoch source is set. */
static uint32_t test_epoch;
static uint32_t epoch_source(void)
{
	return test_epoch;
}

static void test_arena_pending(void **state)
{
	struct fx *f = *state;
	char why[256];

	assert_int_equal(wk_cachewait_arena_pending(f->r, why, sizeof(why)), 2);
	assert_non_null(strstr(why, "pods"));
	assert_int_equal(shm_writer_set_sync(f->w, (uint16_t)f->pods, "3", true), 0);
	assert_int_equal(wk_cachewait_arena_pending(f->r, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "configmaps"));
	list_configmaps(f);
	assert_int_equal(wk_cachewait_arena_pending(f->r, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	/* a new epoch (a range acquired): both wait for their relist at it */
	test_epoch = 5;
	shm_reader_set_epoch_source(epoch_source);
	assert_int_equal(wk_cachewait_arena_pending(f->r, NULL, 0), 2);
	assert_int_equal(shm_writer_set_sync_epoch(f->w, (uint16_t)f->pods, "9", true, 5), 0);
	assert_int_equal(wk_cachewait_arena_pending(f->r, NULL, 0), 1);
	assert_int_equal(shm_writer_set_sync_epoch(f->w, (uint16_t)f->cms, "9", true, 5), 0);
	assert_int_equal(wk_cachewait_arena_pending(f->r, NULL, 0), 0);
	shm_reader_set_epoch_source(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_first_key_after_every_list, fx_setup,
	                                        fx_teardown),
	        cmocka_unit_test_setup_teardown(test_negative_control_without_barrier, fx_setup,
	                                        fx_teardown),
	        cmocka_unit_test_setup_teardown(test_already_synced, fx_setup, fx_teardown),
	        cmocka_unit_test_setup_teardown(test_sigterm_ends_wait, fx_setup, fx_teardown),
	        cmocka_unit_test_setup_teardown(test_progress_names_what_is_missing, fx_setup,
	                                        fx_teardown),
	        cmocka_unit_test_setup_teardown(test_arena_pending, fx_setup, fx_teardown),
	        cmocka_unit_test(test_first_worker),
	};

	kclog_init("worker", "test-controller", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
