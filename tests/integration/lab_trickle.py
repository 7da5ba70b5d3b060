#!/usr/bin/env python3
"""Slow clients against the web lab, the way issue 49 found it frozen: connections that each send
one more header line every 2 s and never finish their request. Loopback only, bounded in time.

  lab_trickle.py crowd URL N SECONDS [SOURCES]
      N trickling connections (from the loopback addresses in SOURCES, comma-separated, default
      127.0.0.1, taken in turn); each sends a request line, then one header line every 2 s, and is
      reopened on its next turn when the server closes it. While they go on, GET / and
      GET /api/status from 127.0.0.1 every 0.25 s, then POST /api/cancel: each must answer within
      1 s (the cancel 200 "cancelled" when a run is going on, else 409). Prints the slowest of
      each, how many trickling connections were open at the end and how many the server closed.
  lab_trickle.py one URL
      one connection that sends a header line every second and never finishes: prints after how
      many seconds the server closed it (it must, within 30 s, whatever the trickle)."""
import selectors
import socket
import sys
import threading
import time
import urllib.parse

LIMIT_S = 1.0
EVERY_S = 2.0


class Trickler:
    """One connection that never finishes its request; reopened on its turn once closed."""

    def __init__(self, host, port, source, phase):
        self.host, self.port, self.source = host, port, source
        self.due = time.monotonic() + phase
        self.sock = None
        self.lines = 0

    def open(self, sel):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((self.source, 0))
        try:
            s.connect((self.host, self.port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            return False
        self.sock, self.lines = s, 0
        sel.register(s, selectors.EVENT_READ, self)
        return True

    def close(self, sel):
        if self.sock:
            sel.unregister(self.sock)
            self.sock.close()
            self.sock = None

    def turn(self, sel, stats):
        """A header line (the request line first), or a reopen when the server closed it."""
        if not self.sock:
            stats["reopened"] += 1
            self.open(sel)
            return
        if self.lines == 0:
            line = b"GET /api/status HTTP/1.1\r\nHost: %s:%d\r\n" % (self.host.encode(), self.port)
        else:
            line = b"X-Trickle-%d: %d\r\n" % (self.lines, self.lines)
        try:
            self.sock.send(line)
            self.lines += 1
        except (BlockingIOError, InterruptedError):
            pass  # connect still under way: next turn
        except OSError:
            self.close(sel)


def trickle(host, port, n, seconds, sources, stats, stop):
    sel = selectors.DefaultSelector()
    crowd = [Trickler(host, port, sources[i % len(sources)], EVERY_S * i / n) for i in range(n)]
    for t in crowd:
        t.open(sel)
    end = time.monotonic() + seconds
    while time.monotonic() < end and not stop.is_set():
        for key, _ in sel.select(0.02):
            t = key.data
            try:
                if t.sock.recv(4096):
                    continue  # an answer (a 4xx): the close follows
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                pass
            stats["closed"] += 1
            t.close(sel)
        now = time.monotonic()
        for t in crowd:
            if now >= t.due:
                t.due += EVERY_S
                t.turn(sel, stats)
    stats["open"] = sum(t.sock is not None for t in crowd)
    for t in crowd:
        t.close(sel)


def request(host, port, method, path, body=None):
    start = time.monotonic()
    try:
        s = socket.create_connection((host, port), timeout=10)
        head = "%s %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n" % (method, path, host,
                                                                             port)
        if body is not None:
            head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        s.sendall((head + "\r\n" + (body or "")).encode())
        got = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        s.close()
    except OSError as e:
        return time.monotonic() - start, 0, str(e)
    status = int(got.split(b" ", 2)[1]) if got.startswith(b"HTTP/") else 0
    payload = got.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in got else b""
    return time.monotonic() - start, status, payload.decode(errors="replace")


def crowd_test(host, port, n, seconds, sources):
    stats = {"closed": 0, "reopened": 0, "open": 0}
    stop = threading.Event()
    attacker = threading.Thread(target=trickle, args=(host, port, n, seconds, sources, stats,
                                                      stop))
    attacker.start()
    failures, worst = [], {}
    time.sleep(min(2 * EVERY_S, seconds / 2))  # every trickler opened and talking
    end = time.monotonic() + seconds - min(2 * EVERY_S, seconds / 2) - 1
    while time.monotonic() < end:
        for path in ("/", "/api/status"):
            took, code, body = request(host, port, "GET", path)
            worst[path] = max(worst.get(path, (0, 0)), (took, code))
            if took > LIMIT_S or code != 200:
                failures.append("GET %s: %.3f s, %d %s" % (path, took, code, body[:120]))
        time.sleep(0.25)
    took, code, body = request(host, port, "POST", "/api/cancel", "{}")
    print("cancel: %.3f s, %d %s" % (took, code, body))
    if took > LIMIT_S or code not in (200, 409) or (code == 200 and '"cancelled"' not in body):
        failures.append("cancel: %.3f s, %d %s" % (took, code, body))
    stop.set()
    attacker.join()
    for path, (took, code) in sorted(worst.items()):
        print("slowest GET %s with %d trickling: %.3f s (%d)" % (path, n, took, code))
    print("trickling connections open at the end: %d of %d; closed by the server: %d" %
          (stats["open"], n, stats["closed"]))
    for f in failures[:10]:
        print("not ok - " + f)
    return 1 if failures else 0


def one(host, port):
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(b"GET /api/status HTTP/1.1\r\nHost: %s:%d\r\n" % (host.encode(), port))
    start = time.monotonic()
    s.settimeout(1.0)
    k = 0
    while time.monotonic() - start < 30:
        try:
            if not s.recv(4096):
                break
            continue
        except socket.timeout:
            pass
        except OSError:
            break
        try:
            k += 1
            s.sendall(b"X-Trickle-%d: %d\r\n" % (k, k))
        except OSError:
            break
    else:
        print("not closed after 30 s")
        return 1
    print("closed after %.1f s (%d header lines sent)" % (time.monotonic() - start, k))
    return 0


def main():
    what, url = sys.argv[1], urllib.parse.urlsplit(sys.argv[2])
    host, port = url.hostname, url.port
    sources = (sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1").split(",")
    if host != "127.0.0.1" or any(not s.startswith("127.") for s in sources):
        sys.exit("loopback only")
    if what == "crowd":
        sys.exit(crowd_test(host, port, int(sys.argv[3]), float(sys.argv[4]), sources))
    sys.exit(one(host, port))


if __name__ == "__main__":
    main()
