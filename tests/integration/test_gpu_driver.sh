#!/usr/bin/env bash
# The real-NCCL driver (tests/gpu/nccl_driver) and tests/gpu/run.sh, on a machine without a GPU
# (what needs one runs on a lent device: tests/gpu/README.md):
#  - make skips the driver, saying so, where no toolkit is found (GPU_TOOLKIT=), and
#    find_toolkit.sh names what it did not find;
#  - where the toolkit is: the driver is linked against its libnccl and libcudart; --help and
#    --version (the library's NCCL version is the header's) work; every bad argument exits 2 with
#    one line naming the option and what it accepts; --dry-run prints the plan; with no GPU
#    (CUDA_VISIBLE_DEVICES=-1, so this holds on a GPU machine too) it exits 3 with one line
#    naming the missing device, in seconds, forked ranks or one --rank alike;
#  - run.sh: without a GPU exit 77 and one line saying so; --dry-run probes and plans every step
#    (exit 0) over this build (NO_BUILD=1); a bad argument or budget exits 2.
# The driver's parts without CUDA have their own unit test (build/tests/test_gpu_driver_unit).
# Exits 77 after the checks it could do when there is no CUDA toolkit with NCCL here.
# Usage: test_gpu_driver.sh [BUILD_DIR]
set -u
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 2
driver=$build/gpu/nccl_driver
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-gpu-driver.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }
ok() { echo "ok - $*"; }

# ---- make without a toolkit ----
msg=$(make -s -n BUILD="$build" GPU_TOOLKIT= gpu-driver 2>&1)
if echo "$msg" | grep -q "gpu-driver: $driver skipped: no CUDA toolkit with NCCL" &&
	! echo "$msg" | grep -q -- "-o $driver"; then
	ok "make skips the driver without a toolkit"
else
	not_ok "make GPU_TOOLKIT= gpu-driver: $msg"
fi
msg=$(FABRICLAB_TOOLKIT_ROOTS=/nonexistent sh tests/gpu/find_toolkit.sh 2>&1)
rc=$?
if [ "$rc" -eq 1 ] && echo "$msg" | grep -q 'no nccl.h with libnccl.so, nor cuda_runtime_api.h' &&
	echo "$msg" | grep -q 'set CUDA_HOME'; then
	ok "find_toolkit.sh says what it did not find"
else
	not_ok "find_toolkit.sh with nothing to find: exit $rc: $msg"
fi

# ---- run.sh ----
if bash tests/gpu/run.sh --bogus >"$tmp/bad.out" 2>&1; then
	not_ok "run.sh --bogus succeeded"
elif [ $? -eq 2 ] && grep -q "unknown argument '--bogus'" "$tmp/bad.out"; then
	ok "run.sh refuses a bad argument"
else
	not_ok "run.sh --bogus: $(cat "$tmp/bad.out")"
fi
BUDGET_S=5 bash tests/gpu/run.sh --dry-run >"$tmp/budget.out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'BUDGET_S: expected whole seconds (60-3600)' "$tmp/budget.out"; then
	ok "run.sh refuses a budget under a minute"
else
	not_ok "BUDGET_S=5: exit $rc: $(cat "$tmp/budget.out")"
fi
if command -v nvidia-smi >/dev/null 2>&1 || ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
	echo "# a GPU is here: run.sh's no-GPU exit not checked"
else
	OUT=$tmp/nogpu bash tests/gpu/run.sh >"$tmp/nogpu.out" 2>&1
	rc=$?
	if [ "$rc" -eq 77 ] && [ "$(wc -l <"$tmp/nogpu.out")" -eq 1 ] &&
		grep -q '^no GPU: ' "$tmp/nogpu.out" && [ -s "$tmp/nogpu/probe.txt" ]; then
		ok "run.sh without a GPU: exit 77, one line, the probe kept in \$OUT"
	else
		not_ok "run.sh without a GPU: exit $rc: $(head -5 "$tmp/nogpu.out")"
	fi
fi
# NO_BUILD=1: the suite's build is this one, and a stale tree is make's business, not this test's.
OUT=$tmp/dry BUILD=$build NO_BUILD=1 bash tests/gpu/run.sh --dry-run 2 >"$tmp/dry.out" 2>&1
rc=$?
steps="fabriclab-2 socket-2 socket-simple-2 profiler-2 ext-2 bench-cuda bench-host sweep-cuda"
missing=
for s in $steps; do
	grep -q "^$s .*planned\|^$s .*skipped" "$tmp/dry.out" || missing="$missing $s"
done
if [ "$rc" -eq 0 ] && [ -z "$missing" ] && grep -q '^nccl in /usr/local/cuda: ' "$tmp/dry/probe.txt" &&
	grep -q '^torch: ' "$tmp/dry/probe.txt" && grep -q 'dry run: .* steps planned' "$tmp/dry.out"; then
	ok "run.sh --dry-run probes and plans every step"
else
	not_ok "run.sh --dry-run: exit $rc, steps missing:${missing:- none}: $(tail -5 "$tmp/dry.out")"
fi

# ---- the driver, where the toolkit is ----
if ! toolkit=$(sh tests/gpu/find_toolkit.sh 2>&1); then
	[ "$failures" -eq 0 ] || exit 1
	echo "$toolkit: the driver's own checks did not run"
	exit 77
fi
if [ ! -x "$driver" ]; then
	not_ok "a toolkit is here ($toolkit) but $driver was not built (make gpu-driver)"
	exit 1
fi
if grep -q "$driver" "$tmp/dry/plan.txt" && ! grep -q 'no driver' "$tmp/dry.out"; then
	ok "run.sh --dry-run plans the driver's runs"
else
	not_ok "run.sh --dry-run did not plan the driver: $(grep -i driver "$tmp/dry.out" | head -3)"
fi
needed=$(readelf -d "$driver" 2>/dev/null | grep NEEDED)
if echo "$needed" | grep -q 'libnccl\.so' && echo "$needed" | grep -q 'libcudart\.so'; then
	ok "the driver links the toolkit's libnccl and libcudart"
else
	not_ok "the driver's NEEDED: $needed"
fi
if "$driver" --help >"$tmp/help" 2>&1 && grep -q '^usage: nccl_driver' "$tmp/help" &&
	grep -q 'NCCL_HOSTID' "$tmp/help"; then
	ok "--help"
else
	not_ok "--help: $(head -3 "$tmp/help")"
fi
header=$(awk '/define NCCL_VERSION_CODE/ { print $3 }' "$(echo "$toolkit" | awk '{ print $1 }')/nccl.h")
version=$("$driver" --version 2>&1)
if echo "$version" | grep -q "NCCL header $header, library [0-9]"; then
	ok "--version: $version"
else
	not_ok "--version: $version (header says $header)"
fi

# One line on stderr naming the option and what it accepts, exit 2, nothing on stdout.
bad_arg() { # expected-text args...
	local says=$1 rc
	shift
	"$driver" "$@" >"$tmp/arg.out" 2>"$tmp/arg.err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/arg.err")" -eq 1 ] && [ ! -s "$tmp/arg.out" ] &&
		grep -qF -- "$says" "$tmp/arg.err"; then
		ok "refused: $*"
	else
		not_ok "$*: exit $rc, stderr: $(cat "$tmp/arg.err"), stdout: $(head -2 "$tmp/arg.out")"
	fi
}
bad_arg "--ranks: expected 1-64, got '0'" --ranks 0
bad_arg "--ranks: expected 1-64, got ''" --ranks
bad_arg "-b/-e: expected 4 <= -b <= -e" -b 2M -e 1M
bad_arg "-e: expected a size such as 1048576, 64K, 1M or 1G, got '1MB'" -e 1MB
bad_arg "-f: expected a step factor 2-1024" -f 1
bad_arg "-o: expected all_reduce, sendrecv or all, got 'bcast'" -o bcast
bad_arg "--rank 1: needs --id-file" --rank 1
bad_arg "--rank-env: expected NAME=VALUE" --rank-env X
bad_arg "unknown argument '--nope'" --nope
touch "$tmp/stale-id"
bad_arg "--id-file $tmp/stale-id exists" --id-file "$tmp/stale-id" -b 1M -e 1M

if "$driver" --dry-run --ranks 3 -b 1M -e 16M --rank-env FABRICLAB_NODE_NAME=node%r >"$tmp/plan" 2>&1 &&
	grep -q '^sizes (B): 1048576 4194304 16777216$' "$tmp/plan" &&
	grep -q '^rank 2: NCCL_HOSTID=fabriclab-gpu-host-2 FABRICLAB_NODE_NAME=node2$' "$tmp/plan"; then
	ok "--dry-run prints sizes and each rank's environment"
else
	not_ok "--dry-run: $(cat "$tmp/plan")"
fi

# No GPU: exit 3, one line naming the device, quickly; never a crash or a hang.
no_gpu() { # label args...
	local label=$1 rc start=$SECONDS
	shift
	CUDA_VISIBLE_DEVICES=-1 timeout 60 "$driver" "$@" >"$tmp/nogpu.out" 2>"$tmp/nogpu.err"
	rc=$?
	if [ "$rc" -eq 3 ] && [ "$(wc -l <"$tmp/nogpu.err")" -eq 1 ] &&
		grep -q 'no GPU: CUDA device [0-9]* is not available' "$tmp/nogpu.err" &&
		[ $((SECONDS - start)) -lt 30 ]; then
		ok "no GPU, $label: exit 3, $(cat "$tmp/nogpu.err")"
	else
		not_ok "no GPU, $label: exit $rc after $((SECONDS - start))s: $(head -3 "$tmp/nogpu.err")"
	fi
}
no_gpu "2 ranks" --ranks 2 -b 1M -e 1M
no_gpu "8 ranks on device 3" --ranks 8 --device 3
no_gpu "one rank of two" --rank 1 --ranks 2 --id-file "$tmp/none" --id-timeout 1

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
