#!/usr/bin/env bash
# Real NCCL through fabriclab on one GPU: N ranks, each its own NCCL_HOSTID so NCCL
# treats them as separate nodes and every connection goes over NET. Then the same
# run on NCCL's own Socket transport for comparison. Not part of CI (no GPU there).
# Usage: tests/gpu/run.sh [RANKS...]   (default: 2 4)
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s build/libnccl-net-fabriclab.so
so=$(pwd)/build/libnccl-net-fabriclab.so
out=${OUT:-$(mktemp -d)}
ranks_list=${*:-2 4}
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), "cuda", torch.cuda.is_available())'

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
	grep -hE 'Using network|Loaded net plugin|Assigned NET plugin|via NET/' "$out/$label-$n-rank0.log" | head -4
	return $rc
}

status=0
for n in $ranks_list; do
	run fabriclab "$n" NCCL_NET=fabriclab NCCL_NET_PLUGIN="$so" NCCL_NET_PLUGIN_REF_COUNT=1 || status=1
	grep -q 'via NET/fabriclab' "$out/fabriclab-$n-rank0.log" || { echo "plugin not chosen"; status=1; }
	run socket "$n" NCCL_NET=Socket NCCL_NET_PLUGIN=none || status=1
done
# The plugin's own bench with its buffers on the GPU (cudaMalloc, the runtime loaded at run
# time), next to host memory: sockets offer host memory only, so GPU buffers are staged.
for mem in host cuda; do
	echo "== fabriclab bench --mem $mem, 2 ranks, sockets"
	FABRICLAB_SOCKET_IFNAME=lo FABRICLAB_REPORT=off timeout 300 build/fabriclab bench --ranks 2 \
		--mem "$mem" -b 8 -e 64M -f 8 -n 10 -w 2 | tee "$out/bench-$mem.log" || status=1
done
echo "logs in $out"
exit $status
