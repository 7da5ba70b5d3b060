#!/usr/bin/env bash
# Bad values of the plugin's variables fail the job at init, through the real
# plugin loaded by the shim, with a message naming the variable, the value and
# what would be accepted; none is taken silently.
# Usage: test_bad_values.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-badvalues.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export FABRICLAB_REPORT_DIR=$tmp/reports
failures=0

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

# rejected NAME VALUE TEXT...: a 2-rank bench with NAME=VALUE fails and says every TEXT.
rejected() {
	local name=$1 value=$2 rc
	shift 2
	env "$name=$value" timeout 30 "$tool" bench --ranks 2 -b 8 -e 8 >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
		echo "not ok - $name=$(printf %q "${value:0:24}") was accepted (exit $rc)"
		failures=$((failures + 1))
		return
	fi
	for text in "$@"; do
		if ! grep -qF -- "$text" "$tmp/out"; then
			echo "not ok - $name=$(printf %q "${value:0:24}"): no '$text' in:"
			sed 's/^/    /' "$tmp/out" | head -n 8
			failures=$((failures + 1))
			return
		fi
	done
	echo "ok - $name=$(printf %q "${value:0:24}") fails init:" \
		"$(grep -m1 -F -- "$1" "$tmp/out" | sed 's/.*init failed: //' | cut -c1-120)"
}

rejected FABRICLAB_SOCKET_IFNAME garbage "FABRICLAB_SOCKET_IFNAME=garbage" \
	"matches no network interface" "lo"
rejected FABRICLAB_RANK garbage 'FABRICLAB_RANK="garbage"' "expected a rank"
rejected FABRICLAB_SOCKET_NSTREAMS ' 7' 'FABRICLAB_SOCKET_NSTREAMS=" 7"' "expected an integer"
rejected FABRICLAB_SOCKET_NSTREAMS '+3' 'FABRICLAB_SOCKET_NSTREAMS="+3"' "expected an integer"
rejected FABRICLAB_SOCKET_BUF ' 64K' 'FABRICLAB_SOCKET_BUF=" 64K"' "expected a byte count"
rejected FABRICLAB_TRACE_INTERVAL_MS garbage 'FABRICLAB_TRACE_INTERVAL_MS="garbage"' \
	"expected an integer from 10"
long=$(printf 'n%.0s' $(seq 5000))
rejected FABRICLAB_NODE_NAME "$long" "(5000 characters)" "at most 47"
rejected FABRICLAB_NODE_NAME $'node\e[31mred\a' 'FABRICLAB_NODE_NAME="node\x1b[31mred\x07"' \
	"letters, digits"
# and what reached the terminal holds no raw escape or bell byte
if grep -q $'\e\|\a' "$tmp/out"; then
	echo "not ok - a raw control character of the node name reached stderr"
	failures=$((failures + 1))
fi

# and a good value still runs
if ! timeout 60 "$tool" bench --ranks 2 -b 8 -e 8 >"$tmp/out" 2>&1; then
	echo "not ok - the good configuration failed:"; tail -n 5 "$tmp/out"
	failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] && echo "all bad values rejected" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
