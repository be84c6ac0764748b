#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tools/profile-bench.sh OUTDIR [KCMD] [kcmd bench flags...]: a whole-workload CPU profile of
# kcmd (issue 20). Runs `kcmd bench` (default: the small `deployments` workload, kcmd only)
# under a system-wide `perf record -e cpu-clock -F 499 -g` (this VM has no hardware counters)
# and snapshots `ps` every 2 s, so tools/profile-summary.py can tell the processes apart
# (manager, informerd, each controller's dispatcher and workers, the simulator's own ones).
# Take the e2e lock around it: flock /tmp/kcmd-e2e.lock tools/profile-bench.sh /tmp/prof
set -u
D=${1:?usage: profile-bench.sh OUTDIR [KCMD] [bench flags]}
KCMD=${2:-build/bin/kcmd}
shift $(($# >= 2 ? 2 : 1))
[ $# -gt 0 ] || set -- --workload=deployments --deployments=100 --compare-upstream=false \
	--raw-pods=0 --phase-timeout=300
mkdir -p "$D"
uptime >"$D/load-before"
(while :; do
	ps -eo pid,ppid,cputimes,comm,args --no-headers >"$D/ps.$(date +%s)"
	sleep 2
done) &
PSL=$!
perf record -e cpu-clock -F 499 -a -g -o "$D/perf.data" >"$D/perf.log" 2>&1 &
PERF=$!
sleep 1
"$KCMD" bench "$@" --output="$D/bench.json" >"$D/bench.out" 2>&1
rc=$?
kill -INT $PERF
wait $PERF
kill $PSL
uptime >"$D/load-after"
echo "bench rc $rc; tools/profile-summary.py $D"
exit $rc
