#!/usr/bin/env python3
"""Holds connections to the web lab the way a slow-loris client and a crowd of open pages do,
then times the requests its user needs. Loopback only, everything bounded.

  lab_hold.py crowd URL HALF STREAMS
      opens HALF half-open requests (alternately half a header, and full headers with half of
      a declared POST body) and STREAMS event streams (GET /api/events, each read up to its
      first event so it is known to be open), then, with all of them still held, times
      GET /api/status and POST /api/cancel: each must answer within 1 s, the cancel with
      "cancelled". Exits 1 naming what failed.
  lab_hold.py idle URL
      one connection that sends half a header and then nothing: prints how many seconds the
      server took to close it (it must, within 30 s)."""
import json
import socket
import sys
import time
import urllib.parse

LIMIT_S = 1.0


def connect(host, port):
    s = socket.create_connection((host, port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def half_open(host, port, i):
    s = connect(host, port)
    if i % 2:
        s.sendall(b"GET /api/status HTTP/1.1\r\nHost: %s:%d\r\nAcc" % (host.encode(), port))
    else:
        s.sendall(b"POST /api/run HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"nodes\":" % (host.encode(), port))
    return s


def stream(host, port):
    s = connect(host, port)
    s.sendall(b"GET /api/events HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n\r\n"
              % (host.encode(), port))
    got = b""
    while b"\r\n\r\n" not in got or b"retry:" not in got:
        chunk = s.recv(4096)
        if not chunk:
            raise OSError("event stream closed before its first event: %r" % got[:200])
        got += chunk
    if not got.startswith(b"HTTP/1.1 200"):
        raise OSError("event stream refused: %r" % got[:200])
    return s


def request(host, port, method, path, body=None):
    start = time.monotonic()
    s = connect(host, port)
    head = "%s %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n" % (method, path, host, port)
    if body is not None:
        head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
    s.sendall((head + "\r\n" + (body or "")).encode())
    s.settimeout(10)
    got = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
    s.close()
    status = int(got.split(b" ", 2)[1]) if got.startswith(b"HTTP/") else 0
    payload = got.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in got else b""
    return time.monotonic() - start, status, payload.decode(errors="replace")


def still_open(s):
    s.setblocking(False)
    try:
        return s.recv(1, socket.MSG_PEEK) != b""  # data waiting: open
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.setblocking(True)


def crowd(host, port, nhalf, nstreams):
    failures = []
    held = [half_open(host, port, i) for i in range(nhalf)]
    streams = [stream(host, port) for _ in range(nstreams)]
    took, code, body = request(host, port, "GET", "/api/status")
    print("status with %d half-open and %d streams held: %.3f s, %d %s" %
          (nhalf, nstreams, took, code, body))
    if took > LIMIT_S or code != 200 or '"running"' not in body:
        failures.append("status: %.3f s, %d %s" % (took, code, body))
    took, code, body = request(host, port, "POST", "/api/cancel", "{}")
    print("cancel: %.3f s, %d %s" % (took, code, body))
    if took > LIMIT_S or code != 200 or '"cancelled"' not in body:
        failures.append("cancel: %.3f s, %d %s" % (took, code, body))
    open_half = sum(still_open(s) for s in held)
    print("still held at the end: %d of %d half-open, %d streams" %
          (open_half, nhalf, len(streams)))
    if open_half < nhalf:
        failures.append("only %d of %d half-open connections were still held: the test did "
                        "not test what it says" % (open_half, nhalf))
    for s in held + streams:
        s.close()
    for f in failures:
        print("not ok - " + f)
    return 1 if failures else 0


def idle(host, port):
    s = connect(host, port)
    s.sendall(b"GET /api/status HTTP/1.1\r\nHo")
    s.settimeout(30)
    start = time.monotonic()
    try:
        while s.recv(4096):
            pass
    except socket.timeout:
        print("not closed after 30 s")
        return 1
    except OSError:
        pass
    print("closed after %.1f s" % (time.monotonic() - start))
    return 0


def main():
    what, url = sys.argv[1], urllib.parse.urlsplit(sys.argv[2])
    host, port = url.hostname, url.port
    if host not in ("127.0.0.1", "localhost"):
        sys.exit("loopback only")
    if what == "crowd":
        sys.exit(crowd(host, port, int(sys.argv[3]), int(sys.argv[4])))
    sys.exit(idle(host, port))


if __name__ == "__main__":
    main()
