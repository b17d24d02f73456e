"""A real VictoriaMetrics (Debian's victoria-metrics) and a real Prometheus
(Debian's prometheus, as a remote-write receiver) for tests: temp data dirs,
free loopback ports, started and stopped by the test.

    with VictoriaMetrics() as vm:
        vm.write_lp(b"m,a=b f=1 1000000000\\n")   # InfluxDB line protocol at /write
        vm.query("sum(m_f)", at=2)               # PromQL, instant
        vm.query_range("m_f", 0, 60, 15)         # PromQL, range

    with Prometheus() as prom:                   # --web.enable-remote-write-receiver
        prom.query(...)

Both keep data for 100 years (the samples are from years past) and answer
for the newest samples at once (VictoriaMetrics' latency offset 0).
available(): whether the binaries are installed (tests SKIP and say so).
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from influxd_harness import ServerProcess, free_port


def available(binary):
    return shutil.which(binary) is not None


class PromAPI(ServerProcess):
    """The Prometheus HTTP API both servers answer."""

    def get(self, path, params):
        url = self.url + path + "?" + urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(url, timeout=120) as r:
                doc = json.load(r)
        except urllib.error.HTTPError as e:
            raise RuntimeError("HTTP %d: %s" % (e.code, e.read().decode(errors="replace")[:300])) from None
        if doc.get("status") != "success":
            raise RuntimeError("query failed: %s" % doc)
        return doc["data"]

    def query(self, q, at):
        """[(labels, value)] of an instant query at time `at` (s)."""
        data = self.get("/api/v1/query", {"query": q, "time": "%.3f" % at})
        return [(r["metric"], float(r["value"][1])) for r in data["result"]]

    def query_range(self, q, start, end, step):
        """[(labels, [(t, value)])] of a range query (times in s)."""
        data = self.get("/api/v1/query_range", {"query": q, "start": "%.3f" % start, "end": "%.3f" % end,
                                                "step": "%gs" % step})
        return [(r["metric"], [(float(t), float(v)) for t, v in r["values"]]) for r in data["result"]]

    def label_values(self, label, match, start, end):
        return self.get("/api/v1/label/%s/values" % label, {"match[]": match, "start": start, "end": end})

    def wait_ready(self, path, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited: see %s" % (self.name, self.log.name))
            try:
                with urllib.request.urlopen(self.url + path, timeout=1) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("%s did not start: see %s" % (self.name, self.log.name))


class VictoriaMetrics(PromAPI):
    name = "victoria-metrics"

    def __init__(self, extra=()):
        self.dir = tempfile.mkdtemp(prefix="tl-vm-")
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.proc = None
        self.extra = list(extra)

    def start(self, timeout=30):
        self.log = open(os.path.join(self.dir, "vm.log"), "ab")
        self.proc = subprocess.Popen(
            ["victoria-metrics", "-storageDataPath=" + os.path.join(self.dir, "data"),
             "-httpListenAddr=127.0.0.1:%d" % self.port, "-retentionPeriod=100y",
             "-search.latencyOffset=0s", "-loggerLevel=ERROR", "-search.disableCache"] + self.extra,
            stdout=self.log, stderr=self.log)
        return self.wait_ready("/health", timeout)

    def write_lp(self, body, db="tl"):
        req = urllib.request.Request(self.url + "/write?db=" + db, data=body, method="POST")
        with urllib.request.urlopen(req, timeout=120) as r:
            assert r.status in (200, 204), r.status
        self.flush()

    def flush(self):
        """Makes what was written searchable now (else within a second)."""
        with urllib.request.urlopen(self.url + "/internal/force_flush", timeout=30):
            pass


class Prometheus(PromAPI):
    name = "prometheus"
    stop_timeout = 20

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="tl-prom-")
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.proc = None
        self.config = os.path.join(self.dir, "prometheus.yml")
        with open(self.config, "w") as f:
            f.write("global:\n  scrape_interval: 1h\nscrape_configs: []\n")

    def start(self, timeout=60):
        self.log = open(os.path.join(self.dir, "prometheus.log"), "ab")
        self.proc = subprocess.Popen(
            ["prometheus", "--config.file=" + self.config, "--storage.tsdb.path=" + os.path.join(self.dir, "data"),
             "--web.listen-address=127.0.0.1:%d" % self.port, "--web.enable-remote-write-receiver",
             "--storage.tsdb.retention.time=100y", "--log.level=error"],
            stdout=self.log, stderr=self.log)
        return self.wait_ready("/-/ready", timeout)
