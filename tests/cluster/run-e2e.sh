#!/usr/bin/env bash
# Runs the end-to-end Go tests against a real cluster. Arguments go to `go test` (e.g. -run RE).
# The cluster's work directory is made here and removed on any exit, so a killed run leaves no
# directory behind; the harness gives the control-plane processes SIGKILL if the test binary dies.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ -d "${KCMD_GO_ROOT:-$HOME/.cache/kcmd-go/go1.26.8}/bin" ] && PATH="${KCMD_GO_ROOT:-$HOME/.cache/kcmd-go/go1.26.8}/bin:$PATH"
echo "e2e: building (or reusing) the control-plane binaries" >&2
KCMD_CLUSTER_BIN=$("$here/build.sh")
export KCMD_CLUSTER_BIN
work=$(mktemp -d "${TMPDIR:-/tmp}/kcmd-e2e-XXXXXX")
export KCMD_CLUSTER_WORKDIR=$work/cluster
keep_logs=${KCMD_E2E_LOGS:-}
cleanup() {
	if [ -n "$keep_logs" ] && [ -d "$work/cluster/logs" ]; then
		mkdir -p "$keep_logs" && cp -r "$work/cluster/logs/." "$keep_logs/" || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$here"
set +e
go test ./e2e/ -count=1 -timeout 40m -v "$@" 2>&1 | tee "$work/go-test.log" \
	| grep -E --line-buffered '^(=== RUN|--- |PASS|FAIL|ok|e2e:|bench:|panic:|\s+\S+_test\.go:)'
rc=${PIPESTATUS[0]}
set -e
passed=$(grep -c -- '^--- PASS' "$work/go-test.log" || true)
failed=$(grep -c -- '^--- FAIL' "$work/go-test.log" || true)
skipped=$(grep -c -- '^--- SKIP' "$work/go-test.log" || true)
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	echo "e2e: go test failed before or outside a test; last lines:" >&2
	tail -n 40 "$work/go-test.log" >&2
	failed=1
fi
echo "e2e: $passed passed, $failed failed, $skipped skipped"
exit "$rc"
