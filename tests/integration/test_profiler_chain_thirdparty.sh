#!/usr/bin/env bash
# fabriclab's profiler role in front of real third-party profilers, built outside this repository
# and never committed (docs/profiler.md#chaining says how): FABRICLAB_THIRDPARTY_PROFILERS lists
# their libraries. The NCCL stand-in (test_profiler_chain --play: NCCL 2.30's sequence, API events
# included) plays one job with each alone, then with fabriclab chaining it: both write their
# outputs; the third party's has as many events per category as alone, fabriclab's report the same
# hops and bytes as fabriclab alone. Known outputs: NCCL's example profiler
# (plugins/profiler/example, a chrome trace per rank: NCCL_PROFILE_DUMP_FILE).
set -u
build=${1:-build}
player="$build/tests/test_profiler_chain"
libs=${FABRICLAB_THIRDPARTY_PROFILERS:-}
if [ -z "$libs" ]; then
	echo "skip: FABRICLAB_THIRDPARTY_PROFILERS is unset (e.g. NCCL's example profiler built outside the repository: docs/profiler.md)"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export FABRICLAB_REPORT=brief NCCL_PROFILE_EVENT_MASK=4095

categories() { cat "$1"/trace_*.json 2>/dev/null | grep -o '"cat": *"[A-Za-z_]*"' | sort | uniq -c; }

hop_bytes() { # the hops of a run's reports: key and bytes, sorted
	python3 - "$1" <<'PY'
import glob, json, sys
out = []
for f in glob.glob(sys.argv[1] + "/node*.json"):
    r = json.load(open(f))
    if not r.get("complete"):
        print("incomplete", f)
    for h in r["hops"]:
        out.append("%s/%s %s/%s %s %s %d %d" % (h["src_node"], h["src_dev"], h["dst_node"], h["dst_dev"],
                                             h["comm_hash"], h["view"], h["bytes"], h["messages"]))
print("\n".join(sorted(out)))
PY
}

for lib in $libs; do
	name=$(basename "$lib")
	case "$name" in
	*example*) ;;
	*) echo "skip $name: no recipe for its output"; continue ;;
	esac
	for v in 5 6; do
		mkdir -p "$work/$v/alone" "$work/$v/chained" "$work/$v/ref"
		NCCL_PROFILE_DUMP_FILE="$work/$v/alone/trace" "$player" --play "$work/$v/alone" "$v" "$lib" >/dev/null ||
			fail "$name alone, v$v: the stand-in failed"
		NCCL_PROFILE_DUMP_FILE="$work/$v/chained/trace" FABRICLAB_PROFILER_NEXT="$lib" \
			"$player" --play "$work/$v/chained" "$v" >/dev/null || fail "$name chained, v$v: the stand-in failed"
		"$player" --play "$work/$v/ref" "$v" >/dev/null || fail "fabriclab alone, v$v: the stand-in failed"
		alone=$(categories "$work/$v/alone") chained=$(categories "$work/$v/chained")
		[ -n "$alone" ] || fail "$name wrote no trace alone (v$v)"
		[ "$alone" = "$chained" ] || fail "$name v$v: events per category alone
$alone
chained
$chained"
		[ "$(hop_bytes "$work/$v/ref")" = "$(hop_bytes "$work/$v/chained")" ] ||
			fail "fabriclab's report chained to $name (v$v) is not what it is alone"
		[ -n "$(hop_bytes "$work/$v/ref")" ] || fail "fabriclab alone reported no hop (v$v)"
		echo "$name v$v: $(echo "$alone" | awk '{ printf "%s %s, ", $NF, $1 }')fabriclab's report unchanged"
	done
	# NCCL 2.31 (v7) in front of a plugin whose newest is older: what the v6 stand-in gives it alone
	if ! nm -D --defined-only "$lib" | grep -q ' ncclProfiler_v7$'; then
		mkdir -p "$work/7/chained"
		NCCL_PROFILE_DUMP_FILE="$work/7/chained/trace" FABRICLAB_PROFILER_NEXT="$lib" \
			"$player" --play "$work/7/chained" 7 >/dev/null || fail "$name chained, v7: the stand-in failed"
		[ "$(categories "$work/6/alone")" = "$(categories "$work/7/chained")" ] ||
			fail "$name behind fabriclab's v7: events per category differ from its v6 alone"
		echo "$name behind v7 (converted to its v6): as alone under v6"
	fi
done
echo "thirdparty: ok"
