#!/usr/bin/env bash
# Instructions per profiler callback, all in: build/bench/profiler_cost's calls through the
# exported ncclProfiler_v5 table (start, record, stop) plus the drains it runs every 64 ops (the
# report thread's work for the profiler's hops), against the no-op table, under callgrind (every
# instruction counted, so the figure does not depend on the machine's load).
# Usage: bench/profiler_count.sh BUILD [OPS_PER_ROUND]
set -euo pipefail
build=$1 ops=${2:-3000}
if ! command -v valgrind >/dev/null; then
	echo "valgrind not installed: no instruction counts (apt-get install valgrind)"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$(realpath "$build/bench/profiler_cost") here=$(cd "$(dirname "$0")" && pwd)
(cd "$work" && FABRICLAB_REPORT=off valgrind --tool=callgrind "$bin" "$ops" >out.txt 2>&1)
python3 - "$here" "$work"/callgrind.out.* <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from callgrind_cost import parse
selfc, edges, calls, obj = parse(sys.argv[2])
play = {b: v for (a, b), v in edges.items() if a == "play"}
def per(names):
    ir = sum(play.get(n, 0) for n in names)
    n = sum(calls[x] for x in names if x in play)
    return ir, n
kinds = {"start": ("start_v5", "null_start"), "record": ("record_v5", "null_record"),
         "stop": ("stop_any", "null_stop")}
total_ours = total_none = events = 0
print("instructions per callback through ncclProfiler_v5 (callgrind; clock reads are clock_gettime here):")
for kind, (ours, none) in kinds.items():
    o, n = play.get(ours, 0), calls[ours]
    z, m = play.get(none, 0), calls[none]
    if not n or not m:
        sys.exit("profiler_count: %s not found (renamed?): %s" % (kind, sorted(play)))
    print("  %-6s %7.1f (no-op table %4.1f)" % (kind, o / n, z / m))
    total_ours += o
    total_none += z
    events += n
drains = play.get("fl_hops_drain", 0)
print("  drains of the profiler hops' rings, per event: %.1f" % (drains / events))
print("  all in, per event: %.1f added over the no-op table" % ((total_ours + drains - total_none) / events))
PY
