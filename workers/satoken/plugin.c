/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/satoken/plugin.c: kcm's serviceaccount-token-controller (alias serviceaccount-token),
 * on by default but started only with --service-account-private-key-file (kcm: "Controller is
 * disabled because there is no private key"); it writes with kcmd's own credentials (kcm gives it
 * the root client: the accounts of --use-service-account-credentials depend on it). satoken.h has
 * the behaviour.
 *
 * Shape: ServiceAccounts and Secrets are cached whole (the Secret handlers read the type and
 * annotations; upstream's informer selects the token type with a field selector, the arena has
 * every Secret for other controllers anyway). The ServiceAccount queue and the Secret queue are
 * consumed by --concurrent-serviceaccount-token-syncs worker processes (5), each taking both.
 * The key is read by every worker at start (a bad file stops kcmd before anything starts,
 * mgr_precheck).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kcmd/kcmd.h"
#include "workers/rootcacert/rootca.h"
#include "workers/satoken/satoken.h"
#include "workers/worker.h"

#define KEY_FLAG "service-account-private-key-file"

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static void on_sa(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	char key[700];
	int r;

	if (ev->meta)
		r = st_sa_key(key, sizeof(key), kcmd_meta_namespace(ev->meta),
		              kcmd_meta_name(ev->meta), kcmd_meta_uid(ev->meta));
	else if (ev->old)
		r = st_sa_key(key, sizeof(key), kcmd_obj_namespace(ev->old), kcmd_obj_name(ev->old),
		              kcmd_obj_uid(ev->old));
	else
		return;
	if (r == 0)
		kcmd_queue_add(ctx, 0, key);
}

static void queue_secret(struct inf_handler_ctx *ctx, const char *json, size_t len)
{
	struct st_secret s;
	char key[1100];

	if (json && st_secret_parse(json, len, NULL, &s) == 0 && s.is_token &&
	    st_secret_key(key, sizeof(key), &s) == 0)
		kcmd_queue_add(ctx, 1, key);
}

static void on_secret(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *json = ev->meta ? kcmd_event_json(ev, &len)
	                            : (ev->old ? kcmd_obj_json(ev->old, &len) : NULL);

	queue_secret(ctx, json, len);
}

static int add_sa(const struct shm_obj *o, void *ud)
{
	char key[700];

	if (st_sa_key(key, sizeof(key), kcmd_obj_namespace(o), kcmd_obj_name(o), kcmd_obj_uid(o)) ==
	    0)
		kcmd_queue_add(ud, 0, key);
	return 0;
}

static int add_secret(const struct shm_obj *o, void *ud)
{
	size_t len = 0;
	const char *json = kcmd_obj_json(o, &len);

	queue_secret(ud, json, len);
	return 0;
}

/* the informers' initial lists deliver an add per object: the same from the arena */
static void st_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)restarted;
	if (queue == 0)
		kcmd_cache_list(ctx->arena, "", "serviceaccounts", NULL, add_sa, ctx);
	else
		kcmd_cache_list(ctx->arena, "", "secrets", NULL, add_secret, ctx);
}

static const char *const st_queue_names[] = {ST_QUEUE_SA, ST_QUEUE_SECRET, NULL};
static const struct inf_handler_entry st_entries[] = {
        {.group = "",
         .resource = "serviceaccounts",
         .on_add = on_sa,
         .on_update = on_sa,
         .on_delete = on_sa},
        {.group = "",
         .resource = "secrets",
         .on_add = on_secret,
         .on_update = on_secret,
         .on_delete = on_secret},
};
static const struct inf_handler_table st_handlers = {
        .controller = ST_CONTROLLER,
        .queues = st_queue_names,
        .entries = st_entries,
        .n_entries = sizeof(st_entries) / sizeof(st_entries[0]),
        .resync = st_resync,
};

/* ---- the key and the CA -------------------------------------------------------------------- */
static int read_file(const char *path, char **ret, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL, chunk[4096];
	size_t n = 0, k;

	*ret = NULL;
	if (!f)
		return -errno;
	FILE *m = open_memstream(&buf, &n);
	while (m && (k = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, k, m);
	fclose(f);
	if (!m || fclose(m) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf, *len = n;
	return 0;
}

/* kcm's startServiceAccountTokenController: the key file, then the root CA */
static int load(const struct kcmd_flag_values *v, const struct kube_config *kcfg,
                struct st_key **key, char **ca, char *err, size_t errlen)
{
	const char *file = kcmd_flag_string(v, KEY_FLAG);
	char *pem = NULL, why[200];
	size_t len = 0;
	int r;

	*key = NULL, *ca = NULL;
	if (!file || !*file) {
		snprintf(err, errlen,
		         "Controller is disabled because there is no private key controller=\"%s\"",
		         ST_CONTROLLER);
		return -ECANCELED;
	}
	if ((r = read_file(file, &pem, &len)) < 0) {
		snprintf(err, errlen,
		         "error reading key for service account token controller: open %s: %s",
		         file, strerror(-r));
		return -EEXIST;
	}
	r = st_key_load(pem, len, key, why, sizeof(why));
	explicit_bzero(pem, len);
	free(pem);
	if (r < 0) {
		snprintf(err, errlen, "error reading key for service account token controller: %s",
		         why);
		return -EEXIST;
	}
	if ((r = rc_load_root_ca(kcmd_flag_string(v, "root-ca-file"), kcfg, ca, err, errlen)) < 0) {
		st_key_free(*key);
		*key = NULL;
		return -EEXIST;
	}
	return 0;
}

static int st_precheck(const struct kcmd_flag_values *v, const struct kube_config *kcfg, char *err,
                       size_t errlen)
{
	struct st_key *key = NULL;
	char *ca = NULL;
	int r = load(v, kcfg, &key, &ca, err, errlen);

	st_key_free(key);
	free(ca);
	return r;
}

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct st_state {
	struct wk_ctx *ctx;
	struct st_key *key;
	char *ca;
};

static int st_init(struct wk_ctx *ctx, void **ret_state)
{
	struct st_state *s = calloc(1, sizeof(*s));
	char err[512];
	int r;

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	if ((r = load(ctx->flags, ctx->config, &s->key, &s->ca, err, sizeof(err))) < 0) {
		kcmd_log_error("%s", err);
		free(s);
		return r == -ECANCELED ? -EINVAL : r;
	}
	*ret_state = s;
	return 0;
}

static void st_fini(void *state)
{
	struct st_state *s = state;

	if (s) {
		st_key_free(s->key);
		free(s->ca);
	}
	free(s);
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

/* deleteToken: NotFound and Conflict (the UID precondition) need no retry */
static int delete_token(struct st_state *s, const char *ns, const char *name, const char *uid)
{
	int r = kcmd_kube_request(
	        s->ctx->kc,
	        &(struct kcmd_request){.method = "DELETE",
	                               .version = "v1",
	                               .resource = "secrets",
	                               .ns = ns,
	                               .name = name,
	                               .precondition_uid = uid && *uid ? uid : NULL},
	        NULL, NULL);
	if (r == 0)
		kcmd_log_v(4, "deleted token secret=\"%s/%s\"", ns, name);
	return r == 0 || r == -ENOENT || r == -ESTALE ? 0 : r;
}

/* the cached ServiceAccount ns/name if its uid is uid (or uid is empty): 1, 0 (none), -errno */
static int cached_sa(struct st_state *s, const char *ns, const char *name, const char *uid)
{
	struct shm_obj *o = NULL;
	int r = kcmd_cache_get(s->ctx->arena, "", "serviceaccounts", ns, name, &o);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = !*uid || !strcmp(kcmd_obj_uid(o), uid);
	kcmd_obj_free(o);
	return r;
}

struct del_all {
	struct st_state *s;
	const char *sa_name, *sa_uid;
	int err;
};

static int delete_matching(const struct shm_obj *o, void *ud)
{
	struct del_all *d = ud;
	struct st_secret sec;
	size_t len = 0;
	const char *json = kcmd_obj_json(o, &len);
	int r;

	if (!json || st_secret_parse(json, len, NULL, &sec) < 0 ||
	    !st_secret_for_sa(&sec, d->sa_name, d->sa_uid))
		return 0;
	if ((r = delete_token(d->s, sec.ns, sec.name, sec.uid)) < 0) {
		kcmd_log_error("deleting serviceaccount token secret=\"%s/%s\": %s", sec.ns,
		               sec.name, reason(r));
		d->err = r;
	}
	return 0;
}

static void sync_sa(struct st_state *s, char *key, struct wk_result *res)
{
	char *p[3];
	int r;

	if (st_key_split(key, p, 3) < 0) {
		kcmd_log_error("parsing service account key \"%s\"", key);
		return;
	}
	if ((r = cached_sa(s, p[0], p[1], p[2])) != 0) {
		res->err = r < 0 ? r : 0;
		return;
	}
	/* the ServiceAccount is gone: its tokens go */
	kcmd_log_v(4, "service account deleted, removing tokens serviceAccount=\"%s/%s\"", p[0],
	           p[1]);
	struct del_all d = {.s = s, .sa_name = p[1], .sa_uid = p[2]};
	kcmd_cache_list(s->ctx->arena, "", "secrets", p[0], delete_matching, &d);
	res->err = d.err;
}

/* removeSecretReference, retried on conflict (RemoveTokenBackoff: 10 steps from 100 ms) */
static void remove_reference(struct st_state *s, const char *ns, const char *sa_name,
                             const char *sa_uid, const char *secret)
{
	int r = 0;

	for (int step = 0; step < 10; step++) {
		char *sa = NULL, *body = NULL;
		r = kcmd_kube_request(s->ctx->kc,
		                      &(struct kcmd_request){.method = "GET",
		                                             .version = "v1",
		                                             .resource = "serviceaccounts",
		                                             .ns = ns,
		                                             .name = sa_name},
		                      NULL, &sa);
		if (r == 0)
			r = st_remove_reference_body(sa, strlen(sa), sa_uid, secret, &body);
		else if (r == -ENOENT)
			r = 0;
		free(sa);
		if (r == 0 && body)
			r = kcmd_kube_request(s->ctx->kc,
			                      &(struct kcmd_request){.method = "PUT",
			                                             .version = "v1",
			                                             .resource = "serviceaccounts",
			                                             .ns = ns,
			                                             .name = sa_name,
			                                             .body = body,
			                                             .body_kind = "ServiceAccount"},
			                      NULL, NULL);
		free(body);
		if (r == -ENOENT)
			r = 0;
		if (r != -ESTALE)
			break;
		/* jittered: 100 ms * (1 + rand) as wait.Backoff with Jitter 1.0 */
		struct timespec ts = {0, 100000000L + (long)(rand() % 100000000)};
		nanosleep(&ts, NULL);
	}
	if (r < 0)
		kcmd_log_error("Removing secret reference secret=\"%s/%s\": %s", ns, secret,
		               reason(r));
}

struct gen {
	struct st_state *s;
	const char *ns, *sa_name, *sa_uid, *secret;
};

static int gen_token(void *ud, char **token)
{
	struct gen *g = ud;
	return st_legacy_token(g->s->key, g->ns, g->sa_name, g->sa_uid, g->secret, token);
}

/* generateTokenIfNeeded: 0 done, or the error to retry with */
static int populate(struct st_state *s, const struct st_secret *cached, const char *sa_name,
                    const char *sa_uid)
{
	char *live = NULL, *body = NULL;
	int r;
	struct st_secret l;

	if (!cached->needs_ca && !cached->needs_namespace && !cached->needs_token)
		return 0;
	r = kcmd_kube_request(s->ctx->kc,
	                      &(struct kcmd_request){.method = "GET",
	                                             .version = "v1",
	                                             .resource = "secrets",
	                                             .ns = cached->ns,
	                                             .name = cached->name},
	                      NULL, &live);
	if (r < 0) {
		free(live);
		return r == -ENOENT ? 0 : r;
	}
	if (st_secret_parse(live, strlen(live), NULL, &l) < 0 || strcmp(l.rv, cached->rv)) {
		kcmd_log_v(2,
		           "Secret is not up to date, skipping token population secret=\"%s/%s\"",
		           cached->ns, cached->name);
		free(live);
		return 0;
	}
	struct gen g = {s, cached->ns, sa_name, sa_uid, cached->name};
	r = st_update_body(live, strlen(live), s->ca, sa_name, sa_uid, gen_token, &g, &body);
	free(live);
	if (r < 0) {
		kcmd_log_error("Populating serviceaccount token secret=\"%s/%s\": %s", cached->ns,
		               cached->name, strerror(-r));
		return r == -ENOMEM ? r : 0; /* a token that cannot be made is not retried */
	}
	if (!body)
		return 0;
	r = kcmd_kube_request(s->ctx->kc,
	                      &(struct kcmd_request){.method = "PUT",
	                                             .version = "v1",
	                                             .resource = "secrets",
	                                             .ns = cached->ns,
	                                             .name = cached->name,
	                                             .body = body,
	                                             .body_kind = "Secret"},
	                      NULL, NULL);
	free(body);
	if (r == 0)
		kcmd_log_v(2, "populated token secret=\"%s/%s\"", cached->ns, cached->name);
	if (r == -ESTALE || r == -ENOENT)
		return 0; /* an update event comes later / nothing left to populate */
	if (r < 0)
		kcmd_log_error("Populating serviceaccount token secret=\"%s/%s\": %s", cached->ns,
		               cached->name, reason(r));
	return r;
}

/* the ServiceAccount for a Secret: cache, then a live GET (getServiceAccount with
 * fetchOnCacheMiss). 1 with *uid_out set, 0 none, -errno */
static int live_sa(struct st_state *s, const char *ns, const char *name, const char *uid,
                   char *uid_out, size_t n)
{
	struct shm_obj *o = NULL;
	char *body = NULL;
	int r = kcmd_cache_get(s->ctx->arena, "", "serviceaccounts", ns, name, &o);

	if (r == 0) {
		bool match = !*uid || !strcmp(kcmd_obj_uid(o), uid);
		if (match)
			snprintf(uid_out, n, "%s", kcmd_obj_uid(o));
		kcmd_obj_free(o);
		if (match)
			return 1;
	} else if (r != -ENOENT)
		return r;
	r = kcmd_kube_request(s->ctx->kc,
	                      &(struct kcmd_request){.method = "GET",
	                                             .version = "v1",
	                                             .resource = "serviceaccounts",
	                                             .ns = ns,
	                                             .name = name},
	                      NULL, &body);
	if (r == -ENOENT) {
		free(body);
		return 0;
	}
	if (r < 0) {
		free(body);
		return r;
	}
	struct st_secret fake; /* reuse the metadata reader: name, namespace, uid */
	r = st_secret_parse(body, strlen(body), NULL, &fake);
	free(body);
	if (r < 0)
		return r;
	if (*uid && strcmp(fake.uid, uid))
		return 0;
	snprintf(uid_out, n, "%s", fake.uid);
	return 1;
}

static void sync_secret(struct st_state *s, char *key, struct wk_result *res)
{
	char *p[5], sa_uid[128];
	struct shm_obj *o = NULL;
	struct st_secret cached;
	int r;

	if (st_key_split(key, p, 5) < 0) {
		kcmd_log_error("parsing secret queue key \"%s\"", key);
		return;
	}
	const char *ns = p[0], *name = p[1], *uid = p[2], *sa_name = p[3], *sa_key_uid = p[4];
	r = kcmd_cache_get(s->ctx->arena, "", "secrets", ns, name, &o);
	if (r == 0) {
		size_t len = 0;
		const char *json = kcmd_obj_json(o, &len);
		r = json ? st_secret_parse(json, len, s->ca, &cached) : -EBADMSG;
		if (r == 0 && *uid && strcmp(cached.uid, uid))
			r = -ENOENT; /* another Secret of that name */
		kcmd_obj_free(o);
	}
	if (r == -ENOENT) {
		/* the Secret is gone: the ServiceAccount, if cached, drops the reference */
		if (cached_sa(s, ns, sa_name, sa_key_uid) == 1)
			remove_reference(s, ns, sa_name, sa_key_uid, name);
		return;
	}
	if (r < 0) {
		kcmd_log_error("Getting secret \"%s/%s\": %s", ns, name, strerror(-r));
		res->err = r == -EBADMSG ? 0 : r;
		return;
	}
	if ((r = live_sa(s, ns, sa_name, sa_key_uid, sa_uid, sizeof(sa_uid))) < 0) {
		kcmd_log_error("Getting service account \"%s/%s\": %s", ns, sa_name, reason(r));
		res->err = r;
		return;
	}
	if (r == 0) {
		kcmd_log_v(4, "Service account does not exist, deleting token secret=\"%s/%s\"", ns,
		           name);
		if ((r = delete_token(s, ns, name, uid)) < 0)
			kcmd_log_error("Deleting serviceaccount token secret=\"%s/%s\" "
			               "serviceAccount=\"%s/%s\": %s",
			               ns, name, ns, sa_name, reason(r));
		res->err = r;
		return;
	}
	res->err = populate(s, &cached, sa_name, sa_uid);
}

static void st_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct st_state *s = state;
	char buf[1100];

	*res = (struct wk_result){0};
	/* WaitForCacheSync: an account missing from a cache not yet filled is not a deleted one */
	if (kcmd_cache_synced(s->ctx->arena, "", "serviceaccounts") != 1 ||
	    kcmd_cache_synced(s->ctx->arena, "", "secrets") != 1) {
		*res = (struct wk_result){.requeue_after = true, .after_usec = 1000000};
		return;
	}
	snprintf(buf, sizeof(buf), "%s", key);
	if (q == 0)
		sync_sa(s, buf, res);
	else
		sync_secret(s, buf, res);
}

static const struct wk_controller st_worker = {
        .name = ST_CONTROLLER,
        .queues = st_queue_names,
        .init = st_init,
        .sync = st_sync,
        .fini = st_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static int st_workers(const struct kcmd_flag_values *v)
{
	/* upstream runs that many goroutines per queue; kcmd as many processes taking both */
	return (int)kcmd_flag_int(v, "concurrent-serviceaccount-token-syncs");
}

static const char *const st_aliases[] = {"serviceaccount-token", NULL};
static const struct kcmd_watch st_watches[] = {
        {"", "v1", "serviceaccounts", "ServiceAccount", KCMD_CACHE_OBJECT, true},
        {"", "v1", "secrets", "Secret", KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_queue st_queues[] = {{.name = ST_QUEUE_SA}, {.name = ST_QUEUE_SECRET}};
static const struct kcmd_flag st_flags[] = {
        {.name = KEY_FLAG,
         .type = KCMD_FLAG_STRING,
         .def = "",
         .help = "Filename containing a PEM-encoded private RSA or ECDSA key used to sign "
                 "service account tokens."},
        {.name = "root-ca-file",
         .type = KCMD_FLAG_STRING,
         .def = "",
         .help = "If set, this root certificate authority will be included in service account's "
                 "token secret. This must be a valid PEM-encoded CA bundle."},
        {.name = "concurrent-serviceaccount-token-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .help = "The number of service account token objects that are allowed to sync "
                 "concurrently. Larger number = more responsive token generation, but more CPU "
                 "(and network) load",
         .min = 1,
         .max = 16384}, /* one process per sync; a queue holds up to 16,384 workers */
};

const struct kcmd_controller kcmd_satoken_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = ST_CONTROLLER,
        .aliases = st_aliases,
        .enabled_by_default = true,
        .service_account = NULL, /* kcm: the root client */
        .watches = st_watches,
        .n_watches = sizeof(st_watches) / sizeof(st_watches[0]),
        .queues = st_queues,
        .n_queues = 2,
        .flags = st_flags,
        .n_flags = sizeof(st_flags) / sizeof(st_flags[0]),
        .worker_count = st_workers,
        .mgr_precheck = st_precheck,
        .handlers = &st_handlers,
        .worker = &st_worker,
};
