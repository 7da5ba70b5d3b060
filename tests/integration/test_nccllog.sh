#!/usr/bin/env bash
# `fabriclab nccl-log` on fixtures shaped like NCCL 2.18, 2.21 and 2.28 NCCL_DEBUG=INFO output
# (tests/fixtures/nccllog): IB with GPUDirect on every rank (exit 0); one rank fallen back to
# NET/Socket and one rank without GDRDMA (exit 1, only that rank flagged, and why); the same
# logs interleaved in one stream, told apart by NCCL's host:pid, by [rankN]: prefixes or Open
# MPI's [job,rank]<stdout>: prefixes; a file that is no NCCL log (exit 2).
# Usage: test_nccllog.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
fix=tests/fixtures/nccllog
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-nccllog.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=python3
failures=0
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

# name, expected status, expected summary (python expression over the JSON), inputs (or - <file)
check() {
	local name=$1 want=$2 expect=$3
	shift 3
	"$tool" nccl-log --json "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"
	local rc=$?
	if [ "$rc" -ne "$want" ]; then
		not_ok "$name: exited $rc, expected $want"
		sed 's/^/#   /' "$tmp/$name.err" | head -n 5
		return
	fi
	if "$py" - "$tmp/$name.json" "$expect" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["rank"]: x for x in d["ranks"]}
if not eval("(" + sys.argv[2] + ")"):
    for x in d["ranks"]:
        print("#  ", x["process"], x["rank"], x["network"], x["gdr_connections"], "/",
              x["net_connections"], x["flagged"])
    sys.exit(1)
PY
	then
		ok "$name"
	else
		not_ok "$name: not as expected: $expect"
	fi
}

check ib_gdr 0 'len(r) == 4 and all(x["network"] == "IB" and x["gdr_connections"] == 4
	== x["net_connections"] and [d["name"] for d in x["ib_devices"]] == ["mlx5_0", "mlx5_1"]
	and not x["flagged"] for x in r.values()) and r[0]["nccl_version"] == "2.28.9+cuda13.0"' \
	$fix/ib_gdr/rank*.log
check socket_fallback 1 'd["ranks_flagged"] == 1 and r[2]["network"] == "Socket" and
	"fell back" in r[2]["flagged"] and r[0]["nccl_version"] == "2.18.3+cuda12.2" and
	r[1]["ib_devices"][1] == {"name": "mlx5_1", "port": 1, "link": "IB"}' \
	$fix/socket_fallback/rank*.log
check no_gdr 1 'd["ranks_flagged"] == 1 and r[1]["gdr_connections"] == 0 and
	"no GPUDirect RDMA on its 4 NET connections" in r[1]["flagged"] and
	r[0]["nccl_version"] == "2.21.5+cuda12.4"' $fix/no_gdr/rank*.log

# One stream with no launcher prefix, lines of all ranks mixed: NCCL's host:pid keeps them apart.
paste -d '\n' $fix/no_gdr/rank*.log | grep -v '^$' >"$tmp/mixed.log"
check mixed 1 'len(r) == 4 and d["ranks_flagged"] == 1 and r[1]["flagged"] and
	r[1]["process"] == "node-b:3015"' - <"$tmp/mixed.log"
check rank_prefix 0 'len(r) == 4 and all(x["network"] == "fabriclab" and x["plugin"] ==
	"fabriclab" and x["gdr_connections"] == 4 for x in r.values()) and
	sorted(x["process"] for x in r.values()) == ["[0]", "[1]", "[2]", "[3]"]' \
	$fix/interleaved_plugin.log
sed -E 's/^\[rank([0-9])\]:/[1,\1]<stdout>:/' $fix/interleaved_plugin.log >"$tmp/ompi.log"
check ompi_prefix 0 'len(r) == 4 and sorted(x["process"] for x in r.values()) ==
	["[0]", "[1]", "[2]", "[3]"]' "$tmp/ompi.log"

printf 'hello\nworld\n' >"$tmp/not_nccl.log"
"$tool" nccl-log "$tmp/not_nccl.log" >/dev/null 2>"$tmp/not_nccl.err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'no NCCL line' "$tmp/not_nccl.err"; then
	ok "not_nccl: a file without NCCL lines is refused (exit 2)"
else
	not_ok "not_nccl: exited $rc: $(cat "$tmp/not_nccl.err")"
fi

[ "$failures" -eq 0 ]
