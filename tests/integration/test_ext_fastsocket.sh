#!/usr/bin/env bash
# An inner whose connection opens only once the peer accepted, as google
# fastsocket's does (tests/inner/flsock_gate.h cites where): connect returns at
# once, and the first test of a send blocks until the peer's accept answered.
# NCCL calls connect and accept of a rank in turn on one thread, so fabriclab's
# connect and accept must wait for nothing of the peer beyond what the inner
# itself does (ext moves its hidden hello inside the first isend/irecv).
# Checks: the inner alone and through ext at 2 and 4 ranks (#wrong 0, no hang,
# both ends of every hop named), and the shim's FABRICLAB_SHIM_TIMEOUT firing
# for a call that never returns, naming it (stuck connect, stuck test).
# Usage: test_ext_fastsocket.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
inner=$(cd "$build" && pwd)/inner/libnccl-net-flsock-waitaccept.so
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP \
	FABRICLAB_SHIM_NET_VERSION FABRICLAB_FAULT FABRICLAB_EXT_HELLO FABRICLAB_TRANSPORT \
	FLSOCK_GATE_STALL
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-fastsocket.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export FABRICLAB_REPORT_DIR=$tmp/reports
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_check_lib.sh"

[ -x "$tool" ] && [ -f "$inner" ] || { echo "not ok - $tool or $inner missing (run make)"; exit 1; }
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

bench() { # name ranks [env...] -> $tmp/name.{out,err}, status in $rc
	local name=$1 ranks=$2
	shift 2
	env FABRICLAB_SHIM_TIMEOUT=20 "$@" timeout 90 "$tool" bench --ranks "$ranks" \
		-o all_reduce -b 1K -e 1M -f 32 -n 2 -w 1 >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
}

run() { # name ranks [env...]
	local name=$1 why
	bench "$@"
	if [ "$rc" -ne 0 ]; then
		not_ok "$name: exit status $rc$([ "$rc" -eq 124 ] && echo ' (hung)')"
		tail -n 4 "$tmp/$name.err" | sed 's/^/#   /'
	elif ! why=$(check_output "$tmp/$name.out" all_reduce 1K 1M 32 "$2"); then
		not_ok "$name: $why"
	else
		ok "$name"
	fi
}

run "the inner alone, 2 ranks" 2 NCCL_NET_PLUGIN="$inner"
run "through ext, 2 ranks" 2 FABRICLAB_TRANSPORT="ext:$inner"
run "through ext, 4 ranks" 4 FABRICLAB_TRANSPORT="ext:$inner" \
	FABRICLAB_REPORT_DIR="$tmp/reports4"

# The receiver still learns the sender from the hello, now moved after accept.
if python3 - "$tmp/reports4" <<'PY'
import glob, json, sys
named = 0
for f in glob.glob(sys.argv[1] + "/*.json"):
    for h in json.load(open(f))["hops"]:
        src = h["src_node"]
        named += h["view"] == "recv" and src[:4] == "node" and h["src_rank"] == int(src[4:])
sys.exit(0 if named == 4 else 1)
PY
then
	ok "4 ranks: every receive hop names its sender"
else
	not_ok "4 ranks: receive hops without their sender in $tmp/reports4"
fi

# A call that never returns: the rank ends after the timeout and names the call.
stuck() { # name stall expected-regex [env...]
	local name=$1 stall=$2 want=$3 start=$SECONDS
	shift 3
	env FABRICLAB_SHIM_TIMEOUT=3 FLSOCK_GATE_STALL="$stall" "$@" timeout 60 "$tool" bench \
		--ranks 2 -o all_reduce -b 1K -e 1K -n 1 -w 0 >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
		not_ok "$name: exit status $rc, expected a failure named by the timeout"
	elif ! grep -Eq "$want" "$tmp/$name.err"; then
		not_ok "$name: no line matching /$want/:"
		tail -n 4 "$tmp/$name.err" | sed 's/^/#   /'
	elif [ $((SECONDS - start)) -gt 30 ]; then
		not_ok "$name: took $((SECONDS - start)) s for a 3 s timeout"
	else
		ok "$name"
	fi
}
stuck "timeout names a connect that never returns" connect \
	'rank [01]: connect\(\) to rank [01] has not returned after 3 s: stuck inside the plugin' \
	FABRICLAB_TRANSPORT="ext:$inner"
stuck "timeout names a test that never returns" accept \
	'rank [01]: test\(\) of a send to rank [01] has not returned after 3 s' \
	NCCL_NET_PLUGIN="$inner"

[ "$failures" -eq 0 ] || { echo "# $failures failed (outputs in $tmp kept)"; trap - EXIT; exit 1; }
