#!/usr/bin/env bash
# Real NCCL through fabriclab on one GPU: N ranks, each its own NCCL_HOSTID so NCCL
# treats them as separate nodes and every connection goes over NET. Then the same
# run on NCCL's own Socket transport for comparison, and once more on NCCL's Socket
# transport with fabriclab loaded only as the profiler (NCCL_PROFILER_PLUGIN): its
# reports must name every ring hop, agree with the bytes the all-reduce moved and
# find nothing wrong; busbw with the profiler loaded vs not is printed (goal >= 0.99x).
# Not part of CI (no GPU there). The profiler runs force NCCL_PROTO=Simple (LL/LL128 would add
# flag bytes to what the hops carry) and need NCCL >= 2.23 (the profiler plugin API); NCCL_LIB
# preloads another libnccl.so.2 than torch's (e.g. 2.28.9, which takes ncclProfiler_v5).
# Usage: [NCCL_LIB=/path/libnccl.so.2] tests/gpu/run.sh [RANKS...]   (default: 2 4)
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s build/libnccl-net-fabriclab.so build/libnccl-profiler-fabriclab.so build/fabriclab
so=$(pwd)/build/libnccl-net-fabriclab.so
prof=$(pwd)/build/libnccl-profiler-fabriclab.so
out=${OUT:-$(mktemp -d)}
ranks_list=${*:-2 4}
sizes=${SIZES:-"1048576 16777216 67108864"}
iters=${ITERS:-10}
export SIZES="$sizes" ITERS="$iters"
[ -z "${NCCL_LIB:-}" ] || export LD_PRELOAD="$NCCL_LIB${LD_PRELOAD:+:$LD_PRELOAD}"
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), "cuda", torch.cuda.is_available())'
nccl_code=$(python3 -c 'import torch; v = torch.cuda.nccl.version(); print(v[0] * 10000 + v[1] * 100 + v[2])')

run() { # label, ranks, extra env...
	local label=$1 n=$2; shift 2
	local port=$((29500 + RANDOM % 1000)) pids=() rc=0
	for r in $(seq 0 $((n - 1))); do
		env "$@" RANK=$r WORLD_SIZE=$n LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
			CUDA_VISIBLE_DEVICES=0 NCCL_HOSTID="fabriclab-fake-host-$r" \
			NCCL_SOCKET_IFNAME=lo FABRICLAB_SOCKET_IFNAME=lo FABRICLAB_NODE_NAME="node$r" \
			NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_MAX_NCHANNELS=2 \
			NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET \
			timeout 300 python3 tests/gpu/allreduce_torch.py >"$out/$label-$n-rank$r.log" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	echo "== $label, $n ranks (exit $rc)"
	grep -E '^#|^ +[0-9]' "$out/$label-$n-rank0.log" || true
	grep -hE 'Using network|Loaded net plugin|Assigned NET plugin|via NET/|Loaded (profiler )?plugin|[Pp]rofiler' \
		"$out/$label-$n-rank0.log" | head -6
	return $rc
}

busbw() { # log: busbw of the largest size
	awk '/^ +[0-9]/ { b = $4 } END { print b + 0 }' "$1"
}

# The profiler's merged report: one hop per ring neighbour pair, each carrying what a ring
# all-reduce sends (2(n-1)/n of every buffer, each timed and warm-up call), no verdict.
check_profiler_report() { # ranks, report folder
	local n=$1 dir=$2
	build/fabriclab report "$dir" >"$dir.txt" || return 1
	build/fabriclab report "$dir" --json >"$dir.json" || return 1
	cat "$dir.txt"
	python3 - "$n" "$dir.json" <<'PY'
import json, os, sys
n, merged = int(sys.argv[1]), json.load(open(sys.argv[2]))
sizes = [int(s) for s in os.environ["SIZES"].split()]
calls = int(os.environ["ITERS"]) + 2  # timed + warm-up
expected = sum(s * calls for s in sizes) * 2 * (n - 1) / n
hops = [h for h in merged["hops"] if h.get("mode") == "profiler"]
ring = {(f"node{r}", f"node{(r + 1) % n}") for r in range(n)}
seen = {(h["src_node"], h["dst_node"]) for h in hops}
ok = ring <= seen
# Several communicators (torch makes its own) each have their hops: judge the busiest per pair.
busiest = {}
for h in hops:
    pair = (h["src_node"], h["dst_node"])
    if pair in ring and h["bytes"] > busiest.get(pair, {"bytes": -1})["bytes"]:
        busiest[pair] = h
for h in busiest.values():
    ratio = h["bytes"] / expected
    # Simple moves the payload; the timing and barrier all-reduces add a few bytes.
    good = 0.99 <= ratio <= 1.02
    ok &= good
    print(f"{h['src_node']} -> {h['dst_node']}: {h['bytes']} B, {ratio:.3f}x the all-reduce's "
          f"{expected:.0f} B, {h['wire_gbs']:.2f} GB/s {'ok' if good else 'WRONG'}")
print("missing hops:", sorted(ring - seen) or "none")
kind = merged["verdict"]["kind"]
print("verdict:", kind)
sys.exit(0 if ok and kind == "none" else 1)
PY
}

status=0
for n in $ranks_list; do
	# NCCL also finds the profiler inside the net plugin: both roles, joined in each process
	# (2.28+: net v11 with a ctx), so node0's own report names its profiler hops' peers.
	both="$out/both-$n"
	mkdir -p "$both"
	run fabriclab "$n" NCCL_NET=fabriclab NCCL_NET_PLUGIN="$so" NCCL_NET_PLUGIN_REF_COUNT=1 \
		FABRICLAB_REPORT_DIR="$both" || status=1
	grep -q 'via NET/fabriclab' "$out/fabriclab-$n-rank0.log" || { echo "plugin not chosen"; status=1; }
	[ "$nccl_code" -lt 22803 ] || python3 - "$both" <<'PY' || status=1
import glob, json, sys
r = json.load(open(sorted(glob.glob(sys.argv[1] + "/node0-*.json"))[0]))
hops = [h for h in r["hops"] if h.get("mode") == "profiler"]
unnamed = [h for h in hops if "?" in (h["src_node"], h["dst_node"])]
print(f"node0's own report: {len(hops)} profiler hops, {len(unnamed)} not named by the net role")
sys.exit(0 if hops and not unnamed else 1)
PY
	run socket "$n" NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_ALGO=Ring NCCL_PROTO=Simple ||
		status=1
	if [ "$nccl_code" -lt 22300 ]; then
		echo "== profiler role not run: NCCL $nccl_code has no profiler plugin API (2.23+)"
		continue
	fi
	rep="$out/profiler-$n"
	mkdir -p "$rep"
	run socket-profiled "$n" NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_ALGO=Ring NCCL_PROTO=Simple \
		NCCL_PROFILER_PLUGIN="$prof" FABRICLAB_REPORT_DIR="$rep" FABRICLAB_REPORT=full \
		NCCL_DEBUG_SUBSYS=INIT,NET,PROFILE || status=1
	grep -q 'via NET/Socket' "$out/socket-profiled-$n-rank0.log" ||
		{ echo "NCCL's Socket transport not used"; status=1; }
	ls "$rep"/*.json >/dev/null 2>&1 || { echo "no profiler report: NCCL did not load $prof"; status=1; }
	check_profiler_report "$n" "$rep" || { echo "profiler report wrong"; status=1; }
	plain=$(busbw "$out/socket-$n-rank0.log") profiled=$(busbw "$out/socket-profiled-$n-rank0.log")
	awk -v a="$profiled" -v b="$plain" -v n="$n" 'BEGIN { printf "%d ranks busbw profiled %.3f / plain %.3f = %.3f (goal >= 0.99)\n", n, a, b, b > 0 ? a / b : 0 }'
done
# The plugin's own bench with its buffers on the GPU (cudaMalloc, the runtime loaded at run
# time), next to host memory: sockets offer host memory only, so GPU buffers are staged.
for mem in host cuda; do
	echo "== fabriclab bench --mem $mem, 2 ranks, sockets"
	FABRICLAB_SOCKET_IFNAME=lo FABRICLAB_REPORT=off timeout 300 build/fabriclab bench --ranks 2 \
		--mem "$mem" -b 8 -e 64M -f 8 -n 10 -w 2 | tee "$out/bench-$mem.log" || status=1
done
# sweep over the same buffers: every direction checked through host copies (exit 3 if wrong;
# exit 1, one direction slower than the rest, is a finding, not a failure here).
for mem in host cuda; do
	echo "== fabriclab sweep --mem $mem, 2 ranks, sockets"
	FABRICLAB_SOCKET_IFNAME=lo FABRICLAB_REPORT=off timeout 300 build/fabriclab sweep --ranks 2 \
		--mem "$mem" -b 1M -e 64M -f 8 -t 0.5 | tee "$out/sweep-$mem.log"
	[ "${PIPESTATUS[0]}" -le 1 ] || status=1
done
echo "logs in $out"
exit $status
