#!/usr/bin/env bash
# `make deb`: the package builds, lintian finds no error in it, dpkg installs it into a scratch
# root (dpkg --root: its own database, the machine's own packages untouched), the installed tool
# and plugin work and say the package's version, and dpkg removes every file it put there.
# Usage: test_deb.sh [BUILD_DIR]
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/integration/install_lib.sh"
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

# The build's own version, so make packages what was built instead of rebuilding it.
version=$(build_version "$build")
if ! deb=$(make -C "$root" -s --no-print-directory BUILD="$build" VERSION_STRING="$version" deb \
	2>"$tmp/deb.log" | tail -n 1); then
	not_ok "make deb failed: $(tail -n 5 "$tmp/deb.log")"
	exit 1
fi
[[ $deb = /* ]] || deb=$root/$deb
field=$(dpkg-deb -f "$deb" Version)
[ "$field" = "$version" ] && ok "make deb: $(basename "$deb"), Version $field" ||
	not_ok "the package's Version is '$field', the build's $version"

# lintian: no error (E:); warnings are listed, not failed on. It judges the package users get,
# the plain build's: a sanitizer build's objects are not that (make test runs it on the plain one).
skipped=
if [ -n "${FABRICLAB_SANITIZER:-}" ]; then
	skipped="lintian: a $FABRICLAB_SANITIZER build is not the package users get"
	echo "# skip - $skipped"
else
	lintian --fail-on error "$deb" >"$tmp/lintian.out" 2>&1
	rc=$?
	grep -v 'running with root privileges' "$tmp/lintian.out" | sed 's/^/    /'
	[ "$rc" -eq 0 ] && ok "lintian: no error" || not_ok "lintian failed (status $rc)"
fi

# Only what the package declares: every dependency must be installed on this machine, then the
# scratch root's empty database is told to ignore them (they live in the machine's /usr).
missing=()
for dep in $(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/(.*//; s/ //g'); do
	dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$dep")
done
[ ${#missing[@]} -eq 0 ] && ok "every Depends is installed here" ||
	not_ok "Depends not installed here: ${missing[*]}"

scratch=$tmp/root
mkdir -p "$scratch/var/lib/dpkg/info" "$scratch/var/lib/dpkg/updates"
: >"$scratch/var/lib/dpkg/status"
: >"$scratch/var/lib/dpkg/available"
dpkg_scratch() {
	local as=()
	[ "$(id -u)" -eq 0 ] || as=(--force-not-root)
	dpkg --root="$scratch" --log="$tmp/dpkg.log" --force-depends "${as[@]}" "$@"
}
if dpkg_scratch -i "$deb" >"$tmp/install.log" 2>&1; then
	ok "dpkg --root installs it"
else
	not_ok "dpkg --root -i failed: $(tail -n 5 "$tmp/install.log")"
	exit 1
fi
state=$(dpkg-query --admindir="$scratch/var/lib/dpkg" -W -f='${Status} ${Version}' fabriclab)
[ "$state" = "install ok installed $version" ] && ok "dpkg says: $state" ||
	not_ok "dpkg says '$state'"

check_installed_version "$scratch/usr"
check_installed_plugin "$scratch/usr" deb
gzip -dc "$scratch/usr/share/man/man1/fabriclab-report.1.gz" | grep -q '^\.SH NAME' &&
	ok "man pages installed gzipped" || not_ok "fabriclab-report.1.gz is not a man page"

if dpkg_scratch --purge fabriclab >"$tmp/remove.log" 2>&1; then
	left=$(find "$scratch" ! -type d ! -path "$scratch/var/lib/dpkg/*")
	[ -z "$left" ] && ok "dpkg --purge removed every file" || not_ok "left after purge: $left"
else
	not_ok "dpkg --purge failed: $(tail -n 5 "$tmp/remove.log")"
fi

if [ "$failures" -ne 0 ]; then
	echo "$failures package check(s) failed"
	exit 1
fi
# A check that could not run here: exit 77 with the reason last (tests/run.sh counts a skip).
[ -z "$skipped" ] || { echo "skipped: $skipped"; exit 77; }
echo "all package checks passed"
