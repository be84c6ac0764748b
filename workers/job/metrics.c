/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/job/metrics.c: the Job controller's counters in shared memory (metrics.h).
 */
#include "workers/job/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define JOB_METRICS_MAGIC 0x314d424au /* "JBM1" */

struct job_metrics_region {
	uint32_t magic;
	uint32_t reserved;
	_Atomic uint64_t syncs[2][2][JOB_M_N_ACTIONS]; /* [indexed][error][action] */
	_Atomic uint64_t finished[2][JOB_M_N_REASONS]; /* [indexed][reason] */
	_Atomic uint64_t pods_finished[2][2];          /* [indexed][failed] */
	_Atomic uint64_t pfp[3];                       /* FailJob, Ignore, Count */
	_Atomic uint64_t creations[JOB_M_N_CREATE][2]; /* [reason][failed] */
};

struct job_metrics {
	struct job_metrics_region *r;
	bool writer;
};

int job_metrics_memfd_create(void)
{
	int fd = memfd_create("kcmd-job-metrics", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct job_metrics_region *r;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(*r)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED) {
		int e = -errno;
		close(fd);
		return e;
	}
	r->magic = JOB_METRICS_MAGIC; /* the counters start zeroed (a fresh memfd) */
	munmap(r, sizeof(*r));
	return fd;
}

int job_metrics_attach(int fd, bool writer, struct job_metrics **ret)
{
	struct job_metrics *m = calloc(1, sizeof(*m));
	void *p;

	if (!m)
		return -ENOMEM;
	p = mmap(NULL, sizeof(*m->r), writer ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd,
	         0);
	if (p == MAP_FAILED) {
		int e = -errno;
		free(m);
		return e;
	}
	m->r = p;
	m->writer = writer;
	if (m->r->magic != JOB_METRICS_MAGIC) {
		job_metrics_detach(m);
		return -EPROTO;
	}
	*ret = m;
	return 0;
}

void job_metrics_detach(struct job_metrics *m)
{
	if (!m)
		return;
	munmap(m->r, sizeof(*m->r));
	free(m);
}

static void add(_Atomic uint64_t *c, int64_t n)
{
	if (n > 0)
		atomic_fetch_add_explicit(c, (uint64_t)n,
		                          memory_order_relaxed); /* see INVARIANTS */
}

void job_metrics_sync(struct job_metrics *m, bool indexed, bool error, enum job_m_action a)
{
	if (m && m->writer && a < JOB_M_N_ACTIONS)
		add(&m->r->syncs[indexed][error][a], 1);
}

void job_metrics_finished(struct job_metrics *m, bool indexed, enum job_m_reason r)
{
	if (m && m->writer && r < JOB_M_N_REASONS)
		add(&m->r->finished[indexed][r], 1);
}

static const char *const reasons[JOB_M_N_REASONS] = {"",
                                                     "BackoffLimitExceeded",
                                                     "DeadlineExceeded",
                                                     "PodFailurePolicy",
                                                     "FailedIndexes",
                                                     "MaxFailedIndexesExceeded"};

enum job_m_reason job_metrics_reason(const char *reason)
{
	for (int i = 1; reason && i < JOB_M_N_REASONS; i++)
		if (!strcmp(reason, reasons[i]))
			return (enum job_m_reason)i;
	return JOB_M_N_REASONS;
}

void job_metrics_pods_finished(struct job_metrics *m, bool indexed, int64_t succeeded,
                               int64_t failed)
{
	if (!m || !m->writer)
		return;
	add(&m->r->pods_finished[indexed][0], succeeded);
	add(&m->r->pods_finished[indexed][1], failed);
}

void job_metrics_pfp(struct job_metrics *m, int action)
{
	if (m && m->writer && action >= 0 && action < 3)
		add(&m->r->pfp[action], 1);
}

void job_metrics_creations(struct job_metrics *m, enum job_m_create reason, int64_t succeeded,
                           int64_t failed)
{
	if (!m || !m->writer || reason >= JOB_M_N_CREATE)
		return;
	add(&m->r->creations[reason][0], succeeded);
	add(&m->r->creations[reason][1], failed);
}

/* ---- text ------------------------------------------------------------------------------------ */
struct buf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->s && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
		char *s = realloc(b->s, cap);
		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

static uint64_t ld(_Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed); /* see INVARIANTS */
}

static void head(struct buf *b, bool *done, const char *name, const char *level, const char *help)
{
	if (*done)
		return;
	*done = true;
	bprintf(b, "# HELP job_controller_%s [%s] %s\n# TYPE job_controller_%s counter\n", name,
	        level, help, name);
}

int job_metrics_text(struct job_metrics *m, char **ret)
{
	static const char *const modes[2] = {"NonIndexed", "Indexed"};
	static const char *const results[2] = {"success", "error"};
	static const char *const actions[JOB_M_N_ACTIONS] = {"reconciling", "tracking",
	                                                     "pods_created", "pods_deleted"};
	static const char *const pfp[3] = {"FailJob", "Ignore", "Count"};
	static const char *const creates[JOB_M_N_CREATE] = {"new", "recreate_terminating_or_failed",
	                                                    "recreate_failed"};
	static const char *const fin[2] = {"succeeded", "failed"};
	struct buf b = {0};
	bool h;
	uint64_t v;

	*ret = NULL;
	if (!m)
		return -EINVAL;
	h = false; /* labels in name order, as client_golang writes them */
	for (int a = 0; a < JOB_M_N_ACTIONS; a++)
		for (int i = 0; i < 2; i++)
			for (int e = 0; e < 2; e++)
				if ((v = ld(&m->r->syncs[i][e][a]))) {
					head(&b, &h, "job_syncs_total", "STABLE",
					     "The number of job syncs");
					bprintf(&b,
					        "job_controller_job_syncs_total{action=\"%s\","
					        "completion_"
					        "mode=\"%s\",result=\"%s\"} %llu\n",
					        actions[a], modes[i], results[e],
					        (unsigned long long)v);
				}
	h = false;
	for (int i = 0; i < 2; i++)
		for (int r = 0; r < JOB_M_N_REASONS; r++)
			if ((v = ld(&m->r->finished[i][r]))) {
				head(&b, &h, "jobs_finished_total", "STABLE",
				     "The number of finished jobs");
				bprintf(&b,
				        "job_controller_jobs_finished_total{completion_mode=\"%s\","
				        "reason="
				        "\"%s\",result=\"%s\"} %llu\n",
				        modes[i], reasons[r], r ? "failed" : "succeeded",
				        (unsigned long long)v);
			}
	h = false;
	for (int i = 0; i < 2; i++)
		for (int f = 0; f < 2; f++)
			if ((v = ld(&m->r->pods_finished[i][f]))) {
				head(&b, &h, "job_pods_finished_total", "STABLE",
				     "The number of finished Pods that are fully tracked");
				bprintf(&b,
				        "job_controller_job_pods_finished_total{completion_mode=\"%"
				        "s\","
				        "result=\"%s\"} %llu\n",
				        modes[i], fin[f], (unsigned long long)v);
			}
	h = false;
	for (int a = 0; a < 3; a++)
		if ((v = ld(&m->r->pfp[a]))) {
			head(&b, &h, "pod_failures_handled_by_failure_policy_total", "ALPHA",
			     "The number of failed Pods handled by failure policy "
			     "with\\n\t\t\trespect to "
			     "the failure policy action applied based on the matched\\n\t\t\trule. "
			     "Possible values of the action label correspond to "
			     "the\\n\t\t\tpossible "
			     "values for the failure policy rule action, which "
			     "are:\\n\t\t\t\"FailJob\", "
			     "\"Ignore\" and \"Count\".");
			bprintf(&b,
			        "job_controller_pod_failures_handled_by_failure_policy_total{"
			        "action=\"%s\"}"
			        " %llu\n",
			        pfp[a], (unsigned long long)v);
		}
	h = false;
	for (int r = 0; r < JOB_M_N_CREATE; r++)
		for (int f = 0; f < 2; f++)
			if ((v = ld(&m->r->creations[r][f]))) {
				head(&b, &h, "job_pods_creation_total", "ALPHA",
				     "The number of Pods created by the Job controller labelled "
				     "with a "
				     "reason for the Pod creation.\\nThis metric also "
				     "distinguishes between "
				     "Pods created using different PodReplacementPolicy "
				     "settings.\\nPossible "
				     "values of the \"reason\" label are:\\n\"new\", "
				     "\"recreate_terminating_or_failed\", "
				     "\"recreate_failed\".\\nPossible "
				     "values of the \"status\" label are:\\n\"succeeded\", "
				     "\"failed\".");
				bprintf(&b,
				        "job_controller_job_pods_creation_total{reason=\"%s\","
				        "status=\"%s\"} "
				        "%llu\n",
				        creates[r], f ? "failed" : "succeeded",
				        (unsigned long long)v);
			}
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	*ret = b.s ? b.s : strdup("");
	return *ret ? 0 : -ENOMEM;
}
