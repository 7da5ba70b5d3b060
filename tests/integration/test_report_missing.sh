#!/usr/bin/env bash
# A missing report is missing evidence, never a culprit (issue: a dead pod blamed as the straggler).
# One healthy lab run of 6 ranks over sockets, then each process's report left out in turn: the
# merge names the missing rank and node, and its verdict never names that node (a straggler whose
# senders' waits were read as its receives' was the old failure). The same with a straggler
# elsewhere: still found.
# Usage: test_report_missing.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
[[ $tool = /* ]] || tool=$PWD/$tool
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-missing.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_FAULT FABRICLAB_NODE_NAME RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
failures=0
fail() { echo "not ok - $*"; failures=$((failures + 1)); }

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

run() { # name lab-args...: the run's reports folder in $tmp/name.reports
	local name=$1
	shift
	"$tool" lab -n 6 --steps 8 --grad 2M --compute 0 --link-rate 400mbit "$@" \
		--dir "$tmp/$name" >"$tmp/$name.out" 2>&1 || { fail "$name: the lab run failed"; return 1; }
	cp -r "$tmp/$name"/*/reports "$tmp/$name.reports"
}

# without NODE's report: the merged text, and whether its verdict names that node
judge_without() { # reports node -> prints "missing-line|verdict-line"
	local dir=$tmp/without
	rm -rf "$dir"
	cp -r "$1" "$dir"
	rm -f "$dir/$2"-*.json
	"$tool" report "$dir" >"$tmp/merged.txt" 2>&1
	echo "$(grep -m1 '^missing reports:' "$tmp/merged.txt")|$(grep -m1 '^verdict:' "$tmp/merged.txt")"
}

run healthy healthy || exit 1
for k in 0 1 2 3 4 5; do
	got=$(judge_without "$tmp/healthy.reports" "node$k")
	missing=${got%%|*} verdict=${got#*|}
	verdict=${verdict%%  (confidence*} # the verdict itself, not its runner-up
	[[ $missing == *"rank $k"* && $missing == *"node$k"* ]] ||
		fail "without node$k's report the merge does not say so: $missing"
	if [[ $verdict == *"node$k"* ]]; then
		fail "without node$k's report the verdict blames it: $verdict"
	else
		echo "ok - node$k's report missing: said, not blamed ($verdict)"
	fi
done

# Factor 3: at 2.5 (+50% to the step with NCCL's pipeline) the straggler's late receives read,
# one run in four on a loaded machine, as a slow wire into it (over sockets the sender times the
# wire, and TCP holds it while the receiver does not read); a weakness of the model recorded in
# docs/benchmarks.md, not what this test is about (a missing report never blamed). At 3 it was
# once in 11 runs (2026-12-07) not sure, node4 still the likeliest (0.76) and the link into it
# next: named, or not sure with node4 likeliest, passes; node1 or any other culprit fails.
run straggler --fault "slow:node=node4,factor=3" || exit 1
got=$(judge_without "$tmp/straggler.reports" node1)
verdict=${got#*|}
if [[ $verdict == "verdict: node  node4"* ]]; then
	echo "ok - a straggler on node4 is still found without node1's report"
elif [[ $verdict == "verdict: not-enough-evidence"* ]] &&
	grep -q '^  not enough evidence to name a culprit: likeliest node node4 ' "$tmp/merged.txt"; then
	echo "ok - a straggler on node4 is still the likeliest without node1's report (not sure)"
else
	fail "straggler on node4 without node1's report: $verdict"
fi

[ "$failures" -eq 0 ] && echo "all passed" || echo "$failures failed"
[ "$failures" -eq 0 ]
