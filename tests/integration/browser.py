"""A real headless Chromium (Debian's `chromium`), driven over its DevTools
protocol (python3-websocket), for tests of what a person looks at: open a
page, collect every console error, exception and network request, evaluate
JavaScript in it, take a screenshot. Started on loopback with a private
profile; stopped by the test (a context manager)."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time

import websocket

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium():
    for c in CANDIDATES:
        p = shutil.which(c)
        if p:
            return p
    return None


class Chromium:
    def __init__(self, width=1300, height=900):
        self.width, self.height = width, height
        self.events = []
        self._id = 0

    def __enter__(self):
        exe = find_chromium()
        if not exe:
            raise RuntimeError("chromium is not installed")
        self.profile = tempfile.mkdtemp(prefix="tl-chromium-")
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-background-networking", "--hide-scrollbars",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             "--remote-allow-origins=*", "--user-data-dir=" + self.profile,
             "--window-size=%d,%d" % (self.width, self.height), "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while time.time() < deadline and not os.path.exists(port_file):
            time.sleep(0.05)
        time.sleep(0.1)
        with open(port_file) as f:
            port, path = f.read().split("\n")[:2]
        self.ws = websocket.create_connection("ws://127.0.0.1:%s%s" % (port, path), timeout=60)
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1,
                   "mobile": False}, session=True)
        return self

    def __exit__(self, *exc):
        try:
            self.ws.close()
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method, params=None, session=False):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def _wait_event(self, name, timeout):
        deadline = time.time() + timeout
        seen = len(self.events)
        while time.time() < deadline:
            for m in self.events[seen:]:
                if m.get("method") == name:
                    return True
            seen = len(self.events)
            self.ws.settimeout(max(0.1, deadline - time.time()))
            try:
                self.events.append(json.loads(self.ws.recv()))
            except websocket.WebSocketTimeoutException:
                break
        return False

    def open(self, path, timeout=60):
        """Loads a file; returns the seconds until its load event and the
        first frame after it (what a person waits for)."""
        self.events = []
        t = time.time()
        self.call("Page.navigate", {"url": "file://" + os.path.abspath(path)}, session=True)
        if not self._wait_event("Page.loadEventFired", timeout):
            raise RuntimeError("%s did not load in %d s" % (path, timeout))
        self.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))",
                  wait=True)
        return time.time() - t

    def eval(self, expr, wait=False):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": wait}, session=True)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate failed: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def problems(self):
        """Console errors, uncaught exceptions, error log entries."""
        out = []
        for m in self.events:
            p = m.get("params", {})
            if m.get("method") == "Runtime.exceptionThrown":
                out.append("exception: %s" % p.get("exceptionDetails", {}).get("text"))
            elif m.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], p.get("args")))
            elif m.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: %s" % p["entry"].get("text"))
        return out

    def requests(self):
        """URLs the page asked for (the page itself included)."""
        return [m["params"]["request"]["url"] for m in self.events
                if m.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path, full=True, max_height=16000):
        params = {"format": "png", "captureBeyondViewport": full}
        if full:
            w, h = self.eval("[document.documentElement.scrollWidth, "
                             "document.documentElement.scrollHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": w, "height": min(h, max_height), "scale": 1}
        data = self.call("Page.captureScreenshot", params, session=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB/RGBA PNG."""
    import struct
    import zlib
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "only 8-bit RGB(A)"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        cur = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                cur[i] = (cur[i] + a) & 255
            elif ft == 2:
                cur[i] = (cur[i] + b) & 255
            elif ft == 3:
                cur[i] = (cur[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(cur[i:i + 3]) for i in range(0, stride, bpp)])
        prev = cur
    return w, h, rows
