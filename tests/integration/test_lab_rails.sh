#!/usr/bin/env bash
# The lab's rails (--rails K): each node gets K NICs on the emulated fabric, a rank on each, and
#  - slow-rail (NIC k of every node at half the link rate: its leaf switch) reads as a rail
#    finding naming that NIC, "N of N nodes' mlx5_k slow", with no device or link besides;
#  - the same NIC slowed on one node only reads as that device, not a rail;
#  - over tcp in network namespaces (root only; skipped otherwise): eth<k> of every node on
#    bridge br<k>, and slow-rail on eth1 reads as that rail;
#  - options that do not fit rails are refused with the reason.
# Each judged case gets up to 3 runs (a loaded 2-core machine can starve a rank now and then).
# Usage: test_lab_rails.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd)
tool=$build/fabriclab
unset FABRICLAB_FAULT FABRICLAB_TRANSPORT FABRICLAB_SHIM_MEM FABRICLAB_SYSFS_ROOT NCCL_DEBUG
failures=0
skipped= # checks that could not be judged here
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-lab-rails.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

if [ "${FABRICLAB_SANITIZER:-}" = tsan ]; then
	echo "skip: under TSan every rank runs ~10x slower and the rates measure the sanitizer"
	exit 77
fi

common=(-n 4 --rails 2 -s 4 -c 2 -g 4M --link-rate 400mbit)

# "kind node dev nfindings kinds" of a run's merged report, and its reason on a second line.
summary() {
	python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
v, f = r["verdict"], r.get("findings", [])
print(v["kind"], v["node"] or "-", v["dev"] or "-", len(f), ",".join(x["kind"] for x in f))
print(v["reason"])
PY
}

# case NAME WANT_FIRST_LINE REASON_PART lab-args...: passes when 1 of 3 runs gives WANT (a
# loaded 2-core machine starves a rank now and then). A rail the lab does not slow, a model
# that no longer finds rails or confuses a rail with one device gives another first line in
# every run, so in all 3; a case right in only a fraction p of runs passes with 1 - (1 - p)^3.
case_of() {
	local name=$1 want=$2 part=$3 got="" try
	shift 3
	for try in 1 2 3; do
		rm -rf "$tmp/runs-$name"
		if ! timeout 120 "$tool" lab --dir "$tmp/runs-$name" "${common[@]}" "$@" \
			>"$tmp/$name.out" 2>&1; then
			not_ok "$name: lab failed: $(tail -5 "$tmp/$name.out")"
			return
		fi
		got=$(summary "$tmp"/runs-"$name"/*/report.json)
		if [ "$(head -1 <<<"$got")" = "$want" ] && grep -qF -- "$part" <<<"$got"; then
			echo "ok - $name: $(head -1 <<<"$got") (run $try)"
			return
		fi
		echo "# $name run $try: $got"
	done
	not_ok "$name: $got; expected $want with \"$part\""
}

case_of slow-rail "rail - mlx5_1 1 rail" "rail mlx5_1: the hops on this device name run, on every node" \
	--fabric roce --rail 1 slow-rail
grep -q '^rails: 4 nodes x 2 NICs (mlx5_0..mlx5_1' "$tmp/slow-rail.out" ||
	not_ok "slow-rail: the rails line is missing"
grep -q "^scenario: slow-rail on rail 1 (mlx5_1 of every node)" "$tmp/slow-rail.out" ||
	not_ok "slow-rail: the scenario line is missing"
case_of one-device "device node2 mlx5_1 1 device" "node2/mlx5_1: its hops run at" \
	--fabric roce --fault 'throttle:node=node2,dev=mlx5_1,rate=50%'
if [ "$(id -u)" -eq 0 ] && command -v ip >/dev/null && ip netns list >/dev/null 2>&1; then
	case_of netns-rail "rail - eth1 1 rail" "rail eth1: the hops on this device name run, on every node" \
		--netns --rail 1 slow-rail
	grep -q 'eth0..eth1, NIC k of every node on leaf switch k: bridge br<k>' \
		"$tmp/netns-rail.out" || not_ok "netns-rail: the rails line is missing"
else
	skipped="netns-rail: needs root and ip netns"
	echo "# skip - $skipped"
fi

refused() { # name expected-message args...
	local name=$1 msg=$2
	shift 2
	if "$tool" lab --dir "$tmp/runs-bad" "$@" >"$tmp/$name.err" 2>&1; then
		not_ok "$name: accepted"
	elif ! grep -qF -- "$msg" "$tmp/$name.err"; then
		not_ok "$name: $(cat "$tmp/$name.err")"
	else
		echo "ok - $name refused"
	fi
}
refused rails-tcp "--rails gives each node K NICs: on the emulated fabric (--fabric roce or ib) or, over tcp, K interfaces on K bridges (--netns)" \
	--rails 2 -n 2
refused rails-too-many "--rails 4 x 8 nodes is 32 ranks: at most 16" --fabric ib --rails 4 -n 8
refused slow-rail-one "slow-rail needs --rails 2 or more" --fabric roce -n 2 slow-rail
refused rail-range "--rail 2: there are 2 rails (0..1)" --fabric roce -n 2 --rails 2 --rail 2 \
	slow-rail
[ "$failures" -eq 0 ] || exit 1
# A check that could not run here: exit 77 with the reason last (tests/run.sh counts a skip).
[ -z "${skipped:-}" ] || { echo "skipped: $skipped"; exit 77; }
