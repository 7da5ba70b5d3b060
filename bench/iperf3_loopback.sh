#!/usr/bin/env bash
# iperf3 on the same loopback, beside socket_vs_raw: ROUNDS runs of BYTES in 512 KiB writes, one
# stream, its receiver's GB/s as min / median / max. Skips, saying why, without iperf3.
# Usage: bench/iperf3_loopback.sh [BYTES, e.g. 64M] [ROUNDS]
set -euo pipefail
bytes=${1:-64M} rounds=${2:-5}
if ! command -v iperf3 >/dev/null; then
	echo "iperf3 not installed (apt-get install iperf3): no iperf3 figure"
	exit 0
fi
port=$((20000 + $$ % 20000))
for ((r = 0; r < rounds; r++)); do
	iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	server=$!
	json=
	for try in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.2 # the server listens a moment after it starts
		json=$(iperf3 -c 127.0.0.1 -p "$port" -n "$bytes" -l 512K -J 2>/dev/null) && break
	done
	[ -n "$json" ] && python3 -c 'import json, sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e9)' <<<"$json" || true
	kill "$server" 2>/dev/null || true # not left behind when no client got through
	wait "$server" 2>/dev/null || true
done | python3 -c '
import statistics, sys
v = sorted(float(x) for x in sys.stdin if x.strip())
if not v:
    sys.exit(print("  iperf3: no run completed (server did not answer)"))
print("  iperf3 -n %s -l 512K, %d runs: GB/s %.2f / %.2f / %.2f (min / median / max)" % (sys.argv[1], len(v), v[0], statistics.median(v), v[-1]))' "$bytes"
