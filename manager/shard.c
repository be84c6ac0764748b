/* SPDX-License-Identifier: Apache-2.0 */
/* manager/shard.c: members, range Leases and the per-range fence words (see shard.h). */
#include "manager/shard.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/model.h"
#include "kube/shard.h"
#include "lib/kube-loop.h"
#include "lib/log.h"
#include "manager/lease-client.h"

enum range_state {
	R_IDLE,      /* no elector */
	R_CAMPAIGN,  /* wanted: its elector acquires or holds the Lease */
	R_CLOSING,   /* not wanted any more: fence word 0, Lease released at close_at */
	R_RELEASING, /* the release is in flight */
	R_RELEASED,  /* released: the elector is freed on the next tick */
};

struct range {
	struct mgr_shard *s;
	unsigned i;
	enum range_state st;
	struct mgr_lease_client *lc;
	bool owned;        /* acquired and reported (on_acquired ran); the fence word is live */
	uint64_t deadline; /* the elector's last deadline (0: not leading) */
	uint64_t close_at;
	char holder[256]; /* as last listed */
	/* the range Lease's record as last listed and the local time it was last seen to change:
	 * a new elector for the range starts from it (mgr_le_prime), so a Lease whose holder died
	 * long ago is taken at once instead of a lease duration after the elector's first GET */
	struct mgr_le_record obs;
	uint64_t obs_mono;
	bool have_obs;
};

struct mgr_shard {
	struct ipc_loop *loop;
	struct kube_client *kc;
	struct kube_client *own_kc; /* the range Leases' own client (opts.config), or NULL */
	struct kube_loop *own_kl;
	char *ns, *lease_name, *identity;
	char member_prefix[300], range_prefix[300];
	unsigned nranges;
	uint64_t lease_duration_us, renew_deadline_us, retry_period_us;
	struct kube_fence *fence;
	void (*on_acquired)(unsigned range, uint64_t lease_rv, void *ud);
	void *ud;

	bool active, listed, release_all;
	void (*all_done)(void *ud);
	void *all_done_ud;
	struct ipc_source *timer;
	uint64_t wake_at; /* the timer's time */
	/* local time at which the first live member other than us expires, by the renewTime and
	 * leaseDurationSeconds last listed (UINT64_MAX: none): the timer wakes then to LIST again
	 */
	uint64_t member_expiry;
	struct kube_call *list_call;
	/* a WATCH of the Leases from the last LIST's resourceVersion: a range Lease's renewal is
	 * observed when it is written, not at the next LIST (up to a retry period later), so a dead
	 * holder's range is taken a lease duration after its last renewal (docs/sharding.md) */
	struct kube_call *watch_call;
	char list_rv[64];
	bool watch_failed_logged;
	char **members;
	size_t n_members;
	struct range *ranges;
};

int mgr_shard_member_lease_name(const char *lease_name, const char *identity, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s-member-", lease_name);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	for (const char *p = identity; *p; p++) {
		char c = (char)tolower((unsigned char)*p);
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
			c = '-';
		if ((size_t)n + 1 >= len || n >= 253)
			return -ENAMETOOLONG;
		buf[n++] = c;
	}
	buf[n] = 0;
	return 0;
}

static void tick(struct mgr_shard *s);

static void arm(struct mgr_shard *s, uint64_t t)
{
	s->wake_at = t;
	ipc_source_set_time(s->timer, t);
}

void mgr_shard_lease_budget(unsigned nranges, uint64_t retry_period_us, double base_qps,
                            int base_burst, double *qps, int *burst)
{
	/* two requests per Lease per retry period (the LIST counts twice: the regular one and
	 * the one at a member's expiry): twice the steady state, room for an acquisition round
	 * (GET + PUT) of every range at once or a failed fast renewal (PUT, GET, PUT) */
	double per_round = 2.0 * ((double)nranges + 2.0);
	double need = retry_period_us ? per_round * 1e6 / (double)retry_period_us : per_round;

	*qps = base_qps <= 0 ? 0 : (need > base_qps ? need : base_qps);
	*burst = (int)per_round > base_burst ? (int)per_round : base_burst;
	if (*burst < 1)
		*burst = 1;
}

/* ---- one range's elector ---- */

static void publish(struct range *r)
{
	bool live = r->st == R_CAMPAIGN && r->owned;

	/* F7: only a wanted, acquired range has a live word; anything else is 0 */
	kube_fence_set_range(r->s->fence, r->i, live ? r->deadline : 0);
	if (!live) /* F9: informerd stops caching the range with its word */
		kube_fence_set_cache_range(r->s->fence, r->i, false);
}

static void range_deadline(uint64_t deadline_us, void *ud)
{
	struct range *r = ud;

	r->deadline = deadline_us;
	publish(r);
}

static void range_change(bool leading, void *ud)
{
	struct range *r = ud;
	struct mgr_shard *s = r->s;

	if (leading && r->st == R_CAMPAIGN && !r->owned) {
		uint64_t rv = mgr_lease_client_rv(r->lc);
		/* the cache set first (F9: informerd's relist for the epoch includes the range),
		 * the barrier (a new epoch at the winning write), then the word, then the
		 * generation the dispatchers replay on (F8) */
		kube_fence_set_cache_range(s->fence, r->i, true);
		if (s->on_acquired)
			s->on_acquired(r->i, rv, s->ud);
		r->owned = true;
		publish(r);
		kube_fence_bump_range_gen(s->fence);
		log_info("shard: acquired range %u (%s%u, resourceVersion %llu)", r->i,
		         s->range_prefix, r->i, (unsigned long long)rv);
	} else if (!leading && r->owned) {
		r->owned = false;
		publish(r);
		if (r->st == R_CAMPAIGN)
			log_warning("shard: range %u lost: its Lease was not renewed in time",
			            r->i);
		else
			log_info("shard: range %u given up (handed over)", r->i);
	}
}

static void range_released(void *ud)
{
	struct range *r = ud;

	r->st = R_RELEASED;
	log_info("shard: released range %u", r->i);
	arm(r->s, ipc_now_usec()); /* free it and look again */
}

static int range_start(struct range *r)
{
	struct mgr_shard *s = r->s;
	char name[320], err[256];

	snprintf(name, sizeof(name), "%s%u", s->range_prefix, r->i);
	struct mgr_lease_client_opts lo = {
	        .ns = s->ns,
	        .name = name,
	        .identity = s->identity,
	        .lease_duration_us = s->lease_duration_us,
	        .renew_deadline_us = s->renew_deadline_us,
	        .retry_period_us = s->retry_period_us,
	        .on_change = range_change,
	        .on_deadline = range_deadline,
	        .userdata = r,
	        .record_events = false,
	        .attempt_at_expiry = true, /* a dead holder's range: taken at its expiry */
	};
	r->st = R_CAMPAIGN;
	r->owned = false;
	r->deadline = 0;
	int e = mgr_lease_client_new(s->loop, s->kc, &lo, &r->lc, err, sizeof(err));
	if (e < 0) {
		r->st = R_IDLE;
		log_error("shard: range %u: %s", r->i, err);
		return e;
	}
	if (r->have_obs)
		(void)mgr_lease_client_prime(r->lc, &r->obs, r->obs_mono);
	return 0;
}

static void range_close(struct range *r, uint64_t grace_us)
{
	if (r->st != R_CAMPAIGN)
		return;
	r->st = R_CLOSING;
	publish(r); /* F7: 0 before anything else */
	r->close_at = ipc_now_usec() + grace_us;
	if (r->owned)
		log_info("shard: handing range %u over: writes into it stopped, its Lease is "
		         "released in %llums",
		         r->i, (unsigned long long)(grace_us / 1000));
}

static void range_step(struct range *r, uint64_t now)
{
	if (r->st == R_RELEASED) {
		r->lc = mgr_lease_client_free(r->lc);
		r->owned = false;
		r->deadline = 0;
		r->st = R_IDLE;
		publish(r);
	}
	if (r->st == R_CLOSING && now >= r->close_at) {
		r->st = R_RELEASING;
		mgr_lease_client_release(r->lc, range_released, r); /* may call back at once */
	}
}

/* ---- membership ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void set_members(struct mgr_shard *s, char **m, size_t n)
{
	for (size_t i = 0; i < s->n_members; i++)
		free(s->members[i]);
	free(s->members);
	s->members = m; /* sorted by the caller */
	s->n_members = n;
}

static kube_time_t json_time(const cJSON *j)
{
	kube_time_t t = 0;

	if (cJSON_IsString(j) && kube_time_parse(j->valuestring, strlen(j->valuestring), &t) < 0)
		t = 0;
	return t;
}

/* A range Lease's spec as listed: its holder for status, and its record with the local time it
 * last changed (the elector's own rule for validity). */
static void observe_range(struct range *r, const cJSON *sp, uint64_t mono)
{
	const cJSON *ho = cJSON_GetObjectItemCaseSensitive(sp, "holderIdentity");
	const cJSON *du = cJSON_GetObjectItemCaseSensitive(sp, "leaseDurationSeconds");
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(sp, "leaseTransitions");
	struct mgr_le_record rec;

	memset(&rec, 0, sizeof(rec));
	snprintf(rec.holder, sizeof(rec.holder), "%s", cJSON_IsString(ho) ? ho->valuestring : "");
	snprintf(r->holder, sizeof(r->holder), "%s", rec.holder);
	rec.lease_duration_s = cJSON_IsNumber(du) ? (int32_t)du->valuedouble : 0;
	rec.transitions = cJSON_IsNumber(tr) ? (int32_t)tr->valuedouble : 0;
	rec.acquire_time = json_time(cJSON_GetObjectItemCaseSensitive(sp, "acquireTime"));
	rec.renew_time = json_time(cJSON_GetObjectItemCaseSensitive(sp, "renewTime"));
	if (!r->have_obs || memcmp(&rec, &r->obs, sizeof(rec)) != 0) {
		r->obs = rec;
		r->obs_mono = mono;
		r->have_obs = true;
	}
}

/* The range a Lease name is this group's range Lease of, or -1. */
static int range_of_name(const struct mgr_shard *s, const char *name)
{
	size_t rlen = strlen(s->range_prefix);
	char *end;

	if (strncmp(name, s->range_prefix, rlen) != 0 || !isdigit((unsigned char)name[rlen]))
		return -1;
	unsigned long i = strtoul(name + rlen, &end, 10);
	return !*end && i < s->nranges ? (int)i : -1;
}

static void parse_list(struct mgr_shard *s, const char *body, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(body, len);
	cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "items"), *it;
	kube_time_t now = kube_time_now();
	size_t n = 0, cap = 8;
	char **m = calloc(cap, sizeof(*m));
	size_t mlen = strlen(s->member_prefix), rlen = strlen(s->range_prefix);

	if (!root || !cJSON_IsArray(items) || !m) {
		log_warning("shard: the Lease list is not a list; membership unchanged");
		free(m);
		cJSON_Delete(root);
		return;
	}
	const cJSON *lrv = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(root, "metadata"), "resourceVersion");
	snprintf(s->list_rv, sizeof(s->list_rv), "%s",
	         cJSON_IsString(lrv) && strlen(lrv->valuestring) < sizeof(s->list_rv)
	                 ? lrv->valuestring
	                 : "");
	for (unsigned i = 0; i < s->nranges; i++)
		s->ranges[i].holder[0] = 0;
	uint64_t mono = ipc_now_usec();
	s->member_expiry = UINT64_MAX;
	cJSON_ArrayForEach(it, items)
	{
		cJSON *md = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		cJSON *sp = cJSON_GetObjectItemCaseSensitive(it, "spec");
		cJSON *nm = cJSON_GetObjectItemCaseSensitive(md, "name");
		cJSON *ho = cJSON_GetObjectItemCaseSensitive(sp, "holderIdentity");
		cJSON *rt = cJSON_GetObjectItemCaseSensitive(sp, "renewTime");
		cJSON *du = cJSON_GetObjectItemCaseSensitive(sp, "leaseDurationSeconds");
		if (!cJSON_IsString(nm))
			continue;
		if (!strncmp(nm->valuestring, s->range_prefix, rlen)) {
			int i = range_of_name(s, nm->valuestring);
			if (i >= 0)
				observe_range(&s->ranges[i], sp, mono);
			continue;
		}
		if (!cJSON_IsString(ho) || !ho->valuestring[0])
			continue;
		if (strncmp(nm->valuestring, s->member_prefix, mlen) != 0)
			continue;
		kube_time_t renew = 0;
		if (!cJSON_IsString(rt) || !cJSON_IsNumber(du) ||
		    kube_time_parse(rt->valuestring, strlen(rt->valuestring), &renew) < 0)
			continue;
		kube_time_t expiry = renew + (kube_time_t)du->valuedouble * 1000000000;
		if (expiry <= now)
			continue; /* expired: not a live member */
		if (strcmp(ho->valuestring, s->identity) != 0) {
			/* +1 ms: at that instant the comparison above says expired */
			uint64_t at = mono + (uint64_t)((expiry - now) / 1000) + 1000;
			if (at < s->member_expiry)
				s->member_expiry = at;
		}
		if (n == cap) {
			char **g = realloc(m, 2 * cap * sizeof(*m));
			if (!g)
				break;
			m = g;
			cap *= 2;
		}
		if (!(m[n] = strdup(ho->valuestring)))
			break;
		n++;
	}
	cJSON_Delete(root);
	size_t old = s->n_members;
	bool changed = old != n;
	qsort(m, n, sizeof(*m), cmp_str);
	for (size_t i = 0; !changed && i < n; i++)
		changed = strcmp(m[i], s->members[i]) != 0;
	set_members(s, m, n);
	s->listed = true;
	if (changed) {
		char line[1024] = "";
		for (size_t i = 0, l = 0; i < n && l < sizeof(line); i++)
			l += (size_t)snprintf(line + l, sizeof(line) - l, "%s%s", i ? " " : "",
			                      m[i]);
		log_info("shard: %zu live member%s: %s", n, n == 1 ? "" : "s", line);
	}
}

/* One watch event: a range Lease added or changed is observed now (its record and the local
 * time, observe_range). Membership stays the LIST's (members expire by their renewTime, which
 * needs no observation time). A negative return ends the watch (an ERROR event: a 410 among
 * them); the next LIST starts another from its own resourceVersion. */
static int on_watch_event(const char *json, size_t len, void *ud)
{
	struct mgr_shard *s = ud;
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *ty = cJSON_GetObjectItemCaseSensitive(root, "type");
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "object");
	const cJSON *nm = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name");
	int ret = 0;

	if (!cJSON_IsString(ty) || !strcmp(ty->valuestring, "ERROR"))
		ret = -EPROTO;
	else if ((!strcmp(ty->valuestring, "ADDED") || !strcmp(ty->valuestring, "MODIFIED")) &&
	         cJSON_IsString(nm)) {
		int i = range_of_name(s, nm->valuestring);
		if (i >= 0)
			observe_range(&s->ranges[i], cJSON_GetObjectItemCaseSensitive(obj, "spec"),
			              ipc_now_usec());
	}
	cJSON_Delete(root);
	return ret;
}

static void watch_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct mgr_shard *s = ud;

	(void)call;
	s->watch_call = NULL;
	if (r->err < 0 && r->err != -ECANCELED && !s->watch_failed_logged) {
		s->watch_failed_logged = true; /* once: the LISTs go on, and start it again */
		log_warning("shard: watching the Leases failed (%s); their renewals are observed "
		            "at each LIST until a watch holds",
		            strerror(-r->err));
	}
}

static void start_watch(struct mgr_shard *s)
{
	struct kube_request req = {.verb = KUBE_WATCH,
	                           .group = "coordination.k8s.io",
	                           .version = "v1",
	                           .resource = "leases",
	                           .ns = s->ns,
	                           .resource_version = s->list_rv,
	                           /* client-go's reflector: 5-10 min, then a new one */
	                           .timeout_seconds = 300 + (int32_t)(ipc_now_usec() % 300)};
	if (kube_call_start(s->kc, &req, watch_done, on_watch_event, s, &s->watch_call) < 0)
		s->watch_call = NULL;
}

static void list_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct mgr_shard *s = ud;

	(void)call;
	s->list_call = NULL;
	if (r->err == -ECANCELED)
		return;
	if (r->err < 0)
		log_warning("shard: listing the Leases failed: %s; membership unchanged",
		            strerror(-r->err));
	else {
		parse_list(s, r->body, r->body_len);
		if (!s->watch_call && s->list_rv[0] && !s->release_all)
			start_watch(s);
	}
	tick(s);
	/* a member's expiry before the next LIST: look again then, not a retry period later
	 * (used once: a failed LIST leaves no stale expiry that would re-arm the timer at once) */
	if (s->member_expiry < s->wake_at && s->member_expiry > ipc_now_usec() && !s->release_all)
		arm(s, s->member_expiry);
	s->member_expiry = UINT64_MAX;
}

static void start_list(struct mgr_shard *s)
{
	struct kube_request req = {.verb = KUBE_LIST,
	                           .group = "coordination.k8s.io",
	                           .version = "v1",
	                           .resource = "leases",
	                           .ns = s->ns,
	                           .timeout_ms = (long)(s->renew_deadline_us / 2000)};
	if (req.timeout_ms < 1000)
		req.timeout_ms = 1000;
	if (kube_call_start(s->kc, &req, list_done, NULL, s, &s->list_call) < 0) {
		s->list_call = NULL;
		log_warning("shard: cannot list the Leases");
	}
}

static bool is_self(const struct mgr_shard *s, const char *member)
{
	return strcmp(member, s->identity) == 0;
}

/* What each range should be doing now. */
static void tick(struct mgr_shard *s)
{
	uint64_t now = ipc_now_usec();
	const char **live = NULL;
	size_t n = 0;
	bool self_listed = false;

	live = calloc(s->n_members + 1, sizeof(*live));
	for (size_t i = 0; live && i < s->n_members; i++) {
		live[n++] = s->members[i];
		self_listed |= is_self(s, s->members[i]);
	}
	/* our own member Lease is held (the manager says so) even when the last LIST predates
	 * it: count us in, so a lone instance takes every range at once */
	if (live && s->active && !self_listed)
		live[n++] = s->identity;
	size_t done = 0;
	for (unsigned i = 0; i < s->nranges; i++) {
		struct range *r = &s->ranges[i];
		range_step(r, now);
		int o = live && s->listed ? kube_shard_owner(live, n, i) : -1;
		bool want = s->active && !s->release_all && o >= 0 && is_self(s, live[o]);
		if (want && r->st == R_IDLE)
			(void)range_start(r);
		else if (!want && r->st == R_CAMPAIGN)
			range_close(r, s->release_all ? 0 : s->retry_period_us);
		range_step(r, now);
		if (r->st == R_IDLE)
			done++;
	}
	free(live);
	if (s->release_all && done == s->nranges && s->all_done) {
		void (*cb)(void *) = s->all_done;
		s->all_done = NULL;
		cb(s->all_done_ud);
	}
}

static int on_timer(struct ipc_source *src, uint64_t now, void *ud)
{
	struct mgr_shard *s = ud;
	static const uint64_t close_poll = 100000; /* a closing range's grace, checked often */

	if (!s->list_call && !s->release_all)
		start_list(s); /* tick() follows its answer */
	tick(s);
	uint64_t next = now + s->retry_period_us;
	for (unsigned i = 0; i < s->nranges; i++)
		if (s->ranges[i].st == R_CLOSING || s->ranges[i].st == R_RELEASED ||
		    s->ranges[i].st == R_RELEASING)
			next = now + close_poll < next ? now + close_poll : next;
	s->wake_at = next;
	return ipc_source_set_time(src, next);
}

int mgr_shard_new(struct ipc_loop *loop, struct kube_client *kc, const struct mgr_shard_opts *o,
                  struct mgr_shard **ret)
{
	struct mgr_shard *s;
	int r;

	if (!o->nranges || o->nranges > kube_fence_ranges(o->fence))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->loop = loop;
	s->kc = kc;
	s->member_expiry = UINT64_MAX;
	s->ns = strdup(o->ns);
	s->lease_name = strdup(o->lease_name);
	s->identity = strdup(o->identity);
	s->nranges = o->nranges;
	s->lease_duration_us = o->lease_duration_us;
	s->renew_deadline_us = o->renew_deadline_us;
	s->retry_period_us = o->retry_period_us;
	s->fence = o->fence;
	s->on_acquired = o->on_acquired;
	s->ud = o->userdata;
	s->ranges = calloc(o->nranges, sizeof(*s->ranges));
	snprintf(s->member_prefix, sizeof(s->member_prefix), "%s-member-", o->lease_name);
	snprintf(s->range_prefix, sizeof(s->range_prefix), "%s-range-", o->lease_name);
	if (!s->ns || !s->lease_name || !s->identity || !s->ranges) {
		mgr_shard_free(s);
		return -ENOMEM;
	}
	if (o->config) {
		/* the range Leases and the LIST get a client and a budget of their own: they never
		 * wait behind the member Lease's client (nor it behind them), and the budget grows
		 * with the ranges (docs/sharding.md, "Request budget") */
		struct kube_client_opts ko = {.config = o->config,
		                              .process = "kcmd",
		                              .controller = "leader-election-ranges",
		                              .insecure_ok = true,
		                              .content_type = o->content_type};
		mgr_shard_lease_budget(o->nranges, o->retry_period_us, o->qps, o->burst, &ko.qps,
		                       &ko.burst);
		if ((r = kube_client_new(&ko, &s->own_kc)) < 0 ||
		    (r = kube_loop_attach(loop, s->own_kc, &s->own_kl)) < 0) {
			mgr_shard_free(s);
			return r;
		}
		s->kc = s->own_kc;
		log_info("shard: the range Leases' own client: qps %g, burst %d (%u ranges)",
		         ko.qps, ko.burst, o->nranges);
	}
	for (unsigned i = 0; i < o->nranges; i++) {
		s->ranges[i].s = s;
		s->ranges[i].i = i;
	}
	s->wake_at = ipc_now_usec();
	if ((r = ipc_loop_add_timer(loop, &s->timer, s->wake_at, on_timer, s)) < 0) {
		mgr_shard_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

struct mgr_shard *mgr_shard_free(struct mgr_shard *s)
{
	if (!s)
		return NULL;
	if (s->list_call)
		kube_call_cancel(s->list_call);
	if (s->watch_call)
		kube_call_cancel(s->watch_call);
	ipc_source_free(s->timer);
	for (unsigned i = 0; s->ranges && i < s->nranges; i++) {
		kube_fence_set_range(s->fence, i, 0);
		kube_fence_set_cache_range(s->fence, i, false);
		mgr_lease_client_free(s->ranges[i].lc);
	}
	set_members(s, NULL, 0);
	free(s->ranges);
	kube_loop_detach(s->own_kl);
	kube_client_free(s->own_kc);
	free(s->ns);
	free(s->lease_name);
	free(s->identity);
	free(s);
	return NULL;
}

void mgr_shard_set_active(struct mgr_shard *s, bool active)
{
	if (!s || s->active == active)
		return;
	s->active = active;
	if (!active) /* every word to 0 at once: the member Lease is not ours */
		for (unsigned i = 0; i < s->nranges; i++)
			range_close(&s->ranges[i], s->retry_period_us);
	tick(s);
	arm(s, ipc_now_usec() + 1);
}

void mgr_shard_release_all(struct mgr_shard *s, void (*done)(void *ud), void *ud)
{
	s->release_all = true;
	s->all_done = done;
	s->all_done_ud = ud;
	for (unsigned i = 0; i < s->nranges; i++) {
		struct range *r = &s->ranges[i];
		if (r->st == R_CLOSING)
			r->close_at = 0; /* the workers are gone: nothing of ours is on the wire */
		range_close(r, 0);
	}
	tick(s);
	arm(s, ipc_now_usec() + 1);
}

void mgr_shard_view(const struct mgr_shard *s, struct mgr_shard_view *v)
{
	memset(v, 0, sizeof(*v));
	if (!s)
		return;
	v->nranges = s->nranges;
	v->n_members = s->n_members;
	v->members = (const char *const *)s->members;
	v->listed = s->listed;
}

bool mgr_shard_owns(const struct mgr_shard *s, unsigned range)
{
	return s && range < s->nranges && s->ranges[range].st == R_CAMPAIGN &&
	       s->ranges[range].owned && kube_fence_range_allows(s->fence, range, ipc_now_usec());
}

const char *mgr_shard_holder(const struct mgr_shard *s, unsigned range)
{
	return s && range < s->nranges ? s->ranges[range].holder : "";
}

unsigned mgr_shard_owned_count(const struct mgr_shard *s)
{
	unsigned n = 0;
	for (unsigned i = 0; s && i < s->nranges; i++)
		n += mgr_shard_owns(s, i);
	return n;
}
