#!/usr/bin/env bash
# `fabriclab sweep` on 6 local ranks through the plugin on a paced fabric (200 mbit/s per device,
# as the lab paces it), judged by the diagnosis model: one node throttled -> the finding names that
# node, with its confidence and runner-up; one link throttled -> that link; a healthy sweep names
# nothing (exit 0) and is saved as a baseline, then a throttled node compared with it (its
# directions slow against their own baseline too, exit 1), and a whole sweep at half its
# baseline's rate -> the rail; the rejoin gate passes a healthy node (exit 0), fails a throttled
# one (exit 1) and refuses an unknown one (exit 2); a baseline of another size is refused
# (exit 2); the SVG parses.
# Usage: test_sweep.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
[[ $tool = /* ]] || tool=$PWD/$tool
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-sweep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_FAULT FABRICLAB_NODE_NAME RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
export FABRICLAB_LINK_RATE=200mbit FABRICLAB_REPORT_DIR=$tmp/reports FABRICLAB_SOCKET_IFNAME=lo
py=/usr/bin/python3
[ -x "$py" ] || py=python3
failures=0
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

# 1 MiB takes 40 ms at 200 mbit/s: 0.15 s per direction is 3-4 transfers, 5 rounds in ~3 s.
# Throttles at 40% against a 65% mark leave room for the noise of 2 loaded cores.
common=(--ranks 6 -b 1M -e 1M -t 0.15 --threshold 65)

sweep() { # name expected-status args...: stdout NAME.out, stderr NAME.err
	local name=$1 want=$2
	shift 2
	timeout --kill-after=5 90 "$tool" sweep "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		not_ok "$name: fabriclab sweep $* exited $rc, expected $want"
		sed 's/^/#   /' "$tmp/$name.err" | grep -v 'injected fault' | tail -n 8
		sed 's/^/#   /' "$tmp/$name.out" | tail -n 20
		return 1
	fi
}

finding() { # json file -> "kind node other" (rail: "rail DEV -"); a link's ends in name order
	"$py" -c 'import json,sys; f=json.load(open(sys.argv[1]))["finding"]
ends = sorted([f["node"], f["other"]]) if f["kind"] == "link" else [f["node"] or f["rail"], f["other"]]
assert f["kind"] == "none" or 0.9 <= f["confidence"] <= 1 + 1e-9, f
assert set(f["runner_up"]) == {"kind", "model_kind", "culprit", "confidence"}, f
print(f["kind"], ends[0] or "-", ends[1] or "-")' "$1"
}

expect_finding() { # name want description
	local got
	got=$(finding "$tmp/$1.out")
	if [ "$got" = "$2" ]; then
		ok "$1: $3 ($got)"
	else
		not_ok "$1: $3: expected \"$2\", got \"$got\""
		"$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
for s in d["slow"]: print("#  ", s["src"], "->", s["dst"], round(s["busbw_gbs"], 4), s["why"])' \
			"$tmp/$1.out"
	fi
}

svg_parses() { # file
	"$py" -c 'import sys, xml.dom.minidom as m; d=m.parse(sys.argv[1])
assert d.documentElement.tagName == "svg" and d.getElementsByTagName("rect")' "$1"
}

# One node throttled both ways: all 10 of its directions slow, no other.
export FABRICLAB_FAULT='throttle:node=node3,rate=40%'
if sweep node 1 "${common[@]}" --json --svg "$tmp/node.svg"; then
	expect_finding node "node node3 -" "node3 throttled: that node"
	if svg_parses "$tmp/node.svg" && grep -q 'node3 -&gt; node0: [0-9.]* GB/s (slow)' \
		"$tmp/node.svg" && grep -q 'confidence [01]\.[0-9]*; next: ' "$tmp/node.svg"; then
		ok "node: the SVG parses, frames node3's cells as slow, gives confidence and runner-up"
	else
		not_ok "node: the SVG does not parse or does not mark node3's cells"
	fi
fi

# One cable: node1's side of the node1 <-> node2 hop (both directions through it: two links).
export FABRICLAB_FAULT='throttle:node=node1,peer=node2,rate=40%'
if sweep link 1 "${common[@]}" --json; then
	expect_finding link "link node1 node2" "node1 <-> node2 throttled: that link"
	if "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
assert sorted((s["src"], s["dst"]) for s in d["slow"]) == [("node1", "node2"), ("node2", "node1")], d["slow"]' \
		"$tmp/link.out"; then
		ok "link: its two directions slow, nothing else"
	else
		not_ok "link: the slow directions are not node1 <-> node2's"
	fi
fi

# A healthy sweep names nothing; saved as a baseline, a throttled node is held to it.
unset FABRICLAB_FAULT
sweep save 0 "${common[@]}" --json --save "$tmp/base.json" &&
	expect_finding save "none - -" "healthy: nothing named (exit 0)"
if [ -s "$tmp/base.json" ]; then
	if "$py" -c 'import json,sys; b=json.load(open(sys.argv[1]))
assert b["format"] == "fabriclab-sweep-baseline" and b["bytes"] == 1 << 20, b
assert len(b["pairs"]) == 30 and len(b["nodes"]) == 6, len(b["pairs"])
assert all(n["speed_mbps"] == 200 and n["device"] == "lo" for n in b["nodes"]), b["nodes"]
assert all(p["iterations"] >= 1 and 0 < p["p50_us"] <= p["p99_us"] for p in b["pairs"]), b["pairs"][0]
assert b["fabriclab"] and b["created"]' "$tmp/base.json"; then
		ok "save: the baseline holds 30 directions with their samples, 6 nodes with device and rate"
	else
		not_ok "save: the baseline is not what was measured"
	fi
fi
export FABRICLAB_FAULT='throttle:node=node4,rate=40%'
if sweep compare 1 "${common[@]}" --json --baseline "$tmp/base.json" --baseline-min 70; then
	if "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
slow = {(s["src"], s["dst"]): s for s in d["slow"]}
assert all("node4" in k for k in slow) and len(slow) == 10, sorted(slow)
assert all(s["baseline_gbs"] and "baseline" in s["why"] for s in slow.values()), slow' \
		"$tmp/compare.out"; then
		ok "compare: node4's 10 directions below their own baseline, nothing else"
	else
		not_ok "compare: the baseline comparison did not flag exactly node4's directions"
	fi
	expect_finding compare "node node4 -" "node4 throttled, with a baseline: that node"
fi
# The whole sweep at half its baseline's rate (every device paced at 100 mbit/s): among themselves
# the pairs look alike; against their baseline they share one thing, the rail (device lo).
if FABRICLAB_LINK_RATE=100mbit sweep railbase 1 --ranks 4 -b 1M -e 1M -t 0.15 --threshold 65 --json \
	--baseline "$tmp/base.json" --baseline-min 70; then
	expect_finding railbase "rail lo -" "every pair at half its baseline: the rail"
	grep -q '"against": "baseline"' "$tmp/railbase.out" &&
		ok "railbase: judged against the baseline" || not_ok "railbase: not judged against the baseline"
fi
sweep othersize 2 --ranks 2 -b 2M -e 2M --baseline "$tmp/base.json" &&
	if grep -q 'measured at 1048576 bytes' "$tmp/othersize.err"; then
		ok "othersize: a baseline of another size is refused, saying which"
	else
		not_ok "othersize: refused without saying the baseline's size"
	fi

# The rejoin gate: node4 (still throttled) against three peers, then node5 (healthy).
gate=(--ranks 6 -b 1M -e 1M -t 0.15 --gate --baseline "$tmp/base.json" --baseline-min 70)
if sweep gatefail 1 "${gate[@]}" --node node4 --peers node0,node1,node2; then
	if grep -q '^gate: FAIL: node4 must not rejoin' "$tmp/gatefail.out" &&
		grep -q 'fabriclab doctor' "$tmp/gatefail.out"; then
		ok "gatefail: throttled node4 fails the gate, with why and the commands to confirm"
	else
		not_ok "gatefail: no FAIL line or no commands"
	fi
fi
sweep gatepass 0 "${gate[@]}" --node node5 --peers node0,node1,node2 &&
	if grep -q '^gate: PASS: node5 may rejoin' "$tmp/gatepass.out"; then
		ok "gatepass: healthy node5 passes the gate (exit 0)"
	else
		not_ok "gatepass: exit 0 without the PASS line"
	fi
# Without a baseline the peers among themselves are the yardstick (measured too).
sweep gatefleet 1 --ranks 5 -b 1M -e 1M -t 0.1 --gate --node node4 --peers node0,node1,node2 &&
	if grep -q '^gate: FAIL: node4 must not rejoin' "$tmp/gatefleet.out" &&
		grep -q 'the fleet: the peers among themselves' "$tmp/gatefleet.out"; then
		ok "gatefleet: without a baseline, node4 fails against the peers' own pairs"
	else
		not_ok "gatefleet: no FAIL against the fleet"
	fi
unset FABRICLAB_FAULT
sweep gateunknown 2 --ranks 3 -b 64K -e 64K -t 0.01 --gate --node node9 --peers node0 &&
	if grep -q 'node9 is not one of the job' "$tmp/gateunknown.err"; then
		ok "gateunknown: a node not in the job is refused (exit 2)"
	else
		not_ok "gateunknown: exit 2 without naming the node"
	fi
# A --node name carrying a terminal escape (ESC ] 0 ; T BEL retitles it) is shown escaped, as the
# ranks' own names are, wherever it is printed.
esc=$(printf 'node9\033]0;T\007')
sweep gateescape 2 --ranks 3 -b 64K -e 64K -t 0.01 --gate --node "$esc" --peers node0 &&
	if ! LC_ALL=C grep -q "$(printf '[\033\007]')" "$tmp/gateescape.err" &&
		grep -qF 'node9\x1b]0;T\x07 is not one of the job' "$tmp/gateescape.err"; then
		ok "gateescape: control characters of --node are escaped in what the gate prints"
	else
		not_ok "gateescape: --node's control characters reached the terminal raw"
	fi

[ "$failures" -eq 0 ]
