#!/usr/bin/env bash
# A rank SIGKILLed in the middle of an all_reduce must make every other rank
# fail within 5 s, with a message naming the failed call and peer, never hang.
# Two ways to run ranks: independent processes of a torchrun-style job (env
# RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT), and `bench --ranks 4`, whose
# launcher must report the dead rank and stop the others.
# Usage: test_rank_killed.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
victim=2
export FABRICLAB_SOCKET_IFNAME=lo NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_PIDFILE
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-killed.XXXXXX")
started=()
cleanup() {
	for p in "${started[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
# The plugin writes a report per process at exit; keep them out of the source tree.
export FABRICLAB_REPORT_DIR=$tmp/reports

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

# Long enough to still be running when killed; 1 MiB keeps every link busy.
bench_args=(bench -b 1M -e 1M -n 100000000 -w 0 -c 0)
# The failed call and its peer. In the ring (rank r sends to r+1, receives from r-1) each
# survivor fails on a call to one of its own two peers, in that peer's direction: which one
# depends on who noticed first (a victim's neighbour busy on its other peer may see that one
# exit first, on a loaded machine). The first survivor to fail can only have seen the victim
# die, so at least one message names the victim.
failed_call() { # peer-pattern: (send to|receive from) rank N
	echo "(test|isend|irecv)\(\) on the ($1) failed"
}
ring_peers() { # rank world: the peers rank talks to, as failed_call's pattern
	local r=$1 n=$2
	echo "send to rank $(((r + 1) % n))|receive from rank $(((r + n - 1) % n))"
}
named_victim=0

now_ms() { echo $(($(date +%s%N) / 1000000)); }

not_ok() {
	echo "not ok - $*"
	failures=$((failures + 1))
}

free_port() {
	/usr/bin/python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# Polls a command until it succeeds or timeout_s pass.
wait_for() { # timeout_s command...
	local limit=$(($(now_ms) + $1 * 1000))
	shift
	until "$@"; do
		[ "$(now_ms)" -lt "$limit" ] || return 1
		sleep 0.05
	done
}

# Every rank logging to these files reached its timed loop.
all_timing() { # files...
	local f
	for f in "$@"; do grep -q "timing" "$f" 2>/dev/null || return 1; done
}

# Waits for pid (a child of this shell) to exit by start_ms + limit_ms; sets status, elapsed.
wait_exit() { # pid limit_ms start_ms
	while kill -0 "$1" 2>/dev/null && [ $(($(now_ms) - $3)) -lt "$2" ]; do
		sleep 0.05
	done
	elapsed=$(($(now_ms) - $3))
	if kill -0 "$1" 2>/dev/null; then
		status=hung
		return 1
	fi
	wait "$1"
	status=$?
}

start_ranks() { # port -> pids[], errs[]
	local r
	pids=() errs=()
	for r in 0 1 2 3; do
		RANK=$r WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$1 \
			FABRICLAB_NODE_NAME=node$r "$tool" "${bench_args[@]}" \
			>"$tmp/env$r.out" 2>"$tmp/env$r.err" &
		pids+=($!) errs+=("$tmp/env$r.err")
	done
	started+=("${pids[@]}")
}

stop_ranks() {
	local p
	for p in "${pids[@]}"; do
		kill -9 "$p" 2>/dev/null
		wait "$p"
	done
}

check_survivor() { # rank start_ms
	local r=$1 msg want
	if ! wait_exit "${pids[$r]}" 5000 "$2"; then
		not_ok "torchrun-style: rank $r still running 5 s after rank $victim died"
		return
	fi
	want=$(ring_peers "$r" 4)
	msg=$(grep -E "fabriclab bench: rank $r: .*$(failed_call "$want")" "$tmp/env$r.err")
	if [ "$status" -eq 0 ]; then
		not_ok "torchrun-style: rank $r exited 0 after rank $victim died"
	elif [ -z "$msg" ]; then
		not_ok "torchrun-style: rank $r exited $status without naming the failed call and" \
			"its peer ($want)"
		tail -n 3 "$tmp/env$r.err" | sed 's/^/#   /'
	else
		echo "ok - torchrun-style: rank $r failed in $elapsed ms: ${msg#fabriclab bench: }"
		[[ $msg =~ (send to|receive from)\ rank\ $victim\ failed ]] && named_victim=1
	fi
}

# Case 1: four independent processes; each survivor must notice on its own.
torchrun_style() {
	local attempt start r
	# The port is picked before rank 0 binds it; should another process take it, pick again (up
	# to 3 starts). Only a start that could not listen is retried: what is judged, the
	# survivors failing fast and naming the killed rank, is judged once, on the run that started.
	for attempt in 1 2 3; do
		start_ranks "$(free_port)"
		wait_for 30 all_timing "${errs[@]}" && break
		grep -q "cannot listen" "${errs[0]}" || break
		stop_ranks
	done
	if ! all_timing "${errs[@]}"; then
		not_ok "torchrun-style: the 4 ranks never reached the timed loop"
		tail -n 3 "${errs[@]}" | sed 's/^/#   /'
		return
	fi
	sleep 0.5
	kill -9 "${pids[$victim]}"
	start=$(now_ms)
	for r in 0 1 3; do
		check_survivor "$r" "$start"
	done
	if [ "$named_victim" -eq 1 ]; then
		echo "ok - torchrun-style: a survivor names the killed rank $victim"
	else
		not_ok "torchrun-style: no survivor named the killed rank $victim"
	fi
}

# Case 2: `bench --ranks 4`; the launcher names the killed rank and stops the rest.
spawned() {
	local pidfile=$tmp/pids err=$tmp/spawn.err bench_pid start msg r pid
	FABRICLAB_SHIM_PIDFILE=$pidfile timeout 120 "$tool" "${bench_args[@]}" --ranks 4 \
		>"$tmp/spawn.out" 2>"$err" &
	bench_pid=$!
	started+=("$bench_pid")
	spawn_ready() { [ -s "$pidfile" ] && [ "$(grep -c timing "$err")" -ge 4 ]; }
	if ! wait_for 30 spawn_ready; then
		not_ok "spawned: ranks never reached the timed loop or no pid file"
		tail -n 3 "$err" | sed 's/^/#   /'
		return
	fi
	started+=($(awk '{ print $2 }' "$pidfile"))
	sleep 0.5
	kill -9 "$(awk -v r=$victim '$1 == r { print $2 }' "$pidfile")"
	start=$(now_ms)
	if ! wait_exit "$bench_pid" 5000 "$start"; then
		not_ok "spawned: bench --ranks 4 still running 5 s after rank $victim died"
		return
	fi
	msg=$(grep -E "fabriclab bench: rank $victim \(pid [0-9]+\) was killed by signal 9" "$err")
	if [ "$status" -eq 0 ] || [ -z "$msg" ]; then
		not_ok "spawned: exit status $status, message: $(tail -n 1 "$err")"
	else
		echo "ok - spawned: bench exited $status in $elapsed ms: ${msg#fabriclab bench: }"
	fi
	while read -r r pid; do
		if kill -0 "$pid" 2>/dev/null; then
			not_ok "spawned: rank $r (pid $pid) outlived the launcher"
		fi
	done <"$pidfile"
}

# Bash reports each killed background job on stderr; keep that out of the test output.
torchrun_style 2>>"$tmp/shell.err"
spawned 2>>"$tmp/shell.err"
[ "$failures" -eq 0 ] || exit 1
exit 0
