#!/usr/bin/env bash
# Instructions per request of the plugin's own code (wrap + counting, the report thread, ext),
# under NCCL's pattern (the shim's ring all_reduce, NCCL polling test), with callgrind: every
# thread of every rank, counted, so the figures do not depend on how loaded the machine is.
# Usage: [RANKS=2] [SIZE=8] [ITERS=2000] [CHANNELS=1] bench/count_cost.sh BUILD LABEL=SO[@ext:INNER_SO] ...
# CHANNELS: rings side by side over connections of their own (FABRICLAB_SHIM_CHANNELS), as
# NCCL's channels: a hop then has that many connections, whose runs its drains merge.
# Each LABEL=SO runs `fabriclab bench` through SO; @ext:INNER puts fabriclab over INNER.
# See bench/callgrind_cost.py for what is counted. Reports are on (FABRICLAB_REPORT=full), as
# a job runs: the report thread's drains are in the figures.
set -euo pipefail
build=$1
shift
ranks=${RANKS:-2} size=${SIZE:-8} iters=${ITERS:-2000} channels=${CHANNELS:-1}
if ! command -v valgrind >/dev/null; then
	echo "valgrind not installed: no instruction counts (apt-get install valgrind)"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "$ranks ranks, $size B all_reduce, $channels channel(s), $iters iterations, callgrind (instructions, all threads):"
for spec in "$@"; do
	label=${spec%%=*} so=${spec#*=} transport=
	case $so in *@ext:*) transport=ext:$(realpath "${so#*@ext:}") so=${so%%@ext:*} ;; esac
	dir=$work/$label so=$(realpath "$so")
	mkdir -p "$dir"
	(cd "$dir" && FABRICLAB_TRANSPORT=$transport FABRICLAB_REPORT=full FABRICLAB_REPORT_DIR="$dir/rep" \
		FABRICLAB_SHIM_CHANNELS=$channels \
		NCCL_NET_PLUGIN=$so valgrind --tool=callgrind --trace-children=yes \
		"$OLDPWD/$build/fabriclab" bench --ranks "$ranks" -b "$size" -e "$size" -n "$iters" -w 5 \
		>out.txt 2>&1) || { echo "  $label: the run failed:"; tail -5 "$dir/out.txt"; continue; }
	# the ranks' profiles: those that called into a net plugin (the parent only spawns them)
	files=$(grep -l -E "^c?fn=\([0-9]+\) .*(isend|fl_wrap_test)" "$dir"/callgrind.out.* || true)
	python3 bench/callgrind_cost.py "$label" $files
	# A ring that overflowed sent its writer down the bridging path and left its runs unread:
	# such a run does not measure the normal one (under valgrind the report thread may drain late).
	# Another plugin loaded directly writes no reports: nothing to check.
	compgen -G "$dir/rep/*.json" >/dev/null || continue
	python3 - "$dir"/rep/*.json <<-'PY'
		import json, sys
		ovf = br = 0
		for p in sys.argv[1:]:
		    for h in json.load(open(p)).get("hops") or []:
		        ovf += h.get("ring_overflows") or 0
		        br += h.get("union_bridges") or 0
		print("  %-20s ring overflows %d, union bridges %d%s" % ("", ovf, br,
		      "" if ovf + br == 0 else "  (NOT a clean run: figures include the bridging path)"))
	PY
done
