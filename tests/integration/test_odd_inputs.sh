#!/usr/bin/env bash
# Inputs that are not what their names say must neither hang nor abort the tools or the plugin:
#  - a report folder holding a FIFO named x.json, a folder named a.json, another program's
#    JSON ({"foo":1}) and a non-JSON file next to valid reports: `fabriclab report` skips
#    each with one warning naming it and why, and gives the same verdict as without them;
#    a FIFO given by name fails at once (exit 2);
#  - a FIFO as class/net/lo/speed (and as an RDMA counter) under FABRICLAB_SYSFS_ROOT: the
#    plugin's init (a 2-rank bench) and `fabriclab doctor` finish, the speed unknown.
# Every run is under `timeout`, so a hang fails the test instead of stalling the suite.
# Usage: test_odd_inputs.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
fixtures=tests/fixtures
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP FABRICLAB_FAULT
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-odd.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export FABRICLAB_REPORT_DIR=$tmp/reports
failures=0

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
fail() { echo "not ok - $*"; failures=$((failures + 1)); }
has() { grep -qF -- "$2" "$tmp/$1"; }

# The folder: slow_link4's reports plus the odd entries.
odd=$tmp/odd
cp -r "$fixtures/reports/slow_link4" "$odd"
mkfifo "$odd/x.json"
mkdir "$odd/a.json"
echo '{"foo":1}' >"$odd/foo.json"
echo 'not json at all' >"$odd/notes.json"

timeout 20 "$tool" report "$fixtures/reports/slow_link4" >"$tmp/clean.out" 2>&1
timeout 20 "$tool" report "$odd" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ]; then
	fail "odd folder: exit $rc (124: hung):"; sed 's/^/    /' "$tmp/err" | head -n 5
else
	for what in "x.json: not a regular file (a FIFO)" "a.json: not a regular file (a folder)" \
		"foo.json: not a fabriclab report" "notes.json: truncated or not JSON"; do
		has err "$what" || fail "odd folder: no warning '$what' in: $(cat "$tmp/err")"
	done
	n=$(grep -c 'warning: skipping' "$tmp/err")
	[ "$n" -eq 4 ] || fail "odd folder: $n skip warnings, expected one per odd entry (4)"
	grep -F 'verdict:' "$tmp/clean.out" >"$tmp/clean.verdict"
	grep -F 'verdict:' "$tmp/out" >"$tmp/odd.verdict"
	if [ -s "$tmp/clean.verdict" ] && cmp -s "$tmp/clean.verdict" "$tmp/odd.verdict"; then
		echo "ok - odd folder: 4 entries skipped with a warning each, verdict unchanged:" \
			"$(cat "$tmp/odd.verdict")"
	else
		fail "odd folder: verdict '$(cat "$tmp/odd.verdict")' vs '$(cat "$tmp/clean.verdict")'"
	fi
fi

# Named on the command line, a FIFO is an error, not a wait.
timeout 20 "$tool" report "$odd/x.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && has err "x.json: not a regular file (a FIFO)"; then
	echo "ok - a FIFO named on the command line: exit 2, $(head -n 1 "$tmp/err")"
else
	fail "FIFO argument: exit $rc (124: hung), $(cat "$tmp/err")"
fi

# A sysfs tree whose attributes are FIFOs: the healthy fixture with two of them swapped.
sys=$tmp/sysfs
cp -r "$fixtures/sysfs/healthy" "$sys"
mkdir -p "$sys/class/net/lo"
rm -f "$sys/class/net/lo/speed"
mkfifo "$sys/class/net/lo/speed"
counter=$(find "$sys/devices" -path "*ports/1/counters/symbol_error" -type f | head -n 1)
[ -n "$counter" ] && rm -f "$counter" && mkfifo "$counter"

FABRICLAB_SYSFS_ROOT=$sys timeout 60 "$tool" bench --ranks 2 -b 8 -e 1K >"$tmp/bench.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
	echo "ok - plugin init with a FIFO as class/net/lo/speed: the bench ran"
else
	fail "plugin init with a FIFO sysfs speed: exit $rc (124: hung): $(tail -n 3 "$tmp/bench.out")"
fi
FABRICLAB_SYSFS_ROOT=$sys FABRICLAB_IBVERBS_LIB=/nonexistent/libibverbs.so.1 \
	timeout 60 "$tool" doctor >"$tmp/doctor.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then
	echo "ok - doctor with FIFOs in the sysfs tree${counter:+ (also ${counter#"$sys"/})}: exit $rc"
else
	fail "doctor with FIFOs in sysfs: exit $rc (124: hung): $(tail -n 3 "$tmp/doctor.out")"
fi

[ "$failures" -eq 0 ] && echo "all odd inputs handled" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
