#!/usr/bin/env bash
# make bench (from bench/run.sh): what LTTng tracing costs.
#  1. all_reduce busbw, 4 ranks, 64 MiB in 512 KiB steps, alternating rounds of: every
#     fabriclab event enabled in a session (goal >= 0.97x of no session), no session
#     (goal >= 0.999x of build/notrace), and the plugin built with -DFABRICLAB_NO_TRACING;
#  2. ns per event and per disabled check, from bench/trace_cost over a null transport.
# Runs under its own per-user lttng-sessiond in a private LTTNG_HOME (as root: as nobody, via
# setpriv), so no other job's events land in its sessions; kills exactly that PID at the end.
# Usage: bench/trace_bench.sh BUILD_DIR [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
cd "$(dirname "$0")/.."
plugin=$(pwd)/$build/libnccl-net-fabriclab.so
notrace=$(pwd)/$build/notrace/libnccl-net-fabriclab.so
provider=$(pwd)/$build/libfabriclab-lttng.so
for f in "$plugin" "$notrace" "$provider" "$build/bench/trace_cost"; do
	[ -e "$f" ] || { echo "trace bench: $f missing (make all $notrace)"; exit 1; }
done
for c in lttng lttng-sessiond babeltrace2; do
	command -v "$c" >/dev/null || { echo "trace bench: $c missing (scripts/deps.sh)"; exit 1; }
done
export FABRICLAB_SOCKET_IFNAME=${FABRICLAB_SOCKET_IFNAME:-lo} FABRICLAB_REPORT=off
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-trace-bench.XXXXXX")
chmod 777 "$tmp"
own= session=
as=()
[ "$(id -u)" -eq 0 ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
user=("${as[@]}" env HOME="$tmp" LTTNG_HOME="$tmp")
lt() { "${user[@]}" lttng "$@"; }
cleanup() {
	[ -n "$session" ] && lt destroy "$session" >/dev/null 2>&1
	[ -n "$own" ] && kill "$own" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
"${user[@]}" lttng-sessiond --daemonize --no-kernel
own=$(cat "$tmp/.lttng/lttng-sessiond.pid")

busbw() { # plugin
	"${user[@]}" NCCL_NET_PLUGIN="$1" "$build/fabriclab" bench --ranks 4 -b 64M -e 64M -n 10 -w 2 |
		awk '/Avg bus bandwidth/ { print $NF }'
}

# One round inside a session recording every fabriclab event; prints "busbw events discarded".
traced_busbw() { # round
	session=flbench$$_$1
	lt create "$session" --output="$tmp/trace$1" >/dev/null
	lt enable-event -u 'fabriclab:*' -s "$session" >/dev/null
	lt add-context -u -t vpid -s "$session" >/dev/null
	lt start "$session" >/dev/null
	local bw discarded events
	bw=$(busbw "$plugin")
	discarded=$(lt stop "$session" 2>&1 | awk '/discarded/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i } END { print s + 0 }')
	lt destroy "$session" >/dev/null
	session=
	events=$(babeltrace2 "$tmp/trace$1" 2>/dev/null | grep -c "fabriclab:" || true)
	rm -rf "$tmp/trace$1"
	echo "$bw $events $discarded"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "== tracing: all_reduce, 4 ranks, 64 MiB in 512 KiB steps, alternating $rounds rounds"
on=() off=() out=() events=() discarded=()
for ((r = 1; r <= rounds; r++)); do
	read -r bw ev ds < <(traced_busbw "$r")
	on+=("$bw") events+=("$ev") discarded+=("$ds")
	off+=("$(busbw "$plugin")")
	out+=("$(busbw "$notrace")")
done
m_on=$(median "${on[@]}") m_off=$(median "${off[@]}") m_out=$(median "${out[@]}")
echo "busbw all fabriclab events in a session: ${on[*]} GB/s (events per run ${events[*]}, discarded ${discarded[*]})"
echo "busbw no session:                        ${off[*]} GB/s"
echo "busbw tracing compiled out (notrace):    ${out[*]} GB/s"
awk -v a="$m_on" -v b="$m_off" -v c="$m_out" 'BEGIN {
	printf "median session %.3f / no session %.3f = %.4f (goal >= 0.97)\n", a, b, a / b
	printf "median no session %.3f / notrace %.3f = %.4f (goal >= 0.999)\n", b, c, b / c }'

echo
echo "== tracing: ns per event (bench/trace_cost, isend+test pairs over a null transport, 2 events a pair)"
cost() { "${user[@]}" "$@" "$build/bench/trace_cost" | sed -n 's/.*pair \([0-9.]*\) ns; enable check \([0-9.]*\) ns.*/\1 \2/p'; }
read -r p_off c_off < <(cost FABRICLAB_LTTNG_PROVIDER=off)
read -r p_idle c_idle < <(cost FABRICLAB_LTTNG_PROVIDER="$provider")
session=flcost$$
lt create "$session" --output="$tmp/cost" >/dev/null
lt enable-channel -u big --subbuf-size=4M --num-subbuf=8 -s "$session" >/dev/null
lt enable-event -u 'fabriclab:*' -c big -s "$session" >/dev/null
lt start "$session" >/dev/null
read -r p_on c_on < <(cost FABRICLAB_LTTNG_PROVIDER="$provider")
lost=$(lt stop "$session" 2>&1 | awk '/discarded/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i } END { print s + 0 }')
lt destroy "$session" >/dev/null
session=
echo "pair: provider off ${p_off} ns, loaded without a session ${p_idle} ns, session recording ${p_on} ns (${lost} events discarded)"
awk -v off="$p_off" -v idle="$p_idle" -v on="$p_on" -v c="$c_idle" 'BEGIN {
	printf "per recorded event %.1f ns; per disabled hook %.3f ns (enable check alone); no session vs off %+.1f ns a pair\n",
		(on - idle) / 2, c, idle - off }'
