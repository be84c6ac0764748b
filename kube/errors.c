/* SPDX-License-Identifier: Apache-2.0 */
/* kube/errors.c - Status -> errno translation (table in kube/errors.h). */
#include "kube/errors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/model.h"
#include "kube/proto.h"

static const struct {
	const char *reason;
	int code;
	int err;
} table[] = {
        {"NotFound", 404, -ENOENT},
        {"AlreadyExists", 0, -EEXIST},
        {"Conflict", 409, -ESTALE},
        {"Gone", 0, -EKEYEXPIRED},
        {"Expired", 410, -EKEYEXPIRED},
        {"TooManyRequests", 429, -EAGAIN},
        {"Forbidden", 403, -EACCES},
        {"Unauthorized", 401, -EKEYREJECTED},
        {"Invalid", 422, -EINVAL},
        {"BadRequest", 400, -EBADR},
        {"MethodNotAllowed", 405, -EOPNOTSUPP},
        {"NotAcceptable", 406, -EPROTONOSUPPORT},
        {"RequestEntityTooLarge", 413, -E2BIG},
        {"UnsupportedMediaType", 415, -EMEDIUMTYPE},
        {"Timeout", 504, -ETIMEDOUT},
        {"ServerTimeout", 0, -ETIMEDOUT},
        {"ServiceUnavailable", 503, -EHOSTDOWN},
        {"InternalError", 500, -EREMOTEIO},
};

int kube_errno_for(const char *reason, int code, bool ns_terminating)
{
	if (code >= 200 && code < 300)
		return 0;
	if (reason && *reason)
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
			if (!strcmp(reason, table[i].reason)) {
				if (table[i].err == -EACCES && ns_terminating)
					return -ESHUTDOWN;
				return table[i].err;
			}
	if (code == 410)
		return -EKEYEXPIRED;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].code == code) {
			if (table[i].err == -EACCES && ns_terminating)
				return -ESHUTDOWN;
			return table[i].err;
		}
	if (code >= 400 && code < 500)
		return -EPROTO;
	return -EREMOTEIO;
}

const char *kube_errno_reason(int err)
{
	if (err == -ESHUTDOWN)
		return "Forbidden";
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].err == err)
			return table[i].reason;
	return NULL;
}

static void copy(char *dst, size_t cap, const char *s)
{
	if (!s) {
		dst[0] = 0;
		return;
	}
	size_t n = strlen(s);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = 0;
}

/* Keeps printable ASCII of a non-Status body (an HTML error page from a proxy, say). */
static void excerpt(char *dst, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : ' ';
	}
	dst[o] = 0;
}

int kube_error_from_response(int code, const void *body, size_t len, const char *retry_after,
                             struct kube_error *e)
{
	memset(e, 0, sizeof(*e));
	e->http_code = code;
	if (code >= 200 && code < 300)
		return 0;
	struct kube_status *st = NULL;
	/* a client that asked for protobuf gets its errors as a protobuf Status */
	if (body && len &&
	    (kube_proto_is(body, len)
	             ? kube_proto_decode(KUBE_KIND_STATUS, body, len, 0, (void **)&st)
	             : kube_decode_status(body, len, 0, &st)) == 0 &&
	    (st->reason || st->status || st->message)) {
		copy(e->reason, sizeof(e->reason), st->reason);
		copy(e->message, sizeof(e->message), st->message);
		e->retry_after_s = st->retry_after_seconds;
		for (uint32_t i = 0; i < st->n_causes; i++) {
			const struct kube_status_cause *c = &st->causes[i];
			if (c->type && !strcmp(c->type, "NamespaceTerminating"))
				e->namespace_terminating = true;
			if (c->type && !strcmp(c->type, "ResourceVersionTooLarge"))
				e->rv_too_large = true;
			if (e->n_causes < KUBE_ERROR_MAX_CAUSES) {
				copy(e->causes[e->n_causes].type, sizeof(e->causes[0].type),
				     c->type);
				copy(e->causes[e->n_causes].field, sizeof(e->causes[0].field),
				     c->field);
				copy(e->causes[e->n_causes].message, sizeof(e->causes[0].message),
				     c->message);
				e->n_causes++;
			}
		}
		/* older servers put "Too large resource version" only in the message */
		if (st->message && strstr(st->message, "Too large resource version"))
			e->rv_too_large = true;
	} else if (body && len) {
		excerpt(e->message, 160, body, len);
	}
	kube_object_free(st);
	if (retry_after) {
		char *end;
		long v = strtol(retry_after, &end, 10);
		if (end != retry_after && *end == 0 && v >= 0 && v < 86400)
			e->retry_after_s = (int32_t)v;
	}
	if (!e->message[0])
		snprintf(e->message, sizeof(e->message), "the server responded with HTTP %d", code);
	e->err = kube_errno_for(e->reason, code, e->namespace_terminating);
	return e->err;
}

const char *kube_error_string(const struct kube_error *e, char *buf, size_t len)
{
	if (e->reason[0])
		snprintf(buf, len, "%s (%d): %s", e->reason, e->http_code, e->message);
	else
		snprintf(buf, len, "HTTP %d: %s", e->http_code, e->message);
	return buf;
}
