#!/usr/bin/env bash
# bench-kubeletsim: the kubelet simulator's pace against the real cluster, next to a client-go
# client's raw pod-create rate (see e2e/kubeletsim_bench_test.go; KCMD_BENCH_SIM_PODS=N).
exec "$(dirname "$0")/bench-go.sh" KubeletSim
