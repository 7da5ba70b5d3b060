#!/usr/bin/env bash
# The lab's faults over the ext transport (`fabriclab lab --transport ext:...`, the socket
# transport built as a standalone plugin underneath), diagnosed as with the built-in transports:
# halve-cable -> `device` naming the target's device.
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

common=(--link-rate 200mbit --grad 4M --steps 3 --compute 5
	--transport "ext:$inner/libnccl-net-flsock-v12.so")
# TSan slows every rank some 10x: the short run then measures the sanitizer, not the throttle.
# There (as in test_ib_bench) a wrong verdict is a skip that says what it was, never a pass.
tsan_skip() {
	[ "${FABRICLAB_SANITIZER:-}" = tsan ] || return 0
	echo "skipped: under TSan the verdict was: $(verdict_of "$tmp/halve.json" 2>&1)"
	exit 77
}
lab halve -n 4 "${common[@]}" --target node2 halve-cable &&
	grep -q "transport: FABRICLAB_TRANSPORT=ext:" "$tmp/halve.out" &&
	{ expect_verdict halve "halve-cable on node2 over ext: its device" \
		"^kind=device node=node2 dev=lo " || tsan_skip; }
if "$tool" lab --transport bogus -n 2 >/dev/null 2>"$tmp/bogus.err" ||
	! grep -q -- '--transport "bogus": expected socket, ib, auto or ext:<plugin>' "$tmp/bogus.err"; then
	not_ok "lab --transport bogus is refused with the accepted forms"
else
	ok "lab --transport bogus is refused with the accepted forms"
fi
finish
