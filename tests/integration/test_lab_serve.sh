#!/usr/bin/env bash
# The lab in the browser, its HTTP side (`fabriclab lab --serve`), from a test client:
#  - before a run: status idle, events and result 409; bad requests 4xx with a message;
#  - a 4-node halve-cable run started over HTTP streams one step event per step, then "end";
#    the result (the merged report) names the target; /report.html is the same as a page;
#  - a second run while one runs is refused (409); a run cancelled ends "cancelled".
# Usage: test_lab_serve.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd)
tool=$build/fabriclab
unset FABRICLAB_FAULT FABRICLAB_TRANSPORT FABRICLAB_SHIM_MEM NCCL_DEBUG
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-lab-serve.XXXXXX")
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

"$tool" lab --serve --listen 127.0.0.1:0 --dir "$tmp/runs" >"$tmp/server.out" 2>&1 &
server=$!
for _ in $(seq 50); do grep -q 'serving the lab on' "$tmp/server.out" && break; sleep 0.1; done
url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$tmp/server.out")
[ -n "$url" ] || { echo "not ok - server did not start: $(cat "$tmp/server.out")"; exit 1; }

# "CODE BODY" of one request.
call() { # method path [body]
	curl -s -o "$tmp/body" -w '%{http_code}' -X "$1" ${3:+-d "$3"} "$url$2"
	echo " $(cat "$tmp/body")"
}
expect() { # what method path body want-code want-text
	local got
	got=$(call "$2" "$3" "$4")
	if [[ "$got" != "$5 "* || "$got" != *"$6"* ]]; then
		not_ok "$1: got $got; expected $5 with \"$6\""
	else
		echo "ok - $1: $5"
	fi
}

expect "status before" GET /api/status "" 200 '{"state":"idle","run":0}'
expect "events before" GET /api/events "" 409 "no run started yet"
expect "result before" GET /api/result "" 409 "no finished run yet"
expect "17 nodes" POST /api/run '{"nodes":17}' 400 "nodes: expected an integer from 1 to 16"
expect "unknown scenario" POST /api/run '{"scenario":"meteor"}' 400 "scenario: expected healthy"
expect "flaky-roce on ib" POST /api/run '{"fabric":"ib","scenario":"flaky-roce"}' 400 \
	"flaky-roce is an Ethernet fault"
expect "not JSON" POST /api/run 'nodes=4' 400 "body: expected {"
expect "unknown field" POST /api/run '{"nodes":4,"colour":"red"}' 400 "body: expected {"
expect "big body" POST /api/run "$(head -c 5000 /dev/zero | tr '\0' ' ')" 413 "body over 4 KiB"
expect "no such page" GET /nope "" 404 "no such page"
expect "wrong method" DELETE /api/run "" 405 "GET or POST only"
expect "page" GET / "" 200 '<h1>The GPU fabric lab</h1>'

run='{"fabric":"tcp","nodes":4,"scenario":"halve-cable","target":2,"steps":6}'
expect "start" POST /api/run "$run" 202 '{"run":1}'
expect "second run" POST /api/run "$run" 409 "a run is going on"
timeout 120 curl -sN "$url/api/events" >"$tmp/events" ||
	not_ok "event stream did not end: $(tail -3 "$tmp/events")"
steps=$(grep -c '^event: step$' "$tmp/events")
[ "$steps" -eq 6 ] || not_ok "step events: $steps, expected 6"
grep -q '^data: {"state":"done","run":1}$' "$tmp/events" ||
	not_ok "no end event saying done: $(tail -2 "$tmp/events")"
[ "$steps" -eq 6 ] && echo "ok - 6 step events, then done"
got=$(curl -s "$url/api/result" | python3 -c \
	'import json,sys; v=json.load(sys.stdin)["verdict"]; print(v["kind"], v["node"])')
[ "$got" = "device node2" ] || not_ok "result verdict: $got, expected device node2"
[ "$got" = "device node2" ] && echo "ok - result: $got"
curl -s "$url/report.html" | grep -q '<p class="verdict" id="verdict">verdict: device on node2</p>' ||
	not_ok "report.html does not show the verdict"

expect "start again" POST /api/run '{"fabric":"tcp","nodes":2,"steps":200}' 202 '{"run":2}'
for _ in $(seq 100); do grep -q . "$tmp"/runs/web-*-2/progress.tsv 2>/dev/null && break; sleep 0.2; done
expect "cancel" POST /api/cancel "" 200 '{"cancelling":true}'
timeout 60 curl -sN "$url/api/events" >"$tmp/events2" || not_ok "cancelled stream did not end"
grep -q '"state":"cancelled","run":2' "$tmp/events2" ||
	not_ok "cancelled run ended as: $(tail -1 "$tmp/events2")"
expect "cancel idle" POST /api/cancel "" 409 "nothing is running"

echo "lab_serve: $failures failure(s)"
[ "$failures" -eq 0 ]
