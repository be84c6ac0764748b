#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Oracle for kcmd's feature gates at emulation versions (docs/manager.md, "Emulation versions"):
# for every gate whose spec differs from 1.37's at 1.34..1.36 (tools/gen-kcm-gates.py --audit),
# plus AllAlpha and AllBeta, true and false, at emulation 1.34, 1.35 and 1.36, runs
#   kube-controller-manager --emulated-version=V --feature-gates=G=B --version
# and kcmd with the same arguments, and compares accept/refuse and the errors (as sorted lists:
# kcm's aggregate order is a Go map's). Prints each difference and "cases N differ D"; exits 1
# if any differs.
#   tools/check-gate-versions.sh KCM_BIN KCMD_BIN  (module cache: ~/go/pkg/mod/k8s.io)
set -u
KCM=${1:?kube-controller-manager binary}
KCMD=${2:?kcmd binary}
M=${GOMODCACHE:-$HOME/go/pkg/mod}/k8s.io
gates=$(python3 "$(dirname "$0")/gen-kcm-gates.py" --audit \
	"$M/kubernetes@v1.37.2/pkg/features/kube_features.go" \
	"$M/apiserver@v0.37.2/pkg/features/kube_features.go" \
	"$M/apiextensions-apiserver@v0.37.2/pkg/features/kube_features.go" \
	"$M/client-go@v0.37.2/features/known_features.go" \
	"$M/controller-manager@v0.37.2/pkg/features/kube_features.go" \
	"$M/component-base@v0.37.2/logs/api/v1/kube_features.go" \
	"$M/component-base@v0.37.2/metrics/features/kube_features.go" \
	"$M/component-base@v0.37.2/zpages/features/kube_features.go" | awk '{print $2}' | sort -u)
items() { tr -d '[]' | tr ',' '\n' | sed 's/^ *//' | sort | tr '\n' '|'; }
n=0
bad=0
for g in $gates AllAlpha AllBeta; do
	for v in 1.34 1.35 1.36; do
		for b in true false; do
			a=$("$KCM" --emulated-version=$v --feature-gates=$g=$b --version 2>&1 |
				grep -o 'err="[^"]*' | sed 's/err="//;s/\\"/"/g')
			k=$("$KCMD" --emulated-version=$v --feature-gates=$g=$b --version 2>&1 |
				grep -v '^Kubernetes\|^kcmd [0-9v]' | sed 's/^kcmd: --feature-gates: //')
			n=$((n + 1))
			if [ "$(echo "$a" | items)" != "$(echo "$k" | items)" ]; then
				bad=$((bad + 1))
				printf 'DIFF %s %s=%s\n  kcm:  %s\n  kcmd: %s\n' "$v" "$g" "$b" "$a" "$k"
			fi
		done
	done
done
echo "cases $n differ $bad"
[ "$bad" -eq 0 ]
