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
		echo "not ok - $name='$value' was accepted (exit $rc)"
		failures=$((failures + 1))
		return
	fi
	for text in "$@"; do
		if ! grep -qF -- "$text" "$tmp/out"; then
			echo "not ok - $name='$value': no '$text' in:"
			sed 's/^/    /' "$tmp/out" | head -n 8
			failures=$((failures + 1))
			return
		fi
	done
	echo "ok - $name='$value' fails init: $(grep -m1 -F -- "$1" "$tmp/out" | cut -c1-150)"
}

rejected FABRICLAB_SOCKET_IFNAME garbage "FABRICLAB_SOCKET_IFNAME=garbage" \
	"matches no network interface" "lo"

# and a good value still runs
if ! timeout 60 "$tool" bench --ranks 2 -b 8 -e 8 >"$tmp/out" 2>&1; then
	echo "not ok - the good configuration failed:"; tail -n 5 "$tmp/out"
	failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] && echo "all bad values rejected" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
