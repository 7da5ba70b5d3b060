#!/usr/bin/env bash
# Net plugins loaded the way NCCL loads them, through FABRICLAB_TRANSPORT=ext:
# (fabriclab wrapping them) and through the shim (driving them directly, as NCCL
# would): each fixture of tests/inner/flsock_net.c behaves like a real plugin in
# one way, and its header comment cites the fact it reproduces.
#   fill       only name and init exported, the rest filled inside init (IBext)
#   fill-notest  ... and test left NULL: a clear error naming plugin, version, slot
#   config     init dereferences the config (NCCL's IB, aws-ofi-nccl): never NULL,
#              and the communicator's traffic class reaches it (v10: with connect)
#   lists      NCCL_NET_PLUGIN / ext: comma lists, the first to init with a device wins
#   errors     the inner's own error code, 0 devices, a FIFO or a directory refused
#   version    the shim binds the highest version an older NCCL knows
#   groups     FABRICLAB_SHIM_RECV_GROUP: one irecv takes several tagged messages, as NCCL
#              groups receives sharing a comm (2.28.9 src/transport/net.cc:1376-1410, 1483)
#   sizes      test leaves sizes unwritten (fastsocket): NCCL never reads a send's size
#              and zero-fills a receive's (2.28.9 src/transport/net.cc:1336-1339, 1505-1508)
# Usage: test_ext_shim_load.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
inner=$(cd "$build" && pwd)/inner
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP \
	FABRICLAB_SHIM_NET_VERSION FABRICLAB_SHIM_NET_MAX_VERSION FABRICLAB_SHIM_TRAFFIC_CLASS \
	FABRICLAB_FAULT FABRICLAB_EXT_HELLO FABRICLAB_TRANSPORT FLSOCK_WANT_TRAFFIC_CLASS
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-load.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export FABRICLAB_REPORT_DIR=$tmp/reports
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_check_lib.sh"

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }
so() { echo "$inner/libnccl-net-flsock-$1.so"; }

bench() { # name [env...] -> $tmp/name.{out,err}, status in $rc; 2 ranks, sendrecv 1..64K
	local name=$1
	shift
	env "$@" timeout 60 "$tool" bench --ranks 2 -o sendrecv -b 1 -e 64K -f 16 -n 2 -w 1 \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
}

runs() { # name [env...]: the run succeeds with #wrong 0
	local name=$1 why
	bench "$@"
	if [ "$rc" -ne 0 ]; then
		not_ok "$name: exit status $rc"
		tail -n 4 "$tmp/$name.err" | sed 's/^/#   /'
	elif ! why=$(check_output "$tmp/$name.out" sendrecv 1 64K 16 2); then
		not_ok "$name: $why"
	else
		ok "$name"
	fi
}

fails() { # name regex [env...]: the run fails, without crashing, saying regex
	local name=$1 want=$2
	shift 2
	bench "$name" "$@"
	if [ "$rc" -eq 0 ]; then
		not_ok "$name: the run succeeded"
	elif [ "$rc" -eq 124 ]; then
		not_ok "$name: hung (killed after 60 s)"
	elif grep -qiE "segmentation|core dumped|killed by signal|abort" "$tmp/$name.err"; then
		not_ok "$name: crashed"
		tail -n 4 "$tmp/$name.err" | sed 's/^/#   /'
	elif ! grep -qE -- "$want" "$tmp/$name.err"; then
		not_ok "$name: no message matching '$want'"
		tail -n 4 "$tmp/$name.err" | sed 's/^/#   /'
	else
		ok "$name: $(grep -m1 -oE -- "$want" "$tmp/$name.err")"
	fi
}

# IBext: slots filled inside init (v12, and v6 through NCCL's copying adapters).
fill() {
	local v
	for v in fill fill-v6; do
		runs "$v-through-ext" FABRICLAB_TRANSPORT="ext:$(so $v)"
		runs "$v-through-shim" NCCL_NET_PLUGIN="$(so $v)"
	done
	fails fill-notest-through-ext \
		"ext:$(so fill-notest): ncclNetPlugin_v12 of flsock in .* has no test after its init returned" \
		FABRICLAB_TRANSPORT="ext:$(so fill-notest)"
	fails fill-notest-through-shim "net plugin flsock: ncclNetPlugin_v12 has no test after its init" \
		NCCL_NET_PLUGIN="$(so fill-notest)"
}

# The config: read in init with no NULL check; the traffic class NCCL's communicator has
# (the shim's FABRICLAB_SHIM_TRAFFIC_CLASS stands for ncclConfig_t.trafficClass).
config() {
	runs config-undef-through-shim NCCL_NET_PLUGIN="$(so config)" FLSOCK_WANT_TRAFFIC_CLASS=-1
	runs config-tc5-through-shim NCCL_NET_PLUGIN="$(so config)" FABRICLAB_SHIM_TRAFFIC_CLASS=5 \
		FLSOCK_WANT_TRAFFIC_CLASS=5
	fails config-tc-wrong-through-shim "init got traffic class 4, FLSOCK_WANT_TRAFFIC_CLASS=5" NCCL_DEBUG=WARN \
		NCCL_NET_PLUGIN="$(so config)" FABRICLAB_SHIM_TRAFFIC_CLASS=4 \
		FLSOCK_WANT_TRAFFIC_CLASS=5
	runs config-tc5-through-ext FABRICLAB_TRANSPORT="ext:$(so config)" \
		FABRICLAB_SHIM_TRAFFIC_CLASS=5 FLSOCK_WANT_TRAFFIC_CLASS=5
	fails config-tc-wrong-through-ext "init got traffic class 4, FLSOCK_WANT_TRAFFIC_CLASS=5" \
		FABRICLAB_TRANSPORT="ext:$(so config)" FABRICLAB_SHIM_TRAFFIC_CLASS=4 \
		FLSOCK_WANT_TRAFFIC_CLASS=5
	# v10 takes the config with each connect: from NCCL v10 itself, or kept per communicator
	runs config-v10-connect-through-shim NCCL_NET_PLUGIN="$(so config-v10)" \
		FABRICLAB_SHIM_TRAFFIC_CLASS=5 FLSOCK_WANT_TRAFFIC_CLASS=5
	local nccl
	for nccl in 10 12; do
		runs "config-v10-connect-nccl-v$nccl-through-ext" FABRICLAB_SHIM_NET_VERSION=$nccl \
			FABRICLAB_TRANSPORT="ext:$(so config-v10)" FABRICLAB_SHIM_TRAFFIC_CLASS=5 \
			FLSOCK_WANT_TRAFFIC_CLASS=5
	done
	fails config-v10-connect-wrong-through-ext "connect got traffic class 4" \
		FABRICLAB_SHIM_NET_VERSION=10 FABRICLAB_TRANSPORT="ext:$(so config-v10)" \
		FABRICLAB_SHIM_TRAFFIC_CLASS=4 FLSOCK_WANT_TRAFFIC_CLASS=5
}

# Comma lists: the ones that fail to load, to init or to show a device are passed over.
lists() {
	local list="/nonexistent/libnccl-net-x.so,$(so initfail),$(so nodev),$(so v11)"
	bench list-through-ext FABRICLAB_TRANSPORT="ext:$list" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET
	if [ "$rc" -ne 0 ]; then
		not_ok "ext list: exit status $rc"
		tail -n 4 "$tmp/list-through-ext.err" | sed 's/^/#   /'
	elif ! grep -q "ext: wrapping flsock (ncclNetPlugin_v11) from .*flsock-v11.so" \
		"$tmp/list-through-ext.err"; then
		not_ok "ext list: the fourth (flsock-v11) is not the one wrapped"
	else
		ok "ext list: the first three skipped, flsock-v11 wrapped"
	fi
	bench list-through-shim NCCL_NET_PLUGIN="$list" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
	if [ "$rc" -ne 0 ]; then
		not_ok "shim list: exit status $rc"
		tail -n 4 "$tmp/list-through-shim.err" | sed 's/^/#   /'
	elif ! grep -q 'net plugin "flsock" (ncclNetPlugin_v11)' "$tmp/list-through-shim.err"; then
		not_ok "shim list: the fourth (flsock-v11) is not the one driven"
	else
		ok "shim list: the first three skipped, flsock-v11 driven"
	fi
	fails list-none-through-ext \
		"none of the 2 plugins initialised: \[.*initfail.so\] init of flsock .* failed: its error 2 \(system error\); \[.*nodev.so\] flsock \(ncclNetPlugin_v12\)" \
		FABRICLAB_TRANSPORT="ext:$(so initfail),$(so nodev)"
	fails list-none-through-shim \
		"none of the 2 plugins initialised: \[.*initfail.so\] net plugin flsock: init failed: system error \(2\); \[.*nodev.so\] net plugin flsock has 0 devices" \
		NCCL_NET_PLUGIN="$(so initfail),$(so nodev)"
}

# The inner's own error, named; refused files never opened (a FIFO would block dlopen).
errors() {
	fails init-error-2-through-ext \
		"init of flsock \(ncclNetPlugin_v12\) from .*initfail.so failed: its error 2 \(system error\)" \
		FABRICLAB_TRANSPORT="ext:$(so initfail)"
	if grep -q "invalid usage" "$tmp/init-error-2-through-ext.err"; then
		not_ok "init-error-2-through-ext: reported as invalid usage"
	else
		ok "init-error-2-through-ext: NCCL gets system error (2), not invalid usage"
	fi
	fails no-devices-through-ext "ext:$(so nodev): flsock \(ncclNetPlugin_v12\) from .* has 0 devices" \
		FABRICLAB_TRANSPORT="ext:$(so nodev)"
	mkfifo "$tmp/fifo.so"
	mkdir "$tmp/dir.so"
	fails fifo-through-ext "cannot load $tmp/fifo.so: it is a FIFO, not a shared object file" \
		FABRICLAB_TRANSPORT="ext:$tmp/fifo.so"
	fails fifo-through-shim "cannot load $tmp/fifo.so: it is a FIFO, not a shared object file" \
		NCCL_NET_PLUGIN="$tmp/fifo.so"
	fails dir-through-ext "cannot load $tmp/dir.so: it is a directory" \
		FABRICLAB_TRANSPORT="ext:$tmp/dir.so"
	fails chardev-through-ext "cannot load /dev/null: it is a character device" \
		FABRICLAB_TRANSPORT="ext:/dev/null"
}

# NCCL 2.28/2.29 know v11 at most (their src/plugin/net.cc ncclNetVersion[]), 2.27 v10.
version() {
	local max
	for max in 11 10; do
		bench "max-v$max" FABRICLAB_SHIM_NET_MAX_VERSION=$max NCCL_DEBUG=INFO \
			NCCL_DEBUG_SUBSYS=INIT,NET
		if [ "$rc" -ne 0 ]; then
			not_ok "FABRICLAB_SHIM_NET_MAX_VERSION=$max: exit status $rc"
		elif ! grep -q "(ncclNetPlugin_v$max)" "$tmp/max-v$max.err"; then
			not_ok "FABRICLAB_SHIM_NET_MAX_VERSION=$max: fabriclab not bound at v$max"
		else
			ok "FABRICLAB_SHIM_NET_MAX_VERSION=$max binds fabriclab's ncclNetPlugin_v$max"
		fi
	done
	fails max-v5 "FABRICLAB_SHIM_NET_MAX_VERSION" FABRICLAB_SHIM_NET_MAX_VERSION=5
}

sizes() {
	runs nosizes-through-shim NCCL_NET_PLUGIN="$(so nosizes)"
	runs nosizes-through-ext FABRICLAB_TRANSPORT="ext:$(so nosizes)"
}

# Grouped receives: the report counts each request once, so the receiving end sees a quarter
# of the sender's messages; #wrong 0 says every tagged message landed in its own buffer. A plugin
# taking one buffer per irecv (flsock: maxRecvs 1) gets none grouped, as from NCCL.
grouped() { # report dir, min ratio of sends to receive requests, max ratio
	python3 - "$@" <<'PY'
import glob, json, sys
sent = got = 0
for f in glob.glob(sys.argv[1] + "/*.json"):
    for h in json.load(open(f))["hops"]:
        if h["view"] == "send":
            sent += h["messages"]
        else:
            got += h["messages"]
sys.exit(0 if got and float(sys.argv[2]) <= sent / got <= float(sys.argv[3]) else 1)
PY
}

groups() {
	runs group4-socket FABRICLAB_SHIM_RECV_GROUP=4 FABRICLAB_REPORT_DIR="$tmp/group4-socket"
	if grouped "$tmp/group4-socket" 3 4; then
		ok "group4-socket: 4 sends to each receive request"
	else
		not_ok "group4-socket: receives not grouped in $tmp/group4-socket"
	fi
	runs group4-ext-maxrecvs1 FABRICLAB_SHIM_RECV_GROUP=4 FABRICLAB_TRANSPORT="ext:$(so v12)" \
		FABRICLAB_REPORT_DIR="$tmp/group4-ext"
	if grouped "$tmp/group4-ext" 1 1; then
		ok "group4-ext-maxrecvs1: the inner's maxRecvs 1 holds receives to one buffer"
	else
		not_ok "group4-ext-maxrecvs1: grouped past the inner's maxRecvs in $tmp/group4-ext"
	fi
	fails group9 "FABRICLAB_SHIM_RECV_GROUP=\"9\": expected an integer from 1 to 8" \
		FABRICLAB_SHIM_RECV_GROUP=9
}

fill
config
lists
errors
version
sizes
groups

[ "$failures" -eq 0 ] || { echo "# $failures failed (outputs in $tmp kept)"; trap - EXIT; exit 1; }
exit 0
