#!/usr/bin/env bash
# `make install DESTDIR=... PREFIX=/usr/local` and `make uninstall` into a scratch folder: every
# file where the layout says, the installed tool finds the installed plugin in ../lib and says the
# build's version, and uninstall leaves no file behind.
# Usage: test_install.sh [BUILD_DIR]
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/integration/install_lib.sh"
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

dest=$tmp/dest prefix=/usr/local
# The build's own version, so make installs what was built instead of rebuilding it (with the
# flags of a plain build) when a commit came since.
version=$(build_version "$build")
if ! make -C "$root" -s --no-print-directory BUILD="$build" VERSION_STRING="$version" install \
	DESTDIR="$dest" PREFIX=$prefix >"$tmp/install.log" 2>&1; then
	not_ok "make install failed: $(tail -n 5 "$tmp/install.log")"
	exit 1
fi
ok "make install DESTDIR=... PREFIX=$prefix"
base=$(cat "$root/VERSION")
[[ $version == "$base" || $version == "$base+"* ]] && ok "version $version from VERSION $base" ||
	not_ok "version $version does not start with the VERSION file's $base"

expected=(bin/fabriclab lib/libnccl-net-fabriclab.so lib/libfabriclab-lttng.so
	share/doc/fabriclab/README.md share/doc/fabriclab/docs/report-format.md
	share/doc/fabriclab/deploy/k8s/jobset.yaml)
for page in "$root"/docs/man/*.1; do
	expected+=("share/man/man1/$(basename "$page")")
done
missing=()
for f in "${expected[@]}"; do
	[ -f "$dest$prefix/$f" ] || missing+=("$f")
done
if [ ${#missing[@]} -eq 0 ]; then
	ok "installed: ${#expected[@]} files checked, the plugin and its LTTng provider together"
else
	not_ok "not installed: ${missing[*]}"
fi
# The profiler's name is a link to the plugin exactly when the plugin exports a profiler table.
profiler=$dest$prefix/lib/libnccl-profiler-fabriclab.so
if nm -D --defined-only "$build/libnccl-net-fabriclab.so" | grep -q ' ncclProfiler_v'; then
	[ "$(readlink "$profiler")" = libnccl-net-fabriclab.so ] &&
		ok "profiler name links to the plugin" || not_ok "no profiler link"
else
	[ ! -e "$profiler" ] && [ ! -L "$profiler" ] &&
		ok "no profiler table exported, no profiler name installed" ||
		not_ok "a profiler name installed for a plugin without a profiler table"
fi

check_installed_version "$dest$prefix"
check_installed_plugin "$dest$prefix" install

if make -C "$root" -s --no-print-directory BUILD="$build" VERSION_STRING="$version" uninstall \
	DESTDIR="$dest" PREFIX=$prefix >"$tmp/uninstall.log" 2>&1; then
	left=$(find "$dest" ! -type d)
	[ -z "$left" ] && ok "make uninstall left no file" || not_ok "left after uninstall: $left"
else
	not_ok "make uninstall failed: $(tail -n 5 "$tmp/uninstall.log")"
fi

if [ "$failures" -eq 0 ]; then
	echo "all install checks passed"
else
	echo "$failures install check(s) failed"
	exit 1
fi
