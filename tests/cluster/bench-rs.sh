#!/usr/bin/env bash
# bench-rs: issue 8's side-by-side figure. `kcmd bench --workload=ramp` on a private test cluster:
# 1,000 ReplicaSets x 100 replicas created and Ready, then +1 replica on 20 of them with 100,000
# pods cached (reaction latency), then a background delete; kcmd and upstream kube-controller-
# manager in the same run at the same client limits. Prints bench: rs.ramp_* / rs.upstream.ramp_*
# (and gc.*) lines. Takes about an hour on a 2-vCPU VM; at kcm's default qps 20 it would take
# hours, so the default lifts the limits on both (override with the variables below).
#   KCMD_BENCH_RS_PODS (100000)  KCMD_BENCH_RS_QPS (5000)  KCMD_BENCH_RS_BURST (10000)
set -euo pipefail
bin=${KCMD_BIN_DIR:?KCMD_BIN_DIR must name the build's bin directory}
out=${KCMD_BENCH_RS_OUT:-build/bench/rs-ramp}
mkdir -p "$out"
exec "$bin/kcmd" bench --workload=ramp --target-pods="${KCMD_BENCH_RS_PODS:-100000}" --rs-size=100 \
	--kube-api-qps="${KCMD_BENCH_RS_QPS:-5000}" --kube-api-burst="${KCMD_BENCH_RS_BURST:-10000}" \
	--raw-pods=0 --phase-timeout=3600 --output="$out/ramp.json"
