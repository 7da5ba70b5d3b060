#!/usr/bin/env bash
# Instructions per ProxyStep, four ways (bench/profiler_chain_cost.c's modes: a no profiler, b
# fabriclab alone, c fabriclab chaining the minimal profiler, d that profiler alone): one pass of
# the player's events through ncclProfiler_v6 under callgrind, counted inclusively in play_once
# (every instruction counted, so the figure does not depend on the machine's load).
# Usage: bench/profiler_chain_count.sh BUILD
set -euo pipefail
build=$1
if ! command -v valgrind >/dev/null; then
	echo "valgrind not installed: no instruction counts (apt-get install valgrind)"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$(realpath "$build/bench/profiler_chain_cost")
so=$(realpath "$build/libnccl-profiler-fabriclab.so") next=$(realpath "$build/profnext/libnccl-profiler-count.so")
declare -A ir
for m in a b c d; do
	(cd "$work" && FABRICLAB_REPORT=off valgrind --tool=callgrind --callgrind-out-file="cg.$m" \
		--toggle-collect=play_once "$bin" "$so" "$next" 1 "$m" >"out.$m" 2>&1)
	ir[$m]=$(callgrind_annotate "$work/cg.$m" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
	steps=$(awk '/^mode/ { print $(NF-1) }' "$work/out.$m")
done
awk -v a="${ir[a]}" -v b="${ir[b]}" -v c="${ir[c]}" -v d="${ir[d]}" -v s="$steps" 'BEGIN {
	printf "instructions per ProxyStep (callgrind, one pass of %d steps): loop alone %.0f;\n", s, a / s
	printf "  added: fabriclab alone %.0f, fabriclab -> minimal profiler %.0f, minimal profiler alone %.0f\n",
		(b - a) / s, (c - a) / s, (d - a) / s
	printf "  chaining adds %.0f per step over the two alone ((c) / ((b) + (d)) = %.2f)\n",
		(c - b - d + a) / s, (c - a) / (b + d - 2 * a) }'
