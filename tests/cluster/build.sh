#!/usr/bin/env bash
# Builds the real control-plane binaries (kube-apiserver, kube-controller-manager, etcd) from the
# Go modules pinned in go.mod into a per-version cache outside the work tree. A second run with
# the binaries present is a no-op. Prints the binary directory on stdout when done.
#
#   KCMD_CLUSTER_CACHE   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/kcmd-cluster)
set -euo pipefail

# The whole script is one function, read completely before it runs, so editing this file while
# a build is in progress cannot change what the running build does.
main() {
here=$(cd "$(dirname "$0")" && pwd)
# Versions as go.mod states them (read without the go command, so a cached build needs no Go).
k8s_version=$(awk '$1=="k8s.io/kubernetes"{print $2; exit}' "$here/go.mod")
etcd_version=$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2; exit}' "$here/go.mod")
[ -n "$k8s_version" ] && [ -n "$etcd_version" ] || { echo "build.sh: cannot read versions from go.mod" >&2; exit 1; }
cache_root=${KCMD_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kcmd-cluster}
# The binaries depend on the Kubernetes and etcd versions (the rest of the graph is what those
# pin), so the cache key is the pair; KCMD_CLUSTER_REBUILD=1 forces a rebuild.
bindir="$cache_root/$k8s_version-etcd$etcd_version/bin"
[ "${KCMD_CLUSTER_REBUILD:-0}" = 1 ] && rm -rf "$bindir"

if [ -x "$bindir/kube-apiserver" ] && [ -x "$bindir/kube-controller-manager" ] && [ -x "$bindir/etcd" ]; then
	echo "$bindir"
	exit 0
fi

command -v go >/dev/null || { echo "build.sh: the Go toolchain is required (go not on PATH)" >&2; exit 1; }
mkdir -p "$bindir.partial"
major=${k8s_version#v}; minor=${major#*.}; minor=${minor%%.*}; major=${major%%.*}
ldk8s="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
ldk8s="$ldk8s -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version -X k8s.io/client-go/pkg/version.gitMajor=$major -X k8s.io/client-go/pkg/version.gitMinor=$minor"

build_one() { # name package ldflags
	local name=$1 pkg=$2 ld=$3 start
	start=$(date +%s)
	echo "build.sh: building $name ($pkg) ... (cold builds take minutes; progress: go build -v lines below)" >&2
	(cd "$here" && CGO_ENABLED=0 go build -v -ldflags "$ld" -o "$bindir.partial/$name" "$pkg") 2>&1 \
		| awk -v n="$name" '{c++; if (c % 200 == 0) printf "build.sh: %s: %d packages compiled (%s)\n", n, c, $0 > "/dev/stderr"}'
	[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "build.sh: building $name failed" >&2; return 1; }
	echo "build.sh: $name built in $(( $(date +%s) - start )) s" >&2
}

[ -x "$bindir.partial/etcd" ] || build_one etcd go.etcd.io/etcd/server/v3 "-s -w"
[ -x "$bindir.partial/kube-apiserver" ] || build_one kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$ldk8s"
[ -x "$bindir.partial/kube-controller-manager" ] || build_one kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$ldk8s"
rm -rf "$bindir"
mv "$bindir.partial" "$bindir"
echo "$bindir"
}
main "$@"
exit
