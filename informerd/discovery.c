/* SPDX-License-Identifier: Apache-2.0 */
/*
 * informerd/discovery.c: periodic deletable-resource discovery (see discovery.h).
 *
 * A round is a small sequence of GETs, one in flight at a time: the number of groups is small
 * and the period long, so a fan-out would only add bookkeeping. A new request is started from
 * the timer, never from inside a kube callback.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "informerd/discovery.h"
#include "kube/discovery.h"

enum stage {
	ST_IDLE = 0,
	ST_CORE,   /* GET /api/v1 */
	ST_GROUPS, /* GET /apis */
	ST_GROUP,  /* GET /apis/<g>/<v> for groups[next_group] */
};

struct inf_discovery {
	struct inf_discovery_config cfg;
	struct ipc_source *timer;
	struct kube_call *call;
	enum stage stage;
	struct kube_api_group_list *groups;
	uint32_t next_group;
	/* the round's results */
	struct inf_resource *res;
	char **strs; /* every string res points to */
	size_t n, cap, n_strs, cap_strs;
	char **failed;
	size_t n_failed;
	uint64_t rounds;
	uint64_t last_end; /* when the last round finished (µs, monotonic) */
	bool again;        /* inf_discovery_soon() during a round: one more right after it */
	char path[512];
};

bool inf_discovery_wanted(const char *group, const char *resource, uint32_t verbs)
{
	uint32_t need = KUBE_VERB_BIT_DELETE | KUBE_VERB_BIT_LIST | KUBE_VERB_BIT_WATCH;

	if ((verbs & need) != need || !resource || strchr(resource, '/'))
		return false;
	if (!strcmp(resource, "events") && (!group || !group[0] || !strcmp(group, "events.k8s.io")))
		return false;
	return true;
}

static char *keep(struct inf_discovery *d, const char *s)
{
	char *c;

	if (d->n_strs == d->cap_strs) {
		size_t nc = d->cap_strs ? d->cap_strs * 2 : 64;
		char **ns = realloc(d->strs, nc * sizeof(*ns));

		if (!ns)
			return NULL;
		d->strs = ns;
		d->cap_strs = nc;
	}
	c = strdup(s ? s : "");
	if (c)
		d->strs[d->n_strs++] = c;
	return c;
}

static void reset_round(struct inf_discovery *d)
{
	for (size_t i = 0; i < d->n_strs; i++)
		free(d->strs[i]);
	for (size_t i = 0; i < d->n_failed; i++)
		free(d->failed[i]);
	d->n_strs = d->n = d->n_failed = 0;
	kube_object_free(d->groups);
	d->groups = NULL;
	d->next_group = 0;
}

static void add_failed(struct inf_discovery *d, const char *group)
{
	char **nf = realloc(d->failed, (d->n_failed + 2) * sizeof(*nf));

	if (!nf)
		return;
	d->failed = nf;
	d->failed[d->n_failed] = strdup(group ? group : "");
	if (d->failed[d->n_failed])
		d->n_failed++;
	d->failed[d->n_failed] = NULL;
}

static void add_list(struct inf_discovery *d, const struct kube_discovery *kd)
{
	for (uint32_t i = 0; i < kd->n; i++) {
		const struct kube_api_resource *a = &kd->res[i];
		struct inf_resource *r;

		if (!inf_discovery_wanted(a->group, a->resource, a->verbs) || !a->kind)
			continue;
		if (d->n == d->cap) {
			size_t nc = d->cap ? d->cap * 2 : 64;
			struct inf_resource *nr = realloc(d->res, nc * sizeof(*nr));

			if (!nr)
				return;
			d->res = nr;
			d->cap = nc;
		}
		r = &d->res[d->n];
		r->group = keep(d, a->group);
		r->version = keep(d, a->version);
		r->resource = keep(d, a->resource);
		r->kind = keep(d, a->kind);
		if (!r->group || !r->version || !r->resource || !r->kind)
			return;
		r->record_kind = SHM_RECORD_META;
		r->namespaced = a->namespaced;
		d->n++;
	}
}

static void on_done(struct kube_call *call, const struct kube_result *r, void *ud);

static void finish_round(struct inf_discovery *d)
{
	uint64_t period = d->cfg.period_usec ? d->cfg.period_usec : 30000000ULL;

	d->rounds++;
	d->stage = ST_IDLE;
	if (d->cfg.on_round)
		d->cfg.on_round(d->cfg.userdata, d->res, d->n,
		                (const char *const *)(d->n_failed ? d->failed : (char *[]){NULL}));
	reset_round(d);
	d->last_end = ipc_now_usec();
	if (d->again) {
		d->again = false;
		period = INF_DISCOVERY_SOON_GAP_US;
	}
	(void)ipc_source_set_time(d->timer, d->last_end + period);
}

void inf_discovery_soon(struct inf_discovery *d)
{
	uint64_t at;

	if (!d)
		return;
	if (d->stage != ST_IDLE || d->call) {
		d->again = true; /* this round may have read discovery before the change */
		return;
	}
	at = d->last_end + INF_DISCOVERY_SOON_GAP_US;
	if (at < ipc_now_usec())
		at = ipc_now_usec() + 1;
	(void)ipc_source_set_time(d->timer, at);
}

/* Starts the request of the current stage (from the timer). */
static int on_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	struct inf_discovery *d = ud;
	struct kube_request req = {.verb = KUBE_GET};
	int r;

	(void)s;
	(void)now;
	if (d->call)
		return 0;
	switch (d->stage) {
	case ST_IDLE:
		d->stage = ST_CORE;
		/* fallthrough */
	case ST_CORE:
		req.path = "/api/v1";
		break;
	case ST_GROUPS:
		req.path = "/apis";
		break;
	case ST_GROUP: {
		const struct kube_api_group *g;

		while (d->groups && d->next_group < d->groups->n &&
		       !d->groups->groups[d->next_group].preferred_version)
			d->next_group++;
		if (!d->groups || d->next_group >= d->groups->n) {
			finish_round(d);
			return 0;
		}
		g = &d->groups->groups[d->next_group];
		snprintf(d->path, sizeof(d->path), "/apis/%s/%s", g->name, g->preferred_version);
		req.path = d->path;
		break;
	}
	}
	r = kube_call_start(d->cfg.client, &req, on_done, NULL, d, &d->call);
	if (r < 0) {
		d->call = NULL;
		/* Could not even start: give up this round, the next one comes a period later. */
		add_failed(d, d->stage == ST_CORE ? "" : "*");
		finish_round(d);
	}
	return 0;
}

static void on_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct inf_discovery *d = ud;
	struct kube_discovery *kd = NULL;

	(void)call;
	d->call = NULL;
	if (r->err == -ECANCELED)
		return;
	switch (d->stage) {
	case ST_CORE:
		if (r->err || kube_decode_api_resource_list(r->body, r->body_len, true, &kd) < 0)
			add_failed(d, "");
		else
			add_list(d, kd);
		d->stage = ST_GROUPS;
		break;
	case ST_GROUPS:
		if (r->err || kube_decode_api_group_list(r->body, r->body_len, &d->groups) < 0) {
			add_failed(d, "*"); /* every named group unknown this round */
			d->stage = ST_IDLE;
			kube_object_free(kd);
			finish_round(d);
			return;
		}
		d->stage = ST_GROUP;
		d->next_group = 0;
		break;
	case ST_GROUP: {
		const struct kube_api_group *g = &d->groups->groups[d->next_group];

		if (r->err || kube_decode_api_resource_list(r->body, r->body_len, true, &kd) < 0) {
			add_failed(d, g->name);
		} else {
			/* APIResourceList entries carry no group: the path said which. */
			for (uint32_t i = 0; i < kd->n; i++) {
				kd->res[i].group = g->name;
				kd->res[i].version = g->preferred_version;
			}
			add_list(d, kd);
		}
		d->next_group++;
		break;
	}
	default:
		break;
	}
	kube_object_free(kd);
	(void)ipc_source_set_time(d->timer, ipc_now_usec() + 1);
}

int inf_discovery_new(const struct inf_discovery_config *cfg, struct inf_discovery **ret)
{
	struct inf_discovery *d;
	int r;

	if (!cfg || !cfg->loop || !cfg->client || !ret)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->cfg = *cfg;
	r = ipc_loop_add_timer(cfg->loop, &d->timer, ipc_now_usec() + 1, on_timer, d);
	if (r < 0) {
		free(d);
		return r;
	}
	*ret = d;
	return 0;
}

struct inf_discovery *inf_discovery_free(struct inf_discovery *d)
{
	if (!d)
		return NULL;
	if (d->call)
		kube_call_cancel(d->call);
	ipc_source_free(d->timer);
	reset_round(d);
	free(d->strs);
	free(d->failed);
	free(d->res);
	free(d);
	return NULL;
}

uint64_t inf_discovery_rounds(const struct inf_discovery *d)
{
	return d->rounds;
}

/* ---- the set of discovered resources ---------------------------------------------------- */
static void res_free(struct inf_resource *r)
{
	if (!r)
		return;
	free((char *)r->group);
	free((char *)r->version);
	free((char *)r->resource);
	free((char *)r->kind);
	free(r);
}

int inf_res_set_add(struct inf_res_set *s, const struct inf_resource *res,
                    struct inf_resource **ret)
{
	struct inf_resource *r;

	if (!s || !res)
		return -EINVAL;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct inf_resource **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = *res;
	r->group = strdup(res->group ? res->group : "");
	r->version = strdup(res->version ? res->version : "");
	r->resource = strdup(res->resource ? res->resource : "");
	r->kind = strdup(res->kind ? res->kind : "");
	if (!r->group || !r->version || !r->resource || !r->kind) {
		res_free(r);
		return -ENOMEM;
	}
	s->v[s->n++] = r;
	if (ret)
		*ret = r;
	return 0;
}

void inf_res_set_remove(struct inf_res_set *s, size_t i)
{
	if (!s || i >= s->n)
		return;
	res_free(s->v[i]);
	s->v[i] = s->v[--s->n];
}

void inf_res_set_clear(struct inf_res_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		res_free(s->v[i]);
	free(s->v);
	*s = (struct inf_res_set){0};
}
