# Shared by the scripts that run `fabriclab bench` and check what it prints (sourced, not run):
# the exact size lines, #wrong 0 and nccl-tests' rate arithmetic.

bytes() { # 64M -> 67108864
	case $1 in
	*K) echo $((${1%K} << 10)) ;;
	*M) echo $((${1%M} << 20)) ;;
	*G) echo $((${1%G} << 30)) ;;
	*) echo "$1" ;;
	esac
}

# The size column bench must print for each size from $1 to $2 by factor $3:
# all_reduce rounds down to whole floats, sendrecv moves exact bytes.
expected_sizes() { # op min max factor
	local op=$1 s max
	s=$(bytes "$2") max=$(bytes "$3")
	while [ "$s" -le "$max" ]; do
		if [ "$op" = all_reduce ]; then echo $((s / 4 * 4)); else echo "$s"; fi
		s=$((s * $4))
	done
}

# Checks one output: every data line has 8 fields and #wrong 0, sizes are
# exactly the expected ones in order, and the average line is there.
check_output() { # file op min max factor ranks -> prints a reason on failure
	local out=$1 got want
	got=$(awk '!/^#/ && NF { print $1 }' "$out")
	want=$(expected_sizes "$2" "$3" "$4" "$5")
	if [ -z "$got" ]; then echo "no result lines"; return 1; fi
	if [ "$got" != "$want" ]; then
		echo "sizes printed: $(echo $got); expected: $(echo $want)"; return 1
	fi
	awk '!/^#/ && NF && (NF != 8 || $8 != "0") { bad = bad " [" $0 "]" }
	     END { if (bad != "") { print "bad lines:" bad; exit 1 } }' "$out" || return 1
	grep -q '^# Avg bus bandwidth : [0-9.e+-]*$' "$out" || { echo "no average line"; return 1; }
	check_rates "$out" "$2" "$6"
}

# nccl-tests' arithmetic: algbw = size / time (GB/s from bytes and us), busbw = algbw times
# 2(n-1)/n for all_reduce and 1 for sendrecv. The bound comes from the printed precision alone:
# a time printed as T (2 decimals) was in [T - 0.005, T + 0.005] (above 0), so algbw lay between
# size/(T + 0.005) and size/(T - 0.005) (unbounded when T <= 0.005), and each rate printed with
# 3 decimals is within 0.0005 of that. No relative slack: a 0.02 us time is as exact as a 2 s one.
check_rates() { # file op ranks
	awk -v op="$2" -v n="$3" '
		function outside(got, t, bytes, factor,   lo, hi) {
			lo = bytes / (t + 0.005) / 1e3 * factor - 0.0005
			if (t - 0.005 <= 0) return got < lo - 1e-9
			hi = bytes / (t - 0.005) / 1e3 * factor + 0.0005
			return got < lo - 1e-9 || got > hi + 1e-9
		}
		!/^#/ && NF == 8 {
			factor = op == "all_reduce" ? 2 * (n - 1) / n : 1
			if (outside($6, $5, $1, 1) || outside($7, $5, $1, factor))
				bad = bad " [" $0 "]"
		}
		END { if (bad != "") { print "rates do not follow size/time and the bus factor:" bad; exit 1 } }' "$1"
}
