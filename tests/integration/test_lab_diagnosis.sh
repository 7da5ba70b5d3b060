#!/usr/bin/env bash
# The lab's faults from the field, injected by the plugin on 4 and 8 local ranks, and what the
# merged report must conclude from its measurements alone: halve-cable -> `device` naming the
# target's device; one hop throttled -> `link` naming that hop; slow-node -> `node` naming the
# target; gdr-off -> the report says GPUDirect is not in use, and why.
# Usage: test_lab_diagnosis.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
[[ $tool = /* ]] || tool=$PWD/$tool
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-lab-diagnosis.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_FAULT FABRICLAB_NODE_NAME RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
. "$here/lab_lib.sh"

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

# 200 mbit/s per hop keeps 8 ranks well inside what 2 loaded cores carry; 3 steps of 4 MiB
# give every hop more than the verdict's minimum sample (16 MiB, 8 messages).
common=(--link-rate 200mbit --grad 4M --steps 3 --compute 5)

for ranks in 4 8; do
	# Targets away from rank 0, and a hop of the ring (node k sends to node k+1).
	t=$((ranks - 2)) a=1 b=2
	lab "halve$ranks" -n "$ranks" "${common[@]}" --target "node$t" halve-cable &&
		expect_verdict "halve$ranks" "halve-cable on node$t: its device" \
			"^kind=device node=node$t dev=lo "
	lab "hop$ranks" -n "$ranks" "${common[@]}" \
		--fault "throttle:node=node$a,peer=node$b,rate=50%" &&
		expect_verdict "hop$ranks" "node$a -> node$b throttled: that link" \
			"^kind=link .*hop=node$a/lo->node$b/lo\$"
	# A straggler's GPU: 100 ms of compute for the others, 200 ms for it, and its sends held.
	lab "slow$ranks" -n "$ranks" "${common[@]}" --compute 100 --target "node$t" slow-node &&
		expect_verdict "slow$ranks" "slow-node node$t: the straggler" \
			"^kind=node node=node$t " ||
		echo "#   wait shares by receiving node: $(wait_shares "$tmp/slow$ranks.json")"
	if lab "gdr$ranks" -n "$ranks" "${common[@]}" --target "node$t" gdr-off; then
		# Host memory everywhere: no hop uses GPUDirect, and the report says why. (Sockets
		# never offer GPUDirect: test_gdr_ib.sh checks that nogdr takes it away.)
		if "$py" - "$tmp/gdr$ranks.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["hops"] and all(not h["gdr"] and h["memory"] == ["host"] for h in m["hops"]), m["hops"]
PY
		then
			ok "gdr$ranks: no hop uses GPUDirect (host memory only)"
		else
			not_ok "gdr$ranks: a hop claims GPUDirect"
		fi
		# Only the merged report counts (what the target says it applied), not the lab's
		# header naming the fault it asked for.
		sed -n '/^== merged report/,$p' "$tmp/gdr$ranks.out" >"$tmp/gdr$ranks.report"
		said="GPUDirect RDMA is not in use on node$t/lo: "
		if grep -qF "$said" "$tmp/gdr$ranks.report"; then
			ok "gdr$ranks: the report states GPUDirect is off and why"
		else
			not_ok "gdr$ranks: the report does not say GPUDirect is off, nor why"
			sed 's/^/#   /' "$tmp/gdr$ranks.report" | head -n 6
		fi
	fi
done

finish
