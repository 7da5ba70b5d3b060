#!/usr/bin/env bash
# GPU memory through the plugin, on the fake CUDA runtime (build/libfabriclab-fakecuda.so, whose
# device memory the host cannot touch outside cudaMemcpy where its GPUs protect it). What the
# GPUs are is described, as the lab does (the description's "gpus", fabric/README.md), never set
# by the FABRICLAB_FAKECUDA_* overrides but in one case that checks they still override:
#  - bench --mem cuda over sockets (host memory only): staged through host bounce buffers,
#    every element checked, for all_reduce and sendrecv at 2 and 3 ranks;
#  - over the ib transport on the fake verbs with a GPUDirect-capable node: the plugin
#    registers CUDA memory, receives are flushed, the reports say GDR on every hop. The fakes
#    model the flush: what the NIC writes into device memory reaches cudaMemcpy only after a
#    NIC read of device memory (the iflush), so a shim that skips iflush reads stale bytes here;
#  - sweep --mem cuda, staged over sockets (3 ranks) and GPUDirect over the fake verbs (2 ranks):
#    every direction measured, no byte wrong, exit 0; with no GPU, a message naming --mem cuda;
#  - LOCAL_RANK picks the rank's GPU; no runtime, no GPU, cudaMalloc failing: a clear error,
#    and host memory still works without CUDA;
#  - the doctor lists the runtime's GPUs with the driver's GPUDirect attribute: the
#    description's, a node's own over them, FABRICLAB_FAKECUDA_GDR over both; a refused
#    description gives no GPU and names the field.
# Usage: test_cuda_mem.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd)
tool=$build/fabriclab
fakecuda=$build/libfabriclab-fakecuda.so
fakeverbs=$build/libfabriclab-fakeverbs.so
fixture=$(cd "$(dirname "$0")/../fixtures/sysfs/healthy" && pwd)
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_MEM FABRICLAB_FAULT \
	FABRICLAB_LINK_RATE FABRICLAB_TRANSPORT FABRICLAB_SYSFS_ROOT LOCAL_RANK FABRICLAB_FABRIC \
	FABRICLAB_FABRIC_NODE FABRICLAB_FAKECUDA_DEVICES FABRICLAB_FAKECUDA_PCI FABRICLAB_FAKECUDA_GDR \
	FABRICLAB_FAKECUDA_DMABUF FABRICLAB_FAKECUDA_LIMIT FABRICLAB_FAKECUDA_PROTECT \
	FABRICLAB_FAKECUDA_CC FABRICLAB_FAKECUDA_COPY_RATE
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-cuda.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export FABRICLAB_SOCKET_IFNAME=lo FABRICLAB_REPORT_DIR=$tmp/reports FABRICLAB_REPORT=brief \
	FABRICLAB_CUDART_LIB=$fakecuda FABRICLAB_CUDA_DRIVER_LIB=$fakecuda NCCL_DEBUG=INFO
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

# The emulated fabric and its GPUs, described (fabric_lib.sh): gpus NAME GPUS writes $tmp/NAME.json
# whose every node has those GPUs ('{"protect": true}') and prints its path.
. "$(dirname "$0")/fabric_lib.sh"
gpus() {
	describe_fabric "$tmp/$1.json" "$tmp/$1" "" "" "$2" && echo "$tmp/$1.json"
}
protected=$(gpus protected '{"protect": true}')

bench() { # name ranks op env... ; output in $tmp/name.{out,err}
	local name=$1 ranks=$2 op=$3
	shift 3
	env "$@" timeout 60 "$tool" bench --ranks "$ranks" --mem cuda -o "$op" -b 1 -e 2M -f 16 \
		-n 2 -w 1 >"$tmp/$name.out" 2>"$tmp/$name.err"
}

# Every size line printed with #wrong 0, and as many lines as sizes 1..2M by 16.
all_right() { # name
	awk '!/^#/ && NF { n++; if ($8 != "0") bad = 1 } END { exit bad || n != 6 }' "$tmp/$1.out"
}

check_bench() { # name ranks op expect-log env...
	local name=$1 ranks=$2 op=$3 expect=$4
	shift 4
	if ! bench "$name" "$ranks" "$op" "$@"; then
		not_ok "$name: bench failed: $(grep -v INFO "$tmp/$name.err" | tail -3)"
	elif ! all_right "$name"; then
		not_ok "$name: wrong or missing results: $(grep -v '^#' "$tmp/$name.out" |
			tr '\n' '|')"
	elif [ "$(grep -c "$expect" "$tmp/$name.err")" -ne "$ranks" ]; then
		not_ok "$name: not every rank said \"$expect\""
	else
		echo "ok - $name"
	fi
}

staged="staging through host bounce buffers"
for op in all_reduce sendrecv; do
	for ranks in 2 3; do
		check_bench "sock-$op-$ranks" "$ranks" "$op" "$staged" FABRICLAB_FABRIC="$protected"
	done
done

# Two GPUs: LOCAL_RANK (set by the spawner like torchrun) picks GPU 0 and GPU 1.
check_bench "two-gpus" 2 all_reduce "$staged" \
	FABRICLAB_FABRIC="$(gpus two-gpus '{"count": 2, "protect": true}')"
for g in 0 1; do
	grep -q "\[$g\] NCCL INFO shim: GPU memory on GPU $g:" "$tmp/two-gpus.err" ||
		not_ok "two-gpus: rank $g did not use GPU $g"
done

# What the reports say of each hop's memory: "hops memory-types gdr" over all reports.
hop_memory() {
	python3 - "$tmp/reports" <<'PY'
import glob, json, sys
hops = [h for f in glob.glob(sys.argv[1] + "/*.json") for h in json.load(open(f))["hops"]]
kinds = sorted({"+".join(h["memory"]) for h in hops})
print(len(hops), ",".join(kinds), all(h["gdr"] for h in hops))
PY
}

# GPUDirect: the fake verbs device on a node whose sysfs has nvidia_peermem (NCCL_PTR_CUDA).
describe_fabric "$tmp/fabric.json" "$tmp/fabric"
describe_fabric "$tmp/fabric-dmabuf.json" "$tmp/fabric-dmabuf" ', "dmabuf": true' "" \
	'{"protect": true}'
ib=(FABRICLAB_TRANSPORT=ib FABRICLAB_IBVERBS_LIB="$fakeverbs" FABRICLAB_FABRIC="$tmp/fabric.json"
	FABRICLAB_SYSFS_ROOT="$fixture")
rm -rf "$tmp/reports"
check_bench "ib-gdr" 2 all_reduce "the plugin registers it (GPUDirect RDMA), receives" "${ib[@]}"
got=$(hop_memory)
[ "$got" = "4 cuda True" ] || not_ok "ib-gdr: hops, memory, all GDR: $got, expected 4 cuda True"
# dma-buf: the NIC maps the GPU buffer's fd itself, so the host's view may stay unreadable.
rm -rf "$tmp/reports"
check_bench "ib-dmabuf" 2 all_reduce "GPUDirect RDMA) through dma-buf" "${ib[@]}" \
	FABRICLAB_FABRIC="$tmp/fabric-dmabuf.json"
got=$(hop_memory)
[ "$got" = "4 cuda+dmabuf True" ] ||
	not_ok "ib-dmabuf: hops, memory, all GDR: $got, expected 4 cuda+dmabuf True"

# sweep --mem cuda: bytes checked into poisoned GPU buffers through host copies (exit 3 if
# wrong; exit 1, a pair slower than the rest on 2 loaded cores, is not what is tested here).
sweep() { # name ranks expect-log env...
	local name=$1 ranks=$2 expect=$3
	shift 3
	env "$@" timeout 60 "$tool" sweep --ranks "$ranks" --mem cuda -b 64K -e 256K -f 4 -t 0.02 \
		--json >"$tmp/$name.out" 2>"$tmp/$name.err"
	local rc=$? pairs
	pairs=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(min(sum(1 for p in z["pairs"] if p["busbw_gbs"] > 0) for z in d["sizes"]),
      len(d["sizes"]), d["wrong_bytes"])' \
		"$tmp/$name.out" 2>/dev/null)
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		not_ok "$name: sweep exited $rc: $(grep -v INFO "$tmp/$name.err" | tail -3)"
	elif [ "$pairs" != "$((ranks * (ranks - 1))) 2 0" ]; then
		not_ok "$name: directions per size, sizes, wrong bytes: $pairs, expected" \
			"$((ranks * (ranks - 1))) 2 0"
	elif [ "$(grep -c "$expect" "$tmp/$name.err")" -ne "$ranks" ]; then
		not_ok "$name: not every rank said \"$expect\""
	else
		echo "ok - $name"
	fi
}
sweep sweep-sock 3 "$staged" FABRICLAB_FABRIC="$protected"
sweep sweep-ib-gdr 2 "the plugin registers it (GPUDirect RDMA), receives" "${ib[@]}"
none=$(gpus none '{"count": 0}')
FABRICLAB_FABRIC="$none" timeout 60 "$tool" sweep --ranks 2 --mem cuda -b 64K -e 64K -t 0.02 \
	>/dev/null 2>"$tmp/sweep-nogpu.err"
rc=$?
if [ "$rc" -ne 3 ] || ! grep -q "rank 0: FABRICLAB_SHIM_MEM=cuda (--mem cuda): no GPU visible" \
	"$tmp/sweep-nogpu.err"; then
	not_ok "sweep without a GPU: exit $rc, $(grep -v INFO "$tmp/sweep-nogpu.err" | head -2)"
else
	echo "ok - sweep without a GPU fails naming --mem cuda"
fi
"$tool" sweep --ranks 2 --mem gpu >/dev/null 2>"$tmp/sweep-badmem.err" && not_ok "sweep --mem gpu accepted"
grep -q -- '--mem "gpu": expected host or cuda' "$tmp/sweep-badmem.err" ||
	not_ok "sweep --mem gpu: $(cat "$tmp/sweep-badmem.err")"

# Errors that name their cause; host memory needs no CUDA at all.
expect_fail() { # name message env...
	local name=$1 msg=$2
	shift 2
	if bench "$name" 2 all_reduce "$@"; then
		not_ok "$name: bench succeeded"
	elif ! grep -q "$msg" "$tmp/$name.err"; then
		not_ok "$name: no \"$msg\" in: $(grep -v INFO "$tmp/$name.err" | tail -2)"
	else
		echo "ok - $name fails: $msg"
	fi
}
expect_fail no-runtime "no CUDA runtime loads (tried FABRICLAB_CUDART_LIB=/nonexistent/libcudart.so" \
	FABRICLAB_CUDART_LIB=/nonexistent/libcudart.so
expect_fail no-gpu "FABRICLAB_SHIM_MEM=cuda (--mem cuda): no GPU visible" FABRICLAB_FABRIC="$none"
expect_fail no-memory "cudaMalloc on GPU 0 failed: out of memory (2)" \
	FABRICLAB_FABRIC="$(gpus small '{"memory_bytes": 65536}')"
# A description the GPU refuses: no GPU, and the field named (as the emulated NIC does).
expect_fail refused 'fakecuda: FABRICLAB_FABRIC: .*: gpus: unknown field "cout"' \
	FABRICLAB_FABRIC="$(gpus refused '{"cout": 2}')"
grep -q "no GPU visible" "$tmp/refused.err" || not_ok "refused: a GPU was visible"
if FABRICLAB_CUDART_LIB=/nonexistent timeout 60 "$tool" bench --ranks 2 --mem host -b 8 -e 64K \
	-n 1 -w 0 >"$tmp/host.out" 2>&1; then
	echo "ok - host memory without a CUDA runtime"
else
	not_ok "host memory failed without CUDA: $(tail -2 "$tmp/host.out")"
fi
"$tool" bench --ranks 2 --mem gpu >/dev/null 2>"$tmp/badmem.err" &&
	not_ok "--mem gpu accepted"
grep -q -- '--mem "gpu": expected host or cuda' "$tmp/badmem.err" ||
	not_ok "--mem gpu: $(cat "$tmp/badmem.err")"

# The doctor: the runtime's GPUs, matched to the PCI tree, with the driver's GDR attribute. Two
# GPUs on every node, at the bus ids given; node1's without GPUDirect unless the variable says.
two='"count": 2, "pci": ["0000:04:00.0", "0000:aa:00.0"]'
gdr_nodes="[{\"name\": \"node0\", \"nics\": []}, {\"name\": \"node1\", \"nics\": [],
	\"gpus\": {\"gdr\": false}}]"
describe_fabric "$tmp/gdr.json" "$tmp/gdr" "" "$gdr_nodes" "{$two, \"gdr\": true}"
describe_fabric "$tmp/nogdr.json" "$tmp/nogdr" "" "" "{$two, \"gdr\": false}"
doctor() { env FABRICLAB_SYSFS_ROOT="$fixture" "$@" "$tool" doctor 2>&1 | grep '^[A-Z]* *cuda'; }
out=$(doctor FABRICLAB_FABRIC="$tmp/gdr.json")
grep -q '^PASS  cuda      0000:04:00.0: GPU 0: the driver reports GPUDirect RDMA supported, dma-buf supported$' \
	<<<"$out" || not_ok "doctor GPU 0: $out"
grep -q '^PASS  cuda      0000:aa:00.0: GPU 1: .*not found under bus/pci/devices' <<<"$out" ||
	not_ok "doctor GPU 1 (absent from sysfs): $out"
out=$(doctor FABRICLAB_FABRIC="$tmp/nogdr.json")
[ "$(grep -c '^WARN  cuda .*GPUDirect RDMA NOT supported' <<<"$out")" -eq 2 ] ||
	not_ok "doctor without GPUDirect: $out"
out=$(doctor FABRICLAB_FABRIC="$tmp/gdr.json" FABRICLAB_FABRIC_NODE=node1)
[ "$(grep -c '^WARN  cuda .*GPUDirect RDMA NOT supported' <<<"$out")" -eq 2 ] ||
	not_ok "doctor on node1 (its own gdr: false over the description's): $out"
# The override: FABRICLAB_FAKECUDA_GDR=1 over a description without GPUDirect.
out=$(doctor FABRICLAB_FABRIC="$tmp/nogdr.json" FABRICLAB_FAKECUDA_GDR=1)
[ "$(grep -c '^PASS  cuda .*GPUDirect RDMA supported' <<<"$out")" -eq 2 ] ||
	not_ok "doctor with FABRICLAB_FAKECUDA_GDR=1 over gdr: false: $out"
out=$(doctor FABRICLAB_CUDART_LIB=/nonexistent)
grep -q '^INFO  cuda .*no CUDA runtime loads' <<<"$out" || not_ok "doctor without CUDA: $out"
[ "$failures" -eq 0 ] && echo "ok - doctor lists the runtime's GPUs"

echo "cuda_mem: $failures failure(s)"
[ "$failures" -eq 0 ]
