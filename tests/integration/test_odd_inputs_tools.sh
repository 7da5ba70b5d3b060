#!/usr/bin/env bash
# Hostile inputs to the tools (issue 34), each run under `timeout` so a hang fails the test:
#  - only regular files are read: `nccl-log FIFO`, `sweep --baseline FIFO`, `report FIFO` and
#    the same with a folder or a device refused at once (exit 2), naming the file and why;
#  - a report over the 256 MiB cap (a sparse file) refused by its size without reading it
#    (the process stays far below the file's size);
#  - a report holding the same view of a hop twice is refused naming both entries;
#  - node names holding ESC ] 0 ; T BEL, a C1 CSI and U+00FF, in files whose names hold the
#    byte 0xff: text, JSON, --svg and --html carry no control byte and show the names as
#    \xNN, the SVG parses as XML, the HTML as UTF-8, the JSON as JSON;
#  - nccl-log: a host name with 0xff and a network "I\xffB" keep their ranks in --json,
#    escaped as \xNN and counted; a WARN with ESC [ 2 J reaches the terminal escaped.
# Usage: test_odd_inputs_tools.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/fabriclab
fixtures=tests/fixtures
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-odd-tools.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_FAULT
py=/usr/bin/python3
[ -x "$py" ] || py=python3
failures=0
[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
ok() { echo "ok - $*"; }
fail() { echo "not ok - $*"; failures=$((failures + 1)); }

# name want-rc want-text command...: exit status and a phrase of stderr
refused() {
	local name=$1 want=$2 text=$3
	shift 3
	timeout 20 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	local rc=$?
	if [ "$rc" -eq "$want" ] && grep -qF -- "$text" "$tmp/$name.err"; then
		ok "$name: exit $rc, $(head -n 1 "$tmp/$name.err")"
	else
		fail "$name: exit $rc (124: hung), expected $want and '$text' in: $(cat "$tmp/$name.err")"
	fi
}

mkfifo "$tmp/fifo"
mkdir "$tmp/dir"
refused nccllog_fifo 2 "fifo: not a regular file (a FIFO)" "$tool" nccl-log "$tmp/fifo"
refused nccllog_dir 2 "dir: not a regular file (a folder)" "$tool" nccl-log "$tmp/dir"
refused nccllog_device 2 "/dev/zero: not a regular file (a device)" "$tool" nccl-log /dev/zero
refused report_fifo 2 "fifo: not a regular file (a FIFO)" "$tool" report "$tmp/fifo"
refused baseline_fifo 2 "fifo: not a regular file (a FIFO)" \
	"$tool" sweep --ranks 2 -b 1M -e 1M --baseline "$tmp/fifo"
refused baseline_dir 2 "dir: not a regular file (a folder)" \
	"$tool" sweep --ranks 2 -b 1M -e 1M --baseline "$tmp/dir"
refused baseline_missing 2 "No such file or directory" \
	"$tool" sweep --ranks 2 -b 1M -e 1M --baseline "$tmp/none.json"
refused save_dir 2 "a directory, not a regular file" \
	"$tool" sweep --ranks 2 -b 1M -e 1M --save "$tmp/dir"
refused save_nowhere 2 "No such file or directory" \
	"$tool" sweep --ranks 2 -b 1M -e 1M --save "$tmp/no/such/base.json"

# 300 MiB of nothing (sparse): refused by its size, not read whole.
truncate -s 300M "$tmp/huge.json"
/usr/bin/time -f '%M' -o "$tmp/huge.rss" timeout 20 "$tool" report "$tmp/huge.json" \
	>/dev/null 2>"$tmp/huge.err"
rc=$?
rss=$(tail -n 1 "$tmp/huge.rss" 2>/dev/null)
if [ "$rc" -eq 2 ] && grep -qF "314572800 bytes, larger than 268435456 bytes" "$tmp/huge.err" &&
	[ "${rss:-999999}" -lt 65536 ]; then
	ok "huge report: refused by its size, max RSS ${rss} KiB for a 300 MiB file"
else
	fail "huge report: exit $rc, RSS ${rss:-?} KiB: $(cat "$tmp/huge.err")"
fi

# One file holding the same view of a hop twice.
"$py" - "$fixtures/reports/slow_link4/n1-1000.json" "$tmp/twice.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["hops"].append(dict(d["hops"][0]))
json.dump(d, open(sys.argv[2], "w"))
PY
refused report_repeat 2 "hops[2] repeats hops[0]" "$tool" report "$tmp/twice.json"

# Hostile node names in a folder of reports whose file names hold 0xff.
hostile=$tmp/hostile
mkdir "$hostile"
for f in "$fixtures"/reports/slow_link4/*.json; do
	sed 's/"n3"/"ev\\u001b]0;T\\u0007il\\u009b\\u00ff"/g' "$f" >"$hostile/$(printf 'x\xff')-$(basename "$f")"
done
timeout 20 "$tool" report "$hostile" --svg "$tmp/h.svg" --html "$tmp/h.html" \
	>"$tmp/h.txt" 2>"$tmp/h.err"
rc=$?
timeout 20 "$tool" report --json "$hostile" >"$tmp/h.json" 2>>"$tmp/h.err"
rc=$((rc + $?))
if [ "$rc" -ne 0 ]; then
	fail "hostile names: exit $rc: $(cat "$tmp/h.err")"
elif LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$tmp/h.txt" "$tmp/h.svg" "$tmp/h.html" \
	"$tmp/h.json"; then
	fail "hostile names: a control byte reached an output"
elif ! grep -qF 'ev\x1b]0;T\x07il\xc2\x9b' "$tmp/h.txt"; then
	fail "hostile names: the text does not show the name escaped: $(head -n 2 "$tmp/h.txt")"
elif ! "$py" - "$tmp/h.svg" "$tmp/h.html" "$tmp/h.json" <<'PY'
import json, sys
import xml.etree.ElementTree as ET
ET.parse(sys.argv[1])
assert "ev\\x1b]0;T\\x07il" in open(sys.argv[2], encoding="utf-8").read()
d = json.load(open(sys.argv[3]))
assert any("\\xff" in f["path"] for f in d["files"]), d["files"]
PY
then
	fail "hostile names: the SVG, the HTML or the JSON does not parse"
else
	ok "hostile names and file names: text, JSON, SVG and HTML escaped and well-formed"
fi

# nccl-log: nothing dropped, everything escaped.
printf 'node-a:1:1 [0] NCCL INFO Using network IB\nno\xffde:2:2 [0] NCCL INFO Using network Socket\nx:3:3 [0] NCCL INFO Using network I\xffB\nev\x1b]0;T\x07il:4:4 [0] NCCL WARN \x1b[2J cleared\n' \
	>"$tmp/bad.log"
timeout 20 "$tool" nccl-log --json "$tmp/bad.log" >"$tmp/nl.json" 2>"$tmp/nl.err"
rc=$?
timeout 20 "$tool" nccl-log "$tmp/bad.log" >"$tmp/nl.txt" 2>>"$tmp/nl.err"
if [ "$rc" -eq 1 ] && "$py" - "$tmp/nl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = {r["process"]: r for r in d["ranks"]}
assert len(p) == 4 and d["ranks_escaped"] == 3, (len(p), d["ranks_escaped"])
assert p["no\\xffde:2"]["network"] == "Socket" and p["x:3"]["network"] == "I\\xffB", p
assert p["ev\\x1b]0;T\\x07il:4"]["first_warn"] == "\\x1b[2J cleared", p
PY
then
	if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f\xff]' "$tmp/nl.txt"; then
		fail "nccl-log: a control or 0xff byte reached the terminal output"
	else
		ok "nccl-log: 4 ranks kept in --json (3 escaped as \\xNN), the text output escaped"
	fi
else
	fail "nccl-log hostile log: exit $rc: $(cat "$tmp/nl.err") $(head -c 600 "$tmp/nl.json")"
fi

[ "$failures" -eq 0 ]
