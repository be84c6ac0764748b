#!/usr/bin/env bash
# `make conformance` (opt-in, not part of `make check`): upstream's own e2e suite (e2e.test of
# the pinned Kubernetes version, built by build-e2e.sh) against the same test cluster twice:
#   kcm   upstream kube-controller-manager --controllers=*,bootstrapsigner,tokencleaner with
#         kubeadm's flags, plus kcmd running nothing but the kubelet simulator (nodes, pods
#         Running/Ready, graceful deletes);
#   kcmd  kcmd alone with the same controllers and flags and --simulate-kubelet; no kcm process.
# The focus is the set of tests that need no container runtime (see focus.txt, skip.txt and
# docs/conformance.md). Each run writes a ginkgo JSON report; compare.py prints the pass/fail
# counts and the tests that differ, and (with --update-doc) rewrites the results section of
# docs/conformance.md.
#
#   KCMD_CONFORMANCE_ONLY=kcm|kcmd     run one side only (the other report is not compared)
#   KCMD_CONFORMANCE_PARALLEL=1        both clusters at once (halves the wall time, more CPU
#                                      contention; timing-sensitive tests may suffer)
#   KCMD_CONFORMANCE_FOCUS / _SKIP     override the regexes read from focus.txt / skip.txt
#   KCMD_CONFORMANCE_TIMEOUT           ginkgo suite timeout per run (default 40m)
#   KCMD_CONFORMANCE_OUT               where reports and logs are kept (default: a new dir in
#                                      the cluster cache, printed at the end)
#   KCMD_CONFORMANCE_NODES             simulated nodes (default 3)
#   KCMD_CONFORMANCE_SEED              ginkgo seed, the same for both runs (default 1)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
[ -d "${KCMD_GO_ROOT:-$HOME/.cache/kcmd-go/go1.26.8}/bin" ] && PATH="${KCMD_GO_ROOT:-$HOME/.cache/kcmd-go/go1.26.8}/bin:$PATH"
bin=${KCMD_BIN_DIR:-$top/build/bin}
[ -x "$bin/kcmd" ] || { echo "conformance: $bin/kcmd not built (make all)" >&2; exit 1; }

echo "conformance: building (or reusing) the control-plane binaries and e2e.test" >&2
KCMD_CLUSTER_BIN=$("$here/../build.sh")
export KCMD_CLUSTER_BIN
e2e=$("$here/build-e2e.sh")
cache_root=${KCMD_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kcmd-cluster}
out=${KCMD_CONFORMANCE_OUT:-$cache_root/conformance-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

# One regex per line in the files (comments with #), joined with |.
join_re() { grep -v '^\s*#' "$1" | grep -v '^\s*$' | paste -sd'|' -; }
focus=${KCMD_CONFORMANCE_FOCUS:-$(join_re "$here/focus.txt")}
skip=${KCMD_CONFORMANCE_SKIP:-$(join_re "$here/skip.txt")}
nodes=${KCMD_CONFORMANCE_NODES:-3}
timeout=${KCMD_CONFORMANCE_TIMEOUT:-40m}
# One seed for both runs: the specs run in the same order, so a suite timeout cuts both at the
# same place.
seed=${KCMD_CONFORMANCE_SEED:-1}

(cd "$top/tests/cluster" && CGO_ENABLED=0 go build -o "$top/build/cluster/kcluster" ./cmd/kcluster)
kcluster=$top/build/cluster/kcluster

pids=()
dirs=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	for d in "${dirs[@]}"; do
		[ -d "$d/logs" ] && mkdir -p "$out/${d##*/}-logs" && cp -r "$d/logs/." "$out/${d##*/}-logs/" 2>/dev/null || true
		"$kcluster" down --dir "$d" >/dev/null 2>&1 || true
	done
}

# run_side NAME: a fresh cluster, the controller manager(s) of that side, e2e.test; the report
# in $out/NAME.json, e2e.test's output in $out/NAME.log.
run_side() {
	local side=$1
	local dir="$out/cluster-$side" pki kc cm_pid sim_pid
	dirs+=("$dir")
	"$kcluster" up --dir "$dir" 2>>"$out/$side.log"
	pki=$dir/pki
	kc=$dir/kubeconfig
	mkdir -p "$dir/logs"
	# kubeadm's kube-controller-manager flags (its static pod manifest), with this cluster's
	# files; the serving port is off (nothing in the suite reads it) and leader election too
	# (one instance).
	local flags=(
		--kubeconfig="$kc"
		--authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc"
		--client-ca-file="$pki/ca.crt" --requestheader-client-ca-file="$pki/ca.crt"
		--cluster-name=kubernetes
		--cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key"
		--root-ca-file="$pki/ca.crt"
		--service-account-private-key-file="$pki/sa.key"
		--service-cluster-ip-range=10.0.0.0/24
		--allocate-node-cidrs=true --cluster-cidr=10.244.0.0/16
		--use-service-account-credentials=true
		--controllers='*,bootstrapsigner,tokencleaner'
		--leader-elect=false --secure-port=0 --v=1
	)
	case $side in
	kcm)
		setsid "$KCMD_CLUSTER_BIN/kube-controller-manager" "${flags[@]}" >"$dir/logs/kcm-side.log" 2>&1 &
		cm_pid=$!
		# The simulator alone: every kcmd controller that is on by default turned off.
		setsid "$bin/kcmd" --kubeconfig="$kc" --leader-elect=false --secure-port=0 --v=1 \
			--controllers=-replicaset-controller,-garbage-collector-controller,-pod-garbage-collector-controller,-job-controller \
			--simulate-kubelet --simulate-kubelet-nodes="$nodes" >"$dir/logs/simulator.log" 2>&1 &
		sim_pid=$!
		pids+=("$cm_pid" "$sim_pid")
		;;
	kcmd)
		setsid "$bin/kcmd" "${flags[@]}" --simulate-kubelet --simulate-kubelet-nodes="$nodes" \
			>"$dir/logs/kcmd-side.log" 2>&1 &
		cm_pid=$!
		sim_pid=$cm_pid
		pids+=("$cm_pid")
		;;
	esac
	# Ready when the simulator's nodes exist and are Ready.
	local deadline=$(( $(date +%s) + 120 )) logf
	logf=$dir/logs/simulator.log
	[ "$side" = kcmd ] && logf=$dir/logs/kcmd-side.log
	until grep -q 'kubelet-simulator: .*nodes ready' "$logf" 2>/dev/null; do
		kill -0 "$cm_pid" 2>/dev/null && kill -0 "$sim_pid" 2>/dev/null || { echo "conformance: $side: a controller manager exited at start (logs in $dir/logs)" >&2; tail -20 "$dir"/logs/*side.log >&2; return 1; }
		[ "$(date +%s)" -lt "$deadline" ] || { echo "conformance: $side: the simulator's nodes not ready within 120 s" >&2; return 1; }
		sleep 1
	done
	# The simulated nodes carry kcmd.io/simulated:NoSchedule (so a real scheduler keeps real pods
	# off them); upstream's framework counts a node with a NoSchedule taint as unschedulable and
	# tests that pick a node (GetReadySchedulableNodes) would find none. The simulator binds pods
	# itself, ignoring taints, and writes a node's spec only when it creates it: drop the taint.
	local env n
	env=$("$kcluster" env --dir "$dir")
	local server token ca
	server=$(sed -n 's/^export KCMD_TEST_SERVER=//p' <<<"$env")
	token=$(sed -n 's/^export KCMD_TEST_TOKEN=//p' <<<"$env")
	ca=$(sed -n 's/^export KCMD_TEST_CA=//p' <<<"$env")
	for ((n = 0; n < nodes; n++)); do
		curl -fsS -o /dev/null --cacert "$ca" -H "Authorization: Bearer $token" -X PATCH \
			-H 'Content-Type: application/merge-patch+json' -d '{"spec":{"taints":null}}' \
			"$server/api/v1/nodes/kcmd-sim-node-$n" \
			|| { echo "conformance: $side: cannot remove the taint of kcmd-sim-node-$n" >&2; return 1; }
	done
	echo "conformance: $side: cluster up ($dir), running e2e.test" >&2
	local rc=0 start
	start=$(date +%s)
	"$e2e" --provider=skeleton --kubeconfig="$kc" \
		--non-blocking-taints=kcmd.io/simulated,node-role.kubernetes.io/control-plane \
		--ginkgo.focus="$focus" --ginkgo.skip="$skip" --ginkgo.seed="$seed" \
		--ginkgo.json-report="$out/$side.json" --ginkgo.no-color --ginkgo.timeout="$timeout" \
		--report-dir="$out/$side-report" >>"$out/$side.log" 2>&1 || rc=$?
	echo "conformance: $side: e2e.test exit $rc after $(( $(date +%s) - start )) s (log $out/$side.log)" >&2
	kill -TERM "$cm_pid" "$sim_pid" 2>/dev/null || true
	return 0
}

sides=(kcm kcmd)
[ -n "${KCMD_CONFORMANCE_ONLY:-}" ] && sides=("$KCMD_CONFORMANCE_ONLY")
# Each side in a subshell of its own whose EXIT trap stops that side's processes, keeps its logs
# and removes its cluster (so the parallel mode cleans up as the sequential one does).
side_pids=()
trap 'for p in "${side_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; exit 130' INT TERM
for s in "${sides[@]}"; do
	(trap cleanup EXIT; trap 'exit 130' INT TERM; run_side "$s") &
	side_pids+=($!)
	[ "${KCMD_CONFORMANCE_PARALLEL:-0}" = 1 ] || wait "${side_pids[-1]}" || true
done
for p in "${side_pids[@]}"; do wait "$p" || true; done

cmd="make conformance${KCMD_CONFORMANCE_PARALLEL:+ KCMD_CONFORMANCE_PARALLEL=$KCMD_CONFORMANCE_PARALLEL}"
python3 "$here/compare.py" --out "$out" --cmd "$cmd" --focus "$focus" --skip "$skip" \
	${KCMD_CONFORMANCE_UPDATE_DOC:+--update-doc "$top/docs/conformance.md"}
echo "conformance: reports and logs in $out" >&2
