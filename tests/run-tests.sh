#!/usr/bin/env bash
# Runs standalone test programs: exit 0 = pass, 77 = skip, anything else = fail.
# Usage: run-tests.sh TIER PROG...   Prints one line per program and a closing
# "N passed, N failed, N skipped" line. Each program's output goes to build/test-logs/TIER/.
set -u
tier=$1; shift
logdir=build/test-logs/$tier
mkdir -p "$logdir"
pass=0 fail=0 skip=0 failed=()
for p in "$@"; do
	name=${p#build/}; log="$logdir/$(echo "$name" | tr / _).log"
	start=$EPOCHREALTIME
	"$p" >"$log" 2>&1; rc=$?
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
	case $rc in
	0) pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP  $name (${secs}s): $(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "FAIL  $name (rc=$rc, ${secs}s) log: $log"
	   tail -n 30 "$log" | sed 's/^/      /' ;;
	esac
done
echo "$tier: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
