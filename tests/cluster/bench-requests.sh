#!/usr/bin/env bash
# bench-requests: kcmd's CPU per API request (kube/bench/bench-requests.c) beside client-go's
# (tests/cluster/cmd/reqbench, configured as kube-controller-manager configures its clients),
# on one private test cluster, one after the other, twice in alternating order (issue 20).
# Prints both programs' `bench:` lines and a side-by-side table of the comparable shapes.
# Usage: tests/cluster/bench-requests.sh [N pods per shape, default 1000]
# Run under `flock /tmp/kcmd-e2e.lock` on a shared machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
n=${1:-1000}
B=${B:-$top/build}
cprog=$B/t/kube/bench/bench-requests
[ -x "$cprog" ] || { echo "bench-requests: $cprog not built (make all)" >&2; exit 1; }
[ -d "${KCMD_GO_ROOT:-$HOME/.cache/kcmd-go/go1.26.8}/bin" ] && PATH="${KCMD_GO_ROOT:-$HOME/.cache/kcmd-go/go1.26.8}/bin:$PATH"
goprog=$B/cluster/reqbench
(cd "$here" && CGO_ENABLED=0 go build -o "$goprog" ./cmd/reqbench)
dir=$(mktemp -d /tmp/kcmd-benchreq.XXXXXX)
cleanup() { "$here/cluster" down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
"$here/cluster" up --dir "$dir" >/dev/null
eval "$("$here/cluster" env --dir "$dir")"
out=$(mktemp)
echo "bench-requests: $n pods per shape; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in 1 2; do
	if [ "$round" = 1 ]; then order="c go"; else order="go c"; fi
	for p in $order; do
		if [ "$p" = c ]; then "$cprog" "$n"; else "$goprog" -n "$n"; fi | sed "s/^bench: \([a-z]*\)\./bench: \1.r$round./" | tee -a "$out"
	done
done
echo "bench-requests: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
# side by side: µs of CPU per request, both rounds, the same shape on both sides (seq: one at a
# time, JSON; many: 20 in flight, JSON; many_pb: 20 in flight, protobuf bodies and answers)
awk '$1=="bench:" && $2 ~ /_cpu_us$/ {v[$2]=$3}
END {
	printf "| µs CPU / request | kcmd r1 | kcmd r2 | client-go r1 | client-go r2 | kcmd / client-go (mean) |\n|---|---|---|---|---|---|\n";
	n = split("create_seq create_many create_many_pb delete_seq delete_many delete_many_pb", s, " ");
	for (i = 1; i <= n; i++) {
		k1 = v["kube.r1.req_" s[i] "_cpu_us"]; k2 = v["kube.r2.req_" s[i] "_cpu_us"];
		g1 = v["clientgo.r1.req_" s[i] "_cpu_us"]; g2 = v["clientgo.r2.req_" s[i] "_cpu_us"];
		r = (g1 + g2 > 0) ? (k1 + k2) / (g1 + g2) : 0;
		printf "| %s | %s | %s | %s | %s | %.2f |\n", s[i], k1, k2, g1, g2, r;
	}
}' "$out"
rm -f "$out"
