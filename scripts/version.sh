#!/bin/sh
# Prints fabriclab's version: the VERSION file's base version, and in a git tree the commit
# from `git describe` (0.2.0+g1a2b3c4d, .dirty with uncommitted changes); a tag v0.2.0 on the
# commit itself gives plain 0.2.0, commits after it 0.2.0+3.g1a2b3c4d. Out of git (a tarball): the
# VERSION file alone. The result is a valid Debian version (digits first, no hyphen).
root=$(cd "$(dirname "$0")/.." && pwd -P)
base=$(tr -d ' \n' <"$root/VERSION")
described=
# Only this tree's own git: a tarball unpacked inside another repository is not that repository.
if [ "$(git -C "$root" rev-parse --show-toplevel 2>/dev/null)" = "$root" ]; then
	described=$(git -C "$root" describe --tags --match 'v[0-9]*' --abbrev=8 --dirty=.dirty \
		--always 2>/dev/null) || described=
fi
case $described in
"") echo "$base" ;;
v[0-9]*-[0-9]*-g*) echo "$described" | sed 's/^v//; s/-\([0-9]*\)-g/+\1.g/' ;;
v[0-9]*) echo "${described#v}" ;;
*) echo "$base+g$described" ;;
esac
