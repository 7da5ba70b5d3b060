# Functions for tests/gpu/run.sh (sourced): the probe, steps under the budget, their checks and the
# summary. Reads run.sh's variables: out, dry, budget, started, driver, driver_args, tool, so,
# iters, warmup, nccl_code, driver_note.
# shellcheck disable=SC2154 # those are run.sh's

RESERVE_S=15 # kept back for the summary
NCCL_CAP_S=150
TOOL_CAP_S=120
TORCH_CAP_S=180

# A GPU? Prints what was found (or why none) in one line; status 0 when there is one.
gpu_present() {
	local list
	if command -v nvidia-smi >/dev/null 2>&1; then
		list=$(timeout 20 nvidia-smi -L 2>&1)
		if echo "$list" | grep -q '^GPU [0-9]'; then
			echo "$list" | head -1
			return 0
		fi
		echo "nvidia-smi -L lists none ($(echo "$list" | head -1))"
		return 1
	fi
	if ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
		echo "$(ls /dev/nvidia[0-9]* | tr '\n' ' ')(no nvidia-smi)"
		return 0
	fi
	echo "no nvidia-smi and no /dev/nvidia0"
	return 1
}

# What the machine is, one fact a line.
probe() {
	local t cuda_ver
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -srm); $(nproc) cores; $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) memory"
	echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
	if command -v nvidia-smi >/dev/null 2>&1; then
		timeout 20 nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id,compute_mode \
			--format=csv,noheader 2>&1 | sed 's/^/gpu: /'
		echo "nvidia-smi: $(timeout 20 nvidia-smi 2>&1 | grep -o 'CUDA Version: [0-9.]*' | head -1) (the driver's)"
		echo "mig: $(timeout 20 nvidia-smi --query-gpu=mig.mode.current --format=csv,noheader 2>&1 | head -1)"
		timeout 20 nvidia-smi topo -m 2>/dev/null | head -3 | sed 's/^/topo: /'
	else
		echo "gpu: no nvidia-smi"
	fi
	echo "devices: $(ls /dev/nvidia* 2>/dev/null | tr '\n' ' ')"
	[ -r /proc/driver/nvidia/version ] && head -1 /proc/driver/nvidia/version | sed 's/^/driver: /'
	echo "/usr/local/cuda: $(readlink -f /usr/local/cuda 2>/dev/null || echo absent)"
	cuda_ver=$(sed -n 's/.*"cuda" *: *{ *"name"[^}]*"version" *: *"\([^"]*\)".*/\1/p' /usr/local/cuda/version.json 2>/dev/null | head -1)
	[ -n "$cuda_ver" ] || cuda_ver=$( (command -v nvcc >/dev/null && nvcc --version || /usr/local/cuda/bin/nvcc --version) 2>/dev/null |
		sed -n 's/.*release \([0-9.]*\).*/\1/p')
	echo "cuda toolkit: ${cuda_ver:-unknown}; libcudart: $(ls /usr/local/cuda/lib64/libcudart.so.* 2>/dev/null | tr '\n' ' ')"
	if [ -f /usr/local/cuda/include/nccl.h ]; then
		echo "nccl in /usr/local/cuda: yes, header $(awk '/define NCCL_(MAJOR|MINOR|PATCH) / { v = v (v ? "." : "") $3 } END { print v }' /usr/local/cuda/include/nccl.h), $(ls /usr/local/cuda/lib64/libnccl.so* 2>/dev/null | tr '\n' ' ')"
	else
		echo "nccl in /usr/local/cuda: no"
	fi
	echo "toolkit for the driver: $(sh tests/gpu/find_toolkit.sh 2>&1)"
	echo "other libnccl: $(ldconfig -p 2>/dev/null | awk '/libnccl\.so/ { print $NF }' | tr '\n' ' ')"
	echo "gcc: $(gcc -dumpfullversion 2>/dev/null || echo absent); make: $(make --version 2>/dev/null | head -1)"
	echo "tool libraries: $(for h in jansson.h babeltrace2/babeltrace.h microhttpd.h cmocka.h; do
		[ -f /usr/include/$h ] && printf '%s ' "$h" || printf '%s(missing) ' "$h"; done)"
	echo "python3: $(python3 --version 2>&1)"
	t=$(timeout 90 python3 -c 'import torch; print(torch.__version__, "nccl", ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "-", "cuda", torch.cuda.is_available())' 2>&1 | tail -1)
	echo "torch: $t"
	echo "/dev/shm: $(df -h /dev/shm 2>/dev/null | awk 'NR == 2 { print $2 " size, " $4 " free" }'); memlock: $(ulimit -l)"
	echo "rdma: $(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ' || true)"
	echo "nics: $(ls /sys/class/net 2>/dev/null | tr '\n' ' ')"
}

# ---- results ----
declare -a order=()
declare -A st=() secs=() bw_ar=() bw_sr=() notes=()
declare -a ratios=()

record() { # name status seconds busbw-all_reduce busbw-sendrecv note
	[ -n "${st[$1]+x}" ] || order+=("$1")
	st[$1]=$2 secs[$1]=$3 bw_ar[$1]=$4 bw_sr[$1]=$5 notes[$1]=$6
}

note() { # name text: appended to the step's notes
	[ -n "${st[$1]+x}" ] || return 0
	notes[$1]="${notes[$1]:+${notes[$1]}; }$2"
}

fail_step() { # name text
	st[$1]=FAIL
	note "$1" "$2"
}

# The time a step may take, in step_t; 1 (the step recorded as skipped) when the budget is short.
step_time() { # name cap min
	local left=$((budget - (SECONDS - started) - RESERVE_S))
	step_t=$2
	[ "$dry" -eq 1 ] && return 0
	if [ "$left" -lt "$3" ]; then
		record "$1" skipped 0 "" "" "budget: ${left}s left, needs ${3}s"
		return 1
	fi
	[ "$left" -ge "$step_t" ] || step_t=$left
	return 0
}

# Runs a step's command into $out/name.log (dry run: prints it); status in step_rc.
run_cmd() { # name command...
	local name=$1 s0=$SECONDS
	shift
	if [ "$dry" -eq 1 ]; then
		{ printf '%s:' "$name"; printf ' %q' "$@"; echo; } | tee -a "$out/plan.txt"
		record "$name" planned 0 "" "" ""
		step_rc=-1
		return
	fi
	echo "== $name (up to ${step_t}s; log $out/$name.log)"
	timeout -k 10 "$step_t" "$@" >"$out/$name.log" 2>&1
	step_rc=$?
	step_secs=$((SECONDS - s0))
	grep -E '^#|^ +[0-9]' "$out/$name.log" | grep -v '^#$' | tail -n 14
}

busbw() { # log op: busbw of the op's largest size (nccl-tests columns, busbw 7th)
	awk -v op="$2" '/^# (all_reduce|sendrecv)$/ { cur = $2 } /^ +[0-9]/ && (cur == op || cur == "") { b = $7 }
		END { if (b != "") print b }' "$1"
}

wrong_total() { # log: the #wrong column summed, and the rows counted
	awk '/^ +[0-9]/ { w += $8; n++ } END { print w + 0, n + 0 }' "$1"
}

nccl_env() { # the environment of every NCCL run: loopback, NET only, small channel count
	echo NCCL_SOCKET_IFNAME=lo FABRICLAB_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 \
		NCCL_MAX_NCHANNELS=2 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
}

# One driver run: name ranks ops net-name env... ; checks exit, #wrong and NCCL's "via NET/<net>".
nccl_step() {
	local name=$1 n=$2 ops=$3 net=$4 reports="$out/$1-reports" log wrong rows
	shift 4
	if [ -n "$driver_note" ]; then
		record "$name" skipped 0 "" "" "no driver: $driver_note"
		return
	fi
	step_time "$name" "$NCCL_CAP_S" 40 || return
	mkdir -p "$reports"
	# shellcheck disable=SC2046
	run_cmd "$name" env $(nccl_env) FABRICLAB_REPORT_DIR="$reports" "$@" "$driver" --ranks "$n" \
		"${driver_args[@]}" -o "$ops" --timeout $((step_t > 20 ? step_t - 10 : step_t)) \
		--rank-env FABRICLAB_NODE_NAME=node%r --rank-env NCCL_DEBUG_FILE="$out/$name-rank%r.nccl.log"
	[ "$step_rc" -ge 0 ] || return
	log=$out/$name.log
	read -r wrong rows < <(wrong_total "$log")
	record "$name" pass "$step_secs" "$(busbw "$log" all_reduce)" "$(busbw "$log" sendrecv)" ""
	[ "$step_rc" -eq 0 ] || fail_step "$name" "exit $step_rc$( [ "$step_rc" -ge 124 ] && echo " (timeout ${step_t}s?)"): $(grep -v '^#' "$log" | grep -v '^ ' | tail -1)"
	[ "$rows" -gt 0 ] || fail_step "$name" "no result rows"
	[ "$wrong" -eq 0 ] || fail_step "$name" "$wrong elements wrong"
	# NCCL names the net it connected each channel through (2.28.9 src/transport/net.cc:313,359:
	# "Channel ../.. : r[d] -> p[d] [send] via NET/<ncclNet name>/<dev>", INIT|NET).
	if grep -qs "via NET/$net" "$out/$name-rank0.nccl.log" "$log"; then
		note "$name" "via NET/$net"
	else
		fail_step "$name" "NCCL did not say via NET/$net"
	fi
	case $name in
	fabriclab-*) check_named_hops "$name" "$reports" ;;
	profiler-*) check_profiler_report "$name" "$n" "$reports" ;;
	ext-*) grep -qs 'ext: wrapping' "$out/$name-rank0.nccl.log" || fail_step "$name" "no 'ext: wrapping' line" ;;
	esac
}

ratio_note() { # step baseline op label
	local a=${bw_ar[$1]:-} b=${bw_ar[$2]:-} r
	[ "$3" = sendrecv ] && a=${bw_sr[$1]:-} b=${bw_sr[$2]:-}
	[ -n "$a" ] && [ -n "$b" ] || return 0
	r=$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.3f", a / b }')
	[ -n "$r" ] || return 0
	ratios+=("$1: $4 = $a / $b GB/s = $r ($3 busbw at the largest size)")
	note "$1" "$4 $r"
}

# Net mode: NCCL finds the profiler inside the net plugin too; with 2.28.3+ (net v11 with a
# ctx) node0's own report names its profiler hops' peers.
check_named_hops() { # name reports
	[ "$nccl_code" -ge 22803 ] || { note "$1" "profiler hops not checked (NCCL < 2.28.3)"; return; }
	local why
	why=$(python3 - "$2" 2>&1 <<'PY'
import glob, json, sys
files = sorted(glob.glob(sys.argv[1] + "/node0-*.json"))
if not files:
    print("no node0 report"); sys.exit(1)
r = json.load(open(files[0]))
hops = [h for h in r["hops"] if h.get("mode") == "profiler"]
unnamed = [h for h in hops if "?" in (h["src_node"], h["dst_node"])]
print(f"node0: {len(hops)} profiler hops, {len(unnamed)} unnamed")
sys.exit(0 if hops and not unnamed else 1)
PY
	) && note "$1" "$why" || fail_step "$1" "${why:-report check failed}"
}

# Profiler mode: the merged report names every ring hop (node r -> node r+1), each carrying what a
# ring all-reduce sends (2(n-1)/n of every buffer, warm-up and timed calls), and no verdict.
check_profiler_report() { # name ranks reports
	local name=$1 n=$2 dir=$3 why
	ls "$dir"/*.json >/dev/null 2>&1 || { fail_step "$name" "no profiler report: NCCL did not load $prof"; return; }
	[ -x "$tool" ] || { note "$name" "report not checked: no $tool"; return; }
	"$tool" report "$dir" >"$dir.txt" 2>&1 && "$tool" report "$dir" --json >"$dir.json" 2>>"$dir.txt" ||
		{ fail_step "$name" "fabriclab report failed ($dir.txt)"; return; }
	why=$(python3 - "$n" "$dir.json" "$out/$name.log" "$((iters + warmup))" 2>&1 <<'PY'
import json, re, sys
n, merged, log, calls = int(sys.argv[1]), json.load(open(sys.argv[2])), sys.argv[3], int(sys.argv[4])
sizes = [int(l.split()[0]) for l in open(log) if re.match(r"^ +[0-9]", l)]
expected = sum(s * calls for s in sizes) * 2 * (n - 1) / n
hops = [h for h in merged["hops"] if h.get("mode") == "profiler"]
ring = {(f"node{r}", f"node{(r + 1) % n}") for r in range(n)}
seen = {(h["src_node"], h["dst_node"]) for h in hops}
busiest = {}
for h in hops:
    pair = (h["src_node"], h["dst_node"])
    if pair in ring and h["bytes"] > busiest.get(pair, {"bytes": -1})["bytes"]:
        busiest[pair] = h
bad = []
for pair, h in sorted(busiest.items()):
    ratio = h["bytes"] / expected
    # Simple moves the payload; the driver's two 8-byte figures per size add a few bytes.
    if not 0.99 <= ratio <= 1.02:
        bad.append(f"{pair[0]}->{pair[1]} {ratio:.3f}x")
missing = sorted(ring - seen)
kind = merged["verdict"]["kind"]
ratios = [h["bytes"] / expected for h in busiest.values()]
print(f"{len(busiest)}/{n} ring hops, bytes {min(ratios, default=0):.3f}-{max(ratios, default=0):.3f}x "
      f"the all-reduce's, verdict {kind}"
      + (f", missing {missing}" if missing else "") + (f", off {bad}" if bad else ""))
sys.exit(0 if not missing and not bad and kind == "none" else 1)
PY
	) && note "$name" "report: $why" || fail_step "$name" "report: ${why:-check failed}"
}

tool_step() { # name fabriclab-arguments...
	local name=$1 wrong rows
	shift
	[ -x "$tool" ] || [ "$dry" -eq 1 ] || { record "$name" skipped 0 "" "" "no $tool (build.log)"; return; }
	step_time "$name" "$TOOL_CAP_S" 30 || return
	run_cmd "$name" env FABRICLAB_SOCKET_IFNAME=lo FABRICLAB_REPORT=off "$tool" "$@"
	[ "$step_rc" -ge 0 ] || return
	read -r wrong rows < <(wrong_total "$out/$name.log")
	record "$name" pass "$step_secs" "$(busbw "$out/$name.log" all_reduce)" "" ""
	case $name in
	# sweep: exit 1 is a finding (one direction slower), 3 a wrong byte
	sweep-*) [ "$step_rc" -le 1 ] || fail_step "$name" "exit $step_rc" ;;
	*) [ "$step_rc" -eq 0 ] || fail_step "$name" "exit $step_rc: $(tail -1 "$out/$name.log")"
	   [ "$rows" -gt 0 ] && [ "$wrong" -eq 0 ] || fail_step "$name" "$rows rows, $wrong wrong" ;;
	esac
}

# PyTorch's NCCL through the same environment (tests/gpu/allreduce_torch.py, one process a rank).
torch_step() { # name ranks env...
	local name=$1 n=$2 port=$((29500 + RANDOM % 1000))
	shift 2
	step_time "$name" "$TORCH_CAP_S" 60 || return
	local launcher=(bash -c 'n=$1; shift; pids=(); rc=0
		for r in $(seq 0 $((n - 1))); do
			env "$@" RANK=$r FABRICLAB_NODE_NAME=node$r NCCL_HOSTID=fabriclab-gpu-host-$r \
				python3 tests/gpu/allreduce_torch.py >"$TORCH_LOG.rank$r" 2>&1 & pids+=($!)
		done
		for p in "${pids[@]}"; do wait "$p" || rc=1; done
		cat "$TORCH_LOG.rank0"; exit $rc' torch "$n")
	# shellcheck disable=SC2046
	run_cmd "$name" env TORCH_LOG="$out/$name" SIZES="1048576 16777216 67108864" ITERS="$iters" \
		"${launcher[@]}" $(nccl_env) WORLD_SIZE="$n" LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 \
		MASTER_PORT=$port FABRICLAB_REPORT_DIR="$out/$name-reports" "$@"
	[ "$step_rc" -ge 0 ] || return
	record "$name" pass "$step_secs" "$(awk '/^ +[0-9]/ { b = $4 } END { if (b != "") print b }' "$out/$name.log")" "" ""
	[ "$step_rc" -eq 0 ] || fail_step "$name" "exit $step_rc"
	grep -qs 'via NET/fabriclab' "$out/$name.rank0" || fail_step "$name" "NCCL did not say via NET/fabriclab"
}

summary() {
	local failed=0 ran=0 name line
	{
		echo "== summary ($((SECONDS - started))s of a ${budget}s budget; logs in $out)"
		printf '%-20s %-8s %5s %12s %12s  %s\n' step status secs "allred GB/s" "sendrecv" notes
		for name in "${order[@]}"; do
			printf '%-20s %-8s %5s %12s %12s  %s\n' "$name" "${st[$name]}" "${secs[$name]}" \
				"${bw_ar[$name]:--}" "${bw_sr[$name]:--}" "${notes[$name]}"
		done
		echo "busbw at the largest size (nccl-tests' busbw; all ranks share one GPU over loopback)"
		for line in "${ratios[@]}"; do echo "ratio $line"; done
	} | tee "$out/summary.txt"
	{
		printf 'step\tstatus\tseconds\tallreduce_busbw\tsendrecv_busbw\tnotes\n'
		for name in "${order[@]}"; do
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${st[$name]}" "${secs[$name]}" \
				"${bw_ar[$name]}" "${bw_sr[$name]}" "${notes[$name]}"
		done
	} >"$out/summary.tsv"
	for name in "${order[@]}"; do
		case ${st[$name]} in
		FAIL) failed=$((failed + 1)) ;;
		pass) ran=$((ran + 1)) ;;
		esac
	done
	[ "$dry" -eq 1 ] && { echo "dry run: ${#order[@]} steps planned (commands in $out/plan.txt)"; return 0; }
	echo "$ran passed, $failed failed, $((${#order[@]} - ran - failed)) skipped"
	[ "$failed" -eq 0 ] && [ "$ran" -gt 0 ]
}
