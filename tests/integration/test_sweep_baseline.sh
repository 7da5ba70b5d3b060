#!/usr/bin/env bash
# `fabriclab sweep --baseline` holds a baseline to the rules a report meets, before any rank
# measures (each case exits 2 at once, naming the file and the field): another format_version,
# a busbw_gbs out of range (1e308, 0, a string), a pair named twice or as NODE1 beside node1,
# a pair from a node to itself, a key given twice, a name with a control character, no
# pairs array, and the samples the model takes as a pair's error: iterations 0, p99_us below
# p50_us, one of them without the other, a device name with a control character. A well-formed
# baseline, with or without those samples, passes the loader (refused next for its message
# size, which proves it was read). Generated files only; no sweep runs.
# Usage: test_sweep_baseline.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-baseline.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_FAULT
failures=0
[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }

# name, pairs JSON, expected phrase; optional header fields replace the default ones
base() { # name header pairs
	printf '{"format": "fabriclab-sweep-baseline", %s "bytes": 2097152, "pairs": [%s]}\n' \
		"$2" "$3" >"$tmp/$1.json"
}
pair() { # src dst gbs
	printf '{"src": "%s", "dst": "%s", "busbw_gbs": %s}' "$1" "$2" "$3"
}
check() { # name expected-phrase
	timeout 20 "$tool" sweep --ranks 2 -b 1M -e 1M --baseline "$tmp/$1.json" \
		>"$tmp/$1.out" 2>"$tmp/$1.err"
	local rc=$?
	if [ "$rc" -eq 2 ] && grep -qF -- "$2" "$tmp/$1.err"; then
		echo "ok - $1: $(head -n 1 "$tmp/$1.err")"
	else
		echo "not ok - $1: exit $rc, expected 2 and '$2' in: $(cat "$tmp/$1.err")"
		failures=$((failures + 1))
	fi
}

v='"format_version": 1,'
good="$(pair node1 node2 40.5), $(pair node2 node1 41)"
base good "$v" "$good"
check good "was measured at 2097152 bytes"
base version999 '"format_version": 999,' "$good"
check version999 "format_version 999: this fabriclab reads format_version 1 only"
base noversion '' "$good"
check noversion "format_version: missing, expected 1"
base huge "$v" "$(pair node1 node2 1e308)"
check huge "pairs[0].busbw_gbs: expected a number above 0 and at most 10000"
base zero "$v" "$(pair node1 node2 0)"
check zero "pairs[0].busbw_gbs: expected a number above 0"
base text "$v" "$(pair node1 node2 '"fast"')"
check text "pairs[0].busbw_gbs: expected a number"
base twice "$v" "$good, $(pair node1 node2 39)"
check twice "pairs[2] (node1 -> node2) repeats pairs[0] (node1 -> node2)"
base case "$v" "$good, $(pair NODE1 node2 39)"
check case "pairs[2] (NODE1 -> node2) repeats pairs[0] (node1 -> node2)"
base self "$v" "$(pair node1 NODE1 40)"
check self "pairs[0]: src and dst are the same node"
base control "$v" "$(pair 'no\u001bde1' node2 40)"
check control "pairs[0].src: expected a node name"
printf '{"format": "fabriclab-sweep-baseline", "format_version": 1, "bytes": 1, "bytes": 2, "pairs": []}' \
	>"$tmp/dupkey.json"
check dupkey "duplicate object key"
base nopairs "$v" ""
sed -i 's/"pairs": \[\]/"pairs": {}/' "$tmp/nopairs.json"
check nopairs "pairs: expected an array"
sampled='{"src": "node1", "dst": "node2", "src_dev": "mlx5_0", "dst_dev": "mlx5_0", "busbw_gbs": 40, "iterations": 12'
base samples "$v" "$sampled, \"p50_us\": 50, \"p99_us\": 52}"
check samples "was measured at 2097152 bytes"
base noiters "$v" "$sampled, \"iterations\": 0}"
sed -i 's/"iterations": 12, //' "$tmp/noiters.json"
check noiters "pairs[0].iterations: expected a number above 0"
base p99low "$v" "$sampled, \"p50_us\": 50, \"p99_us\": 40}"
check p99low "pairs[0].p99_us: 40 is below p50_us 50"
base p50only "$v" "$sampled, \"p50_us\": 50}"
check p50only "pairs[0]: p50_us and p99_us go together"
base devctl "$v" "$(pair node1 node2 40 | sed 's/}$/, "src_dev": "mlx\\u001b5"}/')"
check devctl "pairs[0].src_dev: expected a device name"
echo '{"foo": 1}' >"$tmp/foreign.json"
check foreign "not a sweep baseline"

[ "$failures" -eq 0 ]
