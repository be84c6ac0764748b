#!/usr/bin/env bash
# Builds upstream's end-to-end test binary (e2e.test, package k8s.io/kubernetes/test/e2e) at the
# Kubernetes version tests/cluster/go.mod pins, into the cluster cache outside the work tree. The
# module used for the build is generated in the cache: it requires k8s.io/kubernetes at that
# version and copies every replace directive from tests/cluster/go.mod (the staging modules are
# published as v0.X.Y, the kubernetes module requires them as v0.0.0). A second run with the
# binary present is a no-op. Prints the path of e2e.test on stdout when done.
#
#   KCMD_CLUSTER_CACHE   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/kcmd-cluster)
#   KCMD_E2E_REBUILD=1   build again even if the binary is cached
set -euo pipefail

main() {
here=$(cd "$(dirname "$0")/.." && pwd)
k8s_version=$(awk '$1=="k8s.io/kubernetes"{print $2; exit}' "$here/go.mod")
[ -n "$k8s_version" ] || { echo "build-e2e.sh: cannot read the k8s.io/kubernetes version from $here/go.mod" >&2; exit 1; }
cache_root=${KCMD_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kcmd-cluster}
dir="$cache_root/e2e-$k8s_version"
bin="$dir/bin/e2e.test"
[ "${KCMD_E2E_REBUILD:-0}" = 1 ] && rm -f "$bin"
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
command -v go >/dev/null || { echo "build-e2e.sh: the Go toolchain is required (go not on PATH)" >&2; exit 1; }

mod="$dir/mod"
mkdir -p "$mod" "$dir/bin"
goversion=$(awk '$1=="go"{print $2; exit}' "$here/go.mod")
{
	echo "module kcmd.local/conformance"
	echo
	echo "go $goversion"
	echo
	grep '^replace ' "$here/go.mod"
	echo
	echo "require k8s.io/kubernetes $k8s_version"
} > "$mod/go.mod"
# The package must exist in the module for `go get` to resolve its test imports.
printf 'package conformance\n' > "$mod/doc.go"

major=${k8s_version#v}; minor=${major#*.}; minor=${minor%%.*}; major=${major%%.*}
ld="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
ld="$ld -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version -X k8s.io/client-go/pkg/version.gitMajor=$major -X k8s.io/client-go/pkg/version.gitMinor=$minor"

start=$(date +%s)
echo "build-e2e.sh: resolving the test dependencies of k8s.io/kubernetes/test/e2e@$k8s_version" >&2
(cd "$mod" && go get -t "k8s.io/kubernetes/test/e2e@$k8s_version") >&2
echo "build-e2e.sh: compiling e2e.test (a cold build takes tens of minutes on 2 cores)" >&2
(cd "$mod" && CGO_ENABLED=0 go test -c -v -ldflags "$ld" -o "$bin.partial" k8s.io/kubernetes/test/e2e) 2>&1 \
	| awk '{c++; if (c % 200 == 0) printf "build-e2e.sh: %d packages compiled (%s)\n", c, $0 > "/dev/stderr"}'
[ "${PIPESTATUS[0]}" -eq 0 ] && [ -x "$bin.partial" ] || { echo "build-e2e.sh: building e2e.test failed" >&2; exit 1; }
mv "$bin.partial" "$bin"
echo "build-e2e.sh: e2e.test built in $(( $(date +%s) - start )) s" >&2
echo "$bin"
}
main "$@"
exit
