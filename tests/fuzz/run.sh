#!/usr/bin/env bash
# Runs every fuzz target of BUILD_DIR/fuzz for SECONDS each, from the committed corpus
# (tests/fuzz/corpus/<target>) plus what earlier runs found (BUILD_DIR/fuzz/corpus/<target>),
# and prints the executions each reached. A crash leaves its input in BUILD_DIR/fuzz/ and
# makes the script fail.
# Usage: tests/fuzz/run.sh [BUILD_DIR] [SECONDS]
set -u
build=${1:-build}
seconds=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
failed=0
for bin in "$build"/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	found=$build/fuzz/corpus/$name
	mkdir -p "$found"
	log=$build/fuzz/$name.log
	if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$build/fuzz/$name-" "$found" "$here/corpus/$name" >"$log" 2>&1; then
		echo "ok   $name: $(grep -m1 -o 'number_of_executed_units: [0-9]*' "$log" |
			grep -o '[0-9]*$') executions in ${seconds} s"
	else
		echo "FAIL $name (log $log):"
		grep -A12 -m1 'ERROR\|==ERROR\|deadly signal\|abort' "$log" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
done
[ "$failed" -eq 0 ]
