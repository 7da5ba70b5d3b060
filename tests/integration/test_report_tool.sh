#!/usr/bin/env bash
# `fabriclab report` as a user runs it, on the committed fixtures
# (tests/fixtures/reports): verdicts, exit status and messages on bad input,
# --json that parses, --svg that renders to a PNG, --prom written whole; the model's confidence
# and runner-up in each; a fleet of 300 nodes drawn in blocks with its culprit alone.
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
	# The model's fields (values 0 until it fills them): present, of the right types.
	check "--json: verdict and findings carry confidence, line share, noise, runner-up" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
v = m["verdict"]
num = lambda x: isinstance(x, (int, float)) and not isinstance(x, bool)
assert all(num(v[k]) for k in ("confidence", "line_share", "noise")), v
r = v["runner_up"]
assert set(r) == {"kind", "culprit", "confidence"}, r
assert isinstance(r["kind"], str) and isinstance(r["culprit"], str) and num(r["confidence"]), r
assert m["findings"], m["findings"]
for f in m["findings"]:
    assert num(f["confidence"]) and num(f["line_share"]), f
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
check "--prom: verdict confidence gauge, labelled with kind and culprit" grep -q '^fabriclab_verdict_confidence{kind="device",culprit="n2/eth0"} [0-9.e+-]*$' "$tmp/fabriclab.prom"
check "--prom: runner-up confidence gauge, labelled with kind and culprit" grep -q '^fabriclab_verdict_runner_up_confidence{kind="[a-z-]*",culprit="[^"]*"} [0-9.e+-]*$' "$tmp/fabriclab.prom"
check "--svg: the verdict line gives the confidence and the runner-up" grep -q '>confidence [0-9.]*; next: [a-z-]*.*, [0-9.]*</text>' "$tmp/report.svg"
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

# A fleet: 300 nodes x 2 NICs, one report per NIC on its rail's ring, node00150's mlx5_1 slow
# both ways. Every output names it; the SVG draws blocks of nodes, the culprit and its two
# neighbours alone; the textfile has one series per hop, none twice.
fleet=$tmp/fleet
mkdir -p "$fleet"
# fleet_reports DIR [rail]: with "rail", every node's mlx5_1 is slow (a leaf switch), not one.
fleet_reports() {
python3 - "$@" <<'PY'
import json, sys
nodes, devs, slow = 300, 2, 150
rail = sys.argv[2:] == ["rail"]
def hop(view, src, dst, dev, gbs):
    b = 8 << 30
    return {"src_node": "node%05d" % src, "src_dev": "mlx5_%d" % dev, "dst_node": "node%05d" % dst,
            "dst_dev": "mlx5_%d" % dev, "src_rank": src * devs + dev, "dst_rank": dst * devs + dev,
            "view": view, "transport": "ib", "line_rate_gbs": 50.0, "connections": 4, "bytes": b,
            "messages": 16384, "wire_seconds": b / (gbs * 1e9), "wire_gbs": gbs,
            "active_seconds": 1.3 * b / (gbs * 1e9), "peer_wait_seconds": 0.3 * b / (gbs * 1e9),
            "wire_time_us": {"p50": 524288 / (gbs * 1e3), "p99": 1.2 * 524288 / (gbs * 1e3),
                             "max": 2.6 * 524288 / (gbs * 1e3)},
            "size_histogram": [[524288, 16384]], "memory": ["cuda"], "gdr": True}
def rate(src, dev):
    bad = dev == 1 and (rail or src == slow or (src + 1) % nodes == slow)
    return 18.0 if bad else 44.0 + ((src * 7 + dev * 3) % 9) * 0.5
for n in range(nodes):
    for d in range(devs):
        nxt, prev = (n + 1) % nodes, (n + nodes - 1) % nodes
        r = {"schema": "fabriclab-report", "schema_version": 1, "node": "node%05d" % n,
             "pid": 10000 + d, "rank": n * devs + d, "world_size": nodes * devs, "final": True,
             "written_unix": 1700000600.0, "transport": "ib",
             "devices": [{"name": "mlx5_%d" % d, "ptr_support": ["host", "cuda"]}],
             "hops": [hop("send", n, nxt, d, rate(n, d) * 1.02), hop("recv", prev, n, d, rate(prev, d))]}
        json.dump(r, open("%s/node%05d-%d.json" % (sys.argv[1], n, 10000 + d), "w"))
PY
}
fleet_reports "$fleet"
run "$fleet" --svg "$tmp/fleet.svg" --prom "$tmp/fleet.prom"
check "fleet of 300 nodes: exit 0" [ "$rc" -eq 0 ]
check "fleet: the slow NIC is named" has out "verdict: device  node00150/mlx5_1"
check "fleet --svg: nodes drawn in blocks" grep -q '300 nodes in [0-9]* rows: blocks of up to [0-9]* ' "$tmp/fleet.svg"
for n in node00149 node00150 node00151; do
	check "fleet --svg: $n drawn alone, labelled in bold" \
		grep -q "font-weight=\"bold\" fill=\"#d62728\">$n</text>" "$tmp/fleet.svg"
done
check "fleet --svg: the blocks are labelled by their first and last node" \
	grep -q '>node00000\.\.00[0-9]*</text>' "$tmp/fleet.svg"
cells=$(grep -c '<rect .*<title>' "$tmp/fleet.svg")
check "fleet --svg: one cell per pair of rows, not per node pair ($cells cells)" [ "$cells" -lt 100 ]
check "fleet --svg: the slow hops' cells framed in red" grep -q 'stroke="#d62728" stroke-width="3"><title>node00150 -&gt; node00151' "$tmp/fleet.svg"
if command -v rsvg-convert >/dev/null; then
	check "fleet --svg: rsvg-convert renders it" rsvg-convert -o "$tmp/fleet.png" "$tmp/fleet.svg"
fi
series=$(grep -c '^fabriclab_hop_bytes_total{' "$tmp/fleet.prom")
check "fleet --prom: one bytes series per hop ($series of 600)" [ "$series" -eq 600 ]
check "fleet --prom: no series twice" bash -c "[ -z \"\$(grep -v '^#' '$tmp/fleet.prom' | sed 's/} .*/}/' | sort | uniq -d)\" ]"
run "$fleet" --json
check "fleet --json: parses, 600 hops, 600 files" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert len(m["hops"]) == 600 and len(m["files"]) == 600, (len(m["hops"]), len(m["files"]))
assert m["verdict"]["node"] == "node00150" and "runner_up" in m["verdict"]
' "$tmp/out"
# A slow rail blames every node's hops: too many to draw alone, so none is, and the blocks
# carry the red frames.
rm -rf "$fleet"
mkdir -p "$fleet"
fleet_reports "$fleet" rail
run "$fleet" --svg "$tmp/rail.svg"
check "rail of 300 nodes: exit 0" [ "$rc" -eq 0 ]
check "rail: named" has out "verdict: rail"
alone=$(grep -c 'font-weight="bold" fill="#d62728">node[0-9]*</text>' "$tmp/rail.svg")
check "rail --svg: no node drawn alone ($alone)" [ "$alone" -eq 0 ]
framed=$(grep -c 'stroke="#d62728" stroke-width="3"><title>' "$tmp/rail.svg")
check "rail --svg: the blocks framed in red ($framed cells)" [ "$framed" -gt 20 ]

if [ "$failures" -eq 0 ]; then echo "all passed"; else echo "$failures failed"; fi
[ "$failures" -eq 0 ]
