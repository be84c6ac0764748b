/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/kubeletsim/plugin.c: the kubelet simulator's descriptor (kcmd/controller.h). Not a
 * kube-controller-manager controller: hidden (never turned on by `*`, not listed among the
 * controllers), enabled by --simulate-kubelet for benchmarks without kubelets (docs/bench.md).
 * It runs a main of its own (run.c: many writes in flight instead of one key at a time).
 */
#include <errno.h>

#include "kcmd/controller.h"
#include "lib/goflag.h"
#include "workers/kubeletsim/nodes.h"
#include "workers/kubeletsim/run.h"
#include "workers/kubeletsim/sim.h"
#include "workers/kubeletsim/table.h"

static int ks_mgr_precheck(const struct kcmd_flag_values *v, const struct kube_config *kcfg,
                           char *err, size_t errlen)
{
	/* never act as the kubelet of a cluster with real nodes unless told to */
	return ks_precheck(kcfg, kcmd_flag_bool(v, "simulate-kubelet-force"), err, errlen);
}

static const struct kcmd_queue ks_queues[] = {
        {.name = KS_QUEUE},
};

static const struct kcmd_flag ks_flags[] = {
        {.name = "simulate-kubelet",
         .type = KCMD_FLAG_BOOL,
         .def = "false",
         .manager_only = true,
         .help = "kcmd bench: run the kubelet simulator: fake Nodes kcmd-sim-node-<i>, pods bound "
                 "to them become "
                 "Running and Ready, graceful deletions finish (default false; refused when the "
                 "cluster has Nodes "
                 "it did not create)."},
        {.name = "simulate-kubelet-nodes",
         .type = KCMD_FLAG_INT,
         .def = "10",
         .min = 1,
         .max = KS_MAX_NODES,
         .help = "kcmd bench: fake Nodes the simulator creates and keeps Ready."},
        {.name = "simulate-kubelet-ready-delay",
         .type = KCMD_FLAG_DURATION,
         .def = "0",
         .help = "kcmd bench: time from a pod's binding to Running and Ready."},
        {.name = "simulate-kubelet-qps",
         .type = KCMD_FLAG_DOUBLE,
         .def = "1000",
         .help = "kcmd bench: the simulator's own client QPS."},
        {.name = "simulate-kubelet-burst",
         .type = KCMD_FLAG_INT,
         .def = "2000",
         .min = 1,
         .max = 1000000000,
         .help = "kcmd bench: the simulator's own client burst."},
        {.name = "simulate-kubelet-force",
         .type = KCMD_FLAG_BOOL,
         .def = "false",
         .help = "kcmd bench: run the simulator even if the cluster has Nodes it did not create "
                 "(real nodes) "
                 "(default false)."},
};

const struct kcmd_controller kcmd_kubelet_simulator = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = KS_CONTROLLER,
        .hidden = true,
        .enable_flag = "simulate-kubelet",
        .queues = ks_queues,
        .n_queues = sizeof(ks_queues) / sizeof(ks_queues[0]),
        .flags = ks_flags,
        .n_flags = sizeof(ks_flags) / sizeof(ks_flags[0]),
        .mgr_precheck = ks_mgr_precheck,
        .handlers = &ks_handler_table,
        .worker_main = ks_main,
};
