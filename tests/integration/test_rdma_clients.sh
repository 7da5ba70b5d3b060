#!/usr/bin/env bash
# rdma-core's own clients over the fake verbs library, loaded as libibverbs.so.1 through
# LD_LIBRARY_PATH (nothing preloaded): programs written elsewhere are the check that the fake and
# the ib transport do not share a misunderstanding of verbs.
#  - ibv_devinfo (-v) lists the configured devices, ports, GIDs and truthful capabilities;
#  - ibv_rc_pingpong over InfiniBand and RoCE (v2 GID), several sizes, polled and with
#    completion events (-e), the payload checked (-c): both sides exit 0, print their timing and
#    no data error;
#  - perftest's ib_write_bw, ib_send_bw (also through a shared receive queue), ib_read_bw
#    (default post path, which is the ibv_wr_* API, and --use_old_post_send) and ib_write_lat:
#    both sides exit 0 with their result table.
# Usage: test_rdma_clients.sh [BUILD_DIR]
set -u
build=${1:-build}
lib=$(cd "$build" 2>/dev/null && pwd)/fakeverbs-lib
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-rdma-clients.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FABRICLAB_FAKEVERBS_INJECT FABRICLAB_FAKEVERBS_DEVICES FABRICLAB_FAKEVERBS_NODE \
	FABRICLAB_FAKEVERBS_VERBOSE LD_PRELOAD
unset FABRICLAB_FAKEVERBS_DIR FABRICLAB_FAKEVERBS_RETRY_MS FABRICLAB_FABRIC_NODE
. "$(dirname "$0")/fabric_lib.sh"
describe_fabric "$tmp/fabric.json" "$tmp/fabric" ', "retry_ms": 3000'
export LD_LIBRARY_PATH=$lib FABRICLAB_FABRIC=$tmp/fabric.json
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

# Debian's programs are not instrumented: they cannot load a sanitizer build of the library
# (the sanitizer runtime must come first), so under `make sanitize` there is nothing to run.
if [ -n "${FABRICLAB_SANITIZER:-}" ]; then
	echo "skipped: under $FABRICLAB_SANITIZER, uninstrumented clients cannot load $lib"
	exit 77
fi
[ -f "$lib/libibverbs.so.1" ] || { echo "not ok - $lib/libibverbs.so.1 missing (make)"; exit 1; }
for p in ibv_devinfo ibv_rc_pingpong ib_write_bw ib_send_bw ib_read_bw ib_write_lat; do
	command -v "$p" >/dev/null || { echo "not ok - $p missing (scripts/deps.sh)"; exit 1; }
done

# A TCP port for one server/client pair; each pair takes the next free one, from a per-run base
# below the kernel's ephemeral range (where another socket's local port made a server's listen fail).
port=$((10000 + $$ % 20000))
next_port() {
	port=$((port + 1))
	while ! python3 -c 'import socket, sys; socket.socket().bind(("127.0.0.1", int(sys.argv[1])))' \
		"$port" 2>/dev/null; do
		port=$((port + 1))
	done
}

# ibv_devinfo: both devices, the IB port's LID and the RoCE port's v2 GID, no atomics claimed.
if ! ibv_devinfo -v >"$tmp/devinfo" 2>&1; then
	not_ok "ibv_devinfo failed: $(tail -3 "$tmp/devinfo")"
else
	missing=""
	for want in 'hca_id:.*mlx5_0' 'hca_id:.*mlx5_1' 'link_layer:.*InfiniBand' \
		'link_layer:.*Ethernet' 'port_lid:.*1' 'atomic_cap:.*ATOMIC_NONE' \
		'GID\[ *3\]:.*::ffff:127.0.0.1, RoCE v2' 'state:.*PORT_ACTIVE'; do
		grep -q "$want" "$tmp/devinfo" || missing="$missing '$want'"
	done
	if [ -n "$missing" ]; then
		not_ok "ibv_devinfo -v lacks$missing"
	else
		echo "ok - ibv_devinfo -v: mlx5_0 (IB) and mlx5_1 (RoCE), no atomics claimed"
	fi
fi

# The sysfs tree the fake publishes for this "host": what ibv_devinfo's verbs said, as the kernel
# would lay it out, and fabriclab's own sysfs reader (the doctor, FABRICLAB_SYSFS_ROOT) agrees.
sysfs=$tmp/fabric/sysfs-node0
missing=""
for want in "mlx5_0/ports/1/rate=200 Gb/sec (4X HDR)" "mlx5_1/ports/1/rate=100 Gb/sec (4X EDR)" \
	"mlx5_0/ports/1/state=4: ACTIVE" "mlx5_0/ports/1/lid=0x1" \
	"mlx5_1/ports/1/link_layer=Ethernet" "mlx5_1/ports/1/gid_attrs/types/3=RoCE v2" \
	"mlx5_1/ports/1/gid_attrs/types/2=IB/RoCE v1" \
	"mlx5_1/ports/1/gids/3=0000:0000:0000:0000:0000:ffff:7f00:0001" \
	"mlx5_0/node_guid=0c42:a103:0000:0000" "mlx5_0/device/vendor=0x15b3"; do
	file=${want%%=*}
	[ "$(cat "$sysfs/class/infiniband/$file" 2>/dev/null)" = "${want#*=}" ] ||
		missing="$missing $file"
done
pci=$(readlink -f "$sysfs/class/infiniband/mlx5_0/device")
if [ -n "$missing" ]; then
	not_ok "sysfs tree under $sysfs: wrong or missing:$missing"
elif [ "${pci##*/}" != 0000:10:00.0 ]; then
	not_ok "sysfs: mlx5_0/device resolves to '$pci', not a PCI function"
elif ! FABRICLAB_SYSFS_ROOT=$sysfs FABRICLAB_IBVERBS_LIB=$lib/libibverbs.so.1 \
	"$build/fabriclab" doctor >"$tmp/doctor" 2>&1 ||
	! grep -q "PASS  rdma      2 RDMA ports on 2 devices" "$tmp/doctor" ||
	! grep -q "PASS  verbs .* 2 devices: mlx5_0, mlx5_1" "$tmp/doctor" ||
	! grep -q "PASS  port      mlx5_0/1: ACTIVE LinkUp, InfiniBand.*200 Gb/sec" \
		"$tmp/doctor"; then
	not_ok "fabriclab doctor on the fake's sysfs tree: $(grep -E 'rdma|verbs|port ' \
		"$tmp/doctor" | head -4 | tr '\n' ' ')"
else
	echo "ok - sysfs tree: ports, rates, GID types, PCI path; the doctor sees the same devices"
fi

# Runs a server and a client of one program on loopback; both must exit 0, the checks on their
# output are the caller's. Outputs: $tmp/NAME.srv, $tmp/NAME.cli.
pair() { # name program args...
	local t0=$SECONDS
	local name=$1 prog=$2 srv_rc cli_rc
	shift 2
	next_port
	timeout 30 "$prog" -p "$port" "$@" >"$tmp/$name.srv" 2>&1 &
	local srv=$! tries=0
	# the client gives up at once when nobody listens yet: wait for the server's socket
	while ! ss -Hltn "sport = :$port" | grep -q . && [ $tries -lt 200 ]; do
		sleep 0.05
		tries=$((tries + 1))
	done
	timeout 30 "$prog" -p "$port" "$@" 127.0.0.1 >"$tmp/$name.cli" 2>&1
	cli_rc=$?; echo "# $name: $((SECONDS - t0)) s" >&2
	wait "$srv"
	srv_rc=$?
	if [ "$srv_rc" -ne 0 ] || [ "$cli_rc" -ne 0 ]; then
		not_ok "$name: server exit $srv_rc, client exit $cli_rc:" \
			"$(tail -2 "$tmp/$name.srv" | tr '\n' ' ') /" \
			"$(tail -2 "$tmp/$name.cli" | tr '\n' ' ')"
		return 1
	fi
}

# ibv_rc_pingpong prints "N iters in S seconds" on success and "Invalid data" (with -c) or
# "Failed ..." / "... error" when something went wrong.
pingpong() { # name iters args...
	local name=$1 iters=$2 side
	shift 2
	pair "$name" ibv_rc_pingpong -n "$iters" -c "$@" || return
	for side in srv cli; do
		if grep -qiE 'invalid data|fail|error' "$tmp/$name.$side" ||
			! grep -q "^$iters iters in" "$tmp/$name.$side"; then
			not_ok "$name ($side): $(tail -3 "$tmp/$name.$side" | tr '\n' ' ')"
			return
		fi
	done
	echo "ok - $name: $iters iterations, payload checked on both sides"
}

pingpong "rc_pingpong IB 1 B" 200 -d mlx5_0 -s 1
pingpong "rc_pingpong IB 4 KiB" 100 -d mlx5_0 -s 4096
pingpong "rc_pingpong IB 1 MiB" 20 -d mlx5_0 -s 1048576
pingpong "rc_pingpong IB 64 KiB, completion events" 50 -d mlx5_0 -s 65536 -e
pingpong "rc_pingpong RoCE v2 4 KiB" 100 -d mlx5_1 -g 3 -s 4096
pingpong "rc_pingpong RoCE v1 64 KiB, completion events" 50 -d mlx5_1 -g 2 -s 65536 -e

# perftest prints its result table on both sides: a row that starts with the size and the
# iteration count; "ibv_wr* API : ON" says the default post path (ibv_wr_start ... ibv_wr_complete)
# was taken, OFF that ibv_post_send was.
perftest() { # name api(ON|OFF) program size iters args...
	local name=$1 api=$2 prog=$3 size=$4 iters=$5 side
	shift 5
	pair "$name" "$prog" -s "$size" -n "$iters" "$@" || return
	for side in srv cli; do
		if ! grep -qE "^ *$size +$iters +[0-9]" "$tmp/$name.$side"; then
			not_ok "$name ($side): no result row:" \
				"$(tail -3 "$tmp/$name.$side" | tr '\n' ' ')"
			return
		fi
	done
	if [ "$api" != - ] && ! grep -qE "ibv_wr\* API +: $api" "$tmp/$name.cli"; then
		not_ok "$name: expected 'ibv_wr* API : $api' in: $(grep 'API' "$tmp/$name.cli")"
		return
	fi
	echo "ok - $name:" \
		"$(grep -E "^ *$size +$iters +[0-9]" "$tmp/$name.cli" | head -1 | tr -s " ")"
}

perftest "ib_write_bw IB 64 KiB" ON ib_write_bw 65536 200 -d mlx5_0
perftest "ib_write_bw RoCE v2 1 MiB" ON ib_write_bw 1048576 20 -d mlx5_1 -x 3
perftest "ib_write_bw IB 64 KiB, old post" OFF ib_write_bw 65536 200 -d mlx5_0 --use_old_post_send
perftest "ib_send_bw IB 64 KiB" ON ib_send_bw 65536 200 -d mlx5_0
perftest "ib_send_bw IB 4 KiB, old post" OFF ib_send_bw 4096 200 -d mlx5_0 --use_old_post_send
perftest "ib_send_bw IB 64 KiB, shared receive queue" ON ib_send_bw 65536 200 -d mlx5_0 \
	--use-srq
perftest "ib_read_bw IB 64 KiB" ON ib_read_bw 65536 200 -d mlx5_0
perftest "ib_read_bw RoCE v2 64 KiB, old post" OFF ib_read_bw 65536 200 -d mlx5_1 -x 3 \
	--use_old_post_send
# the latency test's responder spins on memory: few iterations (docs/fakeverbs.md says why)
perftest "ib_write_lat IB 8 B" - ib_write_lat 8 100 -d mlx5_0

[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
echo "all passed"
