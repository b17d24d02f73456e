#!/usr/bin/env python3
"""The `prometheus` sink (Prometheus remote write) against a real
VictoriaMetrics and a real Prometheus 2.42, both started here on loopback.

- VictoriaMetrics through remote write holds exactly the samples it holds
  through its InfluxDB /write (the influxdb sink): every task_histogram
  series (buckets, count, sum, min, max), workflow gauge and self-metric,
  sample for sample -- the PromQL dashboards read either door. Per-task
  points are not sent (a series per task does not belong there).
- Prometheus 2.42 (--web.enable-remote-write-receiver) holds the same
  histogram sums per bucket over the run; its histogram_quantile reads
  only `le` buckets, so it answers nothing on the vmrange buckets: what it
  lacks, checked here so the README's statement stays true.
- An outage: the store down while `lines` writes: the batches wait in the
  spool (exit 1, said), and the next run delivers them first: nothing lost.
- A spool an earlier tasklens left in line protocol (every network sink
  spooled that before the points had a model of their own) is drained to
  the remote-write store by the prometheus sink: the store then holds what
  an uninterrupted run writes.
- `tasklens check` reaches each store, and says when one is not there; a
  `measurements` entry the pipeline never writes is refused with file:line.
- A refusal (401 from a stand-in) names the URL, never the bearer token.
- Two instances (two managers' logs over the same hours, as two consumers
  of a Kafka group would read them) write histograms that sum, bucket for
  bucket and window for window, to what one process reading both writes.

usage: prom_sink.py TASKLENS REPO_DIR GEN_WQ
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import check, finish  # noqa: E402
import http_fakes  # noqa: E402
import prom_harness  # noqa: E402
from influxd_harness import free_port  # noqa: E402

TASKLENS, REPO, GEN = sys.argv[1:4]
WQ = os.path.join(REPO, "tests", "data", "wq", "demo-cctools-9.9.log")
CHROME = os.path.join(REPO, "tests", "data", "chrome")


def lines(args, env=None):
    return subprocess.run([TASKLENS, "lines", "-q", "--instance", "i1"] + args, capture_output=True, text=True,
                          env=env, timeout=120)


def export(vm, match='{__name__=~"task_histogram_.*|workflow_.*|task_.*"}'):
    """{(name, labels without db): [(t_ms, value)]} as VictoriaMetrics holds them."""
    url = vm.url + "/api/v1/export?" + urllib.parse.urlencode({"match[]": match})
    out = {}
    with urllib.request.urlopen(url, timeout=60) as r:
        for line in r.read().decode().splitlines():
            d = json.loads(line)
            m = {k: v for k, v in d["metric"].items() if k != "db"}
            key = (m.pop("__name__"), tuple(sorted(m.items())))
            out.setdefault(key, []).extend(zip(d["timestamps"], d["values"]))
    return {k: sorted(v) for k, v in out.items()}


def inputs():
    chrome = sorted(os.path.join(CHROME, f) for f in os.listdir(CHROME) if f.endswith(".json"))
    return [WQ] + chrome[:3]


def same_as_write_path(tmp):
    """Remote write and /write give VictoriaMetrics the same samples."""
    with prom_harness.VictoriaMetrics() as a, prom_harness.VictoriaMetrics() as b:
        r1 = lines(["--prom-url", a.url + "/api/v1/write", "--prom-spool-dir", tmp + "/s1"] + inputs())
        r2 = lines(["--influx-url", b.url, "--influx-db", "tl", "--spool-dir", tmp + "/s2"] + inputs())
        a.flush()
        b.flush()
        check(r1.returncode == 0 and r2.returncode == 0, "lines wrote through remote write and /write (%s %s)" % (
            r1.stderr[-200:], r2.stderr[-200:]))
        got = export(a)
        want = {k: v for k, v in export(b).items() if k[0].startswith(("task_histogram_", "workflow_"))}
        hist = [k for k in want if k[0] == "task_histogram_bucket"]
        diff = [k for k in set(got) | set(want) if got.get(k) != want.get(k)]
        check(not diff and len(hist) > 100, "VictoriaMetrics: remote write holds the samples of /write, %d series "
              "(%d of them histogram buckets), sample for sample %s" % (len(want), len(hist), diff[:2]))
        tasks = [k for k in got if k[0].startswith("task_") and not k[0].startswith("task_histogram_")]
        check(not tasks, "no per-task or per-window quantile series through remote write (%d)" % len(tasks))
        return want


def prometheus_holds(tmp, want):
    """Prometheus keeps the buckets; it has no quantile for vmrange."""
    with prom_harness.Prometheus() as p:
        # Prometheus refuses samples older than its head block ("out of bounds"): one log of
        # recent days, written in time order, is what it takes
        r = lines(["--prom-url", p.url + "/api/v1/write", "--prom-spool-dir", tmp + "/s3", WQ])
        check(r.returncode == 0, "lines wrote to Prometheus 2.42 through remote write %s" % r.stderr[-300:])
        want = {k: v for k, v in want.items() if dict(k[1]).get("source") == "wq"}
        ts = [t for v in want.values() for t, _ in v]
        at, span = max(ts) / 1000 + 1, int((max(ts) - min(ts)) / 1000) + 120
        sel = 'task_histogram_bucket{metric="wall_time_s"}'
        got = {(lab.get("category"), lab["vmrange"]): v for lab, v in
               p.query("sum by (category, vmrange) (sum_over_time(%s[%ds]))" % (sel, span), at)}
        exp = {}
        for (name, labels), samples in want.items():
            d = dict(labels)
            if name == "task_histogram_bucket" and d.get("metric") == "wall_time_s":
                k = (d.get("category"), d["vmrange"])
                exp[k] = exp.get(k, 0) + sum(v for _, v in samples)
        check(got == exp and exp, "Prometheus 2.42: the wall-time buckets summed over the run equal what was "
              "written (%d buckets)" % len(exp))
        q = p.query("histogram_quantile(0.95, sum by (category, vmrange) (sum_over_time(%s[%ds])))" % (sel, span), at)
        check(q == [], "Prometheus 2.42: histogram_quantile answers nothing on vmrange buckets (it reads only `le`): "
              "the PromQL dashboards need VictoriaMetrics")


def outage(tmp):
    """The store away: spooled and said; the next run delivers it first."""
    port = free_port()
    url = "http://127.0.0.1:%d/api/v1/write" % port
    spool = tmp + "/s4"
    r = lines(["--prom-url", url, "--prom-spool-dir", spool, "--drain-timeout", "1", WQ])
    check(r.returncode == 1 and "remain in the spool" in r.stderr,
          "store down: lines exits 1 and says the batches remain in the spool: %s" % r.stderr.strip()[-200:])
    with prom_harness.VictoriaMetrics() as vm, prom_harness.VictoriaMetrics() as ref:
        vm.port, vm.url = port, "http://127.0.0.1:%d" % port
        vm.stop()
        vm.start()
        chrome = inputs()[1]
        r = lines(["--prom-url", url, "--prom-spool-dir", spool, chrome])
        vm.flush()
        check(r.returncode == 0, "store back: the next run drains the spool and writes %s" % r.stderr[-200:])
        r = lines(["--prom-url", ref.url + "/api/v1/write", "--prom-spool-dir", tmp + "/s5", WQ, chrome])
        ref.flush()
        got, want = export(vm), export(ref)
        check(got == want and len(want) > 50, "after the outage the store holds what an uninterrupted run "
              "writes: %d series, sample for sample" % len(want))


def checks(tmp):
    with prom_harness.VictoriaMetrics() as vm:
        cfg = os.path.join(tmp, "run.yaml")
        closed = "http://127.0.0.1:%d/api/v1/write" % free_port()
        with open(cfg, "w") as f:
            f.write("sources:\n  - type: file\n    path: %s\nsinks:\n  - type: prometheus\n    url: %s/api/v1/write\n"
                    "    spool_dir: %s/s6\n  - type: prometheus\n    url: %s\n    spool_dir: %s/s7\n" % (
                        WQ, vm.url, tmp, closed, tmp))
        r = subprocess.run([TASKLENS, "check", "-c", cfg], capture_output=True, text=True, timeout=60)
        out = r.stdout + r.stderr
        check("sinks[0] prometheus: reachable, a remote write is accepted" in out,
              "check: the VictoriaMetrics sink is reachable and takes a remote write")
        check("sinks[1] prometheus: not reachable" in out and r.returncode != 0,
              "check: a store that is not there fails, exit %d" % r.returncode)
    # the measurements are the pipeline's: a name it never writes is refused where it is written
    with open(cfg, "w") as f:
        f.write("sources:\n  - type: file\n    path: %s\nsinks:\n  - type: prometheus\n    url: http://x/api/v1/write\n"
                "    measurements: task_histogram,task_advice\n" % WQ)
    r = subprocess.run([TASKLENS, "check", "-c", cfg], capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "run.yaml:5: sinks[0].measurements: 'task_advice' is none of the measurements" in r.stderr,
          "a measurement tasklens never writes is refused with file:line: %s" % r.stderr.strip()[-200:])


def secret_kept(tmp):
    secret = "tl-secret-bearer-7f3a9"
    with http_fakes.Server(answers=[(401, dict)] * 50) as srv:
        env = dict(os.environ, PROM_TOKEN=secret)
        r = lines(["--prom-url", srv.url + "/api/v1/write", "--prom-spool-dir", tmp + "/s8", "--drain-timeout", "1",
                   "--stats", tmp + "/stats.json", WQ], env=env)
        seen = [q["auth"] for q in srv.requests]
        with open(tmp + "/stats.json") as f:
            stats = f.read()
        check(seen and all(a == "Bearer " + secret for a in seen), "the bearer token goes in the Authorization header")
        check(secret not in r.stderr + r.stdout + stats and "401" in r.stderr,
              "a 401 is said (%s) without the token" % r.stderr.strip().splitlines()[-1:])


def instances_sum(tmp):
    """Two instances' histograms sum to one."""
    logs = []
    for seed in (1, 2):
        path = os.path.join(tmp, "wq%d.log" % seed)
        with open(path, "wb") as f:
            subprocess.run([GEN, "3000", "4", str(seed), "200"], stdout=f, check=True)
        logs.append(path)
    with prom_harness.VictoriaMetrics() as vm, prom_harness.VictoriaMetrics() as one:
        for i, log in enumerate(logs):
            r = subprocess.run([TASKLENS, "lines", "-q", "--instance", "consumer%d" % i, "--prom-url",
                                vm.url + "/api/v1/write", "--prom-spool-dir", tmp + "/s9", log],
                               capture_output=True, text=True)
            check(r.returncode == 0, "instance %d wrote its manager's histograms %s" % (i, r.stderr[-200:]))
        r = subprocess.run([TASKLENS, "lines", "-q", "--instance", "alone", "--prom-url", one.url + "/api/v1/write",
                            "--prom-spool-dir", tmp + "/s10"] + logs, capture_output=True, text=True)
        vm.flush()
        one.flush()

        def summed(api):
            out = {}
            for (name, labels), samples in export(api, '{__name__=~"task_histogram_(bucket|count|sum)"}').items():
                d = dict(labels)
                if name == "task_histogram_sum":
                    continue  # float sums: compared below with a tolerance
                key = (name, d.get("category"), d.get("metric"), d.get("vmrange"), d.get("window"))
                for t, v in samples:
                    out[(key, t - t % 60000)] = out.get((key, t - t % 60000), 0) + v
            return out
        two, alone = summed(vm), summed(one)
        check(two == alone and len(alone) > 1000, "two instances' histograms (tags instance=consumer0/1) sum, "
              "bucket for bucket and window for window, to one process's: %d (bucket, window) counts" % len(alone))


def legacy_spool(tmp):
    """Line-protocol frames in the spool (written here by the influxdb sink, whose frames are what every
    network sink spooled before the point model) are sent as remote write."""
    port = free_port()
    spool = tmp + "/s-legacy"
    r = lines(["--influx-url", "http://127.0.0.1:%d" % port, "--influx-db", "tl", "--spool-dir", spool,
               "--drain-timeout", "1", WQ])
    check(r.returncode == 1 and "remain in the spool" in r.stderr,
          "a line-protocol spool is left behind: %s" % r.stderr.strip()[-200:])
    with prom_harness.VictoriaMetrics() as vm, prom_harness.VictoriaMetrics() as ref:
        chrome = inputs()[1]
        r = lines(["--prom-url", vm.url + "/api/v1/write", "--prom-spool-dir", spool, chrome])
        vm.flush()
        check(r.returncode == 0, "the prometheus sink drains the line-protocol spool %s" % r.stderr[-200:])
        r = lines(["--prom-url", ref.url + "/api/v1/write", "--prom-spool-dir", tmp + "/s-ref", WQ, chrome])
        ref.flush()
        got, want = export(vm), export(ref)
        hist = [k for k in want if k[0] == "task_histogram_bucket" and dict(k[1]).get("source") == "wq"]
        check(got == want and hist, "the spool's line protocol reaches the store as remote write: what an "
              "uninterrupted run writes, %d series (%d Work Queue histogram buckets), sample for sample" % (
                  len(want), len(hist)))


def main():
    if not prom_harness.available("victoria-metrics"):
        print("SKIP prom_sink: victoria-metrics is not installed (scripts/install-deps.sh)")
        return
    tmp = tempfile.mkdtemp(prefix="tl-prom-")
    want = same_as_write_path(tmp)
    if prom_harness.available("prometheus"):
        prometheus_holds(tmp, want)
    else:
        print("SKIP Prometheus checks: prometheus is not installed (scripts/install-deps.sh)")
    outage(tmp)
    legacy_spool(tmp)
    checks(tmp)
    secret_kept(tmp)
    instances_sum(tmp)


if __name__ == "__main__":
    main()
    sys.exit(finish())
