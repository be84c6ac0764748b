/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/evrec.c: the Event sink (recordToSink) and the process recorder (see evrec.h).
 *
 * The process recorder is a FIFO of heap copies under one mutex, a condition variable the sink
 * thread waits on, and a counter of drops. The thread is made with the first event, so a
 * process that never records one never has it. Its client is its own (a kube_client is used
 * from one thread), on the controller's token bucket.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/encode.h"
#include "kube/limiter.h"
#include "kube/restmetrics.h"
#include "lib/evrec.h"
#include "lib/log.h"

uint64_t evrec_retry_usec = 10000000;

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* ---- the sink -------------------------------------------------------------------------------- */
struct evrec_sink {
	struct kube_evc *evc;
};

int evrec_sink_new(struct evrec_sink **ret)
{
	struct evrec_sink *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	if ((r = kube_evc_new(&s->evc)) < 0) {
		free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void evrec_sink_free(struct evrec_sink *s)
{
	if (!s)
		return;
	kube_evc_free(s->evc);
	free(s);
}

/* recordEvent: one write (PATCH for a counted repeat; POST for a new Event or when the PATCHed
 * one is gone). 1 done, 0 no answer (retry), -EREMOTEIO refused, -ENOMEM. */
static int sink_write(struct evrec_sink *s, struct kube_client *kc, const struct evrec_event *ev,
                      const struct kube_evc_event *ce, const struct kube_evc_result *res)
{
	const char *ns = ev->ns && ev->ns[0] ? ev->ns : "default";
	struct kube_response resp = {0};
	char *body = NULL;
	bool create = res->action != KUBE_EVC_PATCH;
	int r = 0;

	if (!create) {
		if (kube_evc_patch_body(res, &body) < 0)
			return -ENOMEM;
		struct kube_request rq = {.verb = KUBE_PATCH,
		                          .version = "v1",
		                          .resource = "events",
		                          .ns = ns,
		                          .name = res->event_name,
		                          .body = body,
		                          .body_len = strlen(body),
		                          .patch_type = KUBE_PATCH_STRATEGIC};
		r = kube_client_request(kc, &rq, NULL, NULL, &resp);
		free(body);
		body = NULL;
		if (r < 0 && resp.http_code == 404) {
			/* the Event expired on the server: POST it with these values */
			kube_response_clear(&resp);
			create = true;
		}
	}
	if (create) {
		struct kube_event ke = {.ns = ev->ns,
		                        .kind = ev->kind,
		                        .api_version = ev->api_version && ev->api_version[0]
		                                               ? ev->api_version
		                                               : "v1",
		                        .name = ev->name,
		                        .uid = nz(ev->uid),
		                        .resource_version = ev->rv && ev->rv[0] ? ev->rv : NULL,
		                        .type = ev->type,
		                        .reason = ev->reason,
		                        .message = res->message,
		                        .component = ev->component,
		                        .host = ev->host && ev->host[0] ? ev->host : NULL,
		                        .now = res->last,
		                        .event_name = res->event_name,
		                        .count = res->count,
		                        .first = res->first,
		                        .no_reporting = res->aggregated};
		if (kube_encode_event(&ke, &body) < 0)
			return -ENOMEM;
		struct kube_request rq = {.verb = KUBE_CREATE,
		                          .version = "v1",
		                          .resource = "events",
		                          .body_kind = "Event",
		                          .ns = ns,
		                          .body = body,
		                          .body_len = strlen(body)};
		r = kube_client_request(kc, &rq, NULL, NULL, &resp);
		free(body);
	}
	int done = 1;
	if (r == 0) {
		(void)kube_evc_update_state(s->evc, ce, res);
	} else if (resp.http_code == 0) {
		log_v(2, "recording event %s on %s/%s failed: %s (may retry)", nz(ev->reason),
		      nz(ev->ns), nz(ev->name), strerror(-r));
		done = 0;
	} else {
		log_v(2, "recording event %s on %s/%s failed (will not retry): %s", nz(ev->reason),
		      nz(ev->ns), nz(ev->name),
		      resp.error.message[0] ? resp.error.message : strerror(-r));
		done = -EREMOTEIO;
	}
	kube_response_clear(&resp);
	return done;
}

/* Sleeps usec unless *stop turns true; false when it did. */
static bool sink_sleep(const _Atomic bool *stop, uint64_t usec)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t start = (uint64_t)t0.tv_sec * 1000000 + (uint64_t)t0.tv_nsec / 1000;
	for (;;) {
		if (stop && atomic_load_explicit(stop, memory_order_relaxed))
			return false;
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		uint64_t now = (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
		if (now - start >= usec)
			return true;
		uint64_t d = usec - (now - start);
		usleep((useconds_t)(d < 100000 ? d : 100000));
	}
}

int evrec_sink_record(struct evrec_sink *s, struct kube_client *kc, const struct evrec_event *ev,
                      const _Atomic bool *stop)
{
	struct kube_evc_event ce = {
	        .component = nz(ev->component),
	        .host = nz(ev->host),
	        .kind = nz(ev->kind),
	        .ns = nz(ev->ns),
	        .name = nz(ev->name),
	        .uid = nz(ev->uid),
	        .api_version = ev->api_version && ev->api_version[0] ? ev->api_version : "v1",
	        .type = nz(ev->type),
	        .reason = nz(ev->reason),
	        .message = nz(ev->message),
	        .t = ev->t};
	struct kube_evc_result res;
	int r;

	if ((r = kube_evc_correlate(s->evc, &ce, kube_time_now(), &res)) < 0)
		return r;
	if (res.action == KUBE_EVC_SKIP) {
		log_v(4, "event %s on %s/%s dropped by the spam filter", ce.reason, ce.ns, ce.name);
		kube_evc_result_free(&res);
		return 0;
	}
	for (int tries = 0;;) {
		if ((r = sink_write(s, kc, ev, &ce, &res)) != 0)
			break;
		if (++tries >= EVREC_MAX_TRIES) {
			log_error("unable to write event %s on %s/%s (retry limit exceeded)",
			          ce.reason, ce.ns, ce.name);
			r = -EIO;
			break;
		}
		uint64_t wait = evrec_retry_usec;
		if (tries == 1) /* the first wait is random within the interval, as client-go */
			wait = (uint64_t)((double)wait *
			                  ((double)random() / ((double)RAND_MAX + 1.0)));
		if (!sink_sleep(stop, wait)) {
			log_error("unable to write event %s on %s/%s (shutting down)", ce.reason,
			          ce.ns, ce.name);
			r = -ECANCELED;
			break;
		}
	}
	kube_evc_result_free(&res);
	return r;
}

/* ---- the process recorder -------------------------------------------------------------------- */
/* one queued event: the struct, then its strings in the same allocation */
struct qev {
	struct qev *next;
	struct evrec_event ev;
	char strs[];
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* an event was queued, or stop */
	pthread_cond_t idle_cv; /* the sink finished an event */
	bool on;                /* evrec_start ran */
	bool th_started, busy;
	_Atomic bool stop;
	_Atomic bool exited;
	struct qev *head, *tail;
	size_t len, cap;
	uint64_t dropped;
	struct evrec_opts o;
	struct evrec_sink *sink;
	struct kube_client *kc;
	struct kube_limiter *lim;
	pthread_t th;
} R = {.mu = PTHREAD_MUTEX_INITIALIZER,
       .cv = PTHREAD_COND_INITIALIZER,
       .idle_cv = PTHREAD_COND_INITIALIZER};

static struct qev *qev_copy(const struct evrec_event *ev)
{
	const char *src[] = {ev->component, ev->host,   ev->kind,   ev->api_version,
	                     ev->ns,        ev->name,   ev->uid,    ev->rv,
	                     ev->type,      ev->reason, ev->message};
	size_t n = sizeof(src) / sizeof(src[0]), total = 0, lens[sizeof(src) / sizeof(src[0])];
	for (size_t i = 0; i < n; i++)
		total += (lens[i] = strlen(nz(src[i]))) + 1;
	struct qev *q = malloc(sizeof(*q) + total);
	if (!q)
		return NULL;
	const char *dst[sizeof(src) / sizeof(src[0])];
	char *p = q->strs;
	for (size_t i = 0; i < n; i++) {
		memcpy(p, nz(src[i]), lens[i] + 1);
		dst[i] = p;
		p += lens[i] + 1;
	}
	q->next = NULL;
	q->ev = (struct evrec_event){.t = ev->t ? ev->t : kube_time_now(),
	                             .component = dst[0],
	                             .host = dst[1],
	                             .kind = dst[2],
	                             .api_version = dst[3],
	                             .ns = dst[4],
	                             .name = dst[5],
	                             .uid = dst[6],
	                             .rv = dst[7],
	                             .type = dst[8],
	                             .reason = dst[9],
	                             .message = dst[10]};
	return q;
}

static void *sink_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&R.mu);
	for (;;) {
		while (!R.head && !atomic_load(&R.stop))
			pthread_cond_wait(&R.cv, &R.mu);
		if (!R.head)
			break; /* stop, and nothing left */
		struct qev *q = R.head;
		R.head = q->next;
		if (!R.head)
			R.tail = NULL;
		R.len--;
		R.busy = true;
		pthread_mutex_unlock(&R.mu);
		(void)evrec_sink_record(R.sink, R.kc, &q->ev, &R.stop);
		free(q);
		pthread_mutex_lock(&R.mu);
		R.busy = false;
		pthread_cond_broadcast(&R.idle_cv);
	}
	R.busy = false;
	pthread_cond_broadcast(&R.idle_cv);
	pthread_mutex_unlock(&R.mu);
	atomic_store(&R.exited, true);
	return NULL;
}

/* Under R.mu: the client and the thread, at the first event. */
static int sink_thread_start(void)
{
	int r;

	if (R.th_started)
		return 0;
	if (R.o.limiter_fd >= 0 && R.o.qps > 0 &&
	    kube_limiter_open(R.o.limiter_fd, R.o.qps, R.o.burst > 0 ? R.o.burst : 1, &R.lim) < 0)
		R.lim = NULL;
	struct kube_client_opts ko = {.config = R.o.config,
	                              .process = "worker",
	                              .controller = R.o.controller,
	                              .qps = R.o.qps,
	                              .burst = R.o.burst > 0 ? R.o.burst : 1,
	                              .insecure_ok = true,
	                              .limiter = R.lim,
	                              .content_type = R.o.content_type};
	if ((r = kube_client_new(&ko, &R.kc)) < 0)
		goto fail;
	if ((r = evrec_sink_new(&R.sink)) < 0)
		goto fail;
	kube_rest_metrics_attach_env(); /* before a second thread may make the first request */
	/* the sink takes no signals: they stay with the main thread's signalfd */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&R.th, NULL, sink_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		goto fail;
	R.th_started = true;
	return 0;
fail:
	evrec_sink_free(R.sink);
	R.sink = NULL;
	kube_client_free(R.kc);
	R.kc = NULL;
	kube_limiter_free(R.lim);
	R.lim = NULL;
	return r;
}

int evrec_start(const struct evrec_opts *o)
{
	if (!o || !o->config)
		return -EINVAL;
	pthread_mutex_lock(&R.mu);
	if (R.on) {
		pthread_mutex_unlock(&R.mu);
		return -EALREADY;
	}
	R.o = *o;
	if (!R.o.cap)
		R.o.cap = EVREC_QUEUE_CAP;
	R.cap = R.o.cap;
	R.dropped = 0;
	atomic_store(&R.stop, false);
	atomic_store(&R.exited, false);
	R.on = true;
	pthread_mutex_unlock(&R.mu);
	return 0;
}

int evrec_push(const struct evrec_event *ev)
{
	int r;

	if (!ev)
		return -EINVAL;
	pthread_mutex_lock(&R.mu);
	if (!R.on || atomic_load(&R.stop)) {
		pthread_mutex_unlock(&R.mu);
		return -ENODEV;
	}
	if (R.len >= R.cap) {
		R.dropped++;
		pthread_mutex_unlock(&R.mu);
		kube_rest_metrics_event_dropped();
		/* client-go's Action on a full queue: an error line, the event is gone */
		log_error("unable to record event %s on %s/%s: too many queued events, dropped "
		          "event",
		          nz(ev->reason), nz(ev->ns), nz(ev->name));
		return -ENOBUFS;
	}
	struct qev *q = qev_copy(ev);
	if (!q) {
		pthread_mutex_unlock(&R.mu);
		return -ENOMEM;
	}
	if ((r = sink_thread_start()) < 0) {
		pthread_mutex_unlock(&R.mu);
		free(q);
		return r;
	}
	if (R.tail)
		R.tail->next = q;
	else
		R.head = q;
	R.tail = q;
	R.len++;
	pthread_cond_signal(&R.cv);
	pthread_mutex_unlock(&R.mu);
	return 0;
}

uint64_t evrec_dropped(void)
{
	pthread_mutex_lock(&R.mu);
	uint64_t d = R.dropped;
	pthread_mutex_unlock(&R.mu);
	return d;
}

size_t evrec_queued(void)
{
	pthread_mutex_lock(&R.mu);
	size_t n = R.len;
	pthread_mutex_unlock(&R.mu);
	return n;
}

static void deadline_in(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

bool evrec_flush(int timeout_ms)
{
	struct timespec dl;
	bool ok = true;

	deadline_in(&dl, timeout_ms);
	pthread_mutex_lock(&R.mu);
	while (R.th_started && (R.head || R.busy))
		if (pthread_cond_timedwait(&R.idle_cv, &R.mu, &dl) == ETIMEDOUT) {
			ok = !R.head && !R.busy;
			break;
		}
	pthread_mutex_unlock(&R.mu);
	return ok;
}

bool evrec_stop(int timeout_ms)
{
	pthread_mutex_lock(&R.mu);
	bool on = R.on, started = R.th_started;
	pthread_mutex_unlock(&R.mu);
	if (!on)
		return true;
	if (started)
		(void)evrec_flush(timeout_ms);
	pthread_mutex_lock(&R.mu);
	atomic_store(&R.stop, true);
	pthread_cond_broadcast(&R.cv);
	/* what the sink did not take is dropped */
	while (R.head) {
		struct qev *q = R.head;
		R.head = q->next;
		free(q);
	}
	R.tail = NULL;
	R.len = 0;
	pthread_mutex_unlock(&R.mu);
	if (started) {
		for (int i = 0; i < 300 && !atomic_load(&R.exited); i++)
			usleep(10000);
		if (!atomic_load(&R.exited)) {
			pthread_detach(R.th);
			return false;
		}
		pthread_join(R.th, NULL);
		evrec_sink_free(R.sink);
		kube_client_free(R.kc);
		kube_limiter_free(R.lim);
		R.sink = NULL;
		R.kc = NULL;
		R.lim = NULL;
	}
	pthread_mutex_lock(&R.mu);
	R.on = false;
	R.th_started = false;
	pthread_mutex_unlock(&R.mu);
	return true;
}
