#!/usr/bin/env bash
# How the validation protocol scores a verdict (bench/validate/README.md, run.py classify): the
# figures in docs/benchmarks.md rest on it, so each rule is held here:
#  - healthy: right only with no finding and `none`; not enough evidence is unsure, any finding
#    a false alarm;
#  - a fault the job showed (its all-reduce at least 5% slower than the twin's, 95% interval):
#    only an accepted answer is right, not enough evidence unsure, anything else wrong;
#  - a fault the job did not show: none or not enough evidence is "cannot tell", the culprit
#    still right, another culprit wrong;
#  - two faults: each fault the job showed beside the other must be named, one it did not show
#    may be left out, nothing else named; where neither shows alone, one of them must be named.
# Usage: test_validate_scoring.sh [BUILD_DIR] (the build is not used: the scorer is Python)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
exec python3 - "$root/bench/validate" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import run  # noqa: E402

failures = 0


def check(what, got, want):
    global failures
    if got != want:
        failures += 1
        print("not ok - %s: %s, expected %s" % (what, got, want))
    else:
        print("ok - %s" % what)


shown = (1.40, 1.30, 1.50)      # the job 1.4x slower than its twin, interval 1.3-1.5
unshown = (1.02, 0.98, 1.06)    # within noise of the twin
healthy = {"kind": "healthy", "accept": [[]]}
device = {"kind": "device", "accept": [["device node2/lo"]]}

check("healthy, none", run.classify(healthy, [], "none", None), "right")
check("healthy, not enough evidence", run.classify(healthy, [], "not-enough-evidence", None),
      "unsure")
check("healthy, a finding", run.classify(healthy, ["link node0/lo -> node1/lo"], "link", None),
      "false-alarm")
check("shown, the culprit", run.classify(device, ["device node2/lo"], "device", shown), "right")
check("shown, not enough evidence", run.classify(device, [], "not-enough-evidence", shown),
      "unsure")
check("shown, none", run.classify(device, [], "none", shown), "wrong")
check("shown, its neighbour", run.classify(device, ["device node1/lo"], "device", shown), "wrong")
check("not shown, none", run.classify(device, [], "none", unshown), "cannot-tell")
check("not shown, not enough evidence",
      run.classify(device, [], "not-enough-evidence", unshown), "cannot-tell")
check("not shown, the culprit", run.classify(device, ["device node2/lo"], "device", unshown),
      "right")
check("not shown, another culprit",
      run.classify(device, ["device node1/lo"], "device", unshown), "wrong")

two = {"kind": "two", "accept": [["device node2/lo", "node node5"]],
       "faults": [{"answer": "device node2/lo"}, {"answer": "node node5"}]}
check("two, both shown, both named",
      run.classify(two, ["device node2/lo", "node node5"], "device", shown, [shown, shown]),
      "right")
check("two, both shown, one named",
      run.classify(two, ["device node2/lo"], "device", shown, [shown, shown]), "wrong")
check("two, the straggler hidden, the device named",
      run.classify(two, ["device node2/lo"], "device", shown, [shown, unshown]), "right")
check("two, the straggler hidden, only it named",
      run.classify(two, ["node node5"], "node", shown, [shown, unshown]), "wrong")
check("two, each hides the other, one named",
      run.classify(two, ["node node5"], "node", shown, [unshown, unshown]), "right")
check("two, each hides the other, none",
      run.classify(two, [], "none", shown, [unshown, unshown]), "wrong")
check("two, neither shown, none",
      run.classify(two, [], "none", unshown, [unshown, unshown]), "cannot-tell")
check("two, a third culprit beside them",
      run.classify(two, ["device node2/lo", "link node0/lo -> node1/lo"], "device", shown,
                   [shown, unshown]), "wrong")
sys.exit(1 if failures else 0)
EOF
