#!/usr/bin/env bash
# Real NCCL on one GPU, in one call under a wall-clock budget: N ranks on the same GPU, each its
# own NCCL_HOSTID, so that NCCL takes them for N hosts and every connection goes over NET.
# What it runs, for each rank count (default 2 then 4), most important first:
#   fabriclab     NCCL_NET=fabriclab: fabriclab as the net plugin (its socket transport); NCCL
#                 must say "via NET/fabriclab"; its profiler role names the hops (NCCL >= 2.28.3)
#   socket        NCCL's own Socket transport, the baseline (busbw ratio fabriclab / socket)
#   socket-simple NCCL's Socket, Ring + Simple, all_reduce only: the profiler's baseline
#   profiler      the same with NCCL_PROFILER_PLUGIN=fabriclab: its merged report must name every
#                 ring hop with the bytes the all-reduce moved, no verdict; busbw ratio (goal 0.99)
#   ext           fabriclab wrapping another net plugin (FABRICLAB_TRANSPORT=ext:...): libnccl
#                 itself when it exports ncclNetPlugin_vN (2.28.9 does not: only the nccl* API),
#                 else EXT_INNER (e.g. NCCL's Socket built outside, docs/benchmarks.md), else the
#                 in-repo socket plugin build/inner/libnccl-net-flsock-v12.so
# and once: fabriclab bench and sweep with --mem cuda (GPU buffers through the shim) next to
# --mem host, and PyTorch's NCCL through fabriclab when torch imports (optional).
# The NCCL runs use $BUILD/gpu/nccl_driver (tests/gpu/nccl_driver.c, built with gcc against the
# toolkit's nccl.h, libnccl and libcudart): all_reduce and sendrecv, 1 MiB - 256 MiB, every
# element checked. tests/gpu/README.md says how to run this on a lent device and what it costs.
# First it probes the machine (GPU, driver, CUDA, NCCL, cores, torch) into $OUT/probe.txt and
# prints it; without a GPU it exits 77 with one line saying so. At the end a summary table,
# also in $OUT/summary.txt (tab-separated in $OUT/summary.tsv). Exit 0 when every step that ran
# passed, 1 otherwise; steps the budget left out are listed as skipped.
# Usage: [OUT=dir] [BUDGET_S=480] [BUILD=build] [NO_BUILD=1] [NCCL_LIB=libnccl.so.2] [EXT_INNER=plugin.so]
#        [GPU_MIN=1M GPU_MAX=256M GPU_STEP=4 ITERS=10 WARMUP=2] bash tests/gpu/run.sh [--dry-run] [RANKS...]
# --dry-run: probe, build and print every step's command without running it (works with no GPU).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
root=$(pwd)
started=$SECONDS

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

dry=0 ranks_list=()
for arg in "$@"; do
	case $arg in
	--dry-run) dry=1 ;;
	-h | --help) usage; exit 0 ;;
	[1-9] | [1-9][0-9]) ranks_list+=("$arg") ;;
	*) echo "run.sh: unknown argument '$arg' (expected --dry-run, --help or rank counts 1-99 such as 2 4)" >&2; exit 2 ;;
	esac
done
[ ${#ranks_list[@]} -gt 0 ] || ranks_list=(2 4)
budget=${BUDGET_S:-480}
case $budget in
'' | *[!0-9]*) echo "run.sh: BUDGET_S: expected whole seconds (60-3600), got '$budget'" >&2; exit 2 ;;
esac
[ "$budget" -ge 60 ] && [ "$budget" -le 3600 ] ||
	{ echo "run.sh: BUDGET_S: expected whole seconds (60-3600), got '$budget'" >&2; exit 2; }
build=${BUILD:-build}
gpu_min=${GPU_MIN:-1M} gpu_max=${GPU_MAX:-256M} gpu_step=${GPU_STEP:-4}
iters=${ITERS:-10} warmup=${WARMUP:-2}
. tests/gpu/run_lib.sh

# ---- the machine ----
if ! gpu_line=$(gpu_present); then
	if [ "$dry" -eq 0 ]; then
		[ -z "${OUT:-}" ] || { mkdir -p "$OUT" && probe >"$OUT/probe.txt" 2>&1; }
		echo "no GPU: $gpu_line (tests/gpu/run.sh needs an NVIDIA GPU; --dry-run shows what it would run)"
		exit 77
	fi
fi
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-gpu.XXXXXX")}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
echo "== probe (also in $out/probe.txt)"
probe | tee "$out/probe.txt"
[ "$dry" -eq 1 ] && echo "== dry run: $gpu_line; nothing below runs" | tee "$out/plan.txt"

# ---- build: the plugin and the driver first (gcc + the toolkit), the tool next (jansson,
# babeltrace2, microhttpd: the report and bench steps need it) ----
case $build in /*) babs=$build ;; *) babs=$root/$build ;; esac
driver=$babs/gpu/nccl_driver
so=$babs/libnccl-net-fabriclab.so
prof=$babs/libnccl-profiler-fabriclab.so
flsock=$babs/inner/libnccl-net-flsock-v12.so
tool=$babs/fabriclab
jobs=$(nproc 2>/dev/null || echo 2)
echo "== build ($build, -j$jobs; log in $out/build.log)"
toolkit=$(sh tests/gpu/find_toolkit.sh 2>&1) || toolkit_missing=$toolkit
build_part() { # what-for make-targets... (relative to the tree, as the Makefile names them)
	local what=$1
	shift
	timeout 300 make -s -j"$jobs" BUILD="$build" "$@" >>"$out/build.log" 2>&1 ||
		echo "build of $what failed: $(grep -m1 -iE 'error|no rule' "$out/build.log")"
}
: >"$out/build.log"
if [ "${NO_BUILD:-0}" = 1 ]; then
	# Carried in prebuilt (no compiler on the device): the profiler's name may not survive as a link.
	echo "NO_BUILD=1: using $babs as it is" | tee -a "$out/build.log"
	[ -e "$prof" ] || ln -sf "$(basename "$so")" "$prof"
else
	build_part "the plugin" "$build/libnccl-net-fabriclab.so" "$build/libnccl-profiler-fabriclab.so" \
		"$build/inner/libnccl-net-flsock-v12.so"
	[ -n "${toolkit_missing:-}" ] || build_part "the driver" "$build/gpu/nccl_driver"
	build_part "the tool (report, bench and sweep steps)" "$build/fabriclab"
fi
driver_note=
if [ ! -x "$driver" ]; then
	driver_note=${toolkit_missing:-"$driver was not built"}
	echo "no driver: $driver_note"
	nccl_code=0
else
	"$driver" --version | tee -a "$out/probe.txt"
	nccl_code=$("$driver" --version | sed -n 's/.*library \([0-9]*\).*/\1/p')
fi
driver_args=(-b "$gpu_min" -e "$gpu_max" -f "$gpu_step" -n "$iters" -w "$warmup")
[ ! -x "$driver" ] || { "$driver" --dry-run "${driver_args[@]}" >"$out/driver-plan.txt" 2>&1 ||
	{ echo "the driver refuses its arguments: $(cat "$out/driver-plan.txt")"; exit 2; }; }

# ---- the steps ----
# The inner plugin ext wraps: libnccl itself if it exports a net plugin table, else EXT_INNER,
# else the in-repo socket plugin.
libnccl=${NCCL_LIB:-$(echo "$toolkit" | awk 'NF == 4 { print $2 }')}
if [ -n "$libnccl" ] && nm -D --defined-only "$libnccl" 2>/dev/null | grep -q ' ncclNetPlugin_v'; then
	inner=$libnccl inner_why="libnccl exports ncclNetPlugin_vN"
elif [ -n "${EXT_INNER:-}" ]; then
	inner=$EXT_INNER inner_why="EXT_INNER; libnccl exports no ncclNetPlugin_vN"
else
	inner=$flsock inner_why="${libnccl:-libnccl} exports no ncclNetPlugin_vN (NCCL's Socket is built in, not a plugin): the in-repo socket plugin stands in"
fi
[ -z "${NCCL_LIB:-}" ] || export LD_PRELOAD="$NCCL_LIB${LD_PRELOAD:+:$LD_PRELOAD}"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
torch_ok=0
[ "$dry" -eq 1 ] || ! grep -q '^torch: .* cuda True' "$out/probe.txt" || torch_ok=1

for n in "${ranks_list[@]}"; do
	nccl_step "fabriclab-$n" "$n" all fabriclab NCCL_NET=fabriclab NCCL_NET_PLUGIN="$so" \
		NCCL_NET_PLUGIN_REF_COUNT=1 FABRICLAB_TRANSPORT=socket
	nccl_step "socket-$n" "$n" all Socket NCCL_NET=Socket NCCL_NET_PLUGIN=none
	ratio_note "fabriclab-$n" "socket-$n" all_reduce "fabriclab / NCCL Socket"
	ratio_note "fabriclab-$n" "socket-$n" sendrecv "fabriclab / NCCL Socket, sendrecv"
	nccl_step "socket-simple-$n" "$n" all_reduce Socket NCCL_NET=Socket NCCL_NET_PLUGIN=none \
		NCCL_ALGO=Ring NCCL_PROTO=Simple
	nccl_step "profiler-$n" "$n" all_reduce Socket NCCL_NET=Socket NCCL_NET_PLUGIN=none \
		NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_PROFILER_PLUGIN="$prof" FABRICLAB_REPORT=full \
		NCCL_DEBUG_SUBSYS=INIT,NET,PROFILE
	ratio_note "profiler-$n" "socket-simple-$n" all_reduce "profiled / plain (goal >= 0.99)"
	nccl_step "ext-$n" "$n" all fabriclab NCCL_NET=fabriclab NCCL_NET_PLUGIN="$so" \
		NCCL_NET_PLUGIN_REF_COUNT=1 FABRICLAB_TRANSPORT="ext:$inner"
	note "ext-$n" "inner: $inner_why"
	ratio_note "ext-$n" "socket-$n" all_reduce "ext / NCCL Socket"
	if [ "$n" = "${ranks_list[0]}" ]; then
		for mem in cuda host; do
			tool_step "bench-$mem" bench --ranks 2 --mem "$mem" -b 1M -e 64M -f 4 -n 10 -w 2
		done
		tool_step sweep-cuda sweep --ranks 2 --mem cuda -b 1M -e 64M -f 8 -t 0.5
	fi
done
if [ "$torch_ok" -eq 1 ] || [ "$dry" -eq 1 ]; then
	torch_step torch-fabriclab-2 2 NCCL_NET=fabriclab NCCL_NET_PLUGIN="$so" \
		NCCL_NET_PLUGIN_REF_COUNT=1 FABRICLAB_TRANSPORT=socket
else
	record torch-fabriclab-2 skipped 0 "" "" "torch does not import with CUDA here"
fi
summary
