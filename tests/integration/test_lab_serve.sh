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
#  - a preset and switches (like, topology, leaves, spines, slow-spine...) are checked before a
#    lab starts; GET /api/layout gives the description the lab would build, /api/topology the
#    run's (none over tcp);
#  - 64 half-open connections and 64 event streams held: status and cancel answer within 1 s;
#    an idle connection is closed (10 s); right after a cancel's 200 a new run starts (3 times);
#  - what the server sends as the page is tools/lab/page/ byte for byte;
#  - slow clients (issue 49): with 1000 connections trickling a header line every 2 s, from the
#    user's own address or from 8 others, / and status answer within 1 s and so does the cancel
#    of a run; a request trickling one line a second is closed after 10 s all the same;
#  - a repeated Host, Origin, Sec-Fetch-Site or Content-Length (or a body framed twice) gets a
#    400 and starts nothing; libmicrohttpd's own error pages carry the server's headers;
#  - LAB_SERVE_PAIRS (default 50) runs of 8 nodes each cancelled right after its start
#    (lab_cancel_pairs.py): every cancel answers "cancelled" within 4.5 s (no SIGKILL needed: the
#    spawner's comes after 5 s), the next run is never refused, and no lab or rank is left.
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
# So must one that trickles a header line every second: its total time is bounded, not its idle.
python3 "$here/lab_trickle.py" one "$url" >"$tmp/trickle.out" 2>&1 &
trickle=$!

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
expect "topology before" GET /api/topology "" 409 "no run started yet"
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
for f in index.html:/ lab.js:/lab.js fabric.js:/fabric.js lab.css:/lab.css; do
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
# The emulated fabric's preset and switches (lab_web_fabric.c), refused before any lab starts.
expect "unknown preset" POST /api/run '{"like":"qdr"}' 400 "like: expected"
expect "preset's fabric" POST /api/run '{"fabric":"roce","like":"ndr"}' 400 "fabric: the preset's own"
expect "preset and a rate" POST /api/run '{"fabric":"ib","like":"ndr","link_rate":"1gbit"}' 400 \
	"link_rate: a preset sets the rate"
expect "switches without a preset" POST /api/run '{"fabric":"ib","topology":"fat-tree"}' 400 \
	"topology: switches need a preset"
expect "too many leaves" POST /api/run \
	'{"fabric":"ib","like":"ndr","nodes":4,"topology":"fat-tree","leaves":5}' 400 "leaves: expected"
expect "spine fault, no switches" POST /api/run '{"fabric":"ib","like":"ndr","scenario":"slow-spine"}' \
	400 "need a topology with switches"
expect "no such spine" POST /api/run \
	'{"fabric":"ib","like":"ndr","topology":"fat-tree","spines":2,"scenario":"slow-spine","spine":2}' \
	400 "spine: expected a spine below spines"
expect "layout" GET "/api/layout?fabric=ib&like=ndr&nodes=4&topology=fat-tree&leaves=2&spines=2" "" \
	200 '"name": "spine1"'
expect "layout over tcp" GET "/api/layout?fabric=tcp" "" 400 "tcp has none"
expect "layout, too many leaves" GET "/api/layout?fabric=ib&like=ndr&nodes=2&topology=fat-tree&leaves=3" \
	"" 400 "leaves: expected"
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
expect "topology of a tcp run" GET /api/topology "" 404 "no emulated fabric (tcp)"
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

# The idle and the trickling connection opened at the start (before a crowd from their address
# could take their place).
wait "$trickle"
if [[ "$(cat "$tmp/trickle.out")" =~ ^closed\ after\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 8 ] &&
	[ "${BASH_REMATCH[1]}" -le 14 ]; then
	echo "ok - a request trickling a line a second was $(cat "$tmp/trickle.out")"
else
	not_ok "trickling request: $(cat "$tmp/trickle.out")"
fi
wait "$idle"
read -r _ _ secs _ <"$tmp/idle.out"
if [[ "$(cat "$tmp/idle.out")" == "closed after "* ]] && [ "${secs%.*}" -ge 5 ] &&
	[ "${secs%.*}" -le 20 ]; then
	echo "ok - an idle half-request was closed after $secs s"
else
	not_ok "idle connection: $(cat "$tmp/idle.out")"
fi

# Slow clients: 1000 trickling connections from the user's address while a run goes on, then
# from 8 other addresses (these must not close the user's connections, only each other's).
expect "a run under the crowd" POST /api/run '{"fabric":"tcp","nodes":2,"steps":500}' 202 '"run"'
if python3 "$here/lab_trickle.py" crowd "$url" 1000 5 >"$tmp/crowd1.out" 2>&1 &&
	grep -q '^cancel: .* 200 .*"cancelled"' "$tmp/crowd1.out"; then
	echo "ok - 1000 trickling from 127.0.0.1: $(grep -E '^(slowest|cancel|trickling)' \
		"$tmp/crowd1.out" | tr '\n' ' ')"
else
	not_ok "with 1000 trickling from 127.0.0.1: $(cat "$tmp/crowd1.out")"
fi
others=127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8,127.0.0.9
if python3 "$here/lab_trickle.py" crowd "$url" 1000 3 "$others" >"$tmp/crowd2.out" 2>&1; then
	echo "ok - 1000 trickling from 8 other addresses: $(grep -E '^(slowest|trickling)' \
		"$tmp/crowd2.out" | tr '\n' ' ')"
else
	not_ok "with 1000 trickling from 8 other addresses: $(cat "$tmp/crowd2.out")"
fi

# Headers that must come once. The request as written: curl would merge or drop the repeats.
raw() { # request (printf %b) -> the whole answer
	printf '%b' "$1" | python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(sys.stdin.buffer.read())
got = b""
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
except OSError:
    pass
sys.stdout.write(got.decode(errors="replace").replace("\r", ""))' "$port"
}
h="Host: 127.0.0.1:$port\r\nConnection: close\r\n"
json="Content-Type: application/json\r\n"
twice() { # what request want-text
	local got
	got=$(raw "$2")
	if [[ "$got" == "HTTP/1.1 400 "* && "$got" == *"$3"* ]]; then
		echo "ok - $1: 400"
	else
		not_ok "$1: $(head -1 <<<"$got") $(tail -1 <<<"$got")"
	fi
}
before=$(call GET /api/status)
twice "Host twice" "GET /api/status HTTP/1.1\r\n${h}Host: evil.example:$port\r\n\r\n" \
	"Host: given 2 times"
twice "Origin twice" "POST /api/run HTTP/1.1\r\n${h}Origin: $url\r\nOrigin: http://evil.example\r\n${json}Content-Length: 11\r\n\r\n{\"nodes\":2}" \
	"Origin: given 2 times"
twice "Sec-Fetch-Site twice" "GET /api/status HTTP/1.1\r\n${h}Sec-Fetch-Site: same-origin\r\nSec-Fetch-Site: cross-site\r\n\r\n" \
	"Sec-Fetch-Site: given 2 times"
twice "Content-Length twice" "POST /api/run HTTP/1.1\r\n${h}${json}Content-Length: 11\r\nContent-Length: 9999\r\n\r\n{\"nodes\":2}" \
	"Content-Length: given 2 times"
twice "Content-Length and chunks" "POST /api/run HTTP/1.1\r\n${h}${json}Content-Length: 11\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n{\"nodes\":2}\r\n0\r\n\r\n" \
	"not both"
[ "$(call GET /api/status)" = "$before" ] && echo "ok - the repeats started nothing" ||
	not_ok "the repeats changed the state: $(call GET /api/status), was $before"
# libmicrohttpd's own pages (it answers these before the server sees the request).
own_page() { # what request
	local got
	got=$(raw "$2")
	if [[ "$got" == "HTTP/1.1 4"* ]] && grep -qx 'X-Content-Type-Options: nosniff' <<<"$got" &&
		grep -qx 'Cache-Control: no-store' <<<"$got" &&
		grep -q "^Content-Security-Policy: default-src 'self'" <<<"$got"; then
		echo "ok - $1: $(head -1 <<<"$got"), with the server's headers"
	else
		not_ok "$1: $(sed -n '1,/^$/p' <<<"$got" | tr '\n' '|')"
	fi
}
own_page "libmicrohttpd's page for a malformed Content-Length" \
	"POST /api/run HTTP/1.1\r\n${h}${json}Content-Length: x\r\n\r\n"
own_page "libmicrohttpd's page for a header over its memory" \
	"GET / HTTP/1.1\r\n${h}X-Big: $(head -c 33000 /dev/zero | tr '\0' a)\r\n\r\n"

# Issue 49: a cancel right after the start used to be lost in the server's handler, inherited
# by the lab until its exec (and by a rank until its reset): the run went on until SIGKILL, and
# the next run got 409. Half the cancels go the moment the 202 is in, half while the 8 ranks fork.
pairs=${LAB_SERVE_PAIRS:-50}
if python3 "$here/lab_cancel_pairs.py" "$url" "$pairs" 8 >"$tmp/pairs.out" 2>&1; then
	echo "ok - $(cat "$tmp/pairs.out")"
else
	not_ok "runs cancelled right after their start: $(cat "$tmp/pairs.out")"
fi
sleep 0.2
left=$(pgrep -f -- "/web-$server-" | tr '\n' ' ')
[ -z "$left" ] && echo "ok - no lab or rank left after them" ||
	not_ok "processes left after the run+cancel pairs: $left"
grep -q SIGKILL "$tmp/server.out" && not_ok "the server had to kill: $(grep SIGKILL "$tmp/server.out")"

if ! kill -0 "$server" 2>/dev/null; then
	wait "$server"
	not_ok "the server is gone (exit status $?): $(tail -3 "$tmp/server.out")"
fi
echo "lab_serve: $failures failure(s)"
[ "$failures" -eq 0 ]
