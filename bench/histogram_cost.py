#!/usr/bin/env python3
"""What the histogram panels cost the servers over a production day (and a
week), beside the exact panels, in the same run.

    python3 bench/histogram_cost.py BUILD_DIR [--days 1] [--runs 3] [--exact]

A day of 100 finished tasks/s (8.64 M tasks, 8 categories) is written as a
Work Queue log by the generator (tests/gen_wq.c, time stretched to span the
day) and read by `tasklens lines` as any log: its `task_histogram` points
(one per bucket each 60 s window touched, per category and metric, plus the
windows' count/sum/min/max) go into a real InfluxDB 2.7 and a real
VictoriaMetrics. Each histogram quantile panel of the Flux and PromQL sets
is then run as Grafana runs it, over the whole span and over its last hour.
--exact also loads the raw `task` points into the same InfluxDB 2.7 and
times the InfluxQL set's exact panels beside them (minutes per run).

Prints a Markdown table for bench/RESULTS.md, and the written volume per
window at 10, 1,000 and 100,000 tasks per window.
"""
import argparse
import gzip
import os
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
from grafana_query import PromRunner, Range, flux_text, influxql_text  # noqa: E402
import influxd2_harness  # noqa: E402
import make_dashboards  # noqa: E402
import prom_harness  # noqa: E402

T0 = 1700000000  # the generator's first second
RATE = 100  # finished tasks per second


def generate(build, days, out, exact):
    """The span's task_histogram points (and, with exact, its task points) as line protocol files."""
    hist = os.path.join(out, "hist-%dd.lp" % days)
    tasks = os.path.join(out, "tasks-%dd.lp" % days) if exact else os.devnull
    if os.path.exists(hist) and (not exact or os.path.exists(tasks)):
        return hist, tasks
    n = RATE * 86400 * days
    gen = subprocess.Popen([os.path.join(build, "tests", "gen_wq_test"), str(n), "8", "1", "200"],
                           stdout=subprocess.PIPE)
    tl = subprocess.Popen([os.path.join(build, "cli", "tasklens"), "lines", "-q", "--instance", "bench",
                           "--format-in", "wq", "-"], stdin=gen.stdout, stdout=subprocess.PIPE)
    gen.stdout.close()
    t0 = time.time()
    with open(hist, "wb") as h, open(tasks, "wb") as t:
        for line in tl.stdout:
            if line.startswith(b"task_histogram"):
                h.write(line)
            elif exact and line.startswith(b"task,"):
                t.write(line)
    tl.wait()
    print("generated %d tasks in %.0f s" % (n, time.time() - t0), flush=True)
    return hist, tasks


def chunks(path, lines_per=20000):
    buf = []
    with open(path, "rb") as f:
        for line in f:
            buf.append(line)
            if len(buf) == lines_per:
                yield b"".join(buf), len(buf)
                buf = []
    if buf:
        yield b"".join(buf), len(buf)


def load_influx(db2, path):
    q = urllib.parse.urlencode({"org": db2.org, "bucket": db2.bucket, "precision": "ns"})
    t0, n = time.time(), 0
    for body, k in chunks(path):
        req = urllib.request.Request(db2.url + "/api/v2/write?" + q, data=gzip.compress(body, 1), method="POST",
                                     headers={"Authorization": "Token " + db2.token, "Content-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=600) as r:
            r.read()
        n += k
    return n, time.time() - t0


def load_vm(vm, path):
    t0, n = time.time(), 0
    for body, k in chunks(path, 200000):
        req = urllib.request.Request(vm.url + "/write?db=bench", data=body, method="POST")
        with urllib.request.urlopen(req, timeout=600) as r:
            r.read()
        n += k
    vm.flush()
    return n, time.time() - t0


def nice(ms):
    """Grafana-like rounding of an interval: up to the next of 1, 2, 5 x 10^k s, minutes, hours."""
    for v in (1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200, 86400):
        if ms <= v * 1000:
            return v * 1000
    return ms


def timed(fn, runs):
    ts = []
    for _ in range(runs):
        t0 = time.time()
        out = fn()
        ts.append(time.time() - t0)
    return statistics.median(ts), out


def hist_panels():
    return [p for p in make_dashboards.boards()[("promql", "task-resources")][1]]


# What any Flux histogram quantile needs before its arithmetic: the bucket
# sums of the range read out of storage, counted, nothing else. For a graph,
# one sum per series (category, bucket) and interval (the storage's own
# windowed aggregate, pushed down); for the summary, one per category,
# metric and bucket over the range. No quantile panel can cost less.
FLUX_FLOOR = {
    "graph: the bucket sums per interval, read (wall time)":
        'from(bucket: v.defaultBucket)\n'
        '  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)\n'
        '  |> filter(fn: (r) => r._measurement == "task_histogram" and r.window == "%s" and '
        'r._field == "bucket" and r.metric == "wall_time_s")\n'
        '  |> aggregateWindow(every: v.windowPeriod, fn: sum, createEmpty: false)\n'
        '  |> count()\n  |> group()\n  |> sum()',
    "summary: the bucket sums over the range, read (3 metrics)":
        'from(bucket: v.defaultBucket)\n'
        '  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)\n'
        '  |> filter(fn: (r) => r._measurement == "task_histogram" and r.window == "%s" and '
        'r._field == "bucket" and (r.metric == "cpu_time_s" or r.metric == "max_rss_bytes" or '
        'r.metric == "wall_time_s"))\n'
        '  |> group(columns: ["category", "metric", "lo", "hi"])\n'
        '  |> sum()\n  |> group()\n  |> count()',
}


def flux_floor(db2, rng, window, runs):
    """(name, seconds) of each FLUX_FLOOR query over rng, reading `window` windows."""
    out = []
    for name, q in FLUX_FLOOR.items():
        text = flux_text(q % window, rng, {"workflow": None, "category": None, "host": None}, "bench")
        t, _ = timed(lambda: db2.flux(text), runs)
        out.append((name, t))
    return out


def per_window_volume(build, out):
    """Bytes of task_histogram line protocol per window (one category, all
    metrics) at 10, 1,000 and 100,000 tasks in the window."""
    rows = []
    for n in (10, 1000, 100000):
        gen = subprocess.Popen([os.path.join(build, "tests", "gen_wq_test"), str(n), "1", "1", "1"],
                               stdout=subprocess.PIPE)
        r = subprocess.run([os.path.join(build, "cli", "tasklens"), "lines", "-q", "--instance", "bench",
                            "--window", "86400", "--format-in", "wq", "-"], stdin=gen.stdout, capture_output=True)
        gen.wait()
        hl = [ln for ln in r.stdout.splitlines() if ln.startswith(b"task_histogram")]
        tl = [ln for ln in r.stdout.splitlines() if ln.startswith(b"task,")]
        rows.append((n, len(hl), sum(len(x) + 1 for x in hl), sum(len(x) + 1 for x in tl)))
    return rows


def print_rows(rows, runs):
    print()
    print("| server | panel | range | interval | query time (s, median of %d) |" % runs)
    print("|---|---|---|---|---|")
    for server, title, name, iv, t, _ in rows:
        print("| %s | %s | %s | %g s | %.2f |" % (server, title, name, iv / 1000, t))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--days", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--only", choices=("vm", "influx"), help="one server")
    a = ap.parse_args()
    out = os.path.join(HERE, "out")
    os.makedirs(out, exist_ok=True)
    hist, tasks = generate(a.build, a.days, out, a.exact)
    span_s = a.days * 86400
    name = "%d day%s" % (a.days, "s" if a.days > 1 else "")
    # the interval Grafana picks: the range over the panel's points, rounded up
    # to a round value (histogram panels draw at most 100 points, the exact ones ~1000)
    hist_ranges = ((name, Range(T0 * 1000, (T0 + span_s) * 1000, nice(span_s * 1000 // 100))),
                   ("last hour", Range((T0 + span_s - 3600) * 1000, (T0 + span_s) * 1000, nice(36000))))
    exact_ranges = ((name, Range(T0 * 1000, (T0 + span_s) * 1000, nice(span_s * 1000 // 1000))),
                    ("last hour", Range((T0 + span_s - 3600) * 1000, (T0 + span_s) * 1000, 5000)))
    allv = {"workflow": None, "category": None, "host": None}
    rows = []
    with prom_harness.VictoriaMetrics() as vm:
        if a.only == "influx":
            vm.stop()
            hist_panels_vm = []
        else:
            hist_panels_vm = hist_panels()
            n, secs = load_vm(vm, hist)
            print("VictoriaMetrics: %d points loaded in %.0f s" % (n, secs), flush=True)
        runner = PromRunner(vm)
        for p in hist_panels_vm:
            for name, rng in hist_ranges:
                t, res = timed(lambda: [runner.run(e, rng, allv, p.hist.instant) for e, _ in p.hist.promql], a.runs)
                rows.append(("VictoriaMetrics 1.79 PromQL", p.title, name, rng.interval_ms, t, sum(map(len, res))))
                print(rows[-1], flush=True)
    if a.only == "vm":
        print_rows(rows, a.runs)
        return
    with influxd2_harness.Influxd2(bucket="bench") as db2:
        n, secs = load_influx(db2, hist)
        print("2.7: %d histogram points loaded in %.0f s" % (n, secs), flush=True)
        for p in hist_panels():
            for name, rng in hist_ranges:
                qs = [flux_text(x, rng, allv, "bench") for x in p.hist.flux]
                t, res = timed(lambda: [db2.flux(x) for x in qs], a.runs)
                rows.append(("InfluxDB 2.7 Flux", p.title, name, rng.interval_ms, t, sum(map(len, res))))
                print(rows[-1], flush=True)
        for name, rng in hist_ranges:
            window = "60s" if rng.interval_ms < 600000 else "600s" if rng.interval_ms < 3600000 else "3600s"
            for fname, t in flux_floor(db2, rng, window, a.runs):
                rows.append(("InfluxDB 2.7 Flux, the floor", fname, name, rng.interval_ms, t, 0))
                print(rows[-1], flush=True)
        if a.exact:
            n, secs = load_influx(db2, tasks)
            print("2.7: %d task points loaded in %.0f s" % (n, secs), flush=True)
            db2.dbrp()
            for p in hist_panels():
                for name, rng in exact_ranges:
                    qs = [influxql_text(x, rng, allv) for x in p.influxql]
                    t, res = timed(lambda: [db2.influxql(x, "bench") for x in qs], 1)
                    rows.append(("InfluxDB 2.7 InfluxQL, exact", p.title, name, rng.interval_ms, t, 0))
                    print(rows[-1], flush=True)
    print_rows(rows, a.runs)
    print()
    print("| tasks in the window | task_histogram points | their bytes | the task points' bytes |")
    print("|---|---|---|---|")
    for n, pts, b, tb in per_window_volume(a.build, out):
        print("| %s | %s | %s | %s |" % (format(n, ","), format(pts, ","), format(b, ","), format(tb, ",")))


if __name__ == "__main__":
    main()
