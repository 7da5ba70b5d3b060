#!/usr/bin/env bash
# Profiler mode under a real LTTng session (docs/profiler.md, docs/tracing.md): the player
# (test_profiler_netjoin --play: 6 ranks in 2 processes, both roles loaded, profiler v5)
# recorded with fabriclab:* enabled. Profiler links must give the events net mode gives:
# conn_up (transport nccl) and conn_down per link, request_ready and request_done per step,
# hop_snapshot and a verdict per process; the request_done bytes and counts add up, hop view
# by hop view and process by process, exactly to the reports' profiler-mode hops; profiler hop
# ids never equal the net-mode hop ids of the same names; each verdict event says its report's
# verdict; and `fabriclab trace` names the same cluster verdict as `fabriclab report`, for a
# healthy job (none) and one slow link (link).
# The daemon: a per-user `lttng-sessiond --daemonize --no-kernel` in an LTTNG_HOME of this
# test's own, killed by its PID at the end (as test_trace.sh; as root, the user is nobody).
# Usage: test_trace_profiler.sh [BUILD_DIR]   (FABRICLAB_KEEP_TMP=1 keeps the traces and reports)
set -u
build=${1:-build}
tool=$build/fabriclab
player=$build/tests/test_profiler_netjoin
provider=$build/libfabriclab-lttng.so
unset RANK WORLD_SIZE FABRICLAB_FAULT FABRICLAB_NODE_NAME FABRICLAB_RANK FABRICLAB_REPORT \
	FABRICLAB_LTTNG_PROVIDER LTTNG_UST_REGISTER_TIMEOUT NCCL_DEBUG
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-trace-prof.XXXXXX")
chmod 755 "$tmp"
own_sessiond= sessions=()
as=()
[ "$(id -u)" -eq 0 ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
home=$tmp/lttnghome
mkdir -m 777 "$home"
user=("${as[@]}" env HOME="$home" LTTNG_HOME="$home")
pidfile=$home/.lttng/lttng-sessiond.pid
lt() { "${user[@]}" lttng "$@"; }

cleanup() {
	for s in "${sessions[@]}"; do lt destroy "$s" >/dev/null 2>&1; done
	if [ -n "$own_sessiond" ]; then
		kill "$own_sessiond" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$own_sessiond" 2>/dev/null || break; sleep 0.2; done
	fi
	[ -n "${FABRICLAB_KEEP_TMP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "not ok - $*"; failures=$((failures + 1)); }
for c in lttng lttng-sessiond babeltrace2 python3; do
	command -v "$c" >/dev/null || { echo "not ok - $c missing (scripts/deps.sh installs it)"; exit 1; }
done
for f in "$tool" "$player" "$provider"; do
	[ -e "$f" ] || { echo "not ok - $f missing (run make)"; exit 1; }
done
# The system daemon would take this user's registrations too: its traces are not ours to judge.
if [ -f /var/run/lttng/lttng-sessiond.pid ] &&
	kill -0 "$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null)" 2>/dev/null; then
	echo "skipped: a system lttng-sessiond is running (this test starts its own)"
	exit 77
fi
"${user[@]}" lttng-sessiond --daemonize --no-kernel >"$tmp/sessiond.log" 2>&1 ||
	{ echo "not ok - lttng-sessiond did not start: $(tail -n 2 "$tmp/sessiond.log")"; exit 1; }
own_sessiond=$(cat "$pidfile" 2>/dev/null)
kill -0 "$own_sessiond" 2>/dev/null || { echo "not ok - no live lttng-sessiond in $pidfile"; exit 1; }

traced() { # name, player args after the version...
	local name=$1 s="flprof$$$1"
	shift
	mkdir -m 777 "$tmp/$name" "$tmp/$name/reports"
	lt create "$s" --output="$tmp/$name/trace" >/dev/null && sessions+=("$s") &&
		lt enable-event -u 'fabriclab:*' -s "$s" >/dev/null &&
		lt add-context -u -t vpid -s "$s" >/dev/null &&
		lt start "$s" >/dev/null || { fail "$name: cannot set up the session"; return 1; }
	"${user[@]}" FABRICLAB_LTTNG_PROVIDER="$(realpath "$provider")" timeout 60 "$player" --play \
		"$tmp/$name/reports" 5 "$@" >"$tmp/$name/play.out" 2>&1
	local rc=$?
	lt stop "$s" >/dev/null 2>&1
	lt destroy "$s" >/dev/null 2>&1
	[ "$rc" -eq 0 ] || { fail "$name: the player failed: $(tail -n 3 "$tmp/$name/play.out")"; return 1; }
}

check_events() { # name
	babeltrace2 "$tmp/$1/trace" >"$tmp/$1/events.txt" 2>"$tmp/$1/bt.err" ||
		{ echo "babeltrace2 cannot read the trace: $(tail -n 2 "$tmp/$1/bt.err")"; return 1; }
	python3 - "$tmp/$1/events.txt" "$tmp/$1/reports" <<'EOF'
import collections, glob, json, re, sys
events, reports = sys.argv[1], sys.argv[2]
line_re = re.compile(r'fabriclab:(\w+): .*?\{ vpid = (\d+) \}, \{ (.*) \}$')
pair_re = re.compile(r'(\w+) = ("(?:[^"\\]|\\.)*"|[^,]+)')
kinds, conns, ids = collections.Counter(), {}, {"nccl": set(), "net": set()}
done_bytes, done_msgs, verdicts = collections.Counter(), collections.Counter(), {}
for line in open(events):
    m = line_re.search(line)
    if not m:
        continue
    name, vpid = m.group(1), int(m.group(2))
    f = {k: v.strip('"') for k, v in pair_re.findall(m.group(3))}
    kinds[name] += 1
    if name == "conn_up":
        prof = f["transport"] == "nccl"
        ids["nccl" if prof else "net"].add((f["src_node"], f["src_dev"], f["dst_node"], f["dst_dev"], f["hop_id"]))
        if prof:
            conns[(vpid, f["conn_id"])] = (vpid, f["view"], f["src_node"], f["src_dev"], f["dst_node"],
                                           f["dst_dev"], int(f["src_rank"]), int(f["dst_rank"]))
    elif name == "request_done":
        hop = conns.get((vpid, f["conn_id"]))
        if hop is None:
            sys.exit(f"request_done of connection {f['conn_id']} (pid {vpid}) without a profiler conn_up")
        done_bytes[hop] += int(f["bytes"])
        done_msgs[hop] += 1
    elif name == "verdict":
        verdicts[vpid] = f["kind"]
for k in ("conn_up", "conn_down", "request_ready", "request_done", "hop_snapshot", "verdict"):
    if kinds[k] == 0:
        sys.exit(f"no fabriclab:{k} event (events: {dict(kinds)})")
# 6 ranks x 2 channels x (send, recv): 24 profiler links; as many net connections.
if len(conns) != 24 or kinds["conn_up"] != 48:
    sys.exit(f"expected 24 profiler links among 48 conn_up: {len(conns)}, {dict(kinds)}")
names = lambda s: {x[:4] for x in s}
for n in names(ids["nccl"]) & names(ids["net"]):
    a = {x[4] for x in ids["nccl"] if x[:4] == n}
    b = {x[4] for x in ids["net"] if x[:4] == n}
    if a & b:
        sys.exit(f"profiler and net hops {n} share hop ids {a & b}")
if not names(ids["nccl"]) & names(ids["net"]):
    sys.exit("no profiler link was named as a net connection (the net-role join)")
want_bytes, want_msgs, want_verdicts = {}, {}, {}
for path in glob.glob(f"{reports}/*.json"):
    r = json.load(open(path))
    want_verdicts[r["pid"]] = r["verdict"]["kind"]
    for h in r["hops"]:
        if h.get("mode") != "profiler":
            continue
        key = (r["pid"], h["view"], h["src_node"], h["src_dev"], h["dst_node"], h["dst_dev"],
               h["src_rank"], h["dst_rank"])
        want_bytes[key], want_msgs[key] = h["bytes"], h["messages"]
if len(want_verdicts) != 2:
    sys.exit(f"expected 2 reports, found {len(want_verdicts)}")
if dict(done_bytes) != want_bytes:
    sys.exit(f"request_done bytes per hop view {dict(done_bytes)} != the reports' {want_bytes}")
if dict(done_msgs) != want_msgs:
    sys.exit(f"request_done events per hop view {dict(done_msgs)} != the reports' {want_msgs}")
if verdicts != want_verdicts:
    sys.exit(f"verdict events {verdicts} != the reports' own verdicts {want_verdicts}")
print(f"{sum(kinds.values())} events, {sum(done_msgs.values())} request_done adding up to "
      f"{sum(done_bytes.values())} bytes over {len(done_bytes)} profiler hop views")
EOF
}

same_verdict() { # name, expected kind
	"$tool" report --json "$tmp/$1/reports" >"$tmp/$1/report.json" 2>"$tmp/$1/report.err" ||
		{ echo "fabriclab report failed: $(tail -n 2 "$tmp/$1/report.err")"; return 1; }
	"$tool" trace --json "$tmp/$1/trace" >"$tmp/$1/trace.json" 2>"$tmp/$1/trace.err" ||
		{ echo "fabriclab trace failed: $(tail -n 2 "$tmp/$1/trace.err")"; return 1; }
	python3 - "$tmp/$1/report.json" "$tmp/$1/trace.json" "$2" <<'EOF'
import json, sys
rep, tr, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
a, b = rep["verdict"], tr["verdict"]
if (a["kind"], a["hop"], a["node"], a["dev"]) != (b["kind"], b["hop"], b["node"], b["dev"]):
    sys.exit(f"report says {a['kind']} {a['hop']}, trace says {b['kind']} {b['hop']} ({b['reason']})")
if a["kind"] != want:
    sys.exit(f"report and trace agree on {a['kind']}, expected {want}: {a['reason']}")
hop = "" if a["hop"] is None else f" {a['hop']['src_node']}->{a['hop']['dst_node']}"
print(f"both say {a['kind']}{hop}")
EOF
}

for run in "healthy none" "slowlink link 1 2"; do
	set -- $run
	name=$1 want=$2
	shift 2
	traced "$name" "$@" || continue
	why=$(check_events "$name" 2>&1) && echo "ok - $name: $why" || fail "$name: $why"
	why=$(same_verdict "$name" "$want" 2>&1) && echo "ok - $name: $why" || fail "$name: $why"
done
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all profiler-mode trace checks passed"
