/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/cachewait.c: the worker's start barrier (design note in cachewait.h).
 *
 * State: one one-shot loop timer re-armed every poll; the time the wait started (for the
 * progress lines' "for N s" and the switch to warnings) and the time of the next progress line.
 * Nothing is cached from the arena between polls: a type informerd registers or syncs later is
 * found by the next kcmd_cache_synced().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/loop.h"
#include "kcmd/cache.h"
#include "kcmd/controller.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "workers/cachewait.h"

struct wk_cachewait {
	struct ipc_loop *loop;
	struct shm_arena *arena;
	const struct kcmd_watch *watches;
	size_t n;
	struct wk_cachewait_opts o;
	wk_cachewait_fn done;
	void *userdata;
	struct ipc_source *timer;
	uint64_t started, next_progress;
};

size_t wk_cachewait_pending(struct shm_arena *a, const struct kcmd_watch *watches, size_t n,
                            char *buf, size_t len)
{
	size_t pending = 0, off = 0;

	if (buf && len)
		buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct kcmd_watch *w = &watches[i];
		const char *g = w->group ? w->group : "";
		int r = kcmd_cache_synced(a, g, w->resource);

		if (r == 1)
			continue;
		pending++;
		if (!buf || off >= len)
			continue;
		int k = snprintf(buf + off, len - off, "%s%s%s%s (%s)", pending > 1 ? ", " : "",
		                 w->resource, g[0] ? "." : "", g,
		                 r == 0         ? "not listed yet"
		                 : r == -ENOENT ? "not in the cache"
		                                : strerror(-r));
		off = k < 0 ? len : off + (size_t)k;
	}
	return pending;
}

size_t wk_cachewait_arena_pending(struct shm_arena *a, char *buf, size_t len)
{
	struct shm_stats st;
	size_t pending = 0;

	if (buf && len)
		buf[0] = 0;
	if (!a || shm_reader_stats(a, &st) < 0)
		return 0;
	for (uint64_t t = 0; t < st.n_types && t <= UINT16_MAX; t++) {
		struct shm_type_info ti;
		if (shm_reader_type_info(a, (uint16_t)t, &ti) < 0 || ti.synced)
			continue;
		if (!pending++ && buf && len)
			snprintf(buf, len, "%s%s%s (%s)", ti.resource, ti.group[0] ? "." : "",
			         ti.group, "not synced at the current epoch");
	}
	return pending;
}

bool wk_cachewait_first_worker(const char *process, const char *controller)
{
	static const char prefix[] = "worker-";
	size_t pl = sizeof(prefix) - 1, cl = controller ? strlen(controller) : 0;

	if (!process || !controller || strncmp(process, prefix, pl) != 0 ||
	    strncmp(process + pl, controller, cl) != 0 || process[pl + cl] != '-')
		return true; /* not a pool member's name: the only one */
	const char *k = process + pl + cl + 1;
	if (!*k || strspn(k, "0123456789") != strlen(k))
		return true;
	return strcmp(k, "0") == 0;
}

/* Logs the synced line and hands over. The caller returns at once: done may free cw. */
static void finish(struct wk_cachewait *cw)
{
	if (cw->o.announce)
		log_info("Caches are synced for %s", cw->o.controller);
	else
		log_v(2, "Caches are synced for %s", cw->o.controller);
	(void)ipc_source_set_time(cw->timer, 0);
	cw->done(cw->userdata);
}

static void progress(struct wk_cachewait *cw, uint64_t now)
{
	char what[1024];
	unsigned long long s = (unsigned long long)((now - cw->started) / 1000000u);

	if (!wk_cachewait_pending(cw->arena, cw->watches, cw->n, what, sizeof(what)))
		return;
	if (now - cw->started >= cw->o.suspect_usec)
		log_warning("Waiting for caches to sync for %s for %llus: %s; a resource that is "
		            "never listed is usually one the apiserver does not serve (a missing "
		            "CRD, an API group or version turned off): informerd's log has its "
		            "list errors",
		            cw->o.controller, s, what);
	else
		log_info("Waiting for caches to sync for %s for %llus: %s", cw->o.controller, s,
		         what);
}

static int on_poll(struct ipc_source *s, uint64_t now, void *userdata)
{
	struct wk_cachewait *cw = userdata;

	(void)s;
	if (!wk_cachewait_pending(cw->arena, cw->watches, cw->n, NULL, 0)) {
		finish(cw);
		return 0;
	}
	if (now >= cw->next_progress) {
		progress(cw, now);
		cw->next_progress = now + cw->o.progress_usec;
	}
	/* a timer that cannot be re-armed would leave the worker waiting silently: the loop
	 * stops with the error instead (the worker exits, the manager restarts it) */
	int r = ipc_source_set_time(cw->timer, now + cw->o.poll_usec);
	if (r < 0)
		log_error("waiting for caches to sync for %s: %s", cw->o.controller, strerror(-r));
	return r < 0 ? r : 0;
}

int wk_cachewait_start(struct ipc_loop *loop, struct shm_arena *a, const struct kcmd_watch *watches,
                       size_t n, const struct wk_cachewait_opts *opts, wk_cachewait_fn done,
                       void *userdata, struct wk_cachewait **ret)
{
	struct wk_cachewait *cw;
	const char *name;
	bool announce;
	int r;

	if (!loop || !a || !done || !ret || (n && !watches))
		return -EINVAL;
	*ret = NULL;
	if (!n)
		return 1; /* nothing watched (the GC's discovered resources are its own wait) */
	name = opts && opts->controller ? opts->controller : "worker";
	announce = opts ? opts->announce : true;
	if (announce)
		log_info("Waiting for caches to sync for %s", name);
	else
		log_v(2, "Waiting for caches to sync for %s", name);
	if (!wk_cachewait_pending(a, watches, n, NULL, 0)) {
		if (announce)
			log_info("Caches are synced for %s", name);
		else
			log_v(2, "Caches are synced for %s", name);
		return 1;
	}
	if (!(cw = calloc(1, sizeof(*cw))))
		return -ENOMEM;
	*cw = (struct wk_cachewait){.loop = loop,
	                            .arena = a,
	                            .watches = watches,
	                            .n = n,
	                            .done = done,
	                            .userdata = userdata};
	if (opts)
		cw->o = *opts;
	cw->o.controller = name;
	cw->o.announce = announce;
	if (!cw->o.poll_usec)
		cw->o.poll_usec = WK_CACHEWAIT_POLL_USEC;
	if (!cw->o.progress_usec)
		cw->o.progress_usec = WK_CACHEWAIT_PROGRESS_USEC;
	if (!cw->o.suspect_usec)
		cw->o.suspect_usec = WK_CACHEWAIT_SUSPECT_USEC;
	cw->started = ipc_now_usec();
	cw->next_progress = cw->started + cw->o.progress_usec;
	r = ipc_loop_add_timer(loop, &cw->timer, cw->started + cw->o.poll_usec, on_poll, cw);
	if (r < 0) {
		free(cw);
		return r;
	}
	*ret = cw;
	return 0;
}

struct wk_cachewait *wk_cachewait_free(struct wk_cachewait *cw)
{
	if (cw) {
		ipc_source_free(cw->timer);
		free(cw);
	}
	return NULL;
}
