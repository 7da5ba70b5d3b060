#!/usr/bin/env bash
# The validation matrix of the lab under presets (issue 30; docs/lab.md "In the regime of a real
# fabric"): each case is one `fabriclab lab` run whose merged verdict must name the expected kind
# and culprit (healthy runs: none). Prints one line per run and a tally; exit 0 only when every
# run was right.
#
# Cases, for each preset P in $PRESETS (default: ndr xdr hdr roce400), each size N in $SIZES
# (default: 4 8 nodes), each rail count R in $RAILS (default: 1; N x R ranks, at most 16) and
# each channel count C in $CHANNELS (default: 1 2), with a target node chosen at random among the
# nodes and, with rails, a NIC J among its R (printed; the hardware faults take nic=J):
#   healthy                                   -> none
#   halve-cable --target nodeK                -> device nodeK (the plugin's own throttle)
#   --hw-fault downgrade:node=nodeK,rate=50%  -> device nodeK (the emulated NIC's port)
#   --hw-fault downgrade:node=nodeK,rate=85%  -> device nodeK
#   --hw-fault pause:node=nodeK,every=100ms,for=40ms -> device nodeK
#   --hw-fault latency:node=nodeK,add=20us    -> device nodeK
#   slow-node --target nodeK --compute 100    -> node nodeK
# Gradients: $GRAD, else 1 MiB per rank and at least 4 MiB, so that every hop carries NCCL's
# 512 KiB steps (smaller all-reduces at 16 nodes are not validated: docs/lab.md).
# 4 x 2 x 2 x 7 = 112 runs by default; CASES="healthy downgrade50" picks some.
# Usage: scripts/lab_matrix.sh [BUILD_DIR]   (env: PRESETS SIZES RAILS CHANNELS CASES STEPS GRAD)
set -u
build=$(cd "${1:-build}" && pwd)
tool=$build/fabriclab
PRESETS=${PRESETS:-ndr xdr hdr roce400}
SIZES=${SIZES:-4 8}
CHANNELS=${CHANNELS:-1 2}
RAILS=${RAILS:-1}
CASES=${CASES:-healthy halve downgrade50 downgrade85 pause latency straggler}
STEPS=${STEPS:-10}
GRAD=${GRAD:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-matrix.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_FAULT FABRICLAB_TRANSPORT FABRICLAB_SHIM_MEM FABRICLAB_SYSFS_ROOT NCCL_DEBUG
runs=0 right=0 false_alarms=0

# "kind node" of the merged verdict of the run in $1.
verdict() {
	local dir
	dir=$(find "$1" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	"$tool" report --json "$dir/reports" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
v = json.load(sys.stdin)["verdict"]
print(v["kind"], v["node"] or "-")' 2>/dev/null || echo "error -"
}

# One run of case $c under $preset, $n nodes, $rails rails, $ch channels; tallies it.
one_case() {
	local k=$((RANDOM % n)) nic=$((RANDOM % rails)) t want rc got sched mark nicspec at=() args=()
	t=node$k
	want="device $t"
	[ "$rails" -gt 1 ] && at=(--rails "$rails") && nicspec=",nic=$nic" || nicspec=
	case $c in
	healthy) args=(healthy); want="none -" ;;
	halve) args=(halve-cable --target "$t") ;;
	downgrade50) args=(--hw-fault "downgrade:node=$t$nicspec,rate=50%") ;;
	downgrade85) args=(--hw-fault "downgrade:node=$t$nicspec,rate=85%") ;;
	pause) args=(--hw-fault "pause:node=$t$nicspec,every=100ms,for=40ms") ;;
	latency) args=(--hw-fault "latency:node=$t$nicspec,add=20us") ;;
	straggler) args=(slow-node --target "$t" --compute 100); want="node $t" ;;
	*) echo "unknown case $c"; exit 2 ;;
	esac
	rm -rf "$tmp/run"
	timeout --kill-after=5 300 "$tool" lab --dir "$tmp/run" --like "$preset" -n "$n" "${at[@]}" \
		--channels "$ch" -s "$STEPS" -g "${GRAD:-$((n * rails > 4 ? n * rails : 4))M}" "${args[@]}" >"$tmp/out" 2>&1
	rc=$?
	got=$([ "$rc" -eq 0 ] && verdict "$tmp/run" || echo "failed($rc) -")
	# late messages: all, and on the fabric past the start-up
	sched=$(grep -o '[0-9.]*%) by more' "$tmp/out" | head -n 1 | cut -d')' -f1)/$(grep -o \
		'on the fabric after ([0-9.]*%)' "$tmp/out" | head -n 1 | tr -dc '0-9.%')
	runs=$((runs + 1))
	if [ "$got" = "$want" ]; then
		right=$((right + 1)); mark=ok
	else
		mark=WRONG
		[ "$c" = healthy ] && false_alarms=$((false_alarms + 1))
	fi
	printf '%-5s --like %-7s -n %-2s --rails %s --channels %s %-12s want %-14s got %-14s late %s\n' \
		"$mark" "$preset" "$n" "$rails" "$ch" "$c$nicspec" "$want" "$got" "${sched:-?}"
	# a wrong run shows its evidence: the verdict's reason and the hop table
	[ "$mark" = ok ] || sed -n '/^verdict:/,/^$/p;/^hops:/,/^$/p' "$tmp/out" | sed 's/^/      | /'
}

for preset in $PRESETS; do
	for n in $SIZES; do
		for rails in $RAILS; do
			[ $((n * rails)) -le 16 ] || continue
			for ch in $CHANNELS; do
				for c in $CASES; do
					one_case
				done
			done
		done
	done
done
echo "matrix: $right of $runs right, $false_alarms false alarms"
[ "$right" -eq "$runs" ]
