#!/usr/bin/env bash
# Packages an installed tree (make install PREFIX=/usr DESTDIR=WORK/debian/fabriclab) as a Debian
# binary package with dpkg-deb: stripped objects, gzipped man pages and changelog, copyright, the
# dependencies dpkg-shlibdeps finds (the LTTng provider's only as Recommends: tracing is
# optional), md5sums, the ldconfig trigger for the two shared objects in /usr/lib.
# Usage: scripts/deb.sh WORK VERSION OUT_DIR; prints the .deb's path.
set -euo pipefail
work=$(cd "$1" && pwd) version=$2 out=$3
root=$work/debian/fabriclab
here=$(cd "$(dirname "$0")/.." && pwd)
arch=$(dpkg --print-architecture)
doc=$root/usr/share/doc/fabriclab
lib=$root/usr/lib

find "$root" -type d -exec chmod 755 {} +
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$lib"/*.so
strip --remove-section=.comment --remove-section=.note "$root/usr/bin/fabriclab"
gzip -9n "$root"/usr/share/man/man1/*.1
install -m 644 "$here/deploy/debian/copyright" "$doc/copyright"
install -D -m 644 "$here/deploy/debian/lintian-overrides" \
	"$root/usr/share/lintian/overrides/fabriclab"
# A native package's changelog: this version, dated from the commit (or now, out of git).
when=$(git -C "$here" log -1 --format=%aD 2>/dev/null || date -R)
maintainer="fabriclab authors <fabriclab@example.org>"
printf 'fabriclab (%s) unstable; urgency=medium\n\n  * %s\n\n -- %s  %s\n' "$version" \
	"Built from the source tree (make deb)." "$maintainer" "$when" |
	gzip -9n >"$doc/changelog.gz"
chmod 644 "$doc/changelog.gz"

# dpkg-shlibdeps reads the source package's layout: debian/control beside the staged tree, whose
# DEBIAN folder marks it as the package's root.
mkdir -p "$root/DEBIAN"
printf 'Source: fabriclab\n\nPackage: fabriclab\nArchitecture: any\n' >"$work/debian/control"
staged=debian/fabriclab/usr
deps=$(cd "$work" && dpkg-shlibdeps -O -e"$staged/bin/fabriclab" \
	-e"$staged/lib/libnccl-net-fabriclab.so" -dRecommends -e"$staged/lib/libfabriclab-lttng.so")
depends=$(sed -n 's/^shlibs:Depends=//p' <<<"$deps")
recommends=$(sed -n 's/^shlibs:Recommends=//p' <<<"$deps")
# lttng-tools (the lttng command) is what records a trace; babeltrace2 reads one offline.
recommends="${recommends:+$recommends, }lttng-tools"

size=$(du -k -s --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
	-e "s/@DEPENDS@/$depends/" -e "s/@RECOMMENDS@/$recommends/" \
	"$here/deploy/debian/control.in" >"$root/DEBIAN/control"
(cd "$root" && find usr -type f -exec md5sum {} + | sort -k2) >"$root/DEBIAN/md5sums"
echo 'activate-noawait ldconfig' >"$root/DEBIAN/triggers"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums" "$root/DEBIAN/triggers"
deb=$out/fabriclab_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
