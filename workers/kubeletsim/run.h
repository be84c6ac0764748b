/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/kubeletsim/run.h: the kubelet simulator process's entry point, called by kcmd-worker's
 * main for --controller=kubelet-simulator (it does not fit the one-key-at-a-time wk_controller
 * model: it keeps hundreds of writes in flight).
 */
int ks_main(int argc, char **argv);
