#!/usr/bin/env bash
# The peer-death matrix on 4 independent ranks (torchrun-style env): rank 2 is
#  - killed (SIGKILL) during setup, before any rank reached its timed loop;
#  - killed mid-transfer, while every rank is in its timed loop;
#  - stopped (SIGSTOP) past the shim's timeout (FABRICLAB_SHIM_TIMEOUT=2 here);
#  - killed during finalize, as soon as its results are printed (its final report being
#    written): survivors may be done with it by then, so they must only exit within 5 s.
# Every survivor must exit non-zero within 5 s of the death (of the timeout, when stopped),
# and every report left behind must parse as JSON. (test_rank_killed.sh covers the messages.)
# Usage: test_peer_death.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
victim=2
export FABRICLAB_SOCKET_IFNAME=lo FABRICLAB_SHIM_TIMEOUT=2 FABRICLAB_REPORT_INTERVAL=1 \
	NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_PIDFILE FABRICLAB_FAULT
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-death.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
fail() { echo "not ok - $*"; failures=$((failures + 1)); }

free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

start_ranks() { # case [iterations]
	local r port n=${2:-100000000}
	port=$(free_port)
	pids=()
	mkdir -p "$tmp/$1/reports"
	for r in 0 1 2 3; do
		RANK=$r WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABRICLAB_NODE_NAME=node$r \
			FABRICLAB_REPORT_DIR="$tmp/$1/reports" \
			"$tool" bench -b 1M -e 1M -n "$n" -w 0 -c 0 \
			>"$tmp/$1/out$r" 2>"$tmp/$1/err$r" &
		pids+=($!)
	done
}

# Waits until every rank's stderr says it reached its timed loop, up to 30 s.
all_timing() { # case
	local end=$(($(now_ms) + 30000)) r
	for r in 0 1 2 3; do
		until grep -q timing "$tmp/$1/err$r" 2>/dev/null; do
			[ "$(now_ms)" -lt "$end" ] || return 1
			sleep 0.05
		done
	done
}

# Each survivor exits non-zero by t0 + limit ms; the reports left parse.
survivors() { # case t0 limit_ms [any: exit 0 allowed]
	local r p end=$(($2 + $3)) worst=0 rc before=$failures
	for r in 0 1 3; do
		p=${pids[$r]}
		while kill -0 "$p" 2>/dev/null && [ "$(now_ms)" -lt "$end" ]; do sleep 0.05; done
		if kill -0 "$p" 2>/dev/null; then
			fail "$1: rank $r still running $3 ms after the death"
			continue
		fi
		wait "$p"
		rc=$?
		[ "$rc" -ne 0 ] || [ -n "${4:-}" ] || fail "$1: rank $r exited 0 with rank $victim gone"
		[ $(($(now_ms) - $2)) -gt "$worst" ] && worst=$(($(now_ms) - $2))
	done
	kill -9 "${pids[$victim]}" 2>/dev/null
	wait "${pids[$victim]}" 2>/dev/null
	local bad
	bad=$(python3 - "$tmp/$1/reports" <<'PY'
import json, os, sys
bad = []
for name in sorted(os.listdir(sys.argv[1])):
    if name.endswith(".json"):
        try:
            json.load(open(os.path.join(sys.argv[1], name)))
        except ValueError as e:
            bad.append("%s: %s" % (name, e))
print("; ".join(bad))
PY
)
	[ -z "$bad" ] || fail "$1: reports that do not parse: $bad"
	local n
	n=$(ls "$tmp/$1/reports" 2>/dev/null | grep -c '\.json$')
	[ "$failures" -eq "$before" ] &&
		echo "ok - $1: every survivor out within ${worst} ms; $n report(s) left, all parse"
}

setup_kill() {
	start_ranks setup
	sleep 0.3 # the ranks are starting: bootstrap and connections under way
	kill -9 "${pids[$victim]}"
	survivors setup "$(now_ms)" 5000
}

mid_transfer_kill() {
	start_ranks transfer
	all_timing transfer || { fail "transfer: the ranks never reached their timed loop"; return; }
	sleep 0.5
	kill -9 "${pids[$victim]}"
	survivors transfer "$(now_ms)" 5000
}

stopped() {
	start_ranks stopped
	all_timing stopped || { fail "stopped: the ranks never reached their timed loop"; return; }
	kill -STOP "${pids[$victim]}"
	# the shim gives up after FABRICLAB_SHIM_TIMEOUT (2 s) without progress
	survivors stopped "$(now_ms)" $((2000 + 5000))
}

finalize_kill() {
	local end
	start_ranks finalize 40
	end=$(($(now_ms) + 60000))
	until grep -q 'Avg bus bandwidth' "$tmp/finalize/out$victim" 2>/dev/null; do
		[ "$(now_ms)" -lt "$end" ] || { fail "finalize: rank $victim never finished"; return; }
		kill -0 "${pids[$victim]}" 2>/dev/null || break
		sleep 0.01
	done
	kill -9 "${pids[$victim]}" 2>/dev/null
	survivors finalize "$(now_ms)" 5000 any
}

start=$SECONDS
setup_kill
mid_transfer_kill
stopped
finalize_kill
echo "# $((SECONDS - start)) s"
[ "$failures" -eq 0 ]
