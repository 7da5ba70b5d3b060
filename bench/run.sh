#!/usr/bin/env bash
# make bench: every benchmark, each printing its ratio measured side by side in one run.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
export FABRICLAB_SOCKET_IFNAME=${FABRICLAB_SOCKET_IFNAME:-lo}

echo "== wrapper cost (null transport, isend+test pairs)"
"$build/bench/wrap_cost"
echo
echo "== socket transport vs raw TCP, same streams, loopback"
"$build/bench/socket_vs_raw" "$build/libnccl-net-fabriclab.so" 64M 5
echo
echo "== all_reduce, 4 local ranks through the plugin"
"$build/fabriclab" bench --ranks 4 -b 1M -e 64M -f 4 -n 10 -w 3
echo
echo "== fabriclab report: merging 1024 nodes x 8 devices of synthetic reports"
"$build/bench/report_merge"
