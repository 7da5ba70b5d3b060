#!/usr/bin/env bash
# make bench: every benchmark, each printing its ratio measured side by side in one run.
# FABRICLAB_BENCH_PEERS="a.so b.so" adds other net plugins (e.g. NCCL's socket transport
# built outside this repository) to the socket and all_reduce comparisons.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
export FABRICLAB_SOCKET_IFNAME=${FABRICLAB_SOCKET_IFNAME:-lo} NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
export FABRICLAB_REPORT=off
plugins=("$(pwd)/$build/libnccl-net-fabriclab.so")
for p in ${FABRICLAB_BENCH_PEERS:-}; do plugins+=("$(realpath "$p")"); done

echo "== wrapper cost (null transport, isend+test pairs)"
"$build/bench/wrap_cost"
echo
echo "== profiler role: ns per callback through ncclProfiler_v5 vs a no-op table"
"$build/bench/profiler_cost"
echo "   the same with 1 MiB written between an op's phases (the callbacks' lines out of L1 and L2)"
"$build/bench/profiler_cost" 5000 1024
bench/profiler_count.sh "$build"
echo "== profiler role four ways: no profiler, fabriclab alone, fabriclab chaining a minimal profiler"
echo "   (FABRICLAB_PROFILER_NEXT), that profiler alone; the player's events through ncclProfiler_v6"
"$build/bench/profiler_chain_cost" "$(pwd)/$build/libnccl-profiler-fabriclab.so" \
	"$(pwd)/$build/profnext/libnccl-profiler-count.so" 15
bench/profiler_chain_count.sh "$build"
echo
echo "== the report thread's reading of a hop's interval rings, its requests over 1, 2 and 4 channels"
bench/drain_count.sh "$build"
echo
echo "== socket transport: $(for so in "${plugins[@]}"; do basename "$so"; done | paste -sd' ') and raw TCP"
echo "   (polling, same message sizes), loopback, interleaved rounds; CPU = task-clock of both processes"
# Against other plugins fabriclab runs as a job gets it: reports on, so their thread's periodic
# drain of the interval rings (which costs most at the smallest messages) is in the figures.
reports=$(mktemp -d)
as_deployed() { FABRICLAB_REPORT=full FABRICLAB_REPORT_DIR="$reports" "$@"; }
bench/iperf3_loopback.sh 64M 5
as_deployed "$build/bench/socket_vs_raw" "${plugins[0]}" 64M 15 "${plugins[@]:1}"
bench/iperf3_loopback.sh 64M 5
echo
echo "== all_reduce, 4 local ranks, through $(for so in "${plugins[@]}"; do basename "$so"; done | paste -sd' '), interleaved"
as_deployed bench/allreduce_vs.sh "$build" 9 "${plugins[@]}"
echo "== the same at 8 B - 32 KiB, 3000 iterations a round (shorter rounds are scheduling noise);"
echo "   fabriclab(ext:peer) is each peer's transport under fabriclab's counting"
wrapped_peers=()
for p in "${plugins[@]:1}"; do wrapped_peers+=("ext:$p"); done
SIZES="8 32K 8" ITERS=3000 as_deployed bench/allreduce_vs.sh "$build" 9 "${plugins[@]}" \
	"${wrapped_peers[@]}"
peer=${FABRICLAB_BENCH_PEERS:-}
peer=${peer%% *}
if [ -z "$peer" ]; then
	peer=$(pwd)/$build/inner/libnccl-net-flsock-v12.so
	echo "== FABRICLAB_BENCH_PEERS unset: the in-repo socket plugin $(basename "$peer") stands in for"
	echo "   NCCL's Socket transport as the peer below (see docs/benchmarks.md for building NCCL's)"
fi
peer=$(realpath "$peer")
for ranks in 2 4; do
	echo "== fabriclab over the peer (ext:) against the peer loaded directly: all_reduce, $ranks ranks,"
	echo "   15 interleaved rounds a size, each 0.2-1 s long (shorter ones measure the scheduler of"
	echo "   two shared cores); speed goal >= $([ "$ranks" = 2 ] && echo 0.99 || echo 0.98), judged on the"
	echo "   95% CI of the median; every rank polls, so CPU per request is the wall-clock gap times"
	echo "   the polling threads (the floor below gives fabriclab's work per completion in ns)"
	CPU=1 RANKS=$ranks SIZE_LIST="8 512 64K 2M 64M" ITERS=20000 ITERS_64K=3000 ITERS_2M=300 \
		ITERS_64M=10 WARMUP=2 as_deployed bench/allreduce_vs.sh "$build" 15 "${plugins[0]}" \
		"$peer" "ext:$peer"
done
fwd=$(pwd)/$build/inner/libnccl-net-forward
# the forwarder of the peer's version (grep reads all of nm's output: no SIGPIPE under pipefail)
fwd_v=11
nm -D --defined-only "$peer" | grep ' ncclNetPlugin_v12$' >/dev/null && fwd_v=12
echo "== the floor at 8 B, 2 ranks, 31 rounds: the thinnest layers over the peer (tests/inner/forward_net.c)"
echo "   against fabriclab's, each as speed against the peer with the 95% CI of its median:"
echo "   forward-call adds a call, forward-wrap a request object of its own (as any layer keeping"
echo "   state per request must), spin100 also ~100 ns of work per completion: on that scale,"
echo "   what fabriclab does per completion on the critical path beyond forward-wrap, in ns"
FABRICLAB_FORWARD_INNER=$peer REF=1 SCALE="forward-wrap-v$fwd_v:forward-spin100-v$fwd_v:100" \
	RANKS=2 SIZE_LIST=8 ITERS=20000 WARMUP=50 as_deployed \
	bench/allreduce_vs.sh "$build" 31 "$peer" "$fwd-call-v$fwd_v.so" "$fwd-wrap-v$fwd_v.so" \
	"$fwd-spin100-v$fwd_v.so" "$(pwd)/$build/nocount/libnccl-net-fabriclab.so@ext:$peer" \
	"${plugins[0]}@ext:$peer" | grep -E '^size|/ .* speed: | per completion beyond '
rm -rf "$reports"
echo
echo "== instructions per request, all in (wrap + counting, report thread, ext), callgrind"
echo "   (independent of the machine's load); before/after: the nocount build has counting compiled out"
bench/count_cost.sh "$build" "fabriclab=${plugins[0]}" "nocount=$(pwd)/$build/nocount/libnccl-net-fabriclab.so" \
	"fabriclab(ext:peer)=${plugins[0]}@ext:$peer" "peer=$peer"
echo
echo "== slow loris: connection setup alone vs with 1000 strangers held on the listen port (3 runs)"
for run in 1 2 3; do
	LORIS_HOLD_S=0 "$build/tests/test_slow_loris" 2>&1 | grep 'setup .* alone'
done
echo
echo "== fabriclab report: merging 1024 nodes x 8 devices of synthetic reports"
"$build/bench/report_merge"
echo "== the tools at fleet scale (generated inputs; goals on process CPU time)"
fleet=$(mktemp -d)
# 16384 nodes x 8 NICs = 131072 reports, kept in $fleet: read, joined and judged in-process
"$build/bench/report_scale" fleet 16384 "$fleet" # < 10 s, < 1 GiB
# the same through `fabriclab report` in text, --json, --prom and --svg, side by side: wall
# clock, CPU, peak RSS of each process (issue 48: < 10 s and < 1 GiB each)
"$build/bench/report_scale" formats "$build/fabriclab" 16384 "$fleet" ||
	echo "   a format is over its goal (above)"
rm -rf "$fleet"
# the fleet again, each report with its node's 8 RoCE ports (a congestion counter rising on
# every one, one node's PFC off): ports looked up by name, < 10 s and < 1 GiB
"$build/bench/report_scale" ports 16384
"$build/bench/report_scale" hops     # one report of 10^6 distinct hops: < 30 s
"$build/bench/report_scale" hop-formats "$build/fabriclab" 1000000 || # the same in each format
	echo "   a format is over its goal (above)"
"$build/bench/report_scale" repeat   # 500000 identical hops: refused as repeated, < 30 s
"$build/bench/nccllog_scale"         # nccl-log, 10^6 lines of distinct ranks: < 10 s
echo
echo "== counting on vs compiled out: all_reduce, 4 ranks, 64 MiB in 512 KiB steps, alternating"
busbw() { NCCL_NET_PLUGIN="$1" "$build/fabriclab" bench --ranks 4 -b 64M -e 64M -n 10 -w 2 |
	awk '/Avg bus bandwidth/ { print $NF }'; }
on=() off=()
for round in 1 2 3 4 5; do
	on+=("$(busbw "$(pwd)/$build/libnccl-net-fabriclab.so")")
	off+=("$(busbw "$(pwd)/$build/nocount/libnccl-net-fabriclab.so")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m_on=$(median "${on[@]}") m_off=$(median "${off[@]}")
echo "busbw counting on ${on[*]} GB/s; compiled out ${off[*]} GB/s"
awk -v a="$m_on" -v b="$m_off" 'BEGIN { printf "median on %.3f / off %.3f = %.4f (goal >= 0.999)\n", a, b, a / b }'
echo
echo "== fault injection: throttle accuracy, 10% to 90% of an 800 Mbit/s link (median of 3)"
"$build/bench/fault_rate" 800mbit 0.5
echo
echo "== FABRICLAB_FAULT unset vs fault hooks compiled out: all_reduce, 4 ranks, 64 MiB, alternating"
unset FABRICLAB_FAULT FABRICLAB_LINK_RATE
hooks=() nohooks=()
for round in 1 2 3 4 5; do
	hooks+=("$(busbw "$(pwd)/$build/libnccl-net-fabriclab.so")")
	nohooks+=("$(busbw "$(pwd)/$build/nofault/libnccl-net-fabriclab.so")")
done
m_on=$(median "${hooks[@]}") m_off=$(median "${nohooks[@]}")
echo "busbw hooks in, unset ${hooks[*]} GB/s; compiled out ${nohooks[*]} GB/s"
awk -v a="$m_on" -v b="$m_off" 'BEGIN { printf "median unset %.3f / compiled out %.3f = %.4f (goal >= 0.999)\n", a, b, a / b }'
echo
echo "== ext transport cost (a null NCCL net plugin underneath, isend+test pairs)"
"$build/bench/ext_cost" "$(pwd)/$build/inner/libnccl-net-null.so"
echo "   the same with 1 MiB written after each call (code and data out of L1 and L2)"
"$build/bench/ext_cost" "$(pwd)/$build/inner/libnccl-net-null.so" 3000 1024
echo
echo "== fabriclab(ext:flsock-v12) vs flsock-v12 loaded directly: all_reduce, 4 ranks, 64 MiB, alternating"
inner=$(pwd)/$build/inner/libnccl-net-flsock-v12.so
direct=() wrapped=()
for round in 1 2 3 4 5; do
	direct+=("$(busbw "$inner")")
	wrapped+=("$(FABRICLAB_TRANSPORT="ext:$inner" busbw "$(pwd)/$build/libnccl-net-fabriclab.so")")
done
m_on=$(median "${wrapped[@]}") m_off=$(median "${direct[@]}")
echo "busbw through fabriclab ${wrapped[*]} GB/s; inner directly ${direct[*]} GB/s"
awk -v a="$m_on" -v b="$m_off" 'BEGIN { printf "median wrapped %.3f / direct %.3f = %.4f (goal >= 0.99)\n", a, b, a / b }'
echo
echo "== fault injection over ext: throttle accuracy, 10% to 90% of an 800 Mbit/s link (median of 3)"
FABRICLAB_TRANSPORT="ext:$inner" "$build/bench/fault_rate" 800mbit 0.5
echo
bench/trace_bench.sh "$build" # LTTng: session vs no session vs compiled out, ns per event
echo
echo "== ib transport vs raw verbs on the fake: ib_write_bw -b vs fabriclab sendrecv, 2 processes"
bench/ib_vs_perftest.sh "$build"
