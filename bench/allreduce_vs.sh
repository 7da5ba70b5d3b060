#!/usr/bin/env bash
# all_reduce on RANKS local ranks through each plugin in turn, ROUNDS interleaved rounds (the order
# rotating): per size, min / median / max of time and busbw per plugin, and the first plugin's
# ratios to each other one, paired round by round (both saw the same machine).
# Usage: [RANKS=4] [SIZES="8 64M 8" | SIZE_LIST="8 512 64K 2M 64M"] [ITERS=10] [WARMUP=3] [CPU=1] \
#        bench/allreduce_vs.sh BUILD ROUNDS PLUGIN_SO [PEER_SO | ext:PEER_SO ...]
# SIZE_LIST runs one bench per size (its own iterations: ITERS_<size>, e.g. ITERS_64M=3, else
# ITERS); with CPU=1 each is run again with one iteration, whose CPU (the setup) is taken off:
# a figure per size and iteration.
# ext:PEER_SO runs the first plugin (fabriclab) wrapping PEER_SO (FABRICLAB_TRANSPORT=ext:...):
# the peer's transport with fabriclab's counting (SO@ext:PEER_SO: with the build SO of fabriclab).
# Beside PEER_SO itself it splits a gap in two:
# fabriclab / fabriclab(ext:peer) compares the transports under the same counting, and
# fabriclab(ext:peer) / peer is what the wrap and its counting cost the peer.
# SIZES is "min max factor" (fabriclab bench -b -e -f). Small sizes need many iterations (e.g.
# ITERS=3000) for a round to last longer than a scheduling hiccup. CPU=1 runs each bench under
# `perf stat -e task-clock` and adds the CPU time of the whole run (every rank and thread,
# setup included, so use one size per run for a per-size figure) with its paired ratio.
# REF=K (1-based) adds every plugin's speed against the K-th (its time / theirs), with the 95%
# confidence interval of the median (bootstrap): the goals are judged on that interval.
# SCALE=BASE:SPIN:NS (with REF) reads each other plugin's speed on the scale of two named ones,
# BASE and SPIN = BASE plus NS ns of work per completion: (BASE - it) / (BASE - SPIN) x NS, what
# it does per completion on the critical path beyond BASE, with its 95% interval (the same
# bootstrap); "not resolved" when BASE and SPIN cannot be told apart (SPIN reads no slower than
# BASE in more than 2.5% of the resamples).
# SAVE=FILE keeps the rounds' raw figures; FROM=FILE reads them back instead of running (the same
# plugin list, for the names): one run read again with another REF or SCALE.
set -euo pipefail
build=$1 rounds=$2 ranks=${RANKS:-4} iters=${ITERS:-10} warmup=${WARMUP:-3} cpu=${CPU:-0}
read -r smin smax sfactor <<<"${SIZES:-8 64M 8}"
shift 2
plugins=("$@")
n=${#plugins[@]}
out=$(mktemp)
trap '[ -n "${KEEP:-}" ] || rm -f "$out" "$out.perf"' EXIT
if [ -n "${FROM:-}" ]; then
	[ -r "$FROM" ] || { echo "FROM=$FROM: no such file of saved rounds (see SAVE=FILE)" >&2; exit 2; }
	cp "$FROM" "$out"
	rounds=0 # nothing is run
fi
if [ "$cpu" = 1 ] && ! perf stat -x, -e task-clock true >/dev/null 2>&1; then
	echo "perf stat -e task-clock does not work here: no CPU figures" >&2
	cpu=0
fi
run() { # plugin min max factor iters: the bench's table on stdout; CPU=1: task-clock into $out.perf
	local so=$1 transport=${FABRICLAB_TRANSPORT:-} perf=()
	case $so in
	ext:*) transport=$so so=${plugins[0]} ;;
	*@ext:*) transport=ext:${so#*@ext:} so=${so%@ext:*} ;;
	esac
	[ "$cpu" = 1 ] && perf=(perf stat -x, -e task-clock -o "$out.perf")
	FABRICLAB_TRANSPORT=$transport NCCL_NET_PLUGIN="$so" "${perf[@]}" "$build/fabriclab" bench \
		--ranks "$ranks" -b "$2" -e "$3" -f "$4" -n "$5" -w "$warmup"
}
iters_for() { local v="ITERS_$1"; echo "${!v:-$iters}"; }
for ((r = 0; r < rounds; r++)); do
	for ((k = 0; k < n; k++)); do
		p=$(((k + r) % n))
		if [ -n "${SIZE_LIST:-}" ]; then
			runs=()
			for s in $SIZE_LIST; do runs+=("$s $s 2 $(iters_for "$s")"); done
		else
			runs=("$smin $smax $sfactor $iters")
		fi
		for spec in "${runs[@]}"; do
			read -r b e f it <<<"$spec"
			run "${plugins[p]}" "$b" "$e" "$f" "$it" |
				awk -v r="$r" -v p="$p" '!/^#/ && NF >= 8 { print r, p, $1, $5, $7 }' >>"$out"
			if [ "$cpu" = 1 ]; then
				sz=$(awk '$3 != "cpu" { s = $3 } END { print s }' "$out")
				[ -n "${SIZE_LIST:-}" ] || sz=all
				cpu_ms=$(awk -F, '/task-clock/ { print $1 }' "$out.perf")
				# the same run with one iteration: its setup, taken off (CPU=1 with SIZE_LIST)
				base_ms=0
				if [ -n "${SIZE_LIST:-}" ] && [ "$it" -gt 1 ]; then
					run "${plugins[p]}" "$b" "$e" "$f" 1 >/dev/null
					base_ms=$(awk -F, '/task-clock/ { print $1 }' "$out.perf")
				fi
				echo "$r $p cpu $cpu_ms $sz $it $base_ms" >>"$out"
			fi
		done
	done
done
[ -z "${SAVE:-}" ] || cp "$out" "$SAVE"
[ -z "${FROM:-}" ] || rounds=$(awk 'END { print $1 + 1 }' "$out")
# A plugin's name: its file name without libnccl-net-, with its folder when two share a name.
# ext:PEER_SO is named fabriclab(ext:peer).
short() { basename "${1#ext:}" .so | sed 's/^libnccl-net-//'; }
names=()
for so in "${plugins[@]}"; do
	name=$(short "$so")
	dups=0
	for other in "${plugins[@]}"; do
		[ "${other%%:*}" = "${so%%:*}" ] && [ "$(short "$other")" = "$name" ] && dups=$((dups + 1))
	done
	[ "$dups" -gt 1 ] && name="$(basename "$(dirname "${so#ext:}")")/$name"
	case $so in
	ext:*) name="$(short "${plugins[0]}")(ext:$name)" ;;
	*@ext:*) # folder/fabriclab(ext:peer): builds of fabriclab differ by their folder
		name="$(basename "$(dirname "${so%@ext:*}")")/$(short "${so%@ext:*}")"
		name="$name(ext:$(short "${so#*@ext:}"))" ;;
	esac
	names+=("$name")
done
python3 - "$out" "$rounds" "$ranks" "$iters" "${names[@]}" <<'PY'
import os, random, sys, statistics
path, rounds, ranks, iters, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]
t, bw, cpu = {}, {}, {}
for line in open(path):
    f = line.split()
    if f[2] == "cpu":
        cpu[int(f[1]), f[4], int(f[0])] = (float(f[3]), int(f[5]), float(f[6]))
        continue
    r, p, size, us, gbs = f
    t[int(p), int(size), int(r)] = float(us)
    bw[int(p), int(size), int(r)] = float(gbs)
def step_bytes():
    v = os.environ.get("FABRICLAB_SHIM_STEP", "512K").strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(v[-1:], 1)
    return int(v.rstrip("KMG")) * scale
def requests_per_iteration(size, n):
    """isend + irecv of every rank, as the shim's ring all_reduce moves it (shim/allreduce.c, as
    NCCL's proxy, shim/nccl_rules.c): loops of n chunks of 4 steps, 2(n-1) ring steps a loop,
    each chunk in 2 slices (Simple; LL and LL128: 1 step of 32 KiB or 562.5 KiB), empty slices
    sent too; 0 (no per-request figure) when channels split the buffer further."""
    if os.environ.get("FABRICLAB_SHIM_CHANNELS", "1") != "1" or size < 4:
        return 0
    proto = os.environ.get("FABRICLAB_SHIM_PROTO", "simple").lower()
    chunk, slices = {"ll": (32768, 1), "ll128": (576000, 1)}.get(proto, (4 * step_bytes(), 2))
    loops = -(-(size // 4 * 4) // (n * chunk))
    return n * 2 * 2 * (n - 1) * loops * slices
def spread(v, fmt="%.3f"):
    v = sorted(v)
    return " / ".join(fmt % x for x in (v[0], statistics.median(v), v[-1]))
def median_ci(v, draws=2000):
    """The median and the 95% interval of the medians of `draws` resamples of v (seeded: a run
    reads the same twice)."""
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(v, k=len(v))) for _ in range(draws))
    return "%.3f (95%% CI %.3f-%.3f)" % (statistics.median(v), meds[draws // 40],
                                          meds[draws - 1 - draws // 40])
def on_scale(speeds, base, spin, ns, draws=2000):
    """Each other plugin on the scale: (BASE - it) / (BASE - SPIN) x ns on the medians, with the
    95% interval over paired resamples of the rounds (seeded); 'not resolved' when SPIN reads no
    slower than BASE in more than 2.5% of the resamples."""
    med = statistics.median
    rng = random.Random(2)
    picks = [rng.choices(range(len(speeds[base])), k=len(speeds[base])) for _ in range(draws)]
    b = [med([speeds[base][i] for i in k]) for k in picks]
    s = [med([speeds[spin][i] for i in k]) for k in picks]
    flat = sum(bk <= sk for bk, sk in zip(b, s))
    for name, v in speeds.items():
        if name in (base, spin):
            continue
        if flat > draws // 40 or med(speeds[base]) <= med(speeds[spin]):
            print("  %-36s per completion beyond %s: scale not resolved (%s reads no slower "
                  "than %s in %d of %d resamples)" % (name, base, spin, base, flat, draws))
            continue
        reads = sorted((bk - med([v[i] for i in k])) / (bk - sk) * ns
                       for k, bk, sk in zip(picks, b, s) if bk > sk)
        point = (med(speeds[base]) - med(v)) / (med(speeds[base]) - med(speeds[spin])) * ns
        print("  %-36s per completion beyond %s: %.0f ns (95%% CI %.0f to %.0f; on the scale %s = "
              "+%g ns)" % (name, base, point, reads[len(reads) // 40],
                           reads[len(reads) - 1 - len(reads) // 40], spin, ns))
ref = int(os.environ.get("REF", "0")) - 1
sizes = sorted({k[1] for k in t})
print("%d ranks, %d rounds, %s iterations; time in us and busbw in GB/s as min / median / max"
      % (ranks, rounds, iters))
for size in sizes:
    print("size %d B:" % size)
    for p, name in enumerate(names):
        print("  %-26s time %s   busbw %s" % (name, spread([t[p, size, r] for r in range(rounds)], "%.1f"),
                                             spread([bw[p, size, r] for r in range(rounds)])))
    for p in range(1, len(names)):
        speed = [t[p, size, r] / t[0, size, r] for r in range(rounds)]
        what = ("the transports under the same counting" if "(ext:" in names[p]
                else "its time / ours, goal >= 1.00")
        print("  %s / %s speed (%s): %s" % (names[0], names[p], what, spread(speed, "%.2f")))
    for p, name in enumerate(names):
        peer = name[name.find("(ext:") + 5:-1] if name.endswith(")") and "(ext:" in name else None
        if peer in names:
            q = names.index(peer)
            cost = [t[q, size, r] / t[p, size, r] for r in range(rounds)]
            print("  %s / %s speed (the wrap and its counting over the same transport): %s, "
                  "median %s" % (name, peer, spread(cost, "%.2f"), median_ci(cost)))
    speeds = {}
    for p, name in enumerate(names):
        if 0 <= ref != p:
            speeds[name] = [t[ref, size, r] / t[p, size, r] for r in range(rounds)]
            print("  %-36s / %s speed: %s" % (name, names[ref], median_ci(speeds[name])))
    base, spin, ns = (os.environ.get("SCALE", "") + "::").split(":")[:3]
    if base in speeds and spin in speeds:
        on_scale(speeds, base, spin, float(ns))
if cpu:
    per_size = any(k[1] != "all" for k in cpu)
    print("CPU time (perf stat task-clock of every rank and thread) per all_reduce iteration, us, "
          "min / median / max, and paired ratios; %s:"
          % ("the same run with 1 iteration (its setup) taken off" if per_size
             else "setup included, all sizes in one run"))
    def per_iter(c):
        ms, it, base = c
        return (ms - base) * 1e3 / (it - 1) if base else ms * 1e3 / it
    for sz in sorted({k[1] for k in cpu}, key=lambda x: (x != "all", int(x) if x.isdigit() else 0)):
        print("  size %s:" % (sz + " B" if sz.isdigit() else "all sizes"))
        per = {(p, r): per_iter(cpu[p, sz, r]) for p in range(len(names))
               for r in range(rounds) if (p, sz, r) in cpu}
        reqs = requests_per_iteration(int(sz), ranks) if sz.isdigit() else 0
        for p, name in enumerate(names):
            v = [per[p, r] for r in range(rounds)]
            print("    %-26s %s%s" % (name, spread(v, "%.1f"), "   ns per request %.0f"
                                      % (statistics.median(v) * 1e3 / reqs) if reqs else ""))
        for p in range(1, len(names)):
            ratio = [per[0, r] / per[p, r] for r in range(rounds)]
            what = ("the transports under the same counting" if "(ext:" in names[p]
                    else "ours / its, goal <= 1.00")
            print("    %s / %s CPU (%s): %s" % (names[0], names[p], what, spread(ratio, "%.2f")))
        for p, name in enumerate(names):
            peer = name[name.find("(ext:") + 5:-1] if name.endswith(")") and "(ext:" in name else None
            if reqs and peer in names:
                q = names.index(peer)
                added = [(per[p, r] - per[q, r]) * 1e3 / reqs for r in range(rounds)]
                print("    %s - %s CPU per request, ns (what the wrap and its counting add; "
                      "goal <= 50): %s" % (name, peer, spread(added, "%.0f")))
PY
