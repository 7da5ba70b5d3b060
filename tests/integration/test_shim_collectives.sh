#!/usr/bin/env bash
# all_reduce and sendrecv through the shim and the plugin over loopback, for
# 2, 4 and 8 local ranks from 1 byte to 64 MiB: each run must exit 0, print
# exactly the expected size lines, and every line must have #wrong = 0.
# Usage: test_shim_collectives.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-collectives.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The plugin writes a report per process at exit; keep them out of the source tree.
export FABRICLAB_REPORT_DIR=$tmp/reports

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_check_lib.sh"

run() { # name ranks op min max factor iters [env...]
	local name=$1 ranks=$2 op=$3 min=$4 max=$5 factor=$6 iters=$7 rc why
	shift 7
	local out="$tmp/$name.out" err="$tmp/$name.err"
	env "$@" timeout 60 "$tool" bench --ranks "$ranks" -o "$op" -b "$min" -e "$max" \
		-f "$factor" -n "$iters" -w 1 >"$out" 2>"$err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "not ok - $name: exit status $rc"
		sed 's/^/#   /' "$err" | tail -n 8
		failures=$((failures + 1))
	elif ! why=$(check_output "$out" "$op" "$min" "$max" "$factor" "$ranks"); then
		echo "not ok - $name: $why"
		failures=$((failures + 1))
	else
		echo "ok - $name ($(awk '!/^#/ && NF' "$out" | wc -l) sizes, #wrong 0)"
	fi
}

# The checker must reject what it is meant to reject.
self_test() {
	printf '#\n# Avg bus bandwidth : 0\n' >"$tmp/empty.out"
	printf '  4 1 float sum 1.0 0.1 0.1 0\n  16 4 float sum 1.0 0.1 0.1 3\n' >"$tmp/wrong.out"
	printf '# Avg bus bandwidth : 0.1\n' >>"$tmp/wrong.out"
	printf '  4 1 float sum 1.0 0.1 0.1 0\n# Avg bus bandwidth : 0.1\n' >"$tmp/short.out"
	printf '  4 1 float sum 1.0 0.004 0.004 0\n  16 4 float sum 1.0 0.016 0.016 0\n' >"$tmp/bus.out"
	printf '# Avg bus bandwidth : 0.1\n' >>"$tmp/bus.out"
	if check_output "$tmp/empty.out" all_reduce 4 16 4 2 >/dev/null ||
	   check_output "$tmp/wrong.out" all_reduce 4 16 4 2 >/dev/null ||
	   check_output "$tmp/short.out" all_reduce 4 16 4 2 >/dev/null ||
	   check_output "$tmp/bus.out" all_reduce 4 16 4 4 >/dev/null ||
	   ! check_output "$tmp/bus.out" all_reduce 4 16 4 2 >/dev/null; then
		echo "not ok - output checker accepts empty, wrong, missing or mis-scaled lines"
		failures=$((failures + 1))
	else
		echo "ok - output checker rejects empty, wrong, missing and mis-scaled lines"
	fi
	# Times of a few hundredths of a us: "0.02" was anything from 0.015 to 0.025 us, so 8 bytes
	# ran at 0.32-0.53 GB/s; "0.00" bounds the rate from below only.
	printf '  8 2 float sum 0.02 0.400 0.400 0\n  32 8 float sum 0.00 9.000 9.000 0\n' >"$tmp/short_t.out"
	printf '  8 2 float sum 0.02 0.600 0.600 0\n' >"$tmp/fast_t.out"
	printf '  8 2 float sum 0.02 0.300 0.300 0\n' >"$tmp/slow_t.out"
	if ! check_rates "$tmp/short_t.out" all_reduce 2 >/dev/null ||
	   check_rates "$tmp/fast_t.out" all_reduce 2 >/dev/null ||
	   check_rates "$tmp/slow_t.out" all_reduce 2 >/dev/null; then
		echo "not ok - output checker's bound for times of hundredths of a us"
		failures=$((failures + 1))
	else
		echo "ok - output checker bounds rates by the printed time's precision (0.02 us, 0.00 us)"
	fi
}

# Sanitizer builds check memory and races, not sizes: keep their runs short.
max=64M
[ -n "${FABRICLAB_SANITIZER:-}" ] && max=8M

self_test
for ranks in 2 4 8; do
	for op in all_reduce sendrecv; do
		run "$op-$ranks-ranks-1B-$max" "$ranks" "$op" 1 "$max" 4 2
	done
done
# Helper-thread data streams (opt-in: FABRICLAB_SOCKET_NSTREAMS), split and unsplit messages.
for streams in 1 2 5; do
	run "all_reduce-4-ranks-$streams-streams" 4 all_reduce 1 "$max" 8 2 FABRICLAB_SOCKET_NSTREAMS=$streams
done
run "sendrecv-8-ranks-2-streams" 8 sendrecv 1 "$max" 8 2 FABRICLAB_SOCKET_NSTREAMS=2
# Sizes that are not powers of two: uneven chunks, partial slices, odd byte counts.
run "sendrecv-2-ranks-1B-3B" 2 sendrecv 1 3 2 3
run "sendrecv-3-ranks-3B" 3 sendrecv 3 3 2 3
run "all_reduce-3-ranks-1000004B" 3 all_reduce 1000004 1000004 2 2
run "sendrecv-3-ranks-1000003B" 3 sendrecv 1000003 1000003 2 2
# Small steps: 64 slices per chunk, so the 8-deep pipelines wrap many times.
run "all_reduce-4-ranks-4K-steps" 4 all_reduce 1M 1M 2 3 FABRICLAB_SHIM_STEP=4K
run "sendrecv-4-ranks-4K-steps" 4 sendrecv 1M 1M 2 3 FABRICLAB_SHIM_STEP=4K
run "all_reduce-1-rank" 1 all_reduce 8 1K 4 2
# Channels (FABRICLAB_SHIM_CHANNELS): a ring per channel on its share of the buffer, over
# connections of its own, as NCCL's channels; shares uneven, some empty at the smallest sizes.
run "all_reduce-4-ranks-2-channels" 4 all_reduce 1 "$max" 8 2 FABRICLAB_SHIM_CHANNELS=2
run "all_reduce-3-ranks-3-channels-1000004B" 3 all_reduce 1000004 1000004 2 2 \
	FABRICLAB_SHIM_CHANNELS=3
run "all_reduce-2-ranks-8-channels-4K-steps" 2 all_reduce 1 1M 4 2 FABRICLAB_SHIM_CHANNELS=8 \
	FABRICLAB_SHIM_STEP=4K
run "sendrecv-4-ranks-2-channels" 4 sendrecv 1 1M 8 2 FABRICLAB_SHIM_CHANNELS=2
# ... and each channel is a connection of its own: the hop of 2 channels has 2.
rm -rf "$tmp/reports"
run "all_reduce-2-ranks-2-channels-report" 2 all_reduce 64K 64K 2 2 FABRICLAB_SHIM_CHANNELS=2
conns=$(python3 -c 'import json,sys
print(" ".join(sorted({str(h.get("connections")) for p in sys.argv[1:] for h in json.load(open(p))["hops"]})))' \
	"$tmp"/reports/*.json 2>&1)
[ "$conns" = "2" ] && echo "ok - 2 channels: every hop has 2 connections" ||
	{ echo "not ok - 2 channels: hops' connections \"$conns\", wanted 2"; failures=$((failures + 1)); }
# Idle ranks sleep between polls (FABRICLAB_SHIM_IDLE_US, as the lab runs them).
run "all_reduce-8-ranks-idle-sleep" 8 all_reduce 1 8M 16 2 FABRICLAB_SHIM_IDLE_US=50

[ "$failures" -eq 0 ] || { echo "# $failures failed (outputs in $tmp kept)"; trap - EXIT; exit 1; }
exit 0
