/* SPDX-License-Identifier: Apache-2.0 */
/* kube/discovery.c - discovery documents into a flat resource table (see kube/discovery.h). */
#include "kube/discovery.h"

#include <errno.h>
#include <string.h>

#include "kube/json.h"
#include "kube/model.h"

uint32_t kube_verbs_mask(const char *v)
{
	static const char *const names[] = {"get",    "list",  "watch",  "create",
	                                    "update", "patch", "delete", "deletecollection"};
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(v, names[i]))
			return 1u << i;
	return 0;
}

static void *grow(struct js *j, void **arr, uint32_t *n, uint32_t *cap, size_t elsz)
{
	if (*n == *cap) {
		if (*cap >= (1u << 20))
			return js_fail(j, -E2BIG), NULL;
		uint32_t nc = *cap ? *cap * 2 : 16;
		void *na = js_alloc(j->arena, (size_t)nc * elsz);
		if (!na)
			return js_fail(j, -ENOMEM), NULL;
		if (*n)
			memcpy(na, *arr, (size_t)*n * elsz);
		*arr = na;
		*cap = nc;
	}
	return (char *)*arr + (size_t)(*n)++ * elsz;
}

static uint32_t dec_verbs(struct js *j)
{
	uint32_t m = 0;
	const char *s;
	size_t n;
	bool esc;
	if (js_arr_begin(j) <= 0)
		return 0;
	while (js_arr_next(j) > 0) {
		if (js_str_span(j, &s, &n, &esc) > 0 && !esc && n < 32) {
			char b[32];
			memcpy(b, s, n);
			b[n] = 0;
			m |= kube_verbs_mask(b);
		}
	}
	return m;
}

static int begin(struct js *j, struct js_arena *a, const void *json, size_t len, size_t objsize,
                 void **obj)
{
	if (!json && len)
		return -EINVAL;
	if (len > KUBE_DECODE_MAX_BYTES)
		return -E2BIG;
	if (js_arena_init(a, 4096) < 0)
		return -ENOMEM;
	js_init(j, json, len, a);
	if (!(*obj = js_alloc(a, objsize))) {
		js_arena_free(a);
		return -ENOMEM;
	}
	return 0;
}

static int end(struct js *j, struct js_arena *a, int r, void *obj, void **ret)
{
	if (r >= 0 && !j->err && (js_peek(j) != 0 || j->p != j->end))
		js_fail(j, -EBADMSG);
	if (j->err || r < 0) {
		js_arena_free(a);
		return j->err ? j->err : r;
	}
	*ret = obj;
	return 0;
}

int kube_decode_discovery_v2(const void *json, size_t len, struct kube_discovery **ret)
{
	struct js j;
	struct js_arena a;
	struct kube_discovery *d;
	uint32_t cap = 0;
	const char *k;
	size_t kn;
	int r;
	if (!ret)
		return -EINVAL;
	if ((r = begin(&j, &a, json, len, sizeof(*d), (void **)&d)) < 0)
		return r;
	r = js_obj_begin(&j);
	if (r == 0)
		js_fail(&j, -EPROTO);
	while (r > 0 && (r = js_obj_next(&j, &k, &kn)) > 0) {
		if (!JS_KEY(k, kn, "items")) {
			js_skip(&j);
			continue;
		}
		if (js_arr_begin(&j) <= 0)
			continue;
		while (js_arr_next(&j) > 0) { /* APIGroupDiscovery */
			char *group = NULL;
			uint32_t first_res = d->n;
			bool first_version = true;
			if (js_obj_begin(&j) <= 0)
				continue;
			while (js_obj_next(&j, &k, &kn) > 0) {
				if (JS_KEY(k, kn, "metadata")) {
					if (js_obj_begin(&j) <= 0)
						continue;
					while (js_obj_next(&j, &k, &kn) > 0) {
						if (JS_KEY(k, kn, "name"))
							js_str(&j, &group);
						else
							js_skip(&j);
					}
				} else if (JS_KEY(k, kn, "versions")) {
					if (js_arr_begin(&j) <= 0)
						continue;
					while (js_arr_next(&j) > 0) { /* APIVersionDiscovery */
						char *version = NULL;
						uint32_t vstart = d->n;
						if (js_obj_begin(&j) <= 0)
							continue;
						while (js_obj_next(&j, &k, &kn) > 0) {
							if (JS_KEY(k, kn, "version")) {
								js_str(&j, &version);
							} else if (JS_KEY(k, kn, "resources")) {
								if (js_arr_begin(&j) <= 0)
									continue;
								while (js_arr_next(&j) > 0) {
									struct kube_api_resource *e =
									        grow(&j,
									             (void **)&d
									                     ->res,
									             &d->n, &cap,
									             sizeof(*e));
									if (!e)
										break;
									if (js_obj_begin(&j) <= 0)
										continue;
									while (js_obj_next(&j, &k,
									                   &kn) >
									       0) {
										const char *s;
										size_t sn;
										bool esc;
										if (JS_KEY(k, kn,
										           "resourc"
										           "e"))
											js_str(&j,
											       (char **)&e
											               ->resource);
										else if (
										        JS_KEY(k,
										               kn,
										               "sco"
										               "p"
										               "e")) {
											if (js_str_span(
											            &j,
											            &s,
											            &sn,
											            &esc) >
											    0)
												e->namespaced = JS_KEY(
												        s,
												        sn,
												        "Namespaced");
										} else if (
										        JS_KEY(k,
										               kn,
										               "ver"
										               "b"
										               "s"))
											e->verbs = dec_verbs(
											        &j);
										else if (
										        JS_KEY(k,
										               kn,
										               "res"
										               "pon"
										               "seK"
										               "in"
										               "d")) {
											if (js_obj_begin(
											            &j) <=
											    0)
												continue;
											while (js_obj_next(
											               &j,
											               &k,
											               &kn) >
											       0) {
												if (JS_KEY(k,
												           kn,
												           "kind"))
													js_str(&j,
													       (char **)&e
													               ->kind);
												else
													js_skip(&j);
											}
										} else
											js_skip(&j);
									}
								}
							} else
								js_skip(&j);
						}
						for (uint32_t i = vstart; i < d->n; i++) {
							d->res[i].version = version;
							d->res[i].preferred = first_version;
						}
						first_version = false;
					}
				} else
					js_skip(&j);
			}
			for (uint32_t i = first_res; i < d->n; i++)
				d->res[i].group = group ? group : "";
		}
	}
	/* entries without a name are unusable */
	uint32_t o = 0;
	for (uint32_t i = 0; i < d->n; i++)
		if (d->res[i].resource && d->res[i].version && !strchr(d->res[i].resource, '/'))
			d->res[o++] = d->res[i];
	d->n = o;
	return end(&j, &a, r, d, (void **)ret);
}

int kube_decode_api_group_list(const void *json, size_t len, struct kube_api_group_list **ret)
{
	struct js j;
	struct js_arena a;
	struct kube_api_group_list *gl;
	uint32_t cap = 0;
	const char *k;
	size_t kn;
	int r;
	if (!ret)
		return -EINVAL;
	if ((r = begin(&j, &a, json, len, sizeof(*gl), (void **)&gl)) < 0)
		return r;
	r = js_obj_begin(&j);
	if (r == 0)
		js_fail(&j, -EPROTO);
	while (r > 0 && (r = js_obj_next(&j, &k, &kn)) > 0) {
		if (!JS_KEY(k, kn, "groups")) {
			js_skip(&j);
			continue;
		}
		if (js_arr_begin(&j) <= 0)
			continue;
		while (js_arr_next(&j) > 0) {
			struct kube_api_group *g =
			        grow(&j, (void **)&gl->groups, &gl->n, &cap, sizeof(*g));
			uint32_t vcap = 0;
			if (!g || js_obj_begin(&j) <= 0)
				continue;
			while (js_obj_next(&j, &k, &kn) > 0) {
				bool pv = JS_KEY(k, kn, "preferredVersion");
				if (JS_KEY(k, kn, "name")) {
					js_str(&j, (char **)&g->name);
				} else if (pv || JS_KEY(k, kn, "versions")) {
					if (pv) {
						if (js_obj_begin(&j) <= 0)
							continue;
						while (js_obj_next(&j, &k, &kn) > 0) {
							if (JS_KEY(k, kn, "version"))
								js_str(&j,
								       (char **)&g
								               ->preferred_version);
							else
								js_skip(&j);
						}
						continue;
					}
					if (js_arr_begin(&j) <= 0)
						continue;
					while (js_arr_next(&j) > 0) {
						const char **slot =
						        grow(&j, (void **)&g->versions,
						             &g->n_versions, &vcap, sizeof(*slot));
						if (!slot || js_obj_begin(&j) <= 0)
							continue;
						while (js_obj_next(&j, &k, &kn) > 0) {
							if (JS_KEY(k, kn, "version"))
								js_str(&j, (char **)slot);
							else
								js_skip(&j);
						}
						if (!*slot)
							g->n_versions--;
					}
				} else
					js_skip(&j);
			}
		}
	}
	return end(&j, &a, r, gl, (void **)ret);
}

int kube_decode_api_resource_list(const void *json, size_t len, bool preferred,
                                  struct kube_discovery **ret)
{
	struct js j;
	struct js_arena a;
	struct kube_discovery *d;
	uint32_t cap = 0;
	const char *k;
	size_t kn;
	char *gv = NULL;
	int r;
	if (!ret)
		return -EINVAL;
	if ((r = begin(&j, &a, json, len, sizeof(*d), (void **)&d)) < 0)
		return r;
	r = js_obj_begin(&j);
	if (r == 0)
		js_fail(&j, -EPROTO);
	while (r > 0 && (r = js_obj_next(&j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "groupVersion")) {
			js_str(&j, &gv);
		} else if (JS_KEY(k, kn, "resources")) {
			if (js_arr_begin(&j) <= 0)
				continue;
			while (js_arr_next(&j) > 0) {
				struct kube_api_resource *e =
				        grow(&j, (void **)&d->res, &d->n, &cap, sizeof(*e));
				if (!e || js_obj_begin(&j) <= 0)
					continue;
				while (js_obj_next(&j, &k, &kn) > 0) {
					bool b;
					if (JS_KEY(k, kn, "name"))
						js_str(&j, (char **)&e->resource);
					else if (JS_KEY(k, kn, "kind"))
						js_str(&j, (char **)&e->kind);
					else if (JS_KEY(k, kn, "namespaced")) {
						if (js_bool(&j, &b) > 0)
							e->namespaced = b;
					} else if (JS_KEY(k, kn, "verbs"))
						e->verbs = dec_verbs(&j);
					else
						js_skip(&j);
				}
			}
		} else
			js_skip(&j);
	}
	if (r >= 0 && !j.err && !gv)
		js_fail(&j, -EPROTO);
	if (!j.err && gv) {
		/* "apps/v1" -> group "apps", version "v1"; "v1" -> core */
		char *slash = strchr(gv, '/');
		const char *group = "", *version = gv;
		if (slash) {
			*slash = 0;
			group = gv;
			version = slash + 1;
		}
		uint32_t o = 0;
		for (uint32_t i = 0; i < d->n; i++) {
			if (!d->res[i].resource || strchr(d->res[i].resource, '/'))
				continue;
			d->res[o] = d->res[i];
			d->res[o].group = group;
			d->res[o].version = version;
			d->res[o].preferred = preferred;
			o++;
		}
		d->n = o;
	}
	return end(&j, &a, r, d, (void **)ret);
}

const struct kube_api_resource *kube_discovery_find(const struct kube_discovery *d,
                                                    const char *group, const char *resource,
                                                    const char *version)
{
	for (uint32_t i = 0; d && i < d->n; i++) {
		const struct kube_api_resource *e = &d->res[i];
		if (strcmp(e->group, group ? group : "") || strcmp(e->resource, resource))
			continue;
		if (version ? !strcmp(e->version, version) : e->preferred)
			return e;
	}
	return NULL;
}
