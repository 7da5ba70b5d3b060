# Shared by the test_lab*.sh scripts (sourced, not run): running `fabriclab lab` and
# reading the verdict of its merged report with `fabriclab report --json`.
# The caller sets $tool (the fabriclab binary) and $tmp (a scratch folder).

failures=${failures:-0}
# Debian's python3: the pyenv shim on PATH may lack the standard modules we expect.
py=/usr/bin/python3
[ -x "$py" ] || py=python3

ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

# Runs the lab into $tmp/NAME (stdout NAME.out, stderr NAME.err, status in $rc, run folder in
# $run) and, when it succeeded, merges its reports into $tmp/NAME.json; a failed run or merge
# counts as a failure and returns 1.
lab() { # name args...
	local name=$1
	shift
	rm -rf "${tmp:?}/$name"
	timeout --kill-after=5 90 "$tool" lab --dir "$tmp/$name" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	run=$(find "$tmp/$name" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -n 1)
	if [ "$rc" -ne 0 ]; then
		not_ok "$name: fabriclab lab $* exited $rc"
		sed 's/^/#   /' "$tmp/$name.err" | tail -n 15
		return 1
	fi
	# A merge that fails (or prints nothing) is a failure of its own: the verdict checks that
	# follow are skipped, so they must not pass silently.
	"$tool" report --json "$run/reports" >"$tmp/$name.json" 2>>"$tmp/$name.err"
	rc=$?
	if [ "$rc" -ne 0 ] || [ ! -s "$tmp/$name.json" ]; then
		not_ok "$name: fabriclab report --json $run/reports exited $rc$([ -s "$tmp/$name.json" ] ||
			echo ", empty output")"
		tail -n 5 "$tmp/$name.err" | sed 's/^/#   /'
		return 1
	fi
}

# One line naming the verdict: kind, node, device and hop.
verdict_of() { # json file
	"$py" - "$1" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["verdict"]
hop = v["hop"]
if hop:
    hop = "%s/%s->%s/%s" % (hop["src_node"], hop["src_dev"], hop["dst_node"], hop["dst_dev"])
print("kind=%s node=%s dev=%s hop=%s" % (v["kind"], v["node"] or "-", v["dev"] or "-", hop or "-"))
PY
}

reason_of() { # json file
	"$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["verdict"]["reason"])' "$1"
}

# The verdict line must match the pattern (an extended regular expression).
expect_verdict() { # name description pattern
	local got
	got=$(verdict_of "$tmp/$1.json" 2>&1)
	if [[ $got =~ $3 ]]; then
		ok "$1: $2 ($got)"
	else
		not_ok "$1: $2: expected /$3/, the report said: $got"
		echo "#   reason: $(reason_of "$tmp/$1.json" 2>&1)"
		grep -E '^\*? +node' "$tmp/$1.out" | sed 's/^/#   /'
		return 1
	fi
}

# The same where 4 nodes leave two hops to compare a device's two with: not-enough-evidence is
# an honest answer there, if the culprit it finds likeliest is the right one.
expect_named_or_likeliest() { # name description pattern likeliest-culprit
	local reason
	reason=$(reason_of "$tmp/$1.json" 2>&1)
	if [[ $(verdict_of "$tmp/$1.json" 2>&1) == kind=not-enough-evidence* &&
		$reason == *"likeliest $4 "* ]]; then
		ok "$1: $2 (not enough evidence to name it, the likeliest: $4)"
		return 0
	fi
	expect_verdict "$1" "$2" "$3"
}

# Each receiving node's wait share (peer wait / active time of the hops it receives on), which
# the `node` verdict compares: the straggler should wait least.
wait_shares() { # json file
	"$py" - "$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(" ".join("%s:%.2f" % (h["dst_node"], h["peer_wait_seconds"] / h["active_seconds"])
               for h in m["hops"] if h["active_seconds"] > 0))
PY
}

# A check that could not be judged here: said now, and the test ends as a skip (77, the reason
# last: tests/run.sh) unless another check failed, which wins.
skipped=
skip_check() {
	echo "# skip - $*"
	skipped+="${skipped:+; }$*"
}

# The summary line and the exit status; failures keep the scratch folder.
finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures failed (kept $tmp)"
		trap - EXIT
		return 1
	fi
	[ -z "$skipped" ] || { echo "skipped: $skipped"; exit 77; }
	echo "all passed"
}

# The median step time the lab printed, in ms.
median_step() { # name
	sed -n 's/^median step: \([0-9.]*\) ms.*/\1/p' "$tmp/$1.out"
}

# lab_refused EXPECTED-TEXT ARGS...: `fabriclab lab -n 4 ARGS` exits 2 naming EXPECTED-TEXT.
lab_refused() {
	local want=$1
	shift
	"$tool" lab -n 4 --dir "$tmp/refused" "$@" >"$tmp/r.out" 2>"$tmp/r.err"
	local rc=$?
	if [ "$rc" -eq 2 ] && grep -qF -- "$want" "$tmp/r.err"; then
		ok "refused: $* ($want)"
	else
		not_ok "refused: $* (exit $rc, wanted 2 and \"$want\"): $(cat "$tmp/r.err")"
	fi
}
