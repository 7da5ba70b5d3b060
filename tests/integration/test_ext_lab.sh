#!/usr/bin/env bash
# The lab's faults over the ext transport (`fabriclab lab --transport ext:...`, the socket
# transport built as a standalone plugin underneath), diagnosed as with the built-in transports:
# halve-cable -> `device` naming the target's device; slow-node -> `node` naming the target
# (the straggler), from the merge's estimate of each hop's wire time and wait out of both
# ends' posted -> done times (docs/report-format.md, "Hops over ext").
# The inner gets small socket buffers (FABRICLAB_SOCKET_BUF), so that a receiver held back by
# the throttle holds its sender back as a receiver-driven inner (IB) does by itself; with the
# kernel's default buffers a short run's sends would all fit in them.
# Usage: test_ext_lab.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
[[ $tool = /* ]] || tool=$PWD/$tool
inner=$(cd "$build" && pwd)/inner
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-ext-lab.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_FAULT FABRICLAB_NODE_NAME FABRICLAB_TRANSPORT RANK WORLD_SIZE MASTER_ADDR \
	MASTER_PORT
export FABRICLAB_SOCKET_BUF=64K
. "$here/lab_lib.sh"

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

common=(--link-rate 200mbit --grad 4M --steps 3
	--transport "ext:$inner/libnccl-net-flsock-v12.so")
# TSan slows every rank some 10x: the short run then measures the sanitizer, not the throttle.
# There (as in test_ib_bench) a wrong verdict is a skip that says what it was, never a pass;
# the other checks still run, and a failure among them wins (lab_lib.sh's finish).
tsan_skip() { # [run name]
	[ "${FABRICLAB_SANITIZER:-}" = tsan ] || return 0
	skip_check "under TSan the ${1:-halve} verdict was: $(verdict_of "$tmp/${1:-halve}.json" 2>&1)"
}
lab halve -n 4 "${common[@]}" --compute 5 --target node2 halve-cable &&
	grep -q "transport: FABRICLAB_TRANSPORT=ext:" "$tmp/halve.out" &&
	{ expect_verdict halve "halve-cable on node2 over ext: its device" \
		"^kind=device node=node2 dev=lo " || tsan_skip; }
# A receiver-driven inner (tests/inner/flsock_cts.h: no send request until the receiver posted,
# as NCCL IB and IBext): the receiver's throttle shows in neither end's request times unless the
# sender paces to it too (plugin/fault/fault_conn.c apply_peer_rx); without that the verdict
# named the link out of node2 alone.
lab halve_cts -n 4 --link-rate 200mbit --grad 4M --steps 3 --compute 5 --target node2 \
	--transport "ext:$inner/libnccl-net-flsock-cts.so" halve-cable &&
	{ expect_verdict halve_cts "halve-cable on node2 over a receiver-driven inner: its device" \
		"^kind=device node=node2 dev=lo " || tsan_skip halve_cts; }
# A straggler's GPU: 100 ms of compute for the others, 200 ms for it, and its sends held.
lab slow -n 4 "${common[@]}" --compute 100 --target node2 slow-node &&
	{ expect_named_or_likeliest slow "slow-node on node2 over ext: the straggler" \
		"^kind=node node=node2 " "node node2" ||
		{ echo "#   wait shares by receiving node: $(wait_shares "$tmp/slow.json")"; tsan_skip slow; }; }
if "$tool" lab --transport bogus -n 2 >/dev/null 2>"$tmp/bogus.err" ||
	! grep -q -- '--transport "bogus": expected socket, ib, auto or ext:<plugin>' "$tmp/bogus.err"; then
	not_ok "lab --transport bogus is refused with the accepted forms"
else
	ok "lab --transport bogus is refused with the accepted forms"
fi
finish
