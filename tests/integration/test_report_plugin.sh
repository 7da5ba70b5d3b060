#!/usr/bin/env bash
# The per-process reports the plugin writes, through `fabriclab bench` (all_reduce
# through the real plugin over loopback, node names node0..nodeN-1):
#  - 4 and 8 healthy ranks: every report parses, schema 1, final, one send and
#    one receive hop on the ring with exactly the bytes the bench moved, verdict
#    none, one summary line per rank on stderr, the .txt next to it;
#  - ABI v9 (no finalize): the final report is written when the plugin unloads;
#  - a run longer than FABRICLAB_REPORT_INTERVAL=1 shows snapshots (final false)
#    while it runs, and a rank SIGKILLed then still leaves its last snapshot whole.
# Usage: test_report_plugin.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP \
	FABRICLAB_NODE_NAME FABRICLAB_RANK FABRICLAB_REPORT FABRICLAB_REPORT_INTERVAL \
	FABRICLAB_SHIM_NET_VERSION FABRICLAB_SHIM_PIDFILE NCCL_DEBUG
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-report-plugin.XXXXXX")
started=()
keep=
cleanup() {
	for p in "${started[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ -n "$keep" ] || rm -rf "$tmp"
}
trap cleanup EXIT

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
command -v python3 >/dev/null || { echo "not ok - python3 missing"; exit 1; }

fail() { echo "not ok - $*"; failures=$((failures + 1)); }

# Checks one report; prints why not on failure. Arguments: file nranks final(true|false)
# expected_bytes (per hop; "any" for > 0).
check_report() {
	python3 - "$@" <<'EOF'
import json, re, sys
path, n, final, want = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "true", sys.argv[4]
try:
    r = json.load(open(path))
except Exception as e:
    sys.exit(f"{path}: not JSON: {e}")
def need(cond, what):
    if not cond:
        sys.exit(f"{path}: {what}")
need(r.get("schema") == "fabriclab-report", "schema is not fabriclab-report")
need(r.get("schema_version") == 1, f"schema_version {r.get('schema_version')}")
need(r.get("final") is final, f"final is {r.get('final')}, expected {final}")
m = re.fullmatch(r"node(\d+)", r.get("node", ""))
need(m and int(m.group(1)) < n, f"node {r.get('node')!r}")
k = int(m.group(1))
need(path.endswith(f"/node{k}-{r['pid']}.json"), "file name is not <node>-<pid>.json")
need(r.get("rank") == k, f"rank {r.get('rank')} on node{k}")
need(r.get("transport") == "socket", "transport")
need([d["name"] for d in r["devices"]] == ["lo"], f"devices {r['devices']}")
views = {h["view"]: h for h in r["hops"]}
need(len(r["hops"]) == 2 and set(views) == {"send", "recv"}, f"hops {[(h['src_node'], h['dst_node'], h['view']) for h in r['hops']]}")
s, v = views["send"], views["recv"]
nxt, prv = (k + 1) % n, (k - 1) % n
need((s["src_node"], s["dst_node"], s["src_rank"], s["dst_rank"]) == (f"node{k}", f"node{nxt}", k, nxt), f"send hop {s}")
need((v["src_node"], v["dst_node"], v["src_rank"], v["dst_rank"]) == (f"node{prv}", f"node{k}", prv, k), f"recv hop {v}")
for h in (s, v):
    need(h["src_dev"] == "lo" and h["dst_dev"] == "lo" and h["connections"] == 1, f"hop {h}")
    if want == "any":
        need(h["bytes"] > 0, f"{h['view']} hop moved nothing")
    else:
        need(h["bytes"] == int(want), f"{h['view']} hop bytes {h['bytes']}, the bench moved {want}")
    # The sender always times its writes; a receiver that finds a piece already buffered
    # sees no wire time for it (so its view may have none): only consistency is checked.
    need(0 <= h["wire_bytes"] <= h["bytes"], f"{h['view']} wire_bytes {h['wire_bytes']} outside 0..bytes")
    if h["bytes"] and h["view"] == "send":
        need(h["wire_seconds"] > 0, "send hop has no wire time")
    if h["wire_seconds"] > 0:
        need(abs(h["wire_gbs"] - h["wire_bytes"] / h["wire_seconds"] / 1e9) <= 1e-6 * h["wire_gbs"], f"{h['view']} wire_gbs is not wire_bytes / wire_seconds")
        # Each wire interval lies within its request's posted -> done.
        need(h["active_seconds"] + 1e-9 >= h["wire_seconds"] - h["wire_error_seconds"], f"{h['view']} hop active < wire")
    else:
        need(h["wire_gbs"] == 0, f"{h['view']} wire_gbs without wire time")
    if h["bytes"]:
        need(h["wire_time_us"]["p50"] <= h["wire_time_us"]["p99"] <= h["wire_time_us"]["max"] * 1.04, "percentiles out of order")
        need(sum(c for _, c in h["size_histogram"]) == h["messages"], "size histogram does not add up to messages")
    need(h["memory"] == ["host"] and h["gdr"] is False, "memory")
    # Exact unless the report thread was starved long enough for a ring to fill; the
    # short healthy runs must stay exact, the long oversubscribed one only within bounds.
    if want == "any":
        need(0 <= h["wire_error_seconds"] <= h["wire_seconds"], f"wire_error_seconds {h['wire_error_seconds']}")
    else:
        need(h["wire_error_seconds"] == 0, f"wire_error_seconds {h['wire_error_seconds']}")
# A process's own report judges its one or two hops against their line alone (loopback's is a
# placeholder, 10 Gb/s, and a rank starved of CPU on 2 shared cores runs a hop at a third of
# it): healthy, or not enough evidence; no finding either way.
if final:
    verdict = r["verdict"]
    need(verdict["kind"] in ("none", "not-enough-evidence") and not r["findings"],
         f"verdict {verdict['kind']}: {verdict['reason']}")
EOF
}

# all_reduce of S bytes on N ranks moves 2(N-1)/N * S through each rank's send hop
# (and into its receive hop) per iteration: warm-up, one checked and the timed
# ones. Power-of-two sizes split into equal chunks, and the plugin counts the
# payload of completed requests, so the totals must match exactly.
ring_bytes() { # nranks iterations sizes...
	local n=$1 it=$2 total=0 s
	shift 2
	for s in "$@"; do total=$((total + 2 * (n - 1) * s / n * it)); done
	echo "$total"
}

# Chunks of 64 KiB and more: the socket transport moves them on its data streams, which
# time every piece (a payload it reads in one go from the control stream has no wire time).
healthy() { # nranks
	local n=$1 dir=$tmp/healthy$1 err=$tmp/healthy$1.err want f k why bad=0
	local min=$((64 * n << 10))
	FABRICLAB_REPORT_DIR=$dir timeout 60 "$tool" bench --ranks "$n" -b "$min" -e $((4 * min)) \
		-f 2 -n 3 -w 1 -c 1 >"$tmp/healthy$n.out" 2>"$err" ||
		{ fail "$n ranks: bench failed: $(tail -n 2 "$err")"; return; }
	want=$(ring_bytes "$n" 5 "$min" $((2 * min)) $((4 * min)))
	for ((k = 0; k < n; k++)); do
		f=$(ls "$dir"/node$k-*.json 2>/dev/null)
		if [ "$(echo "$f" | grep -c .)" -ne 1 ]; then
			fail "$n ranks: expected one report for node$k, found: $f"; bad=1; continue
		fi
		why=$(check_report "$f" "$n" true "$want" 2>&1) || { fail "$n ranks: $why"; bad=1; }
		[ -s "${f%.json}.txt" ] || { fail "$n ranks: no ${f%.json}.txt"; bad=1; }
		[ "$(grep -c "^fabriclab: node$k slowest hop node[0-9]*/lo -> node[0-9]*/lo [0-9.]* GB/s (\(none\|not-enough-evidence\)), report $f$" "$err")" -eq 1 ] ||
			{ fail "$n ranks: no single summary line for node$k on stderr"; bad=1; }
	done
	[ "$bad" -eq 0 ] && echo "ok - $n ranks: $n final reports, $want bytes per hop as moved, verdict none"
}

# ABI v9 has no finalize: the report is written when the shim dlcloses the plugin.
unload() {
	local dir=$tmp/v9 err=$tmp/v9.err f want
	FABRICLAB_REPORT_DIR=$dir FABRICLAB_SHIM_NET_VERSION=9 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET \
		timeout 60 "$tool" bench --ranks 2 -b 1M -e 1M -n 2 -w 0 -c 1 >/dev/null 2>"$err" ||
		{ fail "v9: bench failed: $(tail -n 2 "$err")"; return; }
	want=$(ring_bytes 2 3 $((1 << 20)))
	for f in "$dir"/node0-*.json "$dir"/node1-*.json; do
		why=$(check_report "$f" 2 true "$want" 2>&1) || { fail "v9: $why"; return; }
	done
	if [ "$(grep -c "final report written at plugin unload" "$err")" -ne 2 ]; then
		fail "v9: the final reports were not written at unload: $(grep -h "final report" "$err")"
		return
	fi
	echo "ok - v9 (no finalize): final reports written when the plugin unloads"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

wait_for() { # timeout_s command...
	local limit=$(($(now_ms) + $1 * 1000))
	shift
	until "$@"; do
		[ "$(now_ms)" -lt "$limit" ] || return 1
		sleep 0.1
	done
}

all_snapshots() { # dir nranks
	local k
	for ((k = 0; k < $2; k++)); do
		ls "$1"/node$k-*.json >/dev/null 2>&1 || return 1
	done
}

# A long run with one snapshot a second; then rank 2 dies by SIGKILL.
snapshot_and_kill() {
	local dir=$tmp/snap pidfile=$tmp/pids err=$tmp/snap.err bench_pid victim f k why
	FABRICLAB_REPORT_DIR=$dir FABRICLAB_REPORT_INTERVAL=1 FABRICLAB_SHIM_PIDFILE=$pidfile \
		timeout 120 "$tool" bench --ranks 4 -b 1M -e 1M -n 100000000 -w 0 -c 0 \
		>/dev/null 2>"$err" &
	bench_pid=$!
	started+=("$bench_pid")
	if ! wait_for 20 all_snapshots "$dir" 4; then
		fail "snapshot: no report from every rank within 20 s of a run with interval 1 s"
		return
	fi
	kill -0 "$bench_pid" 2>/dev/null || { fail "snapshot: the run ended before its snapshots"; return; }
	started+=($(awk '{ print $2 }' "$pidfile"))
	for ((k = 0; k < 4; k++)); do
		f=$(ls "$dir"/node$k-*.json)
		why=$(check_report "$f" 4 false any 2>&1) || { fail "snapshot while running: $why"; return; }
	done
	echo "ok - snapshot: every rank's report appears (final false) while the run goes on"
	sleep 1.2 # one more snapshot with more bytes in it
	victim=$(awk '$1 == 2 { print $2 }' "$pidfile")
	kill -9 "$victim"
	wait "$bench_pid" 2>/dev/null
	f=$dir/node2-$victim.json
	why=$(check_report "$f" 4 false any 2>&1) || { fail "SIGKILL: $why"; return; }
	if grep -q "^fabriclab: node2 " "$err"; then
		fail "SIGKILL: rank 2 printed a final summary line"
		return
	fi
	echo "ok - SIGKILL: rank 2 left its last snapshot, whole and parseable"
}

start=$SECONDS
healthy 4
healthy 8
unload
snapshot_and_kill 2>>"$tmp/shell.err"
echo "# $((SECONDS - start)) s"
[ "$failures" -eq 0 ] || { echo "# $failures failed (outputs in $tmp kept)"; keep=1; exit 1; }
exit 0
