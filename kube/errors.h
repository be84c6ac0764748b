/* SPDX-License-Identifier: Apache-2.0 */
/* kube/errors.h - apiserver failures as negative errnos, keeping the Status for the caller.
 *
 * The mapping (decided by Status.reason first; by HTTP code only when the reason is empty or
 * unknown, as apimachinery's errors.IsXxx helpers do):
 *
 *   reason                    code  errno
 *   NotFound                  404   -ENOENT
 *   AlreadyExists             409   -EEXIST
 *   Conflict                  409   -ESTALE       (stale resourceVersion / precondition)
 *   Gone, Expired             410   -EKEYEXPIRED  (resourceVersion too old: relist)
 *   TooManyRequests           429   -EAGAIN       (retry_after_s from Retry-After / details)
 *   Forbidden                 403   -EACCES
 *     ... with cause NamespaceTerminating  -ESHUTDOWN
 *   Unauthorized              401   -EKEYREJECTED (re-run the exec plugin / re-read the token)
 *   Invalid                   422   -EINVAL       (causes carry field + message)
 *   BadRequest                400   -EBADR
 *   MethodNotAllowed          405   -EOPNOTSUPP
 *   NotAcceptable             406   -EPROTONOSUPPORT
 *   RequestEntityTooLarge     413   -E2BIG
 *   UnsupportedMediaType      415   -EMEDIUMTYPE  (the GC falls back from SMP to merge patch)
 *   Timeout, ServerTimeout    504   -ETIMEDOUT    (rv_too_large set for ResourceVersionTooLarge)
 *   ServiceUnavailable        503   -EHOSTDOWN
 *   InternalError             500   -EREMOTEIO
 *   any other 4xx                   -EPROTO
 *   any other 5xx                   -EREMOTEIO
 *   2xx                             0
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KUBE_ERROR_MAX_CAUSES 8

struct kube_error {
	int err; /* the negative errno (0 on success) */
	int http_code;
	char reason[64];       /* Status.reason ("" if the body was not a Status) */
	char message[512];     /* Status.message, or a short excerpt of a non-Status body */
	int32_t retry_after_s; /* Retry-After header, else details.retryAfterSeconds, else 0 */
	bool namespace_terminating;
	bool rv_too_large;
	uint32_t n_causes;
	struct {
		char type[64];
		char field[128];
		char message[256];
	} causes[KUBE_ERROR_MAX_CAUSES];
};

/* Builds *ret from an HTTP response. body may be NULL; retry_after is the raw header value or
 * NULL. Returns ret->err (0 for 2xx). Never fails otherwise: an undecodable body still yields an
 * errno from the code and a sanitised excerpt as the message. */
int kube_error_from_response(int http_code, const void *body, size_t len, const char *retry_after,
                             struct kube_error *ret);

/* The errno for a Status reason/code pair (table above). */
int kube_errno_for(const char *reason, int http_code, bool namespace_terminating);

/* "NotFound" etc. for an errno of the table; NULL otherwise. */
const char *kube_errno_reason(int err);

/* Formats "reason: message" (or the errno's text) into buf for logging; returns buf. */
const char *kube_error_string(const struct kube_error *e, char *buf, size_t len);
