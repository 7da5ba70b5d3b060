#!/usr/bin/env bash
# all_reduce and sendrecv through fabriclab wrapping another NCCL net plugin
# (FABRICLAB_TRANSPORT=ext:...): the project's socket transport built as
# standalone plugins that export one ABI version each (v6, v8, v10, v11, v12),
# at 2, 4 and 8 local ranks, sizes 1 B, 2 KiB and 4 MiB, and 64 MiB at 2 ranks
# through the oldest and the newest. Every run must print exactly the expected
# size lines with #wrong = 0. (Sizes are sparse to keep the 2-core suite short:
# the inner plugins are the socket transport test_shim_collectives covers densely.)
# Usage: test_ext_collectives.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
inner=$(cd "$build" && pwd)/inner
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP \
	FABRICLAB_SHIM_NET_VERSION FABRICLAB_FAULT
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-ext-coll.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export FABRICLAB_REPORT_DIR=$tmp/reports
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_check_lib.sh"

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

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
	elif ! grep -q 'net fabriclab' "$out"; then
		echo "not ok - $name: the shim did not load fabriclab"
		failures=$((failures + 1))
	elif ! why=$(check_output "$out" "$op" "$min" "$max" "$factor" "$ranks"); then
		echo "not ok - $name: $why"
		failures=$((failures + 1))
	else
		echo "ok - $name ($(awk '!/^#/ && NF' "$out" | wc -l) sizes, #wrong 0)"
	fi
}

big=64M
[ -n "${FABRICLAB_SANITIZER:-}" ] && big=8M
for v in 6 8 10 11 12; do
	for ranks in 2 4 8; do
		for op in all_reduce sendrecv; do
			run "ext-v$v-$op-$ranks-ranks" "$ranks" "$op" 1 4M 2048 1 \
				FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-v$v.so"
		done
	done
done
for v in 6 12; do
	for op in all_reduce sendrecv; do
		run "ext-v$v-$op-2-ranks-$big" 2 "$op" "$big" "$big" 2 1 \
			FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-v$v.so"
	done
done
# Odd sizes and a deep pipeline through the oldest inner ABI (int sizes).
run "ext-v6-sendrecv-3-ranks-1000003B" 3 sendrecv 1000003 1000003 2 2 \
	FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-v6.so"
run "ext-v6-all_reduce-4-ranks-4K-steps" 4 all_reduce 1M 1M 2 2 FABRICLAB_SHIM_STEP=4K \
	FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-v6.so"

[ "$failures" -eq 0 ] || { echo "# $failures failed (outputs in $tmp kept)"; trap - EXIT; exit 1; }
exit 0
