#!/usr/bin/env bash
# make demo: 4 local ranks through the plugin, then each connection's counters and the merged report.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-demo.XXXXXX")
export FABRICLAB_SOCKET_IFNAME=${FABRICLAB_SOCKET_IFNAME:-lo}
export FABRICLAB_REPORT_DIR="$work/reports"

echo "== fabriclab bench: all_reduce on 4 local ranks (node0..node3) over loopback"
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET "$build/fabriclab" bench --ranks 4 -b 1K -e 64M -f 4 -n 10 -w 3 \
	2>"$work/plugin.log"
echo
echo "== per-connection counters, as the plugin logs them (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET)"
grep -E 'bytes in [0-9]+ messages' "$work/plugin.log" | sed 's/^[^ ]* //' | sort -u | head -16
echo
echo "== the merged report: fabriclab report $FABRICLAB_REPORT_DIR"
"$build/fabriclab" report "$FABRICLAB_REPORT_DIR"
echo
echo "(plugin log: $work/plugin.log; reports: $FABRICLAB_REPORT_DIR)"
