#!/usr/bin/env python3
"""Instructions per request a net plugin's own code costs, from callgrind profiles.

Usage: callgrind_cost.py LABEL CALLGRIND.OUT... (one file per rank process of one run)

Counts, over every thread of the rank processes (the report thread included):
  wrap   the wrap layer's own instructions: fl_wrap_{isend,irecv,test,iflush} inclusive, less
         what they spend in the transport beneath them (sock_*, ext_*, ib_*) and in another
         net plugin they call themselves (ext's direct path: any libnccl-net-*.so but
         fabriclab's), so counting, tracepoint checks, the pool and the clock reads (the TSC,
         inline) are in, the transport's work is not;
  drains the readers of the interval rings wherever they run (the report thread's drains, the
         final report's, a closing connection's): fl_union_take, fl_union_settle,
         fl_stats_oldest_post inclusive; they come as the rings fill, so per request they cost
         the same at any speed;
  timed  the rest of the report thread (live windows, snapshots): per second, not per request;
         under callgrind a run is ~50x slower, so per request it reads ~50x too high, and it is
         left out of `all in`;
  ext    the ext transport's own instructions on the data path: the fl_ext_*/ext_* functions
         called at least once per 100 requests, each by itself plus what it calls in
         fabriclab that is not ext (the inner plugin's instructions are not in, nor counted
         twice through ext's own calls, such as ext_isend -> ext_inner_isend); ext's setup
         (load, init, connect, accept), done once per run, is printed apart as `ext setup`;
per request posted (calls of fl_wrap_isend + fl_wrap_irecv, or of the inner plugin's isend/irecv
when it is loaded directly: then only its own code is counted, every function of the objects
the shim's isend/irecv call into, by itself, beside what fabriclab adds), and the tests per
request (NCCL polls test until done: each poll through the wrap costs its not-done path too,
which is in `wrap`).
Instruction counts do not depend on the machine's load; the number of polls per request does.
"""
import collections
import re
import sys


def parse(path):
    """self Ir per function, inclusive Ir per call edge, calls per callee, object per function."""
    names, selfc, edges, calls, obj = {}, collections.Counter(), collections.Counter(), \
        collections.Counter(), {}
    ecalls = collections.Counter()
    objs, cur_ob = {}, None
    fn = cfn = None
    pending_call = 0
    id_re = re.compile(r"\((\d+)\)(?: (.*))?")

    def name_of(spec, table):
        m = id_re.match(spec)
        if not m:
            return spec
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), spec)

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                ir = int(parts[1]) if len(parts) > 1 else 0
                if pending_call:
                    edges[fn, cfn] += ir
                    pending_call = 0
                else:
                    selfc[fn] += ir
                continue
            key, _, val = line.partition("=")
            if key == "ob":
                cur_ob = name_of(val, objs)
            elif key == "fn":
                fn = name_of(val, names)
                obj.setdefault(fn, cur_ob)
            elif key == "cob":
                name_of(val, objs)
            elif key == "cfn":
                cfn = name_of(val, names)
            elif key == "calls":
                calls[cfn] += int(val.split()[0])
                ecalls[fn, cfn] += int(val.split()[0])
                pending_call = 1
    parse.ecalls = ecalls
    return selfc, edges, calls, obj


def inclusive(fn, selfc, edges):
    return selfc[fn] + sum(v for (a, b), v in edges.items() if a == fn and b != fn)


WRAP = ("fl_wrap_isend", "fl_wrap_irecv", "fl_wrap_test", "fl_wrap_iflush")
READERS = ("fl_union_take", "fl_union_settle", "fl_stats_oldest_post")
# fl_wrap_test's path when the transport says not done: 48 instructions (callgrind
# --dump-instr=yes, 2026-12-03), 38 on the direct path (struct fl_direct: the request done is
# finished by finish_whole; listing of 2026-12-06); "wrap@1" takes the polls beyond one per
# request off, so that runs that polled more or less (timing) compare.
NOT_DONE_TEST, NOT_DONE_TEST_DIRECT = 48, 38


def own(fns, selfc, edges, outside):
    """Inclusive Ir of fns less their calls into functions for which outside(name) holds."""
    total = 0
    for f in fns:
        total += inclusive(f, selfc, edges)
        total -= sum(v for (a, b), v in edges.items() if a == f and outside(b))
    return total


EXT_PREFIXES = ("ext_", "fl_ext_")


def ext_own(fns, selfc, edges, fab):
    """Self Ir of fns, plus their calls into fabriclab's non-ext functions."""
    total = 0
    for f in fns:
        total += selfc[f]
        total += sum(v for (a, b), v in edges.items()
                     if a == f and b in fab and not b.startswith(EXT_PREFIXES))
    return total


def main():
    label, paths = sys.argv[1], sys.argv[2:]
    wrap = report = drains = ext = ext_setup = reqs = tests = direct_reqs = direct_own = 0
    direct_done = 0  # requests finished on the direct path (finish_whole)
    for p in paths:
        selfc, edges, calls, obj = parse(p)
        home = obj.get("fl_wrap_test")  # fabriclab's object, whatever its file is called
        fab = {f for f, o in obj.items() if home and o == home}
        wrapped = calls["fl_wrap_isend"] + calls["fl_wrap_irecv"]
        if wrapped:
            reqs += wrapped
            tests += calls["fl_wrap_test"]
            whole = sum(v for f, v in calls.items() if f.startswith("finish_whole"))
            direct_done += whole
            # the transport beneath: what c->tp points at (socket, ext, ib), or the plugin
            # behind ext called directly (struct fl_direct)
            inner = {o for o in set(obj.values()) if o and o != home
                     and o.rsplit("/", 1)[-1].startswith("libnccl-net")}
            tp = lambda b: b.startswith(("sock_", "ext_", "ib_")) or obj.get(b) in inner
            wrap += own(WRAP, selfc, edges, tp)
            ext_fns = [f for f in fab if f.startswith(EXT_PREFIXES)]
            per_request = [f for f in ext_fns if calls[f] * 100 >= wrapped]
            ext += ext_own(per_request, selfc, edges, fab)
            ext_setup += ext_own([f for f in ext_fns if f not in per_request], selfc, edges, fab)
        else:
            # the plugin loaded directly: NCCL's (the shim's) calls into its table
            posts = [f for f in calls if re.search(r"i(send|recv)(_v\d+)?$", f, re.I)
                     and not f.startswith(("fl_", "shim_"))]
            n = max((calls[f] for f in posts if "send" in f.lower()), default=0) + \
                max((calls[f] for f in posts if "recv" in f.lower()), default=0)
            reqs += n
            direct_reqs += n
            # its own code: every function, by itself, of the objects the shim's posts call into
            objs = {obj.get(b) for (a, b) in edges if a in posts and obj.get(b) != obj.get(a)}
            direct_own += sum(v for f, v in selfc.items() if obj.get(f) in objs - {None})
        report += inclusive("report_main", selfc, edges) - inclusive("fl_hops_drain", selfc, edges)
        drains += sum(inclusive(f, selfc, edges) for f in READERS)
    if not reqs:
        sys.exit("%s: no requests found in %s" % (label, " ".join(paths)))
    if direct_reqs == reqs:
        print("  %-20s %6d req  loaded directly: its own code %5.1f instructions/request (by "
              "itself; libc and the kernel not in)" % (label, reqs, direct_own / reqs))
        return
    poll = NOT_DONE_TEST_DIRECT if direct_done * 2 > reqs else NOT_DONE_TEST
    w1 = wrap / reqs - max(tests / reqs - 1, 0) * poll if tests else 0
    print("  %-20s %6d req %4.1f tests/req  wrap %5.1f (wrap@1 %5.1f)  drains %5.1f  ext %5.1f  "
          "all in %6.1f (@1 %6.1f) instructions/request  (timed %5.1f%s)"
          % (label, reqs, tests / reqs, wrap / reqs, w1, drains / reqs, ext / reqs,
             (wrap + drains + ext) / reqs, w1 + (drains + ext) / reqs, report / reqs,
             ", ext setup %.0f in all" % ext_setup if ext_setup else ""))


if __name__ == "__main__":
    main()
