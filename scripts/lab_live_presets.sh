#!/usr/bin/env bash
# How soon the live diagnosis warns under the lab's presets (issue 30: the first WARN within 2 s
# of a fault's start, docs/lab.md "Live under the presets"). For each preset in $PRESETS
# (default: hdr ndr xdr roce400), `fabriclab lab --like P -n $NODES` (default 8) runs traced
# by a private lttng-sessiond (as tests/integration/test_live.sh) with each of:
#   halve-cable --target node3                  (the plugin's throttle)
#   --hw-fault downgrade:node=node3,rate=50%    (the emulated NIC's port)
#   healthy
# and `fabriclab trace --json` reads when each live finding appeared, counted from its hop's
# first traffic (trace.live[].after_first_traffic_seconds). A faulty run prints the first
# finding naming node3 and its delay; any finding on a hop not through node3 is a false alarm,
# and so is any finding in a healthy run. Exit 0 only when every fault was warned of within 2 s
# and nothing else was. Usage: scripts/lab_live_presets.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd)
tool=$build/fabriclab
PRESETS=${PRESETS:-hdr ndr xdr roce400}
NODES=${NODES:-8}
py=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-live-presets.XXXXXX")
chmod 755 "$tmp"
unset FABRICLAB_FAULT FABRICLAB_REPORT FABRICLAB_REPORT_INTERVAL FABRICLAB_LIVE_WINDOW_MS NCCL_DEBUG
as=()
[ "$(id -u)" -eq 0 ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
mkdir -m 777 "$tmp/home"
user=("${as[@]}" env HOME="$tmp/home" LTTNG_HOME="$tmp/home")
lt() { "${user[@]}" lttng "$@"; }
sessiond=
cleanup() {
	[ -n "$sessiond" ] && kill "$sessiond" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
"${user[@]}" lttng-sessiond --daemonize --no-kernel >"$tmp/sessiond.log" 2>&1 ||
	{ echo "lttng-sessiond did not start: $(tail -n 2 "$tmp/sessiond.log")"; exit 1; }
sessiond=$(cat "$tmp/home/.lttng/lttng-sessiond.pid" 2>/dev/null)
bad=0

# Runs the lab traced into $tmp/NAME; prints the live findings as "delay culprit state".
traced() { # name lab-args...
	local name=$1 s="fllp$$$1"
	shift
	mkdir -m 777 "$tmp/$name"
	lt create "$s" --output="$tmp/$name/trace" >/dev/null &&
		lt enable-event -u 'fabriclab:*' -s "$s" >/dev/null &&
		lt add-context -u -t vpid -s "$s" >/dev/null && lt start "$s" >/dev/null || return 1
	"${user[@]}" timeout --kill-after=5 300 "$tool" lab --dir "$tmp/$name/lab" -n "$NODES" "$@" \
		>"$tmp/$name.out" 2>&1
	local rc=$?
	lt stop "$s" >/dev/null 2>&1
	lt destroy "$s" >/dev/null 2>&1
	[ "$rc" -eq 0 ] || { echo "lab exited $rc: $(tail -n 2 "$tmp/$name.out")"; return 1; }
	"$tool" trace --json "$tmp/$name/trace" 2>/dev/null | "$py" -c '
import json, sys
for x in json.load(sys.stdin)["trace"]["live"]:
    if x["state"] == "appeared":
        print("%.3f %s" % (x.get("after_first_traffic_seconds") or -1, x["culprit"].replace(" ", "")))'
}

for p in $PRESETS; do
	for case in halve down healthy; do
		case $case in
		halve) args=(halve-cable --target node3) ;;
		down) args=(--hw-fault 'downgrade:node=node3,rate=50%') ;;
		healthy) args=(healthy) ;;
		esac
		found=$(traced "$p-$case" --like "$p" -s 10 "${args[@]}") || { echo "FAIL  $p $case: $found"; bad=1; continue; }
		others=$(grep -v "node3/" <<<"$found" | grep -c . || true)
		first=$(grep "node3/" <<<"$found" | sort -n | head -n 1)
		if [ "$case" = healthy ]; then
			[ -z "$found" ] && echo "ok    $p healthy: no live finding" ||
				{ echo "FAIL  $p healthy: $(tr '\n' ';' <<<"$found")"; bad=1; }
		elif [ -n "$first" ] && [ "$others" -eq 0 ] &&
			"$py" -c 'import sys; sys.exit(float(sys.argv[1]) > 2.0)' "${first%% *}"; then
			echo "ok    $p $case: ${first#* } after ${first%% *} s of traffic"
		else
			echo "FAIL  $p $case: first on node3: ${first:-none}; others: $(grep -v 'node3/' <<<"$found" | tr '\n' ';')"
			bad=1
		fi
	done
done
exit $bad
