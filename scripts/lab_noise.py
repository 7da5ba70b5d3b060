#!/usr/bin/env python3
"""Healthy-run noise of the diagnosis: runs `fabriclab lab` N times (mixed sizes, sockets and
`--fabric ib`), and prints per run the findings and the figures the rules compare, then a
summary: runs with a finding, hop rates as a share of the paced rate (both views), and the
margins each rule had (how close a healthy run came to a finding).

Usage: scripts/lab_noise.py [--tool build/fabriclab] [--runs 20] [--dir DIR] [extra lab args]
"""
import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile

SIZES = [4, 6, 8, 12, 16]
FABRICS = ["tcp", "ib"]


def run_lab(tool, ranks, fabric, folder, extra):
    cmd = [tool, "lab", "healthy", "-n", str(ranks), "--fabric", fabric, "--dir", folder] + extra
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode:
        return None, cmd
    run = [os.path.join(folder, d) for d in os.listdir(folder)][0]
    with open(os.path.join(run, "report.json")) as f:
        return json.load(f), cmd


def hop_figures(m):
    """(judged-view rate %, send %, recv %, p50 us, wait share) per hop."""
    rows = []
    for h in m["hops"]:
        line = h["line_rate_gbs"]
        send, recv = h.get("send") or {}, h.get("recv") or {}
        rows.append({
            "hop": "%s->%s" % (h["src_node"], h["dst_node"]),
            "dst": h["dst_node"],
            "pct": h["pct_line_rate"],
            "send": 100 * send.get("wire_gbs", 0) / line if line else 0,
            "recv": 100 * recv.get("wire_gbs", 0) / line if line else 0,
            "share": h["peer_wait_seconds"] / h["active_seconds"] if h["active_seconds"] else 0,
            "p50": (h.get(h.get("wire_view") or "recv") or {}).get("wire_time_us", {}).get("p50", 0),
        })
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", default="build/fabriclab")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--fabrics", default="tcp,ib")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args, extra = ap.parse_known_args()
    extra = [a for a in extra if a != "--"] or ["-s", "6", "-c", "0", "-g", "8M"]
    top = args.dir or tempfile.mkdtemp(prefix="fabriclab-noise.")
    combos = itertools.cycle(itertools.product([int(s) for s in args.sizes.split(",")],
                                               args.fabrics.split(",")))
    with_finding, failed = 0, 0
    pct = {"tcp": {"send": [], "recv": []}, "ib": {"send": [], "recv": []}}
    low_ratio, least_share = [], []
    for k in range(args.runs):
        ranks, fabric = next(combos)
        folder = os.path.join(top, "run%02d-%s%d" % (k, fabric, ranks))
        os.makedirs(folder, exist_ok=True)
        m, cmd = run_lab(args.tool, ranks, fabric, folder, extra)
        if m is None:
            failed += 1
            print("run %2d %-3s n=%-2d FAILED: %s" % (k, fabric, ranks, " ".join(cmd)))
            continue
        rows = hop_figures(m)
        for r in rows:
            pct[fabric]["send"].append(r["send"])
            pct[fabric]["recv"].append(r["recv"])
        low = min(rows, key=lambda r: r["pct"])
        others = [r for r in rows if r is not low]
        low_ratio.append(low["pct"] / statistics.median(r["pct"] for r in others))
        p50 = statistics.median(r["p50"] for r in others) or 1
        stretch = low["p50"] / p50
        shares = sorted(r["share"] for r in rows)
        others = statistics.median(shares[1:]) if len(shares) > 1 else 0
        least_share.append(shares[0] / others if others else 1)
        found = ["%s %s %.2fx" % (f["kind"], f["culprit"], f["ratio"]) for f in m["findings"]]
        with_finding += bool(found)
        print("run %2d %-3s n=%-2d lowest hop %.3fx median (p50 %.2fx), least wait %.2fx others; "
              "send %.1f-%.1f%% recv %.1f-%.1f%%; findings: %s" % (
                  k, fabric, ranks, low_ratio[-1], stretch, least_share[-1],
                  min(r["send"] for r in rows), max(r["send"] for r in rows),
                  min(r["recv"] for r in rows), max(r["recv"] for r in rows),
                  "; ".join(found) or "none"))
    print("\n%d runs, %d with a finding, %d failed (folder %s)" % (args.runs, with_finding,
                                                                   failed, top))
    for fabric, views in pct.items():
        for view, v in views.items():
            v = [x for x in v if x > 0]
            if v:
                print("%-3s %-4s: %.1f%% mean, sd %.1f, %.1f-%.1f%% (%d hops)" % (
                    fabric, view, statistics.mean(v), statistics.pstdev(v), min(v), max(v),
                    len(v)))
    if low_ratio:
        print("lowest hop / median: %.3f-%.3f; least wait share / others: %.2f-%.2f" % (
            min(low_ratio), max(low_ratio), min(least_share), max(least_share)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
