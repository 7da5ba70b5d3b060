#!/usr/bin/env python3
"""What the tap plugin (tests/inner/tap_net.c) saw, as facts a test can hold the shim to.

Usage: tap_facts.py DIR EXPR -- reads DIR/tap.* (one file per rank) and exits 0 when the Python
expression EXPR is true over the facts below, else prints the facts it names and exits 1.

  profiler      set of init's "a profiler callback was passed" (1/0)
  sent          sizes of every send posted (a list)
  max_send      the largest
  sends_per_rank set of the number of sends each rank posted
  recv_sizes    set of the sizes every receive posted, buffer by buffer
  recv_parts    set of the buffers per irecv
  recv_got      sizes the receives' tests wrote, buffer by buffer (a list)
  hints         set of "irecv began with NCCL's optional-completion hint" (1/0)
  handles       every isend and every irecv buffer came with a profiler handle
  send_depth    the most sends in flight on one send comm
  recv_depth    the most receives in flight on one receive comm
  tag_depth     set of the most sends in flight per (send comm, tag)
  tags          set of the tags sent with
  flushes       iflush calls
  received_bytes_steps  receives whose test wrote more than 0 bytes in all
  force_flush   set of the forceFlush getProperties handed on (v9+ taps)
"""
import glob
import sys


def facts(folder):
    f = dict(profiler=set(), sent=[], sends_per_rank=set(), recv_sizes=set(), recv_parts=set(),
             recv_got=[], hints=set(), handles=True, send_depth=0, recv_depth=0, tag_depth={},
             tags=set(), flushes=0, received_bytes_steps=0, force_flush=set())
    for path in sorted(glob.glob(folder + "/tap.*")):
        live, depth, sends = {}, {}, 0
        for line in open(path):
            w = line.split()
            if w[0] == "init":
                f["profiler"].add(int(w[1].split("=")[1]))
            elif w[0] == "isend" and w[2] not in ("(nil)", "0"):
                size, tag, ph = int(w[3]), int(w[4]), int(w[5])
                f["sent"].append(size)
                f["tags"].add(tag)
                f["handles"] &= ph == 1
                sends += 1
                live[w[2]] = ("send", w[1], tag, 1)
                for key in (("send", w[1]), ("tag", w[1], tag)):
                    depth[key] = depth.get(key, 0) + 1
                    track(f, key, depth[key])
            elif w[0] == "irecv" and w[2] not in ("(nil)", "0"):
                n = int(w[3])
                f["recv_parts"].add(n)
                f["recv_sizes"].update(int(s) for s in w[4].split(","))
                f["handles"] &= w[6] == "1"
                f["hints"].add(int(w[7]))
                live[w[2]] = ("recv", w[1], None, n)
                depth["recv", w[1]] = depth.get(("recv", w[1]), 0) + 1
                track(f, ("recv", w[1]), depth["recv", w[1]])
            elif w[0] == "done" and w[1] in live:
                kind, comm, tag, n = live.pop(w[1])
                depth[kind, comm] -= 1
                if kind == "send":
                    depth["tag", comm, tag] -= 1
                elif w[2] != "-":
                    got = [int(s) for s in w[2].split(",")[:n]]
                    f["recv_got"].extend(got)
                    f["received_bytes_steps"] += sum(got) > 0
            elif w[0] == "iflush":
                f["flushes"] += 1
            elif w[0] == "props":
                f["force_flush"].add(int(w[1]))
        f["sends_per_rank"].add(sends)
    f["max_send"] = max(f["sent"], default=0)
    f["tag_depth"] = set(f["tag_depth"].values())
    return f


def track(f, key, value):
    """Keeps the most in flight: per send comm, per receive comm, per (send comm, tag)."""
    if key[0] == "tag":
        f["tag_depth"][key] = max(f["tag_depth"].get(key, 0), value)
    else:
        name = key[0] + "_depth"
        f[name] = max(f[name], value)


def main():
    folder, expr = sys.argv[1], sys.argv[2]
    f = facts(folder)
    if eval(expr, {}, f):
        return 0
    named = {k: v for k, v in f.items() if k in expr}
    for k, v in sorted(named.items()):
        if isinstance(v, list):
            v = "%d values, distinct %s" % (len(v), sorted(set(v))[:12])
        print("%s=%s" % (k, v), end="; ")
    print()
    return 1


if __name__ == "__main__":
    sys.exit(main())
