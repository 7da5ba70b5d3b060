#!/usr/bin/env bash
# The lab in the regime of a real fabric (--like) and hardware faults of the emulated NIC
# (--hw-fault), docs/lab.md:
#  - bad presets and fault specs are refused (exit 2) with the field and its accepted form;
#  - a 4-rank --like ndr run: the scale factor printed (time 3200x slower, ports at 125 Mb/s),
#    the plugin told no link rate but the ports' speed (FABRICLAB_PORT_SPEED: every device
#    at 125 Mbit/s), the emulated NICs' schedule summed, a report merged, no finding;
#  - a --hw-fault run: the fault is in the NIC, so no rank's report lists it as injected, and
#    the verdict names the downgraded port (xdr);
#  - a cable halved by the plugin under roce400 and a pause storm under hdr: each named as
#    the device of its node;
#  - with rails (--like implies the fabric the rails need): one NIC of a node downgraded is
#    that NIC (device node1/mlx5_1).
# One run per preset and case; scripts/lab_matrix.sh runs the whole matrix.
# Usage: test_lab_like.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd)
tool=$build/fabriclab
unset FABRICLAB_FAULT FABRICLAB_TRANSPORT FABRICLAB_SHIM_MEM FABRICLAB_SYSFS_ROOT NCCL_DEBUG
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-lab-like.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lab_lib.sh"

[ -e "$build/libfabriclab-fakeverbs.so" ] || { echo "skip: no fake verbs in $build"; exit 77; }
if [ "${FABRICLAB_SANITIZER:-}" = tsan ]; then
	echo "skip: under TSan the emulated NIC cannot keep its schedule"
	exit 77
fi


lab_refused 'expected hdr, ndr, xdr or roce400' --like zdr
lab_refused '--hw-fault needs --like' --hw-fault 'downgrade:node=node1,rate=50%'
lab_refused 'rate: expected a share of the line rate from 1% to 100%' --like xdr \
	--hw-fault 'downgrade:node=node1,rate=0%'
lab_refused 'node: expected node<K>' --like xdr --hw-fault 'downgrade:node=node4,rate=50%'
lab_refused 'every/for: expected both, with for < every' --like ndr \
	--hw-fault 'pause:node=node1,every=100ms,for=100ms'
lab_refused 'add: expected a one-way latency with its unit' --like ndr \
	--hw-fault 'latency:node=node1,add=20'
lab_refused 'nic: expected a NIC index from 0 to --rails - 1' --like ndr \
	--hw-fault 'latency:node=node1,nic=1,add=20us'
lab_refused 'kind: expected downgrade, pause, latency, spine, uplink or leafport' --like ndr \
	--hw-fault 'jitter:node=node1'
lab_refused 'drop --link-rate' --like ndr --link-rate 1gbit
lab_refused 'drop --fabric ib' --like roce400 --fabric ib
lab_refused 'expected simple, ll128 or ll' --like ndr --proto ll64

if lab ndr --like ndr -n 4 -s 6 -c 5 -g 4M healthy; then
	grep -q 'scale: time runs 3200x slower: ports at 125 Mb/s (1x SDR / 20)' "$tmp/ndr.out" &&
		ok "ndr: the scale factor printed" || not_ok "ndr: no scale line: $(head -5 "$tmp/ndr.out")"
	grep -q '^emulated NIC schedule: [0-9]* messages on 4 ranks, .* loopback reads (flushes), [0-9]* on the fabric after' "$tmp/ndr.out" &&
		ok "ndr: the emulated NICs' schedule summed" ||
		not_ok "ndr: no schedule line: $(ls "$run/fabric" | grep -c 'schedule-.*\.json') schedule files"
	speeds=$("$py" -c 'import json,sys
r=json.load(open(sys.argv[1]))
print(" ".join(sorted({str(h.get("line_rate_gbs")) for h in r.get("hops",[])})))' "$tmp/ndr.json" 2>&1)
	[ "$speeds" = "0.015625" ] && ok "ndr: every hop's line rate is the port's 125 Mb/s" ||
		not_ok "ndr: line rates \"$speeds\", wanted 0.015625 GB/s"
	expect_verdict ndr "ndr healthy: no finding" '^kind=none '
	# the fabric is its description: the lab wrote it and set no emulation variable
	"$py" - "$run" <<'PY' && ok "ndr: topology.json describes the run's fabric" ||
import json, sys
t = json.load(open(sys.argv[1] + "/topology.json"))
assert t["fabriclab_fabric"] == 1 and t["layout"] == "flat"
assert [n["name"] for n in t["nodes"]] == ["node0", "node1", "node2", "node3"]
assert all(c["port"] == "ib:1x:sdr" for n in t["nodes"] for c in n["nics"])
assert t["physics"] == {"on": True, "latency_ns": 3840000, "msg_cost_ns": 960000, "rate_div": 20}
assert t["emulation"]["state_dir"] == sys.argv[1] + "/fabric"
PY
		not_ok "ndr: topology.json is not the run's description"
	# every request a verbs sender timed is either alone on its connection's wire (it pays
	# the round trip) or queued behind the one before (docs/report-format.md, hops[])
	split=$("$py" - "$tmp/ndr.json" <<'PY' 2>&1
import json, sys
hops = json.load(open(sys.argv[1]))["hops"]
def wrong(w, messages):
    both = w["alone"] and w["queued"]
    return (w["alone"] + w["queued"] != messages or
            (both and not 0 < w["queued_p50"] <= w["alone_p50"]))
bad = [h for h in hops if wrong(h["send"]["wire_time_us"], h["send"]["messages"])]
print("%d of %d hops" % (len(bad), len(hops)) if bad or not hops else "ok")
PY
)
	[ "$split" = ok ] && ok "ndr: every sender's requests split into alone and queued" ||
		not_ok "ndr: requests alone + queued != messages, or queued slower: $split"
fi

if lab down --like xdr -n 4 -s 6 -c 5 -g 4M --hw-fault 'downgrade:node=node2,rate=50%'; then
	grep -q "hardware fault: downgrade:node=node2,rate=50%" "$tmp/down.out" &&
		ok "hw-fault: said in the header" || not_ok "hw-fault: not in the header"
	if grep -qi 'injected' "$tmp/down.json" && "$py" -c 'import json,sys
r=json.load(open(sys.argv[1]))
sys.exit(0 if any(r.get("injected") or []) else 1)' "$tmp/down.json" 2>/dev/null; then
		not_ok "hw-fault: a rank lists an injected fault: the plugin must not know"
	else
		ok "hw-fault: no rank lists it as injected"
	fi
	expect_named_or_likeliest down "xdr downgrade of node2's port: its device" \
		'^kind=device node=node2 dev=mlx5_0 ' "device node2/mlx5_0"
	# round trips dilute every hop alike: against the others the port still reads about half,
	# and no share of line above 105% is printed
	shares=$("$py" -c 'import json,sys
r=json.load(open(sys.argv[1]))
v=r["verdict"]
ok = 0.3 < v["ratio"] < 0.7 and 0 < v["line_share"] <= 1.05 and all(
    (h.get("pct_line_rate") or 0) <= 105 or h.get("measurement_error") for h in r["hops"])
print("%s ratio %.2f, line share %.2f" % ("ok" if ok else "bad", v["ratio"], v["line_share"]))' "$tmp/down.json" 2>&1)
	[ "${shares%% *}" = ok ] && ok "down: the port against the others: ${shares#* }" ||
		not_ok "down: wanted the port at 0.3-0.7x the others and no share of line over 105%: $shares"
fi

if lab halve --like roce400 -n 4 -s 6 -c 5 -g 4M halve-cable --target node1; then
	expect_verdict halve "roce400 halve-cable on node1: its device" \
		'^kind=device node=node1 dev=mlx5_0 '
fi

if lab pause --like hdr -n 4 -s 4 -c 5 -g 4M --hw-fault 'pause:node=node3,every=100ms,for=40ms'
then
	expect_verdict pause "hdr pause storm on node3: its device" '^kind=device node=node3 dev=mlx5_0 '
fi

if lab rails --like ndr -n 4 --rails 2 -s 6 -c 5 -g 8M \
	--hw-fault 'downgrade:node=node1,nic=1,rate=50%'; then
	expect_named_or_likeliest rails "ndr, 4 nodes x 2 rails, node1's NIC 1 downgraded: that NIC" \
		'^kind=device node=node1 dev=mlx5_1 ' "device node1/mlx5_1"
fi

[ "$failures" -eq 0 ] || exit 1
