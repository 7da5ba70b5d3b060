#!/usr/bin/env bash
# The shim drives a net plugin as NCCL's proxy does (shim/nccl_rules.c says which NCCL lines
# each rule follows, tag v2.30.7-1 unless said). A tap plugin (tests/inner/tap_net.c) between
# the shim and a real transport writes down every isend, irecv, test and iflush; each check
# below holds the shim to one rule:
#   slices   Simple all_reduce: 1 MiB sends (2 steps of 512 KiB, ALLREDUCE_SLICESTEPS:
#            src/include/collectives.h:19-20), 4 in flight per connection (net.cc:1323), a
#            loop's 2(n-1) ring steps x 2 slices each, empty slices sent as 0 bytes
#            (src/device/prims_simple.h:282-299); FABRICLAB_SHIM_STEP scales the step
#   slots    every receive posts its whole slot (net.cc:1566-1572), larger than most sends,
#            and test's sizes are what was sent; a size that is not is an error, never loss
#   ll       LL / LL128: 64 KiB and 600 KiB slots, 8 in flight, the optional-completion hint
#            on every receive (net.cc:1585-1589), not with NCCL_NET_OPTIONAL_RECV_COMPLETION=0,
#            not for 2.23 (no such parameter), never to a v8 plugin (net_v8.cc:73)
#   p2p      sendrecv: chunks of 128 KiB halved / quartered for small ops (enqueue.cc:937-949),
#            receives posting the 128 KiB slot from 2.29, clamped to the op in 2.28
#            (2.28.9 net.cc:1467), 8 in flight; 4 grouped subs: irecvs of 4 buffers, each
#            sub's sends 4 deep (min(8, 16 / 4)) on its own
#   profiler NCCL's callback at init (src/plugin/net.cc:173) and a handle with every buffer;
#            events a plugin starts on those handles reach the callback, a NULL one is named
#   refused  a release outside 2.23-2.30, an unknown protocol, LL on GPU memory
#   flush    GPUDirect (fake CUDA, fake verbs): iflush after every receive that brought bytes
#            on compute capability 8.0, none on 9.0, again with the plugin's forceFlush or
#            NCCL_NET_FORCE_FLUSH=1 (src/graph/paths.cc:575-596, net.cc:1637-1641)
#   datadirect fabriclab's ib on an mlx5 DataDirect NIC (fake verbs and libmlx5; the fabric's
#            description says which NICs: "data_direct": true) sets forceFlush as NCCL's IB does
#            (src/transport/net_ib/init.cc:374-394, 554-557), so 9.0 flushes; not with
#            NCCL_IB_DATA_DIRECT=0, nor without dma-buf (init.cc:378)
#   reg      user buffers registered (FABRICLAB_SHIM_REG_PASSES): point-to-point over GPUDirect
#            posts receives of just the op into the user's buffer, one send per op
#            (enqueue.cc:953-971, 1080-1085; net.cc:1543-1545), each op's receive started again
#            on every pass before the kernel (net.cc:1534-1546); host memory: NCCL's own slots
# Usage: test_shim_nccl_rules.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd)
tool=$build/fabriclab
inner=$build/inner
here=$(cd "$(dirname "$0")" && pwd)
fixture=$(cd "$here/../fixtures/sysfs/healthy" && pwd)
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_NET_PLUGIN FABRICLAB_SHIM_STEP FABRICLAB_FAULT \
	FABRICLAB_SHIM_NCCL FABRICLAB_SHIM_PROTO FABRICLAB_SHIM_RECV_GROUP FABRICLAB_SHIM_CHANNELS \
	FABRICLAB_SHIM_NET_VERSION FABRICLAB_SHIM_NET_MAX_VERSION FABRICLAB_TRANSPORT \
	NCCL_P2P_NET_CHUNKSIZE NCCL_CHUNK_SIZE NCCL_NET_OPTIONAL_RECV_COMPLETION NCCL_NET_FORCE_FLUSH \
	FABRICLAB_TAP_LIE FABRICLAB_TAP_FORCE_FLUSH FABRICLAB_SHIM_MEM FABRICLAB_SHIM_REG_PASSES \
	FABRICLAB_MLX5_LIB FABRICLAB_FAKEVERBS_DATA_DIRECT FABRICLAB_FAKEVERBS_DMABUF NCCL_IB_DATA_DIRECT \
	FABRICLAB_FABRIC FABRICLAB_FABRIC_NODE FABRICLAB_FAKEVERBS_DIR FABRICLAB_FAKEVERBS_DEVICES \
	FABRICLAB_FAKEVERBS_NODE FABRICLAB_FAKEVERBS_INJECT FABRICLAB_FAKECUDA_CC \
	FABRICLAB_FAKECUDA_GDR FABRICLAB_FAKECUDA_DMABUF FABRICLAB_FAKECUDA_DEVICES
export FABRICLAB_SOCKET_IFNAME=lo FABRICLAB_REPORT=off
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-rules.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for f in "$tool" "$inner/libnccl-net-tap-v12.so" "$inner/libnccl-net-tap-v8.so"; do
	[ -e "$f" ] || { echo "not ok - $f missing (run make)"; exit 1; }
done
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

# tap NAME TAP INNER RANKS OP MIN MAX [-f FACTOR] [env...]: one bench through the tap; its lines in
# $tmp/NAME/tap.*, its output in $tmp/NAME.{out,err}; 0 when it ran with #wrong 0 throughout.
tap() {
	local name=$1 tap_so=$2 inner_so=$3 ranks=$4 op=$5 min=$6 max=$7
	shift 7
	mkdir -p "$tmp/$name"
	local factor=16
	[ "${1:-}" = -f ] && factor=$2 && shift 2
	env NCCL_NET_PLUGIN="$tap_so" FABRICLAB_TAP_INNER="$inner_so" FABRICLAB_TAP_DIR="$tmp/$name" \
		"$@" timeout 120 "$tool" bench --ranks "$ranks" -o "$op" -b "$min" -e "$max" \
		-f "$factor" -n 2 -w 1 >"$tmp/$name.out" 2>"$tmp/$name.err" &&
		awk '!/^#/ && NF { n++; if ($NF != "0") bad = 1 } END { exit bad || !n }' "$tmp/$name.out"
}

# check NAME WHAT PYTHON-EXPR: holds the expression over the tap's lines (tests/integration/
# tap_facts.py: the facts it can use); names what failed.
check() {
	local name=$1 what=$2 expr=$3 why
	if why=$(python3 "$here/tap_facts.py" "$tmp/$name" "$expr" 2>&1); then
		echo "ok - $name: $what"
	else
		not_ok "$name: $what: $why"
	fi
}

ran() { # name: the tap run succeeded
	[ "$1" = 0 ] || { not_ok "$2: bench failed: $(tail -n 3 "$tmp/$2.err" | tr '\n' '|')"; return 1; }
}

v12=$inner/libnccl-net-tap-v12.so v8=$inner/libnccl-net-tap-v8.so
sock=$inner/libnccl-net-flsock-v12.so sock8=$inner/libnccl-net-flsock-v8.so

# ---- Simple all_reduce: slices, depth, whole slots, sizes as sent ----
tap simple "$v12" "$sock" 4 all_reduce 64M 64M; ran $? simple &&
{
	check simple "1 MiB slices, whole 1 MiB slots, 4 in flight (receives posted ahead: exactly)" \
		"max_send == 1 << 20 and recv_sizes == {1 << 20} and send_depth <= 4 and recv_depth == 4"
	check simple "2(n-1) ring steps x 2 slices x 8 loops, 4 times (warm-up, check, 2 timed)" \
		"sends_per_rank == {4 * 6 * 2 * 8}"
	check simple "receives report what was sent, flagged with a handle and NCCL's callback" \
		"sorted(recv_got) == sorted(sent) and handles and profiler == {1}"
}
tap small "$v12" "$sock" 4 all_reduce 8 8; ran $? small &&
	check small "8 bytes: every empty slice still sent, as 0 bytes, into 1 MiB slots" \
		"sends_per_rank == {4 * 6 * 2} and 0 in sent and recv_sizes == {1 << 20} and flushes == 0"
tap odd "$v12" "$sock" 3 all_reduce 1000004 1000004 FABRICLAB_SHIM_STEP=4K; ran $? odd &&
	check odd "4 KiB steps: 8 KiB slices and slots, partial slices posted whole" \
		"max_send == 8192 and recv_sizes == {8192} and send_depth <= 4 and min(sent) < 8192"
tap lie "$v12" "$sock" 2 all_reduce 64K 64K FABRICLAB_TAP_LIE=1
if [ $? -eq 0 ] || ! grep -q "reported 32769 bytes for part 1 of 1, 32768 were sent (1048576 posted)" \
	"$tmp/lie.err"; then
	not_ok "lie: a receive reporting more than was sent passed: $(tail -n 2 "$tmp/lie.err")"
else
	echo "ok - lie: a receive reporting more than was sent fails, naming both sizes"
fi

# ---- LL and LL128: slots, depth, the optional-completion hint ----
tap ll "$v12" "$sock" 3 all_reduce 1 1M FABRICLAB_SHIM_PROTO=ll; ran $? ll &&
	check ll "64 KiB slots, 8 in flight, the hint on every irecv, sizes whole 16-byte lines" \
		"recv_sizes == {65536} and recv_depth == 8 and hints == {1} and max_send <= 65536 and all(s % 16 == 0 for s in sent) and sorted(recv_got) == sorted(sent)"
tap ll128 "$v12" "$sock" 3 all_reduce 1M 1M FABRICLAB_SHIM_PROTO=ll128; ran $? ll128 &&
	check ll128 "600 KiB slots, the hint, sizes whole 2 KiB slices" \
		"recv_sizes == {614400} and hints == {1} and all(s % 2048 == 0 for s in sent)"
tap ll-off "$v12" "$sock" 2 all_reduce 64K 64K FABRICLAB_SHIM_PROTO=ll \
	NCCL_NET_OPTIONAL_RECV_COMPLETION=0; ran $? ll-off &&
	check ll-off "NCCL_NET_OPTIONAL_RECV_COMPLETION=0: no hint" "hints == {0}"
tap ll-v8 "$v8" "$sock8" 2 all_reduce 64K 64K FABRICLAB_SHIM_PROTO=ll; ran $? ll-v8 &&
	check ll-v8 "a v8 plugin never sees the hint nor a profiler callback (NCCL's v8 adapter)" \
		"hints == {0} and profiler == {0} and recv_sizes == {65536}"
tap ll-2.23 "$v8" "$sock8" 2 all_reduce 64K 64K FABRICLAB_SHIM_PROTO=ll FABRICLAB_SHIM_NCCL=2.23
ran $? ll-2.23 && check ll-2.23 "2.23 has no hint" "hints == {0}"

# ---- point-to-point ----
tap p2p "$v12" "$sock" 2 sendrecv 100000 10000000 -f 10; ran $? p2p &&
	check p2p "128 KiB slots, 32 / 64 / 128 KiB chunks by op size (100 kB, 1 MB, 10 MB), 8 deep" \
		"recv_sizes == {131072} and {32768, 1696, 65536, 16960, 131072, 38528} == set(sent) and send_depth == 8 and recv_depth == 8"
tap p2p-2.28 "$v8" "$sock8" 2 sendrecv 1000 1000 FABRICLAB_SHIM_NCCL=2.28
ran $? p2p-2.28 && check p2p-2.28 "2.28 posts receives clamped to the op" "recv_sizes == {1000}"
fabriclab=$build/libnccl-net-fabriclab.so # over sockets: maxRecvs 8
tap group4 "$v12" "$fabriclab" 2 sendrecv 16M 16M FABRICLAB_SHIM_RECV_GROUP=4; ran $? group4 &&
	check group4 "4 subs sharing the comm: irecvs of 4 slots, each sub's sends 4 deep, own tags" \
		"recv_parts == {4} and recv_sizes == {131072} and tag_depth == {4} and len(tags) == 8"
tap group4-one "$v12" "$sock" 2 sendrecv 16M 16M FABRICLAB_SHIM_RECV_GROUP=4; ran $? group4-one &&
	check group4-one "maxRecvs 1: NCCL shares no comm, so one sub, 8 deep" \
		"recv_parts == {1} and len(tags) == 2 and send_depth == 8"

# ---- the profiler callback the plugin was given, used on the handles it was given ----
tap events "$v12" "$sock" 2 sendrecv 1M 1M FABRICLAB_TAP_EVENTS=handle NCCL_DEBUG=INFO
if ran $? events; then
	if grep -q "profiler event(s) on a handle" "$tmp/events.err" ||
		! grep -q "shim: the plugin's profiler events: [1-9][0-9]* started, [1-9][0-9]* stopped" \
			"$tmp/events.err"; then
		not_ok "events: the callback did not take the plugin's events on its handles"
	else
		echo "ok - events: NCCL's callback takes events started on the handles NCCL passed"
	fi
fi
tap events-null "$v12" "$sock" 2 sendrecv 1M 1M FABRICLAB_TAP_EVENTS=null
if ran $? events-null; then
	grep -q "started [0-9]* profiler event(s) on a handle NCCL never passed" "$tmp/events-null.err" &&
		echo "ok - events-null: a start on a handle NCCL never passed is named" ||
		not_ok "events-null: a start on a NULL handle went unnoticed"
fi

# ---- GPUDirect: flush only where NCCL flushes ----
# The emulated fabric is described (fabric/README.md), never set by its overrides: the fake's
# own two devices, with dma-buf or a DataDirect engine on both where a case says, and GPUs of
# the compute capability each case names ("gpus": {"compute_capability": ...}).
. "$here/fabric_lib.sh"
dd_nic() { printf '{"name": "%s", "port": "%s", "data_direct": true}' "$1" "$2"; }
dd_node() { printf '{"name": "%s", "nics": [%s, %s]}' "$1" "$(dd_nic mlx5_0 ib:4x:hdr)" \
	"$(dd_nic mlx5_1 eth:4x:25g)"; }
dd_nodes="[$(dd_node node0), $(dd_node node1)]"
cc80='{"compute_capability": "8.0"}' cc90='{"compute_capability": "9.0"}'
plain=$tmp/fabric.json plain90=$tmp/fabric-90.json dd=$tmp/fabric-dd.json
dd_nodmabuf=$tmp/fabric-dd-nodmabuf.json
describe_fabric "$plain" "$tmp/fabric" "" "" "$cc80" &&
	describe_fabric "$plain90" "$tmp/fabric-90" "" "" "$cc90" &&
	describe_fabric "$dd" "$tmp/fabric-dd" ', "dmabuf": true' "$dd_nodes" "$cc90" &&
	describe_fabric "$dd_nodmabuf" "$tmp/fabric-dd-nodmabuf" "" "$dd_nodes" "$cc90" ||
	{ echo "not ok - cannot describe the fabric in $tmp"; exit 1; }
gdr=(FABRICLAB_TRANSPORT=ib FABRICLAB_IBVERBS_LIB="$build/libfabriclab-fakeverbs.so"
	FABRICLAB_SYSFS_ROOT="$fixture" FABRICLAB_CUDART_LIB="$build/libfabriclab-fakecuda.so"
	FABRICLAB_CUDA_DRIVER_LIB="$build/libfabriclab-fakecuda.so" FABRICLAB_SHIM_MEM=cuda)
flush_case() { # name expect-flushes fabric env...
	local name=$1 expect=$2 fabric=$3
	shift 3
	tap "$name" "$v12" "$fabriclab" 2 all_reduce 1 2M "${gdr[@]}" FABRICLAB_FABRIC="$fabric" "$@"
	ran $? "$name" || return
	if [ "$expect" = yes ]; then
		check "$name" "an iflush for every receive that brought bytes, none else" \
			"flushes == received_bytes_steps and flushes > 0"
	else
		check "$name" "no iflush, and the data right without" "flushes == 0"
	fi
}
flush_case flush-cc80 yes "$plain"
flush_case flush-cc90 no "$plain90"
flush_case flush-cc90-force yes "$plain90" FABRICLAB_TAP_FORCE_FLUSH=1
flush_case flush-cc90-env yes "$plain90" NCCL_NET_FORCE_FLUSH=1
mlx5=FABRICLAB_MLX5_LIB="$build/libfabriclab-fakeverbs.so"
flush_case flush-cc90-datadirect yes "$dd" "$mlx5" &&
	check flush-cc90-datadirect "the DataDirect NIC's properties carry forceFlush" "force_flush == {1}"
flush_case flush-cc90-datadirect-off no "$dd" "$mlx5" NCCL_IB_DATA_DIRECT=0 &&
	check flush-cc90-datadirect-off "NCCL_IB_DATA_DIRECT=0: no forceFlush" "force_flush == {0}"
flush_case flush-cc90-datadirect-nodmabuf no "$dd_nodmabuf" "$mlx5"

# ---- registered user buffers: point-to-point straight into them, after the kernel ----
tap reg "$v12" "$fabriclab" 2 sendrecv 1000 1000000 -f 10 "${gdr[@]}" FABRICLAB_FABRIC="$plain" \
	FABRICLAB_SHIM_REG_PASSES=5 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET; ran $? reg &&
{
	check reg "receives post just the op, one send per op, what was sent arrives" \
		"recv_sizes == {1000, 10000, 100000, 1000000} and set(sent) == recv_sizes and sorted(recv_got) == sorted(sent)"
	restarts=$(grep -o "from rank [01]: [0-9]* step start(s) repeated" "$tmp/reg.err" | awk '{print $4}' | sort -u)
	if [ "$restarts" = 5 ]; then
		echo "ok - reg: every op's receive started again on each of the 5 passes before the kernel"
	else
		not_ok "reg: repeated starts per op: '${restarts:-none}', 5 expected"
	fi
}
tap reg-host "$v12" "$fabriclab" 2 sendrecv 1000000 1000000 FABRICLAB_SHIM_REG_PASSES=5 \
	NCCL_DEBUG=INFO; ran $? reg-host &&
	check reg-host "host memory (no direct NIC): NCCL registers nothing, 128 KiB slots" \
		"recv_sizes == {131072}"

# ---- what the shim cannot emulate is refused, naming the setting ----
refused() { # name message env...
	local name=$1 msg=$2
	shift 2
	if env "$@" timeout 60 "$tool" bench --ranks 2 -b 8 -e 8 -n 1 -w 0 >"$tmp/$name.out" \
		2>"$tmp/$name.err"; then
		not_ok "$name: accepted"
	elif ! grep -qF "$msg" "$tmp/$name.err"; then
		not_ok "$name: no \"$msg\" in: $(tail -n 2 "$tmp/$name.err")"
	else
		echo "ok - $name: refused: $msg"
	fi
}
refused release-2.31 'FABRICLAB_SHIM_NCCL="2.31": expected a release 2.23 to 2.30' \
	FABRICLAB_SHIM_NCCL=2.31
refused proto-ll64 'FABRICLAB_SHIM_PROTO="ll64": expected simple, ll or ll128' \
	FABRICLAB_SHIM_PROTO=ll64
refused ll-cuda 'FABRICLAB_SHIM_PROTO=LL: the shim packs LL and LL128 lines in host memory only' \
	FABRICLAB_SHIM_PROTO=ll FABRICLAB_SHIM_MEM=cuda FABRICLAB_CUDART_LIB="$build/libfabriclab-fakecuda.so"

[ "$failures" -eq 0 ] || { echo "# $failures failed (outputs in $tmp kept)"; trap - EXIT; exit 1; }
exit 0
