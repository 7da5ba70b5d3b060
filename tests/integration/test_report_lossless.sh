#!/usr/bin/env bash
# `fabriclab report` compares RoCE lossless settings across nodes. Each node is one plugin process
# (a 1-rank bench with FABRICLAB_NODE_NAME) whose sysfs is a doctor fixture tree
# (FABRICLAB_SYSFS_ROOT): its report records eth2's trust, PFC and ECN (ports[].qos), read with
# the doctor's code, and the merge names the node that differs from the rest:
#  - PFC: node0..node3 lossless (PFC and ECN on priority 3), node4 with PFC off everywhere:
#    "node4/eth2: PFC off on priority 3, on for 4 others", and only that;
#  - ECN: node3 with the reaction point off on priority 3 instead: named for roce_rp;
#  - all alike: "alike on all 4 RoCE interfaces" and no differences in --json;
#  - doctor --json carries the same qos object for the port.
# Usage: test_report_lossless.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
fixtures=$PWD/tests/fixtures/sysfs
export FABRICLAB_SOCKET_IFNAME=lo FABRICLAB_IBVERBS_LIB=/nonexistent/libibverbs.so.1
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_RANK FABRICLAB_REPORT \
	FABRICLAB_REPORT_INTERVAL FABRICLAB_SHIM_NET_VERSION FABRICLAB_SHIM_PIDFILE \
	FABRICLAB_TRANSPORT FABRICLAB_FAULT NCCL_DEBUG
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-report-lossless.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

# The trees: lossless as the fixture, one with PFC off, one with ECN's reaction point off on 3.
cp -a "$fixtures/roce-lossless" "$tmp/pfc-off"
echo "0 0 0 0 0 0 0 0" >"$tmp/pfc-off/class/net/eth2/qos/pfc"
cp -a "$fixtures/roce-lossless" "$tmp/ecn-off"
echo 0 >"$tmp/ecn-off/class/net/eth2/ecn/roce_rp/enable/3"

node() { # name tree dir: one node's report in dir
	FABRICLAB_NODE_NAME=$1 FABRICLAB_SYSFS_ROOT=$2 FABRICLAB_REPORT_DIR=$3 timeout 60 \
		"$tool" bench --ranks 1 -b 1M -e 1M -n 2 -w 0 -c 1 >/dev/null 2>"$tmp/$1.err" ||
		not_ok "$1: bench failed: $(tail -n 2 "$tmp/$1.err")"
}
for n in 0 1 2; do node node$n "$fixtures/roce-lossless" "$tmp/base"; done
mkdir -p "$tmp/pfc" "$tmp/ecn" "$tmp/alike"
cp "$tmp"/base/*.json "$tmp/pfc/"
cp "$tmp"/base/*.json "$tmp/ecn/"
cp "$tmp"/base/*.json "$tmp/alike/"
node node3 "$fixtures/roce-lossless" "$tmp/pfc"
node node3 "$fixtures/roce-lossless" "$tmp/alike"
node node4 "$tmp/pfc-off" "$tmp/pfc"
node node3 "$tmp/ecn-off" "$tmp/ecn"

# case dir interfaces "expected differences as node/setting/priority/value/others;..." line
check() {
	local name=$1 want_n=$2 want=$3 line=$4 got
	"$tool" report "$tmp/$name" >"$tmp/$name.txt" 2>"$tmp/$name.err" ||
		{ not_ok "$name: report failed: $(tail -n 2 "$tmp/$name.err")"; return; }
	"$tool" report "$tmp/$name" --json >"$tmp/$name.json" 2>>"$tmp/$name.err" ||
		{ not_ok "$name: report --json failed"; return; }
	got=$(python3 - "$tmp/$name.json" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))["lossless"]
print(l["interfaces"], ";".join("%s/%s/%s/%s/%d" % (d["node"], d["setting"], d["priority"],
                                                   d["value"], d["others"])
                               for d in l["differences"]))
PY
)
	if [ "$got" != "$want_n $want" ]; then
		not_ok "$name: --json lossless: $got; expected $want_n $want"
	elif ! grep -qF -- "$line" "$tmp/$name.txt"; then
		not_ok "$name: no line \"$line\" in: $(grep -A4 'RoCE lossless' "$tmp/$name.txt")"
	else
		echo "ok - $name: $line"
	fi
}
check pfc 5 "node4/pfc/3/off/4" "  node4/eth2: PFC off on priority 3, on for 4 others"
grep -q "on node4: fabriclab doctor" "$tmp/pfc.txt" || not_ok "pfc: no doctor command for node4"
"$tool" report "$tmp/pfc" --prom "$tmp/pfc.prom" 2>/dev/null || not_ok "pfc: report --prom failed"
want='fabriclab_roce_setting_differs{node="node4",netdev="eth2",setting="pfc",priority="3",value="off",others="on"} 1'
grep -qxF -- "$want" "$tmp/pfc.prom" && [ "$(grep -c '^fabriclab_roce_setting_differs{' "$tmp/pfc.prom")" -eq 1 ] ||
	not_ok "pfc --prom: $(grep roce_setting "$tmp/pfc.prom")"
check ecn 4 "node3/ecn_rp/3/off/3" \
	"  node3/eth2: ECN reaction point (roce_rp) off on priority 3, on for 3 others"
check alike 4 "" "RoCE lossless settings: alike on all 4 RoCE interfaces"

# The doctor writes the same port objects, qos included.
FABRICLAB_SYSFS_ROOT=$fixtures/roce-mismatch "$tool" doctor --json >"$tmp/doctor.json" 2>/dev/null
python3 - "$tmp/doctor.json" <<'PY' || not_ok "doctor --json: no qos for mlx5_1/1"
import json, sys
ports = {p["name"]: p for p in json.load(open(sys.argv[1]))["ports"]}
q = ports["mlx5_1/1"]["qos"]
assert q == {"trust": "dscp", "pfc": "00001000", "ecn_np": "00000000", "ecn_rp": "00010000"}, q
assert ports["mlx5_0/1"]["qos"] is None, ports["mlx5_0/1"]
PY
[ "$failures" -eq 0 ]
