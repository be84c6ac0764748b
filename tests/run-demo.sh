#!/usr/bin/env bash
# `make run`: bring up the real test cluster (unless KUBECONFIG points at one), show how to use
# it, and keep it up until Ctrl-C, then tear it down. KCMD_RUN_SECONDS=N stops after N seconds
# (for scripted checks of this command).
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
	"$cluster" up --kcm replicaset-controller
	eval "$("$cluster" env)"
	cat <<TXT

run: the test cluster is up.
  kubeconfig:   $KUBECONFIG
  logs:         $KCMD_CLUSTER_DIR/logs/ (etcd.log, kube-apiserver.log, kube-controller-manager.log)
  without kubectl, e.g.:
    curl --cacert $KCMD_TEST_CA -H "Authorization: Bearer \$(grep token: $KUBECONFIG | awk '{print \$2}')" \\
         $KCMD_TEST_SERVER/apis/apps/v1/namespaces/default/replicasets
  with kubectl (if you have one): KUBECONFIG=$KUBECONFIG kubectl get rs,pods

TXT
	# A demo ReplicaSet; until kcmd's manager lands, upstream kube-controller-manager's
	# replicaset controller reconciles it.
	curl -fsS --cacert "$KCMD_TEST_CA" -H "Authorization: Bearer $KCMD_TEST_TOKEN" -H 'Content-Type: application/json' \
		-X POST "$KCMD_TEST_SERVER/apis/apps/v1/namespaces/default/replicasets" -d @"$top/tests/demo-replicaset.json" >/dev/null
	echo "run: created ReplicaSet default/demo (3 replicas); watching its status (Ctrl-C to stop and tear down)"
fi

end=$(( $(date +%s) + ${KCMD_RUN_SECONDS:-315360000} ))
while [ "$(date +%s)" -lt "$end" ]; do
	if [ -n "${KCMD_TEST_SERVER:-}" ]; then
		st=$(curl -fsS --cacert "$KCMD_TEST_CA" -H "Authorization: Bearer $KCMD_TEST_TOKEN" \
			"$KCMD_TEST_SERVER/apis/apps/v1/namespaces/default/replicasets/demo" 2>/dev/null \
			| python3 -c 'import json,sys; d=json.load(sys.stdin); s=d.get("status",{}); print("replicas=%s ready=%s observedGeneration=%s" % (s.get("replicas",0), s.get("readyReplicas",0), s.get("observedGeneration",0)))' 2>/dev/null || echo "unavailable")
		echo "run: $(date +%T) rs/demo: $st"
	fi
	sleep 5
done
