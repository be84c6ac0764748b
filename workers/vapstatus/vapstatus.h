/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/vapstatus/vapstatus.h: the pure parts of kcm's
 * validatingadmissionpolicy-status-controller (upstream
 * pkg/controller/validatingadmissionpolicystatus, v1.37): whether a policy needs checking, the
 * kubeconfig handed to the type checker, and the status it writes. docs/vapstatus.md.
 *
 * Design note.
 *   The controller type-checks every CEL expression of a ValidatingAdmissionPolicy against the
 *   schemas of the types it matches (and of its paramKind), and records the problems as
 *   status.typeChecking.expressionWarnings with status.observedGeneration = the policy's
 *   generation, by server-side apply (field manager "validatingadmissionpolicy-status", force).
 *   It acts only on a policy whose generation is above its status.observedGeneration.
 *   The type checking is upstream's own (k8s.io/apiserver over cel-go) in a child process,
 *   kcmd-vapcheck (workers/vapstatus/vapcheck, Go): CEL has no C implementation, and
 *   type-checking needs the Kubernetes CEL libraries' declarations and the OpenAPI schema
 *   conversion, which exist only there. The worker talks to it over pipes, one JSON line each
 *   way (vapcheck/main.go).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct kube_config;

/* reconcile's test: metadata.generation > status.observedGeneration (absent = 0). */
bool vap_needs_check(const cJSON *policy);

/* The apply body: {apiVersion, kind, metadata.name, status{observedGeneration,
 * typeChecking{expressionWarnings}}}; warnings is the checker's array (NULL or empty: the
 * typeChecking object is written empty, as upstream's apply configuration with no warning).
 * Returns a malloc'd string, or NULL (no name, -ENOMEM). */
char *vap_status_apply_body(const cJSON *policy, const cJSON *warnings);

/* A kubeconfig (JSON) for the checker from the worker's client configuration: server, TLS
 * (CA, client certificate, server name, insecure), proxy, bearer token or token file. An
 * exec plugin or basic auth cannot be handed over: -ENOTSUP. 0 with *ret malloc'd, -ENOMEM. */
int vap_kubeconfig(const struct kube_config *c, char **ret);
