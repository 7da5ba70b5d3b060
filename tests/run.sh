#!/usr/bin/env bash
# Runs every test program and script against one build folder; prints "N passed, N failed,
# N skipped". A test that exits 77 was skipped (it could not run some or all of its checks
# here) and says why on the last line of its output, which is printed with it: see tests/skip.h.
# Usage: tests/run.sh [BUILD_DIR] [NAME_FILTER]
set -u
build=${1:-build}
filter=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root" || exit 2
[ -d "$build/tests" ] || { echo "no $build/tests: run make first" >&2; exit 2; }

# Traffic stays on loopback; the tests pick their own ranks and node names.
export FABRICLAB_SOCKET_IFNAME=lo
unset NCCL_SOCKET_IFNAME NCCL_NET_PLUGIN FABRICLAB_NODE_NAME RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$(pwd)/tests/tsan.supp}

passed=0 failed=0 skipped=0 failures=() skips=()
logdir=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-tests.XXXXXX")
# Reports of tests that do not choose their own folder land with the logs, not in the tree.
export FABRICLAB_REPORT_DIR="$logdir/reports"

run_one() { # name, command...
	local name=$1; shift
	local start=$SECONDS log="$logdir/$name.log"
	local rc=0
	timeout --kill-after=10 300 "$@" >"$log" 2>&1 || rc=$?
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok   $name ($((SECONDS - start)) s)"
	elif [ "$rc" -eq 77 ]; then
		local why
		why=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)
		skipped=$((skipped + 1)); skips+=("$name")
		echo "SKIP $name ($((SECONDS - start)) s): ${why:-no reason given}"
	else
		failed=$((failed + 1)); failures+=("$name")
		echo "FAIL $name ($((SECONDS - start)) s), last lines of $log:"
		tail -n 25 "$log" | sed 's/^/    /'
	fi
}

for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	[[ -z "$filter" || "$name" == *"$filter"* ]] || continue
	run_one "$name" "$t"
done
for s in tests/integration/test_*.sh; do
	[ -f "$s" ] || continue
	name=$(basename "$s" .sh)
	[[ -z "$filter" || "$name" == *"$filter"* ]] || continue
	run_one "$name" bash "$s" "$build"
done

[ ${#skips[@]} -eq 0 ] || echo "skipped: ${skips[*]}"
if [ ${#failures[@]} -eq 0 ]; then
	rm -rf "$logdir"
else
	echo "failed: ${failures[*]} (logs in $logdir)"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
