#!/usr/bin/env bash
# The lab in the browser, its HTTP side (`fabriclab lab --serve`), from a test client:
#  - before a run: status idle, events and result 409; bad requests 4xx with a message;
#  - a 4-node halve-cable run started over HTTP streams one step event per step, then "end";
#    the result (the merged report) names the target; /report.html is the same as a page;
#  - a second run while one runs is refused (409); a run cancelled ends "cancelled";
#  - for its user only: the cross-site "simple" request (text/plain, foreign Origin, a DNS
#    rebinding Host) and each of its parts alone get a 4xx and start nothing; the pre-flight a
#    browser would need is refused; a same-origin JSON request works; duplicate keys and a path
#    as scenario get the accepted values; --listen on a non-loopback address needs --allow-remote;
#  - 64 half-open connections and 64 event streams held: status and cancel answer within 1 s;
#    an idle connection is closed (10 s); right after a cancel's 200 a new run starts (3 times);
#  - what the server sends as the page is tools/lab/page/ byte for byte.
# Usage: test_lab_serve.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
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

port=${url##*:}
# An idle connection (half a header, then nothing) must be closed: watched while the rest runs.
python3 "$here/lab_hold.py" idle "$url" >"$tmp/idle.out" 2>&1 &
idle=$!

# "CODE BODY" of one request; POSTs as the page sends them (JSON), more headers after the body.
call() { # method path [body [curl args...]]
	local method=$1 path=$2 body=${3:-}
	shift $(($# < 3 ? $# : 3))
	local json=()
	[ "$method" = POST ] && json=(-H 'Content-Type: application/json')
	curl -s -o "$tmp/body" -w '%{http_code}' -X "$method" "${json[@]}" ${body:+-d "$body"} \
		"$@" "$url$path"
	echo " $(cat "$tmp/body")"
}
expect() { # what method path body want-code want-text [curl args...]
	local got what=$1 method=$2 path=$3 body=$4 code=$5 text=$6
	shift 6
	got=$(call "$method" "$path" "$body" "$@")
	set -- "$what" "$method" "$path" "$body" "$code" "$text"
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
expect "page" GET / "" 200 '<h1>GPU Fabric Lab</h1>'
for f in index.html:/ lab.js:/lab.js lab.css:/lab.css; do
	curl -s "$url${f#*:}" | cmp -s - "$here/../../tools/lab/page/${f%%:*}" ||
		not_ok "GET ${f#*:} is not tools/lab/page/${f%%:*} (run tools/lab/page/embed.py)"
done

# For its user only. The cross-site request of the issue, then each of its parts alone.
simple=(-H 'Content-Type: text/plain' -H 'Origin: http://evil.example' -H "Host: evil.example:$port")
got=$(curl -s -o "$tmp/body" -w '%{http_code}' -X POST "${simple[@]}" -d '{"nodes":2}' "$url/api/run")
[[ "$got" == 4* ]] && echo "ok - cross-site simple request: $got $(cat "$tmp/body")" ||
	not_ok "cross-site simple request: $got $(cat "$tmp/body")"
got=$(curl -s -o "$tmp/body" -w '%{http_code}' -X POST -H 'Content-Type: text/plain' \
	-d '{"nodes":2}' "$url/api/run")
[ "$got" = 415 ] && echo "ok - text/plain body: 415" || not_ok "text/plain body: $got"
expect "rebinding Host" POST /api/run '{"nodes":2}' 403 "a name could be a DNS rebinding page" \
	-H "Host: evil.example:$port"
expect "other port in Host" POST /api/run '{"nodes":2}' 403 "not this server's port" \
	-H "Host: 127.0.0.1:1"
expect "foreign Origin" POST /api/run '{"nodes":2}' 403 "cross-origin requests are refused" \
	-H 'Origin: http://evil.example'
expect "Origin null" POST /api/cancel '' 403 "cross-origin requests are refused" -H 'Origin: null'
expect "cross-site fetch metadata" GET /api/status '' 403 "Sec-Fetch-Site" \
	-H 'Sec-Fetch-Site: cross-site'
expect "foreign Origin, events" GET /api/events '' 403 "cross-origin" -H 'Origin: http://evil.example'
expect "pre-flight" OPTIONS /api/run '' 403 "pre-flight) are refused" \
	-H 'Origin: http://evil.example' -H 'Access-Control-Request-Method: POST'
expect "nothing started" GET /api/status "" 200 '{"state":"idle","run":0}'
expect "duplicate key" POST /api/run '{"nodes":2,"nodes":3}' 400 "duplicate object key"
nope=$(call POST /api/run '{"scenario":"nope"}')
path=$(call POST /api/run '{"scenario":"../../etc/passwd"}')
[ "$path" = "$nope" ] && [[ "$nope" == "400 "*"halve-cable"* ]] &&
	echo "ok - a path as scenario: $path" || not_ok "a path as scenario: $path; nope: $nope"
expect "link rate" POST /api/run '{"link_rate":"9tbit"}' 400 "link_rate: expected 100mbit"
expect "rails over tcp" POST /api/run '{"nodes":2,"rails":2}' 400 "rails: more than 1 needs"
expect "too many ranks" POST /api/run '{"fabric":"ib","nodes":9,"rails":2}' 400 "nodes x rails"
"$tool" lab --serve --listen 0.0.0.0:0 --dir "$tmp/runs" >"$tmp/remote.out" 2>&1
[ $? -eq 2 ] && grep -q -- '--allow-remote' "$tmp/remote.out" &&
	echo "ok - a non-loopback listen needs --allow-remote" ||
	not_ok "--listen 0.0.0.0 without --allow-remote: $(cat "$tmp/remote.out")"
timeout 2 "$tool" lab --serve --allow-remote --listen 0.0.0.0:0 --dir "$tmp/runs" \
	>"$tmp/remote.out" 2>&1
grep -q 'WARNING: listening on 0.0.0.0' "$tmp/remote.out" &&
	echo "ok - --allow-remote warns" || not_ok "--allow-remote: $(cat "$tmp/remote.out")"

run='{"fabric":"tcp","nodes":4,"scenario":"halve-cable","target":2,"steps":6}'
expect "same-origin start" POST /api/run "$run" 202 '{"run":1}' -H "Origin: $url" \
	-H 'Sec-Fetch-Site: same-origin'
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

# The crowd: a long run, 64 half-open connections and 64 event streams held, then status and
# cancel within a second each (lab_hold.py); then, three times, a run right after a cancel.
expect "start again" POST /api/run '{"fabric":"tcp","nodes":2,"steps":500}' 202 '{"run":2}'
for _ in $(seq 100); do grep -q . "$tmp"/runs/web-*-2/progress.tsv 2>/dev/null && break; sleep 0.2; done
if python3 "$here/lab_hold.py" crowd "$url" 64 64 >"$tmp/crowd.out" 2>&1; then
	echo "ok - 64 half-open + 64 streams held: $(grep -E '^(status|cancel)' "$tmp/crowd.out" |
		tr '\n' ' ')"
else
	not_ok "with a crowd held: $(cat "$tmp/crowd.out")"
fi
expect "cancel idle" POST /api/cancel "" 409 "nothing is running"
for k in 3 4 5; do
	expect "run $k" POST /api/run '{"fabric":"tcp","nodes":2,"steps":500}' 202 "{\"run\":$k}"
	for _ in $(seq 100); do grep -q . "$tmp"/runs/web-*-$k/progress.tsv 2>/dev/null && break; sleep 0.1; done
	expect "cancel $k" POST /api/cancel "" 200 "{\"state\":\"cancelled\",\"run\":$k}"
done
expect "a run right after the cancel" POST /api/run '{"fabric":"tcp","nodes":2,"steps":500}' 202 \
	'{"run":6}'
timeout 60 curl -sN "$url/api/events" >"$tmp/events2" &
events=$!
sleep 0.5
expect "cancel it" POST /api/cancel "" 200 '"cancelled"'
wait "$events" || not_ok "the cancelled run's stream did not end"
grep -q '"state":"cancelled","run":6' "$tmp/events2" ||
	not_ok "cancelled run's stream ended as: $(tail -1 "$tmp/events2")"

wait "$idle"
read -r _ _ secs _ <"$tmp/idle.out"
if [[ "$(cat "$tmp/idle.out")" == "closed after "* ]] && [ "${secs%.*}" -ge 5 ] &&
	[ "${secs%.*}" -le 20 ]; then
	echo "ok - an idle half-request was closed after $secs s"
else
	not_ok "idle connection: $(cat "$tmp/idle.out")"
fi

echo "lab_serve: $failures failure(s)"
[ "$failures" -eq 0 ]
