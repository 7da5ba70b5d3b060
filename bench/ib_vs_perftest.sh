#!/usr/bin/env bash
# What the ib transport costs above raw verbs on the same emulated NIC: perftest's ib_write_bw
# over the fake (loaded as libibverbs.so.1) against `fabriclab bench -o sendrecv` with
# FABRICLAB_TRANSPORT=ib over the fake. Both run 2 processes sending both ways at once
# (ib_write_bw -b; sendrecv between 2 ranks), messages of the same size: the shim cuts a
# sendrecv as NCCL does, so NCCL's own NCCL_P2P_NET_CHUNKSIZE and NCCL_CHUNK_SIZE (with
# FABRICLAB_SHIM_STEP, which bounds the chunk) make its chunk the size. perftest -b prints both
# directions together, so its figure
# is halved; fabriclab's algbw is one direction. Rounds alternate; medians of 3 are compared.
# Usage: bench/ib_vs_perftest.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
lib=$(cd "$build" && pwd)/fakeverbs-lib
fake=$(cd "$build" && pwd)/libfabriclab-fakeverbs.so
command -v ib_write_bw >/dev/null || { echo "ib_write_bw missing (scripts/deps.sh)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-ib-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../tests/integration/fabric_lib.sh"
describe_fabric "$tmp/fabric.json" "$tmp/fabric"
export FABRICLAB_FABRIC=$tmp/fabric.json FABRICLAB_REPORT=off FABRICLAB_SOCKET_IFNAME=lo
port=$((21000 + $$ % 10000))

# GB/s one way, from ib_write_bw -b's Gb/s for both ways.
perftest_gbs() { # size iters
	port=$((port + 1))
	LD_LIBRARY_PATH=$lib timeout 120 ib_write_bw -d mlx5_0 -b --report_gbits -p "$port" \
		-s "$1" -n "$2" >"$tmp/srv" 2>&1 &
	for _ in $(seq 200); do	# until the server listens: the client does not retry
		ss -Hltn "sport = :$port" | grep -q . && break
		sleep 0.05
	done
	LD_LIBRARY_PATH=$lib timeout 120 ib_write_bw -d mlx5_0 -b --report_gbits -p "$port" \
		-s "$1" -n "$2" 127.0.0.1 >"$tmp/cli" 2>&1
	wait
	awk -v s="$1" '$1 == s && NF >= 4 { printf "%.3f\n", $4 / 8 / 2 }' "$tmp/cli"
}

fabriclab_gbs() { # size iters
	FABRICLAB_TRANSPORT=ib FABRICLAB_IBVERBS_LIB=$fake FABRICLAB_SHIM_STEP=$1 \
		NCCL_P2P_NET_CHUNKSIZE=$1 NCCL_CHUNK_SIZE=$1 \
		"$build/fabriclab" bench --ranks 2 -o sendrecv -b "$1" -e "$1" -n "$2" -w 2 |
		awk -v s="$1" '$1 == s { print $6 }'
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%10s %8s  %-26s %-26s %s\n' size iters "ib_write_bw GB/s (3 runs)" \
	"fabriclab GB/s (3 runs)" "median ratio"
for spec in 1048576:100 4194304:40 16777216:12 67108864:8; do
	size=${spec%%:*} iters=${spec#*:}
	raw=() ours=()
	for round in 1 2 3; do
		raw+=("$(perftest_gbs "$size" "$iters")")
		ours+=("$(fabriclab_gbs "$size" "$iters")")
	done
	m_raw=$(median "${raw[@]}") m_ours=$(median "${ours[@]}")
	printf '%10s %8s  %-26s %-26s %s\n' "$size" "$iters" "${raw[*]}" "${ours[*]}" \
		"$(awk -v a="$m_ours" -v b="$m_raw" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
done
echo "(goal: ratio >= 0.9 at 4 MiB and above; the fake's NIC is CPU threads, so both sides" \
	"share the machine's cores: compare the ratio, not the GB/s)"
