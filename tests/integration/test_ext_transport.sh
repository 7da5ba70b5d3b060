#!/usr/bin/env bash
# FABRICLAB_TRANSPORT=ext:... beyond plain collectives: the NCCL-side x inner ABI
# version matrix (subset), lookup by NAME as NCCL does it, inner plugins that
# misbehave the way NCCL tolerates (test leaves sizes unwritten; NULL requests
# and connect/accept needing many calls), both ends naming the hop in their
# reports, a clear single error for a missing, non-plugin or failing inner, and a
# killed peer surfacing as an error (test_rank_killed.sh over ext).
# Usage: test_ext_transport.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
inner=$(cd "$build" && pwd)/inner
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP \
	FABRICLAB_SHIM_NET_VERSION FABRICLAB_FAULT FABRICLAB_EXT_HELLO
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-ext.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export FABRICLAB_REPORT_DIR=$tmp/reports
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_check_lib.sh"
py=/usr/bin/python3
[ -x "$py" ] || py=python3

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

bench() { # name ranks op min max factor [env...] -> $tmp/name.{out,err}, status in $rc
	local name=$1 ranks=$2 op=$3 min=$4 max=$5 factor=$6
	shift 6
	env "$@" timeout 60 "$tool" bench --ranks "$ranks" -o "$op" -b "$min" -e "$max" \
		-f "$factor" -n 2 -w 1 >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
}

run() { # name ranks op min max factor [env...]
	local name=$1 why
	bench "$@"
	if [ "$rc" -ne 0 ]; then
		not_ok "$name: exit status $rc"
		sed 's/^/#   /' "$tmp/$name.err" | tail -n 6
	elif ! why=$(check_output "$tmp/$name.out" "$3" "$4" "$5" "$6" "$2"); then
		not_ok "$name: $why"
	else
		ok "$name"
	fi
}

# NCCL's side (the version the shim binds in fabriclab) x the inner's version.
abi_matrix() {
	local nccl v
	for nccl in 6 8 9 10 11 12; do
		for v in 6 11; do
			run "abi-nccl-v$nccl-inner-v$v" 2 sendrecv 1 1M 64 \
				FABRICLAB_SHIM_NET_VERSION=$nccl \
				FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-v$v.so"
		done
	done
	# v5 (fastsocket's newest): no regMrDmaBuf slot, so its later slots sit 8 bytes earlier
	for nccl in 6 9 12; do
		run "abi-nccl-v$nccl-inner-v5" 2 sendrecv 1 1M 64 \
			FABRICLAB_SHIM_NET_VERSION=$nccl \
			FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-v5.so"
	done
	for nccl in 7 12; do
		for v in 8 10 12; do
			run "abi-nccl-v$nccl-inner-v$v" 2 all_reduce 1 1M 64 \
				FABRICLAB_SHIM_NET_VERSION=$nccl \
				FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-v$v.so"
		done
	done
}

# ext:NAME finds libnccl-net-NAME.so on the loader's path, and says what it loaded.
name_lookup() {
	bench name-lookup 2 sendrecv 1 1K 32 LD_LIBRARY_PATH="$inner" \
		FABRICLAB_TRANSPORT=ext:flsock-v10 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET
	if [ "$rc" -ne 0 ]; then
		not_ok "ext:flsock-v10 (by name): exit status $rc"
		tail -n 4 "$tmp/name-lookup.err" | sed 's/^/#   /'
	elif ! grep -q "ext: wrapping flsock (ncclNetPlugin_v10) from .*libnccl-net-flsock-v10.so" \
		"$tmp/name-lookup.err"; then
		not_ok "ext:flsock-v10: no INFO line naming the inner plugin, version and path"
	elif ! grep -q "ext: flsock device 0 lo: 10000 Mbps, ptrSupport 0x1 (host), .*device type host" \
		"$tmp/name-lookup.err"; then
		not_ok "ext:flsock-v10: no INFO line with what device 0 advertises"
	elif ! grep -q "flsock: the socket transport as ncclNetPlugin_v10" "$tmp/name-lookup.err"; then
		not_ok "ext:flsock-v10: the inner's own INFO lines do not reach NCCL's logger"
	else
		ok "ext:flsock-v10 found as libnccl-net-flsock-v10.so, INFO names it and its devices, its logger works"
	fi
}

# Each end names both ends of every hop: the sender learns the receiver from the handle's
# tail, the receiver the sender from the hidden hello. Ranks 0..3 are node0..node3 in a ring.
identity() {
	local rep=$tmp/identity-reports why
	bench identity 4 all_reduce 1M 1M 2 FABRICLAB_REPORT_DIR="$rep" \
		FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-v12.so"
	[ "$rc" -eq 0 ] || { not_ok "identity: exit status $rc"; return; }
	if why=$("$py" - "$rep" <<'PY'
import glob, json, sys
bad = []
files = sorted(glob.glob(sys.argv[1] + "/*.json"))
for f in files:
    r = json.load(open(f))
    views = set()
    for h in r["hops"]:
        views.add(h["view"])
        src, dst = int(h["src_node"][4:] or -1), int(h["dst_node"][4:] or -1)
        if h["transport"] != "ext" or (src + 1) % 4 != dst or h["src_dev"] != "lo" \
           or h["dst_dev"] != "lo" or h["src_rank"] != src or h["dst_rank"] != dst:
            bad.append("%s: %s" % (r["node"], h))
    if views != {"send", "recv"}:
        bad.append("%s: views %s" % (r["node"], sorted(views)))
if len(files) != 4:
    bad.append("%d reports" % len(files))
print("; ".join(bad)[:600])
sys.exit(1 if bad else 0)
PY
	); then
		ok "identity: every report names both ends (node, device, rank) of its send and recv hops"
	else
		not_ok "identity: $why"
	fi
}

# Plugins NCCL tolerates must work through ext too.
tolerated() {
	run nosizes-all_reduce-4-ranks 4 all_reduce 1 4M 32 \
		FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-nosizes.so"
	run nosizes-sendrecv-2-ranks 2 sendrecv 1 4M 32 \
		FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-nosizes.so"
	run nullreq-all_reduce-4-ranks 4 all_reduce 1 4M 32 \
		FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-nullreq.so"
	run nullreq-sendrecv-3-ranks 3 sendrecv 1 4M 32 \
		FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-nullreq.so"
	run no-hello-sendrecv-2-ranks 2 sendrecv 1 1M 32 FABRICLAB_EXT_HELLO=0 \
		FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-v12.so"
}

# Once a connection's hello moved, fabriclab calls a v10+ inner's isend/irecv/test itself
# (struct fl_direct); not a v8 inner's (its calls need adapting), not under a throttle (ext
# paces), not with FABRICLAB_EXT_DIRECT=0. An inner that leaves sizes unwritten still counts
# every byte: each rank's sendrecv bytes, 2 iterations and 1 warm-up of 1 MiB, are the same
# through the direct path as through ext's own.
direct_path() {
	local name inner_so want lines bytes v12_bytes=
	for spec in v12:flsock-v12:4 v8:flsock-v8:0 nosizes:flsock-nosizes:4 \
		off:flsock-v12:0:FABRICLAB_EXT_DIRECT=0 \
		"throttled:flsock-v12:0:FABRICLAB_FAULT=throttle:node=node0,rate=50%;throttle:node=node1,rate=50%"; do
		IFS=: read -r name inner_so want extra <<<"$spec"
		bench "direct-$name" 2 sendrecv 1M 1M 2 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET \
			FABRICLAB_REPORT_DIR="$tmp/direct-$name" ${extra:+"$extra"} \
			FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-$inner_so.so"
		lines=$(grep -c "requests go straight to the ext transport's plugin" \
			"$tmp/direct-$name.err")
		bytes=$("$py" -c 'import glob, json, sys
print(sorted(sum(h["bytes"] for h in json.load(open(f))["hops"] if h["view"] == "send")
             for f in glob.glob(sys.argv[1] + "/*.json")))' "$tmp/direct-$name")
		[ "$name" = v12 ] && v12_bytes=$bytes
		if [ "$rc" -ne 0 ]; then
			not_ok "direct path, $name: exit status $rc"
		elif [ "$lines" -ne "$want" ]; then
			not_ok "direct path, $name: $lines connections went direct, want $want"
		elif [ "$bytes" != "$v12_bytes" ]; then
			not_ok "direct path, $name: bytes sent per rank $bytes, $v12_bytes through v12"
		else
			ok "direct path, $name: $lines of 4 connections direct, bytes sent per rank $bytes"
		fi
	done
}

# A bad inner: the run fails, every rank logs one WARN naming FABRICLAB_TRANSPORT and the
# path with the reason, and nothing crashes.
bad_inner() { # name spec reason-regex
	local name=$1 spec=$2 want=$3 lines
	bench "bad-$name" 2 sendrecv 1 1K 2 FABRICLAB_TRANSPORT="ext:$spec"
	lines=$(grep -c "NCCL WARN NET/fabriclab : init failed: FABRICLAB_TRANSPORT=ext:" \
		"$tmp/bad-$name.err")
	if [ "$rc" -eq 0 ]; then
		not_ok "bad inner $name: the run succeeded"
	elif grep -qiE "segmentation|core dumped|killed by signal|abort" "$tmp/bad-$name.err"; then
		not_ok "bad inner $name: crashed"
		tail -n 4 "$tmp/bad-$name.err" | sed 's/^/#   /'
	elif ! grep -E "init failed: FABRICLAB_TRANSPORT=ext:$spec: .*$want" \
		"$tmp/bad-$name.err" >/dev/null || [ "$lines" -gt 2 ]; then
		not_ok "bad inner $name: no single clear error naming the path and '$want'"
		tail -n 4 "$tmp/bad-$name.err" | sed 's/^/#   /'
	else
		ok "bad inner $name: $(grep -m1 -oE "FABRICLAB_TRANSPORT=ext:.*" "$tmp/bad-$name.err")"
	fi
}

killed_peer() {
	if FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-flsock-v12.so" \
		bash "$here/test_rank_killed.sh" "$build" >"$tmp/killed.out" 2>&1; then
		ok "killed peer over ext: every survivor fails within 5 s naming the call ($(grep -c '^ok' "$tmp/killed.out") checks)"
	else
		not_ok "killed peer over ext"
		grep -v '^ok' "$tmp/killed.out" | head -n 6 | sed 's/^/#   /'
	fi
}

abi_matrix
name_lookup
identity
tolerated
direct_path
bad_inner missing /nonexistent "cannot load /nonexistent"
bad_inner no-symbols "$inner/libnccl-net-nonet.so" "exports no ncclNetPlugin_v5..v12"
bad_inner init-fails "$inner/libnccl-net-flsock-initfail.so" \
	"init of flsock \(ncclNetPlugin_v12\) from .*initfail.so failed"
bad_inner unknown-name no-such-plugin "nor libnccl-net-no-such-plugin.so"
killed_peer

[ "$failures" -eq 0 ] || { echo "# $failures failed (outputs in $tmp kept)"; trap - EXIT; exit 1; }
exit 0
