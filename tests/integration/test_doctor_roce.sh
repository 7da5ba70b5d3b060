#!/usr/bin/env bash
# `fabriclab doctor`'s RoCE lossless checks and `--prom`, on the fixture trees
# (tests/fixtures/sysfs): roce-lossless (trust dscp, PFC and ECN on priority 3) passes with
# NCCL_IB_TC=106 and fails with NCCL's default TC 0 (priority 0 is lossy), saying what to set;
# the same tree trusting pcp follows NCCL_IB_SL instead; roce-mismatch (PFC on 4 only, ECN's
# notification point off on 3, pause frames on 3) fails PFC and warns ECN and the pause frames;
# the healthy tree (nothing readable) only informs. --prom writes well-formed textfile metrics
# with the PFC/ECN, lossless, port and GPUDirect gauges; an unwritable --prom file exits 1.
# Usage: test_doctor_roce.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
fixtures=tests/fixtures/sysfs
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-doctor-roce.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_SYSFS_ROOT FABRICLAB_IB_HCA $(env | grep -o '^NCCL_[A-Z0-9_]*')
export FABRICLAB_IBVERBS_LIB=/nonexistent/libibverbs.so.1
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

doctor() { # tree [args]: output in $tmp/out, status in $rc
	local tree=$1
	shift
	FABRICLAB_SYSFS_ROOT=$tree timeout 30 "$tool" doctor "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
# name status [regex...]: the status and a line matching each regex
expect() {
	local name=$1 want=$2 miss=""
	shift 2
	for re in "$@"; do
		grep -Eq -- "$re" "$tmp/out" || miss="$miss [$re]"
	done
	if [ "$rc" -eq "$want" ] && [ -z "$miss" ]; then
		ok "$name"
	else
		not_ok "$name: status $rc (expected $want), missing:$miss"
		grep -E '^(PASS|INFO|WARN|FAIL) +(pfc|ecn|pause)' "$tmp/out" | sed 's/^/#   /'
	fi
}

NCCL_IB_TC=106 doctor $fixtures/roce-lossless
expect lossless-tc106 0 '^PASS +pfc +eth2: PFC on priority 3, .*NCCL_IB_TC=106 -> DSCP 26 -> priority 3' \
	'^PASS +ecn +eth2: ECN on priority 3 at both points' '^INFO +pause +eth2: priority 3: rx pause 4100'
doctor $fixtures/roce-lossless
expect lossless-default-tc 1 \
	'^FAIL +pfc +eth2: PFC off on priority 0, .*NCCL_IB_TC=0 -> DSCP 0 .*on for 3 only: set NCCL_IB_TC=106'

cp -a $fixtures/roce-lossless "$tmp/pcp"
echo pcp >"$tmp/pcp/class/net/eth2/qos/trust"
NCCL_IB_TC=106 NCCL_IB_SL=3 doctor "$tmp/pcp"
expect pcp-sl3 0 '^PASS +pfc +eth2: PFC on priority 3, .*trust pcp: NCCL_IB_SL=3 -> priority 3'
NCCL_IB_TC=106 doctor "$tmp/pcp"
expect pcp-default-sl 1 '^FAIL +pfc +eth2: PFC off on priority 0, .*trust pcp: NCCL_IB_SL=0.*set NCCL_IB_SL=3'

NCCL_IB_TC=106 doctor $fixtures/roce-mismatch
expect mismatch 1 '^FAIL +pfc +eth2: PFC off on priority 3, .*on for 4 only' \
	'^WARN +ecn +eth2: ECN on priority 3: notification point OFF, reaction point on' \
	'^WARN +pause +eth2: pause frames on priority 3 \(rx 5200, tx 0\) where this NIC has PFC off'

doctor $fixtures/healthy
expect healthy-unreadable 0 '^INFO +pfc +eth2: PFC settings not readable' '^INFO +ecn +eth2: ECN settings not readable'

# --prom: every sample line is `name{labels} value`, and the gauges say what the checks said.
prom_has() { # file regex...
	local f=$1 miss=""
	shift
	for re in "$@"; do
		grep -Eq -- "$re" "$f" || miss="$miss [$re]"
	done
	[ -z "$miss" ] || echo "missing:$miss"
}
well_formed() { # file: the lines that are neither comments nor samples
	grep -Ev '^(# (HELP|TYPE) [a-z_]+ .*|[a-z_]+(\{([a-z_]+="[^"]*",?)*\})? -?[0-9.e+]+)$' "$1"
}
NCCL_IB_TC=106 doctor $fixtures/roce-lossless --prom "$tmp/lossless.prom"
NCCL_IB_TC=106 doctor $fixtures/roce-mismatch --prom "$tmp/mismatch.prom"
doctor $fixtures/peermem-missing --prom "$tmp/peermem.prom"
bad=$(for f in "$tmp"/*.prom; do well_formed "$f"; done)
miss=$(prom_has "$tmp/lossless.prom" \
	'^fabriclab_roce_pfc_enabled\{netdev="eth2",priority="3"\} 1$' \
	'^fabriclab_roce_pfc_enabled\{netdev="eth2",priority="4"\} 0$' \
	'^fabriclab_roce_ecn_enabled\{netdev="eth2",point="np",priority="3"\} 1$' \
	'^fabriclab_roce_nccl_priority\{netdev="eth2",trust="dscp"\} 3$' \
	'^fabriclab_roce_nccl_lossless\{netdev="eth2"\} 1$' \
	'^fabriclab_port_up\{port="mlx5_0/1",link_layer="InfiniBand",netdev=""\} 1$' \
	'^fabriclab_port_rate_gbps\{port="mlx5_1/1",link_layer="Ethernet",netdev="eth2"\} 100$' \
	'^fabriclab_port_counter\{port="mlx5_1/1",counter="ethtool/rx_prio3_pause",severity="congestion"\} 4100$' \
	'^fabriclab_gpudirect_ready 1$' '^fabriclab_doctor_exit_status 0$')
miss2=$(prom_has "$tmp/mismatch.prom" '^fabriclab_roce_nccl_lossless\{netdev="eth2"\} 0$' \
	'^fabriclab_doctor_check\{check="pfc",subject="eth2"\} 3$' '^fabriclab_doctor_exit_status 1$')
miss3=$(prom_has "$tmp/peermem.prom" '^fabriclab_gpudirect_ready 0$')
if [ -z "$bad$miss$miss2$miss3" ]; then
	ok "prom: well-formed textfiles; PFC/ECN, lossless, port, counter and GPUDirect gauges right"
else
	not_ok "prom: malformed lines [$bad] or $miss $miss2 $miss3"
fi
doctor $fixtures/healthy --prom /nonexistent-dir/x.prom
if [ "$rc" -eq 1 ] && grep -q -- '--prom /nonexistent-dir/x.prom' "$tmp/err"; then
	ok "prom-unwritable: exit 1 naming the file"
else
	not_ok "prom-unwritable: status $rc: $(cat "$tmp/err")"
fi

[ "$failures" -eq 0 ]
