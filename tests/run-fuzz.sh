#!/usr/bin/env bash
# run-fuzz.sh run SECONDS SRC...   fuzz each target for SECONDS, growing its corpus
# run-fuzz.sh replay 0 SRC...      run each target once over its committed corpus (regressions)
# SRC is a fuzz target's source, e.g. kube/fuzz/fuzz-pod.c; its program is build/fuzz/t/<SRC
# without .c> and its corpus <dir of SRC>/corpus/<name without the fuzz- prefix>/ (kube/fuzz/fuzz-watch.c
# -> kube/fuzz/corpus/watch/). A replay over an empty or missing corpus fails: commit one.
set -uo pipefail
mode=$1 secs=$2; shift 2
pass=0 fail=0
for src in "$@"; do
	prog=build/fuzz/t/${src%.c}
	name=$(basename "${src%.c}")
	corpus=$(dirname "$src")/corpus/${name#fuzz-}
	mkdir -p build/fuzz/artifacts
	if [ "$mode" = replay ] && [ -z "$(ls -A "$corpus" 2>/dev/null)" ]; then
		fail=$((fail + 1)); echo "FAIL  fuzz replay $name: no corpus in $corpus"
		continue
	fi
	mkdir -p "$corpus"
	if [ "$mode" = run ]; then
		echo "fuzz: $name for ${secs}s (corpus $corpus)"
		"$prog" -max_total_time="$secs" -artifact_prefix=build/fuzz/artifacts/"$name"- -print_final_stats=1 "$corpus" \
			>build/fuzz/"$name".log 2>&1
	else
		"$prog" -runs=0 "$corpus" >build/fuzz/"$name".log 2>&1
	fi
	if [ $? -eq 0 ]; then
		pass=$((pass + 1)); echo "PASS  fuzz $mode $name ($(ls "$corpus" | wc -l) corpus inputs)"
	else
		fail=$((fail + 1)); echo "FAIL  fuzz $mode $name: see build/fuzz/$name.log"; tail -n 20 build/fuzz/"$name".log
	fi
done
echo "fuzz-$mode: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
