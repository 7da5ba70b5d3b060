#!/usr/bin/env bash
# `fabriclab lab` as a user runs it: bad command lines refused with a reason, a healthy job of
# 4 and 8 ranks gives verdict none with every step printed, and halving one cable with a large
# gradient makes the median step at least 1.6x the healthy one (the slowest link paces the ring).
# Usage: test_lab.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
[[ $tool = /* ]] || tool=$PWD/$tool
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-lab.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_FAULT FABRICLAB_NODE_NAME RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
. "$here/lab_lib.sh"

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

refused() { # description expected-stderr args...
	local what=$1 want=$2
	shift 2
	"$tool" lab --dir "$tmp/refused" "$@" >"$tmp/refused.out" 2>"$tmp/refused.err"
	local status=$?
	if [ "$status" -eq 2 ] && grep -qF -- "$want" "$tmp/refused.err" &&
	   [ ! -e "$tmp/refused" ]; then
		ok "refused: $what"
	else
		not_ok "refused: $what: status $status, stderr: $(head -c 300 "$tmp/refused.err")"
	fi
}

refused "unknown scenario" 'expected healthy, halve-cable' cut-everything
refused "target beyond the ranks" 'there are 4 ranks' -n 4 --target node4 halve-cable
refused "17 ranks" 'from 1 to 16' -n 17
refused "a link rate in ambiguous units" '--link-rate "1gbps"' --link-rate 1gbps
refused "a malformed fault, named by the fault parser" 'unknown key "rate" for slow' \
	--fault 'slow:node=node1,rate=5%'
refused "--tc without --netns" '--tc needs --netns' --tc halve-cable --target node1
refused "--tc for what tc does not do here" 'expected halve-cable' --netns --tc slow-node

# Small and quick: the verdict needs 16 MiB and 8 messages per hop, 3 steps of 4 MiB give more.
# 200 mbit/s per hop: pacing, not a loaded CPU, sets the pace.
common=(--link-rate 200mbit --grad 4M --steps 3 --compute 5)
for ranks in 4 8; do
	name=healthy$ranks
	lab "$name" -n "$ranks" "${common[@]}" healthy || continue
	expect_verdict "$name" "healthy: no verdict" '^kind=none '
	steps=$(grep -cE '^ +[0-9]+ +[0-9.]+ +[0-9.]+$' "$tmp/$name.out")
	if [ "$steps" -eq 3 ] && grep -q '^median step: ' "$tmp/$name.out" &&
	   grep -q '^communication share: [0-9]*% ' "$tmp/$name.out" &&
	   grep -q "^link rate: 200mbit on every hop" "$tmp/$name.out"; then
		ok "$name: 3 steps, the median, the communication share and the link rate printed"
	else
		not_ok "$name: step table or summary missing"; sed 's/^/#   /' "$tmp/$name.out"
	fi
	files=$(ls "$run/reports"/node*.json 2>/dev/null | wc -l)
	if [ "$files" -eq "$ranks" ] && [ -s "$run/report.json" ] && [ -s "$run/steps.tsv" ]; then
		ok "$name: $ranks reports, the merged report and steps.tsv in the run folder"
	else
		not_ok "$name: run folder $run holds $files reports"
	fi
done

# Step time: at 4 ranks, 8 MiB of gradients take ~500 ms per all-reduce at 200 mbit/s, far
# above the 5 ms of compute, so the ring's pace shows directly in the step.
big=(-n 4 --link-rate 200mbit --grad 8M --steps 3 --compute 5)
if lab step-healthy "${big[@]}" healthy && lab step-halved "${big[@]}" --target node2 halve-cable
then
	h=$(median_step step-healthy) s=$(median_step step-halved)
	# Under TSan every rank runs some 10x slower: the step measures the sanitizer.
	if [ "${FABRICLAB_SANITIZER:-}" = tsan ]; then
		echo "# step time not judged under TSan: healthy $h ms, halve-cable $s ms"
	elif awk -v h="$h" -v s="$s" 'BEGIN { exit !(h > 0 && s >= 1.6 * h) }'; then
		ok "step time: halve-cable median step $s ms >= 1.6 x healthy $h ms"
	else
		not_ok "step time: halve-cable median step $s ms < 1.6 x healthy $h ms"
	fi
fi

finish
