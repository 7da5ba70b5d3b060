#!/usr/bin/env bash
# Small effects, as real fabrics show them: throttles at 80% and 90% of a paced fabric
# (`fabriclab lab`, 4 ranks, --link-rate 200mbit = 25 MB/s per hop), on node2's device and on the
# one hop node1 -> node2. From the per-process reports:
#  - the throttled hops run at the fraction of the healthy hops' rate in the same run (which
#    cancels machine load) within 6%, and never beat the target by more than 5%: a throttle that
#    does nothing (1.0), or a 90% that paces at 80%, is outside;
#  - the throttled device paces its receives too (node2's receive view not above the target, 6%);
#  - a verdict that names a node or a hop names node2 or a throttled hop (device), node1 or node2
#    or the hop node1 -> node2 (hop); the verdict's kind is not asserted yet (the marked line).
#    At 90% the verdict is often `none` today: then nothing is named and nothing checked.
# Tolerance, measured on the 2-core development machine under load (3 runs of each case): the
# sender's view of a throttled hop over the healthy senders' median was within 3.9% of the
# fraction (80% device: 0.83 once when the whole run was slow); node2's receive view of a
# throttled device within 3.2% of the target; a throttled hop's rate never above 1.007x its
# target. 6% keeps 1.5x that margin and still excludes the next step (80% vs 90% vs 100%).
# With a load average of 23 on the 2 cores (other builds), node2's receive view of a 90%
# device fell to 0.71x its target and socket receivers' views of healthy hops to 0.9x: only
# the ratios of senders' views in one run, and upper bounds, stay put under such load.
# Usage: test_fault_small.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
[[ $tool = /* ]] || tool=$PWD/$tool
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-fault-small.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_FAULT FABRICLAB_NODE_NAME RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
. "$here/lab_lib.sh"

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

common=(-n 4 --link-rate 200mbit --grad 4M --steps 3 --compute 5)

# check_small NAME PCT dev|hop: the rates of the reports in $run/reports and the merged $tmp/NAME.json.
check_small() {
	"$py" - "$run/reports" "$tmp/$1.json" "$2" "$3" <<'PY'
import glob, json, statistics, sys
d, merged_path, pct, mode = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
frac, link = pct / 100, 25e6 / 1e9           # GB/s
target = link * frac
reps = {}
for f in glob.glob(d + "/node*.json"):
    r = json.load(open(f))
    reps[r["node"]] = r
assert sorted(reps) == ["node0", "node1", "node2", "node3"], sorted(reps)
nxt = lambda n: "node%d" % ((int(n[4:]) + 1) % 4)
def send(n):                                  # n's own send hop to the next node, as n timed it
    return next(h["wire_gbs"] for h in reps[n]["hops"] if h["view"] == "send" and
                h["dst_node"] == nxt(n))
def recv_on(n, src):
    return next(h["wire_gbs"] for h in reps[n]["hops"] if h["view"] == "recv" and
                h["src_node"] == src)
if mode == "dev":
    paced_senders = ["node2"]                 # node2 -> node3 paced by node2's device
    slow_hops = {("node1", "node2"), ("node2", "node3")}
else:
    paced_senders = ["node1"]                 # node1 -> node2 paced by the hop rule
    slow_hops = {("node1", "node2")}
healthy = statistics.median(send(n) for n in reps if n not in paced_senders and
                            (mode == "hop" or n != "node1"))
errs, said = [], []
for n in paced_senders:
    got = send(n)
    ratio = got / healthy
    said.append("%s sends at %.4f GB/s (target %.4f), %.3fx the healthy %.4f" %
                (n, got, target, ratio, healthy))
    if abs(ratio / frac - 1) > 0.06:
        errs.append("%s's send is %.3fx the healthy hops, not %.2f within 6%%" % (n, ratio, frac))
    if got > target * 1.05:
        errs.append("%s's send %.4f GB/s beats its target %.4f" % (n, got, target))
if mode == "dev":
    # Its receive pacer holds what arrives to the target; a loaded machine only slows it more.
    got = recv_on("node2", "node1")
    said.append("node2 receives at %.4f GB/s" % got)
    if got > target * 1.06:
        errs.append("node2 receives at %.4f GB/s, above its target %.4f (+6%%)" % (got, target))
m = json.load(open(merged_path))
v = m["verdict"]
# diagnosis issue 12: expect kind device here (dev), kind link naming node1 -> node2 (hop)
hop = (v["hop"]["src_node"], v["hop"]["dst_node"]) if v["hop"] else None
if v["kind"] == "link":
    named, right = "hop %s -> %s" % hop, hop in slow_hops
elif v["kind"] not in ("none", "not-enough-evidence"):
    named = v["node"]
    right = v["node"] in ({"node2"} if mode == "dev" else {"node1", "node2"})
else:  # naming nothing (healthy, or not sure) is not naming the wrong node
    named, right = "nothing (%s)" % v["kind"], True
if not right:
    errs.append("verdict %s names %s, not node2 or a throttled hop" % (v["kind"], named))
said.append("verdict %s names %s (kind not judged yet)" % (v["kind"], named))
print("; ".join(said))
sys.exit("; ".join(errs) or None)
PY
}

# A process descheduled for 100 ms on a loaded machine slows one hop more than the others:
# 1 of 3 runs must show the rates and the verdict right. That cannot hide a broken feature: a
# pacer that misses its rate, a fault applied to the wrong connections, a report that loses the
# rate or a verdict that names another node is wrong in every run, so in all 3; a case right in
# only a fraction p of runs passes with probability 1 - (1 - p)^3.
for spec in "dev 80 throttle:node=node2,rate=80%" "dev 90 throttle:node=node2,rate=90%" \
	    "hop 80 throttle:node=node1,peer=node2,rate=80%" "hop 90 throttle:node=node1,peer=node2,rate=90%"; do
	read -r mode pct fault <<<"$spec"
	name=$mode$pct
	for try in 1 2 3; do
		lab "$name" "${common[@]}" --fault "$fault" || break
		if out=$(check_small "$name" "$pct" "$mode" 2>&1); then
			ok "$name: $fault: $out"
			break
		elif [ "$try" -eq 3 ]; then
			not_ok "$name: $fault: $(echo "$out" | tail -n 1)"
		fi
	done
done

finish
