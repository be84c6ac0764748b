#!/usr/bin/env bash
# bench-gc: kcmd's garbage collector vs upstream kube-controller-manager's, against the real
# cluster (see e2e/bench_gc_test.go).
exec "$(dirname "$0")/bench-go.sh" GC
