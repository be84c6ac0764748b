/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/serviceaccount/sa.h: the serviceaccount-controller's decisions, pure (no I/O).
 *
 * Design note.
 *   Upstream's ServiceAccountsController (pkg/controller/serviceaccount/
 *   serviceaccounts_controller.go, v1.37) keeps the ServiceAccounts of its options (kcm passes
 *   one: `default`) in every namespace whose status.phase is Active. Its key is a namespace
 *   name; a namespace's add or update, or the deletion of any ServiceAccount, queues it; the
 *   sync creates each missing account from the lister's view, treats AlreadyExists and a
 *   NamespaceTerminating refusal as done, and retries anything else with backoff.
 *   These rules live here over plain values so that they are tested without a cluster
 *   (tests/test-serviceaccount.c); plugin.c feeds them from the arena and the API client.
 */
#include <stdbool.h>
#include <stddef.h>

#define SA_CONTROLLER "serviceaccount-controller"
#define SA_QUEUE      "serviceaccount" /* upstream's workqueue name */
#define SA_DEFAULT    "default"        /* DefaultServiceAccountsControllerOptions */

/* The accounts kcm ensures, NULL-terminated. */
extern const char *const sa_to_ensure[];

enum sa_action {
	SA_NOTHING = 0,
	SA_CREATE,
};

/* ns_phase: the namespace's status.phase, NULL when the namespace is not in the cache. */
enum sa_action sa_decide(const char *ns_phase, bool sa_exists);

/* The ServiceAccount upstream posts: metadata.name and metadata.namespace only. Returns the
 * length, or -ENAMETOOLONG when it does not fit buf. */
int sa_body(char *buf, size_t len, const char *ns, const char *name);

/* A create's outcome: 0 done (created, AlreadyExists, or refused because the namespace is
 * terminating), or the error to retry with. */
int sa_create_result(int err);

/* status.phase of a Namespace's JSON into buf ("" when absent). 0, -EBADMSG (not JSON),
 * -ENAMETOOLONG. */
int sa_namespace_phase(const char *json, size_t len, char *buf, size_t buflen);
