#!/usr/bin/env bash
# Runs the Go benchmark tests of one area against the real cluster (TestBench_<Area>*) and
# prints their `bench:` lines; tests/bench-json.sh collects them. Usage: bench-go.sh Manager
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KCMD_BENCH=1 KCMD_BIN_DIR=${KCMD_BIN_DIR:-$here/../../build/bin} "$here/run-e2e.sh" -run "TestBench_$1" 2>&1 \
	| grep -E '^(bench:|e2e:|--- FAIL|\s+\S+_test\.go:)' || true
