#!/usr/bin/env bash
# `fabriclab trace --perfetto` and LTTng's discarded events, with a real session daemon
# (docs/tracing.md):
#  - an 8-rank `fabriclab lab halve-cable --target node3` recorded WITHOUT the vpid context:
#    the events' own pid field tells the 8 processes apart; the timeline file passes a JSON
#    schema of Chrome's trace event format (chrome_trace_schema.json, ours) and what Perfetto
#    needs of it: slices on one row nest, each request's phases lie inside it; it has a
#    process per rank, a row per hop view and per connection, one request slice per
#    request_done event babeltrace2 reads (bytes adding up to the reports' per hop), counters
#    per hop, the throttle fault and the live finding on node3 as instant events with their
#    text, and the verdict (node3) as the last, global, event;
#  - a channel of 2 sub-buffers of 4 KiB in discard mode, read every 2 s: `lttng stop` says how many events
#    were discarded, and `fabriclab trace` says the same number in its text, its --json and
#    the timeline's otherData, and marks windows as lacking data.
# A summary of the timeline (rows per process, counts, the instants) is kept in
# $FABRICLAB_TEST_ARTIFACTS (default build/test-artifacts)/trace_timeline/, with the files.
# The daemon: a per-user `lttng-sessiond --daemonize --no-kernel` in an LTTNG_HOME of this
# test's own, killed by its PID at the end (as test_trace.sh; as root, the user is nobody).
# Usage: test_trace_timeline.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$(cd "$(dirname "$build/fabriclab")" && pwd)/fabriclab
here=$(cd "$(dirname "$0")" && pwd)
schema=$here/chrome_trace_schema.json
artifacts=${FABRICLAB_TEST_ARTIFACTS:-$build/test-artifacts}/trace_timeline
export FABRICLAB_SOCKET_IFNAME=lo
unset FABRICLAB_FAULT FABRICLAB_REPORT FABRICLAB_REPORT_INTERVAL FABRICLAB_LIVE_WINDOW_MS \
	FABRICLAB_LTTNG_PROVIDER LTTNG_UST_REGISTER_TIMEOUT NCCL_DEBUG RANK WORLD_SIZE
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-timeline.XXXXXX")
chmod 755 "$tmp"
own_sessiond= session= keep=
as=()
[ "$(id -u)" -eq 0 ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
home=$tmp/lttnghome
mkdir -m 777 "$home"
user=("${as[@]}" env HOME="$home" LTTNG_HOME="$home")
lt() { "${user[@]}" lttng "$@"; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3

cleanup() {
	[ -n "$session" ] && lt destroy "$session" >/dev/null 2>&1
	if [ -n "$own_sessiond" ]; then
		kill "$own_sessiond" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$own_sessiond" 2>/dev/null || break; sleep 0.2; done
	fi
	[ -n "$keep" ] || rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "not ok - $*"; failures=$((failures + 1)); }

for c in lttng lttng-sessiond babeltrace2; do
	command -v "$c" >/dev/null || { echo "not ok - $c missing (scripts/deps.sh installs it)"; exit 1; }
done
"$py" -c 'import jsonschema' 2>/dev/null ||
	{ echo "not ok - python3-jsonschema missing (scripts/deps.sh installs it)"; exit 1; }
[ -x "$tool" ] && [ -f "$build/libfabriclab-lttng.so" ] || { echo "not ok - run make first"; exit 1; }
if [ -f /var/run/lttng/lttng-sessiond.pid ] &&
	kill -0 "$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null)" 2>/dev/null; then
	echo "skipped: a system lttng-sessiond runs (left alone); the test's ranks would register with it too"
	exit 77
fi
"${user[@]}" lttng-sessiond --daemonize --no-kernel >"$tmp/sessiond.log" 2>&1 ||
	{ echo "not ok - lttng-sessiond did not start: $(tail -n 2 "$tmp/sessiond.log")"; exit 1; }
own_sessiond=$(cat "$home/.lttng/lttng-sessiond.pid" 2>/dev/null)
kill -0 "$own_sessiond" 2>/dev/null || { echo "not ok - lttng-sessiond started, no live pid"; exit 1; }

# A session recording fabriclab:* with no context added; extra: a channel's options.
session_start() { # name, enable-channel options...
	local name=$1 s="fltl$$$1"
	shift
	mkdir -m 777 "$tmp/$name"
	lt create "$s" --output="$tmp/$name/trace" >/dev/null && session=$s || return 1
	if [ $# -gt 0 ]; then
		lt enable-channel -u small -s "$s" "$@" >/dev/null &&
			lt enable-event -u 'fabriclab:*' -c small -s "$s" >/dev/null || return 1
	else
		lt enable-event -u 'fabriclab:*' -s "$s" >/dev/null || return 1
	fi
	lt start "$s" >/dev/null
}

session_stop() { # name: lttng stop's words go to $tmp/NAME/stop.txt
	lt stop "$session" >"$tmp/$1/stop.txt" 2>&1
	lt destroy "$session" >/dev/null 2>&1
	session=
}

# The timeline against the schema, babeltrace2's events and the reports (prints a summary).
check_timeline() { # name
	local d=$tmp/$1
	babeltrace2 "$d/trace" >"$d/events.txt" 2>"$d/bt.err" ||
		{ echo "babeltrace2 cannot read the trace: $(tail -n 2 "$d/bt.err")"; return 1; }
	"$py" - "$schema" "$d/timeline.json" "$d/events.txt" "$d/lab" "$d/summary.json" <<'EOF'
import collections, glob, json, re, sys
import jsonschema
schema, tl = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(tl), key=lambda e: list(e.path))
if errors:
    e = errors[0]
    sys.exit(f"{len(errors)} schema errors, the first at {list(e.path)}: {e.message[:200]}")
ev = tl["traceEvents"]
# babeltrace2's own reading: request_done per (pid field, hop), no vpid context in the trace.
line_re = re.compile(r'fabriclab:(\w+): \{ cpu_id = \d+ \}, \{ pid = (\d+), (.*) \}$')
pair_re = re.compile(r'(\w+) = ("(?:[^"\\]|\\.)*"|[^,]+)')
conns, done, pids = {}, collections.Counter(), set()
for line in open(sys.argv[3]):
    if "vpid" in line:
        sys.exit("the trace has a vpid context: this test records without one")
    m = line_re.search(line)
    if not m:
        continue
    name, pid = m.group(1), int(m.group(2))
    f = {k: v.strip('"') for k, v in pair_re.findall(m.group(3))}
    pids.add(pid)
    if name == "conn_up":
        conns[(pid, f["conn_id"])] = (f["src_node"], f["dst_node"], f["view"])
    elif name == "request_done":
        done[conns[(pid, f["conn_id"])]] += int(f["bytes"])
if len(pids) != 8:
    sys.exit(f"the events name {len(pids)} pids, not the 8 ranks'")
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
if len(procs) != 8 or len({re.search(r"pid (\d+)", n).group(1) for n in procs.values()}) != 8:
    sys.exit(f"expected 8 processes with their own pids: {sorted(procs.values())}")
# Perfetto's rule for slices on one row: they nest (a child lies inside the open parent).
rows = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "X":
        rows[(e["pid"], e["tid"])].append(e)
requests, phases_outside = collections.Counter(), 0
for key, sl in rows.items():
    if key not in threads:
        sys.exit(f"slices on a row without a name: {key}")
    sl.sort(key=lambda e: (e["ts"], -e["dur"]))
    stack = []
    for e in sl:
        end = e["ts"] + e["dur"]
        while stack and e["ts"] >= stack[-1] - 1e-6:
            stack.pop()
        if stack and end > stack[-1] + 1e-6:
            sys.exit(f"slice {e['name']} at {e['ts']} overlaps its neighbour on row {threads[key]}")
        if e["cat"] == "phase" and not stack:
            phases_outside += 1
        stack.append(end)
        if e["cat"] == "request":
            m = re.match(r"conn \d+ (\S+) -> (\S+) (send|recv)", threads[key])
            requests[(m.group(1).split("/")[0], m.group(2).split("/")[0], m.group(3))] += e["args"]["bytes"]
if phases_outside:
    sys.exit(f"{phases_outside} phase slices outside their request")
if requests != done:
    sys.exit(f"request slices' bytes per hop view {dict(requests)} != babeltrace2's request_done {dict(done)}")
reports = {}
for path in glob.glob(f"{sys.argv[4]}/*/reports/*.json"):
    r = json.load(open(path))
    for h in r["hops"]:
        reports[(h["src_node"], h["dst_node"], h["view"])] = h["bytes"]
if reports != dict(requests):
    sys.exit(f"request slices' bytes {dict(requests)} != the reports' {reports}")
hop_rows = collections.Counter(procs[p] for (p, t), n in threads.items() if n.startswith("hop "))
if len(hop_rows) != 8 or set(hop_rows.values()) != {2}:
    sys.exit(f"expected a row per hop view, 2 in each process: {dict(hop_rows)}")
counters = {e["name"] for e in ev if e["ph"] == "C" and "wire GB/s" in e["args"] and "peer wait ms" in e["args"]}
if len(counters) != 16:
    sys.exit(f"expected wire GB/s and peer wait counters for the 16 hop views: {sorted(counters)}")
inst = [e for e in ev if e["ph"] == "i"]
def on(e): return procs.get(e["pid"], "")
faults = [e for e in inst if e["cat"] == "fault" and "throttle" in e["name"] and on(e).startswith("node3")]
found = [e for e in inst if e["cat"] == "live_finding" and "appeared" in e["name"] and "node3/lo" in e["name"]]
last = max((e for e in ev if "ts" in e and e["ph"] != "M"), key=lambda e: e["ts"])
if not faults:
    sys.exit("no fault instant on node3's process")
if not found:
    sys.exit("no live finding instant naming node3/lo")
if last["cat"] != "verdict" or last.get("s") != "g" or "node3" not in last["name"]:
    sys.exit(f"the last event is not the global verdict naming node3: {last['name']}")
if tl["otherData"]["discarded_events"] != 0:
    sys.exit(f"otherData says {tl['otherData']['discarded_events']} events discarded in a run that lost none")
summary = {"processes": sorted(procs.values()), "rows": len(threads), "hop_rows": sum(hop_rows.values()),
           "request_slices": sum(1 for sl in rows.values() for e in sl if e["cat"] == "request"),
           "fault": faults[0]["name"], "live_finding": found[0]["name"], "verdict": last["name"],
           "other_data": tl["otherData"]}
json.dump(summary, open(sys.argv[5], "w"), indent=1)
print(f"{len(procs)} processes, {len(threads)} rows ({sum(hop_rows.values())} hop views), "
      f"{summary['request_slices']} requests adding up to the reports; "
      f"'{found[0]['name']}'; '{last['name']}'")
EOF
}

keep_artifacts() { # name files...: each kept as NAME-FILE
	local name=$1 f
	shift
	mkdir -p "$artifacts" || return
	for f in "$@"; do cp "$f" "$artifacts/$name-$(basename "$f")"; done
}

# One halved-cable lab run: the live finding needs enough traffic in its windows, which a
# loaded machine sometimes does not give; such a run goes again (3 at most: 1 of 3 must have a
# live finding on node3). Only that is retried: this test's subject (the timeline, its processes,
# no event discarded) fails the run it is wrong in, and a live judge that never names node3
# fails all 3.
timeline() {
	local try why
	for try in 1 2 3; do
		rm -rf "${tmp:?}/lab$try"
		session_start "lab$try" || { fail "timeline: cannot set up the session"; return; }
		"${user[@]}" timeout --kill-after=5 90 "$tool" lab --dir "$tmp/lab$try/lab" halve-cable \
			--target node3 -n 8 -s 8 >"$tmp/lab$try/lab.out" 2>"$tmp/lab$try/lab.err"
		local rc=$?
		session_stop "lab$try"
		[ "$rc" -eq 0 ] || { fail "timeline: fabriclab lab exited $rc: $(tail -n 3 "$tmp/lab$try/lab.err")"; return; }
		local t0=$SECONDS
		"$tool" trace "$tmp/lab$try/trace" --perfetto "$tmp/lab$try/timeline.json" \
			>"$tmp/lab$try/trace.txt" 2>&1 ||
			{ fail "timeline: fabriclab trace --perfetto: $(tail -n 2 "$tmp/lab$try/trace.txt")"; return; }
		local took=$((SECONDS - t0))
		grep -q "^fabriclab trace: .* events from 8 processes" "$tmp/lab$try/trace.txt" ||
			{ fail "timeline: without vpid the trace did not split into 8 processes: $(head -n 1 "$tmp/lab$try/trace.txt")"; return; }
		grep -q "^discarded by LTTng: 0 events" "$tmp/lab$try/trace.txt" ||
			{ fail "timeline: no 'discarded by LTTng: 0 events' line"; return; }
		why=$(check_timeline "lab$try" 2>&1) && break
		case $why in
		*"no live finding"*) echo "# run $try: $why; again" ;;
		*) fail "timeline: $why"; keep=1; return ;;
		esac
		[ "$try" -eq 3 ] && { fail "timeline: 3 runs without a live finding on node3"; return; }
	done
	keep_artifacts timeline "$tmp/lab$try/timeline.json" "$tmp/lab$try/summary.json" \
		"$tmp/lab$try/trace.txt"
	echo "ok - lab halve-cable at 8 ranks, no vpid context, timeline in ${took} s: $why"
}

# 2 sub-buffers of 4 KiB (the smallest lttng takes) in discard mode, read by the consumer
# daemon only every 2 s (a read timer: lttng-ust then wakes the consumer by that timer, not
# when a sub-buffer fills), cannot hold 4 ranks' requests of one bench run whatever the
# machine's load; without the timer a fast consumer sometimes kept up and nothing was lost.
# The number lttng stop warns of is the number every output of ours says.
discarded() {
	local d=$tmp/tiny want got_text got_json
	session_start tiny --discard --subbuf-size=4096 --num-subbuf=2 --read-timer=2000000 ||
		{ fail "discarded: cannot set up the session"; return; }
	"${user[@]}" timeout 60 "$tool" bench --ranks 4 -b 64K -e 64K -n 200 -w 0 -c 1 \
		>"$d/bench.out" 2>"$d/bench.err"
	local rc=$?
	session_stop tiny
	[ "$rc" -eq 0 ] || { fail "discarded: bench exited $rc: $(tail -n 2 "$d/bench.err")"; return; }
	want=$(sed -n 's/.*Warning: \([0-9]*\) events were discarded.*/\1/p' "$d/stop.txt")
	[ -n "$want" ] || { fail "discarded: lttng stop reported no discarded events: $(cat "$d/stop.txt")"; return; }
	"$tool" trace "$d/trace" --perfetto "$d/timeline.json" >"$d/trace.txt" 2>&1 ||
		{ fail "discarded: fabriclab trace: $(tail -n 2 "$d/trace.txt")"; return; }
	got_text=$(sed -n 's/^discarded by LTTng: \([0-9]*\) events.*/\1/p' "$d/trace.txt")
	"$tool" trace "$d/trace" --json >"$d/trace.json" 2>"$d/trace.err" ||
		{ fail "discarded: fabriclab trace --json: $(tail -n 2 "$d/trace.err")"; return; }
	got_json=$("$py" -c '
import json, sys
t = json.load(open(sys.argv[1]))["trace"]
o = json.load(open(sys.argv[2]))["otherData"]
lost = sum(w["discarded_events"] > 0 for h in t["hops"] for w in h["windows"])
assert sum(d["events"] for d in t["discards"]) == t["discarded_events"], "discards[] do not add up"
assert lost > 0, "no window marked as lacking data"
print(t["discarded_events"], o["discarded_events"])' "$d/trace.json" "$d/timeline.json" 2>&1) ||
		{ fail "discarded: $got_json"; return; }
	[ "$got_text" = "$want" ] && [ "$got_json" = "$want $want" ] ||
		{ fail "discarded: lttng stop says $want, fabriclab trace text '$got_text', json and timeline '$got_json'"; return; }
	grep -q "windows lack data: LTTng discarded events in them" "$d/trace.txt" ||
		{ fail "discarded: the text marks no window as lacking data"; return; }
	keep_artifacts discarded "$d/trace.txt"
	echo "ok - 2 x 4 KiB sub-buffers: lttng stop and fabriclab trace (text, --json, timeline) both say $want events discarded"
}

start=$SECONDS
timeline
discarded
echo "# $((SECONDS - start)) s; artifacts in $artifacts"
[ "$failures" -eq 0 ] || { echo "# $failures failed (outputs in $tmp kept)"; keep=1; exit 1; }
