/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/kubeletsim/table.h: the kubelet simulator's handler table for informerd (queue
 * KS_QUEUE "kubelet-sim", registered only when the manager passed that queue, i.e. with
 * --simulate-kubelet), and the arena record → struct ks_pod view both sides use.
 */
#include "lib/handlers.h"
#include "shm/arena.h"
#include "workers/kubeletsim/sim.h"

extern const struct inf_handler_table ks_handler_table;

/* Views a pod record (strings point into obj). Returns 0, -EINVAL (not a pod record),
 * -EPROTONOSUPPORT / -EBADMSG (payload). */
int ks_pod_from_obj(const struct shm_obj *obj, struct ks_pod *ret);
/* The same from a decoded pod (an informer event). */
void ks_pod_from_model(const struct kube_pod *p, struct ks_pod *ret);
