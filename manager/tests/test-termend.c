/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the term-end gate (manager/termend.h): "stopped leading" is emitted only once every
 * worker of the ended term was reaped. The oracle is a simulated process table: a worker is
 * alive from its registration until its reap; an emission of "stopped leading" while one of the
 * ended term's workers is alive is a violation. The negative control feeds the same oracle the
 * order kcmd had before (the event right after kill(2), before the reaps) and checks that the
 * oracle catches it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "manager/termend.h"

#define MAXP 64

struct sim {
	pid_t alive[MAXP]; /* killed workers not reaped yet */
	int n_alive;
	char emitted[16][32];
	int n_emitted;
	int violations; /* "stopped leading" while a killed worker was alive */
};

static void sim_kill(struct sim *s, pid_t pid)
{
	s->alive[s->n_alive++] = pid;
}

static void sim_reap(struct sim *s, pid_t pid)
{
	for (int i = 0; i < s->n_alive; i++)
		if (s->alive[i] == pid) {
			s->alive[i] = s->alive[--s->n_alive];
			return;
		}
}

static void emit_cb(const char *what, void *ud)
{
	struct sim *s = ud;

	if (!strcmp(what, "stopped leading") && s->n_alive > 0)
		s->violations++;
	snprintf(s->emitted[s->n_emitted++], sizeof(s->emitted[0]), "%s", what);
}

/* The manager's order: kill and register, the elector's event, then the reaps one by one. */
static void test_stopped_leading_after_last_reap(void **state)
{
	(void)state;
	struct sim s = {0};
	struct mgr_term_end *t;
	pid_t pids[] = {101, 102, 103};

	assert_int_equal(mgr_term_end_new(emit_cb, &s, &t), 0);
	for (int i = 0; i < 3; i++) {
		sim_kill(&s, pids[i]);
		assert_int_equal(mgr_term_end_add(t, pids[i]), 0);
	}
	assert_int_equal(mgr_term_end_add(t, 102), 0); /* counted once */
	assert_int_equal(mgr_term_end_pending(t), 3);
	assert_int_equal(mgr_term_end_event(t, "stopped leading"), 0);
	assert_int_equal(s.n_emitted, 0);
	assert_int_equal(mgr_term_end_queued(t), 1);
	sim_reap(&s, 101);
	assert_int_equal(mgr_term_end_reaped(t, 101), 0);
	sim_reap(&s, 999); /* another child (informerd, a dispatcher): not the term's */
	assert_int_equal(mgr_term_end_reaped(t, 999), 0);
	sim_reap(&s, 103);
	assert_int_equal(mgr_term_end_reaped(t, 103), 0);
	assert_int_equal(s.n_emitted, 0);
	sim_reap(&s, 102);
	assert_int_equal(mgr_term_end_reaped(t, 102), 1);
	assert_int_equal(s.n_emitted, 1);
	assert_string_equal(s.emitted[0], "stopped leading");
	assert_int_equal(s.violations, 0);
	assert_int_equal(mgr_term_end_pending(t), 0);
	assert_int_equal(mgr_term_end_queued(t), 0);
	/* a reap of a pid seen before emits nothing again */
	assert_int_equal(mgr_term_end_reaped(t, 102), 0);
	assert_int_equal(s.n_emitted, 1);
	mgr_term_end_free(t);
}

/* Nothing to wait for (no worker ran, or a SIGTERM stop whose workers all exited before the
 * release): out at once. */
static void test_nothing_pending_emits_at_once(void **state)
{
	(void)state;
	struct sim s = {0};
	struct mgr_term_end *t;

	assert_int_equal(mgr_term_end_new(emit_cb, &s, &t), 0);
	assert_int_equal(mgr_term_end_event(t, "became leader"), 0);
	assert_int_equal(mgr_term_end_event(t, "stopped leading"), 0);
	assert_int_equal(s.n_emitted, 2);
	assert_string_equal(s.emitted[1], "stopped leading");
	assert_int_equal(s.violations, 0);
	assert_int_equal(mgr_term_end_add(t, 0), -EINVAL);
	assert_int_equal(mgr_term_end_add(t, -5), -EINVAL);
	assert_int_equal(mgr_term_end_new(NULL, NULL, &t), -EINVAL);
	mgr_term_end_free(NULL);
	mgr_term_end_free(t);
}

/* Leadership won back before the old workers were reaped: "became leader" must not overtake
 * the "stopped leading" of the term before it. */
static void test_regained_term_keeps_event_order(void **state)
{
	(void)state;
	struct sim s = {0};
	struct mgr_term_end *t;

	assert_int_equal(mgr_term_end_new(emit_cb, &s, &t), 0);
	sim_kill(&s, 7);
	assert_int_equal(mgr_term_end_add(t, 7), 0);
	assert_int_equal(mgr_term_end_event(t, "stopped leading"), 0);
	assert_int_equal(mgr_term_end_event(t, "became leader"), 0);
	assert_int_equal(s.n_emitted, 0);
	sim_reap(&s, 7);
	assert_int_equal(mgr_term_end_reaped(t, 7), 2);
	assert_int_equal(s.n_emitted, 2);
	assert_string_equal(s.emitted[0], "stopped leading");
	assert_string_equal(s.emitted[1], "became leader");
	assert_int_equal(s.violations, 0);
	/* and the next term ends the same way */
	for (pid_t p = 20; p < 20 + MAXP / 2; p++) { /* more than the first allocation */
		sim_kill(&s, p);
		assert_int_equal(mgr_term_end_add(t, p), 0);
	}
	assert_int_equal(mgr_term_end_event(t, "stopped leading"), 0);
	for (pid_t p = 20 + MAXP / 2 - 1; p >= 20; p--) {
		assert_int_equal(s.n_emitted, 2);
		sim_reap(&s, p);
		mgr_term_end_reaped(t, p);
	}
	assert_int_equal(s.n_emitted, 3);
	assert_int_equal(s.violations, 0);
	mgr_term_end_free(t);
}

/* Negative control: the order kcmd had before the gate (the event recorded right after the
 * kill(2) calls, the reaps later). The same oracle must flag it, or the tests above prove
 * nothing. */
static void test_negative_control_event_before_reap(void **state)
{
	(void)state;
	struct sim s = {0};

	sim_kill(&s, 301);
	sim_kill(&s, 302);
	emit_cb("stopped leading", &s); /* no gate: straight after kill(2) */
	sim_reap(&s, 301);
	sim_reap(&s, 302);
	assert_int_equal(s.n_emitted, 1);
	assert_int_equal(s.violations, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_stopped_leading_after_last_reap),
	        cmocka_unit_test(test_nothing_pending_emits_at_once),
	        cmocka_unit_test(test_regained_term_keeps_event_order),
	        cmocka_unit_test(test_negative_control_event_before_reap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
