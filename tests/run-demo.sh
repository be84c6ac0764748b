#!/usr/bin/env bash
# `make run`: bring up the real test cluster, start kcmd against it with every controller it has
# and the kubelet simulator (so pods become Running and Ready without a kubelet), then walk
# through a scripted demo:
#   1. a ReplicaSet of 3 becomes Ready;
#   2. it is scaled to 10;
#   3. it is scaled to 20 and, while that happens, one ReplicaSet worker process is killed with
#      kill -9: the manager restarts it and the ReplicaSet still ends with exactly 20 pods
#      (nothing lost, nothing created twice);
#   4. it is deleted with a cascade (background propagation): kcmd's garbage collector deletes
#      the 20 pods.
# Along the way it shows `kcmctl top --once` snapshots; at the end, on a terminal, `kcmctl top`
# runs live until Ctrl-C, which stops kcmd (it releases its Lease) and the cluster.
#
#   tests/run-demo.sh            the interactive demo (`make run`)
#   tests/run-demo.sh --smoke    the same steps, non-interactive, each with a deadline; exits
#                                non-zero on the first step that fails (`make run-smoke`, part
#                                of `make check`)
# KCMD_RUN_SECONDS=N: after the demo, stay up N seconds instead of until Ctrl-C.
# KUBECONFIG set: no local cluster and no demo; kcmd runs against that cluster (no simulator)
# until Ctrl-C.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cluster=$top/tests/cluster/cluster
bin=${KCMD_BIN_DIR:-$top/build/bin}
smoke=
[ "${1:-}" = "--smoke" ] && smoke=1
export KCMD_CLUSTER_DIR=${KCMD_CLUSTER_DIR:-${TMPDIR:-/tmp}/kcmd-run-$$}
t0=$(date +%s)

say() { printf 'run: %s\n' "$*"; }
fail() {
	printf 'run: FAILED: %s\n' "$*" >&2
	if [ -n "${kcmd_log:-}" ] && [ -f "$kcmd_log" ]; then
		echo "run: last lines of $kcmd_log:" >&2
		tail -n 30 "$kcmd_log" >&2
	fi
	exit 1
}

kcmd_pid=
stop_kcmd() {
	if [ -n "$kcmd_pid" ] && kill -0 "$kcmd_pid" 2>/dev/null; then
		kill -TERM "$kcmd_pid" 2>/dev/null || true
		wait "$kcmd_pid" 2>/dev/null || true
	fi
	kcmd_pid=
}
cleanup() {
	stop_kcmd
	[ -n "${cluster_up:-}" ] && "$cluster" down >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'echo; say "stopping (Ctrl-C)"; exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

if [ -n "${KUBECONFIG:-}" ]; then
	say "KUBECONFIG is set ($KUBECONFIG): using that cluster, no local cluster, no demo"
	port=$(free_port)
	"$bin/kcmd" --kubeconfig="$KUBECONFIG" --controllers='*' --secure-port="$port" \
		--bind-address=127.0.0.1 &
	kcmd_pid=$!
	say "kcmd pid $kcmd_pid; health: https://127.0.0.1:$port/healthz; live view: $bin/kcmctl top"
	wait "$kcmd_pid"
	exit $?
fi

[ -n "$smoke" ] || say "building (or reusing) the control-plane binaries; a cold build takes 15-30 minutes"
cluster_up=1
"$cluster" up >/dev/null
eval "$("$cluster" env)"
logs=$KCMD_CLUSTER_DIR/logs
kcmd_log=$logs/kcmd.log
port=$(free_port)
# The admin identity (system:masters) reviews tokens and access for kcmd's HTTPS endpoint, so
# the admin token below can read /metrics (kcm's delegated authentication/authorization).
"$bin/kcmd" --kubeconfig="$KUBECONFIG" --controllers='*' \
	--simulate-kubelet --simulate-kubelet-nodes=3 --simulate-kubelet-ready-delay=500ms \
	--secure-port="$port" --bind-address=127.0.0.1 \
	--authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
	--v=1 >"$kcmd_log" 2>&1 &
kcmd_pid=$!

api() { curl -fsS --cacert "$KCMD_TEST_CA" -H "Authorization: Bearer $KCMD_TEST_TOKEN" "$@"; }
RS=$KCMD_TEST_SERVER/apis/apps/v1/namespaces/default/replicasets
PODS=$KCMD_TEST_SERVER/api/v1/namespaces/default/pods

# rs_status: "replicas ready observedGeneration generation" of rs/demo ("" if absent)
rs_status() {
	api "$RS/demo" 2>/dev/null | python3 -c 'import json,sys
d=json.load(sys.stdin); s=d.get("status",{})
print(s.get("replicas",0), s.get("readyReplicas",0), s.get("observedGeneration",0), d["metadata"].get("generation",0))' 2>/dev/null || true
}
# pod_count: pods of app=demo that are not being deleted
pod_count() {
	api "$PODS?labelSelector=app%3Ddemo" | python3 -c 'import json,sys
print(sum(1 for p in json.load(sys.stdin)["items"] if not p["metadata"].get("deletionTimestamp")))'
}
all_pod_count() {
	api "$PODS?labelSelector=app%3Ddemo" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))'
}
# wait_for SECONDS WHAT CMD...: runs CMD every 0.5 s until it succeeds
wait_for() {
	local deadline=$(($(date +%s) + $1)) what=$2
	shift 2
	until "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "$what: not within the deadline"
		kill -0 "$kcmd_pid" 2>/dev/null || fail "kcmd exited"
		sleep 0.5
	done
}
rs_ready_is() {
	local s
	s=$(rs_status)
	set -- $s
	[ "${1:-}" = "$want" ] && [ "${2:-}" = "$want" ] && [ "${3:-}" = "${4:-x}" ] && [ "$(pod_count)" = "$want" ]
}
scale() {
	api -X PATCH -H 'Content-Type: application/merge-patch+json' "$RS/demo" \
		-d "{\"spec\":{\"replicas\":$1}}" >/dev/null
}
snapshot() {
	[ -x "$bin/kcmctl" ] || return 0
	echo "---- kcmctl top --once ----"
	"$bin/kcmctl" --pid "$kcmd_pid" top --once 2>&1 || "$bin/kcmctl" --pid "$kcmd_pid" status 2>&1 || true
	echo "---------------------------"
}

cat <<TXT
run: the test cluster is up; kcmd runs every controller it has and the kubelet simulator.
  kcmd:         pid $kcmd_pid, log $kcmd_log
  kubeconfig:   $KUBECONFIG   (with kubectl: KUBECONFIG=$KUBECONFIG kubectl get rs,pods)
  metrics:      curl -k -H "Authorization: Bearer $KCMD_TEST_TOKEN" https://127.0.0.1:$port/metrics
  health:       curl -k https://127.0.0.1:$port/readyz?verbose
  live view:    $bin/kcmctl --pid $kcmd_pid top      (status, queues, cache: kcmctl --help)
  other logs:   $logs/ (etcd.log, kube-apiserver.log)
TXT

ready() { curl -fsSk "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; }
wait_for 60 "kcmd ready (/readyz)" ready
sim_ready() { grep -q "nodes ready" "$kcmd_log"; }
wait_for 60 "the kubelet simulator's nodes" sim_ready
say "kcmd is ready ($(($(date +%s) - t0)) s since start)"

say "step 1: create ReplicaSet default/demo with 3 replicas"
api -H 'Content-Type: application/json' -X POST "$RS" -d @"$top/tests/demo-replicaset.json" >/dev/null
want=3
wait_for 60 "3 pods Ready" rs_ready_is
say "        3/3 Ready"

say "step 2: scale to 10"
scale 10
want=10
wait_for 60 "10 pods Ready" rs_ready_is
say "        10/10 Ready"
snapshot

say "step 3: scale to 20 and kill -9 a ReplicaSet worker process while it works"
# the worker processes of the ReplicaSet controller, from kcmctl status (PROCESS GROUP STATE PID ...)
# (awk reads to the end: an early exit would SIGPIPE kcmctl and fail the pipeline under pipefail)
victim=$("$bin/kcmctl" --pid "$kcmd_pid" status | awk '$1 ~ /^worker-replicaset/ && $3 == "running" && !f {print $1, $4; f = 1}')
[ -n "$victim" ] || fail "no running ReplicaSet worker in kcmctl status"
set -- $victim
vname=$1 vpid=$2
scale 20
kill -9 "$vpid"
say "        killed $vname (pid $vpid) with SIGKILL"
want=20
wait_for 90 "20 pods Ready after the kill" rs_ready_is
restarted() {
	"$bin/kcmctl" --pid "$kcmd_pid" status |
		awk -v n="$vname" -v p="$vpid" '$1 == n && $3 == "running" && $4 != p && $5 >= 1 {ok=1} END {exit !ok}'
}
wait_for 30 "$vname restarted" restarted
sleep 2 # time for an over-creation, if there were one, to show
n=$(all_pod_count)
[ "$n" = 20 ] || fail "after the kill: $n pods, want exactly 20"
say "        20/20 Ready, exactly 20 pods exist: nothing lost, nothing created twice"
say "        $("$bin/kcmctl" --pid "$kcmd_pid" status | awk -v n="$vname" '$1 == n {print $1 ": pid " $4 ", restarts " $5 ", last exit " $7 " " $8}')"
snapshot

say "step 4: delete the ReplicaSet with a cascade (propagationPolicy Background)"
api -X DELETE -H 'Content-Type: application/json' "$RS/demo" \
	-d '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}' >/dev/null
no_pods() { [ "$(all_pod_count)" = 0 ]; }
wait_for 90 "the garbage collector deletes the 20 pods" no_pods
say "        the garbage collector deleted all 20 pods"
say "demo done in $(($(date +%s) - t0)) s"

if [ -n "$smoke" ]; then
	kill -TERM "$kcmd_pid"
	rc=0
	wait "$kcmd_pid" || rc=$?
	kcmd_pid=
	[ "$rc" = 0 ] || fail "kcmd exited $rc on SIGTERM, want 0"
	say "smoke: PASS (kcmd stopped cleanly on SIGTERM; $(($(date +%s) - t0)) s in all)"
	exit 0
fi
if [ -n "${KCMD_RUN_SECONDS:-}" ]; then
	sleep "$KCMD_RUN_SECONDS"
	exit 0
fi
if [ -t 1 ] && [ -t 0 ]; then
	say "live view: kcmctl top (Ctrl-C stops it, kcmd and the cluster)"
	sleep 2
	"$bin/kcmctl" --pid "$kcmd_pid" top || true
else
	say "kcmd keeps running; Ctrl-C stops it and the cluster"
	while kill -0 "$kcmd_pid" 2>/dev/null; do sleep 5; done
fi
