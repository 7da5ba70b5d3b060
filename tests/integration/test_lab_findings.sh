#!/usr/bin/env bash
# Small effects and several faults on the lab, judged from measurements alone: a device at 90%
# of its rate (85% at 4 ranks) -> `device` (not `node`); one hop at 90% (85%) -> `link`; a straggler adding 20-30% to
# the step -> `node`, over sockets and over verbs; two slow devices, and a halved cable beside a straggler -> both named in
# findings[]; healthy -> no finding at all.
# At 4, 8 and 16 ranks, one short run each (10 steps of 2 MiB, 4 MiB at 16 ranks: every hop moves
# 30-75 MiB; 200 mbit/s
# leaves 8 ranks CPU to spare on 2 loaded cores, where 400 mbit/s let load read as 10% effects).
# Usage: test_lab_findings.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
[[ $tool = /* ]] || tool=$PWD/$tool
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-lab-findings.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_FAULT FABRICLAB_NODE_NAME RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
failures=0

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
if [ "${FABRICLAB_SANITIZER:-}" = tsan ]; then
	echo "skipped: 10% effects are far inside the timing noise TSan adds (every rank ~10x slower)"
	exit 77
fi

common=(--link-rate 200mbit --steps 10 --compute 0)

# lab NAME ARGS...: one run; its merged report lands in $tmp/NAME.json.
lab() {
	local name=$1
	shift
	if ! "$tool" lab "$@" "${common[@]}" --dir "$tmp/$name" >"$tmp/$name.out" 2>&1; then
		echo "not ok - $name: the lab run failed"
		tail -5 "$tmp/$name.out" | sed 's/^/#   /'
		failures=$((failures + 1))
		return 1
	fi
	cp "$tmp/$name"/*/report.json "$tmp/$name.json"
}

# findings NAME: one line per finding, "kind culprit", costliest first.
findings() {
	python3 - "$tmp/$1.json" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1]))["findings"]:
    print(f["kind"], f["culprit"])
PY
}

# The run's median step time in ms (what a straggler's effect is measured by).
step_of() { sed -n 's/^median step: \([0-9.]*\) ms.*/\1/p' "$tmp/$1.out" | head -n 1; }

# check NAME WHAT EXPECTED LAB-ARGS...: the findings, exactly. 1 of 2 runs must give them:
# this is a smoke test of the whole path (plugin, merge, model) on 2 shared, loaded cores, where
# a rank starved for a moment can blur one run; a second miss fails. What the retry cannot hide:
# a kind the model no longer finds, or names wrongly, or a false alarm on the healthy ring, is
# wrong in every run and so in both. What it can hide: a case right in only a fraction p of
# runs passes with probability 1 - (1 - p)^2 (p = 0.5: 3 times in 4). How often the diagnosis
# is right is measured where it belongs, on cases drawn at random: `make validate`
# (docs/benchmarks.md), not here.
check() {
	local name=$1 what=$2 want got try
	want=$(printf '%s' "$3" | sort)
	shift 3
	for try in 1 2; do
		lab "$name-$try" "$@" || return
		got=$(findings "$name-$try" | sort)
		if [ "$got" = "$want" ]; then
			echo "ok - $name: $what (run $try, median step $(step_of "$name-$try") ms)"
			return
		fi
		echo "# $name run $try: expected: $(echo $want); got: $(echo $got)"
	done
	echo "not ok - $name: $what, in neither of 2 runs"
	sed -n '/merged report/,/^$/p' "$tmp/$name-2.out" | sed 's/^/#   /'
	failures=$((failures + 1))
}

# grad_for N: 2 MiB at 4 and 8 ranks; 4 MiB at 16, whose 2 MiB steps split into 128 KiB messages
# that socket receivers time at 100-106% of the rate (a third of their bytes arrive unwatched).
grad_for() { if [ "$1" -ge 16 ]; then echo 4M; else echo 2M; fi; }

for ranks in 4 8 16; do
	size=(-n "$ranks" --grad "$(grad_for "$ranks")")
	# A straggler: with NCCL's pipeline (two slices in flight per chunk, shim/nccl_rules.c) a
	# hold shorter than a message's wire time hides behind the other slice: factor 1.5 adds 1%
	# to the step and is no straggler to find, factor 2 (a hold as long as the wire) 6-9%, read
	# as not enough evidence about one time in two; 2.15 adds 21-24% at 4 and 8 ranks, 2.3 35-39%
	# at 4, 8 and 16 (2026-12-07, one run each). 2.2, as over verbs below.
	factor=2.2
	check "healthy$ranks" "healthy: no finding" "" "${size[@]}" healthy
	# At 4 ranks, 10% effects sit at the edge on a loaded machine: a device at 90% read 0.85
	# sure, or healthy (0.95); a link at 90% 1 run in 2 not sure, the straggler at its receiver
	# next (over sockets a slow wire's receiver sees the first bytes at once and waits less, as
	# a straggler's does). At 85% both were named in 2 of 2 runs, 0.96-1.00 sure (2026-12-07).
	rate=90
	[ "$ranks" -eq 4 ] && rate=85
	check "device$ranks" "node2 at $rate%: its device" "device node2/lo" "${size[@]}" \
		--fault "throttle:node=node2,rate=$rate%"
	check "link$ranks" "node1 -> node2 at $rate%: that link" "link node1/lo -> node2/lo" \
		"${size[@]}" --fault "throttle:node=node1,peer=node2,rate=$rate%"
	check "straggler$ranks" "node2 holding its messages: the straggler" "node node2" \
		"${size[@]}" --fault "slow:node=node2,factor=$factor"
done
check two8 "two slow devices: both named" "device node1/lo
device node5/lo" -n 8 --grad 2M --fault "throttle:node=node1,rate=60%;throttle:node=node5,rate=80%"
# A straggler beside a halved cable: a hold no longer than the halved cable's time on the wire
# hides behind it (factor 2 adds nothing, 3 adds 3% at 8 ranks); factor 4 (a hold 1.5x the
# cable's time) paces the ring, 1.52x the cable alone at 8 ranks (2026-12-07). Both are named,
# or, where the data do not settle the straggler, the cable alone with the straggler ranked
# next (the runner-up). Never anything else. 1 of 2 runs must, as in check():
# a model that no longer names two faults, or names another node, does so in both runs.
cable_straggler() { # ranks
	local name=cable-straggler$1 try got
	for try in 1 2; do
		lab "$name-$try" -n "$1" --grad "$(grad_for "$1")" \
			--fault "throttle:node=node1,rate=50%;slow:node=node5,factor=4" || return
		got=$(python3 - "$tmp/$name-$try.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
named = sorted(f["kind"] + " " + f["culprit"] for f in r["findings"])
nxt = r["verdict"]["runner_up"]
ok = named == ["device node1/lo", "node node5"] or (
    named == ["device node1/lo"] and nxt["kind"] == "node" and nxt["culprit"] == "node5")
print("ok" if ok else "named %s, next %s %s" % (named, nxt["kind"], nxt["culprit"]))
PY
)
		if [ "$got" = ok ]; then
			echo "ok - $name: the cable named, the straggler named or next (run $try)"
			return
		fi
		echo "# $name run $try: $got"
	done
	echo "not ok - $name: the cable and then the straggler, in neither of 2 runs"
	failures=$((failures + 1))
}
for ranks in 8 16; do
	cable_straggler "$ranks"
done

# Over verbs (`--fabric ib`, the emulated NIC) a receiver's buffer goes out at once and it never
# waits; the straggler shows in the waits of the senders into it, and of those into the node
# before it, which cannot free its slots (verdict_candidates.c, node_sides). The healthy ring's
# senders wait too (45% of their time), so the model needs more than over sockets: factor 2.2
# (+23% at 8 ranks) read 0.80-0.88 sure on a loaded machine, 2.5 (+57%) 0.93, 3 (+100%) 0.99
# (2026-12-07, one run each). 3. Healthy: nothing.
check healthy-ib8 "over verbs, healthy: no finding" "" -n 8 --grad 2M --fabric ib healthy
for ranks in 8 16; do
	factor=3
	check "straggler-ib$ranks" "over verbs, node2 holding its messages: the straggler" \
		"node node2" -n "$ranks" --grad "$(grad_for "$ranks")" --fabric ib \
		--fault "slow:node=node2,factor=$factor"
done

if [ "$failures" -eq 0 ]; then echo "all passed"; else echo "$failures failed"; fi
[ "$failures" -eq 0 ]
