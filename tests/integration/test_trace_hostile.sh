#!/usr/bin/env bash
# Issue 49, findings 6 and 9: `fabriclab trace` on a trace damaged or forged by hand. A small
# healthy trace (2 ranks, fabriclab:* events, a session daemon of this test's own, as in
# test_trace.sh) is copied and then:
#  - bytes 24-40 of every stream packet header set to 0xff: libbabeltrace2 asserts (SIGABRT)
#    on it; trace must exit 2 naming the damaged trace, write no --perfetto file (not even an
#    empty one) and leave no temporary file;
#  - node names made not UTF-8, ESC [ 3 1 m, U+202E and a BEL in a device name (same lengths,
#    in place in the stream files): --json keeps both processes, --perfetto writes, and the
#    text output shows every name escaped, never raw;
#  - a FIFO and a link to /dev/zero among the stream files: each is named on stderr as skipped.
# Usage: test_trace_hostile.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$(cd "$(dirname "$build/fabriclab")" && pwd)/fabriclab
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP FABRICLAB_FAULT \
	FABRICLAB_NODE_NAME FABRICLAB_RANK FABRICLAB_REPORT FABRICLAB_LTTNG_PROVIDER \
	FABRICLAB_LINK_RATE LTTNG_UST_REGISTER_TIMEOUT NCCL_DEBUG FABRICLAB_TRANSPORT
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-trace-hostile.XXXXXX")
chmod 755 "$tmp"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
as=()
[ "$(id -u)" -eq 0 ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
home=$tmp/lttnghome
mkdir -m 777 "$home"
user=("${as[@]}" env HOME="$home" LTTNG_HOME="$home")
lt() { "${user[@]}" lttng "$@"; }
own_sessiond= session=
cleanup() {
	[ -n "$session" ] && lt destroy "$session" >/dev/null 2>&1
	[ -n "$own_sessiond" ] && kill "$own_sessiond" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }
ok() { echo "ok - $*"; }
for c in lttng lttng-sessiond babeltrace2; do
	command -v "$c" >/dev/null || { echo "$c is not installed (scripts/deps.sh installs it)"; exit 77; }
done
[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

record() {
	"${user[@]}" lttng-sessiond --daemonize --no-kernel >"$tmp/sessiond.log" 2>&1 ||
		{ echo "not ok - lttng-sessiond did not start: $(tail -n 2 "$tmp/sessiond.log")"; exit 1; }
	own_sessiond=$(cat "$home/.lttng/lttng-sessiond.pid" 2>/dev/null)
	session=flhostile$$
	mkdir -m 777 "$tmp/rec"
	lt create "$session" --output="$tmp/rec/trace" >/dev/null &&
		lt enable-event -u 'fabriclab:*' -s "$session" >/dev/null &&
		lt add-context -u -t vpid -s "$session" >/dev/null &&
		lt start "$session" >/dev/null || { echo "not ok - cannot set up the session"; exit 1; }
	"${user[@]}" FABRICLAB_REPORT_DIR="$tmp/rec/reports" timeout 60 "$tool" bench --ranks 2 \
		-b 64K -e 256K -n 2 -w 1 -c 1 >"$tmp/rec/bench.out" 2>"$tmp/rec/bench.err"
	local rc=$?
	lt stop "$session" >/dev/null 2>&1
	lt destroy "$session" >/dev/null 2>&1
	session=
	[ "$rc" -eq 0 ] || { echo "not ok - bench failed: $(tail -n 2 "$tmp/rec/bench.err")"; exit 1; }
	timeout 60 "$tool" trace "$tmp/rec/trace" >"$tmp/rec/trace.out" 2>&1 ||
		{ echo "not ok - the healthy trace does not read: $(head -n 2 "$tmp/rec/trace.out")"; exit 1; }
}

# A copy of the trace with each stream file (not metadata, not the index) edited by python.
forge() { # name python-statements-on-bytes-b
	rm -rf "$tmp/$1"
	cp -r "$tmp/rec/trace" "$tmp/$1"
	find "$tmp/$1" -type f -name 'channel*' ! -path '*/index/*' -print0 |
		xargs -0 "$py" -c '
import sys
for p in sys.argv[2:]:
    b = bytearray(open(p, "rb").read())
    exec(sys.argv[1])
    open(p, "wb").write(bytes(b))' "$2"
}

corrupt_header() {
	forge corrupt 'b[24:40] = b"\xff" * 16'
	timeout 120 "$tool" trace "$tmp/corrupt" --perfetto "$tmp/corrupt.pf" >"$tmp/corrupt.out" 2>&1
	local rc=$?
	if [ "$rc" -ne 2 ]; then
		not_ok "packet header 24-40 = 0xff: exit $rc (134: aborted): $(tail -n 2 "$tmp/corrupt.out")"
	elif ! grep -q "damaged CTF stream" "$tmp/corrupt.out"; then
		not_ok "packet header 24-40 = 0xff: no message naming it: $(head -n 2 "$tmp/corrupt.out")"
	elif [ -e "$tmp/corrupt.pf" ] || ls "$tmp"/corrupt.pf.* >/dev/null 2>&1; then
		not_ok "packet header 24-40 = 0xff: a --perfetto file (or its temporary) was left"
	else
		ok "packet header 24-40 = 0xff: exit 2 naming the damaged trace, no --perfetto file"
	fi
}

forged_names() {
	local rc
	forge names 'b[:] = b.replace(b"node1\0", b"nod\xff1\0").replace(b"node0\0", b"\x1b[31m\0").replace(b"lo\0", b"\x07\xe2\0")'
	timeout 120 "$tool" trace "$tmp/names" --json >"$tmp/names.json" 2>"$tmp/names.err"
	rc=$?
	if [ "$rc" -ne 0 ] || ! "$py" -c '
import json, sys
t = json.load(open(sys.argv[1]))["trace"]
sys.exit(0 if t["processes"] == 2 and len(t["hops"]) >= 2 else 1)' "$tmp/names.json"; then
		not_ok "names not UTF-8: --json exit $rc, processes dropped: $(head -c 300 "$tmp/names.err")"
	else
		ok "names not UTF-8 or with ESC: --json keeps both processes"
	fi
	timeout 120 "$tool" trace "$tmp/names" --perfetto "$tmp/names.pf" >"$tmp/names.txt" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] || ! "$py" -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/names.pf"; then
		not_ok "names not UTF-8: --perfetto exit $rc: $(tail -n 2 "$tmp/names.txt")"
	elif [ "$(LC_ALL=C grep -c $'\e\|\a\|\xff' "$tmp/names.txt")" -ne 0 ]; then
		not_ok "names: the text output prints node or device names raw"
	elif ! grep -q 'x1b\[31m' "$tmp/names.txt"; then
		not_ok "names: the text output does not show the escaped name"
	else
		ok "names with ESC, BEL, U+202E's first bytes and 0xff: --perfetto writes, text shows them escaped"
	fi
}

odd_streams() {
	local d
	rm -rf "$tmp/odd"
	cp -r "$tmp/rec/trace" "$tmp/odd"
	d=$(dirname "$(find "$tmp/odd" -name metadata | head -n 1)")
	mkfifo "$d/channel0_fifo"
	ln -s /dev/zero "$d/channel0_zero"
	timeout 120 "$tool" trace "$tmp/odd" >"$tmp/odd.out" 2>"$tmp/odd.err"
	local rc=$?
	if [ "$rc" -eq 124 ]; then
		not_ok "a FIFO and /dev/zero among the streams: trace hung"
	elif ! grep -q "skipped stream .*channel0_fifo: a FIFO" "$tmp/odd.err" ||
		! grep -q "skipped stream .*channel0_zero: a character device" "$tmp/odd.err"; then
		not_ok "a FIFO and /dev/zero among the streams: not said (exit $rc): $(head -n 2 "$tmp/odd.err")"
	else
		ok "a FIFO and /dev/zero among the streams: each named as skipped (exit $rc)"
	fi
}

record
corrupt_header
forged_names
odd_streams
[ "$failures" -eq 0 ] || exit 1
