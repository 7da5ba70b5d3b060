#!/usr/bin/env bash
# Issue 49, findings 4, 7, 8 and 9, as a hostile user or inner plugin would try them (loopback
# only, every run bounded by timeout; tests/inner/hostile_net.c is the lying inner):
#  - an inner whose test reports 0x7fffffff or -4096 bytes per request: nothing of it is
#    counted (no hop above its line), every report says why it is incomplete, and so does
#    `fabriclab report`;
#  - an inner whose test never completes: the job stops (FABRICLAB_SHIM_TIMEOUT) and the final
#    reports name the requests outstanding on each hop;
#  - an inner's device name with ESC, a newline and U+202E: never raw on stderr or in the .txt
#    report, and `fabriclab report` reads the JSON the plugin wrote;
#  - FABRICLAB_WORLD_SIZE out of 1..16777216 or not a number fails init, naming it and the range;
#  - control characters and U+202E in LINK_RATE, PORT_SPEED, SHIM_MEM, SOCKET_IFNAME,
#    VERDICT_MIN_RATIO, SHIM_PIDFILE, REPORT_DIR reach stderr escaped.
# Usage: test_hostile_inputs.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$(cd "$(dirname "$build/fabriclab")" && pwd)/fabriclab
inner=$(cd "$build" && pwd)/inner
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP FABRICLAB_FAULT \
	FABRICLAB_NODE_NAME FABRICLAB_RANK FABRICLAB_WORLD_SIZE FABRICLAB_TRANSPORT FABRICLAB_LINK_RATE \
	FABRICLAB_PORT_SPEED FABRICLAB_SHIM_MEM FABRICLAB_SHIM_PIDFILE NCCL_DEBUG FABRICLAB_HOSTILE
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-hostile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=python3
[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
[ -f "$inner/libnccl-net-hostile.so" ] || { echo "not ok - $inner/libnccl-net-hostile.so missing"; exit 1; }
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

# A control sequence that retitles a terminal, one that clears it, U+202E and a newline.
bad=$'\e]0;pwned\a\e[2J\xe2\x80\xaeX\ny'
raw() { LC_ALL=C grep -c $'\e\|\a\|\xe2\x80\xae' "$@" 2>/dev/null | awk -F: '{ s += $NF } END { print s + 0 }'; }

hostile() { # name attack [env...] -> $tmp/name.{out,err}, reports in $tmp/name/, status in $rc
	local name=$1 attack=$2
	shift 2
	mkdir -p "$tmp/$name"
	env FABRICLAB_REPORT_DIR="$tmp/$name" FABRICLAB_HOSTILE="$attack" \
		FABRICLAB_FORWARD_INNER="$inner/libnccl-net-flsock-v12.so" \
		FABRICLAB_TRANSPORT="ext:$inner/libnccl-net-hostile.so" "$@" \
		timeout 60 "$tool" bench --ranks 2 -o sendrecv -b 1K -e 64K -f 8 -n 2 -w 1 \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
}

# The reports of the run (both; with "final", the final ones, at least one: a rank the bench
# stops may leave only its last periodic report): incomplete with the phrase, and no hop above
# 10x its line.
reports_say() { # name phrase [final]
	"$py" - "$tmp/$1" "$2" "${3:-}" <<'PY'
import glob, json, sys
folder, phrase, final = sys.argv[1], sys.argv[2], sys.argv[3] == "final"
reports = [(f, json.load(open(f))) for f in glob.glob(folder + "/*.json")]
if final:
    reports = [(f, r) for f, r in reports if r["final"]]
if len(reports) < (1 if final else 2):
    sys.exit(f"expected {'a final report' if final else '2 reports'}, found {len(reports)}")
for f, r in reports:
    if r["complete"] or phrase not in (r["incomplete"] or ""):
        sys.exit(f"{f}: complete={r['complete']} incomplete={r['incomplete']!r}")
    for h in r["hops"]:
        if h["bytes"] < 0 or (h["line_rate_gbs"] and h["wire_gbs"] > 10 * h["line_rate_gbs"]):
            sys.exit(f"{f}: hop counts impossible figures: {h['bytes']} B at {h['wire_gbs']} GB/s")
PY
}

sizes_that_lie() {
	local a why
	for a in oversize negative; do
		hostile "$a" "$a"
		if ! why=$(reports_say "$a" "sizes that cannot be true" 2>&1); then
			not_ok "$a: $why"
		elif ! "$tool" report "$tmp/$a"/*.json >"$tmp/$a.merged" 2>&1 ||
			! grep -q "sizes that cannot be true" "$tmp/$a.merged"; then
			not_ok "$a: fabriclab report does not say it: $(head -n 3 "$tmp/$a.merged")"
		else
			ok "$a: test's sizes left out of the figures and said in every report and the merge"
		fi
	done
}

never_done() {
	local why
	hostile hang hang FABRICLAB_SHIM_TIMEOUT=3 FABRICLAB_HOSTILE_AFTER=8
	if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
		not_ok "hang: the job did not stop on its own (exit $rc)"
	elif ! why=$(reports_say hang "outstanding when the job stopped" final 2>&1); then
		not_ok "hang: $why"
	else
		ok "hang: the final reports name the requests outstanding when the job stopped"
	fi
}

device_name() {
	hostile name name
	if [ "$rc" -ne 0 ]; then
		not_ok "name: exit $rc: $(tail -n 2 "$tmp/name.err")"
	elif [ "$(raw "$tmp/name.err" "$tmp/name"/*.txt)" -ne 0 ]; then
		not_ok "name: ESC, BEL or U+202E raw on stderr or in a .txt report"
	elif ! grep -q 'ev\\x1b\[31mil' "$tmp/name"/*.txt; then
		not_ok "name: the escaped name is not in the .txt report"
	elif ! "$tool" report "$tmp/name"/*.json >"$tmp/name.merged" 2>&1; then
		not_ok "name: fabriclab report refuses the plugin's own JSON: $(head -n 2 "$tmp/name.merged")"
	elif [ "$(raw "$tmp/name.merged")" -ne 0 ]; then
		not_ok "name: raw control characters in the merged report"
	else
		ok "name: the inner's device name is escaped on stderr, in .txt and .json, and merges"
	fi
}

bench_env() { # name env... -> $tmp/name.err, status in $rc (in a folder of its own: files may land)
	local name=$1
	shift
	mkdir -p "$tmp/cwd-$name"
	(cd "$tmp/cwd-$name" && env FABRICLAB_REPORT_DIR="$tmp/cwd-$name/reports" "$@" \
		timeout 60 "$tool" bench --ranks 2 -b 1K -e 1K -n 1 -w 0 >"$tmp/$name.out" 2>"$tmp/$name.err")
	rc=$?
}

# A report whose names carry U+202E and ESC (as a hostile file would): every output of the merge
# (text, JSON, SVG, HTML, Prometheus) shows them escaped.
merge_outputs() {
	local d=$tmp/rlo f
	mkdir -p "$d"
	for f in "$tmp/name"/*.json; do
		"$py" - "$f" "$d/$(basename "$f")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for h in r["hops"]:
    for k in ("src_dev", "dst_dev"):
        h[k] = "\u202eeth"  # 15 characters once escaped: as long as a device name may be
    for k in ("src_node", "dst_node"):
        h[k] = h[k].replace("node", "n\u001b")
json.dump(r, open(sys.argv[2], "w"))
PY
	done
	if ! "$tool" report "$d" --svg "$d/m.svg" --html "$d/m.html" --prom "$d/m.prom" \
		>"$d/m.txt" 2>"$d/m.err" || ! "$tool" report "$d" --json >"$d/m.json" 2>>"$d/m.err"; then
		not_ok "merge of names with U+202E: $(head -n 2 "$d/m.err")"
	elif [ "$(raw "$d"/m.*)" -ne 0 ] || [ "$(LC_ALL=C grep -c '\\u202e' "$d/m.json")" -ne 0 ]; then
		not_ok "merge of names with U+202E: raw in $(LC_ALL=C grep -l $'\e\|\xe2\x80\xae\|\\u202e' "$d"/m.* | xargs -n1 basename | tr '\n' ' ')"
	elif ! grep -q 'xe2\\x80\\xae' "$d/m.txt"; then
		not_ok "merge of names with U+202E: the text does not show it escaped"
	else
		ok "U+202E and ESC in report names: text, JSON, SVG, HTML and Prometheus show them escaped"
	fi
}

world_size() {
	local v bad_ones=0
	for v in 20000000 -1 abc 100000000000000000000000 0; do
		bench_env "world$v" FABRICLAB_WORLD_SIZE="$v"
		if [ "$rc" -eq 0 ] || ! grep -q "FABRICLAB_WORLD_SIZE=\"$v\": expected a number of ranks from 1 to 16777216" "$tmp/world$v.err"; then
			not_ok "FABRICLAB_WORLD_SIZE=$v: exit $rc, $(grep -m1 -a 'WORLD_SIZE\|failed' "$tmp/world$v.err")"
			bad_ones=1
		fi
	done
	[ "$bad_ones" -eq 0 ] && ok "FABRICLAB_WORLD_SIZE outside 1..16777216 fails init, naming it and the range"
}

values_escaped() {
	local v n=0
	for v in FABRICLAB_LINK_RATE FABRICLAB_PORT_SPEED FABRICLAB_SHIM_MEM FABRICLAB_SOCKET_IFNAME \
		FABRICLAB_VERDICT_MIN_RATIO FABRICLAB_SHIM_PIDFILE FABRICLAB_REPORT_DIR; do
		# a pid file in a folder that does not exist: its write fails, and says so
		if [ "$v" = FABRICLAB_SHIM_PIDFILE ]; then
			bench_env "$v" "$v=$tmp/none/$bad"
		else
			bench_env "$v" "$v=$bad"
		fi
		if [ "$(raw "$tmp/$v.err")" -ne 0 ]; then
			not_ok "$v: its value reaches stderr raw: $(LC_ALL=C grep -a -m1 $'\e' "$tmp/$v.err" | cat -v | cut -c1-160)"
		elif ! grep -q 'x1b\]0;pwned' "$tmp/$v.err"; then
			not_ok "$v: the message does not show the value escaped: $(tail -n 1 "$tmp/$v.err" | cut -c1-160)"
		else
			n=$((n + 1))
		fi
	done
	[ "$n" -eq 7 ] && ok "7 environment values with ESC, BEL and U+202E reach stderr escaped"
}

sizes_that_lie
never_done
device_name
merge_outputs
world_size
values_escaped
[ "$failures" -eq 0 ] || exit 1
