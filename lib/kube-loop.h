/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/kube-loop.h: runs a kube_client inside an ipc_loop (library `kubeloop`, used by every
 * kcmd process: the manager, informerd, the workers).
 *
 * kube/ and ipc/ know nothing of each other by design; this is the one place that joins them.
 * The client asks for sockets to be watched and for one timer (libcurl multi's socket API);
 * this glue turns each socket into an io source and the timer into a timer source, and feeds
 * readiness back with kube_client_socket_action() / kube_client_timeout().
 */
#include "ipc/loop.h"
#include "kube/client.h"

struct kube_loop;

/* Attaches c to loop (kube_client_set_loop). Returns 0, -ENOMEM, or the loop's error. */
int kube_loop_attach(struct ipc_loop *loop, struct kube_client *c, struct kube_loop **ret);
/* Detaches (frees every source). Call before kube_client_free. NULL-safe. */
struct kube_loop *kube_loop_detach(struct kube_loop *kl);
/* First error a loop call returned inside a callback (0 if none). */
int kube_loop_error(const struct kube_loop *kl);
