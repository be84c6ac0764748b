/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/termend.c: "stopped leading" only once the term's workers are reaped (see termend.h).
 */
#include "manager/termend.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct mgr_term_end {
	mgr_term_end_emit_fn emit;
	void *userdata;
	pid_t *pids;
	size_t n_pids, cap_pids;
	char **events;
	size_t n_events, cap_events;
};

int mgr_term_end_new(mgr_term_end_emit_fn emit, void *userdata, struct mgr_term_end **ret)
{
	struct mgr_term_end *t;

	if (!emit)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->emit = emit;
	t->userdata = userdata;
	*ret = t;
	return 0;
}

struct mgr_term_end *mgr_term_end_free(struct mgr_term_end *t)
{
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->n_events; i++)
		free(t->events[i]);
	free(t->events);
	free(t->pids);
	free(t);
	return NULL;
}

int mgr_term_end_add(struct mgr_term_end *t, pid_t pid)
{
	if (pid <= 0)
		return -EINVAL;
	for (size_t i = 0; i < t->n_pids; i++)
		if (t->pids[i] == pid)
			return 0;
	if (t->n_pids == t->cap_pids) {
		size_t cap = t->cap_pids ? t->cap_pids * 2 : 16;
		pid_t *n = realloc(t->pids, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->pids = n;
		t->cap_pids = cap;
	}
	t->pids[t->n_pids++] = pid;
	return 0;
}

int mgr_term_end_event(struct mgr_term_end *t, const char *what)
{
	char *copy;

	if (t->n_pids == 0) {
		t->emit(what, t->userdata);
		return 0;
	}
	if (t->n_events == t->cap_events) {
		size_t cap = t->cap_events ? t->cap_events * 2 : 4;
		char **n = realloc(t->events, cap * sizeof(*n));
		if (!n) {
			t->emit(what, t->userdata);
			return -ENOMEM;
		}
		t->events = n;
		t->cap_events = cap;
	}
	copy = strdup(what);
	if (!copy) {
		t->emit(what, t->userdata);
		return -ENOMEM;
	}
	t->events[t->n_events++] = copy;
	return 0;
}

int mgr_term_end_reaped(struct mgr_term_end *t, pid_t pid)
{
	size_t i, n;

	for (i = 0; i < t->n_pids; i++)
		if (t->pids[i] == pid)
			break;
	if (i == t->n_pids)
		return 0;
	t->pids[i] = t->pids[--t->n_pids];
	if (t->n_pids > 0)
		return 0;
	/* the last one: out in order. An emit may register pids again (a new term ends inside
	 * it); the events after it then wait for those. */
	for (n = 0; n < t->n_events && t->n_pids == 0; n++) {
		t->emit(t->events[n], t->userdata);
		free(t->events[n]);
	}
	memmove(t->events, t->events + n, (t->n_events - n) * sizeof(*t->events));
	t->n_events -= n;
	return (int)n;
}

size_t mgr_term_end_pending(const struct mgr_term_end *t)
{
	return t->n_pids;
}

size_t mgr_term_end_queued(const struct mgr_term_end *t)
{
	return t->n_events;
}
