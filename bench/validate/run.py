#!/usr/bin/env python3
"""Runs random lab cases and scores the diagnosis (bench/validate/README.md).

    run.py --set tuning|validation --count N [--start K] [--tool build/fabriclab]
           [--out results.jsonl] [--from results.jsonl]

Each case runs `fabriclab lab` with its fault, and a faulty case also its
healthy twin (the same settings, no fault), whose all-reduce time says whether
the job showed the fault at all and gives the speedup that fixing a single
fault measures; two faults at once also run with each left out, which says
whether the job showed each. Prints one line per case and a
table per kind: right, wrong, not enough evidence, false alarms; and how far
the verdict's predicted speedup was from the measured one.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402

MIN_EFFECT = 0.05  # the smallest effect the diagnosis names (plugin/verdict)
SPEEDUP_TOLERANCE = 0.15


def step_times(stdout):
    """The all-reduce time of every step the lab printed (ms)."""
    return [float(m.group(1)) for m in
            re.finditer(r"^\s+\d+\s+[0-9.]+\s+([0-9.]+)\s*$", stdout, re.M)]


def median(v):
    v = sorted(v)
    n = len(v)
    return (v[n // 2] + v[(n - 1) // 2]) / 2.0 if n else None


def effect_interval(fault, healthy, seed):
    """The slowdown fault/healthy (ratio of median all-reduce times) and its 95% bootstrap CI."""
    rng = random.Random(seed)
    ratios = []
    for _ in range(1000):
        a = [rng.choice(fault) for _ in fault]
        b = [rng.choice(healthy) for _ in healthy]
        ratios.append(median(a) / median(b))
    ratios.sort()
    return median(fault) / median(healthy), ratios[25], ratios[974]


def lab(tool, args, where):
    """One lab run: (all-reduce times of its steps, merged report) or (None, why)."""
    cmd = [tool, "lab"] + args + ["--dir", where]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None, "timed out: " + " ".join(cmd)
    steps = step_times(p.stdout)
    reports = [os.path.join(root, f) for root, _, files in os.walk(where) for f in files
               if f == "report.json"]
    if p.returncode != 0 or not steps or not reports:
        return None, "lab failed (%d): %s" % (p.returncode, (p.stderr or p.stdout)[-300:])
    with open(reports[0]) as f:
        return steps, json.load(f)


def shows(effect):
    """Whether a slowdown (ratio, low, high) is at least MIN_EFFECT with 95% confidence."""
    return effect is None or effect[1] >= 1.0 + MIN_EFFECT


def classify_two(c, got, verdict_kind, shown_both, shown):
    """
    Two faults, each held to the rule one fault is: it must be named where the
    job shows it (the job with both is MIN_EFFECT slower than with it alone
    fixed), and may be left out where it does not. Where the job shows the
    two together (against the healthy twin) but neither alone (each hides
    behind the other), one of them must be named. Naming anything but the
    two is wrong.
    """
    want = [f["answer"] for f in c["faults"]]
    must = [a for a, s in zip(want, shown) if s]
    if got and all(g in want for g in got) and all(m in got for m in must):
        return "right"
    if not got and not must and not shown_both:
        return "cannot-tell"
    if verdict_kind == "not-enough-evidence":
        return "unsure"
    return "wrong"


def classify(c, got, verdict_kind, effect, shown_each=None):
    """
    right / wrong / unsure / false-alarm / cannot-tell. A fault must be named
    only where the job shows it: its all-reduce at least MIN_EFFECT slower than
    its healthy twin's with 95% confidence. Where the twin cannot show that,
    none or not-enough-evidence is as right as the culprit (cannot-tell), and
    naming another culprit is still wrong. Two faults: classify_two, where
    the runs with each fault alone fixed were made (shown_each).
    """
    shown = shows(effect)
    if c["kind"] == "two" and shown_each is not None and "faults" in c:
        return classify_two(c, got, verdict_kind, shown, [shows(e) for e in shown_each])
    if c["kind"] == "healthy":
        if not got and verdict_kind == "none":
            return "right"
        return "unsure" if verdict_kind == "not-enough-evidence" else "false-alarm"
    if got in c["accept"]:
        return "right"
    if not got and not shown:
        return "cannot-tell"
    if verdict_kind == "not-enough-evidence":
        return "unsure"
    return "wrong"


def run_case(tool, c, tmp):
    where = os.path.join(tmp, str(c["seed"]))
    t_fault, report = lab(tool, c["args"], where + "-fault")
    if t_fault is None:
        return {"seed": c["seed"], "kind": c["kind"], "error": report}
    t_healthy, effect = None, None
    if c["kind"] != "healthy":
        t_healthy, _ = lab(tool, cases.healthy_twin(c), where + "-healthy")
    if t_healthy:
        effect = effect_interval(t_fault, t_healthy, c["seed"])
    each = None
    if c["kind"] == "two":  # what fixing each fault alone would give
        each = []
        for k in range(2):
            t_one, _ = lab(tool, cases.without_fault(c, k), "%s-without%d" % (where, k))
            each.append(effect_interval(t_fault, t_one, c["seed"]) if t_one else None)
    v = report["verdict"]
    got = sorted("%s %s" % (f["kind"], f["culprit"]) for f in report.get("findings", []))
    measured = effect[0] if effect else None
    return {"seed": c["seed"], "kind": c["kind"], "fabric": c["fabric"], "like": c["like"],
            "nodes": c["nodes"], "rails": c["rails"], "severity": c["severity"],
            "args": c["args"], "accept": c["accept"], "got": got, "verdict": v["kind"],
            "confidence": v.get("confidence"), "runner_up": v.get("runner_up"),
            "predicted_speedup": v.get("speedup"), "measured_speedup": measured,
            "measured_ci": effect[1:] if effect else None, "faults": c.get("faults"),
            "effect_each": each,
            "outcome": classify(c, got, v["kind"], effect, each), "reason": v.get("reason")}


def rejudge(tool, r, kept, quiet):
    """r judged again from its kept reports: the model changes, the runs do not."""
    if "error" in r:
        return r
    runs = os.path.join(kept, "%d-fault" % r["seed"])
    dirs = [os.path.join(root, "reports") for root, subdirs, _ in os.walk(runs)
            if "reports" in subdirs]
    if not dirs:
        return dict(r, outcome="error", error="no reports kept under " + runs)
    env = dict(os.environ)
    if r.get("like") and "FABRICLAB_VERDICT_LINE_ODDS" not in os.environ:
        env["FABRICLAB_VERDICT_LINE_ODDS"] = "0.2"  # as the lab sets it (tools/lab/lab_verdict_prior.c)
    p = subprocess.run([tool, "report", dirs[0], "--json"], capture_output=True, text=True,
                       env=env)
    if p.returncode != 0:
        return dict(r, outcome="error", error=p.stderr[-300:])
    v = json.loads(p.stdout)["verdict"]
    got = sorted("%s %s" % (f["kind"], f["culprit"]) for f in
                 json.loads(p.stdout).get("findings", []))
    now = cases.case(r["seed"])
    if now["args"] == r["args"]:  # the same run: the answers as the generator gives them now
        r = dict(r, accept=now["accept"])
    c = dict(r, kind=r["kind"], accept=r["accept"])
    ci = r.get("measured_ci")
    effect = (r["measured_speedup"], ci[0], ci[1]) if ci else None
    out = dict(r, got=got, verdict=v["kind"], confidence=v.get("confidence"),
               runner_up=v.get("runner_up"), predicted_speedup=v.get("speedup"),
               reason=v.get("reason"),
               outcome=classify(c, got, v["kind"], effect, r.get("effect_each")))
    if not quiet:
        print("%-8d %-9s %-11s %s -> %s (%s, %s)" % (
            r["seed"], r["kind"], out["outcome"], r["accept"], got, v["kind"],
            v.get("confidence")), flush=True)
    return out


def speedup_error(r):
    """Predicted over measured speedup, less 1, for a right verdict naming one culprit."""
    p, m, ci = r.get("predicted_speedup"), r.get("measured_speedup"), r.get("measured_ci")
    if r.get("outcome") != "right" or not r.get("got") or not p or not m or not ci:
        return None
    if ci[0] < 1.0 + MIN_EFFECT:
        return None  # the job did not show the fault: nothing to predict
    if r["kind"] == "two":
        return None  # two culprits' together are not predicted, only each alone
    return p / m - 1.0


def summary(results, label):
    kinds = {}
    for r in results:
        k = kinds.setdefault(r["kind"], {"cases": 0, "right": 0, "cannot-tell": 0, "wrong": 0,
                                         "unsure": 0, "false-alarm": 0, "error": 0})
        k["cases"] += 1
        k[r.get("outcome", "error")] += 1
    keys = ("cases", "right", "cannot-tell", "wrong", "unsure", "false-alarm", "error")
    total = {key: sum(k[key] for k in kinds.values()) for key in keys}
    print("\n%s: %d cases" % (label, total["cases"]))
    print("  %-10s" % "kind" + "".join(" %11s" % key for key in keys))
    for name in sorted(kinds) + ["all"]:
        k = total if name == "all" else kinds[name]
        print("  %-10s" % name + "".join(" %11d" % k[key] for key in keys))
    judged = total["cases"] - total["error"]
    if judged:
        ok = total["right"] + total["cannot-tell"]
        print("  right: %.1f%% of %d (%d named or healthy as expected, %d where the job did not "
              "show the fault); not enough evidence %.1f%%, wrong %.1f%%, false alarms %d" % (
                  100.0 * ok / judged, judged, total["right"], total["cannot-tell"],
                  100.0 * total["unsure"] / judged, 100.0 * total["wrong"] / judged,
                  total["false-alarm"]))
    errors = [e for e in (speedup_error(r) for r in results) if e is not None]
    if errors:
        within = sum(abs(e) <= SPEEDUP_TOLERANCE for e in errors)
        errors.sort(key=abs)
        print("  speedup: %d of %d within %.0f%% of the healthy twin's (median |error| %.1f%%, "
              "worst %+.1f%%)" % (within, len(errors), 100 * SPEEDUP_TOLERANCE,
                                  100 * abs(errors[len(errors) // 2]), 100 * errors[-1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", choices=["tuning", "validation"], default="tuning")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--tool", default="build/fabriclab")
    ap.add_argument("--out", help="append every case's result here (JSON lines); with "
                    "--rejudge, write the results judged again")
    ap.add_argument("--from", dest="source", help="score results saved by --out, run nothing")
    ap.add_argument("--fabrics", help="run only the cases on these fabrics (tcp,roce,ib)")
    ap.add_argument("--quiet", action="store_true", help="only the table")
    ap.add_argument("--keep", help="keep every run's folder (reports) under this folder")
    ap.add_argument("--rejudge", metavar="KEPT",
                    help="with --from: judge again, with --tool's model, the reports kept "
                         "under KEPT by an earlier --keep (the lab is not run again)")
    a = ap.parse_args()
    if a.source:
        with open(a.source) as f:
            results = [json.loads(line) for line in f if line.strip()]
        if a.rejudge:
            results = [rejudge(a.tool, r, a.rejudge, a.quiet) for r in results]
            if a.out:
                with open(a.out, "w") as f:
                    f.writelines(json.dumps(r) + "\n" for r in results)
        summary(results, a.source)
        return 0
    results = []
    with tempfile.TemporaryDirectory(prefix="fabriclab-validate.") as tmp:
        for seed in cases.seeds(a.set, a.count, a.start):
            if a.fabrics and cases.case(seed)["fabric"] not in a.fabrics.split(","):
                continue
            r = run_case(a.tool, cases.case(seed), a.keep or tmp)
            results.append(r)
            if a.out:
                with open(a.out, "a") as f:
                    f.write(json.dumps(r) + "\n")
            if not a.quiet:
                print("%-8d %-9s %-7s %-10s %s -> %s (%s)" % (
                    r["seed"], r["kind"], r.get("outcome", "error"), r.get("fabric", ""),
                    r.get("accept", ""), r.get("got", r.get("error")),
                    r.get("verdict", "")), flush=True)
    summary(results, "%s set, seeds %d..%d" % (a.set, cases.seeds(a.set, 1, a.start)[0],
                                                cases.seeds(a.set, 1, a.start + a.count - 1)[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
