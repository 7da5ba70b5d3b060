#!/usr/bin/env bash
# `fabriclab doctor` against the fixture sysfs trees (tests/fixtures/sysfs) and this machine's
# /sys: the pass/warn/fail lines each fixture must give, and the exit status.
#  - healthy: every port, rate, counter, GPUDirect and placement check passes, exit 0
#    (verbs: absent library -> warn, the fake verbs -> pass with the three devices);
#  - trained-down: FAIL on the IB port at 2X and on the RoCE port at 50 of 100 Gb/s, exit 1;
#  - symbol-errors: errors counted since reset warn; rising between the two samples of
#    --interval fail (and rising pause frames warn);
#  - peermem-missing: GPUDirect fails, dma-buf and placement warn, exit 1;
#  - the real /sys of a machine without RDMA: says so, exit 0 (1 with --require-rdma);
#  - --json mirrors the text; NCCL_* settings that keep NCCL off RDMA warn; usage errors exit 2;
#  - FABRICLAB_TRANSPORT=ext:NAME / --ext PLUGIN: the wrapped plugin's version, path, optional
#    entries and every device's properties; a missing one fails.
# Usage: test_doctor.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
fixtures=tests/fixtures/sysfs
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-doctor.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_SYSFS_ROOT FABRICLAB_IB_HCA $(env | grep -o '^NCCL_[A-Z0-9_]*')
export FABRICLAB_IBVERBS_LIB=/nonexistent/libibverbs.so.1

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
fail() { echo "not ok - $*"; failures=$((failures + 1)); }
skipped=()
# A check that cannot run here: said now, counted, and the reason repeated as the last line.
skip() { echo "skip - $*"; skipped+=("$*"); }

# doctor TREE [options...]: output in $tmp/out, exit status in $rc
doctor() {
	local tree=$1
	shift
	FABRICLAB_SYSFS_ROOT=$tree timeout 30 "$tool" doctor "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# expect NAME LEVEL CHECK SUBJECT_AND_TEXT_REGEX: one line of the last output matches
expect() {
	grep -Eq "^$2 +$3 +$4" "$tmp/out" || { fail "$1: no line '$2 $3 $4' in:"; sed 's/^/    /' "$tmp/out"; return 1; }
}
expect_rc() {
	[ "$rc" -eq "$2" ] || { fail "$1: exit status $rc, expected $2"; sed 's/^/    /' "$tmp/out" "$tmp/err"; return 1; }
}
none_of() { # NAME LEVEL: no line of that level
	! grep -Eq "^$2 " "$tmp/out" || { fail "$1: unexpected $2 lines:"; grep -E "^$2 " "$tmp/out" | sed 's/^/    /'; return 1; }
}
expect_count() { # NAME LEVEL N: exactly N lines of that level
	local n
	n=$(grep -c "^$2" "$tmp/out")
	[ "$n" -eq "$3" ] || { fail "$1: $n $2 lines, expected $3"; return 1; }
}
expect_text() { # NAME TEXT: the last output holds TEXT, as written
	grep -qF -- "$2" "$tmp/out" || { fail "$1: no '$2' in the output"; return 1; }
}
# expect_lines NAME [LEVEL CHECK REGEX]...: every triple matches a line (stops at the first miss)
expect_lines() {
	local name=$1
	shift
	[ $(($# % 3)) -eq 0 ] || { fail "$name: expect_lines takes LEVEL CHECK REGEX triples"; return 1; }
	while [ $# -gt 0 ]; do
		expect "$name" "$1" "$2" "$3" || return 1
		shift 3
	done
}
# fixture_gives NAME TREE RC [LEVEL CHECK REGEX]...: doctor on TREE exits RC with those lines
fixture_gives() {
	local name=$1 tree=$2 want=$3
	shift 3
	doctor "$tree"
	expect_rc "$name" "$want" && expect_lines "$name" "$@"
}

healthy() {
	local ok=1
	doctor $fixtures/healthy
	expect_rc healthy 0 || ok=0
	expect healthy WARN verbs "verbs could not be loaded \(cannot load /nonexistent" || ok=0
	expect healthy PASS rdma "3 RDMA ports on 3 devices" || ok=0
	for p in mlx5_0/1 mlx5_1/1 mlx5_2/1; do
		expect healthy PASS port "$p: ACTIVE LinkUp" || ok=0
		expect healthy PASS counters "$p: [0-9]+ counters read, no link error counted" || ok=0
	done
	expect healthy PASS rate "mlx5_0/1: 200 Gb/s, the highest \(same HCA model\)" || ok=0
	expect healthy PASS rate "mlx5_1/1: 100 Gb/s, the highest \(link modes\)" || ok=0
	expect healthy PASS port "mlx5_1/1: .*Ethernet, eth2" || ok=0
	expect healthy PASS gpudirect "peermem: peer memory client nvidia_peermem loaded" || ok=0
	expect healthy PASS placement "0000:04:00.0: GPU and mlx5_0 \(0000:03:00.0\) under the same PCIe switch \(PXB, below 0000:01:00.0\)" || ok=0
	expect healthy INFO nccl-env "no NCCL_\* variable set" || ok=0
	expect_text healthy "look deeper: ibstat mlx5_0 1" || ok=0
	expect_text healthy "look deeper: ethtool -S eth2" || ok=0
	expect_text healthy "look deeper: nvidia-smi topo -m" || ok=0
	none_of healthy FAIL || ok=0
	[ $ok -eq 1 ] && echo "ok - healthy: every port, rate, counter, GPUDirect and placement check passes, exit 0"
}

# The fake libibverbs with the fixture's three devices: the verbs line passes.
fake_verbs() {
	local lib=$build/libfabriclab-fakeverbs.so
	if [ ! -f "$lib" ]; then
		skip "fake verbs: $lib not built (make all builds it)"
		return
	fi
	. "$(dirname "$0")/fabric_lib.sh"
	describe_fabric "$tmp/fv.json" "$tmp/fv" "" '[{"name": "node0", "nics": [{"name": "mlx5_0", "port": "ib:4x:hdr"}, {"name": "mlx5_1", "port": "eth:4x:25g"}, {"name": "mlx5_2", "port": "ib:4x:hdr"}]}]'
	FABRICLAB_IBVERBS_LIB=$lib FABRICLAB_FABRIC=$tmp/fv.json doctor $fixtures/healthy
	expect_rc "fake verbs" 0 &&
		expect "fake verbs" PASS verbs ".*libfabriclab-fakeverbs.so opened, 3 devices: mlx5_0, mlx5_1, mlx5_2" &&
		echo "ok - fake verbs: the doctor lists the devices libibverbs opens"
}

trained_down() {
	fixture_gives trained-down $fixtures/trained-down 1 \
		FAIL rate "mlx5_2/1: trained down: active 100 Gb/s of 200 Gb/s \(same HCA model\)" \
		FAIL rate "mlx5_1/1: trained down: active 50 Gb/s of 100 Gb/s \(link modes\)" \
		PASS rate "mlx5_0/1: 200 Gb/s" &&
		expect_count trained-down FAIL 2 &&
		echo "ok - trained-down: FAIL on the IB port at half rate and the RoCE port at 50 of 100 Gb/s, exit 1"
}

# Counters: standing errors warn; errors rising between the two samples fail.
symbol_errors() {
	local copy=$tmp/symbol-errors ib roce i
	fixture_gives symbol-errors $fixtures/symbol-errors 0 \
		WARN counters "mlx5_0/1: errors counted since the last reset: symbol_error 120, link_downed 1, port_rcv_errors 4" ||
		return
	cp -a $fixtures/symbol-errors "$copy"
	ib=$(readlink -f "$copy/class/infiniband/mlx5_0")/ports/1/counters
	roce=$(readlink -f "$copy/class/net/eth2")
	FABRICLAB_SYSFS_ROOT=$copy timeout 30 "$tool" doctor --interval 2 >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	for ((i = 0; i < 200; i++)); do
		grep -q "first counter sample taken" "$tmp/err" && break
		sleep 0.05
	done
	echo 180 >"$ib/symbol_error"
	sed -i 's/rx_pause_ctrl_phy: 0/rx_pause_ctrl_phy: 5/' "$roce/ethtool-S.txt"
	wait $pid
	rc=$?
	expect_rc rising 1 &&
		expect_lines rising \
			FAIL counters "mlx5_0/1: link errors rising in 2 s: symbol_error \+60: a bad cable" \
			WARN counters "mlx5_1/1: congestion counters rising in 2 s: rx_pause_ctrl_phy \+5" \
			PASS counters "mlx5_2/1: no error or congestion counter rose in 2 s" &&
		echo "ok - symbol-errors: standing errors warn; symbol errors rising between samples FAIL, pause frames warn"
}

peermem_missing() {
	fixture_gives peermem-missing $fixtures/peermem-missing 1 \
		FAIL gpudirect "peermem: no peer memory module and no dma-buf" \
		WARN gpudirect "dma-buf: NVIDIA's proprietary kernel module" \
		WARN placement "0000:81:00.0: the nearest NIC, mlx5_0 \(0000:03:00.0\), is on another CPU socket \(SYS\)" &&
		expect_text peermem-missing "look deeper: lsmod | grep -E 'nvidia_peermem|nv_peer_mem'" &&
		echo "ok - peermem-missing: GPUDirect FAIL, dma-buf and placement warn, exit 1"
}

real_machine() {
	if [ -d /sys/class/infiniband ] && [ -n "$(ls /sys/class/infiniband)" ]; then
		doctor /sys
		[ "$rc" -le 1 ] && grep -q "^summary:" "$tmp/out" &&
			echo "ok - real /sys: runs (this machine has RDMA devices; nothing else asserted)"
		return
	fi
	unset FABRICLAB_IBVERBS_LIB
	FABRICLAB_SYSFS_ROOT= timeout 30 "$tool" doctor >"$tmp/out" 2>"$tmp/err"
	rc=$?
	export FABRICLAB_IBVERBS_LIB=/nonexistent/libibverbs.so.1
	expect_rc "real /sys" 0 && expect "real /sys" WARN rdma "no RDMA device under /sys/class/infiniband" &&
		none_of "real /sys" FAIL || return
	doctor /sys --require-rdma
	expect_rc "real /sys --require-rdma" 1 && expect "real /sys" FAIL rdma "no RDMA device" &&
		echo "ok - real /sys without RDMA: says there is no RDMA device, exit 0 (1 with --require-rdma)"
}

json_output() {
	doctor $fixtures/trained-down --json
	expect_rc json 1 || return
	python3 - "$tmp/out" >"$tmp/py" 2>&1 <<'EOF' || { fail "json: $(tail -n 3 "$tmp/py")"; return; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "fabriclab-doctor" and d["schema_version"] == 1, d["schema"]
assert d["exit_status"] == 1 and d["summary"]["fail"] == 2, d["summary"]
fails = [(c["check"], c["subject"]) for c in d["checks"] if c["level"] == "fail"]
assert fails == [("rate", "mlx5_1/1"), ("rate", "mlx5_2/1")], fails
assert all(c["command"] for c in d["checks"] if c["level"] != "info"), "a check without command"
ports = {p["name"]: p for p in d["ports"]}
assert sorted(ports) == ["mlx5_0/1", "mlx5_1/1", "mlx5_2/1"], list(ports)
p = ports["mlx5_2/1"]
assert p["trained_down"] is True and p["active_gbps"] == 100 and p["max_gbps"] == 200, p
assert ports["mlx5_1/1"]["netdev"] == "eth2"
assert ports["mlx5_0/1"]["counters"]["counters/symbol_error"] == {"value": 0, "delta": None, "severity": "error"}
EOF
	echo "ok - --json: checks, summary, exit status and ports as the text says"
}

nccl_env() {
	local ok=1
	NCCL_IB_HCA=mlx5_9 NCCL_IB_DISABLE=1 NCCL_DEBUG=INFO doctor $fixtures/healthy
	expect_rc nccl-env 0 || ok=0
	expect nccl-env INFO nccl-env "NCCL_DEBUG=INFO NCCL_IB_DISABLE=1 NCCL_IB_HCA=mlx5_9" || ok=0
	expect nccl-env WARN nccl-env "NCCL_IB_DISABLE: NCCL_IB_DISABLE=1 turns off" || ok=0
	expect nccl-env WARN nccl-env "NCCL_IB_HCA: NCCL_IB_HCA=mlx5_9 selects no active port" || ok=0
	NCCL_IB_HCA==mlx5_0:1,mlx5_2 doctor $fixtures/healthy
	expect nccl-env PASS nccl-env "NCCL_IB_HCA: NCCL_IB_HCA==mlx5_0:1,mlx5_2 selects 2 active ports" || ok=0
	[ $ok -eq 1 ] && echo "ok - NCCL_* in effect listed; IB_DISABLE and an IB_HCA that selects nothing warn"
}

usage() {
	local ok=1
	doctor $fixtures/healthy --interval 0
	expect_rc "--interval 0" 2 || ok=0
	doctor $fixtures/healthy --bogus
	expect_rc "--bogus" 2 || ok=0
	doctor $fixtures/symbol-errors --strict
	expect_rc "--strict with warnings" 3 || ok=0
	[ $ok -eq 1 ] && echo "ok - bad usage exits 2; --strict exits 3 on warnings alone"
}

# The plugin ext would wrap, found by NAME as NCCL finds it, or by path with --ext.
ext_plugin() {
	local ok=1 inner
	inner=$(cd "$build/inner" && pwd)
	LD_LIBRARY_PATH=$inner FABRICLAB_TRANSPORT=ext:flsock-v10 FABRICLAB_SOCKET_IFNAME=lo \
		doctor $fixtures/healthy
	expect_rc ext-name 0 || ok=0
	expect ext-name PASS plugin "flsock: wrapping flsock \(ncclNetPlugin_v10\) from [^ ]*/?libnccl-net-flsock-v10.so; optional entries: none" || ok=0
	expect ext-name INFO plugin "flsock/0: device 0 lo: 10000 Mbps, ptrSupport 0x1 \(host\), .*device type host \(0, version 0\).*maxP2pBytes 1099511627776" || ok=0
	doctor $fixtures/healthy --ext "$inner/libnccl-net-devoff-v9.so"
	expect ext-path PASS plugin "devoff: wrapping devoff \(ncclNetPlugin_v9\) from $inner/libnccl-net-devoff-v9.so; optional entries: makeVDevice getDeviceMr irecvConsumed" || ok=0
	expect ext-path INFO plugin "devoff/0: device 0 dv0: 200000 Mbps, ptrSupport 0x3 \(host,cuda\), pciPath /sys/devices/pci0000:00/0000:00:07.0, guid 0xd0ff00, .*device type GPU unpack \(1, version 7\)" || ok=0
	expect ext-path INFO plugin "devoff/1: device 1 dv1: .*device type host" || ok=0
	doctor $fixtures/healthy --ext /nonexistent/libnccl-net-x.so
	expect_rc ext-missing 1 || ok=0
	expect ext-missing FAIL plugin "/nonexistent/libnccl-net-x.so: FABRICLAB_TRANSPORT=ext:/nonexistent/libnccl-net-x.so: cannot load" || ok=0
	[ $ok -eq 1 ] && echo "ok - doctor names the wrapped plugin, its version, path, entries and devices"
}

start=$SECONDS
ext_plugin
healthy
fake_verbs
trained_down
symbol_errors
peermem_missing
real_machine
json_output
nccl_env
usage
echo "# $((SECONDS - start)) s"
[ "$failures" -eq 0 ] || { echo "# $failures failed"; exit 1; }
# Checks that could not run here: exit 77 with the reasons last (tests/run.sh counts a skip).
[ ${#skipped[@]} -eq 0 ] || { printf "skipped: %s\n" "$(printf "%s; " "${skipped[@]}" | sed "s/; $//")"; exit 77; }
exit 0
