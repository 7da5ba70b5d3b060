#!/usr/bin/env bash
# deploy/Dockerfile's package lists against what the built binaries link, so that a library added
# to the Makefile cannot be forgotten in the image again (issue 52: -lmicrohttpd was). No
# container builder needed: each library a binary names (ELF NEEDED) is found where ldd finds it
# and mapped to its Debian package with dpkg -S on this Debian 12 machine, then
#   - the runtime stage (the last FROM) must install the package of every library the tool and
#     the LTTng provider need, unless every Debian base holds it (essential and required packages
#     and what they pre-depend on: libc6);
#   - the build stage (the first FROM) must install the -dev package owning the link-time name
#     (libfoo.so) of each;
#   - the plugin must need nothing but the base: it is copied into training images, not run here;
#   - and the other way round, no package in either list without a reason: a runtime package
#     holds a needed library, a library the sources dlopen() by its soname, or what such a library
#     recommends (libibverbs1's providers); a build package is the compiler, make, the -dev
#     package of a needed library or the owner of a header the sources include.
# Usage: test_image_libs.sh [BUILD_DIR]
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
dockerfile=$root/deploy/Dockerfile
failures=0
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }
skip() { echo "skipped: $1"; exit 77; }

command -v dpkg-query >/dev/null || skip "no dpkg: the package names are Debian's"
# The image holds the plain build (-O2, make test runs this on it). A sanitizer build links
# other things: its runtime, and at -O1 the LTTng provider keeps liblttng-ust-common, which
# the inlined tracepoints of -O2 do not call, so its list is not the image's to answer for.
[ -z "${FABRICLAB_SANITIZER:-}" ] ||
	skip "a $FABRICLAB_SANITIZER build is not what the image holds (make test checks the plain one)"
tool=$build/fabriclab plugin=$build/libnccl-net-fabriclab.so provider=$build/libfabriclab-lttng.so
for f in "$tool" "$plugin" "$provider"; do
	[ -f "$f" ] || { not_ok "$f was not built"; exit 1; }
done

# The packages `apt-get install` names in stage N of the Dockerfile (1 = the first FROM, 0 = the
# last), one a line; continuation lines joined, options left out.
stage_packages() { # n
	awk -v want="$1" '
		{ line = line $0 }
		/\\$/ { sub(/\\$/, " ", line); next }
		{ if (line ~ /^FROM[ \t]/) n++; lines[++count] = line; stage[count] = n; line = "" }
		END {
			if (want == 0) want = n
			for (i = 1; i <= count; i++) {
				if (stage[i] != want || lines[i] !~ /^RUN[ \t]/) continue
				split(lines[i], w, /[ \t]+/)
				inst = 0
				for (j = 1; j in w; j++) {
					if (w[j] == "&&" || w[j] == ";") inst = 0
					else if (w[j] == "install" && w[j - 1] == "apt-get") inst = 1
					else if (inst && w[j] !~ /^-/) print w[j]
				}
			}
		}' "$dockerfile"
}
build_list=$(stage_packages 1)
runtime_list=$(stage_packages 0)
[ -n "$build_list" ] && [ -n "$runtime_list" ] ||
	{ not_ok "no apt-get install found in the Dockerfile's stages"; exit 1; }
listed() { grep -qxF "$2" <<<"$1"; } # list, package

# The packages owning files, asked of dpkg in one call (each call reads every file list). Merged
# /usr: dpkg knows some files under /lib, others under /usr/lib, so each path is asked both ways;
# a link dpkg does not know (made by ldconfig) is asked again as its target.
# owners PATH... fills $owner_of[PATH] for those dpkg knows.
declare -A owner_of=()
owners() {
	owners_as "$@"
	local p left=()
	for p in "$@"; do
		[ -n "${owner_of[$p]:-}" ] || left+=("$p")
	done
	[ ${#left[@]} -eq 0 ] || owners_as --target "${left[@]}"
}
owners_as() { # [--target] path...
	local p alt q line pkgs target=
	local -A asked=()
	[ "$1" = --target ] && { target=1; shift; }
	for p in "$@"; do
		[ -n "$target" ] && { q=$(readlink -f "$p") && asked[$q]=$p; continue; }
		case $p in /usr/*) alt=${p#/usr} ;; *) alt=/usr$p ;; esac
		asked[$p]=$p asked[$alt]=$p
	done
	[ ${#asked[@]} -gt 0 ] || return 0
	while IFS= read -r line; do
		pkgs=${line%%: /*} q=/${line#*: /}
		p=${asked[$q]:-} && [ -n "$p" ] && [ -z "${owner_of[$p]:-}" ] || continue
		pkgs=${pkgs%%,*}
		owner_of[$p]=${pkgs%%:*}
	done < <(dpkg -S "${!asked[@]}" 2>/dev/null)
}
owner() { # path: its package, known after owners
	[ -n "${owner_of[$1]:-}" ] && echo "${owner_of[$1]}"
}

# What every Debian 12 base holds without asking: essential and required packages and what the
# essential ones pre-depend on (libc6 is "optional" but dpkg and coreutils cannot be without it).
essential=$(dpkg-query -W -f '${Package} ${Essential} ${Priority}\n' | awk '$2 == "yes" || $3 == "required" { print $1 }')
mapfile -t essential_only < <(dpkg-query -W -f '${Package} ${Essential}\n' |
	awk '$2 == "yes" { print $1 }')
base_set=$( { echo "$essential"; dpkg-query -W -f '${Pre-Depends}\n' "${essential_only[@]}" |
	tr ',|' '\n\n' | sed 's/(.*//; s/:any//; s/[[:space:]]//g'; } | sort -u)

# "soname path" for each library a binary names, located as the dynamic loader finds it.
needed() { # binary
	local lib path
	for lib in $(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(ldd "$1" | awk -v l="$lib" '$1 == l && $2 == "=>" { print $3 }')
		[[ $lib == ld-linux* ]] && continue # the loader itself, never linked with -l
		echo "$lib ${path:-?}"
	done
}

runtime_reason=() build_reason=()
check_binary() { # binary, role (tool | provider | plugin)
	local bin=$1 role=$2 lib path pkg dev devpkg libs
	libs=$(needed "$bin")
	# The libraries and their link-time names (libfoo.so.4 -> libfoo.so beside it).
	local files=()
	while read -r lib path; do
		[ "$path" = "?" ] || files+=("$path" "$(dirname "$path")/${lib%%.so*}.so")
	done <<<"$libs"
	owners "${files[@]}"
	while read -r lib path; do
		if [ "$path" = "?" ] || ! pkg=$(owner "$path"); then
			not_ok "$role: $lib ($path) belongs to no Debian package here"
			continue
		fi
		if listed "$base_set" "$pkg"; then
			ok "$role: $lib from $pkg, in every Debian base"
		elif [ "$role" = plugin ]; then
			not_ok "plugin: $lib from $pkg: the plugin must load with libc alone"
		elif listed "$runtime_list" "$pkg"; then
			ok "$role: $lib from $pkg, installed by the runtime stage"
		else
			not_ok "$role: $lib from $pkg, missing from the Dockerfile's runtime stage"
		fi
		runtime_reason+=("$pkg")
		# The link-time name beside the library: libfoo.so.4 -> libfoo.so, from its -dev package.
		dev=$(dirname "$path")/${lib%%.so*}.so
		if ! devpkg=$(owner "$dev"); then
			not_ok "$role: no $dev (the -dev package of $pkg) installed here"
		elif listed "$build_list" "$devpkg"; then
			ok "$role: links $lib through ${dev##*/} from $devpkg, in the build stage"
		else
			not_ok "$role: links $lib through ${dev##*/} from $devpkg, missing from the build stage"
		fi
		build_reason+=("$devpkg")
	done <<<"$libs"
}
check_binary "$tool" tool
check_binary "$provider" provider
check_binary "$plugin" plugin

# Libraries the sources dlopen() by a literal soname (libibverbs.so.1): what this machine has of
# them, their packages and what those recommend count as reasons for a runtime package.
for lib in $(grep -rhoE '"lib[A-Za-z0-9_+-]+\.so\.[0-9]+"' "$root/plugin" "$root/tools" \
	"$root/shim" --include='*.[ch]' | tr -d '"' | sort -u); do
	path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
	[ -n "$path" ] && owners "$path" && pkg=$(owner "$path") || continue
	runtime_reason+=("$pkg")
	for rec in $(dpkg-query -W -f '${Recommends}' "$pkg" | tr ',|' '\n\n' | sed 's/(.*//'); do
		runtime_reason+=("$rec")
	done
done
reasons=$(printf '%s\n' "${runtime_reason[@]}" | sort -u)
for pkg in $runtime_list; do
	listed "$reasons" "$pkg" && continue
	not_ok "runtime stage installs $pkg, which no binary links and no source dlopen()s"
done

# Headers the built sources include, and the packages they come from.
triplet=$(gcc -dumpmachine 2>/dev/null)
headers=()
for hdr in $(grep -rhoE '^#include <[^>]+>' "$root/plugin" "$root/tools" "$root/shim" \
	--include='*.[ch]' | sed 's/#include <\(.*\)>/\1/' | sort -u); do
	for dir in /usr/include /usr/include/$triplet; do
		[ -f "$dir/$hdr" ] && headers+=("$dir/$hdr") && break
	done
done
owners "${headers[@]}"
for hdr in "${headers[@]}"; do
	pkg=$(owner "$hdr") && build_reason+=("$pkg")
done
reasons=$(printf '%s\n' gcc make "${build_reason[@]}" | sort -u)
for pkg in $build_list; do
	listed "$reasons" "$pkg" && continue
	not_ok "build stage installs $pkg, which no link and no included header needs"
done
[ $failures -eq 0 ] && ok "every package in both stages is needed, and every needed one is there"

echo "$failures failed"
[ "$failures" -eq 0 ]
