#!/usr/bin/env bash
# nogdr where GPUDirect RDMA is advertised: the ib transport over the fake verbs, with a peer
# memory client in the fixture sysfs (tests/fixtures/sysfs/healthy: nvidia_peermem) and dma-buf
# registration (the description's "dmabuf": true), so every device offers host, cuda and dmabuf.
# `fabriclab bench --ranks 4` (ring node0 -> node1 -> node2 -> node3 -> node0):
#  - nogdr on node2: node2's devices advertise host memory only, its report lists the rule on
#    each device with the pointer support before (host, cuda, dmabuf) and after (host); the
#    other nodes keep host, cuda and dmabuf and list nothing; the merge lists node2's rules only;
#  - nogdr on node1 and node2: the verdict is `gdr`. The shim registers host memory on every
#    rank, so every hop lacks GPUDirect; a hop counts against the setup when one of its ends
#    could have used it, which node1 -> node2 no longer can: 3 of the 4 hops, and the node
#    named is one that still advertises GPUDirect (node0 or node3).
# What this cannot show: the verdict naming the nogdr target itself. That needs ranks that use
# GPUDirect where it is offered (NCCL registers CUDA memory there), so that the target's hops
# are the ones without; the shim registers host memory only (shim/ring.c).
# Usage: test_gdr_ib.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
fake=$(cd "$build" 2>/dev/null && pwd)/libfabriclab-fakeverbs.so
here=$(cd "$(dirname "$0")" && pwd)
sysfs=$(dirname "$here")/fixtures/sysfs/healthy
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP \
	FABRICLAB_NODE_NAME FABRICLAB_RANK FABRICLAB_REPORT FABRICLAB_REPORT_INTERVAL \
	FABRICLAB_SHIM_NET_VERSION FABRICLAB_FAULT FABRICLAB_LINK_RATE NCCL_DEBUG \
	NCCL_DEBUG_SUBSYS NCCL_IB_HCA FABRICLAB_IB_HCA FABRICLAB_IB_QPS FABRICLAB_FAKEVERBS_INJECT \
	FABRICLAB_FAKEVERBS_DEVICES
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-gdr-ib.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$here/fabric_lib.sh"
describe_fabric "$tmp/fabric.json" "$tmp/fabric" ', "dmabuf": true'
export FABRICLAB_SOCKET_IFNAME=lo FABRICLAB_TRANSPORT=ib FABRICLAB_IBVERBS_LIB=$fake \
	FABRICLAB_FABRIC=$tmp/fabric.json FABRICLAB_SYSFS_ROOT=$sysfs

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
[ -f "$fake" ] || { echo "not ok - $fake missing (run make)"; exit 1; }
[ -f "$sysfs/module/nvidia_peermem/version" ] || { echo "not ok - $sysfs lacks nvidia_peermem"; exit 1; }
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

# run NAME FAULT: 4 ranks of all_reduce, reports in $tmp/NAME.
run() {
	FABRICLAB_REPORT_DIR=$tmp/$1 FABRICLAB_FAULT=$2 timeout 60 "$tool" bench --ranks 4 \
		-b 2M -e 2M -n 10 -w 2 >"$tmp/$1.out" 2>&1 ||
		{ not_ok "$1: bench failed: $(grep -v '^#' "$tmp/$1.out" | tail -3)"; return 1; }
}

# The per-process reports: pointer support per node and device, and the injected entries.
check_reports() { # dir target
	python3 - "$1" "$2" <<'PY'
import glob, json, sys
d, target = sys.argv[1], sys.argv[2]
gdr = ["host", "cuda", "dmabuf"]
reports = {}
for path in glob.glob(d + "/node*.json"):
    r = json.load(open(path))
    reports[r["node"]] = r
assert sorted(reports) == ["node0", "node1", "node2", "node3"], sorted(reports)
for node, r in sorted(reports.items()):
    assert r["transport"] == "ib", (node, r["transport"])
    devs = {dv["name"]: dv["ptr_support"] for dv in r["devices"]}
    assert sorted(devs) == ["mlx5_0", "mlx5_1"], (node, devs)
    if node == target:
        assert all(p == ["host"] for p in devs.values()), (node, "still advertises", devs)
        got = sorted((e["action"], e["dev"], e["rule"], tuple(e["ptr_support_before"]),
                      tuple(e["ptr_support_after"])) for e in r["injected"])
        want = [("nogdr", dev, "nogdr:node=" + target, tuple(gdr), ("host",))
                for dev in ("mlx5_0", "mlx5_1")]
        assert got == want, (node, got)
    else:
        assert all(p == gdr for p in devs.values()), (node, "lost GPUDirect", devs)
        assert r["injected"] == [], (node, r["injected"])
    # The shim registers host memory: no hop uses GPUDirect, whatever is advertised.
    assert r["hops"] and all(h["memory"] == ["host"] and not h["gdr"] for h in r["hops"]), \
        (node, r["hops"])
print("node2: host only, injected before %s after [host]; node0, node1, node3: %s" %
      (gdr, gdr))
PY
}

if run one "nogdr:node=node2"; then
	if why=$(check_reports "$tmp/one" node2 2>&1); then
		echo "ok - nogdr on node2 under GPUDirect: $why"
	else
		not_ok "nogdr on node2: $(echo "$why" | tail -n 1)"
	fi
	if "$tool" report --json "$tmp/one" 2>"$tmp/one.err" | python3 -c '
import json, sys
inj = json.load(sys.stdin)["injected"]
got = sorted((e["node"], e["action"], e["dev"]) for e in inj)
sys.exit(0 if got == [("node2", "nogdr", "mlx5_0"), ("node2", "nogdr", "mlx5_1")] else str(got))'
	then
		echo "ok - the merged report lists node2's nogdr on both devices and nothing else"
	else
		not_ok "the merged report's injected list: $(tail -n 1 "$tmp/one.err")"
	fi
fi

if run two "nogdr:node=node1;nogdr:node=node2"; then
	"$tool" report --json "$tmp/two" >"$tmp/two.json" 2>"$tmp/two.err"
	if got=$(python3 - "$tmp/two.json" <<'PY' 2>&1
import json, sys
v = json.load(open(sys.argv[1]))["verdict"]
want = ("3 hops move data through host memory although their device supports GPUDirect "
        "RDMA (2 through %s); 0 of 4 hops use it" % v["node"])
assert v["kind"] == "gdr", v
assert v["node"] in ("node0", "node3"), ("named a node without GPUDirect", v["node"])
assert v["reason"] == want, (v["reason"], "expected", want)
print("%s %s: %s" % (v["kind"], v["node"], v["reason"]))
PY
	); then
		echo "ok - nogdr on node1 and node2: verdict $got"
	else
		not_ok "nogdr on node1 and node2: $(echo "$got" | tail -n 1)"
	fi
fi

[ "$failures" -eq 0 ] || { echo "# $failures failed (outputs in $tmp kept)"; trap - EXIT; exit 1; }
exit 0
