/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/kubeletsim/nodes.h: the simulator's blocking setup against the apiserver: the check
 * for foreign Nodes (also run by the manager before it starts anything), and creating the fake
 * Nodes, their Ready status and their Leases.
 */
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"
#include "kube/config.h"

/* Lists the Nodes. Returns 0 when every Node is one of the simulator's (or force is set and
 * some are not: a warning is written to err), -EEXIST when a foreign Node exists and force is
 * not set (err names --simulate-kubelet-force), or another negative errno when the list failed
 * (err says why). */
int ks_check_nodes(struct kube_client *kc, bool force, char *err, size_t errlen);
/* The same with a short-lived client of its own (for the manager). */
int ks_precheck(const struct kube_config *cfg, bool force, char *err, size_t errlen);

/* Creates the fake Nodes 0..n-1 that do not exist, sets each one's status Ready, and creates
 * each one's Lease in kube-node-lease (an existing one is kept). Returns 0 or the first error
 * (err says which request failed). */
int ks_setup_nodes(struct kube_client *kc, unsigned n, char *err, size_t errlen);
