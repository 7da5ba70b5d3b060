#!/usr/bin/env bash
# Includes run one way between folders (scripts/check_layers.py), and the check fails on a
# deliberately wrong include and on a folder without its README.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
check="$here/scripts/check_layers.py"
fail() { echo "FAIL: $*"; exit 1; }

python3 "$check" "$here" || fail "the tree breaks its own layering"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy() { rm -rf "$work/t"; mkdir -p "$work/t"; cp -r "$here/plugin" "$here/tools" "$here/shim" "$work/t/"; }

# The report may not reach into the wrap's objects.
copy
sed -i '1i #include "wrap/wrap_internal.h"' "$work/t/plugin/report/report_build.c"
out=$(python3 "$check" "$work/t") && fail "an include of the wrap from report/ passed"
grep -q 'plugin/report/report_build.c: #include "wrap/wrap_internal.h": plugin/report may not use plugin/wrap' \
	<<<"$out" || fail "the violation is not named: $out"

# A transport knows nothing of faults (a root-relative include is caught too).
copy
sed -i '1i #include "plugin/fault/fault.h"' "$work/t/plugin/transport/socket/sock_send.c"
python3 "$check" "$work/t" >/dev/null && fail "an include of fault/ from a transport passed"

# NCCL's ABI is the ground floor: the ext transport may not reach up to the exported tables.
copy
sed -i '1i #include "entry/net_abi.h"' "$work/t/plugin/transport/ext/ext_load.c"
out=$(python3 "$check" "$work/t") && fail "an include of the exported tables from ext passed"
grep -q 'plugin/transport/ext/ext_load.c: #include "entry/net_abi.h": plugin/transport/ext may not use plugin/entry' \
	<<<"$out" || fail "the upward include is not named: $out"

# A rule that lets a folder include one on a floor above it fails, even with no cycle.
sed 's#"plugin/stats": \["plugin/base"\]#"plugin/stats": ["plugin/transport", "plugin/base"]#' \
	"$check" >"$work/check_up.py"
grep -q '"plugin/stats": \["plugin/transport"' "$work/check_up.py" || fail "the rule edit did not apply"
out=$(python3 "$work/check_up.py" "$here") && fail "an upward rule (stats -> transport) passed"
grep -q 'plugin/stats may use plugin/transport, which is not on a floor below it' <<<"$out" ||
	fail "the upward rule is not named: $out"

# Every folder says what it owns.
copy
rm "$work/t/plugin/stats/README.md"
out=$(python3 "$check" "$work/t") && fail "a folder without README.md passed"
grep -q '^plugin/stats: no README.md' <<<"$out" || fail "the missing README is not named: $out"
echo "layers: ok"
