#!/usr/bin/env python3
"""Runs of the web lab cancelled right after their start (issue 49). Loopback only, bounded.

  lab_cancel_pairs.py URL PAIRS NODES [SPREAD_S]
      PAIRS times: POST /api/run (NODES nodes over tcp), then POST /api/cancel on a connection
      opened beforehand, sent the moment the run's 202 is in (every other pair), or after a delay
      spread evenly over SPREAD_S (default 0.1 s: the lab forking its ranks). Each cancel must
      answer 200 "cancelled" within 4.5 s: the spawner's SIGKILL of a rank deaf to the stop comes
      after 5 s and the server's of a deaf lab after 6. Each run must be taken (never 409). Stops
      at the first failure. Prints the pairs done, the slowest cancel and a histogram."""
import socket
import sys
import time
import urllib.parse

CANCEL_LIMIT_S = 4.5  # below the 5 s after which the spawner kills a rank deaf to the stop


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=15)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def post(s, port, path, body=""):
    """One POST on an open connection (closed by the server after the answer)."""
    s.sendall(("POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n"
               "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" %
               (path, port, len(body), body)).encode())
    got = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
    s.close()
    status = int(got.split(b" ", 2)[1]) if got.startswith(b"HTTP/") else 0
    return status, got.split(b"\r\n\r\n", 1)[-1].decode(errors="replace")


def main():
    url = urllib.parse.urlsplit(sys.argv[1])
    if url.hostname != "127.0.0.1":
        sys.exit("loopback only")
    port, pairs, nodes = url.port, int(sys.argv[2]), int(sys.argv[3])
    spread = float(sys.argv[4]) if len(sys.argv) > 4 else 0.1
    body = '{"fabric":"tcp","nodes":%d,"steps":500}' % nodes
    slowest, times = 0.0, {}
    for i in range(pairs):
        run, cancel = connect(port), connect(port)
        code, text = post(run, port, "/api/run", body)
        if code != 202:
            cancel.close()
            print("not ok - pair %d: the run was refused: %d %s" % (i + 1, code, text))
            return 1
        delay = 0.0 if i % 2 == 0 else spread * (i // 2 % 10) / 10
        time.sleep(delay)
        start = time.monotonic()
        code, text = post(cancel, port, "/api/cancel")
        took = time.monotonic() - start
        slowest = max(slowest, took)
        key = "<0.5 s" if took < 0.5 else "%d s" % int(took) if took >= 1 else "<1 s"
        times[key] = times.get(key, 0) + 1
        if code != 200 or '"cancelled"' not in text or took > CANCEL_LIMIT_S:
            print("not ok - pair %d (cancel %.3f s after the start): %d after %.3f s: %s" %
                  (i + 1, delay, code, took, text))
            return 1
    print("%d pairs: every cancel 200 cancelled, the slowest in %.3f s; %s" %
          (pairs, slowest, ", ".join("%s: %d" % kv for kv in sorted(times.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
