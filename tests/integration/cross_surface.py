#!/usr/bin/env python3
"""One run, every surface, the same numbers (issue 56: every number means one
thing on every surface).

Each input is read through `summary --format json`, the report (its card and
tables, in headless Chromium), `top --once`, `advise --format json` and the
Grafana panels on a real InfluxDB 1.x (the InfluxQL set, run as Grafana runs
it over the whole range). The truth is computed here, in Python, from
`tasklens records` with docs/glossary.md's definitions: tasks, attempts,
failed tasks and failed attempts, cached, open, library instances,
wall-hours, core-hours (allocated, else requested, cores x wall) and
CPU-hours, this run's tasks only (cached apart). Every surface that shows a
figure must show the truth's.

Inputs: the bundled Work Queue log (a SUCCESS with exit 1 is failed; a
RESOURCE_EXHAUSTION), and from ../shared when present: a Nextflow run with
12 exit-137 deaths, a resumed Nextflow run (54 cached), TaskVine lnni (1,436
tasks open, 198 library instances) and TaskVine Colmena (4-core tasks,
retries).

usage: cross_surface.py TASKLENS REPO_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "grafana"))
from checks import check, finish  # noqa: E402
from browser import Chromium, find_chromium  # noqa: E402
from grafana_query import InfluxQLRunner, Range  # noqa: E402
from influxd_harness import Influxd  # noqa: E402
import make_dashboards  # noqa: E402
import glossary_ref  # noqa: E402

TASKLENS, REPO = sys.argv[1:3]
SHARED = os.environ.get("TL_SHARED_DIR") or os.path.join(REPO, "..", "shared")


def run(args):
    r = subprocess.run([TASKLENS] + args, capture_output=True, text=True, timeout=300)
    return r


def truth(inputs):
    rows = [json.loads(line) for line in run(["records", "-q", "-f", "ndjson"] + inputs).stdout.splitlines()]
    t = {"tasks": 0, "attempts": 0, "failed": 0, "failed_attempts": 0, "cached": 0, "libraries": 0, "cancelled": 0,
         "wall_hours": 0.0, "core_hours": 0.0, "cpu_hours": 0.0}
    for r in rows:
        t["attempts"] += 1
        t["failed_attempts"] += glossary_ref.failed(r.get("result"), r.get("exit_code"))
        if not r["final"]:
            continue
        t["tasks"] += 1
        t["failed"] += glossary_ref.failed(r.get("result"), r.get("exit_code"))
        if r.get("result") == "CACHED":
            t["cached"] += 1
            continue  # an earlier run's: in none of the hours
        t["libraries"] += r.get("result") == "LIBRARY_EXIT"
        t["cancelled"] += r.get("result") in glossary_ref.CANCELLED
        wall = r.get("wall_time_s")
        cores = r.get("alloc_cores") if r.get("alloc_cores") is not None else r.get("req_cores")
        if wall is not None:
            t["wall_hours"] += wall / 3600
            if cores:
                t["core_hours"] += cores * wall / 3600
        if r.get("cpu_time_s") is not None:
            t["cpu_hours"] += r["cpu_time_s"] / 3600
    return t


def same(a, b, rel=1e-9):
    return a is not None and b is not None and abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def summary_surface(inputs):
    s = json.loads(run(["summary", "-q", "--format", "json"] + inputs).stdout)
    gs = [g for g in s["groups"] if g["tasks"] or g["attempts"] or g["open"]]
    out = {k: sum(g[k] for g in gs) for k in ("tasks", "attempts", "open", "failed", "failed_attempts")}
    out["cached"] = sum(g["results"].get("CACHED", 0) for g in gs)
    out["libraries"] = sum(g["results"].get("LIBRARY_EXIT", 0) for g in gs)
    for k in ("wall_hours", "core_hours", "cpu_hours"):
        out[k] = sum(g[k] or 0 for g in gs)
    return out


CARD = """Object.fromEntries([...document.querySelectorAll('[data-card=run] .stat')].map(
  s => [s.dataset.k, +s.dataset.v]))"""
TABLES = """(() => {
  const sum = (sel, k) => [...document.querySelectorAll(sel + ' td[data-k=' + k + ']')]
    .reduce((a, td) => a + (td.dataset.v === 'null' ? 0 : +td.dataset.v), 0);
  return {wall_hours: sum('table[data-table=summary] tr[data-g]', 'wall_hours'),
          core_hours: sum('table[data-table=summary] tr[data-g]', 'core_hours'),
          failed: sum('table[data-table=failures] tr[data-g]', 'failed'),
          causes: [...document.querySelectorAll('table[data-table=failures] span[data-cause]')]
            .reduce((a, s) => a + +s.dataset.v, 0)};
})()"""


def report_surface(c, inputs, tmp):
    html = os.path.join(tmp, "r.html")
    r = run(["report", "-q"] + inputs + ["-o", html])
    if r.returncode != 0:
        return None
    c.open(html)
    card, tables = c.eval(CARD), c.eval(TABLES)
    out = {"tasks": card.get("tasks"), "attempts": card.get("attempts"), "open": card.get("open", 0),
           "cached": card.get("cached", 0), "libraries": card.get("libraries", 0),
           "cancelled": card.get("cancelled", 0),
           "core_hours": card.get("core_hours", 0), "cpu_hours": card.get("cpu_hours", 0),
           "table wall_hours": tables["wall_hours"], "table core_hours": tables["core_hours"],
           "table failed": tables["failed"], "table failed_attempts": tables["causes"]}
    if "success_rate" in card:  # over this run's tasks: cached and libraries apart
        finals = card["tasks"] - out["cached"] - out["libraries"]
        out["failed"] = round(finals * (1 - card["success_rate"])) - out["cancelled"]
    return out


def top_surface(inputs):
    r = run(["top", "--once"] + inputs)
    m = re.search(r"tasks (\S+) running +(\S+) waiting +(\d+) done +(\d+) failed", r.stdout)
    if not m:
        return None
    out = {"done": int(m.group(3)), "failed": int(m.group(4))}
    if m.group(1) != "-":
        out["open"] = int(m.group(1)) + int(m.group(2))
    return out


def advise_surface(inputs):
    a = json.loads(run(["advise", "-q", "--format", "json"] + inputs).stdout)
    return {k: sum(c[k] for c in a["categories"]) for k in ("tasks", "attempts")}


def grafana_surface(db, name, inputs):
    """The InfluxQL workflow overview's panels over the whole range, as Grafana
    runs them: failed attempts (Failures by cause), attempts (Throughput, x
    the interval), wall-hours (Top categories by wall-hours)."""
    r = run(["lines", "-q", "--influx-url", db.url, "--influx-db", name, "--influx-create-db",
             "--spool-dir", os.path.join(db.dir, "spool-" + name)] + inputs)
    if r.returncode != 0:
        return None
    first = db.rows('SELECT first("attempt") FROM "task"', name, epoch="ms")[0]["time"]
    last = db.rows('SELECT last("attempt") FROM "task"', name, epoch="ms")[0]["time"]
    span = last + 1 - first
    rng = Range(first, last + 1, span + 1)  # one interval holds the whole run
    panels = {p.title: p for p in make_dashboards.workflow_overview()}
    allv = {"workflow": None, "category": None, "host": None}
    runner = InfluxQLRunner(db.query, name)

    def total(title, column=None, scale=1.0):
        rows = runner.panel(panels[title].influxql, rng, allv, interval_key=True, tag_keys=None)
        return sum((v if column is None else row.get(column)) or 0 for row in rows.values()
                   for v in ([None] if column else row.values())) * scale
    return {"failed_attempts": total("Failures by cause"),
            "attempts": total("Throughput (tasks finished per minute)", "tasks/min", rng.interval_ms / 60000),
            "wall_hours": total("Top categories by wall-hours", "runtime")}


def compare(what, surface, got, want, keys):
    if got is None:
        check(False, "%s: %s answered (no output)" % (what, surface))
        return
    diffs = []
    for k in keys:
        g, w = got.get(k), want[k]
        if isinstance(w, float) or isinstance(g, float):
            ok = same(float(g or 0), w, 1e-9) or (abs((g or 0) - w) < 1e-9)
        else:
            ok = g == w
        if not ok:
            diffs.append("%s %r != %r" % (k, g, w))
    check(not diffs, "%s: %s says %s as the records do%s" % (
        what, surface, ", ".join("%s %s" % (k, fmt(want[k])) for k in keys),
        "" if not diffs else " -- " + "; ".join(diffs)))


def fmt(v):
    return "%.6g" % v if isinstance(v, float) else str(v)


def cases():
    out = [("Work Queue demo", [os.path.join(REPO, "tests", "data", "wq", "demo-cctools-9.9.log")])]
    for what, rel in (("Nextflow, 12 exit-137 deaths", "nextflow/samples/openproblems_2022-05-13_execution_trace.txt"),
                      ("Nextflow resumed (54 cached)", "nextflow/samples/PaintorPipe_b4a6de9_trace_cached.txt"),
                      ("Nextflow aborted (cached, failed, aborted)",
                       "nextflow/samples/openebench_gmi_235c53c_trace_aborted.txt"),
                      ("TaskVine lnni (open, libraries)", "wq/samples/ccl_taskvine-example-logs__lnni_transactions"),
                      ("TaskVine Colmena (4-core tasks)",
                       "wq/samples/ccl_taskvine-logs__taskvine_paper_colmena_transactions_peer_enabled")):
        path = os.path.join(SHARED, rel)
        if os.path.exists(path):
            out.append((what, [path]))
        else:
            print("SKIP %s: %s is absent" % (what, path))
    return out


def main():
    if not find_chromium():
        print("SKIP: no Chromium (scripts/install-deps.sh installs it)")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp, Chromium(width=1400, height=900) as c, Influxd() as db:
        for i, (what, inputs) in enumerate(cases()):
            want = truth(inputs)
            want["open"] = summary_surface(inputs)["open"]  # records does not list open tasks
            s = summary_surface(inputs)
            compare(what, "summary --format json", s, want,
                    ["tasks", "attempts", "failed", "failed_attempts", "cached", "libraries", "wall_hours",
                     "core_hours", "cpu_hours"])
            rep = report_surface(c, inputs, tmp)
            if rep is not None:
                rep_want = dict(want, **{"table wall_hours": want["wall_hours"], "table core_hours":
                                         want["core_hours"], "table failed": want["failed"],
                                         "table failed_attempts": want["failed_attempts"]})
                keys = ["tasks", "attempts", "open", "cached", "cancelled", "libraries", "core_hours", "cpu_hours",
                        "table wall_hours", "table core_hours", "table failed", "table failed_attempts"]
                if "failed" in rep:
                    keys.append("failed")
                compare(what, "the report (card and tables)", rep, rep_want, keys)
            else:
                compare(what, "the report", None, want, [])
            tp = top_surface(inputs)
            top_want = {"done": want["tasks"] - want["failed"] - want["cached"] - want["libraries"] - want["cancelled"],
                        "failed": want["failed"], "open": want["open"]}
            compare(what, "top --once", tp, top_want, ["done", "failed"] + (["open"] if tp and "open" in tp else []))
            compare(what, "advise --format json", advise_surface(inputs), want, ["tasks", "attempts"])
            compare(what, "Grafana (InfluxQL on InfluxDB 1.x)", grafana_surface(db, "run%d" % i, inputs), want,
                    ["failed_attempts", "attempts", "wall_hours"])
    finish()


if __name__ == "__main__":
    main()
