#!/usr/bin/env python3
"""Drives the web lab's page in headless Chromium through chromedriver (W3C WebDriver over
HTTP, no client library): picks 4 nodes, halve-cable on node2, presses run, waits for the
verdict, checks the live chart grew point by point and the verdict names node2, and saves a
screenshot. Usage: lab_browser.py LAB_URL SCREENSHOT_PNG"""
import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port
        self.session = None

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read() or b"{}").get("value")

    def start(self, profile):
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--user-data-dir=" + profile]
        caps = {"browserName": "chrome",
                "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}}
        self.session = self.call("POST", "/session",
                                 {"capabilities": {"alwaysMatch": caps}})["sessionId"]

    def s(self, path):
        return "/session/%s%s" % (self.session, path)

    def js(self, script, *args):
        return self.call("POST", self.s("/execute/sync"), {"script": script, "args": list(args)})

    def click(self, css):
        el = self.call("POST", self.s("/element"), {"using": "css selector", "value": css})
        if not isinstance(el, dict) or ELEMENT not in el:
            sys.exit("no element %s on the page: %r" % (css, el))
        self.call("POST", self.s("/element/%s/click" % el[ELEMENT]), {})


def wait_for(what, check, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.3)
    sys.exit("timed out waiting for " + what)


def ready(d):
    try:
        return d.call("GET", "/status")["ready"]
    except OSError:  # not listening yet
        return False


def main():
    url, shot = sys.argv[1], sys.argv[2]
    port = free_port()
    log = open(shot + ".chromedriver.log", "w")
    cd = subprocess.Popen(["chromedriver", "--port=%d" % port], stdout=log, stderr=log)
    d = Driver(port)
    try:
        wait_for("chromedriver", lambda: ready(d), 30)
        with tempfile.TemporaryDirectory() as profile:
            d.start(profile)
            d.call("POST", d.s("/url"), {"url": url})
            wait_for("the page", lambda: d.js("return document.readyState;") == "complete" and
                     d.js("return document.title;") == "fabriclab lab", 30)
            d.js("""const set = (id, v) => { const e = document.getElementById(id);
                    e.value = v; e.dispatchEvent(new Event('change')); };
                    set('fabric', 'tcp'); set('nodes', '4'); set('scenario', 'halve-cable');
                    set('target', '2');""")
            d.click("#run")
            counts = []
            verdict = wait_for("the verdict", lambda: (
                counts.append(d.js("return document.querySelectorAll('circle.step').length;"))
                or d.js("return document.getElementById('verdict').textContent;")), 180)
            points = d.js("return document.querySelectorAll('circle.step').length;")
            seen = sorted(set(counts))
            png = base64.b64decode(d.call("GET", d.s("/screenshot")))
            with open(shot, "wb") as f:
                f.write(png)
            d.call("DELETE", d.s(""))
    finally:
        cd.terminate()
        cd.wait()
    print("points seen while running:", seen, "final:", points, "verdict:", verdict)
    if points < 6 or len([c for c in seen if 0 < c < points]) < 1:
        sys.exit("the chart did not grow step by step: counts seen %s, final %d" % (seen, points))
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("the screenshot is not a PNG")
    # halve-cable on node2: its device, or (on a loaded machine) one of its hops
    if not (verdict.startswith(("verdict: device", "verdict: link")) and "node2" in verdict):
        if not verdict.startswith("verdict: ") or os.environ.get("FABRICLAB_SANITIZER") != "tsan":
            sys.exit("verdict on the page: %r, expected device or link naming node2" % verdict)
        # Every rank runs ~10x slower under TSan: the rates measure the sanitizer, as in test_lab.
        print("skipped: the page ran and showed %r; under TSan the verdict's target is not "
              "judged" % verdict)
        sys.exit(77)


if __name__ == "__main__":
    main()
