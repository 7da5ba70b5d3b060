#!/usr/bin/env bash
# `fabriclab report` as a user runs it, on the committed fixtures
# (tests/fixtures/reports): verdicts, exit status and messages on bad input,
# --json that parses, --svg that renders to a PNG, --prom written whole.
# Usage: test_report_tool.sh [BUILD_DIR]
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
tool=$build/fabriclab
[[ $tool = /* ]] || tool=$PWD/$tool
fixtures=$root/tests/fixtures/reports
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-report-tool.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }
check() { # description, command...
	local what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# Runs the tool; leaves stdout in $tmp/out, stderr in $tmp/err, status in $rc.
run() {
	"$tool" report "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

has() { grep -qF -- "$2" "$tmp/$1"; }

run "$fixtures/healthy4"
check "healthy 4 nodes: exit 0" [ "$rc" -eq 0 ]
check "healthy 4 nodes: verdict none" has out "verdict: none"
check "healthy 4 nodes: 4 hops from 4 processes" has out "hops: 4 from 4 processes on 4 nodes"
check "healthy 4 nodes: nothing on stderr" [ ! -s "$tmp/err" ]

run "$fixtures/slow_device8"
check "slow device: exit 0" [ "$rc" -eq 0 ]
check "slow device: names n2/eth0" has out "verdict: device  n2/eth0"
check "slow device: marks the hop into n2" has out "* n1/eth0 -> n2/eth0"
check "slow device: marks the hop out of n2" has out "* n2/eth0 -> n3/eth0"
check "slow device: ethtool on n2" has out "on n2: ethtool -S eth0 | grep -E 'pause|discard|err'"
check "slow device: nccl-tests on the pair" has out "-H n1,n2 -x NCCL_SOCKET_IFNAME=eth0 all_reduce_perf -b 1G -e 8G -f 2 -g 1"

# Files one by one instead of the folder: same verdict.
run "$fixtures"/slow_link4/n*.json
check "files as arguments: link n3 -> n4" has out "verdict: link  n3/eth0 -> n4/eth0"

for case in "bad_version:schema_version 2" "truncated:truncated or not JSON" \
	"wrong_field:hops[1].bytes" "not_json:truncated or not JSON"; do
	dir=${case%%:*} what=${case#*:}
	run "$fixtures/$dir"
	check "$dir: exit 2" [ "$rc" -eq 2 ]
	check "$dir: stderr names the file" has err "$dir/n1-1000.json"
	check "$dir: stderr says \"$what\"" has err "$what"
	check "$dir: nothing on stdout" [ ! -s "$tmp/out" ]
done

run "$tmp/no-such-folder"
check "missing folder: exit 2" [ "$rc" -eq 2 ]
run
check "no argument: exit 2 with usage" [ "$rc" -eq 2 ]
check "no argument: usage on stderr" has err "usage: fabriclab report"

run "$fixtures/slow_device8" --json
check "--json: exit 0" [ "$rc" -eq 0 ]
if command -v python3 >/dev/null; then
	check "--json: parses, has both views and the verdict" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert m["schema"] == "fabriclab-merged-report" and m["schema_version"] == 1
assert len(m["files"]) == 8 and len(m["hops"]) == 8
h = m["hops"][0]
assert (h["src_node"], h["dst_node"], h["wire_view"]) == ("n1", "n2", "recv")
assert h["send"]["wire_gbs"] > h["recv"]["wire_gbs"] == h["wire_gbs"]
v = m["verdict"]
assert (v["kind"], v["node"], v["dev"]) == ("device", "n2", "eth0"), v
assert v["hop"]["dst_node"] == "n2" and len(v["commands"]) >= 4
' "$tmp/out"
else
	check "--json: looks like the merged report" has out '"schema": "fabriclab-merged-report"'
fi

run "$fixtures/slow_device8" --svg "$tmp/report.svg" --prom "$tmp/fabriclab.prom"
check "--svg --prom: exit 0" [ "$rc" -eq 0 ]
check "--svg --prom: text report still on stdout" has out "verdict: device"
check "--svg: standalone SVG" grep -q '<svg xmlns="http://www.w3.org/2000/svg"' "$tmp/report.svg"
check "--svg: no external resources" bash -c "! grep -qE 'href|<script|@import' '$tmp/report.svg'"
if command -v rsvg-convert >/dev/null; then
	check "--svg: rsvg-convert renders it" rsvg-convert -o "$tmp/report.png" "$tmp/report.svg"
	size=$(stat -c %s "$tmp/report.png" 2>/dev/null || echo 0)
	check "--svg: PNG of plausible size ($size bytes)" [ "$size" -gt 20000 -a "$size" -lt 5000000 ]
	check "--svg: PNG signature" bash -c "head -c 8 '$tmp/report.png' | od -An -c | grep -q 'P   N   G'"
else
	not_ok "rsvg-convert missing (make deps installs librsvg2-bin)"
fi
check "--prom: per-hop gauge" grep -q '^fabriclab_hop_wire_bytes_per_second{src_node="n1",src_dev="eth0",dst_node="n2",dst_dev="eth0",view="recv"} 4.2e+09$' "$tmp/fabriclab.prom"
check "--prom: bytes counter" grep -q '^fabriclab_hop_bytes_total{.*} 2147483648$' "$tmp/fabriclab.prom"
check "--prom: verdict gauge" grep -q '^fabriclab_verdict{kind="device",node="n2",dev="eth0"} 1$' "$tmp/fabriclab.prom"
check "--prom: HELP and TYPE lines" [ "$(grep -c '^# \(HELP\|TYPE\) ' "$tmp/fabriclab.prom")" -ge 6 ]
check "--prom: no temporary file left" bash -c "! ls '$tmp' | grep -q '\.tmp\.'"
check "--prom: readable by node_exporter's user" [ "$(stat -c %a "$tmp/fabriclab.prom")" = 644 ]

run "$fixtures/healthy4" --prom "$tmp/no-such-folder/x.prom"
check "--prom into a missing folder: exit 1" [ "$rc" -eq 1 ]
check "--prom into a missing folder: says where" has err "no-such-folder"

# Only senders timed the wire (socket receivers without data streams): a slow hop is still
# named, with the caveat that a slow receiver would look the same.
cp -r "$fixtures/send_only4" "$tmp/sender_slow"
python3 - "$tmp/sender_slow"/n3-*.json <<'PY'
import json, sys
path = sys.argv[1]
report = json.load(open(path))
for hop in report["hops"]:
    hop["wire_seconds"] *= 3
    hop["wire_gbs"] /= 3
    # slow on the wire means each message is slow too
    hop["wire_time_us"] = {k: v * 3 for k, v in hop["wire_time_us"].items()}
json.dump(report, open(path, "w"))
PY
run "$tmp/sender_slow"
# n3's file holds its send hop only: n3/eth0 -> n4/eth0, the one slowed, is the link named.
first_line() { head -n 1 "$tmp/$1" | grep -q -- "$2"; }
check "senders' view only: the slow hop n3 -> n4 is named" \
	first_line out "^verdict: link  n3/eth0 -> n4/eth0  ratio "
check "senders' view only: the verdict says it rests on senders' timings" has out "as senders timed them"
run "$fixtures/slow_device8"
lacks() { ! has "$@"; }
check "receivers' view: no senders' caveat" lacks out "as senders timed them"

if [ "$failures" -eq 0 ]; then echo "all passed"; else echo "$failures failed"; fi
[ "$failures" -eq 0 ]
