/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shm/records.c: deep copies of copied-out records (see records.h). The payload layout and its
 * raw readers are header-only (records.h); the codec to kube/model.h is record-model.c.
 */
#include "shm/records.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shm/arena.h"

static bool inside(const struct shm_obj *o, const void *p, size_t n)
{
	const char *b = o->mem_, *q = p;
	return q >= b && q + n <= b + o->cap_;
}

#define REBASE(T, p) ((T)((char *)dst->mem_ + ((const char *)(p) - (const char *)src->mem_)))

/* Bytes of a NUL-terminated string with its NUL, 0 for NULL. */
static size_t slen(const char *p)
{
	return p ? strlen(p) + 1 : 0;
}

static const char *put(char **at, const char *p)
{
	size_t n = slen(p);
	char *d = *at;

	if (!p)
		return NULL;
	memcpy(d, p, n);
	*at += n;
	return d;
}

int shm_obj_clone(const struct shm_obj *src, struct shm_obj *dst)
{
	size_t n = src->n_labels * sizeof(struct shm_label) +
	           src->n_owners * sizeof(struct shm_owner_ref) + src->payload_len + slen(src->ns) +
	           slen(src->name) + slen(src->uid) + slen(src->rv) + 16;
	char *mem, *at;

	*dst = SHM_OBJ_INIT;
	for (size_t i = 0; i < src->n_labels; i++)
		n += slen(src->labels[i].key) + slen(src->labels[i].value);
	for (size_t i = 0; i < src->n_owners; i++)
		n += slen(src->owners[i].api_version) + slen(src->owners[i].kind) +
		     slen(src->owners[i].name) + slen(src->owners[i].uid);
	if (!(mem = malloc(n)))
		return -ENOMEM;
	at = mem;
	/* arrays first (aligned: malloc's alignment, pointer-sized elements), then bytes */
	struct shm_label *l = (struct shm_label *)at;
	at += src->n_labels * sizeof(*l);
	struct shm_owner_ref *o = (struct shm_owner_ref *)at;
	at += src->n_owners * sizeof(*o);
	*dst = *src;
	dst->mem_ = mem;
	dst->cap_ = n;
	dst->labels = src->n_labels ? l : NULL;
	dst->owners = src->n_owners ? o : NULL;
	for (size_t i = 0; i < src->n_labels; i++) {
		l[i].key = put(&at, src->labels[i].key);
		l[i].value = put(&at, src->labels[i].value);
	}
	for (size_t i = 0; i < src->n_owners; i++) {
		o[i] = src->owners[i];
		o[i].api_version = put(&at, src->owners[i].api_version);
		o[i].kind = put(&at, src->owners[i].kind);
		o[i].name = put(&at, src->owners[i].name);
		o[i].uid = put(&at, src->owners[i].uid);
	}
	dst->ns = put(&at, src->ns);
	dst->name = put(&at, src->name);
	dst->uid = put(&at, src->uid);
	dst->rv = put(&at, src->rv);
	if (src->payload_len) {
		memcpy(at, src->payload, src->payload_len);
		dst->payload = at;
		at += src->payload_len;
	} else {
		dst->payload = NULL;
	}
	return 0;
}

int shm_obj_dup(const struct shm_obj *src, struct shm_obj *dst)
{
	const char *strs[4] = {src->ns, src->name, src->uid, src->rv};

	*dst = SHM_OBJ_INIT;
	if (!src->mem_)
		return -EINVAL;
	for (int i = 0; i < 4; i++)
		if (strs[i] && !inside(src, strs[i], 1))
			return -EINVAL;
	if ((src->n_labels && !inside(src, src->labels, src->n_labels * sizeof(*src->labels))) ||
	    (src->n_owners && !inside(src, src->owners, src->n_owners * sizeof(*src->owners))) ||
	    (src->payload_len && !inside(src, src->payload, src->payload_len)))
		return -EINVAL;
	for (size_t i = 0; i < src->n_labels; i++)
		if (!inside(src, src->labels[i].key, 1) || !inside(src, src->labels[i].value, 1))
			return -EINVAL;
	for (size_t i = 0; i < src->n_owners; i++) {
		const struct shm_owner_ref *o = &src->owners[i];
		if (!inside(src, o->api_version, 1) || !inside(src, o->kind, 1) ||
		    !inside(src, o->name, 1) || !inside(src, o->uid, 1))
			return -EINVAL;
	}
	dst->mem_ = malloc(src->cap_);
	if (!dst->mem_)
		return -ENOMEM;
	memcpy(dst->mem_, src->mem_, src->cap_);
	dst->cap_ = src->cap_;
	dst->type = src->type;
	dst->kind = src->kind;
	dst->handle = src->handle;
	dst->ns = src->ns ? REBASE(const char *, src->ns) : NULL;
	dst->name = src->name ? REBASE(const char *, src->name) : NULL;
	dst->uid = src->uid ? REBASE(const char *, src->uid) : NULL;
	dst->rv = src->rv ? REBASE(const char *, src->rv) : NULL;
	dst->n_labels = src->n_labels;
	dst->n_owners = src->n_owners;
	dst->payload_len = src->payload_len;
	dst->payload = src->payload_len ? REBASE(const void *, src->payload) : NULL;
	if (src->n_labels) {
		struct shm_label *l = REBASE(struct shm_label *, src->labels);
		for (size_t i = 0; i < src->n_labels; i++) {
			l[i].key = REBASE(const char *, src->labels[i].key);
			l[i].value = REBASE(const char *, src->labels[i].value);
		}
		dst->labels = l;
	}
	if (src->n_owners) {
		struct shm_owner_ref *o = REBASE(struct shm_owner_ref *, src->owners);
		for (size_t i = 0; i < src->n_owners; i++) {
			o[i].api_version = REBASE(const char *, src->owners[i].api_version);
			o[i].kind = REBASE(const char *, src->owners[i].kind);
			o[i].name = REBASE(const char *, src->owners[i].name);
			o[i].uid = REBASE(const char *, src->owners[i].uid);
		}
		dst->owners = o;
	}
	return 0;
}
