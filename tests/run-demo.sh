#!/usr/bin/env bash
# `make run`: bring up the real test cluster (unless KUBECONFIG points at one), start kcmd
# against it, create a demo ReplicaSet and show kcmd converge it (pods created, status updated,
# a deleted pod replaced); keep running until Ctrl-C, then tear everything down.
# KCMD_RUN_SECONDS=N stops after N seconds (for scripted checks of this command).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cluster=$top/tests/cluster/cluster
export KCMD_CLUSTER_DIR=${KCMD_CLUSTER_DIR:-${TMPDIR:-/tmp}/kcmd-run-$$}

if [ -n "${KUBECONFIG:-}" ]; then
	echo "run: KUBECONFIG is set ($KUBECONFIG); using that cluster, no local cluster started"
else
	echo "run: building (or reusing) the control-plane binaries; a cold build takes 15-30 minutes"
	trap '"$cluster" down >/dev/null 2>&1 || true' EXIT
	trap 'exit 130' INT TERM
	"$cluster" up
	eval "$("$cluster" env)"
	cat <<TXT

run: the test cluster is up.
  kubeconfig:   $KUBECONFIG
  logs:         $KCMD_CLUSTER_DIR/logs/ (etcd.log, kube-apiserver.log, kcmd.log)
  without kubectl, e.g.:
    curl --cacert $KCMD_TEST_CA -H "Authorization: Bearer \$(grep token: $KUBECONFIG | awk '{print \$2}')" \\
         $KCMD_TEST_SERVER/apis/apps/v1/namespaces/default/replicasets
  with kubectl (if you have one): KUBECONFIG=$KUBECONFIG kubectl get rs,pods

TXT
	kcmd_log=$KCMD_CLUSTER_DIR/logs/kcmd.log
	"$KCMD_BIN_DIR/kcmd" --kubeconfig="$KUBECONFIG" --controllers=replicaset-controller --secure-port=0 \
		>"$kcmd_log" 2>&1 &
	kcmd_pid=$!
	trap 'kill -TERM $kcmd_pid 2>/dev/null; wait $kcmd_pid 2>/dev/null; "$cluster" down >/dev/null 2>&1 || true' EXIT
	echo "run: kcmd started (pid $kcmd_pid, ReplicaSet controller, log $kcmd_log)"
	curl -fsS --cacert "$KCMD_TEST_CA" -H "Authorization: Bearer $KCMD_TEST_TOKEN" -H 'Content-Type: application/json' \
		-X POST "$KCMD_TEST_SERVER/apis/apps/v1/namespaces/default/replicasets" -d @"$top/tests/demo-replicaset.json" >/dev/null
	echo "run: created ReplicaSet default/demo (3 replicas); watching its status (Ctrl-C to stop and tear down)"
fi
deleted_one=
api() { curl -fsS --cacert "$KCMD_TEST_CA" -H "Authorization: Bearer $KCMD_TEST_TOKEN" "$@"; }

end=$(( $(date +%s) + ${KCMD_RUN_SECONDS:-315360000} ))
while [ "$(date +%s)" -lt "$end" ]; do
	if [ -n "${KCMD_TEST_SERVER:-}" ]; then
		st=$(curl -fsS --cacert "$KCMD_TEST_CA" -H "Authorization: Bearer $KCMD_TEST_TOKEN" \
			"$KCMD_TEST_SERVER/apis/apps/v1/namespaces/default/replicasets/demo" 2>/dev/null \
			| python3 -c 'import json,sys; d=json.load(sys.stdin); s=d.get("status",{}); print("replicas=%s ready=%s observedGeneration=%s" % (s.get("replicas",0), s.get("readyReplicas",0), s.get("observedGeneration",0)))' 2>/dev/null || echo "unavailable")
		echo "run: $(date +%T) rs/demo: $st"
		# Once converged, delete one pod to show kcmd replacing it.
		if [ -z "$deleted_one" ] && [ "${st#replicas=3}" != "$st" ]; then
			pod=$(api "$KCMD_TEST_SERVER/api/v1/namespaces/default/pods?labelSelector=app%3Ddemo" \
				| python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["metadata"]["name"])' 2>/dev/null)
			if [ -n "$pod" ] && api -X DELETE "$KCMD_TEST_SERVER/api/v1/namespaces/default/pods/$pod" >/dev/null; then
				echo "run: deleted pod $pod; kcmd creates a replacement"
				deleted_one=1
			fi
		fi
	fi
	sleep 5
done
