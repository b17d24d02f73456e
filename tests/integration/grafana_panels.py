#!/usr/bin/env python3
"""The shipped Grafana dashboards, checked statically and against a real influxd.

Static: each dashboard is valid JSON, panel ids unique, gridPos inside 24
columns without overlaps, every data source reference is the provisioned
uid, every panel has a unit and a description, and the files are what
grafana/make_dashboards.py writes.

Live: tasklens fills a real influxd from the bundled Work Queue log (made by
the foundation test's manager and workers) and a generated LSST datastore.
Every template-variable query and every panel query then runs with Grafana's
macros substituted as Grafana does ($timeFilter, $__interval, $__interval_ms,
variables as regexes: "All" = .*, one value = escaped): each must run without
error and return at least one series. The ResourceUsageSummary table panel's
numbers must equal `tasklens summary --lsst-summary` on the same datastore.

usage: grafana_panels.py TASKLENS REPO_DIR
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from influxd_harness import Influxd  # noqa: E402
import lsst_summary  # noqa: E402

TASKLENS, REPO = sys.argv[1:3]
GRAFANA = os.path.join(REPO, "grafana")

# ---------------------------------------------------------------- static
with open(os.path.join(GRAFANA, "provisioning", "datasources", "tasklens-influxdb.yaml")) as f:
    prov = yaml.safe_load(f)
UID = prov["datasources"][0]["uid"]
check(prov["datasources"][0]["type"] == "influxdb", "the provisioned data source is InfluxDB")
with open(os.path.join(GRAFANA, "provisioning", "dashboards", "tasklens.yaml")) as f:
    dprov = yaml.safe_load(f)
check(dprov["providers"][0]["type"] == "file", "the dashboard provider is a file provider")

r = subprocess.run([sys.executable, os.path.join(GRAFANA, "make_dashboards.py")], capture_output=True,
                   text=True, cwd=tempfile.mkdtemp())
names = ["workflow-overview", "task-resources", "pipeline-health", "insights"]
boards = {}
for n in names:
    with open(os.path.join(GRAFANA, "dashboards", n + ".json")) as f:
        text = f.read()
    boards[n] = json.loads(text)
r = subprocess.run(["git", "-C", REPO, "diff", "--stat", "--", "grafana/dashboards"], capture_output=True,
                   text=True)
check(r.returncode != 0 or not r.stdout.strip(),
      "grafana/dashboards is what make_dashboards.py writes (git diff: %r)" % r.stdout.strip())


def refs(node, out):
    if isinstance(node, dict):
        if "datasource" in node and node["datasource"] is not None:
            out.append(node["datasource"])
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)
    return out


for n, d in boards.items():
    ids = [p["id"] for p in d["panels"]]
    check(len(ids) == len(set(ids)), "%s: panel ids unique" % n)
    cells = set()
    ok_grid = True
    for p in d["panels"]:
        g = p["gridPos"]
        if g["x"] < 0 or g["w"] < 1 or g["x"] + g["w"] > 24 or g["y"] < 0 or g["h"] < 1:
            ok_grid = False
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                if (x, y) in cells:
                    ok_grid = False
                cells.add((x, y))
        check(bool(p.get("description")), "%s/%s: has a description" % (n, p["title"]))
        check(bool(p["fieldConfig"]["defaults"].get("unit")), "%s/%s: has a unit" % (n, p["title"]))
    check(ok_grid, "%s: every gridPos inside 24 columns, none overlapping" % n)
    ds = refs(d, [])
    check(ds and all(x == {"type": "influxdb", "uid": UID} for x in ds),
          "%s: all %d data source references are uid %s" % (n, len(ds), UID))

# ---------------------------------------------------------------- live
tmp = tempfile.mkdtemp(prefix="tl-grafana-")
lsst_root = os.path.join(tmp, "repo")
lsst_summary.generate(lsst_root, 240, random.Random(7))
run_dir = os.path.join(lsst_root, lsst_summary.RUN)
wq_log = os.path.join(REPO, "tests", "data", "wq", "demo-cctools-9.9.log")
with Influxd() as db:
    cfg = os.path.join(tmp, "run.yaml")
    with open(cfg, "w") as f:
        f.write(f"""sources:
  - type: file
    path: {wq_log}
    parser: wq
  - type: dir
    path: {run_dir}
    parser: lsst
sinks:
  - type: influxdb
    url: {db.url}
    db: tasklens
    create_db: true
    spool_dir: {tmp}/spool
aggregate: {{window: 60}}
checkpoint_dir: {tmp}/ck
flush_interval: 200
cumulative_interval: 1
quiet: true
""")
    p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            rows = db.rows('SELECT count("attempt") FROM "task" GROUP BY "source"', "tasklens")
        except Exception:  # the database is created by the sink
            rows = []
        if len(rows) == 2 and all(r["count"] > 0 for r in rows):
            break
        time.sleep(0.3)
    time.sleep(4)  # a few self-metrics points and cumulative quantiles
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    check(p.returncode == 0, "tasklens run exited 0 (%s)" % err[-500:])
    # the insights dashboard: advise, plan and energy as line protocol, posted as the README shows
    for cmd in (["advise"], ["plan", "--node", "cores=128,mem=512GiB", "--node", "cores=8,mem=16GiB"],
                ["energy"]):
        r = subprocess.run([TASKLENS] + cmd + ["--format", "lp", "-q", wq_log, run_dir], capture_output=True)
        check(r.returncode == 0 and r.stdout.count(b"\n") >= 5, "tasklens %s --format lp: %d lines %s" % (
            cmd[0], r.stdout.count(b"\n"), r.stderr.decode()[-300:]))
        db.write("tasklens", r.stdout)

    # Grafana's range and interval, per dashboard: the extent of the data its
    # queries read (what a user would pick), ~1000 points per series
    field = {"task": "attempt", "workflow": "workers", "tasklens": "lines", "task_quantiles": "count",
             "task_advice": "attempts", "task_plan": "tasks", "task_energy": "kwh"}

    def extent(measurements):
        lo = hi = None
        for m in measurements:
            for fn in ("first", "last"):
                rows = db.rows('SELECT %s("%s") FROM "%s"' % (fn, field[m], m), "tasklens", epoch="ms")
                if rows:
                    t = rows[0]["time"]
                    lo = t if lo is None else min(lo, t)
                    hi = t if hi is None else max(hi, t)
        margin = max(60_000, (hi - lo) // 20)
        lo, hi = lo - margin, hi + margin
        interval_ms = max(1000, (hi - lo) // 1000 // 1000 * 1000)
        return {"$timeFilter": "time >= %dms and time <= %dms" % (lo, hi),
                "$__interval_ms": str(interval_ms), "$__interval": "%ds" % (interval_ms // 1000)}

    def regex_escape(v):
        # Grafana's InfluxDB data source: regex-escaped value (kbn.regexEscape)
        return re.sub(r"([\\^$*+?.()|{}\[\]/])", r"\\\1", v)

    macros = None

    def substitute(q, values):
        for k in ("$__interval_ms", "$__interval", "$timeFilter"):
            q = q.replace(k, macros[k])
        for name, v in values.items():
            q = q.replace("$" + name, v)
        return q

    def run_query(q):
        try:
            doc = db.query(q, "tasklens")
        except Exception as e:  # noqa: BLE001
            return None, str(e)
        return sum(len(res.get("series", [])) for res in doc.get("results", [])), None

    for n, d in boards.items():
        macros = extent(sorted(set(re.findall(r'FROM "(\w+)"', json.dumps(d).replace('\\"', '"')))))
        print("%s: %s, interval %s" % (n, macros["$timeFilter"], macros["$__interval"]))
        all_values = {}
        one_value = {}
        for v in d["templating"]["list"]:
            if v.get("includeAll"):
                all_values[v["name"]] = v["allValue"]
            else:
                all_values[v["name"]] = v["current"]["value"]
        for v in d["templating"]["list"]:
            q = substitute(v["query"], all_values)
            rows = []
            try:
                for res in db.query(q, "tasklens").get("results", []):
                    for s in res.get("series", []):
                        rows += [x[1] for x in s["values"]]
                error = None
            except Exception as e:  # noqa: BLE001
                error = str(e)
            check(error is None and rows, "%s: variable $%s: %s -> %d values %s" % (
                n, v["name"], q, len(rows), error or ""))
            if rows:
                pick = sorted(rows, key=lambda x: (" " not in x, x))[0]  # one with a space if any
                one_value[v["name"]] = regex_escape(pick) if v.get("includeAll") else pick
        for p in d["panels"]:
            for t in p["targets"]:
                for label, values in (("All", all_values), ("one value", dict(all_values, **{
                        k: v for k, v in one_value.items() if k in ("workflow", "instance")}))):
                    q = substitute(t["query"], values)
                    nser, error = run_query(q)
                    check(error is None and nser, "%s / %s / %s (%s): %s series %s" % (
                        n, p["title"], t["refId"], label, nser, error or ""))
                    if re.search(r"\$\w", q):
                        check(False, "unsubstituted macro in %s" % q)

    # the ResourceUsageSummary table panel against `tasklens summary --lsst-summary`
    macros = extent(["task_quantiles"])
    panel = [p for p in boards["task-resources"]["panels"] if p["type"] == "table"][0]
    table = {}
    for t in panel["targets"]:
        q = substitute(t["query"], {"category": ".*"})
        for res in db.query(q, "tasklens").get("results", []):
            for s in res.get("series", []):
                row = table.setdefault(s["tags"]["category"], {})
                row.update({c: v for c, v in zip(s["columns"], s["values"][0]) if c != "time"})
    r = subprocess.run([TASKLENS, "summary", "--lsst-summary", "--format", "csv", run_dir],
                       capture_output=True, text=True)
    lines = r.stdout.strip().splitlines()
    cols = lines[0].split(",")
    compared = 0
    for line in lines[1:]:
        want = dict(zip(cols, line.split(",")))
        got = table.get(want["task"])
        if not got:
            check(False, "summary table panel: no row for %s" % want["task"])
            continue
        for c in cols[1:]:
            w = float(want[c])
            g = got.get(c)
            ok = g is not None and abs(g - w) <= 1e-12 * max(1.0, abs(w))
            if not ok:
                check(False, "summary table panel %s.%s = %r, tasklens summary says %r" % (want["task"], c, g, w))
            compared += 1
    check(compared > 100, "summary table panel equals `tasklens summary --lsst-summary`: %d numbers "
          "over %d tasks" % (compared, len(lines) - 1))

sys.exit(finish())
