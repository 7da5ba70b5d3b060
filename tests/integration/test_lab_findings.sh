#!/usr/bin/env bash
# Small effects and several faults on the lab, judged from measurements alone: a device at 90%
# of its rate -> `device` (not `node`); one hop at 90% -> `link`; a straggler adding about 10% to
# the step -> `node`; two slow devices -> both named in findings[]; healthy -> no finding at all.
# At 4 and 8 ranks, one short run each (10 steps of 2 MiB: every hop moves 30-35 MiB; 200 mbit/s
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

common=(--link-rate 200mbit --steps 10 --grad 2M --compute 0)

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

# check NAME WHAT EXPECTED LAB-ARGS...: the findings, exactly. A 10% effect on 2 shared cores is
# near the measurement's noise (docs/report-format.md: issue 12 is still open on that), so a case
# gets up to 3 runs and passes on the first whose findings are exactly those; each miss is shown.
check() {
	local name=$1 what=$2 want got try
	want=$(printf '%s' "$3" | sort)
	shift 3
	for try in 1 2 3; do
		lab "$name-$try" "$@" || return
		got=$(findings "$name-$try" | sort)
		if [ "$got" = "$want" ]; then
			echo "ok - $name: $what (run $try)"
			return
		fi
		echo "# $name run $try: expected: $(echo $want); got: $(echo $got)"
	done
	echo "not ok - $name: $what, in none of 3 runs"
	sed -n '/merged report/,/^$/p' "$tmp/$name-3.out" | sed 's/^/#   /'
	failures=$((failures + 1))
}

for ranks in 4 8; do
	check "healthy$ranks" "healthy: no finding" "" -n "$ranks" healthy
	check "device$ranks" "node2 at 90%: its device" "device node2/lo" -n "$ranks" \
		--fault "throttle:node=node2,rate=90%"
	check "link$ranks" "node1 -> node2 at 90%: that link" "link node1/lo -> node2/lo" \
		-n "$ranks" --fault "throttle:node=node1,peer=node2,rate=90%"
	check "straggler$ranks" "node2 holding its messages: the straggler" "node node2" \
		-n "$ranks" --fault "slow:node=node2,factor=1.5"
done
check two8 "two slow devices: both named" "device node1/lo
device node5/lo" -n 8 --fault "throttle:node=node1,rate=60%;throttle:node=node5,rate=80%"

if [ "$failures" -eq 0 ]; then echo "all passed"; else echo "$failures failed"; fi
[ "$failures" -eq 0 ]
