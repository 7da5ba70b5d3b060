#!/usr/bin/env bash
# The web lab's page in a real headless Chromium at 1280x800 (Debian's chromium and
# chromium-driver): on 4 nodes over tcp, a click on node2's cable in the drawn fabric runs the job
# healthy, then with halve-cable on node2; both series grow on the chart while they run, and the
# page names node2, marks it on the fabric and lists the commands (lab_browser.py). Then with the
# ndr preset and fat-tree:leaves=2,spines=1: the switches drawn from the description the lab
# builds (spine0, leaf0, leaf1, node0-1 on leaf0, node2-3 on leaf1), a click on spine0 runs it at
# 25%, the drawing becomes the run's topology.json with spine0 marked faulty, and the verdict is
# spine0 or a hop through it (marked), or not enough evidence. The screenshots are kept in
# BUILD_DIR/artifacts/lab-browser.png and lab-browser-fat-tree.png.
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
for _ in $(seq 50); do grep -qs 'serving the lab on' "$tmp/server.out" && break; sleep 0.1; done
url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$tmp/server.out")
[ -n "$url" ] || { echo "not ok - server did not start: $(cat "$tmp/server.out")"; exit 1; }
rc=0
python3 "$here/lab_browser.py" "$url" "$build/artifacts/lab-browser.png" || rc=$?
if [ "$rc" -eq 0 ]; then
	echo "ok - a click on node2's cable ran healthy vs halve-cable and the page named node2 (screenshot $build/artifacts/lab-browser.png)"
elif [ "$rc" -ne 77 ]; then   # 77: lab_browser.py printed why
	echo "not ok - the page run failed; server said: $(tail -5 "$tmp/server.out")"
	exit 1
fi

# A fabric with switches: drawn from its description, a click on spine0 slows it.
if [ "${FABRICLAB_SANITIZER:-}" = tsan ]; then
	echo "skip: under TSan the emulated NIC cannot keep its schedule (the fat-tree run)"
	exit 77
fi
[ -e "$build/libfabriclab-fakeverbs.so" ] || { echo "skip: no fake verbs in $build"; exit 77; }
shot=$build/artifacts/lab-browser-fat-tree.png
if python3 "$here/lab_browser.py" "$url" "$shot" --like ndr --topology fat-tree --leaves 2 \
	--spines 1 --steps 4; then
	echo "ok - fat-tree:leaves=2,spines=1 drawn from its description (spine0, leaf0, leaf1, each node on its leaf), before the run and from the run's topology.json; a click on spine0 ran slow-spine, marked faulty, and the verdict within it (screenshot $shot)"
else
	echo "not ok - the fat-tree page run failed; server said: $(tail -5 "$tmp/server.out")"
	exit 1
fi
exit "$rc"
