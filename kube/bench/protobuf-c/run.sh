#!/usr/bin/env bash
# Builds and runs bench-protobuf-c.c: protobuf-c (Debian protobuf-c-compiler, libprotobuf-c-dev)
# with code generated from k8s.io/api v0.37.2's generated.proto, taken from the Go module cache
# that tests/cluster's build fills. Not part of `make bench`: protobuf-c is not a kcmd dependency;
# this only backs the decision in docs/dependencies.md. Run from the tree top.
set -euo pipefail
command -v protoc-c >/dev/null && [ -f /usr/include/protobuf-c/protobuf-c.h ] || {
	echo "needs: apt-get install protobuf-c-compiler libprotobuf-c-dev" >&2; exit 77; }
mc=$(cd tests/cluster && go env GOMODCACHE)
api=$mc/k8s.io/api@v0.37.2 am=$mc/k8s.io/apimachinery@v0.37.2
[ -d "$api" ] && [ -d "$am" ] || { echo "k8s.io/api v0.37.2 not in $mc (build tests/cluster first)" >&2; exit 77; }
w=build/protobuf-c
rm -rf "$w" && mkdir -p "$w/src/k8s.io/api/core/v1" "$w/gen"
cp "$api/core/v1/generated.proto" "$w/src/k8s.io/api/core/v1/"
for d in pkg/apis/meta/v1 pkg/runtime pkg/runtime/schema pkg/api/resource pkg/util/intstr; do
	mkdir -p "$w/src/k8s.io/apimachinery/$d"
	cp "$am/$d/generated.proto" "$w/src/k8s.io/apimachinery/$d/"
done
(cd "$w/src" && protoc-c --c_out=../gen $(find . -name generated.proto) 2>/dev/null)
cc -O2 -D_GNU_SOURCE -Ulinux -I"$w/gen" -o "$w/bench-protobuf-c" kube/bench/protobuf-c/bench-protobuf-c.c \
	$(find "$w/gen" -name '*.pb-c.c') -lprotobuf-c
"$w/bench-protobuf-c" "${1:-kube/tests/fixtures/proto/pod-rich.pb}"
