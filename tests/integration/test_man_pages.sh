#!/usr/bin/env bash
# The man pages (docs/man/) stay true to the commands: every command `fabriclab help` lists has a
# page, every option its --help names is in that page, and groff renders each page without a
# warning. Usage: test_man_pages.sh [BUILD_DIR]
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
tool=$build/fabriclab
failures=0
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

[ -x "$tool" ] || { echo "not ok - $tool missing (run make)"; exit 1; }
# Option names as roff writes them (\-\-json) read back as the --help spells them.
page_text() { sed 's/\\-/-/g; s/\\f[BIRP]//g' "$1"; }

commands=$("$tool" help | sed -n 's/^  \([a-z]*\) .*/\1/p' | grep -vx -e help -e version)
[ -n "$commands" ] || not_ok "no command in fabriclab help"
grep -q -- '--version' <(page_text "$root/docs/man/fabriclab.1") &&
	ok "fabriclab(1) names --version" ||
	not_ok "fabriclab(1) does not name --version"
for cmd in $commands; do
	page=$root/docs/man/fabriclab-$cmd.1
	if [ ! -f "$page" ]; then
		not_ok "$cmd: no docs/man/fabriclab-$cmd.1"
		continue
	fi
	grep -qw "$cmd" <(page_text "$root/docs/man/fabriclab.1") ||
		not_ok "fabriclab(1) does not list $cmd"
	missing=()
	for opt in $("$tool" help "$cmd" | grep -oE '(^|[ ,[])--?[a-z][a-z_-]*' |
		sed 's/^[ ,[]//' | sort -u); do
		grep -qF -- "$opt" <(page_text "$page") || missing+=("$opt")
	done
	[ ${#missing[@]} -eq 0 ] && ok "$cmd: every option of its --help is in its page" ||
		not_ok "$cmd: options missing from fabriclab-$cmd.1: ${missing[*]}"
done
for page in "$root"/docs/man/*.1; do
	warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
	[ -z "$warnings" ] && ok "$(basename "$page"): groff renders it without a warning" ||
		not_ok "$(basename "$page"): $warnings"
done

if [ "$failures" -eq 0 ]; then
	echo "all man page checks passed"
else
	echo "$failures man page check(s) failed"
	exit 1
fi
