/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kcmd/client.h: writing to the apiserver from a controller (part of the public controller
 * API, versioned by KCMD_CONTROLLER_ABI).
 *
 * Design note.
 *   A controller's processes get a ready API client from kcmd: the worker's ctx->kc
 *   (kcmd/worker.h), made from --kubeconfig/--master, with the controller's share of
 *   --kube-api-qps/--kube-api-burst (one token bucket for all its processes), its
 *   service-account token under --use-service-account-credentials, and the leadership fence
 *   (a write is refused with -ENOLCK once this kcmd may no longer lead). kcmd_kube_request is
 *   blocking: call it from a worker's sync, never from a handler.
 *   Errors are the apiserver's Status mapped to errnos, the table the in-tree controllers use
 *   (docs/kube.md): -ENOENT NotFound, -EEXIST AlreadyExists, -ESTALE Conflict (a stale
 *   resourceVersion or precondition), -EAGAIN TooManyRequests, -EACCES Forbidden (-ESHUTDOWN:
 *   the namespace is terminating), -EKEYREJECTED Unauthorized, -EINVAL Invalid, -EBADR
 *   BadRequest, -ETIMEDOUT, -EHOSTDOWN, -EREMOTEIO server errors, -ENOLCK not leading, and the
 *   transport's errnos (-ECONNREFUSED, ...).
 */
#include <stddef.h>
#include <stdint.h>

struct kube_client;

struct kcmd_request {
	const char *method;   /* "GET", "POST", "PUT", "PATCH" (merge patch), "DELETE" */
	const char *group;    /* "" or NULL: the core group */
	const char *version;  /* "v1" */
	const char *resource; /* plural */
	const char *ns;       /* NULL: cluster-scoped */
	const char *name;     /* NULL for POST */
	const char *subresource;
	const char *body; /* JSON, for POST, PUT, PATCH */
	size_t body_len;  /* 0: strlen(body) */
	/* DELETE: preconditions.uid, and propagationPolicy ("Background", ...); NULL: none */
	const char *precondition_uid;
	const char *propagation_policy;
	/* POST, PUT of a built-in type: its kind ("Job", "EndpointSlice", ...). On a protobuf
	 * client (--kube-api-content-type) the JSON body is then sent as protobuf, as client-go
	 * does, or as JSON when kcmd has no protobuf table for a field of it. NULL: JSON. */
	const char *body_kind;
};

/* Runs req to completion. Returns 0 (2xx) or -errno (above). ret_http_code (may be NULL) gets
 * the HTTP status (0 if none); ret_body (may be NULL) gets the response body, malloc'd and
 * NUL-terminated, also on an error (the Status), or NULL. */
int kcmd_kube_request(struct kube_client *kc, const struct kcmd_request *req, int *ret_http_code,
                      char **ret_body);
/* "NotFound", "AlreadyExists", ... for an errno kcmd_kube_request returns; NULL otherwise. */
const char *kcmd_kube_reason(int err);

/* ---- a client of one's own (tests) --------------------------------------------------------
 * For programs that are not kcmd, e.g. a controller's end-to-end test creating objects and
 * waiting for the controller's work: a blocking client from a kubeconfig file (NULL: the
 * KUBECONFIG environment variable). Returns 0, or -errno with a message in err (no kubeconfig,
 * an unreadable or invalid one, -ENOMEM). */
struct kcmd_client;
int kcmd_client_new(const char *kubeconfig, struct kcmd_client **ret, char *err, size_t errlen);
/* The client to pass to kcmd_kube_request; owned by c. */
struct kube_client *kcmd_client_kube(struct kcmd_client *c);
/* NULL is a no-op. */
void kcmd_client_free(struct kcmd_client *c);

/* ---- Events (record.EventRecorder) ---------------------------------------------------------- */
struct kcmd_object_ref {
	const char *api_version; /* "v1" */
	const char *kind;        /* "Namespace" */
	const char *ns;          /* NULL or "" for a cluster-scoped object */
	const char *name;
	const char *uid;
};

#define KCMD_EVENT_NORMAL  "Normal"
#define KCMD_EVENT_WARNING "Warning"

/* Records a core/v1 Event about obj, as client-go's recorder does for a controller: reason in
 * UpperCamelCase, source.component = component (the controller's name), in obj's namespace
 * (cluster-scoped objects: "default"), through the process's EventCorrelator (repeats counted,
 * similar ones combined, a flood per object throttled). In a kcmd worker the Event is queued
 * and written by the process's sink thread: the call never waits for the apiserver; a full
 * queue (1000, client-go's) drops it with an error line, counted in kcmd_events_dropped_total,
 * and returns -ENOBUFS. Elsewhere (no recorder started) it is written through kc before the
 * call returns. Returns 0 or -errno; an Event is best effort (upstream drops them too), so
 * callers usually only log a failure. Safe from any thread (kc is used only without a
 * recorder, from the calling thread). */
int kcmd_event_record(struct kube_client *kc, const char *component,
                      const struct kcmd_object_ref *obj, const char *type, const char *reason,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
