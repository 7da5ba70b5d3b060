#!/bin/sh
# Where the CUDA toolkit's NCCL and CUDA runtime are, for building tests/gpu/nccl_driver with gcc:
# prints one line "NCCL_INCLUDE NCCL_LIBRARY CUDA_INCLUDE CUDART_LIBRARY" (folders, then library
# files) and exits 0, or prints why not on stderr and exits 1. Looks in $NCCL_HOME (NCCL alone),
# $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /usr/local/cuda-*, /opt/nvidia/*/cuda and /usr,
# in that order; the first place with both headers and libraries wins for each.
# Usage: find_toolkit.sh [--why]   (--why: also say on stderr where it looked)
arch=$(uname -m)
why=${1:-}
roots=
# FABRICLAB_TOOLKIT_ROOTS (tests): look only there.
for r in ${FABRICLAB_TOOLKIT_ROOTS-"${NCCL_HOME:-}" "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda \
	/usr/local/cuda-* /opt/nvidia/*/cuda /usr}; do
	[ -n "$r" ] && [ -d "$r" ] && roots="$roots $r"
done

# lib_in ROOT NAME...: the first library file NAME (a .so name) under ROOT's library folders.
lib_in() {
	root=$1
	shift
	for d in lib64 lib "lib/$arch-linux-gnu" "targets/$arch-linux/lib"; do
		for n in "$@"; do
			[ -f "$root/$d/$n" ] && { echo "$root/$d/$n"; return 0; }
		done
	done
	return 1
}

# inc_in ROOT HEADER: the include folder under ROOT holding HEADER.
inc_in() {
	for d in include "targets/$arch-linux/include"; do
		[ -f "$1/$d/$2" ] && { echo "$1/$d"; return 0; }
	done
	return 1
}

nccl_inc='' nccl_lib='' cuda_inc='' cudart=''
for r in $roots; do
	if [ -z "$nccl_lib" ] && i=$(inc_in "$r" nccl.h) && l=$(lib_in "$r" libnccl.so libnccl.so.2); then
		nccl_inc=$i nccl_lib=$l
	fi
	if [ -z "$cudart" ] && i=$(inc_in "$r" cuda_runtime_api.h) &&
		l=$(lib_in "$r" libcudart.so libcudart.so.13 libcudart.so.12); then
		cuda_inc=$i cudart=$l
	fi
done
[ -n "$why" ] && echo "find_toolkit: looked in:${roots:- nothing}" >&2
miss=
[ -n "$nccl_lib" ] || miss="nccl.h with libnccl.so"
[ -n "$cudart" ] || miss="${miss:+$miss, nor }cuda_runtime_api.h with libcudart.so"
if [ -n "$miss" ]; then
	echo "no CUDA toolkit with NCCL: no $miss under${roots:- (none of the folders it looks in exists)} (set CUDA_HOME, or NCCL_HOME for NCCL alone)" >&2
	exit 1
fi
echo "$nccl_inc $nccl_lib $cuda_inc $cudart"
