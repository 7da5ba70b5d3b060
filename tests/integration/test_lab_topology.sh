#!/usr/bin/env bash
# The lab's emulated fabric with switches (--topology, docs/lab.md and fabric/README.md):
#  - bad topologies and switch faults are refused (exit 2) with the field and its accepted form;
#  - fat-tree:leaves=2,spines=1 on 4 nodes: the run folder's topology.json puts node0 and
#    node1 on leaf0, node2 and node3 on leaf1, both leaves cabled to spine0; the fabric's
#    counters (fabric/counters.json) show the ring's hops between the leaves crossing the
#    cables; healthy, no finding;
#  - the same description as a FILE, with the spine at 25% written into it (as a user would):
#    the step slows by half or more and the slowest hop is one that crosses the spine; the lab,
#    which knows its switches, names `switch spine0` (or a hop through it, spine0 next);
#    `fabriclab report --topology` on its reports too, its commands tracing the slow hop and
#    reading the switch's port; without the topology, no switch;
#  - --topology rail with --rails 2: NIC k of every node on leaf k; slow-rail still names the rail.
# Usage: test_lab_topology.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd)
tool=$build/fabriclab
unset FABRICLAB_FAULT FABRICLAB_TRANSPORT FABRICLAB_SHIM_MEM FABRICLAB_SYSFS_ROOT NCCL_DEBUG \
	FABRICLAB_FABRIC FABRICLAB_FABRIC_NODE
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-lab-topology.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lab_lib.sh"

[ -e "$build/libfabriclab-fakeverbs.so" ] || { echo "skip: no fake verbs in $build"; exit 77; }
if [ "${FABRICLAB_SANITIZER:-}" = tsan ]; then
	echo "skip: under TSan the emulated NIC cannot keep its schedule"
	exit 77
fi


lab_refused '--topology needs --like' --topology rail
lab_refused 'fat-tree needs both leaves=L and spines=S' --like ndr --topology fat-tree:leaves=2
lab_refused 'more leaves than nodes' --like ndr --topology fat-tree:leaves=8,spines=2
lab_refused 'spines: expected spines=1-256' --like ndr --topology rail:spines=0
lab_refused 'the topology (fat-tree:leaves=2,spines=2) has no spine2' --like ndr \
	--topology fat-tree:leaves=2,spines=2 --hw-fault 'spine:spine=2,rate=50%'
lab_refused 'has no leaf3-spine0' --like ndr --topology fat-tree:leaves=2,spines=1 \
	--hw-fault 'uplink:leaf=3,spine=0,rate=50%'
lab_refused 'a leaf port needs switches' --like ndr --hw-fault 'leafport:node=node1,rate=50%'
lab_refused 'leaf: expected leaf=I' --like ndr --topology fat-tree:leaves=2,spines=1 \
	--hw-fault 'uplink:spine=0,rate=50%'
lab_refused 'effect: expected one of rate=P%, every=T,for=T or add=T' --like ndr \
	--topology fat-tree:leaves=2,spines=1 --hw-fault 'spine:spine=0,rate=50%,add=2us'
echo '{"fabriclab_fabric": 1, "nodes": [' >"$tmp/broken.json"
lab_refused 'broken.json:2:0' --like ndr --topology "$tmp/broken.json"

# Where each NIC hangs, and the leaf-spine cables, from a run's topology.json.
wiring() { # run folder
	"$py" - "$1" <<'PY'
import json, sys
t = json.load(open(sys.argv[1] + "/topology.json"))
nics = " ".join("%s/%s@%s:%s" % (n["name"], c["name"], c["leaf"], c["leaf_port"])
                for n in t["nodes"] for c in n["nics"])
ups = " ".join("%s-%s" % (u["leaf"], u["spine"]) for u in t["uplinks"])
print(nics + " | " + ups)
PY
}

# Bytes the elements carried in the run (their names start so), from the fabric's counters.
carried() { # run folder, element name
	"$py" -c 'import json, sys
c = json.load(open(sys.argv[1] + "/fabric/counters.json"))
print(sum(e["bytes"] for e in c["elements"] if e["element"].startswith(sys.argv[2])))' "$1" "$2"
}

# A verdict (text) within spine0: the switch named or the likeliest, or one of its two hops
# (named, or the likeliest where not enough evidence) with spine0 or its other hop next. One
# spine's hops slowed by different amounts (ECMP over its cables) are one switch only where the
# data says they moved together.
spine_or_next() { # text report
	local hop='(node1/mlx5_0 -> node2|node3/mlx5_0 -> node0)/mlx5_0'
	grep -q '^verdict: switch  spine0 ' "$1" && return 0
	grep -q 'not enough evidence to name a culprit: likeliest switch spine0 ' "$1" && return 0
	grep -Eq "^verdict: (link  $hop |not-enough-evidence ).*next: (switch spine0|link $hop)," \
		"$1" || return 1
	grep -q '^verdict: link' "$1" || grep -Eq "likeliest link $hop " "$1"
}

# fabriclab report --topology on a run with spine0 at 25%: the verdict names the switch, the
# elements its hops share list spine0 first; the same reports without it name no switch; a
# malformed topology is named and the report stands; ibnetdiscover's output of the same wiring
# (two spines there) reads alike.
report_topology() { # run folder
	local r=$1 fix
	fix=$(cd "$(dirname "$0")/../fixtures/topology" && pwd)
	"$tool" report "$r/reports" >"$tmp/plain.out" 2>&1
	"$tool" report "$r/reports" --topology "$r/topology.json" >"$tmp/topo.out" 2>"$tmp/topo.err"
	if grep -A1 '^topology .* shared elements the hops cross' "$tmp/topo.out" | tail -n 1 |
		grep -q '^  spine0 '; then
		ok "report --topology: spine0 is the slowest element the hops share"
	else
		not_ok "report --topology: spine0 not first: $(grep -A2 '^topology' "$tmp/topo.out")"
	fi
	# The switch is named, or a hop through it is and the switch ranks next: one spine's hops
	# slowed by different amounts (the spine's cables picked per connection, as ECMP does) are
	# one switch's only where the data says they moved together.
	if spine_or_next "$tmp/topo.out"; then
		ok "report --topology: the switch spine0 named, or next behind a hop through it ($(head -n 1 "$tmp/topo.out" | cut -c1-70))"
	else
		not_ok "report --topology: $(head -n 2 "$tmp/topo.out")"
	fi
	# The commands that confirm it name the switch and its port: the slow hop's route, and
	# perfquery on spine0's ports (a switch verdict, or not enough evidence with spine0 next)
	# or on the leaf ports of the slow hop's ends (a link).
	sed -n '/^to confirm on the machines:/,/^$/p' "$tmp/topo.out" >"$tmp/confirm.out"
	local port="<leaf[01]'s LID> [0-9]+ "
	grep -Eq '^verdict: (switch  spine0 |not-enough-evidence .*next: switch spine0,)' \
		"$tmp/topo.out" && port="<spine0's LID> [0-9]+ "
	if grep -q '^  ibtracert -G 0x0c42a103' "$tmp/confirm.out" &&
		grep -Eq "^  perfquery -x $port" "$tmp/confirm.out"; then
		ok "report --topology: the commands trace the slow hop and read the switch's port ($(grep -Em1 "perfquery -x $port" "$tmp/confirm.out" | cut -c3-40))"
	else
		not_ok "report --topology: no ibtracert or perfquery on /$port/ in: $(cat "$tmp/confirm.out")"
	fi
	grep -q '^verdict: switch' "$tmp/plain.out" &&
		not_ok "report without --topology named a switch: $(head -n 1 "$tmp/plain.out")" ||
		ok "report without --topology: no switch ($(head -n 1 "$tmp/plain.out" | cut -c1-60))"
	"$tool" report "$r/reports" --topology "$tmp/broken.json" >"$tmp/bad.out" 2>"$tmp/bad.err"
	if [ $? -eq 0 ] && grep -q 'broken.json:2:0: .*the verdict stands without the topology' \
		"$tmp/bad.err" && cmp -s "$tmp/bad.out" "$tmp/plain.out"; then
		ok "report --topology: a malformed file is named by line, the verdict stands"
	else
		not_ok "report --topology broken.json: $(cat "$tmp/bad.err")"
	fi
	"$tool" report "$r/reports" --topology "$fix/ibnetdiscover-fat-tree.txt" >"$tmp/ib.out" 2>&1
	grep -q '^  the spine layer (spine0, spine1) ' "$tmp/ib.out" &&
		ok "report --topology ibnetdiscover: the spine layer (spine0, spine1)" ||
		not_ok "report --topology ibnetdiscover: $(grep -A3 '^topology' "$tmp/ib.out")"
}

ft=fat-tree:leaves=2,spines=1
if lab tree --like ndr -n 4 -s 4 -c 5 -g 4M --topology $ft healthy; then
	tree_run=$run
	want="node0/mlx5_0@leaf0:1 node1/mlx5_0@leaf0:2 node2/mlx5_0@leaf1:1 node3/mlx5_0@leaf1:2 | leaf0-spine0 leaf1-spine0"
	got=$(wiring "$run" 2>&1)
	[ "$got" = "$want" ] && ok "fat-tree: nodes in order over the leaves, every leaf to the spine" ||
		not_ok "fat-tree: wiring \"$got\", wanted \"$want\""
	grep -q "^topology: $ft: 2 leaves, 1 spine" "$tmp/tree.out" && ok "fat-tree: said in the header" ||
		not_ok "fat-tree: no topology line: $(grep -m1 topology "$tmp/tree.out")"
	up=$(carried "$run" "leaf0 -> spine0 #" 2>&1) # two cables: ECMP picks one per connection
	[ "${up:-0}" -ge $((4 << 20)) ] 2>/dev/null &&
		ok "fat-tree: leaf0's cables up carried the hop node1 -> node2 ($up bytes)" ||
		not_ok "fat-tree: leaf0 -> spine0 carried \"$up\" bytes, wanted the ring's share"
	expect_verdict tree "fat-tree healthy: no finding" '^kind=none '
fi

# The same fabric as a file a user edited: spine0 at 25%.
if [ -n "${tree_run:-}" ] && "$py" - "$tree_run/topology.json" "$tmp/spine-desc.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["faults"] = [{"element": "spine0", "rate_pct": 25}]
del t["emulation"]  # the lab gives every run its own state folder
json.dump(t, open(sys.argv[2], "w"))
PY
then
	if lab spine --like ndr -n 4 -s 4 -c 5 -g 4M --topology "$tmp/spine-desc.json" healthy; then
		h=$(median_step tree) s=$(median_step spine)
		"$py" -c "import sys; sys.exit(0 if float('$s') >= 1.5 * float('$h') else 1)" &&
			ok "spine at 25% (from the file): median step $s ms against $h ms healthy" ||
			not_ok "spine at 25%: median step $s ms, wanted 1.5x the healthy $h ms"
		slowest=$("$py" -c 'import json, sys
h = min(json.load(open(sys.argv[1]))["hops"], key=lambda h: h["wire_gbs"] or 1e9)
print("%s->%s" % (h["src_node"], h["dst_node"]))' "$tmp/spine.json" 2>&1)
		case $slowest in
		node1-\>node2 | node3-\>node0) ok "spine at 25%: the slowest hop crosses it ($slowest)" ;;
		*) not_ok "spine at 25%: the slowest hop $slowest stays within a leaf" ;;
		esac
		spine_or_next "$tmp/spine.out" &&
			ok "spine at 25%: the lab, which knows its switches, names spine0 or ranks it next" ||
			not_ok "spine at 25%: the lab's verdict: $(grep -m1 '^verdict' "$tmp/spine.out")"
		report_topology "$run"
	fi
fi

if lab rail --like ndr -n 4 --rails 2 -s 4 -c 5 -g 4M --topology rail slow-rail --rail 1; then
	want="node0/mlx5_0@leaf0:1 node0/mlx5_1@leaf1:1 node1/mlx5_0@leaf0:2 node1/mlx5_1@leaf1:2 node2/mlx5_0@leaf0:3 node2/mlx5_1@leaf1:3 node3/mlx5_0@leaf0:4 node3/mlx5_1@leaf1:4 | leaf0-spine0 leaf1-spine0"
	got=$(wiring "$run" 2>&1)
	[ "$got" = "$want" ] && ok "rail: NIC k of every node on leaf k" ||
		not_ok "rail: wiring \"$got\", wanted \"$want\""
	expect_verdict rail "rail topology, slow-rail on rail 1: the rail" '^kind=rail .*dev=mlx5_1 '
fi

finish
