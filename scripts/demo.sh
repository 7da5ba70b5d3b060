#!/usr/bin/env bash
# make demo: `fabriclab lab` with 8 local ranks, healthy and then with one node's cable halved,
# side by side; then the second run's merged report, which must name that node's device.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-demo.XXXXXX")
lab=("$build/fabriclab" lab --ranks 8 --steps 6 --grad 8M --compute 20 --link-rate 400mbit)

echo "== fabriclab lab: 8 ranks (node0..node7), 6 training steps: 20 ms of compute, then an"
echo "   all-reduce of 8 MiB of gradients; every hop paced to a 400 mbit/s link"
"${lab[@]}" --dir "$work/healthy" healthy >"$work/healthy.out"
"${lab[@]}" --dir "$work/halved" halve-cable >"$work/halved.out"
victim=$(sed -n 's/^scenario: halve-cable on \(node[0-9]*\).*/\1/p' "$work/halved.out")

# Each run prints its steps as "step  time ms  all-reduce ms"; show them next to each other.
steps() { awk '/^ +[0-9]+ +[0-9.]+ +[0-9.]+$/ { print $2 }' "$1"; }
line() { sed -n "s/^$2 *//p" "$1" | head -n 1; }
verdict() { sed -n 's/^verdict: *//p' "$1" | sed 's/  ratio.*//'; }
echo
printf '%-22s %-20s %-20s\n' "" "healthy" "halve-cable on $victim"
paste <(steps "$work/healthy.out") <(steps "$work/halved.out") |
	awk -F'\t' '{ printf "%-22s %-20s %-20s\n", "step " NR " (ms)", $1, $2 }'
h=$(sed -n 's/^median step: \([0-9.]*\) ms.*/\1/p' "$work/healthy.out")
s=$(sed -n 's/^median step: \([0-9.]*\) ms.*/\1/p' "$work/halved.out")
ratio=$(awk -v h="$h" -v s="$s" 'BEGIN { printf "%.2fx", s / h }')
printf '%-22s %-20s %-20s\n' "median step (ms)" "$h" "$s ($ratio)"
printf '%-22s %-20s %-20s\n' "communication share" \
	"$(line "$work/healthy.out" 'communication share:' | cut -d' ' -f1)" \
	"$(line "$work/halved.out" 'communication share:' | cut -d' ' -f1)"
printf '%-22s %-20s %-20s\n' "verdict" "$(verdict "$work/healthy.out")" \
	"$(verdict "$work/halved.out")"
echo
echo "== the halve-cable run's merged report"
sed -n '/^== merged report/,$p' "$work/halved.out" | tail -n +2
echo
echo "(both runs, their reports and the ranks' logs: $work)"
