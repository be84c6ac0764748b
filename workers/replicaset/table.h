/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/table.h: the ReplicaSet controller's handler table for informerd. It backs
 * the handlers' seams (workers/replicaset/handlers.h) with the arena and the "replicaset" queue,
 * and records expectation observations through KCMD_EXPECTATIONS_FD (informer role).
 */
#include "lib/handlers.h"

extern const struct inf_handler_table rs_handler_table;
/* the replication controller's (queue "replicationmanager"; flavour.h) */
extern const struct inf_handler_table rc_handler_table;
