#!/usr/bin/env bash
# The fuzz targets (tests/fuzz, built by `make test` when clang is there) in the suite: every
# committed corpus input replays clean, then each target fuzzes for FUZZ_TEST_SECONDS (3)
# from it; any crash, leak, UB or failed round trip fails the test. `make fuzz` runs longer.
# Usage: test_fuzz.sh [BUILD_DIR]
set -u
build=${1:-build}
seconds=${FUZZ_TEST_SECONDS:-3}
corpus=tests/fuzz/corpus
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if ! ls "$build"/fuzz/fuzz_* >/dev/null 2>&1; then
	if command -v clang >/dev/null; then
		echo "not ok - no fuzz targets in $build/fuzz (make fuzz-build)"; exit 1
	fi
	# Nothing could run: a skip, not a pass (tests/run.sh counts 77; the reason is the last line).
	echo "skipped: clang not installed, so no fuzz target was built (scripts/deps.sh installs it)"
	exit 77
fi
for src in tests/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	bin=$build/fuzz/$name
	[ -x "$bin" ] || { echo "not ok - $name not built"; failures=$((failures + 1)); continue; }
	[ -n "$(ls "$corpus/$name" 2>/dev/null)" ] ||
		{ echo "not ok - $name has no corpus"; failures=$((failures + 1)); continue; }
	if ! "$bin" -runs=0 "$corpus/$name" >"$tmp/$name.replay" 2>&1 ||
		! grep -q 'INITED\|DONE' "$tmp/$name.replay"; then
		echo "not ok - $name: the committed corpus does not replay clean:"
		tail -n 15 "$tmp/$name.replay" | sed 's/^/    /'
		failures=$((failures + 1))
		continue
	fi
	mkdir "$tmp/$name"
	if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
		-artifact_prefix="$tmp/$name-" "$tmp/$name" "$corpus/$name" >"$tmp/$name.log" 2>&1; then
		echo "ok - $name: corpus of $(ls "$corpus/$name" | wc -l) replays, then" \
			"$(grep -m1 -o 'number_of_executed_units: [0-9]*' "$tmp/$name.log" |
				grep -o '[0-9]*$') executions in ${seconds} s clean"
	else
		echo "not ok - $name found a failure:"
		grep -A15 -m1 'ERROR\|deadly signal' "$tmp/$name.log" | sed 's/^/    /'
		failures=$((failures + 1))
	fi
done
[ "$failures" -eq 0 ] && echo "all fuzz targets clean" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
