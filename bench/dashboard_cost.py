#!/usr/bin/env python3
"""What the range-true quantile panels cost the server: one day of 100
finished tasks per second (8.64 M `task` points) in a real InfluxDB 1.6 and
a real InfluxDB 2.7, and the query time of each panel that computes
quantiles from the raw points, as Grafana sends it (the shipped dashboards'
own queries, All selected), over the whole day and over its last hour.

    python3 bench/dashboard_cost.py [--rate 100] [--hours 24] [--runs 3]

The points carry the fields those panels read (wall_time_s, cpu_time_s,
max_rss_bytes, alloc_memory_bytes, final, attempt) with the schema's tags
(8 categories, 16 hosts): a panel reads only its fields, so the other
fields of a full task point change disk size, not these queries. Prints a
Markdown table for bench/RESULTS.md, and the write volume of today's
schema measured on the bundled Work Queue log (no measurement was added).
Needs the 2.7 binary of scripts/build-influxd2.sh; takes 20-40 minutes.
"""
import argparse
import gzip
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, os.path.join(REPO, "grafana"))
from grafana_query import Range, flux_text, influxql_text  # noqa: E402
from influxd_harness import Influxd  # noqa: E402
import influxd2_harness  # noqa: E402
import make_dashboards  # noqa: E402

DAY0 = 1767225600  # 2026-01-01T00:00:00Z


def batches(rate, hours, per_batch=20000):
    """Line protocol for rate tasks/s over hours, in gzip'ed batches."""
    rnd = random.Random(1)
    cats = ["c%d" % i for i in range(8)]
    lines = []
    n = 0
    for s in range(hours * 3600):
        for k in range(rate):
            c = rnd.randrange(8)
            wall = rnd.lognormvariate(c * 0.5, 0.8)
            t = (DAY0 + s) * 10**9 + k * 10**7 + rnd.randrange(10**7)
            lines.append("task,category=%s,host=h%d,result=SUCCESS,source=wq,workflow=w1 wall_time_s=%.6f,"
                         "cpu_time_s=%.6f,max_rss_bytes=%d,alloc_memory_bytes=%d,attempt=1i,final=true %d"
                         % (cats[c], rnd.randrange(16), wall, wall * rnd.random(),
                            int(rnd.lognormvariate(19 + c * 0.3, 0.4)), 2**30 << (c % 3), t))
            n += 1
            if len(lines) == per_batch:
                yield gzip.compress(("\n".join(lines) + "\n").encode(), 1), len(lines)
                lines = []
    if lines:
        yield gzip.compress(("\n".join(lines) + "\n").encode(), 1), len(lines)


def post(url, body, headers):
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers=dict(headers, **{"Content-Encoding": "gzip"}))
    with urllib.request.urlopen(req, timeout=600) as r:
        r.read()


def load(write_url, headers, rate, hours):
    t0, n = time.time(), 0
    for body, k in batches(rate, hours):
        post(write_url, body, headers)
        n += k
    return n, time.time() - t0


def quantile_panels():
    out = []
    for (lang, board), (_, panels) in make_dashboards.boards().items():
        for p in panels:
            if make_dashboards.is_quantile_panel(p):
                out.append((lang, board, p))
    return out


def timed(fn, runs):
    ts = []
    for _ in range(runs):
        t0 = time.time()
        fn()
        ts.append(time.time() - t0)
    return statistics.median(ts)


def write_volume():
    """Today's schema on the bundled log: bytes per task point, quantile points per window."""
    tl = os.path.join(REPO, "build", "cli", "tasklens")
    log = os.path.join(REPO, "tests", "data", "wq", "demo-cctools-9.9.log")
    lp = subprocess.run([tl, "lines", log], capture_output=True, text=True).stdout.splitlines()
    task = [ln for ln in lp if ln.startswith("task,")]
    q = [ln for ln in lp if ln.startswith("task_quantiles,")]
    return len(task), sum(len(ln) + 1 for ln in task) / len(task), len(q), sum(len(ln) + 1 for ln in q) / max(1, len(q))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=int, default=100)
    ap.add_argument("--hours", type=int, default=24)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    day = Range(DAY0 * 1000, (DAY0 + a.hours * 3600) * 1000, max(1000, a.hours * 3600 * 1000 // 1000 // 1000 * 1000))
    hour = Range((DAY0 + a.hours * 3600 - 3600) * 1000, (DAY0 + a.hours * 3600) * 1000, 5000)
    allv = {"workflow": None, "category": None, "host": None}
    rows = []
    with Influxd() as db1:
        db1.query("CREATE DATABASE bench")
        n, secs = load(db1.url + "/write?db=bench&precision=ns", {}, a.rate, a.hours)
        print("1.6: %d points loaded in %.0f s" % (n, secs), flush=True)
        for lang, board, p in quantile_panels():
            if lang != "influxql":
                continue
            for name, rng in (("day", day), ("last hour", hour)):
                qs = [influxql_text(q, rng, allv) for q in p.influxql]
                t = timed(lambda: [db1.query(q, "bench", timeout=1800) for q in qs], a.runs)
                rows.append(("1.6 InfluxQL", board, p.title, name, rng.interval_ms, t))
                print(rows[-1], flush=True)
    with influxd2_harness.Influxd2(bucket="bench") as db2:
        q = urllib.parse.urlencode({"org": db2.org, "bucket": "bench", "precision": "ns"})
        n, secs = load(db2.url + "/api/v2/write?" + q, {"Authorization": "Token " + db2.token}, a.rate, a.hours)
        print("2.7: %d points loaded in %.0f s" % (n, secs), flush=True)
        db2.dbrp()
        for lang, board, p in quantile_panels():
            for name, rng in (("day", day), ("last hour", hour)):
                if lang == "flux":
                    qs = [flux_text(x, rng, allv, "bench") for x in p.flux]
                    t = timed(lambda: [db2.flux(x) for x in qs], a.runs)
                    label = "2.7 Flux"
                else:
                    qs = [influxql_text(x, rng, allv) for x in p.influxql]
                    t = timed(lambda: [db2.influxql(x, "bench") for x in qs], a.runs)
                    label = "2.7 InfluxQL (DBRP)"
                rows.append((label, board, p.title, name, rng.interval_ms, t))
                print(rows[-1], flush=True)
    print()
    print("| server | dashboard / panel | range | interval | query time (s, median of %d) |" % a.runs)
    print("|---|---|---|---|---|")
    for server, board, title, name, iv, t in rows:
        print("| %s | %s / %s | %s | %g s | %.2f |" % (server, board, title, name, iv / 1000, t))
    n_task, b_task, n_q, b_q = write_volume()
    print()
    print("write volume (bundled WQ log, today's schema): %d task points, %.0f bytes each; "
          "%d task_quantiles points, %.0f bytes each" % (n_task, b_task, n_q, b_q))


if __name__ == "__main__":
    main()
