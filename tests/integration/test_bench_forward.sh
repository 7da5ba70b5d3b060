#!/usr/bin/env bash
# What make bench measures the floor of any layer with (bench/run.sh, "the floor at 8 B"):
#   carry      each forwarder of tests/inner/forward_net.c carries a 2-rank all_reduce intact
#              over the in-repo socket plugin, named as its inner and through its requests; and
#              over one that fills its table inside init (IBext; tests/inner/flsock_net.c fill)
#   no inner   without FABRICLAB_FORWARD_INNER, or with an inner of the wrong version, init
#              fails and the message names the variable and the accepted form
#   compare    bench/allreduce_vs.sh runs SO@ext:PEER (a build of fabriclab over PEER) and, with
#              REF=K, prints every plugin's speed against the K-th with the CI of its median;
#              with SCALE, the ns per completion of each other one on the forwarders' scale
#              with its CI, or "not resolved" when the scale's two cannot be told apart
#   read again SAVE=FILE keeps a run's rounds and FROM=FILE reads them back: the same lines;
#              made-up rounds read on the scale as their arithmetic says
# Usage: test_bench_forward.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
inner=$(cd "$build" && pwd)/inner
export FABRICLAB_SOCKET_IFNAME=lo
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_TRANSPORT REF \
	FABRICLAB_FORWARD_INNER FABRICLAB_SHIM_NET_VERSION FABRICLAB_SHIM_NET_MAX_VERSION
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-forward.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export FABRICLAB_REPORT_DIR=$tmp/reports
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench_check_lib.sh
. "$here/bench_check_lib.sh"
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for mode in call wrap spin100; do
	for v in 11 12; do
		so=$inner/libnccl-net-forward-$mode-v$v.so
		FABRICLAB_FORWARD_INNER=$inner/libnccl-net-flsock-v$v.so NCCL_NET_PLUGIN=$so \
			"$tool" bench --ranks 2 -b 8 -e 64K -f 64 -n 5 >"$tmp/out" 2>&1 ||
			{ fail "forward-$mode-v$v: bench failed: $(tail -3 "$tmp/out")"; continue; }
		why=$(check_output "$tmp/out" all_reduce 8 64K 64 2) ||
			fail "forward-$mode-v$v: $why"
		# the inner's own name and version: its table is the one NCCL drives
		grep -q "net flsock (v$v)" "$tmp/out" || fail "forward-$mode-v$v: not over flsock v$v"
	done
done

FABRICLAB_FORWARD_INNER=$inner/libnccl-net-flsock-fill.so \
	NCCL_NET_PLUGIN=$inner/libnccl-net-forward-wrap-v12.so \
	"$tool" bench --ranks 2 -b 8 -e 64K -f 64 -n 5 >"$tmp/out" 2>&1 ||
	fail "forward-wrap-v12 over a table filled in init: $(tail -3 "$tmp/out")"
why=$(check_output "$tmp/out" all_reduce 8 64K 64 2) || fail "forward-wrap-v12 over fill: $why"

expect_refused() { # label expected-text: init fails and says why
	"$tool" bench --ranks 2 -b 8 -e 8 -n 2 >"$tmp/out" 2>&1 && fail "$1: bench passed"
	grep -qF "$2" "$tmp/out" || fail "$1: no '$2' in: $(head -3 "$tmp/out")"
	grep -q "init failed: invalid usage" "$tmp/out" || fail "$1: init did not fail"
}
NCCL_NET_PLUGIN=$inner/libnccl-net-forward-wrap-v11.so expect_refused "no inner" \
	"FABRICLAB_FORWARD_INNER is unset: expected the path of a net plugin exporting ncclNetPlugin_v11"
FABRICLAB_FORWARD_INNER=$inner/libnccl-net-flsock-v12.so \
	NCCL_NET_PLUGIN=$inner/libnccl-net-forward-wrap-v11.so expect_refused "v12 inner under v11" \
	"libnccl-net-flsock-v12.so: exports no ncclNetPlugin_v11"

peer=$inner/libnccl-net-flsock-v12.so
plugin=$(cd "$build" && pwd)/libnccl-net-fabriclab.so
list=("$peer" "$inner/libnccl-net-forward-wrap-v12.so" "$inner/libnccl-net-forward-spin100-v12.so"
	"$plugin@ext:$peer")
vs() { # allreduce_vs.sh over the list with the scale, 3 rounds
	FABRICLAB_FORWARD_INNER=$peer REF=1 SCALE=forward-wrap-v12:forward-spin100-v12:100 RANKS=2 \
		SIZE_LIST=8 ITERS=20 WARMUP=2 "$here/../../bench/allreduce_vs.sh" "$build" 3 "${list[@]}"
}
SAVE=$tmp/rounds vs >"$tmp/vs" 2>&1 || fail "allreduce_vs.sh failed: $(tail -3 "$tmp/vs")"
for name in "forward-wrap-v12" "$(basename "$build")/fabriclab(ext:flsock-v12)"; do
	grep -qE "^  $(sed 's/[().]/\\&/g' <<<"$name") +/ flsock-v12 speed: [0-9.]+ \(95% CI [0-9.]+-[0-9.]+\)$" \
		"$tmp/vs" || fail "no speed of $name against the peer: $(cat "$tmp/vs")"
done
# on the scale: every plugin but the two that make it, in ns
fl="$(basename "$build")/fabriclab(ext:flsock-v12)"
fl_re=$(sed 's/[().]/\\&/g' <<<"$fl")
ns_re="-?[0-9]+ ns \(95% CI -?[0-9]+ to -?[0-9]+; on the scale forward-spin100-v12 = \+100 ns\)"
flat_re="scale not resolved \(forward-spin100-v12 reads no slower than forward-wrap-v12 in [0-9]+ of 2000 resamples\)"
grep -qE "^  $fl_re +per completion beyond forward-wrap-v12: ($ns_re|$flat_re)$" "$tmp/vs" ||
	fail "no reading on the scale for $fl: $(grep -v '^fabriclab:' "$tmp/vs")"
grep -q "^  forward-.*per completion beyond" "$tmp/vs" && fail "the scale's own plugins read on it"
# the saved rounds read back give the same figures, without a run
FROM=$tmp/rounds vs >"$tmp/again" 2>&1 || fail "FROM=FILE failed: $(tail -3 "$tmp/again")"
diff <(grep -v '^fabriclab:' "$tmp/vs") "$tmp/again" >/dev/null ||
	fail "FROM=FILE read differently: $(diff <(grep -v '^fabriclab:' "$tmp/vs") "$tmp/again")"
FROM=$tmp/none vs >"$tmp/none.out" 2>&1 && fail "FROM=FILE of no file ran"
grep -q "FROM=$tmp/none: no such file of saved rounds" "$tmp/none.out" ||
	fail "FROM=FILE of no file: $(cat "$tmp/none.out")"
# made-up rounds (peer, wrap, spin, fabriclab): 10, 10, 11 and 10.5 us, the same jitter in each:
# fabriclab at (1 - 0.952) / (1 - 0.909) x 100 ns = 52 ns. With the spin 0.3 us slower than the wrap in
# 11 rounds and 0.1 us faster in 10 its median is slower, but a resample often is not: no reading.
made_up() { # spin's time in even and in odd rounds
	for r in $(seq 0 20); do
		awk -v r="$r" -v even="$1" -v odd="$2" 'BEGIN {
			n = split("10.0 10.0 " (r % 2 ? odd : even) " 10.5", t, " ")
			for (p = 1; p <= n; p++)
				printf "%d %d 8 %.3f 0\n", r, p - 1, t[p] + (r % 5) * 0.02 }'
	done
}
made_up 11.0 11.0 >"$tmp/made"
FROM=$tmp/made vs | grep -qE "^  $fl_re +per completion beyond forward-wrap-v12: 52 ns \(95% CI 5[12] to 5[23];" ||
	fail "made-up rounds on the scale: $(FROM=$tmp/made vs | tail -2)"
made_up 10.3 9.9 >"$tmp/made"
FROM=$tmp/made vs | grep -qE "^  $fl_re +per completion beyond forward-wrap-v12: $flat_re$" ||
	fail "a scale that resamples flip read as resolved: $(FROM=$tmp/made vs | tail -2)"
# SO@ext:PEER ran fabriclab over the peer (its reports say ext; its own socket would say socket)
grep -lqE '"transport": *"ext"' "$tmp"/reports/*.json 2>/dev/null ||
	fail "SO@ext:PEER wrote no report through ext"

[ "$failures" -eq 0 ] && echo "bench forwarders: all passed"
exit $((failures > 0))
