#!/usr/bin/env bash
# The lab's fabrics (--fabric tcp|roce|ib): roce and ib run the verbs transport on the fake NIC
# with the gradients in emulated GPU memory, so GPUDirect RDMA is real in the plugin's eyes:
#  - healthy on roce: verdict none, every hop over ib with GPUDirect, the sums right;
#  - gdr-off on ib: exactly the target's hops lose GPUDirect, the verdict is gdr on the target,
#    and staging through host memory costs step time (copies at the emulated PCIe rate);
#  - flaky-roce is refused on InfiniBand; every run prints its projection to the field's scale.
# Usage: test_lab_fabric.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd)
tool=$build/fabriclab
unset FABRICLAB_FAULT FABRICLAB_TRANSPORT FABRICLAB_SHIM_MEM FABRICLAB_SYSFS_ROOT NCCL_DEBUG
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-lab-fabric.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

# Runs the lab; $tmp/NAME.out has its output, $tmp/NAME.json the merged report.
lab() { # name args...
	local name=$1
	shift
	if ! timeout 120 "$tool" lab --dir "$tmp/runs-$name" -s 4 -c 2 "$@" >"$tmp/$name.out" 2>&1; then
		not_ok "$name: lab failed: $(tail -5 "$tmp/$name.out")"
		return 1
	fi
	"$tool" report "$tmp"/runs-"$name"/*/reports --json >"$tmp/$name.json" ||
		{ not_ok "$name: report --json failed"; return 1; }
}

# "kind node transports gdr-per-hop" from a merged report.
summary() {
	python3 - "$tmp/$1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
hops = sorted(r["hops"], key=lambda h: h["src_node"])
print(r["verdict"]["kind"], r["verdict"]["node"] or "-",
      ",".join(sorted({h["transport"] for h in hops})),
      " ".join("%s>%s:%s" % (h["src_node"], h["dst_node"], "gdr" if h["gdr"] else "host")
               for h in hops))
PY
}

median_step() { awk '/^median step:/ { print $3 }' "$tmp/$1.out"; }

common=(-n 4 -g 2M --link-rate 400mbit --copy-rate 100mbit)
if lab healthy --fabric roce "${common[@]}" healthy; then
	got=$(summary healthy)
	want="none - ib node0>node1:gdr node1>node2:gdr node2>node3:gdr node3>node0:gdr"
	[ "$got" = "$want" ] || not_ok "roce healthy: $got; expected $want"
	grep -q '^fabric: roce (RoCE v2 GIDs)' "$tmp/healthy.out" || not_ok "roce: fabric not said"
	grep -q '^projection (a model, docs/lab.md): .* 400 Gb/s per GPU) that turns a 9.0 s step' \
		"$tmp/healthy.out" || not_ok "roce: no projection line"
	[ "$failures" -eq 0 ] && echo "ok - roce healthy: $got"
fi

# node1 without GPUDirect: node0->node1 lands in its host memory, node1->node2 leaves from it.
if lab gdroff --fabric ib "${common[@]}" --target node1 gdr-off; then
	got=$(summary gdroff)
	want="gdr node1 ib node0>node1:host node1>node2:host node2>node3:gdr node3>node0:gdr"
	[ "$got" = "$want" ] || not_ok "ib gdr-off: $got; expected $want"
	# Staging 2 MiB each way at 100 mbit/s adds 0.34 s to a step the ring does in ~0.06 s.
	h=$(median_step healthy) g=$(median_step gdroff)
	# Under TSan every rank runs some 10x slower: the step measures the sanitizer.
	[ "${FABRICLAB_SANITIZER:-}" = tsan ] ||
		awk -v h="$h" -v g="$g" 'BEGIN { exit !(h > 0 && g > 2 * h) }' ||
		not_ok "gdr-off median step $g ms is not above twice the healthy $h ms"
	[ "$got" = "$want" ] && echo "ok - ib gdr-off: $got; median step $h -> $g ms"
fi

if "$tool" lab --fabric ib flaky-roce -n 2 --dir "$tmp/runs-bad" >"$tmp/bad.out" 2>&1; then
	not_ok "flaky-roce on ib was accepted"
elif ! grep -q 'flaky-roce is a PFC pause storm, an Ethernet fault: use --fabric roce' \
	"$tmp/bad.out"; then
	not_ok "flaky-roce on ib: $(cat "$tmp/bad.out")"
else
	echo "ok - flaky-roce refused on ib"
fi
"$tool" lab --fabric fddi -n 2 >/dev/null 2>"$tmp/fddi.err" && not_ok "--fabric fddi accepted"
grep -q -- '--fabric "fddi": expected tcp, roce or ib' "$tmp/fddi.err" ||
	not_ok "--fabric fddi: $(cat "$tmp/fddi.err")"

echo "lab_fabric: $failures failure(s)"
[ "$failures" -eq 0 ]
