#!/usr/bin/env bash
# `fabriclab lab --netns` (root only): every rank in its own network namespace on a bridge.
# The kernel's tc halving the target's cable (tbf on both ends of its veth) must lead the report
# to the same device as the plugin's halve-cable; the namespaces go away at the end, on Ctrl-C,
# and a setup left by a killed run is removed by the next run.
# Usage: test_lab_netns.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
[[ $tool = /* ]] || tool=$PWD/$tool
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-lab-netns.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_FAULT FABRICLAB_NODE_NAME RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
. "$here/lab_lib.sh"

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
# Skipped (exit 77, the reason last: tests/run.sh counts it as a skip, not a pass).
if [ "$(id -u)" -ne 0 ]; then
	echo "skipped: --netns needs root (network namespaces, veth pairs, a bridge)"
	exit 77
fi
for cmd in ip tc; do
	command -v "$cmd" >/dev/null ||
		{ echo "skipped: no $cmd (iproute2; scripts/deps.sh installs it)"; exit 77; }
done

# The namespaces of one run: fabriclab-<pid of its launcher>-*.
namespaces_of() {
	ip netns list 2>/dev/null | awk -v p="fabriclab-$1-" 'index($1, p) == 1 { print $1 }'
}
launcher_pid() { basename "$1" | sed 's/.*-//'; }

common=(--netns --link-rate 200mbit --grad 4M --steps 3 --compute 5)
for ranks in 4 8; do
	t=$((ranks - 2))
	if lab "tc$ranks" -n "$ranks" "${common[@]}" --target "node$t" --tc halve-cable; then
		expect_verdict "tc$ranks" "tc halves node$t's veth: its device" \
			"^kind=device node=node$t dev=eth0 "
		# The ground truth is independent: the plugin injected nothing.
		if grep -q '^faults the ranks applied' "$tmp/tc$ranks.out" ||
		   ! grep -q "^fault: tc tbf at 100 mbit on both ends of node$t's veth" \
			"$tmp/tc$ranks.out"; then
			not_ok "tc$ranks: the plugin injected a fault, or tc was not named"
		else
			ok "tc$ranks: tbf at 100 mbit did it, the plugin injected nothing"
		fi
		left=$(namespaces_of "$(launcher_pid "$run")")
		if [ -z "$left" ]; then ok "tc$ranks: namespaces removed at exit"; else
			not_ok "tc$ranks: namespaces left: $left"; fi
	fi
done
lab plugin4 -n 4 "${common[@]}" --target node2 halve-cable &&
	expect_verdict plugin4 "the plugin halves node2 in namespaces: the same device as tc" \
		"^kind=device node=node2 dev=eth0 "

# A setup left behind by a run killed with SIGKILL: its launcher's pid no longer runs fabriclab.
dead=$(sh -c 'echo $$') # a pid that has just exited
ip netns add "fabriclab-$dead-hub" && ip netns add "fabriclab-$dead-node0"
# A healthy run of 3 steps on 2 busy cores names a link now and then (1 in about 7 here: one hop
# at 0.89x with its median message 1.10x, issue 12's open healthy-run noise); one more run is
# allowed, as test_lab_findings allows, and the first one's verdict is printed.
if lab healthy4 -n 4 "${common[@]}" healthy; then
	first=$(verdict_of "$tmp/healthy4.json" 2>&1)
	if [[ $first =~ ^kind=none\  ]]; then
		ok "healthy4: healthy in namespaces ($first)"
	else
		echo "# healthy4: the first run said $first; running it once more"
		lab healthy4again -n 4 "${common[@]}" healthy &&
			expect_verdict healthy4again "healthy in namespaces (second run)" '^kind=none '
	fi
fi
said="removed stale network namespace fabriclab-$dead-hub"
if [ -z "$(namespaces_of "$dead")" ] && grep -q "$said" "$tmp/healthy4.out"; then
	ok "a stale setup (fabriclab-$dead-*) is detected and removed"
else
	not_ok "stale fabriclab-$dead-* not removed: $(namespaces_of "$dead")"
	for ns in $(namespaces_of "$dead"); do ip netns delete "$ns"; done
fi

# Ctrl-C in the middle of a long run: exit 130 and nothing left behind.
setsid "$tool" lab -n 4 "${common[@]}" --steps 100000 --dir "$tmp/int" >"$tmp/int.out" 2>&1 &
pid=$!
for _ in $(seq 50); do
	[ -n "$(namespaces_of "$pid")" ] && ls "$tmp/int/"*/ranks.log >/dev/null 2>&1 && break
	sleep 0.1
done
sleep 0.5
had=$(namespaces_of "$pid" | wc -l)
kill -INT -- "-$pid"
wait "$pid"
status=$?
left=$(namespaces_of "$pid")
if [ "$had" -eq 5 ] && [ "$status" -eq 130 ] && [ -z "$left" ]; then
	ok "Ctrl-C: exit 130, the 5 namespaces it had are removed"
else
	not_ok "Ctrl-C: had $had namespaces, exit $status, left: $left"
	sed 's/^/#   /' "$tmp/int.out" | tail -n 5
	for ns in $left; do ip netns delete "$ns"; done
fi

finish
