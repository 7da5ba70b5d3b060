#!/usr/bin/env bash
# The web lab's page in a real headless Chromium at 1280x800 (Debian's chromium and
# chromium-driver): on 4 nodes over tcp, a click on node2's cable in the drawn fabric runs the job
# healthy, then with halve-cable on node2; both series grow on the chart while they run, and the
# page names node2, marks it on the fabric and lists the commands (lab_browser.py). The
# screenshot of the comparison is kept in BUILD_DIR/artifacts/lab-browser.png.
# Usage: test_lab_browser.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
unset FABRICLAB_FAULT FABRICLAB_TRANSPORT FABRICLAB_SHIM_MEM NCCL_DEBUG
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-lab-browser.XXXXXX")
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
for cmd in chromium chromedriver curl; do
	command -v "$cmd" >/dev/null || { echo "not ok - $cmd missing (scripts/deps.sh installs it)"; exit 1; }
done
mkdir -p "$build/artifacts"
"$build/fabriclab" lab --serve --listen 127.0.0.1:0 --dir "$tmp/runs" >"$tmp/server.out" 2>&1 &
server=$!
for _ in $(seq 50); do grep -q 'serving the lab on' "$tmp/server.out" && break; sleep 0.1; done
url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$tmp/server.out")
[ -n "$url" ] || { echo "not ok - server did not start: $(cat "$tmp/server.out")"; exit 1; }
rc=0
python3 "$here/lab_browser.py" "$url" "$build/artifacts/lab-browser.png" || rc=$?
if [ "$rc" -eq 0 ]; then
	echo "ok - a click on node2's cable ran healthy vs halve-cable and the page named node2 (screenshot $build/artifacts/lab-browser.png)"
	exit 0
fi
[ "$rc" -eq 77 ] && exit 77   # lab_browser.py printed why
echo "not ok - the page run failed; server said: $(tail -5 "$tmp/server.out")"
exit 1
