#!/usr/bin/env bash
# The node's RDMA ports in the plugin's reports, with a fixture sysfs tree standing in for the
# node (FABRICLAB_SYSFS_ROOT) while sockets carry the traffic over loopback:
#  - trained-down tree: every report lists the three ports with state, active/max rate and
#    trained_down; rdma_port_active is true; the verdict is `transport`, naming the active port
#    and `ibstat`/NCCL_IB_HCA commands; `fabriclab report` merges it, names the port and lists
#    the trained-down ports as suspects (text and --json);
#  - a copy of the healthy tree whose symbol_error rises while the job runs: the next snapshot
#    carries the delta since the plugin's init and lists the counter as rising, and the merged
#    report shows it as an error counter rising on that node.
# Usage: test_doctor_report.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
fixtures=$PWD/tests/fixtures/sysfs
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_NODE_NAME FABRICLAB_RANK \
	FABRICLAB_REPORT FABRICLAB_REPORT_INTERVAL FABRICLAB_SHIM_NET_VERSION FABRICLAB_SHIM_PIDFILE \
	FABRICLAB_TRANSPORT FABRICLAB_FAULT NCCL_DEBUG
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-doctor-report.XXXXXX")
started=()
cleanup() {
	for p in "${started[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
fail() { echo "not ok - $*"; failures=$((failures + 1)); }

transport_verdict() {
	local dir=$tmp/td why
	FABRICLAB_SYSFS_ROOT=$fixtures/trained-down FABRICLAB_REPORT_DIR=$dir timeout 60 \
		"$tool" bench --ranks 2 -b 1M -e 1M -n 2 -w 0 -c 1 >/dev/null 2>"$tmp/td.err" ||
		{ fail "trained-down: bench failed: $(tail -n 2 "$tmp/td.err")"; return; }
	why=$(python3 - "$dir" <<'EOF' 2>&1
import glob, json, sys
files = sorted(glob.glob(sys.argv[1] + "/node*.json"))
assert len(files) == 2, files
for f in files:
    r = json.load(open(f))
    assert r["transport"] == "socket", r["transport"]
    assert r["rdma_port_active"] is True, f"{f}: rdma_port_active"
    ports = {p["name"]: p for p in r["ports"]}
    assert sorted(ports) == ["mlx5_0/1", "mlx5_1/1", "mlx5_2/1"], sorted(ports)
    assert ports["mlx5_0/1"]["state"] == "ACTIVE" and ports["mlx5_0/1"]["trained_down"] is False
    p = ports["mlx5_2/1"]
    assert (p["trained_down"], p["active_gbps"], p["max_gbps"], p["max_from"]) == (True, 100, 200, "same HCA model"), p
    p = ports["mlx5_1/1"]
    assert (p["trained_down"], p["netdev"], p["active_gbps"], p["max_gbps"]) == (True, "eth2", 50, 100), p
    assert p["counters"]["ethtool/rx_pause_ctrl_phy"]["delta"] == 0, p["counters"]["ethtool/rx_pause_ctrl_phy"]
    v = r["verdict"]
    assert v["kind"] == "transport", v
    assert v["dev"] == "mlx5_0/1" and v["node"] == r["node"], v
    assert "active RDMA port mlx5_0/1" in v["reason"], v["reason"]
    cmds = "\n".join(v["commands"])
    assert f"on {r['node']}: ibstat mlx5_0 1" in cmds and "NCCL_IB_HCA==mlx5_0:1" in cmds, cmds
    txt = open(f[:-5] + ".txt").read()
    assert "port mlx5_2/1: InfiniBand, ACTIVE LinkUp, 100 of 200 Gb/s (same HCA model): TRAINED DOWN" in txt, txt
EOF
	) || { fail "trained-down reports: $why"; return; }
	"$tool" report "$dir" >"$tmp/merged.txt" 2>&1 || { fail "report: $(cat "$tmp/merged.txt")"; return; }
	grep -q "^verdict: transport" "$tmp/merged.txt" &&
		grep -q "active RDMA port mlx5_0/1" "$tmp/merged.txt" &&
		grep -q "ibstat mlx5_0 1" "$tmp/merged.txt" &&
		grep -Eq "^  node0 mlx5_2/1: trained down, 100 of 200 Gb/s" "$tmp/merged.txt" &&
		grep -Eq "^  node1 mlx5_1/1 netdev eth2: trained down, 50 of 100 Gb/s" "$tmp/merged.txt" ||
		{ fail "merged report:"; sed 's/^/    /' "$tmp/merged.txt"; return; }
	"$tool" report --json "$dir" >"$tmp/merged.json" 2>&1 &&
		python3 - "$tmp/merged.json" <<'EOF' || { fail "merged --json: $(cat "$tmp/merged.json" | head -c 300)"; return; }
import json, sys
m = json.load(open(sys.argv[1]))
assert m["verdict"]["kind"] == "transport" and m["verdict"]["dev"] == "mlx5_0/1", m["verdict"]
s = {(p["node"], p["name"]) for p in m["port_suspects"] if p["trained_down"]}
assert s == {(n, p) for n in ("node0", "node1") for p in ("mlx5_1/1", "mlx5_2/1")}, s
EOF
	echo "ok - sockets beside an active RDMA port: transport verdict names mlx5_0/1 with ibstat/NCCL_IB_HCA; trained-down ports in every report and in the merge"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# A snapshot of rank 0 lists symbol_error as rising.
rising_in_snapshot() {
	python3 - "$1" <<'EOF' 2>/dev/null
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/node0-*.json"):
    r = json.load(open(f))
    p = {p["name"]: p for p in r["ports"]}["mlx5_0/1"]
    if any(x["counter"] == "counters/symbol_error" and x["delta"] == 25 for x in p["rising"]):
        sys.exit(0)
sys.exit(1)
EOF
}

rising_counters() {
	local copy=$tmp/sysfs dir=$tmp/rise pidfile=$tmp/pids bench_pid counter limit why
	cp -a "$fixtures/healthy" "$copy"
	counter=$(readlink -f "$copy/class/infiniband/mlx5_0")/ports/1/counters/symbol_error
	FABRICLAB_SYSFS_ROOT=$copy FABRICLAB_REPORT_DIR=$dir FABRICLAB_REPORT_INTERVAL=1 \
		FABRICLAB_SHIM_PIDFILE=$pidfile timeout 120 "$tool" bench --ranks 2 -b 64K -e 64K \
		-n 100000000 -w 0 -c 0 >/dev/null 2>"$tmp/rise.err" &
	bench_pid=$!
	started+=("$bench_pid")
	limit=$(($(now_ms) + 20000))
	until ls "$dir"/node0-*.json >/dev/null 2>&1; do
		[ "$(now_ms)" -lt "$limit" ] || { fail "rising: no snapshot within 20 s"; return; }
		sleep 0.1
	done
	started+=($(awk '{ print $2 }' "$pidfile" 2>/dev/null))
	echo 25 >"$counter"
	limit=$(($(now_ms) + 20000))
	until rising_in_snapshot "$dir"; do
		[ "$(now_ms)" -lt "$limit" ] || { fail "rising: no snapshot lists symbol_error +25 within 20 s"; return; }
		sleep 0.2
	done
	for p in "${started[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait "$bench_pid" 2>/dev/null
	why=$(python3 - "$dir" <<'EOF' 2>&1
import glob, json, sys
r = json.load(open(glob.glob(sys.argv[1] + "/node0-*.json")[0]))
p = {p["name"]: p for p in r["ports"]}["mlx5_0/1"]
c = p["counters"]["counters/symbol_error"]
assert c == {"value": 25, "delta": 25, "severity": "error"}, c
assert p["delta_seconds"] > 0, p["delta_seconds"]
assert p["counters"]["counters/port_xmit_wait"]["delta"] == 0
assert p["rising"] == [{"counter": "counters/symbol_error", "delta": 25, "severity": "error"}], p["rising"]
EOF
	) || { fail "rising: $why"; return; }
	"$tool" report "$dir" >"$tmp/rise.txt" 2>&1
	grep -Eq "^. node0 mlx5_0/1: error counters rising in [0-9]+ s: symbol_error \+25" "$tmp/rise.txt" ||
		{ fail "rising: merged report:"; sed 's/^/    /' "$tmp/rise.txt"; return; }
	echo "ok - symbol_error rising during the job: delta since init in the next snapshot, listed as rising, suspect in the merge"
}

start=$SECONDS
transport_verdict
rising_counters
echo "# $((SECONDS - start)) s"
[ "$failures" -eq 0 ] || { echo "# $failures failed"; exit 1; }
exit 0
