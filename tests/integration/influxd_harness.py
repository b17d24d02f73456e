"""A real InfluxDB 1.x (Debian's influxd) for tests: temp meta/data/wal
dirs, free loopback ports, started and stopped by the test.

    with Influxd() as db:
        db.query("CREATE DATABASE tl")
        db.write("tl", b"m f=1 1\n")
"""
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """A server the test started (self.proc) in its own temp dir (self.dir):
    stop() ends it (SIGTERM, then SIGKILL after stop_timeout s); as a context
    manager it starts, and at the end stops and removes the dir."""
    stop_timeout = 10

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Influxd(ServerProcess):
    def __init__(self, http_extra="", tls=False):
        """tls: serve HTTPS with a self-signed certificate for 127.0.0.1
        (self.ca is its file, for clients that must trust it)."""
        self.dir = tempfile.mkdtemp(prefix="tl-influxd-")
        self.http_port = free_port()
        self.rpc_port = free_port()
        self.url = "%s://127.0.0.1:%d" % ("https" if tls else "http", self.http_port)
        self.proc = None
        self.ca = None
        self.ctx = None
        if tls:
            self.ca = os.path.join(self.dir, "cert.pem")
            key = os.path.join(self.dir, "key.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                            "-keyout", key, "-out", self.ca],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            http_extra += f"""
  https-enabled = true
  https-certificate = "{self.ca}"
  https-private-key = "{key}"
"""
            self.ctx = ssl.create_default_context(cafile=self.ca)
        cfg = f"""
reporting-disabled = true
bind-address = "127.0.0.1:{self.rpc_port}"
[meta]
  dir = "{self.dir}/meta"
[data]
  dir = "{self.dir}/data"
  wal-dir = "{self.dir}/wal"
  query-log-enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:{self.http_port}"
  log-enabled = false
  {http_extra}
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
"""
        self.config = os.path.join(self.dir, "influxd.conf")
        with open(self.config, "w") as f:
            f.write(cfg)

    def start(self, timeout=30):
        self.log = open(os.path.join(self.dir, "influxd.log"), "ab")
        self.proc = subprocess.Popen(["influxd", "-config", self.config],
                                     stdout=self.log, stderr=self.log)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("influxd exited: see " + self.log.name)
            try:
                with urllib.request.urlopen(self.url + "/ping", timeout=1, context=self.ctx) as r:
                    if r.status == 204:
                        return self
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.1)
        raise RuntimeError("influxd did not answer /ping")

    def pause(self):  # SIGSTOP: the port stays open, nothing answers
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        self.proc = None

    def query(self, q, db=None, epoch=None, timeout=30):
        params = {"q": q}
        if db:
            params["db"] = db
        if epoch:
            params["epoch"] = epoch
        data = urllib.parse.urlencode(params).encode()
        with urllib.request.urlopen(self.url + "/query", data=data, timeout=timeout, context=self.ctx) as r:
            doc = json.loads(r.read())
        for res in doc.get("results", []):
            if "error" in res:
                raise RuntimeError(res["error"])
        return doc

    def rows(self, q, db, epoch=None):
        """All rows of all series, as dicts (epoch="ns": times as integers)."""
        out = []
        for res in self.query(q, db, epoch).get("results", []):
            for s in res.get("series", []):
                for v in s["values"]:
                    row = dict(zip(s["columns"], v))
                    row.update(s.get("tags", {}))
                    out.append(row)
        return out

    def write(self, db, body, precision="ns"):
        req = urllib.request.Request(
            self.url + "/write?" + urllib.parse.urlencode({"db": db, "precision": precision}),
            data=body, method="POST")
        with urllib.request.urlopen(req, timeout=60, context=self.ctx) as r:
            return r.status
