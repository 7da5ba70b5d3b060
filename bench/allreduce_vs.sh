#!/usr/bin/env bash
# all_reduce on RANKS (default 4) local ranks through each plugin in turn, ROUNDS interleaved rounds (the order
# rotating): per size, min / median / max of time and busbw per plugin, and the first plugin's
# ratios to each other one, paired round by round (both saw the same machine).
# Usage: [RANKS=N] bench/allreduce_vs.sh BUILD ROUNDS PLUGIN_SO [PEER_SO...]
set -euo pipefail
build=$1 rounds=$2 ranks=${RANKS:-4}
shift 2
plugins=("$@")
n=${#plugins[@]}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 0; r < rounds; r++)); do
	for ((k = 0; k < n; k++)); do
		p=$(((k + r) % n))
		NCCL_NET_PLUGIN="${plugins[p]}" "$build/fabriclab" bench --ranks "$ranks" -b 8 -e 64M -f 8 \
			-n 10 -w 3 | awk -v r="$r" -v p="$p" '!/^#/ && NF >= 8 { print r, p, $1, $5, $7 }' >>"$out"
	done
done
names=$(for so in "${plugins[@]}"; do basename "$so" .so | sed 's/^libnccl-net-//'; done)
python3 - "$out" "$rounds" "$ranks" $names <<'PY'
import sys, statistics
path, rounds, ranks, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
t, bw = {}, {}
for line in open(path):
    r, p, size, us, gbs = line.split()
    t[int(p), int(size), int(r)] = float(us)
    bw[int(p), int(size), int(r)] = float(gbs)
def spread(v, fmt="%.3f"):
    v = sorted(v)
    return " / ".join(fmt % x for x in (v[0], statistics.median(v), v[-1]))
sizes = sorted({k[1] for k in t})
print("%d ranks, %d rounds; time in us and busbw in GB/s as min / median / max" % (ranks, rounds))
for size in sizes:
    print("size %d B:" % size)
    for p, name in enumerate(names):
        print("  %-22s time %s   busbw %s" % (name, spread([t[p, size, r] for r in range(rounds)], "%.1f"),
                                             spread([bw[p, size, r] for r in range(rounds)])))
    for p in range(1, len(names)):
        speed = [t[p, size, r] / t[0, size, r] for r in range(rounds)]
        print("  %s / %s speed (its time / ours, goal >= 1.00): %s" % (names[0], names[p], spread(speed, "%.2f")))
PY
