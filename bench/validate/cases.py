"""Random lab cases with the answer the diagnosis must give (bench/validate/README.md).

A case is drawn from its seed alone, so a seed names it forever. Seeds below
VALIDATION_BASE are the tuning set: look at them while changing the model.
Seeds from VALIDATION_BASE up are the validation set: run them only to report
a figure, never to decide what to change.
"""
import random

VALIDATION_BASE = 1_000_000

# What a fault may be named as. A fault can only be told from what its hops
# show, so where two explanations predict the same hops either is right
# (`accept`), and a fault too small to cost the job the smallest effect worth
# naming (5 %) may also be answered `none` (decided after the run, from the
# healthy twin: see run.py).
KINDS = ["healthy", "device", "link", "onedir", "straggler", "pause", "latency",
         "rail", "gdr", "two"]
WEIGHTS = [3, 3, 2, 1, 2, 1, 1, 1, 1, 2]

PRESETS = {"ib": ["hdr", "ndr", "xdr"], "roce": ["roce400"]}


def _fabric(r):
    fabric = r.choice(["tcp", "tcp", "roce", "ib"])
    like = None
    if fabric != "tcp" and r.random() < 0.6:
        like = r.choice(PRESETS[fabric])
    return fabric, like


def _nodes(r, rails):
    return r.randint(2, 16 // rails)


def _node(r, n, avoid=()):
    choices = [k for k in range(n) if k not in avoid]
    return r.choice(choices)


def _dev(fabric, rail=0):
    return "lo" if fabric == "tcp" else "mlx5_%d" % rail


def _answer(kind, culprit):
    return "%s %s" % (kind, culprit)


def _ring_nic(nic, node, n, rails):
    """The NIC a ring's hop out of nodeK's NIC enters: the same index, but the
    last node's NIC k sends to node0's NIC k + 1 (the lab's rails form one ring)."""
    return (nic + 1) % rails if node == n - 1 else nic


def _nic_arg(nic, rails):
    """A hardware fault on one NIC with rails (without nic=, every NIC of the node)."""
    return ",nic=%d" % nic if rails > 1 else ""


def _device_answers(fabric, nic, node, n, rails):
    """One device; in a 2-node ring (one rail) either end is the same data."""
    accept = [[_answer("device", "node%d/%s" % (node, _dev(fabric, nic)))]]
    if n == 2 and rails == 1:
        accept.append([_answer("device", "node%d/%s" % ((node + 1) % n, _dev(fabric, nic)))])
    return accept


def _base_args(r, fabric, like, n, rails):
    grads = ["256K", "1M", "2M", "4M", "8M"]
    args = ["-n", str(n), "--steps", str(r.randint(8, 12)), "--grad", r.choice(grads),
            "--compute", str(r.choice([0, 0, 10, 50, 100])), "--fabric", fabric]
    if fabric == "tcp":
        args += ["--link-rate", r.choice(["400mbit", "1gbit"])]
    if like:
        args += ["--like", like, "--channels", str(r.choice([1, 2, 4, 8])),
                 "--proto", r.choice(["simple", "simple", "ll128", "ll"])]
    if rails > 1:
        args += ["--rails", str(rails)]
    return args


def _device_fault(r, fabric, like, n, rails, node):
    """A slow NIC, both ways: by the plugin's throttle, or the emulated NIC's downgrade."""
    rate = r.randint(50, 95)
    nic = r.randrange(rails)
    dev = _dev(fabric, nic)
    if like and r.random() < 0.5:
        spec = "downgrade:node=node%d,nic=%d,rate=%d%%" % (node, nic, rate)
        return ["--hw-fault", spec], rate, dev
    return ["--fault", "throttle:node=node%d,dev=%s,rate=%d%%" % (node, dev, rate)], rate, dev


def case(seed):
    """The case of one seed: its lab arguments, the answers accepted, and its labels."""
    r = random.Random(seed)
    kind = r.choices(KINDS, WEIGHTS)[0]
    fabric, like = _fabric(r)
    if kind in ("rail",) and fabric == "tcp":
        fabric, like = "ib", r.choice([None, "ndr"])
    if kind in ("gdr",) and fabric == "tcp":
        fabric = r.choice(["roce", "ib"])
    if kind in ("pause", "latency") and not like:
        fabric, like = "ib", r.choice(PRESETS["ib"])
    rails = 1
    if fabric != "tcp" and (kind == "rail" or r.random() < 0.15):
        rails = r.choice([2, 4])
    n = _nodes(r, rails)
    if kind == "two" and n < 6:  # two devices of a smaller ring leave no hop untouched
        rails = 1
        n = 6 + r.randrange(11)
    args = _base_args(r, fabric, like, n, rails)
    accept, severity = [], None
    node = _node(r, n)
    nxt = (node + 1) % n
    prv = (node - 1) % n
    if kind == "healthy":
        accept = [[]]
    elif kind == "device":
        extra, severity, dev = _device_fault(r, fabric, like, n, rails, node)
        args += extra
        accept = [[_answer("device", "node%d/%s" % (node, dev))]]
        if n == 2:  # both hops touch both nodes' devices: either end is the same data
            accept.append([_answer("device", "node%d/%s" % (nxt, dev))])
    elif kind in ("link", "onedir"):
        severity = r.randint(50, 95)
        nic = r.randrange(rails)
        dev = _dev(fabric, nic)
        if kind == "link":
            rule = "throttle:node=node%d,peer=node%d,dev=%s,rate=%d%%,dir=tx" % (
                node, nxt, dev, severity)
        else:  # the whole device, one way: in a ring, the one hop out of it
            rule = "throttle:node=node%d,dev=%s,rate=%d%%,dir=tx" % (node, dev, severity)
        args += ["--fault", rule]
        accept = [[_answer("link", "node%d/%s -> node%d/%s" % (
            node, dev, nxt, _dev(fabric, _ring_nic(nic, node, n, rails))))]]
    elif kind == "straggler":
        factor = round(r.uniform(1.5, 3.0), 2)
        severity = factor
        args += ["--fault", "slow:node=node%d,factor=%s" % (node, factor)]
        accept = [[_answer("node", "node%d" % node)]]
    elif kind == "pause":
        pause = r.randint(15, 50)
        severity = pause
        nic = r.randrange(rails)
        args += ["--hw-fault", "pause:node=node%d%s,every=100ms,for=%dms" % (
            node, _nic_arg(nic, rails), pause)]
        accept = _device_answers(fabric, nic, node, n, rails)
    elif kind == "latency":
        add = r.choice([5, 10, 20, 50])
        severity = add
        nic = r.randrange(rails)
        args += ["--hw-fault", "latency:node=node%d%s,add=%dus" % (node, _nic_arg(nic, rails),
                                                                   add)]
        accept = _device_answers(fabric, nic, node, n, rails)
    elif kind == "rail":
        rail = r.randrange(rails)
        severity = r.randint(50, 90)
        args += ["--fault", "throttle:dev=mlx5_%d,rate=%d%%" % (rail, severity)]
        accept = [[_answer("rail", "rail mlx5_%d" % rail)]]
    elif kind == "gdr":
        args += ["--fault", "nogdr:node=node%d" % node]
        accept = [[_answer("gdr", "node%d" % node)]]
    elif kind == "two":
        other = _node(r, n, avoid=(node, nxt, prv))
        sev1, sev2 = r.randint(50, 80), r.randint(50, 80)
        dev = _dev(fabric, 0)
        if r.random() < 0.5:
            rule = "throttle:node=node%d,dev=%s,rate=%d%%;throttle:node=node%d,dev=%s,rate=%d%%" % (
                node, dev, sev1, other, dev, sev2)
            want = [_answer("device", "node%d/%s" % (node, dev)),
                    _answer("device", "node%d/%s" % (other, dev))]
            parts = rule.split(";")
        else:
            factor = round(r.uniform(2.0, 3.0), 2)
            rule = "throttle:node=node%d,dev=%s,rate=%d%%;slow:node=node%d,factor=%s" % (
                node, dev, sev1, other, factor)
            want = [_answer("device", "node%d/%s" % (node, dev)),
                    _answer("node", "node%d" % other)]
            parts = rule.split(";")
        args += ["--fault", rule]
        severity = sev1
        accept = [sorted(want)]
        faults = [{"answer": a, "rule": p} for a, p in zip(want, parts)]
    out = {"seed": seed, "kind": kind, "fabric": fabric, "like": like, "nodes": n,
           "rails": rails, "severity": severity, "args": args,
           "accept": [sorted(a) for a in accept], "single": kind != "two"}
    if kind == "two":
        out["faults"] = faults
    return out


def healthy_twin(c):
    """The same lab settings without the fault: what the job would take once fixed."""
    args, skip = [], False
    for a in c["args"]:
        if skip:
            skip = False
            continue
        if a in ("--fault", "--hw-fault"):
            skip = True
            continue
        args.append(a)
    return args


def without_fault(c, k):
    """Two faults' case with fault k left out: what fixing that one alone would give."""
    other = c["faults"][1 - k]["rule"]
    args, i = [], 0
    while i < len(c["args"]):
        if c["args"][i] == "--fault":
            args += ["--fault", other]
            i += 2
            continue
        args.append(c["args"][i])
        i += 1
    return args


def seeds(which, count, start=0):
    base = VALIDATION_BASE if which == "validation" else 0
    return [base + start + k for k in range(count)]
