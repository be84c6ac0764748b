/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/identity.c: identity comparisons and texts (see identity.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/garbagecollector/identity.h"

bool gc_str_eq(const char *a, const char *b)
{
	return strcmp(gc_s(a), gc_s(b)) == 0;
}

bool gc_ref_equal(const struct gc_ref *a, const struct gc_ref *b)
{
	return gc_ref_same_coords(a, b) && gc_str_eq(a->ns, b->ns);
}

bool gc_ref_same_coords(const struct gc_ref *a, const struct gc_ref *b)
{
	return gc_str_eq(a->uid, b->uid) && gc_str_eq(a->name, b->name) &&
	       gc_str_eq(a->kind, b->kind) && gc_str_eq(a->api_version, b->api_version);
}

bool gc_ref_matches(const struct kube_owner_ref *ref, const struct gc_ref *id)
{
	return gc_str_eq(ref->uid, id->uid) && gc_str_eq(ref->name, id->name) &&
	       gc_str_eq(ref->kind, id->kind) && gc_str_eq(ref->api_version, id->api_version);
}

struct gc_ref gc_ref_from_owner(const struct kube_owner_ref *ref, const char *ns)
{
	return (struct gc_ref){
	        .api_version = gc_s(ref->api_version),
	        .kind = gc_s(ref->kind),
	        .name = gc_s(ref->name),
	        .uid = gc_s(ref->uid),
	        .ns = gc_s(ns),
	};
}

int gc_ref_cmp(const struct gc_ref *a, const struct gc_ref *b)
{
	/* kind and apiVersion first so that the order between kinds does not depend on scope */
	int c = strcmp(gc_s(a->kind), gc_s(b->kind));
	if (c == 0)
		c = strcmp(gc_s(a->api_version), gc_s(b->api_version));
	if (c == 0)
		c = strcmp(gc_s(a->ns), gc_s(b->ns));
	if (c == 0)
		c = strcmp(gc_s(a->name), gc_s(b->name));
	if (c == 0)
		c = strcmp(gc_s(a->uid), gc_s(b->uid));
	return c;
}

int gc_ref_copy(struct gc_ref *dst, const struct gc_ref *src)
{
	const char *in[5] = {gc_s(src->api_version), gc_s(src->kind), gc_s(src->name),
	                     gc_s(src->uid), gc_s(src->ns)};
	size_t len[5], total = 0;
	for (int i = 0; i < 5; i++) {
		len[i] = strlen(in[i]) + 1;
		total += len[i];
	}
	char *mem = malloc(total);
	if (!mem)
		return -ENOMEM;
	const char *out[5];
	char *p = mem;
	for (int i = 0; i < 5; i++) {
		memcpy(p, in[i], len[i]);
		out[i] = p;
		p += len[i];
	}
	/* the block starts at api_version: gc_ref_clear frees that pointer */
	*dst = (struct gc_ref){out[0], out[1], out[2], out[3], out[4]};
	return 0;
}

void gc_ref_clear(struct gc_ref *r)
{
	free((void *)r->api_version);
	*r = (struct gc_ref){0};
}

const char *gc_ref_format(const struct gc_ref *r, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	snprintf(buf, len, "[%s/%s, namespace: %s, name: %s, uid: %s]", gc_s(r->api_version),
	         gc_s(r->kind), gc_s(r->ns), gc_s(r->name), gc_s(r->uid));
	return buf;
}

/* Go's %q for the strings that can appear here (namespace names are DNS-1123 labels; other
 * bytes are escaped the way strconv.Quote escapes control bytes and invalid UTF-8). */
static int quote(const char *s, char *out, size_t len)
{
	size_t o = 0;
#define PUT(c)                                                                                     \
	do {                                                                                       \
		if (o + 1 >= len)                                                                  \
			return -ENOBUFS;                                                           \
		out[o++] = (c);                                                                    \
	} while (0)
	PUT('"');
	for (const unsigned char *p = (const unsigned char *)gc_s(s); *p; p++) {
		unsigned char c = *p;
		if (c == '"' || c == '\\') {
			PUT('\\');
			PUT((char)c);
		} else if (c >= 0x20 && c < 0x7f) {
			PUT((char)c);
		} else if (c == '\n' || c == '\t' || c == '\r') {
			PUT('\\');
			PUT(c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
		} else {
			static const char hex[] = "0123456789abcdef";
			PUT('\\');
			PUT('x');
			PUT(hex[c >> 4]);
			PUT(hex[c & 15]);
		}
	}
	PUT('"');
#undef PUT
	out[o] = '\0';
	return (int)o;
}

int gc_invalid_ns_message(const struct gc_ref *dependent, const struct kube_owner_ref *owners,
                          size_t n_owners, const char *owner_uid, char *buf, size_t len)
{
	const struct kube_owner_ref *hit = NULL;
	for (size_t i = 0; i < n_owners && !hit; i++)
		if (gc_str_eq(owners[i].uid, owner_uid))
			hit = &owners[i];
	if (!hit)
		return -ENOENT;
	struct gc_ref invalid = gc_ref_from_owner(hit, dependent->ns);
	char ident[1280], q[512];
	gc_ref_format(&invalid, ident, sizeof ident);
	if (quote(dependent->ns, q, sizeof q) < 0)
		return -ENOBUFS;
	int n = snprintf(buf, len, "ownerRef %s does not exist in namespace %s", ident, q);
	if (n < 0 || (size_t)n >= len)
		return -ENOBUFS;
	return 0;
}

bool gc_has_finalizer(const struct kube_object_meta *m, const char *f)
{
	for (uint32_t i = 0; i < m->n_finalizers; i++)
		if (gc_str_eq(m->finalizers[i], f))
			return true;
	return false;
}

enum gc_ref_validity gc_ref_validity(const char *dependent_ns, bool owner_namespaced)
{
	if (owner_namespaced && gc_s(dependent_ns)[0] == '\0')
		return GC_REF_CLUSTER_CHILD_NAMESPACED_OWNER;
	return GC_REF_OK;
}

const char *gc_owner_lookup_ns(bool owner_namespaced, const char *dependent_ns)
{
	return owner_namespaced ? gc_s(dependent_ns) : "";
}
