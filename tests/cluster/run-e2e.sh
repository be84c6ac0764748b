#!/usr/bin/env bash
# Runs the end-to-end Go tests against a real cluster. Arguments go to the test binary as
# `go test` flags (e.g. -run RE).
#
# The whole suite (no arguments) runs as shards at once, each a process of the test binary
# against a cluster of its own. tests/cluster/e2e-shards deals the tests out (one
# `SHARD REGEX` line per pattern, the first matching line wins, unmatched tests go to shard a):
# shard a holds the CPU-heavy scale, chaos, bench and churning crash tests and everything not
# listed; shards b, c and d hold tests that mostly wait on the clock or a settle window, so the
# suite takes about a quarter of its serial time on two cores without putting two CPU-heavy
# tests side by side. The script lists the binary's tests (-test.list, no cluster), gives each
# to its shard and runs each shard with the exact names, so no test is run twice or lost.
# Shard a's lines stream as they come; each other shard prints one line when it ends and its
# lines after shard a's. KCMD_E2E_SHARDS=1 runs the suite as one process (one cluster). With
# arguments (make e2e RUN=...) there is one process.
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

filter() { grep -E --line-buffered '^(=== RUN|--- |PASS|FAIL|ok|e2e:|bench:|panic:|\s+\S+_test\.go:)' || true; }

cd "$here/e2e"
echo "e2e: compiling the tests" >&2
go test -c -o "$work/e2e.test" . >&2

# run_shard NAME ARGS...: the test binary against its own cluster; its whole output in
# $work/NAME.log, its exit code in $work/NAME.rc, its wall time in seconds in $work/NAME.secs.
run_shard() {
	local name=$1 t0=$SECONDS
	shift
	set +e
	KCMD_CLUSTER_WORKDIR=$work/cluster-$name "$work/e2e.test" -test.count=1 -test.timeout=40m -test.v=true "$@" \
		>"$work/$name.log" 2>&1
	echo $? >"$work/$name.rc"
	echo $((SECONDS - t0)) >"$work/$name.secs"
	set -e
}

# shard_summary NAME: "N passed, N failed, N skipped in N s"
shard_summary() {
	local p f k
	p=$(grep -c -- '^--- PASS' "$work/$1.log" || true)
	f=$(grep -c -- '^--- FAIL' "$work/$1.log" || true)
	k=$(grep -c -- '^--- SKIP' "$work/$1.log" || true)
	echo "$p passed, $f failed, $k skipped in $(cat "$work/$1.secs" 2>/dev/null || echo '?') s"
}

shards=()
if [ $# -eq 0 ] && [ "${KCMD_E2E_SHARDS:-}" != 1 ]; then
	# deal the tests out: the first line of the shard file whose pattern matches a test's name
	# KCMD_E2E_LIST (a regex, default all) narrows the suite, to try the layout on a few tests
	"$work/e2e.test" -test.list "${KCMD_E2E_LIST:-.*}" >"$work/names" 2>&1 || {
		echo "e2e: cannot list the tests:" >&2
		cat "$work/names" >&2
		exit 1
	}
	awk 'NR == FNR { if ($0 ~ /^[ \t]*(#|$)/) next; n++; sh[n] = $1; re[n] = $2; next }
		/^Test/ { s = "a"; for (i = 1; i <= n; i++) if ($1 ~ ("^(" re[i] ")")) { s = sh[i]; break }
			print s, $1 }' "$here/e2e-shards" "$work/names" >"$work/assign"
	shards=(a)
	for s in $(awk '{ print $1 }' "$work/assign" | sort -u); do
		[ "$s" = a ] || shards+=("$s")
	done
	for s in "${shards[@]}"; do
		: >"$work/$s.log"
		names=$(awk -v s="$s" '$1 == s { printf "%s%s", sep, $2; sep = "|" }' "$work/assign")
		echo "$(awk -v s="$s" '$1 == s' "$work/assign" | wc -l)" >"$work/$s.count"
		[ -n "$names" ] || continue
		run_shard "$s" -test.run "^($names)\$" &
		pids+=($!)
		echo "$!" >"$work/$s.pid"
	done
	# each other shard: one line when it ends (its lines come after shard a's)
	for s in "${shards[@]:1}"; do
		(
			p=$(cat "$work/$s.pid")
			while kill -0 "$p" 2>/dev/null; do sleep 2; done
			echo "e2e: shard $s ended: $(shard_summary "$s") (its lines follow shard a's)"
		) &
	done
	# stream shard a while it runs (tail ends with it)
	if [ -s "$work/a.pid" ]; then
		tail -n +1 -F --pid="$(cat "$work/a.pid")" "$work/a.log" 2>/dev/null | filter ||
			echo "e2e: following shard a's log ended with status ${PIPESTATUS[*]}" >&2
	fi
	wait "${pids[@]}" || true
	wait || true
	pids=()
	echo "e2e: shard a ($(cat "$work/a.count") tests): $(shard_summary a)"
	for s in "${shards[@]:1}"; do
		echo "e2e: shard $s ($(cat "$work/$s.count") tests, tests/cluster/e2e-shards): $(shard_summary "$s"):"
		filter <"$work/$s.log"
	done
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
	[ "$s" = all ] || [ -s "$work/$s.pid" ] || continue # a shard with no test
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
