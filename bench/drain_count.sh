#!/usr/bin/env bash
# Instructions the report thread spends per request reading the interval rings of a hop whose
# requests are spread over C connections (NCCL's channels), under callgrind: fl_hops_drain
# inclusive, divided by the requests (build/bench/drain_cost; its union is checked exact).
# Usage: bench/drain_count.sh [LABEL=]BUILD... (env: CHANNELS, default "1 2 4"; REQUESTS)
set -euo pipefail
if ! command -v valgrind >/dev/null; then
	echo "valgrind not installed: no instruction counts (apt-get install valgrind)"
	exit 0
fi
requests=${REQUESTS:-200000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "drains of one hop's rings, $requests requests, instructions per request (callgrind):"
for spec in "$@"; do
	label=${spec%%=*} build=${spec#*=}
	line=$(printf '  %-12s' "$label")
	for c in ${CHANNELS:-1 2 4}; do
		out=$work/cg.$label.$c
		valgrind --tool=callgrind --toggle-collect=fl_hops_drain --callgrind-out-file="$out" \
			"$build/bench/drain_cost" "$c" "$requests" >"$work/log" 2>&1 ||
			{ echo "  $label: drain_cost $c failed:"; tail -3 "$work/log"; exit 1; }
		ir=$(sed -n 's/^summary: //p' "$out")
		line+=$(printf '  %d channel%s %6.1f' "$c" "$([ "$c" = 1 ] || echo s)" \
			"$(awk -v ir="$ir" -v n="$requests" 'BEGIN { print ir / n }')")
	done
	echo "$line"
done
