/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/mgr.h: the manager-side hooks (kcmd/controller.h) shared by the two
 * controllers that run the ReplicaSet engine (flavour.h): each gets its own expectations region
 * (with its own Event queue after the slots), exported to its own dispatcher and workers as
 * KCMD_EXPECTATIONS_FD, reclaimed per dead worker, and its /metrics text.
 *
 * upstream's replicaset_controller_* metric families are process-wide in kcm (the replication
 * controller observes its scale-downs into the same histogram), so the manager keeps a list of
 * the live regions of this engine (T: RS_MGR_MAX, the number of flavours; a further setup is
 * refused with -E2BIG) and the first live one renders those families summed over all of them.
 */
#include <stdint.h>

#include "kcmd/controller.h"
#include "workers/replicaset/flavour.h"

#define RS_MGR_MAX 2

/* orphan_grace_ns: how long a dead worker's claimed expectations stay pending (rs_exp E4). */
int rs_mgr_setup(struct kcmd_mgr_env *env, const struct rs_flavour *fl, int64_t orphan_grace_ns,
                 void **ret_state);
int rs_mgr_child_died(void *state, int pid, const char *process, bool crashed);
void rs_mgr_metrics(void *state, struct kcmd_text *out);
void rs_mgr_fini(void *state);
