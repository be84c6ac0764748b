#!/usr/bin/env bash
# `make check`'s steps (docs/testing.md): lint, unit, asan, fuzz-replay, run-smoke, e2e, each
# a sub-make, stopping at the first that fails, with each step's wall time on a `check:` line
# and all of them on the last line. unit runs while asan then fuzz-replay run beside it (their
# test programs mostly wait, on 2 cores the two tiers take about the time of one); asan's and
# fuzz-replay's lines are printed after unit's. run-smoke and e2e run alone (e2e's shards get
# the CPUs to themselves). Called by the Makefile with MAKE and CHECK_LINT_RULES set.
set -uo pipefail
make=${MAKE:-make}
start=$SECONDS
steps=()
# step NAME CMD...: runs CMD, prints its wall time; the script ends at the first failure
step() {
	local name=$1 t0=$SECONDS rc
	shift
	"$@"
	rc=$?
	steps+=("$name $((SECONDS - t0)) s")
	echo "check: $name took $((SECONDS - t0)) s$([ "$rc" -eq 0 ] || echo ", FAILED (exit $rc)")"
	if [ "$rc" -ne 0 ]; then
		summary
		exit "$rc"
	fi
}
summary() {
	local s out=
	for s in "${steps[@]}"; do out+="$s, "; done
	echo "check: steps: ${out}$((SECONDS - start)) s in all"
}

step lint env LINT_RULES="${CHECK_LINT_RULES:-format,spdx,layers,names}" "$make" lint

mkdir -p build
bg_log=build/check-asan-fuzz.log
rm -f build/check-asan-fuzz.secs
# its own session, so that a failure or Ctrl-C here stops it and its sub-makes as a group
setsid bash -c 't0=$SECONDS; "$1" asan && "$1" fuzz-replay; rc=$?
	echo $((SECONDS - t0)) >build/check-asan-fuzz.secs; exit $rc' check-asan "$make" >"$bg_log" 2>&1 &
bg=$!
trap 'kill -TERM -- "-$bg" 2>/dev/null' EXIT
trap 'exit 130' INT TERM
step unit "$make" unit
t0=$SECONDS
echo "check: waiting for asan and fuzz-replay (run beside unit); their lines:"
wait "$bg"
bg_rc=$?
trap - EXIT
cat "$bg_log"
secs=$(cat build/check-asan-fuzz.secs 2>/dev/null || echo '?')
steps+=("asan+fuzz-replay $secs s (beside unit, $((SECONDS - t0)) s after it)")
echo "check: asan+fuzz-replay took $secs s beside unit ($((SECONDS - t0)) s after unit)$([ "$bg_rc" -eq 0 ] || echo ", FAILED (exit $bg_rc)")"
if [ "$bg_rc" -ne 0 ]; then
	summary
	exit "$bg_rc"
fi

step run-smoke "$make" run-smoke
step e2e "$make" e2e
summary
