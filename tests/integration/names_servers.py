#!/usr/bin/env python3
"""Names are data on the wire (issue 55 point 1): categories holding
backslashes before `,`, space and `=`, doubled and trailing backslashes,
quotes, commas, spaces, equals signs and non-ASCII are stored exactly,
checked by querying each real server back (all started here on loopback):

1. InfluxDB 1.x through the influxdb sink (line protocol, InfluxDB's rules);
2. VictoriaMetrics through the influxdb sink with dialect victoriametrics
   (its /write reads a doubled backslash as one: with InfluxDB's escapes it
   dropped 5 of 14 names while tasklens counted them delivered);
3. VictoriaMetrics by Prometheus remote write (the prometheus sink: label
   values as exact bytes; it once read `a\\,b` as `a\\` and an invented label);
4. Prometheus 2.42 by remote write, the same.

A name that line protocol cannot hold (a trailing backslash) is refused by
the line-protocol sinks, counted (points_unwritable) and said, never sent
half; remote write carries label values as bytes, so its sink, which
encodes the points itself (issue 60 point 2), stores that name too. `tasklens check`
says when the dialect does not fit the server (VictoriaMetrics answers
without X-Influxdb-Version).

usage: names_servers.py TASKLENS
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import check, finish  # noqa: E402
import prom_harness  # noqa: E402

TL = sys.argv[1]
NAMES = ["plain", "a,b", "a b", "a=b", "a\\b", "a\\,b", "a\\ b", "a\\=b", "a\\\\b", "\\lead",
         "x\\\\,y", "é\\,", 'q"uote', "a\\nb", "comma,space =eq\\"]
WRITABLE = [n for n in NAMES if not n.endswith("\\")]


def write_inputs(tmp):
    d = os.path.join(tmp, "in")
    os.makedirs(d)
    now = int(time.time()) - 120  # recent: Prometheus refuses samples before its head block
    for i, n in enumerate(NAMES):
        s = {"command": "x", "category": n, "exit_status": 0, "exit_type": "normal",
             "start": [now + i, "s"], "end": [now + i + 5, "s"], "wall_time": [5, "s"],
             "cpu_time": [2, "s"], "memory": [100 + i, "MB"], "cores": [1, "cores"]}
        with open(os.path.join(d, "t%02d.summary" % i), "w") as f:
            json.dump(s, f)
    return d


def lines(args, d):
    return subprocess.run([TL, "lines", "--instance", "i1", "--format-in", "rmonitor"] + args + [d],
                          capture_output=True, text=True, timeout=120)


def said_unwritable(r):
    return "cannot be written in line protocol" in r.stderr


def check_says(tmp, url, dialect):
    """`tasklens check` of an influxdb sink at url with that dialect: its output."""
    cfg = os.path.join(tmp, "check-%s.yaml" % dialect)
    with open(cfg, "w") as f:
        f.write("sources:\n  - type: file\n    path: %s\nsinks:\n  - type: influxdb\n    url: %s\n"
                "    db: tl\n    dialect: %s\n    spool_dir: %s\n" % (json.dumps(os.path.join(tmp, "x.log")), url,
                                                                   dialect, json.dumps(os.path.join(tmp, "sp"))))
    r = subprocess.run([TL, "check", "-c", cfg], capture_output=True, text=True, timeout=60)
    return r.stdout + r.stderr


def vm_names(vm, metric):
    vm.flush()
    return sorted(vm.label_values("category", metric, int(time.time()) - 86400 * 2, int(time.time()) + 3600))


def influx1(tmp, d):
    try:
        from influxd_harness import Influxd
    except ImportError:
        print("SKIP InfluxDB 1.x: no harness")
        return
    if not shutil.which("influxd"):
        print("SKIP InfluxDB 1.x: influxd (Debian influxdb) is absent")
        return
    srv = Influxd()
    srv.start()
    try:
        srv.query("CREATE DATABASE tl")
        r = lines(["--influx-url", srv.url, "--influx-db", "tl", "--spool-dir", tmp + "/s0"], d)
        doc = srv.query('SHOW TAG VALUES FROM "task" WITH KEY = "category"', db="tl")
        got = sorted(v[1] for s in doc["results"][0].get("series", []) for v in s["values"])
        check(got == sorted(WRITABLE), "InfluxDB 1.x stores every writable name exactly (%d of %d; %r)"
              % (len(set(got) & set(WRITABLE)), len(WRITABLE), sorted(set(got) ^ set(WRITABLE))[:4]))
        check(said_unwritable(r), "InfluxDB 1.x: the name with a trailing backslash is refused and said")
        out = check_says(tmp, srv.url, "influxdb")
        check("does not say it is InfluxDB" not in out and "not VictoriaMetrics" not in out,
              "check: InfluxDB 1.x with dialect influxdb is not warned about (%s)" % out.strip()[-200:])
        out = check_says(tmp, srv.url, "victoriametrics")
        check("set dialect: influxdb" in out, "check: InfluxDB 1.x with dialect victoriametrics is said")
    finally:
        srv.stop()


def victoriametrics(tmp, d):
    with prom_harness.VictoriaMetrics() as vm:
        out = check_says(tmp, vm.url, "influxdb")
        check("set dialect: victoriametrics" in out, "check: VictoriaMetrics with dialect influxdb is said "
              "(%s)" % out.strip()[-200:])
        out = check_says(tmp, vm.url, "victoriametrics")
        check("does not say it is InfluxDB" not in out and "set dialect" not in out,
              "check: VictoriaMetrics with dialect victoriametrics is not warned about")
        r = lines(["--influx-url", vm.url, "--influx-db", "tl", "--influx-dialect", "victoriametrics",
                   "--spool-dir", tmp + "/s1"], d)
        check(r.returncode == 0 or said_unwritable(r), "lines wrote to VictoriaMetrics' /write (%s)" % r.stderr[-300:])
        got = vm_names(vm, "task_wall_time_s")
        check(got == sorted(WRITABLE), "VictoriaMetrics /write (dialect victoriametrics) stores every writable "
              "name exactly (%d of %d; %r)" % (len(set(got) & set(WRITABLE)), len(WRITABLE),
                                              sorted(set(got) ^ set(WRITABLE))[:4]))
    with prom_harness.VictoriaMetrics() as vm:
        r = lines(["--prom-url", vm.url + "/api/v1/write", "--prom-spool-dir", tmp + "/s2"], d)
        got = vm_names(vm, "task_histogram_count")
        check(got == sorted(NAMES), "VictoriaMetrics by remote write stores every name exactly, the one line "
              "protocol cannot hold too (%d of %d; %r)" % (len(set(got) & set(NAMES)), len(NAMES),
                                                          sorted(set(got) ^ set(NAMES))[:4]))


def prometheus(tmp, d):
    if not prom_harness.available("prometheus"):
        print("SKIP Prometheus: absent")
        return
    with prom_harness.Prometheus() as pr:
        r = lines(["--prom-url", pr.url + "/api/v1/write", "--prom-spool-dir", tmp + "/s3"], d)
        got = []
        for _ in range(20):
            got = sorted(pr.label_values("category", "task_histogram_count", int(time.time()) - 3600,
                                         int(time.time()) + 3600))
            if got:
                break
            time.sleep(0.5)
        check(got == sorted(NAMES), "Prometheus by remote write stores every name exactly, the one line "
              "protocol cannot hold too (%d of %d; %r; %s)" % (len(set(got) & set(NAMES)), len(NAMES),
                                                              sorted(set(got) ^ set(NAMES))[:4], r.stderr[-200:]))


def main():
    if not prom_harness.available("victoria-metrics"):
        print("SKIP: victoria-metrics (Debian) is absent")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        d = write_inputs(tmp)
        influx1(tmp, d)
        victoriametrics(tmp, d)
        prometheus(tmp, d)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
