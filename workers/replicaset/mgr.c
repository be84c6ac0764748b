/* SPDX-License-Identifier: Apache-2.0 */
/* workers/replicaset/mgr.c: see mgr.h. Runs in the manager only, on its one thread. */
#include "workers/replicaset/mgr.h"

#include <errno.h>
#include <stdlib.h>

#include "workers/replicaset/expectations.h"

struct rs_mgr {
	struct rs_exp *exp;
	const struct rs_flavour *fl;
};

/* the live regions, in setup order (the manager sets controllers up in registry order) */
static struct rs_mgr *live[RS_MGR_MAX];
static size_t n_live;

int rs_mgr_setup(struct kcmd_mgr_env *env, const struct rs_flavour *fl, int64_t orphan_grace_ns,
                 void **ret_state)
{
	struct rs_exp_create_opts eo = {.orphan_grace_ns = orphan_grace_ns};
	struct rs_mgr *m;
	int fd, r;

	if (n_live >= RS_MGR_MAX)
		return -E2BIG;
	if (!(m = calloc(1, sizeof(*m))))
		return -ENOMEM;
	m->fl = fl;
	fd = rs_exp_memfd_create(&eo);
	if (fd < 0) {
		free(m);
		return fd;
	}
	r = rs_exp_attach(fd, RS_EXP_WORKER, rs_exp_now(), &m->exp);
	if (r == 0)
		r = kcmd_mgr_export_fd(env, "KCMD_EXPECTATIONS_FD", fd,
		                       KCMD_TO_DISPATCHER | KCMD_TO_WORKERS);
	if (r < 0) {
		rs_exp_detach(m->exp);
		free(m);
		return r;
	}
	live[n_live++] = m;
	*ret_state = m;
	return 0;
}

int rs_mgr_child_died(void *state, int pid, const char *process, bool crashed)
{
	struct rs_mgr *m = state;

	(void)process;
	/* a clean exit released its slots; a crash leaves them claimed until reclaimed here */
	return m && crashed ? rs_exp_reclaim_pid(m->exp, pid) : 0;
}

void rs_mgr_metrics(void *state, struct kcmd_text *out)
{
	struct rs_mgr *m = state;
	struct rs_exp *sum[RS_MGR_MAX];
	char *text = NULL;
	size_t n = 0;

	if (!m)
		return;
	if (n_live && live[0] == m)
		for (size_t i = 0; i < n_live; i++)
			sum[n++] = live[i]->exp;
	if (rs_exp_metrics_text_ex(m->exp, sum, n, m->fl->metric_name, m->fl->what, &text) == 0)
		kcmd_text_printf(out, "%s", text);
	free(text);
}

void rs_mgr_fini(void *state)
{
	struct rs_mgr *m = state;

	if (!m)
		return;
	for (size_t i = 0; i < n_live; i++)
		if (live[i] == m) {
			for (size_t k = i + 1; k < n_live; k++)
				live[k - 1] = live[k];
			n_live--;
			break;
		}
	rs_exp_detach(m->exp);
	free(m);
}
