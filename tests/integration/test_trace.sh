#!/usr/bin/env bash
# LTTng tracing end to end, with a real session daemon (docs/tracing.md):
#  - 4 ranks of `fabriclab bench` traced, every hop paced to FABRICLAB_LINK_RATE=2gbit so a
#    loaded machine's noise stays below the verdict's threshold: every event kind present;
#    the bytes of the request_done events add up, hop by hop and process by process,
#    exactly to the reports' bytes (and their count to the reports' messages); each
#    process's verdict event names its report's verdict; `fabriclab trace` names the same
#    cluster verdict (kind and hop) and the same injected faults as `fabriclab report`, for
#    a healthy run (none) and for one cable at half speed by FABRICLAB_FAULT throttle (link,
#    that hop);
#  - ABI v9 (no finalize): the verdict events come from the reports the destructor writes,
#    and the tracepoints detached there leave a clean exit;
#  - the plugin links no LTTng library, and loads and runs with no session daemon, with the
#    provider object absent, and (as root) with liblttng-ust itself unreadable;
#  - a session daemon socket that accepts but never answers stalls the job by no more
#    than LTTNG_UST_REGISTER_TIMEOUT (a fake listener in an isolated LTTNG_HOME).
# The daemon: a per-user `lttng-sessiond --daemonize --no-kernel` in an LTTNG_HOME of this
# test's own, started here and killed by its PID at the end. Only processes of that user
# with that LTTNG_HOME register with it, so other jobs on the machine cannot add events to
# its traces, and a system daemon (/var/run/lttng) is never touched. As root that user is
# nobody (setpriv), as reference/test-infra.md section 2.3 does.
# Usage: test_trace.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
provider=$build/libfabriclab-lttng.so
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP FABRICLAB_FAULT \
	FABRICLAB_NODE_NAME FABRICLAB_RANK FABRICLAB_REPORT FABRICLAB_REPORT_INTERVAL \
	FABRICLAB_LTTNG_PROVIDER FABRICLAB_LINK_RATE LTTNG_UST_REGISTER_TIMEOUT NCCL_DEBUG
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-trace.XXXXXX")
chmod 755 "$tmp"
own_sessiond= sessions=() listener= keep=
as_root=0 as=()
[ "$(id -u)" -eq 0 ] && as_root=1 as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
home=$tmp/lttnghome
mkdir -m 777 "$home"
user=("${as[@]}" env HOME="$home" LTTNG_HOME="$home")
pidfile=$home/.lttng/lttng-sessiond.pid
lt() { "${user[@]}" lttng "$@"; }

cleanup() {
	for s in "${sessions[@]}"; do lt destroy "$s" >/dev/null 2>&1; done
	[ -n "$listener" ] && kill "$listener" 2>/dev/null
	if [ -n "$own_sessiond" ]; then
		kill "$own_sessiond" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$own_sessiond" 2>/dev/null || break; sleep 0.2; done
	fi
	[ -n "$keep" ] || rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "not ok - $*"; failures=$((failures + 1)); }
skipped=()
# A check that cannot run here: said now, counted, and the reason repeated as the last line.
skip() { echo "skip - $*"; skipped+=("$*"); }
need() { command -v "$1" >/dev/null || { echo "not ok - $1 missing (scripts/deps.sh installs it)"; exit 1; }; }
need lttng
need lttng-sessiond
need babeltrace2
need python3
[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
[ -f "$provider" ] || { echo "not ok - $provider missing (run make)"; exit 1; }

# The system daemon: the test's user registers with it too, when it runs.
system_daemon() {
	local f=/var/run/lttng/lttng-sessiond.pid
	[ -f "$f" ] && kill -0 "$(cat "$f" 2>/dev/null)" 2>/dev/null
}

start_sessiond() {
	"${user[@]}" lttng-sessiond --daemonize --no-kernel >"$tmp/sessiond.log" 2>&1 ||
		{ echo "not ok - lttng-sessiond did not start: $(tail -n 2 "$tmp/sessiond.log")"; exit 1; }
	own_sessiond=$(cat "$pidfile" 2>/dev/null)
	kill -0 "$own_sessiond" 2>/dev/null ||
		{ echo "not ok - lttng-sessiond started but $pidfile names no live process"; exit 1; }
}

# A bench small enough for a loaded 2-core machine, big enough for a verdict (16 MiB a hop).
bench() { # out_prefix, extra env...
	local out=$1
	shift
	"${user[@]}" "$@" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET timeout 60 "$tool" bench --ranks 4 -b 512K \
		-e 2M -n 3 -w 1 -c 1 >"$out.out" 2>"$out.err"
}

# Runs bench inside a session recording fabriclab:* with the vpid context.
traced() { # name, extra env...
	local name=$1 s="fltest$$$1"
	shift
	mkdir -m 777 "$tmp/$name"
	lt create "$s" --output="$tmp/$name/trace" >/dev/null &&
		sessions+=("$s") &&
		lt enable-event -u 'fabriclab:*' -s "$s" >/dev/null &&
		lt add-context -u -t vpid -s "$s" >/dev/null &&
		lt start "$s" >/dev/null || { fail "$name: cannot set up the session"; return 1; }
	bench "$tmp/$name/bench" FABRICLAB_REPORT_DIR="$tmp/$name/reports" "$@"
	local rc=$?
	lt stop "$s" >/dev/null 2>&1
	lt destroy "$s" >/dev/null 2>&1
	[ "$rc" -eq 0 ] || { fail "$name: bench failed: $(tail -n 2 "$tmp/$name/bench.err")"; return 1; }
}

# The events against the reports, with babeltrace2's own reader (not fabriclab's).
check_events() { # name
	babeltrace2 "$tmp/$1/trace" >"$tmp/$1/events.txt" 2>"$tmp/$1/bt.err" ||
		{ echo "babeltrace2 cannot read the trace: $(tail -n 2 "$tmp/$1/bt.err")"; return 1; }
	python3 - "$tmp/$1/events.txt" "$tmp/$1/reports" <<'EOF'
import collections, glob, json, re, sys
events, reports = sys.argv[1], sys.argv[2]
line_re = re.compile(r'fabriclab:(\w+): .*?\{ vpid = (\d+) \}, \{ (.*) \}$')
pair_re = re.compile(r'(\w+) = ("(?:[^"\\]|\\.)*"|[^,]+)')
kinds = collections.Counter()
conns, done_bytes, done_msgs, verdicts = {}, collections.Counter(), collections.Counter(), {}
for line in open(events):
    m = line_re.search(line)
    if not m:
        continue
    name, vpid = m.group(1), int(m.group(2))
    f = {k: v.strip('"') for k, v in pair_re.findall(m.group(3))}
    kinds[name] += 1
    if name == "conn_up":
        conns[(vpid, f["conn_id"])] = (vpid, f["view"], f["src_node"], f["src_dev"], f["dst_node"], f["dst_dev"])
    elif name == "request_done":
        hop = conns.get((vpid, f["conn_id"]))
        if hop is None:
            sys.exit(f"request_done of connection {f['conn_id']} (pid {vpid}) without its conn_up")
        done_bytes[hop] += int(f["bytes"])
        done_msgs[hop] += 1
    elif name == "verdict":
        verdicts[vpid] = f["kind"]
for k in ("conn_up", "conn_down", "request_posted", "request_ready", "request_done", "hop_snapshot", "verdict"):
    if kinds[k] == 0:
        sys.exit(f"no fabriclab:{k} event (events: {dict(kinds)})")
if kinds["conn_up"] != 8 or kinds["verdict"] != 4:
    sys.exit(f"expected 8 conn_up and 4 verdict events: {dict(kinds)}")
want_bytes, want_msgs, want_verdicts = {}, {}, {}
for path in glob.glob(f"{reports}/*.json"):
    r = json.load(open(path))
    want_verdicts[r["pid"]] = r["verdict"]["kind"]
    for h in r["hops"]:
        key = (r["pid"], h["view"], h["src_node"], h["src_dev"], h["dst_node"], h["dst_dev"])
        want_bytes[key], want_msgs[key] = h["bytes"], h["messages"]
if len(want_verdicts) != 4:
    sys.exit(f"expected 4 reports, found {len(want_verdicts)}")
if dict(done_bytes) != want_bytes:
    sys.exit(f"request_done bytes per hop {dict(done_bytes)} != the reports' {want_bytes}")
if dict(done_msgs) != want_msgs:
    sys.exit(f"request_done events per hop {dict(done_msgs)} != the reports' messages {want_msgs}")
if verdicts != want_verdicts:
    sys.exit(f"verdict events {verdicts} != the reports' own verdicts {want_verdicts}")
print(f"{sum(kinds.values())} events, {sum(done_msgs.values())} request_done adding up to "
      f"{sum(done_bytes.values())} bytes over {len(done_bytes)} hop views")
EOF
}

# `fabriclab trace --json` against `fabriclab report --json` of the same run.
same_verdict() { # name, expected kind
	"$tool" report --json "$tmp/$1/reports" >"$tmp/$1/report.json" 2>"$tmp/$1/report.err" ||
		{ echo "fabriclab report failed: $(tail -n 2 "$tmp/$1/report.err")"; return 1; }
	"$tool" trace --json "$tmp/$1/trace" >"$tmp/$1/trace.json" 2>"$tmp/$1/trace.err" ||
		{ echo "fabriclab trace failed: $(tail -n 2 "$tmp/$1/trace.err")"; return 1; }
	"$tool" trace --window 0.05 "$tmp/$1/trace" >"$tmp/$1/trace.txt" 2>&1 ||
		{ echo "fabriclab trace (text) failed: $(tail -n 2 "$tmp/$1/trace.txt")"; return 1; }
	python3 - "$tmp/$1/report.json" "$tmp/$1/trace.json" "$2" <<'EOF'
import json, sys
rep, tr, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
a, b = rep["verdict"], tr["verdict"]
if set(rep) - set(tr):
    sys.exit(f"trace --json lacks {set(rep) - set(tr)} of the report's shape")
if (a["kind"], a["hop"], a["node"], a["dev"]) != (b["kind"], b["hop"], b["node"], b["dev"]):
    # The trace's figures are the reports' rebuilt from events (request times from their own
    # stamps): a case at the edge of the model's confidence may fall on either side of it, as
    # not-enough-evidence on one and named on the other. Another run; any other split fails.
    if "not-enough-evidence" in (a["kind"], b["kind"]):
        print(f"report says {a['kind']}, trace says {b['kind']} ({a['reason']} | {b['reason']})")
        sys.exit(3)
    sys.exit(f"report says {a['kind']} {a['hop']}, trace says {b['kind']} {b['hop']} ({b['reason']})")
# A healthy run names nothing: `none`, or not sure (none needs 0.9, and on two loaded cores a
# starved rank may read one hop 0.7x, as in 1 full suite run of 4 on 2026-12-07).
named_nothing = want == "none" and a["kind"] == "not-enough-evidence"
if a["kind"] != want and not named_nothing:
    print(f"report and trace agree on {a['kind']}, expected {want}: {a['reason']}")
    sys.exit(3)
for x, y in zip(rep["hops"], tr["hops"]):
    if (x["src_node"], x["dst_node"], x["bytes"], x["messages"]) != (y["src_node"], y["dst_node"], y["bytes"], y["messages"]):
        sys.exit(f"hop {x['src_node']}->{x['dst_node']}: report {x['bytes']} B/{x['messages']}, trace {y['bytes']} B/{y['messages']}")
if rep.get("injected", []) != tr.get("injected", []):
    sys.exit(f"injected: report {rep.get('injected')}, trace {tr.get('injected')}")
if not tr["trace"]["hops"] or not all(h["windows"] for h in tr["trace"]["hops"]):
    sys.exit("trace --json has no windows")
hop = "" if a["hop"] is None else f" {a['hop']['src_node']}->{a['hop']['dst_node']}"
print(f"both say {a['kind']}{hop}, ratio {a['ratio']:.2f} vs {b['ratio']:.2f}")
EOF
}

# The verdict itself is the report's to get right (test_report_plugin, the lab): a run it
# misjudges on a machine too loaded to pace evenly is run again, up to 3 times (1 of 3 must give
# the expected kind). This test's subject is never retried: the trace and the report disagreeing
# (beyond not-enough-evidence on one side), a hop's bytes or the injected faults differing, or
# no windows, fail the run they appear in.
judged() { # name, expected kind, env...
	local name=$1 want=$2 try rc
	shift 2
	for try in 1 2 3; do
		rm -rf "${tmp:?}/$name"
		traced "$name" "$@" || return 1
		why=$(same_verdict "$name" "$want" 2>&1)
		rc=$?
		[ "$rc" -eq 3 ] && [ "$try" -lt 3 ] && { echo "# $name: $why; again"; continue; }
		[ "$rc" -eq 0 ] || { fail "$name: $why"; return 1; }
		return 0
	done
}

healthy() {
	judged healthy none FABRICLAB_LINK_RATE=2gbit || return
	echo "ok - healthy: fabriclab trace and fabriclab report: $why"
	why=$(check_events healthy 2>&1) || { fail "healthy: $why"; return; }
	echo "ok - healthy 4 ranks: $why"
}

# The healthy trace with its metadata cut to 300 bytes: babeltrace2's reader would spin on it
# forever; fabriclab trace refuses it at once, naming the file. A deadline of 1 ms on the
# whole trace shows the time bound for damage the check cannot see fails with a message too.
damaged() {
	local d=$tmp/damaged m
	cp -r "$tmp/healthy/trace" "$d" || { fail "damaged: no healthy trace to damage"; return; }
	m=$(find "$d" -name metadata | head -n 1)
	truncate -s 300 "$m"
	timeout 60 "$tool" trace "$d" >"$tmp/damaged.out" 2>&1
	local rc=$?
	[ "$rc" -eq 2 ] && grep -q "truncated CTF metadata" "$tmp/damaged.out" ||
		{ fail "damaged: exit $rc (124: hung): $(head -n 2 "$tmp/damaged.out")"; return; }
	FABRICLAB_TRACE_TIMEOUT_MS=1 timeout 60 "$tool" trace "$tmp/healthy/trace" \
		>"$tmp/deadline.out" 2>&1
	rc=$?
	[ "$rc" -eq 2 ] && grep -q "did not finish within FABRICLAB_TRACE_TIMEOUT_MS" \
		"$tmp/deadline.out" || { fail "deadline: exit $rc: $(head -n 2 "$tmp/deadline.out")"; return; }
	echo "ok - metadata cut to 300 bytes: exit 2 at once ($(head -n 1 "$tmp/damaged.out" | sed "s|$tmp/||")); a 1 ms deadline fails with a message"
}

# Pacing by the fault layer (plugin/transport/pace.c): node2's cable at half the line rate.
throttled() {
	judged throttled link FABRICLAB_LINK_RATE=2gbit \
		FABRICLAB_FAULT='throttle:node=node2,rate=50%,dir=tx' || return
	grep -q 'fabriclab:fault: .*action = "throttle"' <(babeltrace2 "$tmp/throttled/trace") ||
		{ fail "throttled: no fabriclab:fault event for the throttle rule"; return; }
	grep -q '"src_node": "node2"' <(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["verdict"]["hop"]))' "$tmp/throttled/trace.json") ||
		{ fail "throttled: the verdict does not name node2's hop"; return; }
	echo "ok - half-speed cable (FABRICLAB_FAULT throttle 50%): $why"
}

# ABI v9 has no finalize: the final report, its verdict event and the detaching of the
# tracepoints all happen in the plugin's destructor, while the session records.
unload() {
	traced unload FABRICLAB_SHIM_NET_VERSION=9 || return
	[ "$(grep -c "final report written at plugin unload" "$tmp/unload/bench.err")" -eq 4 ] ||
		{ fail "unload: the final reports were not written at unload"; return; }
	[ "$(babeltrace2 "$tmp/unload/trace" | grep -c "fabriclab:verdict:")" -eq 4 ] ||
		{ fail "unload: expected 4 verdict events from the reports written at unload"; return; }
	echo "ok - unload (v9): verdict events from the destructor's reports, then a clean exit"
}

no_sessiond() {
	if system_daemon; then
		skip "no session daemon: a system lttng-sessiond runs (left alone)"
		return
	fi
	bench "$tmp/nodaemon" FABRICLAB_REPORT=off || { fail "no daemon: bench failed: $(tail -n 2 "$tmp/nodaemon.err")"; return; }
	grep -q "LTTng tracing available" "$tmp/nodaemon.err" ||
		{ fail "no daemon: no INFO line saying tracing is available"; return; }
	echo "ok - no session daemon: the job runs, the provider loads"
}

no_provider() {
	traced noprovider FABRICLAB_LTTNG_PROVIDER="$tmp/absent/libfabriclab-lttng.so" || return
	[ "$(grep -c "LTTng tracing unavailable: .*absent/libfabriclab-lttng.so" "$tmp/noprovider/bench.err")" -eq 4 ] ||
		{ fail "provider absent: expected one INFO line per rank saying tracing is unavailable"; return; }
	if babeltrace2 "$tmp/noprovider/trace" 2>/dev/null | grep -q "fabriclab:"; then
		fail "provider absent: fabriclab events recorded anyway"; return
	fi
	echo "ok - provider absent: the job runs (INFO once per process: tracing unavailable), no events"
}

# liblttng-ust made unreadable (as test-infra.md section 3 did): needs root for the mount namespace.
no_lttng_ust() {
	local lib
	lib=$(readlink -f "$(ldconfig -p | awk '/liblttng-ust.so.1 /{print $NF; exit}')")
	if [ "$as_root" -ne 1 ] || [ -z "$lib" ] || ! unshare -m true 2>/dev/null; then
		skip "liblttng-ust absent: needs root, liblttng-ust.so.1 in ldconfig and unshare -m"
		return
	fi
	unshare -m bash -c 'mount --bind /dev/null "$0" && exec "$@"' "$lib" \
		env FABRICLAB_REPORT=off NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET timeout 60 "$tool" bench \
		--ranks 4 -b 64K -e 64K -n 2 -w 0 -c 1 >"$tmp/noust.out" 2>"$tmp/noust.err" ||
		{ fail "liblttng-ust absent: bench failed: $(tail -n 2 "$tmp/noust.err")"; return; }
	grep -q "LTTng tracing unavailable: .*liblttng-ust" "$tmp/noust.err" ||
		{ fail "liblttng-ust absent: no INFO line naming liblttng-ust: $(grep -m1 LTTng "$tmp/noust.err")"; return; }
	echo "ok - liblttng-ust absent: the plugin loads and runs without tracing"
}

# Only the provider object may need liblttng-ust at load time.
linkage() {
	local plugin=$build/libnccl-net-fabriclab.so
	if ldd "$plugin" | grep -q lttng; then
		fail "linkage: $plugin needs $(ldd "$plugin" | grep lttng | awk '{ print $1 }')"
		return
	fi
	ldd "$provider" | grep -q liblttng-ust.so ||
		{ fail "linkage: $provider does not link liblttng-ust"; return; }
	echo "ok - linkage: the plugin needs no LTTng library, the provider object links liblttng-ust"
}

ms() { echo $(($(date +%s%N) / 1000000)); }

# The per-user socket of an isolated LTTNG_HOME accepts and never answers.
hung_sessiond() {
	local home=$tmp/hang limit=1000 t0 base stalled accepts
	mkdir -m 777 "$home"
	run() { "${as[@]}" env HOME="$home" LTTNG_HOME="$home" FABRICLAB_SOCKET_IFNAME=lo \
		FABRICLAB_REPORT=off LTTNG_UST_REGISTER_TIMEOUT=$limit timeout 60 "$tool" bench \
		--ranks 4 -b 64K -e 64K -n 2 -w 0 -c 1 >"$tmp/hang.out" 2>"$tmp/hang.err"; }
	t0=$(ms); run || { fail "hung daemon: baseline bench failed"; return; }
	base=$(($(ms) - t0))
	# Debian's python: a pyenv shim on PATH is not readable by the user the listener runs as.
	"${as[@]}" "$(command -v /usr/bin/python3 || command -v python3)" -c '
import os, socket, sys
path, count = sys.argv[1], sys.argv[2]
os.makedirs(os.path.dirname(path), exist_ok=True)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path); s.listen(64)
held = []
open(count, "w").write("0")
while True:
    held.append(s.accept()[0])
    open(count, "w").write(str(len(held)))
' "$home/.lttng/lttng-ust-sock-8" "$home/accepts" &
	listener=$!
	for _ in $(seq 50); do [ -S "$home/.lttng/lttng-ust-sock-8" ] && break; sleep 0.1; done
	t0=$(ms); run || { fail "hung daemon: bench failed: $(tail -n 2 "$tmp/hang.err")"; return; }
	stalled=$(($(ms) - t0))
	accepts=$(cat "$home/accepts" 2>/dev/null || echo 0)
	kill "$listener" 2>/dev/null
	listener=
	[ "$accepts" -ge 4 ] || { fail "hung daemon: the fake listener saw $accepts connections, not one per rank"; return; }
	# The wait really happens (>= half the limit), and is bounded by it (a loaded machine: +3 s).
	[ "$stalled" -ge $((base + limit / 2)) ] ||
		{ fail "hung daemon: ${stalled} ms vs ${base} ms without it: the listener was not waited for"; return; }
	[ "$stalled" -le $((base + limit + 3000)) ] ||
		{ fail "hung daemon: ${stalled} ms vs ${base} ms: stalled beyond LTTNG_UST_REGISTER_TIMEOUT=$limit"; return; }
	echo "ok - hung session daemon: ${stalled} ms vs ${base} ms without it ($accepts connections held), bounded by LTTNG_UST_REGISTER_TIMEOUT=$limit"
}

start=$SECONDS
linkage
no_sessiond
start_sessiond
healthy
damaged
throttled
unload
no_provider
no_lttng_ust
hung_sessiond
echo "# $((SECONDS - start)) s"
[ "$failures" -eq 0 ] || { echo "# $failures failed (outputs in $tmp kept)"; keep=1; exit 1; }
# Checks that could not run here: exit 77 with the reasons last (tests/run.sh counts a skip).
[ ${#skipped[@]} -eq 0 ] || { printf "skipped: %s\n" "$(printf "%s; " "${skipped[@]}" | sed "s/; $//")"; exit 77; }
