#!/usr/bin/env bash
# The lab's fabrics (--fabric tcp|roce|ib): roce and ib run the verbs transport on the fake NIC
# with the gradients in emulated GPU memory, so GPUDirect RDMA is real in the plugin's eyes:
#  - healthy on roce: verdict none, every hop over ib with GPUDirect, the sums right;
#  - gdr-off on ib: exactly the target's hops lose GPUDirect, the verdict is gdr on the target,
#    and staging through host memory costs step time: the emulated GPU's copy engine moves
#    host<->device copies at --copy-rate, which the lab writes into the run's description
#    (topology.json: gpus.copy_bytes_per_s), no variable;
#  - halve-cable on roce and on ib: the hops carry their link layer (Ethernet, InfiniBand) in the
#    per-rank and merged reports, and the commands fit it: rdma link / ethtool -S pause counters
#    on RoCE, ibstat / perfquery / ibdiagnet on IB, never the other's;
#  - flaky-roce is refused on InfiniBand; every run prints its projection to the field's scale.
# Usage: test_lab_fabric.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd)
tool=$build/fabriclab
unset FABRICLAB_FAULT FABRICLAB_TRANSPORT FABRICLAB_SHIM_MEM FABRICLAB_SYSFS_ROOT NCCL_DEBUG
failures=0
skipped= # checks that could not be judged here
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
	# healthy: nothing named (none, or not enough evidence where 4 loaded ranks leave it at
	# less than 0.9 sure: docs/report-format.md), every hop over ib with GPUDirect
	want="- ib node0>node1:gdr node1>node2:gdr node2>node3:gdr node3>node0:gdr"
	case $got in
	"none $want" | "not-enough-evidence $want") ;;
	*) not_ok "roce healthy: $got; expected none or not-enough-evidence, $want" ;;
	esac
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
	rate=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["gpus"]["copy_bytes_per_s"])' "$tmp"/runs-gdroff/*/topology.json 2>&1)
	[ "$rate" = 12500000 ] && echo "ok - ib gdr-off: the description's copy engine: 12.5 MB/s" ||
		not_ok "ib gdr-off: topology.json's gpus.copy_bytes_per_s: $rate, expected 12500000"
fi

# "kind node link-layers-of-merged-hops link-layers-of-rank-hops", then the commands, one a line.
link_summary() {
	python3 - "$tmp/$1.json" "$tmp"/runs-"$1"/*/reports <<'PY'
import glob, json, sys
r = json.load(open(sys.argv[1]))
ranks = [h for f in glob.glob(sys.argv[2] + "/*.json") for h in json.load(open(f))["hops"]]
print(r["verdict"]["kind"], r["verdict"]["node"] or "-",
      ",".join(sorted({str(h["link_layer"]) for h in r["hops"]})),
      ",".join(sorted({str(h["link_layer"]) for h in ranks})))
print("\n".join(r["verdict"]["commands"]))
PY
}

# A verdict needs bytes: 4 steps of 2 MiB move ~12 MiB a hop, so the bar is lowered to 4 MiB.
# The culprit can read as a device or a link on 2 loaded cores: either names node2 and checks
# its port; a run that names nothing (issue 12's noise) gets up to 3 tries, and 1 of 3 must
# name node1 or node2's device or link. This test's subject is the commands for each link layer,
# judged on that run; a fabric whose halved cable no report sees, or a verdict that names
# another node, misses all 3 (the verdict's own rate of success is `make validate`'s).
check_fabric_commands() { # fabric link-layer want-re... -- forbidden-re...
	local fabric=$1 layer=$2 name=halve-$1 got try before=$failures
	shift 2
	for try in 1 2 3; do
		rm -rf "$tmp/runs-$name"
		FABRICLAB_VERDICT_MIN_BYTES=4M lab "$name" --fabric "$fabric" "${common[@]}" \
			--target node2 halve-cable || return
		got=$(link_summary "$name")
		grep -Eq '^(device|link) node[12] ' <<<"$got" && break
	done
	# A sanitizer's slowdown on loaded cores can hide a halved cable in the noise: not this
	# test's subject (the commands are), so it says so instead of failing.
	if [ -n "${FABRICLAB_SANITIZER:-}" ] && ! grep -Eq '^(device|link) node[12] ' <<<"$got"; then
		grep -Eq " $layer $layer\$" <<<"${got%%$'\n'*}" ||
			not_ok "$fabric halve-cable: link layers: ${got%%$'\n'*}; expected $layer"
		skipped+="${skipped:+; }$fabric halve-cable: no verdict on node2 in 3 runs under"
		skipped+=" $FABRICLAB_SANITIZER (${got%%$'\n'*}): commands not judged"
		echo "# skip - $fabric halve-cable: commands not judged under $FABRICLAB_SANITIZER"
		return
	fi
	if ! grep -Eq "^(device|link) node[12] $layer $layer\$" <<<"${got%%$'\n'*}"; then
		not_ok "$fabric halve-cable: kind, node, link layers: ${got%%$'\n'*}; expected" \
			"device or link on node2, $layer in both reports"
		return
	fi
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		grep -Eq "$1" <<<"$got" || not_ok "$fabric halve-cable: no /$1/ in the commands: $got"
		shift
	done
	[ $# -gt 0 ] && shift
	for re in "$@"; do
		grep -Eq "$re" <<<"$got" && not_ok "$fabric halve-cable: /$re/ in the commands: $got"
	done
	[ "$failures" -eq "$before" ] &&
		echo "ok - $fabric halve-cable: $layer hops; $(sed -n '2p' <<<"$got" | cut -c1-50)..."
}
check_fabric_commands roce Ethernet 'on node2: rdma link show mlx5_0/1' \
	"on node2: ethtool -S \\\$\\(ls /sys/class/infiniband/mlx5_0/device/net\\) \\| grep -E 'pause" \
	'NCCL_IB_HCA=mlx5_0' -- ibstat perfquery ibdiagnet
check_fabric_commands ib InfiniBand 'on node2: ibstat mlx5_0' 'on node2: perfquery -x -C mlx5_0' \
	'^ibdiagnet' 'NCCL_IB_HCA=mlx5_0' -- ethtool pause 'rdma link'

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
[ "$failures" -eq 0 ] || exit 1
# A check that could not be judged here: exit 77 with the reason last (tests/run.sh: a skip).
[ -z "${skipped:-}" ] || { echo "skipped: $skipped"; exit 77; }
