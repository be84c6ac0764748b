#!/usr/bin/env bash
# Runs the end-to-end Go tests against a real cluster. Arguments go to the test binary as
# `go test` flags (e.g. -run RE).
#
# The whole suite (no arguments) runs as two shards at once, each against a cluster of its own:
# shard B holds the tests that mostly wait on the clock (CronJob minute boundaries, the GC's
# 30 s discovery rounds, pod GC and namespace deletion timing, node TTL, the migrator's one-minute
# discovery grace, the crash tests' settle windows), shard A everything
# else (the CPU-heavy scale, chaos and crash tests among them), so the suite takes about half
# its serial time on two cores without putting two CPU-heavy tests side by side. Shard A's
# lines stream as they come; shard B's are printed when it ends. KCMD_E2E_SHARDS=1 runs the
# suite as one process (one cluster). With arguments (make e2e RUN=...) there is one process.
#
# The clusters' work directories are made here and removed on any exit, so a killed run leaves
# no directory behind; the harness gives the control-plane processes SIGKILL if the test binary
# dies.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ -d "${KCMD_GO_ROOT:-$HOME/.cache/kcmd-go/go1.26.8}/bin" ] && PATH="${KCMD_GO_ROOT:-$HOME/.cache/kcmd-go/go1.26.8}/bin:$PATH"
echo "e2e: building (or reusing) the control-plane binaries" >&2
KCMD_CLUSTER_BIN=$("$here/build.sh")
export KCMD_CLUSTER_BIN
work=$(mktemp -d "${TMPDIR:-/tmp}/kcmd-e2e-XXXXXX")
keep_logs=${KCMD_E2E_LOGS:-}
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -n "$keep_logs" ]; then
		for c in "$work"/cluster*; do
			[ -d "$c/logs" ] && mkdir -p "$keep_logs/${c##*/}" && cp -r "$c/logs/." "$keep_logs/${c##*/}/" || true
		done
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Shard B: tests whose time is spent waiting (a regex of test-name prefixes).
SHARD_B='TestCronJob_|TestGC_OwnerResourceUnserved|TestGC_CascadingDeleteOnCRDConversionFailure|TestGC_MonitorsKeptOnDiscoveryFailure|TestGC_CRDPreferredVersionFollowed|TestNamespace_|TestPodGC_|TestTTL_|TestTTLAfterFinished_|TestDaemonSet_CrashDuringCreation|TestGC_InformerdKilledDuringCreationNegativeControl|TestTaintEviction_|TestKcmd_ClientCARotation|TestServiceCIDR_|TestNodeLifecycle_|TestJob_BackoffLimitPerIndex$|TestJob_PodsCreatedWithExponentialBackoff|TestDropIn_LeaseMigrationWithKCM|TestDropIn_KcmdAlone|TestManager_InteropWithClientGoElector|TestManager_WorkersStartOnDemand|TestManager_FailoverAfterKill|TestManager_Fence|TestManager_StoppedLeadingAfterWorkersExit|TestManager_HealthRedWhileChildCannotStart|TestKcmd_IdleProcessesSleep|TestDisruption_AggregatedAPIDown|TestDisruption_DisruptedPodsExpiry|TestHPA_MetricsAPIDown|TestSVM_UnknownResource|TestAttachDetach_WorkerKilled|TestPVBinder_CrashDuringBinding|TestSVM_WorkerKilled|TestStorageVersionGC_WorkerKilled|TestVAPStatus_WorkerKilled'

filter() { grep -E --line-buffered '^(=== RUN|--- |PASS|FAIL|ok|e2e:|bench:|panic:|\s+\S+_test\.go:)' || true; }

cd "$here/e2e"
echo "e2e: compiling the tests" >&2
go test -c -o "$work/e2e.test" . >&2

# run_shard NAME ARGS...: the test binary against its own cluster; its whole output in
# $work/NAME.log, its exit code in $work/NAME.rc.
run_shard() {
	local name=$1
	shift
	set +e
	KCMD_CLUSTER_WORKDIR=$work/cluster-$name "$work/e2e.test" -test.count=1 -test.timeout=40m -test.v=true "$@" \
		>"$work/$name.log" 2>&1
	echo $? >"$work/$name.rc"
	set -e
}

shards=()
if [ $# -eq 0 ] && [ "${KCMD_E2E_SHARDS:-2}" != 1 ]; then
	shards=(a b)
	: >"$work/a.log"
	: >"$work/b.log"
	run_shard b -test.run "^($SHARD_B)" &
	pids+=($!)
	run_shard a -test.skip "^($SHARD_B)" &
	pids+=($!)
	# stream shard A while it runs (tail ends with it)
	tail -n +1 -F --pid="${pids[1]}" "$work/a.log" 2>/dev/null | filter ||
		echo "e2e: following shard A's log ended with status ${PIPESTATUS[*]}" >&2
	wait "${pids[0]}" "${pids[1]}" || true
	pids=()
	echo "e2e: shard B ($SHARD_B):"
	filter <"$work/b.log"
else
	shards=(all)
	# go test's flags (-run RE, -v, -timeout D) as the test binary's (-test.run RE, ...)
	args=()
	for a in "$@"; do
		case $a in
		-test.* | [!-]*) args+=("$a") ;;
		-*) args+=("-test.${a#-}") ;;
		esac
	done
	# the log exists before tail opens it (else tail -F reports the missing file and exits 1,
	# which pipefail turned into a failed run after every test passed)
	: >"$work/all.log"
	run_shard all "${args[@]}" &
	pids+=($!)
	# the test binary's exit code (all.rc) decides, not the follower's: whatever else may end
	# the follower with an error must not end this script before the summary
	tail -n +1 -F --pid="${pids[0]}" "$work/all.log" 2>/dev/null | filter ||
		echo "e2e: following the log ended with status ${PIPESTATUS[*]}" >&2
	wait "${pids[0]}" || true
	pids=()
fi

rc=0 passed=0 failed=0 skipped=0
for s in "${shards[@]}"; do
	src=$(cat "$work/$s.rc" 2>/dev/null || echo 1)
	p=$(grep -c -- '^--- PASS' "$work/$s.log" || true)
	f=$(grep -c -- '^--- FAIL' "$work/$s.log" || true)
	k=$(grep -c -- '^--- SKIP' "$work/$s.log" || true)
	if [ "$src" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "e2e: shard $s: the test binary failed before or outside a test (exit $src); last lines:" >&2
		tail -n 40 "$work/$s.log" >&2
		f=1
	fi
	[ "$src" -ne 0 ] && rc=$src
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
done
echo "e2e: $passed passed, $failed failed, $skipped skipped"
exit "$rc"
