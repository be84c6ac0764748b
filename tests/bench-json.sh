#!/usr/bin/env bash
# Runs one area's benchmark programs, passes their output through, and collects every line
# `bench: <name> <value> <unit>` into build/bench/<area>.json.
set -uo pipefail
area=$1; shift
mkdir -p build/bench
out=build/bench/$area.json
if [ $# -eq 0 ]; then
	echo "bench-$area: no benchmark programs in this area yet"
	printf '{"area":"%s","date":"%s","results":[]}\n' "$area" "$(date -u +%FT%TZ)" >"$out"
	exit 0
fi
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
rc=0
for p in "$@"; do
	"$p" | tee -a "$tmp" || rc=1
done
{
	printf '{"area":"%s","date":"%s","host":"%s","cpus":%s,"results":[' "$area" "$(date -u +%FT%TZ)" "$(uname -n)" "$(nproc)"
	awk '$1=="bench:" && NF>=4 {printf "%s{\"name\":\"%s\",\"value\":%s,\"unit\":\"%s\"}", sep, $2, $3, $4; sep=","}' "$tmp"
	printf ']}\n'
} >"$out"
echo "bench-$area: results in $out"
exit $rc
