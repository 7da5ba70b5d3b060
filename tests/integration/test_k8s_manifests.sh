#!/usr/bin/env bash
# deploy/k8s/: every manifest parses and validates offline (scripts/validate_manifests.py: the
# Kubernetes OpenAPI document for core kinds, deploy/schemas/ for JobSet, PyTorchJob, MPIJob),
# every FABRICLAB_FAULT value in them is accepted by the plugin's own parser, and each
# deliberately broken manifest in tests/fixtures/k8s/ fails with the message it expects.
# Usage: test_k8s_manifests.sh [BUILD_DIR]
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
validate=$root/scripts/validate_manifests.py
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-k8s.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

manifests=("$root"/deploy/k8s/*.yaml)
if "$validate" "${manifests[@]}" >"$tmp/valid.out" 2>&1; then
	ok "${#manifests[@]} manifests validate: $(grep -c '^ok' "$tmp/valid.out") documents"
else
	not_ok "deploy/k8s does not validate:"
	sed 's/^/    /' "$tmp/valid.out"
fi
for kind in JobSet PyTorchJob MPIJob Job PersistentVolumeClaim; do
	grep -q "^ok .*] $kind/" "$tmp/valid.out" && ok "a $kind was checked" ||
		not_ok "no $kind among the validated documents"
done

# The chaos variant's rules must be ones the plugin accepts (a bad one fails init, loudly).
faults=$(/usr/bin/python3 -c '
import sys, yaml
def walk(n):
    if isinstance(n, dict):
        if n.get("name") == "FABRICLAB_FAULT" and "value" in n:
            print(n["value"])
        for v in n.values(): walk(v)
    elif isinstance(n, list):
        for v in n: walk(v)
for path in sys.argv[1:]:
    for doc in yaml.safe_load_all(open(path)): walk(doc)
' "${manifests[@]}")
[ -n "$faults" ] || not_ok "no FABRICLAB_FAULT in any manifest (the chaos variant has one)"
while IFS= read -r fault; do
	[ -n "$fault" ] || continue
	if FABRICLAB_FAULT=$fault FABRICLAB_REPORT_DIR=$tmp/reports "$build/fabriclab" bench \
		--ranks 2 -b 8 -e 8 -n 1 -w 0 >"$tmp/fault.out" 2>&1; then
		ok "the plugin accepts FABRICLAB_FAULT=$fault"
	else
		not_ok "FABRICLAB_FAULT=$fault: $(grep -m1 'init failed' "$tmp/fault.out")"
	fi
done <<<"$faults"

# One run over all of them (loading the OpenAPI document is the slow part), judged per file.
broken=("$root"/tests/fixtures/k8s/broken-*.yaml)
"$validate" "${broken[@]}" >"$tmp/broken.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && ok "the broken manifests fail the run (status 1)" ||
	not_ok "the broken manifests gave status $rc, not 1"
for file in "${broken[@]}"; do
	name=$(basename "$file")
	expect=$(sed -n 's/^# expect: //p' "$file")
	if grep -F -- "FAIL $file" "$tmp/broken.out" | grep -qF -- "$expect"; then
		ok "$name fails: $expect"
	else
		not_ok "$name: no failure with '$expect': $(grep -F -- "$file" "$tmp/broken.out")"
	fi
done

if [ "$failures" -eq 0 ]; then
	echo "all manifest checks passed"
else
	echo "$failures manifest check(s) failed"
	exit 1
fi
