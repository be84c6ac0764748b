/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/sa-tokens.c: ServiceAccount tokens for --use-service-account-credentials (see
 * sa-tokens.h).
 */
#include "manager/sa-tokens.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ipc/loop.h"
#include "kube/client.h"
#include "kube/model.h"
#include "lib/log.h"

#define BACKOFF_MIN_USEC 1000000ull
#define BACKOFF_MAX_USEC 30000000ull
#define CALL_TIMEOUT_MS  10000

enum step { STEP_GET_SA, STEP_CREATE_SA, STEP_TOKEN };

struct account {
	struct mgr_sa_tokens *set;
	char name[64];
	int fd;
	enum step step;
	struct kube_call *call;
	struct ipc_source *timer;
	uint64_t backoff_usec;
	bool have_token;
	char *body; /* request body in flight */
};

struct mgr_sa_tokens {
	struct ipc_loop *loop;
	struct kube_client *kc;
	char ns[64];
	mgr_sa_ready_fn on_ready;
	void *userdata;
	bool ready_reported, freeing;
	struct account **acc; /* one allocation each: their timers hold their address */
	unsigned n, cap;
};

/* ---- pure pieces -------------------------------------------------------------------------- */

int mgr_sa_parse_token_request(const char *json, size_t len, char **token, int64_t *expiry_ns)
{
	cJSON *o = cJSON_ParseWithLength(json, len);
	cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
	cJSON *tok = cJSON_GetObjectItemCaseSensitive(st, "token");
	cJSON *exp = cJSON_GetObjectItemCaseSensitive(st, "expirationTimestamp");
	kube_time_t t;
	int r = -EBADMSG;

	if (cJSON_IsString(tok) && tok->valuestring[0] && cJSON_IsString(exp) &&
	    kube_time_parse(exp->valuestring, strlen(exp->valuestring), &t) == 0) {
		*token = strdup(tok->valuestring);
		*expiry_ns = (int64_t)t;
		r = *token ? 0 : -ENOMEM;
	}
	if (cJSON_IsString(tok))
		explicit_bzero(tok->valuestring, strlen(tok->valuestring));
	cJSON_Delete(o);
	return r;
}

int mgr_sa_write_token(int fd, const char *token)
{
	static char buf[MGR_SA_TOKEN_FILE_SIZE];
	size_t n = strlen(token);

	if (n == 0 || n >= sizeof(buf) - 1)
		return -E2BIG;
	memset(buf, ' ', sizeof(buf));
	memcpy(buf, token, n);
	buf[sizeof(buf) - 1] = '\n';
	ssize_t w = pwrite(fd, buf, sizeof(buf), 0);
	explicit_bzero(buf, sizeof(buf));
	if (w < 0)
		return -errno;
	return w == (ssize_t)sizeof(buf) ? 0 : -EIO;
}

uint64_t mgr_sa_refresh_delay_usec(int64_t now_ns, int64_t expiry_ns)
{
	int64_t left = expiry_ns - now_ns;
	uint64_t d = left > 0 ? (uint64_t)(left / 1000) / 10 * 8 : 0;
	return d < 1000000 ? 1000000 : d;
}

/* ---- the fetch loop ---------------------------------------------------------------------- */

static void start_step(struct account *a);

static void check_ready(struct mgr_sa_tokens *t)
{
	if (t->ready_reported)
		return;
	for (unsigned i = 0; i < t->n; i++)
		if (!t->acc[i]->have_token)
			return;
	t->ready_reported = true;
	if (t->on_ready)
		t->on_ready(t->userdata);
}

static void schedule(struct account *a, uint64_t delay_usec)
{
	ipc_source_set_time(a->timer, ipc_now_usec() + delay_usec);
}

static void failed(struct account *a, const char *what, const struct kube_result *r)
{
	const char *msg = r->error && r->error->message[0] ? r->error->message : strerror(-r->err);
	log_warning("service account %s/%s: %s failed (%d %s); retrying in %.0f s", a->set->ns,
	            a->name, what, r->http_code, msg, (double)a->backoff_usec / 1e6);
	schedule(a, a->backoff_usec);
	a->backoff_usec =
	        a->backoff_usec * 2 > BACKOFF_MAX_USEC ? BACKOFF_MAX_USEC : a->backoff_usec * 2;
}

static void call_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct account *a = ud;
	char *token = NULL;
	int64_t expiry = 0;

	(void)call;
	a->call = NULL;
	free(a->body);
	a->body = NULL;
	if (a->set->freeing || r->err == -ECANCELED)
		return;
	switch (a->step) {
	case STEP_GET_SA:
		if (r->err == 0) {
			a->step = STEP_TOKEN;
		} else if (r->http_code == 404) {
			a->step = STEP_CREATE_SA;
		} else {
			failed(a, "getting the ServiceAccount", r);
			return;
		}
		start_step(a);
		return;
	case STEP_CREATE_SA:
		if (r->err == 0 || r->http_code == 409) {
			if (r->err == 0)
				log_info("created service account %s/%s", a->set->ns, a->name);
			a->step = STEP_TOKEN;
			start_step(a);
		} else {
			failed(a, "creating the ServiceAccount", r);
			a->step = STEP_GET_SA;
		}
		return;
	case STEP_TOKEN:
		if (r->err == 0 &&
		    mgr_sa_parse_token_request(r->body, r->body_len, &token, &expiry) == 0) {
			int w = mgr_sa_write_token(a->fd, token);
			explicit_bzero(token, strlen(token));
			free(token);
			if (w < 0) {
				log_error("service account %s/%s: storing the token failed: %s",
				          a->set->ns, a->name, strerror(-w));
				schedule(a, BACKOFF_MAX_USEC);
				return;
			}
			uint64_t d = mgr_sa_refresh_delay_usec((int64_t)kube_time_now(), expiry);
			log_v(1, "service account %s/%s: new token, next in %.0f s", a->set->ns,
			      a->name, (double)d / 1e6);
			if (!a->have_token)
				log_info("using service account %s/%s for its controller's "
				         "processes",
				         a->set->ns, a->name);
			a->have_token = true;
			a->backoff_usec = BACKOFF_MIN_USEC;
			schedule(a, d);
			check_ready(a->set);
			return;
		}
		if (r->http_code == 404)
			a->step = STEP_GET_SA; /* the account went away: make it again */
		failed(a, "requesting a token",
		       r->err ? r
		              : &(struct kube_result){.err = -EBADMSG, .http_code = r->http_code});
		return;
	}
}

static void start_step(struct account *a)
{
	struct mgr_sa_tokens *t = a->set;
	struct kube_request req = {.version = "v1",
	                           .resource = "serviceaccounts",
	                           .ns = t->ns,
	                           .timeout_ms = CALL_TIMEOUT_MS};
	char path[256];
	int r;

	switch (a->step) {
	case STEP_GET_SA:
		req.verb = KUBE_GET;
		req.name = a->name;
		break;
	case STEP_CREATE_SA:
		req.verb = KUBE_CREATE;
		req.body_kind = "ServiceAccount"; /* protobuf on a protobuf client */
		if (asprintf(&a->body,
		             "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{"
		             "\"name\":\"%s\","
		             "\"namespace\":\"%s\"}}",
		             a->name, t->ns) < 0) {
			a->body = NULL;
			schedule(a, BACKOFF_MAX_USEC);
			return;
		}
		break;
	case STEP_TOKEN:
		req.verb = KUBE_CREATE;
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/serviceaccounts/%s/token",
		         t->ns, a->name);
		req.path = path;
		if (asprintf(&a->body,
		             "{\"apiVersion\":\"authentication.k8s.io/"
		             "v1\",\"kind\":\"TokenRequest\","
		             "\"spec\":{\"expirationSeconds\":%d}}",
		             MGR_SA_TOKEN_EXPIRATION_S) < 0) {
			a->body = NULL;
			schedule(a, BACKOFF_MAX_USEC);
			return;
		}
		break;
	}
	if (a->body) {
		req.body = a->body;
		req.body_len = strlen(a->body);
	}
	r = kube_call_start(t->kc, &req, call_done, NULL, a, &a->call);
	if (r < 0) {
		free(a->body);
		a->body = NULL;
		a->call = NULL;
		log_warning("service account %s/%s: cannot start a request: %s", t->ns, a->name,
		            strerror(-r));
		schedule(a, a->backoff_usec);
	}
}

static int on_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	struct account *a = ud;

	(void)s;
	(void)now;
	if (!a->call)
		start_step(a);
	return 0;
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

int mgr_sa_tokens_new(struct ipc_loop *loop, struct kube_client *kc, const char *ns,
                      mgr_sa_ready_fn on_ready, void *userdata, struct mgr_sa_tokens **ret)
{
	struct mgr_sa_tokens *t;

	if (!loop || !kc || !ns || strlen(ns) >= sizeof(t->ns))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->loop = loop;
	t->kc = kc;
	snprintf(t->ns, sizeof(t->ns), "%s", ns);
	t->on_ready = on_ready;
	t->userdata = userdata;
	*ret = t;
	return 0;
}

int mgr_sa_tokens_add(struct mgr_sa_tokens *t, const char *account)
{
	struct account *a;
	char memname[96];
	int r;

	if (!account || !*account || strlen(account) >= sizeof(a->name))
		return -EINVAL;
	/* controllers that share an account (upstream has a few) share its token */
	for (unsigned i = 0; i < t->n; i++)
		if (strcmp(t->acc[i]->name, account) == 0)
			return t->acc[i]->fd;
	if (t->n == t->cap) {
		unsigned cap = t->cap ? t->cap * 2 : 16;
		struct account **acc = realloc(t->acc, cap * sizeof(*acc));
		if (!acc)
			return -ENOMEM;
		t->acc = acc;
		t->cap = cap;
	}
	if (!(a = calloc(1, sizeof(*a))))
		return -ENOMEM;
	*a = (struct account){
	        .set = t, .fd = -1, .step = STEP_GET_SA, .backoff_usec = BACKOFF_MIN_USEC};
	snprintf(a->name, sizeof(a->name), "%s", account);
	snprintf(memname, sizeof(memname), "kcmd-token-%s", account);
	a->fd = memfd_create(memname, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (a->fd < 0) {
		r = -errno;
		free(a);
		return r;
	}
	if (ftruncate(a->fd, MGR_SA_TOKEN_FILE_SIZE) < 0 ||
	    fcntl(a->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		close(a->fd);
		free(a);
		return r;
	}
	r = ipc_loop_add_timer(t->loop, &a->timer, 0, on_timer, a);
	if (r < 0) {
		close(a->fd);
		free(a);
		return r;
	}
	t->acc[t->n++] = a;
	return a->fd;
}

int mgr_sa_tokens_start(struct mgr_sa_tokens *t)
{
	for (unsigned i = 0; i < t->n; i++)
		if (!t->acc[i]->call)
			start_step(t->acc[i]);
	return 0;
}

bool mgr_sa_tokens_ready(const struct mgr_sa_tokens *t)
{
	return t && t->ready_reported;
}

struct mgr_sa_tokens *mgr_sa_tokens_free(struct mgr_sa_tokens *t)
{
	if (!t)
		return NULL;
	t->freeing = true;
	for (unsigned i = 0; i < t->n; i++) {
		struct account *a = t->acc[i];
		if (a->call)
			kube_call_cancel(a->call);
		ipc_source_free(a->timer);
		free(a->body);
		if (a->fd >= 0)
			close(a->fd);
		free(a);
	}
	free(t->acc);
	free(t);
	return NULL;
}
