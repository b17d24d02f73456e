#!/usr/bin/env python3
"""The shipped Grafana dashboards (both sets), checked statically and against
a real InfluxDB 1.x and a real InfluxDB 2.7.

Static: the files are what grafana/make_dashboards.py writes (and the panel
table of grafana/README.md is current); panel ids unique, gridPos inside 24
columns without overlaps, every panel has a unit and a description, every
data source reference is its set's provisioned uid.

Truth: tasks whose every value and end time this test chose (LSST metadata
files: two bursts of one category, 1000 tasks of ~10 ms then ten minutes
later 100 of ~2 s, and two more categories) go into each server through
`tasklens lines`. Every panel that shows a quantile, a count or a sum per
category is then run as Grafana runs it over several ranges and zooms (one
interval holding both bursts, the second burst alone, 10 s intervals) and
with one and two categories selected, and its numbers must equal the ones
computed here from the chosen values: nearest rank for InfluxQL's
PERCENTILE, linear interpolation (numpy) for Flux -- on 1.x (InfluxQL), on
2.7 (Flux) and on 2.7 through a DBRP mapping (InfluxQL).

Every query: `tasklens run` fills each server from the bundled Work Queue
log and a generated LSST datastore (on 2.7 through /api/v2/write, token from
the environment), `advise / plan / energy --format lp` add the insight
points; every variable and panel query of both sets then runs without error
and returns data, with All and with one value selected; the
ResourceUsageSummary panel over the whole range equals `tasklens summary
--lsst-summary` (Flux) and nearest-rank numbers computed from the generator
(InfluxQL); the other panels equal what the points themselves hold (the
line protocol of the same inputs: gauges, failures, CPU efficiency, means,
raw values, the insight tables; the self-metric gauges against the
self-metric points as stored). The two panels of counter rates (lines/s,
sink errors) are run, not compared.

usage: grafana_panels.py TASKLENS REPO_DIR
"""
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import check, finish  # noqa: E402
from grafana_query import (FluxRunner, InfluxQLRunner, PromRunner, Range, unsubstituted, influxql_text,  # noqa: E402
                           flux_text, promql_text)
from influxd_harness import Influxd  # noqa: E402
import influxd2_harness  # noqa: E402
import prom_harness  # noqa: E402
import lsst_summary  # noqa: E402
import glossary_ref  # noqa: E402

TASKLENS, REPO = sys.argv[1:3]
GRAFANA = os.path.join(REPO, "grafana")
sys.path.insert(0, GRAFANA)
import make_dashboards  # noqa: E402

BOARDS = make_dashboards.boards()
LANG_UID = {lang: ds["uid"] for lang, ds in make_dashboards.DS.items()}


# ---------------------------------------------------------------- static
def static_checks():
    with open(os.path.join(GRAFANA, "provisioning", "datasources", "tasklens-influxdb.yaml")) as f:
        v1 = yaml.safe_load(f)["datasources"][0]
    with open(os.path.join(GRAFANA, "provisioning", "datasources", "tasklens-influxdb2.yaml")) as f:
        v2 = yaml.safe_load(f)["datasources"][0]
    check(v1["uid"] == LANG_UID["influxql"] and v1["type"] == "influxdb",
          "provisioned InfluxQL data source has uid %s" % v1["uid"])
    check(v2["uid"] == LANG_UID["flux"] and v2["jsonData"]["version"] == "Flux"
          and v2["secureJsonData"]["token"] == "${INFLUX_TOKEN}",
          "provisioned Flux data source has uid %s and its token from the environment" % v2["uid"])
    with open(os.path.join(GRAFANA, "provisioning", "dashboards", "tasklens.yaml")) as f:
        paths = sorted(p["options"]["path"] for p in yaml.safe_load(f)["providers"])
    with open(os.path.join(GRAFANA, "provisioning", "datasources", "tasklens-victoriametrics.yaml")) as f:
        vm = yaml.safe_load(f)["datasources"][0]
    check(vm["uid"] == LANG_UID["promql"] and vm["type"] == "prometheus",
          "provisioned PromQL data source has uid %s" % vm["uid"])
    check(paths == ["/var/lib/grafana/dashboards/flux", "/var/lib/grafana/dashboards/influxql",
                    "/var/lib/grafana/dashboards/promql"],
          "one dashboard provider per set: %s" % paths)

    for (lang, name), (want, _) in BOARDS.items():
        path = os.path.join(GRAFANA, "dashboards", lang, name + ".json")
        with open(path) as f:
            got = json.load(f)
        check(got == want, "%s/%s.json is what make_dashboards.py writes" % (lang, name))
        ids = [p["id"] for p in got["panels"]]
        check(len(ids) == len(set(ids)), "%s/%s: panel ids unique" % (lang, name))
        cells, ok_grid = set(), True
        for p in got["panels"]:
            g = p["gridPos"]
            if g["x"] < 0 or g["w"] < 1 or g["x"] + g["w"] > 24 or g["y"] < 0 or g["h"] < 1:
                ok_grid = False
            for x in range(g["x"], g["x"] + g["w"]):
                for y in range(g["y"], g["y"] + g["h"]):
                    ok_grid &= (x, y) not in cells
                    cells.add((x, y))
            check(bool(p.get("description")) and bool(p["fieldConfig"]["defaults"].get("unit")),
                  "%s/%s/%s: has a description and a unit" % (lang, name, p["title"]))
            desc = p.get("description", "")
            check(len(desc) <= 200 and re.fullmatch(r"[^.]*(\.[^ ][^.]*)*\. Unit: [^.]+\.", desc or "x"),
                  "%s/%s/%s: its description is one sentence and a unit (%d characters)"
                  % (lang, name, p["title"], len(desc)))
            check(not any(w in json.dumps(p["targets"]) for w in ("task_quantiles",)),
                  "%s/%s/%s: reads no stored per-window quantiles" % (lang, name, p["title"]))
        check(ok_grid, "%s/%s: every gridPos inside 24 columns, none overlapping" % (lang, name))
        ds = refs(got, [])
        check(ds and all(x == make_dashboards.DS[lang] for x in ds),
              "%s/%s: all %d data source references are uid %s" % (lang, name, len(ds), LANG_UID[lang]))
    with open(os.path.join(GRAFANA, "README.md")) as f:
        text = f.read()
    check(make_dashboards.readme_table(BOARDS) in text, "grafana/README.md lists every panel as written")


def refs(node, out):
    if isinstance(node, dict):
        if node.get("datasource") is not None:
            out.append(node["datasource"])
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)
    return out


# ---------------------------------------------------------------- the tasks
T0 = 1767225600 * 1000  # 2026-01-01T00:00:00Z, a multiple of every interval below (ms)


def phases(end_us, wall_s, cpu_s, rss):
    """LSST metadata phases for one quantum: it ends at end_us after wall_s,
    with cpu_s of CPU and rss bytes of peak memory (__version__ 1)."""
    prep_us = end_us - int(round(wall_s * 1e6))
    zero = {f: 0 for f in lsst_summary.FIELDS[1:]}
    cpu0 = 1.5
    ph = {"prep": dict(zero, Utc=prep_us, CpuTime=1.0), "init": dict(zero, Utc=prep_us + 1, CpuTime=1.0),
          "start": dict(zero, Utc=prep_us + 2, CpuTime=cpu0),
          "end": dict(zero, Utc=end_us, CpuTime=cpu0 + cpu_s)}
    ph["end"]["MaxResidentSetSize"] = rss
    task = {"t_ns": end_us * 1000, "wall_time_s": float((end_us - prep_us) * 1000) * 1e-9,
            "cpu_time_s": (cpu0 + cpu_s) - cpu0, "max_rss_bytes": float(rss), "attempt": 1.0}
    return ph, task


def generate_bursts(root):
    """The tasks of the truth checks, as LSST metadata files; returns them."""
    rnd = random.Random(29)
    specs = []  # (label, end_ms, wall_s, rss)
    for k in range(1000):  # burst 1: ~10 ms, ending in the first 50 s
        specs.append(("calib00", T0 + 50 * k + rnd.randrange(40), 0.008 + rnd.random() * 0.004,
                      rnd.randrange(100_000_000, 200_000_000)))
    for k in range(100):  # burst 2, ten minutes later: ~2 s
        specs.append(("calib00", T0 + 600_000 + 500 * k + rnd.randrange(400), 1.8 + rnd.random() * 0.4,
                      rnd.randrange(1_000_000_000, 2_000_000_000)))
    for k in range(300):  # all along
        specs.append(("isr01", T0 + 3000 * k + rnd.randrange(2000), rnd.lognormvariate(0, 0.8),
                      int(rnd.lognormvariate(math.log(5e8), 0.5))))
    for k in range(50):  # between the bursts
        specs.append(("assoc02", T0 + 300_000 + 2000 * k + rnd.randrange(1500), rnd.lognormvariate(1.6, 0.3),
                      int(rnd.lognormvariate(math.log(3e9), 0.2))))
    tasks = []
    for i, (label, end_ms, wall, rss) in enumerate(specs):
        end_us = end_ms * 1000 + rnd.randrange(1000)
        ph, task = phases(end_us, wall, wall * rnd.uniform(0.5, 1.0), rss)
        task.update(category=label, final=True)
        tasks.append(task)
        path, _ = lsst_summary.butler_path(root, label, 24 * i, ".json")  # one path per task
        os.makedirs(os.path.dirname(path), exist_ok=True)
        lsst_summary.write_json(path, label, ph, 1, "node%d" % (i % 3), True, False, rnd)
        if i % 10 == 3:  # an earlier attempt, 100x longer and larger, just before: not the task's
            ph0, first = phases(end_us - 2_000_000, wall * 100, wall * 50, rss * 100)
            first.update(category=label, final=False)
            tasks.append(first)
            add_earlier_attempt(path, label, ph0, rnd)
    return tasks


def add_earlier_attempt(path, label, ph0, rnd):
    """Rewrites a metadata file in the provenance form, {"attempts": [earlier, this]}."""
    with open(path) as f:
        last = json.load(f)
    lsst_summary.write_json(path + ".tmp", label, ph0, 1, "node9", True, False, rnd)
    with open(path + ".tmp") as f:
        first = json.load(f)
    os.unlink(path + ".tmp")
    with open(path, "w") as f:
        json.dump({"attempts": [first, last]}, f)


SCENARIOS = [
    ("both bursts in one interval", Range(T0 - 60_000, T0 + 960_000, 1_200_000), None),
    ("the second burst alone", Range(T0 + 590_000, T0 + 700_000, 120_000), None),
    ("fine zoom (10 s)", Range(T0 - 60_000, T0 + 960_000, 10_000), None),
    ("category isr01 selected", Range(T0 - 60_000, T0 + 960_000, 1_200_000), ["isr01"]),
    ("two categories selected, second burst range", Range(T0 + 590_000, T0 + 700_000, 60_000),
     ["assoc02", "calib00"]),
]


# ---------------------------------------------------------------- independent numbers
def nearest_rank(vals, p, at_least_1=False):
    """InfluxQL's PERCENTILE: rank floor(n p / 100 + 0.5), none below 1 (or,
    as the ResourceUsageSummary panel shows it, rank 1: the minimum)."""
    s = sorted(vals)
    i = int(math.floor(len(s) * p / 100.0 + 0.5)) - 1
    if at_least_1 and s:
        i = max(i, 0)
    return s[i] if 0 <= i < len(s) else None


def quantile(lang, vals, p):
    if not vals:
        return None
    if p == 0:
        return min(vals)
    if p == 100:
        return max(vals)
    if lang == "influxql":
        return nearest_rank(vals, p)
    return float(np.quantile(np.array(vals), p / 100.0))


def aggregate(lang, fn, vals):
    if fn == "count":
        return float(len(vals)) if vals else None
    if fn == "sum":
        return float(sum(vals)) if vals else None
    if fn == "median":
        return float(np.median(np.array(vals))) if vals else None
    if fn[0] == "q1" and lang == "influxql" and 0 < fn[1] < 100:  # the summary table: rank >= 1
        return nearest_rank(vals, fn[1], True)
    return quantile(lang, vals, fn[1])


def selected(tasks, rng, categories, flux, final_only):
    lo, hi = rng.start_ms * 1_000_000, rng.stop_ms * 1_000_000
    return [t for t in tasks if lo <= t["t_ns"] and (t["t_ns"] < hi if flux else t["t_ns"] <= hi)
            and (categories is None or t["category"] in categories) and (t["final"] or not final_only)]


WINDOW_MS = 60_000  # the aggregation window the histogram points are written for
GAMMA = (1 + 0.005) / (1 - 0.005)  # a bucket's ratio at the default alpha


def window_end_ms(t, level_ms=WINDOW_MS):
    return (t["t_ns"] // 1_000_000 // level_ms + 1) * level_ms


def hist_level_ms(lang, kind, rng):
    """The windows a histogram panel reads (make_dashboards.HIST_LEVELS):
    Flux the coarsest that fits the interval, or the range of a table;
    PromQL the 60 s ones."""
    if lang == "promql":  # the $hwin variable, from the range
        span = (rng.stop_ms - rng.start_ms) // 1000
        return int(make_dashboards.prom_level(span)[:-1]) * 1000
    if kind == "interval":
        return next((w * 1000 for w, _ in make_dashboards.HIST_LEVELS if rng.interval_ms >= w * 1000), WINDOW_MS)
    span = rng.stop_ms - rng.start_ms
    return next(w * 1000 for w, above in make_dashboards.HIST_LEVELS if span > above * 1000)


def hist_selected(tasks, rng, categories, lang, level_ms):
    """The tasks a histogram panel answers for: each task's last attempt, in
    the windows whose end falls in the range (Flux's range() keeps
    [start, stop), a PromQL lookbehind (start, stop])."""
    lo, hi = rng.start_ms, rng.stop_ms
    inside = (lambda e: lo <= e < hi) if lang == "flux" else (lambda e: lo < e <= hi)
    return [t for t in tasks if t["final"] and inside(window_end_ms(t, level_ms))
            and (categories is None or t["category"] in categories)]


def hist_interval_of(t, rng, lang, level_ms):
    """The graph interval a task's window lands in: Flux's aggregateWindow
    labels [start, start + i) by its start; a PromQL point at t covers
    (t - i, t]."""
    e = window_end_ms(t, level_ms)
    return e // rng.interval_ms if lang == "flux" else -(-e // rng.interval_ms)


def hist_quantile(vals, p):
    """What a histogram quantile may show: ("within", lo, hi), the order
    statistics around the rank q*n that histogramQuantile and
    histogram_quantile interpolate at (and numpy's q*(n-1)), to be widened
    by alpha and one bucket when compared."""
    if not vals:
        return None
    s, q, n = sorted(vals), p / 100.0, len(vals)
    ranks = [math.floor(q * (n - 1)), math.ceil(q * (n - 1)), math.ceil(q * n) - 1]
    return ("within", s[max(0, min(ranks))], s[min(n - 1, max(ranks))])


def hist_value(fn, vals):
    """A histogram panel's column: counts, sums, p0 and p100 exact; the
    other quantiles within alpha plus one bucket."""
    if not vals:
        return None
    if fn in ("count", "sum"):
        return aggregate("flux", fn, vals)
    p = 50 if fn == "median" else fn[1]
    if p in (0, 100):
        return float(min(vals) if p == 0 else max(vals))
    return hist_quantile(vals, p)


def expected_hist(lang, chk, tasks, rng, categories):
    groups = {}
    kind = chk[0]
    level = hist_level_ms(lang, kind, rng)
    sel = hist_selected(tasks, rng, categories, lang, level)
    if lang == "promql" and kind == "interval":  # what the drawn points, at steps in the range, cover
        i = rng.interval_ms
        sel = [t for t in tasks if t["final"] and rng.start_ms <= -(-window_end_ms(t) // i) * i <= rng.stop_ms
               and (categories is None or t["category"] in categories)]
    for t in sel:
        b = hist_interval_of(t, rng, lang, level) if kind in ("interval", "rate") else None
        groups.setdefault(((("category", t["category"]),), b), []).append(t)
    out = {}
    for key, ts in groups.items():
        if kind == "interval":
            vals = [t[chk[1]] for t in ts if chk[1] in t]
            out[key] = {alias: hist_value(("q", p), vals) for alias, p in chk[2]}
        else:
            row = {}
            for col, (metric, fn, scale) in chk[1].items():
                fn = ("q", fn[1]) if isinstance(fn, tuple) else fn
                v = hist_value(fn, [t[metric] for t in ts if metric in t])
                row[col] = None if v is None else (v[0], v[1] * scale, v[2] * scale) if isinstance(v, tuple) \
                    else v * scale
            out[key] = row
    return out


def expected(lang, chk, final_only, tasks, rng, categories, hist=False):
    """{((("category", c),), bucket): {column: value}} as the panel should show it."""
    if hist:
        return expected_hist(lang, chk, tasks, rng, categories)
    sel = selected(tasks, rng, categories, lang == "flux", final_only)
    groups = {}
    kind = chk[0]
    for t in sel:
        b = t["t_ns"] // 1_000_000 // rng.interval_ms if kind in ("interval", "rate") else None
        groups.setdefault(((("category", t["category"]),), b), []).append(t)
    out = {}
    for key, ts in groups.items():
        if kind == "interval":
            vals = [t[chk[1]] for t in ts if chk[1] in t]
            row = {alias: quantile(lang, vals, p) for alias, p in chk[2]}
        elif kind == "rate":
            row = {"rate": len([t for t in ts if chk[1] in t]) * 60000.0 / rng.interval_ms}
        else:
            row = {}
            for col, (metric, fn, scale) in chk[1].items():
                v = aggregate(lang, fn, [t[metric] for t in ts if metric in t])
                row[col] = None if v is None else v * scale
        out[key] = row
    return out


def same(a, b):
    """b may be ("within", lo, hi): a histogram quantile, within alpha plus
    one bucket of the order statistics around its rank (1e-9 absolute: the
    zero bucket [0, 1e-9))."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(b, tuple):
        return b[1] / GAMMA ** 2 - 1e-9 <= a <= b[2] * GAMMA ** 2 + 1e-9
    return abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b))


def compare(got, want, chk):
    """None when equal, else the first difference."""
    if chk[0] == "rate":  # one value per interval, whatever its alias; empty intervals are 0
        got = {k: {"rate": next(iter(v.values()))} for k, v in got.items() if any(v.values())}
    for key in sorted(set(got) | set(want), key=str):
        g, w = got.get(key, {}), want.get(key)
        if w is None:
            if any(x is not None for x in g.values()):
                return "unexpected row %s: %s" % (key, g)
            continue
        for col, wv in w.items():
            if not same(g.get(col), wv):
                return "%s %s: panel %r, tasks %r" % (key, col, g.get(col), wv)
    return None


def panel_queries(p, lang):
    """What a panel of a set runs: InfluxQL, Flux (the histogram form where
    there is one), or the PromQL targets [(expr, legend)]."""
    if lang == "influxql":
        return p.influxql
    if lang == "promql":
        return p.hist.promql
    return p.hist.flux if p.hist else p.flux


def truth_checks(label, lang, runner, tasks):
    """Every checked panel of every board, over every scenario."""
    for (blang, board), (_, panels) in BOARDS.items():
        if blang != lang:
            continue
        for p in panels:
            if not p.check or p.check[0] not in ("interval", "range", "rate"):
                continue
            queries = panel_queries(p, lang)
            hist = lang != "influxql" and p.hist is not None
            for what, rng, cats in SCENARIOS:
                variables = {"workflow": None, "host": None, "category": cats}
                try:
                    got = runner.panel(queries, rng, variables, interval_key=p.check[0] != "range")
                except Exception as e:  # noqa: BLE001
                    check(False, "%s: %s / %s, %s: %s" % (label, board, p.title, what, e))
                    continue
                want = expected(lang, p.check, p.final, tasks, rng, cats, hist)
                diff = compare(got, want, p.check)
                # a PromQL graph draws points at multiples of the step, each for the step
                # before it: a range shorter than the step may show no window at all, and
                # then the panel and the tasks agree on nothing to show
                no_step = lang == "promql" and p.check[0] == "interval" and not got
                check(diff is None and (want or no_step), "%s: %s / %s, %s %s: %d rows equal the tasks' own numbers%s" % (
                    label, board, p.title, what, rng, len(want), "" if diff is None else " -- " + diff))


# ---------------------------------------------------------------- every query runs
def extent(influx_rows):
    """Grafana's range over all the data: [first - margin, last + margin], ~1000 intervals."""
    lo, hi = influx_rows
    margin = max(60_000, (hi - lo) // 20)
    lo, hi = lo - margin, hi + margin
    return Range(lo, hi, max(1000, (hi - lo) // 1000 // 1000 * 1000))


def pick(values):
    """One value of a variable (one with a space if there is one, to test escaping)."""
    return sorted(values, key=lambda x: (" " not in x, x))[0]


def every_query(label, lang, text, run, extent_of):
    """text(query, range, variables) -> what Grafana sends; run(text) -> a
    list of series (InfluxQL) or tables (Flux); extent_of(measurements) ->
    the first and last time of their points: the range a user would pick."""
    for (blang, board), (d, panels) in BOARDS.items():
        if blang != lang:
            continue
        read = sorted(set(re.findall(r'FROM "(\w+)"', " ".join(q for p in panels for q in p.influxql))))
        rng = extent(extent_of(read))
        print("%s: %s over %s" % (label, board, rng))
        allv = {v["name"]: None for v in d["templating"]["list"]}
        hist_titles = {p.title: p.hist is not None for p in panels}
        one = {}
        for v in d["templating"]["list"]:
            q = text(v["query"], rng, allv)
            try:
                out = run(q)
                vals = ([x[1] for s in out for x in s["values"]] if lang == "influxql" else
                        [r["_value"] for t in out for r in t])
                err = None
            except Exception as e:  # noqa: BLE001
                vals, err = [], str(e)
            check(err is None and vals and not unsubstituted(q), "%s: %s variable $%s -> %d values %s" % (
                label, board, v["name"], len(vals), err or ""))
            if vals:
                one[v["name"]] = [pick(vals)]
        for p in d["panels"]:
            for t in p["targets"]:
                for which, values in (("All", allv), ("one workflow/instance", dict(allv, **{
                        k: v for k, v in one.items() if k in ("workflow", "instance")}))):
                    q = text(t["query"], rng, values)
                    try:
                        n, err = len(run(q)), None
                    except Exception as e:  # noqa: BLE001
                        n, err = 0, str(e)
                    # a histogram panel answers for a workflow only where tasklens groups by it
                    # (`by`): the run here does not, and the panel is empty, never wrong
                    hist = lang != "influxql" and hist_titles.get(p["title"])
                    check(err is None and (n or (hist and which != "All")) and not unsubstituted(q),
                          "%s: %s / %s / %s (%s): %d series %s" % (
                              label, board, p["title"], t["refId"], which, n, (err or "")[:300]))


# ---------------------------------------------------------------- the other panels, from the points
def lp_unescape_split(text, seps):
    """Splits text at unescaped separators (backslash escapes, double quotes)."""
    out, cur, i, quoted = [], [], 0, False
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            cur.append(text[i:i + 2])
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        if c in seps and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur))
    return out


def unescape(v):
    return v.replace("\\ ", " ").replace("\\,", ",").replace("\\=", "=").replace("\\\\", "\\")


def parse_lp(text):
    """Line protocol -> [(measurement, {tag: value}, {field: value}, t_ns)]."""
    points = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, fields, t = lp_unescape_split(line, " ")
        parts = lp_unescape_split(head, ",")
        tags = dict(unescape(x).split("=", 1) for x in parts[1:])
        fv = {}
        for f in lp_unescape_split(fields, ","):
            k, v = f.split("=", 1)
            if v.startswith('"'):
                continue
            fv[unescape(k)] = (1.0 if v == "true" else 0.0) if v in ("true", "false") else float(v.rstrip("i"))
        points.append((unescape(parts[0]), tags, fv, int(t)))
    return points


def failed_attempt(tags, f):
    """The glossary's failed (glossary_ref), from the point's result tag and exit
    code -- not from the failed tag the panel reads."""
    return glossary_ref.failed(tags.get("result"), f.get("exit_code"))


def lp_expected(chk, points, rng):
    """What a panel checked against the points themselves should show."""
    lo, hi = rng.start_ms * 1_000_000, rng.stop_ms * 1_000_000
    inside = [p for p in points if lo <= p[3] < hi]
    out = {}
    kind = chk[0]
    if kind == "last":  # per tag value and interval: the newest value of each field
        _, measurement, tag, cols = chk
        newest = {}
        for m, tags, f, t in inside:
            if m != measurement:
                continue
            key = (((tag, tags.get(tag)),), t // 1_000_000 // rng.interval_ms)
            for alias, field in cols.items():
                if field in f and t >= newest.get((key, alias), (-1, None))[0]:
                    newest[(key, alias)] = (t, f[field])
        for (key, alias), (_, v) in newest.items():
            out.setdefault(key, {})[alias] = v
    elif kind == "failures":  # failed attempts per cause and interval (the glossary's failed)
        for m, tags, f, t in inside:
            if m == "task" and "attempt" in f and failed_attempt(tags, f):
                key = ((("cause", tags.get("cause")),), t // 1_000_000 // rng.interval_ms)
                out.setdefault(key, {"rate": 0.0})["rate"] += 1
    elif kind == "efficiency":  # sum cpu / sum (wall x cores) per category and interval
        acc = {}
        for m, tags, f, t in inside:
            if m == "task" and f.get("alloc_cores", 0) > 0 and "cpu_time_s" in f and "wall_time_s" in f:
                key = ((("category", tags.get("category")),), t // 1_000_000 // rng.interval_ms)
                a = acc.setdefault(key, [0.0, 0.0])
                a[0] += f["cpu_time_s"]
                a[1] += f["wall_time_s"] * f["alloc_cores"]
        out = {k: {"efficiency": a[0] / a[1] * 100} for k, a in acc.items() if a[1] > 0}
    elif kind == "means":  # per interval, all tasks
        acc = {}
        for m, tags, f, t in inside:
            if m != "task":
                continue
            key = ((), t // 1_000_000 // rng.interval_ms)
            for alias, field in chk[1].items():
                if field in f:
                    acc.setdefault((key, alias), []).append(f[field])
        for (key, alias), vs in acc.items():
            out.setdefault(key, {})[alias] = float(np.mean(np.array(vs)))
    elif kind == "table_last":
        _, measurement, by, cols = chk
        newest = {}
        for m, tags, f, t in inside:
            if m != measurement or (measurement == "task_energy" and tags.get("scope") != "category"):
                continue
            key = (tuple(sorted((b, tags.get(b)) for b in by)), None)
            for alias, (field, _) in cols.items():
                if field in f and t >= newest.get((key, alias), (-1, None))[0]:
                    newest[(key, alias)] = (t, f[field])
        for (key, alias), (_, v) in newest.items():
            out.setdefault(key, {})[alias] = v
    return out


def lp_compare(lang, chk, got, want):
    """None when the panel shows the points' numbers, else the first difference."""
    if chk[0] == "failures":
        got = {k: {"rate": next(iter(v.values()))} for k, v in got.items() if any(v.values())}
    for key in sorted(set(got) | set(want), key=str):
        g, w = got.get(key, {}), want.get(key)
        if w is None:
            if chk[0] in ("last", "failures") and not any(g.values()):
                continue
            if chk[0] == "last" and lang == "influxql":
                continue  # fill(previous) repeats the last value into empty intervals
            return "unexpected row %s: %s" % (key, g)
        for alias, wv in w.items():
            gv = g.get(alias)
            if chk[0] == "table_last":  # Flux shows the field itself, InfluxQL an alias, maybe scaled
                field, scale = chk[3][alias]
                gv = g.get(alias) if lang == "influxql" else g.get(field)
                wv = wv * scale if lang == "influxql" else wv
            elif chk[0] == "last" and lang == "flux":
                gv = g.get(chk[3][alias])
            if not same(gv, wv):
                return "%s %s: panel %r, points %r" % (key, alias, gv, wv)
    return None


def raw_values(lang, runner, queries, rng, variables, fields):
    """{field: sorted values} a raw-points panel returns."""
    out = {f: [] for f in fields}
    for q in queries:
        if lang == "influxql":
            for srs in runner.series(influxql_text(q, rng, variables)):
                for row in srs["values"]:
                    for c, v in zip(srs["columns"], row):
                        if c in out and v is not None:
                            out[c].append(float(v))
        else:
            for table in runner.tables(flux_text(q, rng, variables, runner.bucket)):
                for r in table:
                    for c, v in r.items():
                        c = fields[0] if c == "_value" and len(fields) == 1 else c
                        if c in out and v != "":
                            out[c].append(float(v))
    return {f: sorted(v) for f, v in out.items()}


def self_points(query, db):
    """The `tasklens` self-metric points as stored: [(tags, fields, t_ns)]."""
    doc = query('SELECT "lag", "queue_bytes", "spool_bytes" FROM "tasklens" GROUP BY "instance", "input"',
                db, epoch="ns")
    pts = []
    for res in doc.get("results", []):
        for srs in res.get("series", []):
            for row in srs["values"]:
                d = dict(zip(srs["columns"], row))
                t = d.pop("time")
                pts.append((srs.get("tags", {}), {k: v for k, v in d.items() if v is not None}, t))
    return pts


def self_expected(chk, pts, rng):
    _, field, tag, how = chk
    lo, hi = rng.start_ms * 1_000_000, rng.stop_ms * 1_000_000
    best = {}
    for tags, f, t in pts:
        if field not in f or not lo <= t < hi:
            continue
        key = (((tag, tags.get(tag)),), t // 1_000_000 // rng.interval_ms)
        cur = best.get(key)
        if how == "last":
            if cur is None or t >= cur[0]:
                best[key] = (t, float(f[field]))
        elif cur is None or float(f[field]) > cur[1]:
            best[key] = (t, float(f[field]))
    return {k: {"v": v} for k, (_, v) in best.items()}


def checked_panels(lang, kinds, extent_of):
    """(board, panel, range) for each panel of the set whose check is of one
    of these kinds, over the range a user would pick for its board."""
    for (blang, board), (_, panels) in BOARDS.items():
        if blang != lang:
            continue
        read = sorted(set(re.findall(r'FROM "(\w+)"', " ".join(q for p in panels for q in p.influxql))))
        rng = extent(extent_of(read))
        for p in panels:
            if p.check and p.check[0] in kinds:
                yield board, p, rng


def raw_and_self_truth(label, lang, runner, points, self_pts, extent_of):
    """The raw-point panels (scatter, histogram) against the points, and the
    self-metric gauges against the self-metric points as stored."""
    for board, p, rng in checked_panels(lang, ("raw", "self"), extent_of):
        queries = p.influxql if lang == "influxql" else p.flux
        variables = {"workflow": None, "host": None, "category": None, "instance": None, "input": None}
        if p.check[0] == "raw":
            fields = p.check[1]
            got = raw_values(lang, runner, queries, rng, variables, fields)
            lo, hi = rng.start_ms * 1_000_000, rng.stop_ms * 1_000_000
            want = {f: sorted(pf[f] for m, _, pf, t in points if m == "task" and f in pf and lo <= t < hi)
                    for f in fields}
            diff = [f for f in fields if len(got[f]) != len(want[f]) or
                    any(not same(a, b) for a, b in zip(got[f], want[f]))]
            check(not diff and all(want.values()), "%s: %s / %s: the raw values of %s equal the points' (%s)" % (
                label, board, p.title, ", ".join(fields), {f: (len(got[f]), len(want[f])) for f in fields}))
            continue
        got = runner.panel(queries, rng, variables, tag_keys=(p.check[2],))
        got = {k: {"v": next(iter(v.values()))} for k, v in got.items() if v}
        want = self_expected(p.check, self_pts, rng)
        bad = [k for k in set(got) | set(want) if not same(got.get(k, {}).get("v"), want.get(k, {}).get("v"))]
        check(not bad and want, "%s: %s / %s over %s: %d intervals equal the stored self-metric points%s" % (
            label, board, p.title, rng, len(want), "" if not bad else " -- first: %s panel %s, points %s" % (
                bad[0], got.get(bad[0]), want.get(bad[0]))))


def lp_truth(label, lang, runner, points, extent_of):
    for board, p, rng in checked_panels(lang, ("last", "failures", "efficiency", "means", "table_last"),
                                        extent_of):
        tag_keys = {"last": ("workflow",), "failures": ("cause",), "efficiency": ("category",),
                    "means": (), "table_last": p.check[2] if p.check[0] == "table_last" else ()}[p.check[0]]
        variables = {"workflow": None, "host": None, "category": None}
        try:
            got = runner.panel(p.influxql if lang == "influxql" else p.flux, rng, variables,
                               interval_key=p.check[0] != "table_last", tag_keys=tag_keys)
        except Exception as e:  # noqa: BLE001
            check(False, "%s: %s / %s: %s" % (label, board, p.title, e))
            continue
        want = lp_expected(p.check, points, rng)
        diff = lp_compare(lang, p.check, got, want)
        check(diff is None and want, "%s: %s / %s over %s: %d rows equal the points' own numbers%s" % (
            label, board, p.title, rng, len(want), "" if diff is None else " -- " + diff))


def generator_row(items, quantile_of):
    """A ResourceUsageSummary row from the generator's values of one label:
    quanta, integrated_runtime_hrs, and quantile_of(values, percent) per column."""
    vals = {"mem_GB": [v[0] for _, v in items], "runtime_s": [v[1] for _, v in items],
            "walltime_s": [v[2] for _, v in items]}
    row = {"quanta": float(len(items)), "integrated_runtime_hrs": sum(vals["runtime_s"]) / 3600}
    for prefix, vs in vals.items():
        for pc, c in zip(make_dashboards.PCT, make_dashboards.COLS):
            row["%s_%s" % (prefix, c)] = quantile_of(vs, pc)
    return row


def summary_equals(label, lang, runner, rng, expect):
    """The exact ResourceUsageSummary panel (InfluxQL) over the whole range, all categories:
    nearest-rank numbers from the generator's own values."""
    p = [p for p in BOARDS[(lang, "task-resources")][1] if p.title.startswith("Resource usage summary")][0]
    got = runner.panel(p.influxql, rng,
                       {"workflow": None, "host": None, "category": None}, interval_key=False)
    want = {lbl: generator_row(items, lambda vs, pc: nearest_rank(vs, pc, True) if 0 < pc < 100 else
                               quantile("influxql", vs, pc)) for lbl, items in expect.items()}
    source = "nearest-rank numbers from the generator (rank at least 1: no blank cell)"
    blank = [(lbl, k) for lbl, row in want.items() for k, v in row.items() if v is None]
    check(not blank and any(len(items) < 50 for items in expect.values()),
          "%s: every ResourceUsageSummary cell has a value, p001 of a category of fewer than 50 "
          "tasks included (%s)" % (label, blank[:3]))
    compared, diffs = 0, []
    for cat, w in want.items():
        g = got.get(((("category", cat),), None), {})
        for c, wv in w.items():
            compared += 1
            if not same(g.get(c), wv):
                diffs.append("%s.%s: panel %r, %r" % (cat, c, g.get(c), wv))
    check(not diffs and compared > 100, "%s: ResourceUsageSummary panel over the whole range equals %s: "
          "%d numbers over %d tasks %s" % (label, source, compared, len(want), "; ".join(diffs[:3])))


# ---------------------------------------------------------------- servers
def run_config(state, run_dir, sink):
    return f"""sources:
  - type: file
    path: {os.path.join(REPO, "tests", "data", "wq", "demo-cctools-9.9.log")}
    parser: wq
  - type: dir
    path: {run_dir}
    parser: lsst
sinks:
  - type: influxdb
{sink}
    spool_dir: {state}/spool
aggregate: {{window: 60}}
checkpoint_dir: {state}/ck
flush_interval: 200
cumulative_interval: 1
quiet: true
"""


def fill(state, run_dir, sink_yaml, count_tasks, env=None, write=None):
    """tasklens run until both sources' task points are in, then SIGTERM; the
    insight points posted after."""
    os.makedirs(state, exist_ok=True)
    cfg = os.path.join(state, "run.yaml")
    with open(cfg, "w") as f:
        f.write(run_config(state, run_dir, sink_yaml))
    p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=env)
    deadline = time.time() + 90
    while time.time() < deadline and count_tasks() < 2:
        time.sleep(0.3)
    time.sleep(3)  # a few self-metrics points
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    check(p.returncode == 0 and count_tasks() == 2, "tasklens run filled both sources' task points, exit %d %s" % (
        p.returncode, err[-300:]))
    wq_log = os.path.join(REPO, "tests", "data", "wq", "demo-cctools-9.9.log")
    posted = []
    for cmd in (["advise"], ["plan", "--node", "cores=128,mem=512GiB", "--node", "cores=8,mem=16GiB"],
                ["energy"]):
        r = subprocess.run([TASKLENS] + cmd + ["--format", "lp", "-q", wq_log, run_dir], capture_output=True)
        check(r.returncode == 0 and r.stdout.count(b"\n") >= 5, "tasklens %s --format lp: %d lines %s" % (
            cmd[0], r.stdout.count(b"\n"), r.stderr.decode()[-300:]))
        write(r.stdout)
        posted.append(r.stdout.decode())
    r = subprocess.run([TASKLENS, "lines", "-q", wq_log, run_dir], capture_output=True, text=True)
    return parse_lp(r.stdout + "".join(posted))


def main():
    static_checks()
    tmp = tempfile.mkdtemp(prefix="tl-grafana-")
    lsst_root = os.path.join(tmp, "repo")
    expect, _ = lsst_summary.generate(lsst_root, 240, random.Random(7))
    run_dir = os.path.join(lsst_root, lsst_summary.RUN)
    bursts_root = os.path.join(tmp, "bursts")
    tasks = generate_bursts(bursts_root)
    bursts_dir = os.path.join(bursts_root, lsst_summary.RUN)

    # ---- InfluxDB 1.x: InfluxQL
    with Influxd() as db:
        r = subprocess.run([TASKLENS, "lines", "--influx-url", db.url, "--influx-db", "bursts",
                            "--influx-create-db", "--spool-dir", os.path.join(tmp, "spool-b1"), "-q", bursts_dir],
                           capture_output=True, text=True)
        check(r.returncode == 0, "1.x: tasklens lines wrote the truth tasks %s" % r.stderr[-300:])
        truth_checks("1.x InfluxQL", "influxql", InfluxQLRunner(db.query, "bursts"), tasks)

        def count1():
            try:
                return len(db.rows('SELECT count("attempt") FROM "task" GROUP BY "source"', "tasklens"))
            except Exception:  # noqa: BLE001  (the sink creates the database)
                return 0
        points = fill(tmp + "/v1", run_dir, "    url: %s\n    db: tasklens\n    create_db: true" % db.url, count1,
             write=lambda body: db.write("tasklens", body))
        rng = extent(first_last_iql(db.query, "tasklens", ["task"]))
        iql = InfluxQLRunner(db.query, "tasklens")
        every_query("1.x InfluxQL", "influxql", influxql_text, iql.series,
                    lambda ms: first_last_iql(db.query, "tasklens", ms))
        summary_equals("1.x InfluxQL", "influxql", iql, rng, expect)
        lp_truth("1.x InfluxQL", "influxql", iql, points, lambda ms: first_last_iql(db.query, "tasklens", ms))
        raw_and_self_truth("1.x InfluxQL", "influxql", iql, points, self_points(db.query, "tasklens"),
                           lambda ms: first_last_iql(db.query, "tasklens", ms))

    promql_checks(tmp, tasks, bursts_dir, run_dir, expect)

    # ---- InfluxDB 2.7: Flux, and InfluxQL through DBRP
    if not influxd2_harness.binary():
        print("SKIP InfluxDB 2.x checks: influxd 2.7 is not built (bash scripts/build-influxd2.sh)")
        return
    with influxd2_harness.Influxd2() as db2:
        env = dict(os.environ, INFLUX_TOKEN=db2.token)
        db2.create_bucket("bursts")
        db2.dbrp("bursts", "bursts")
        db2.dbrp()
        r = subprocess.run([TASKLENS, "lines", "--influx-url", db2.url, "--influx-org", db2.org,
                            "--influx-bucket", "bursts", "--spool-dir", os.path.join(tmp, "spool-b2"), "-q",
                            bursts_dir], capture_output=True, text=True, env=env)
        check(r.returncode == 0, "2.7: tasklens lines wrote the truth tasks through /api/v2/write %s" % r.stderr[-300:])
        truth_checks("2.7 Flux", "flux", FluxRunner(db2, "bursts"), tasks)
        truth_checks("2.7 InfluxQL (DBRP)", "influxql", InfluxQLRunner(db2.influxql, "bursts"), tasks)

        def count2():
            try:
                return len(db2.influxql('SELECT count("attempt") FROM "task" GROUP BY "source"')["results"][0]
                           .get("series", []))
            except Exception:  # noqa: BLE001
                return 0
        points = fill(tmp + "/v2", run_dir, "    url: %s\n    org: %s\n    bucket: %s\n    token: ${INFLUX_TOKEN}" % (
            db2.url, db2.org, db2.bucket), count2, env=env, write=db2.write)
        rng = extent(first_last_iql(db2.influxql, db2.bucket, ["task"]))
        flux = FluxRunner(db2, db2.bucket)
        span = lambda ms: first_last_iql(db2.influxql, db2.bucket, ms)  # noqa: E731
        every_query("2.7 Flux", "flux", lambda q, r, v: flux_text(q, r, v, db2.bucket), db2.flux, span)
        iql2 = InfluxQLRunner(db2.influxql, db2.bucket)
        every_query("2.7 InfluxQL (DBRP)", "influxql", influxql_text, iql2.series, span)
        summary_hist_equals("2.7 Flux", "flux", flux, rng, expect)
        summary_equals("2.7 InfluxQL (DBRP)", "influxql", iql2, rng, expect)
        lp_truth("2.7 Flux", "flux", flux, points, span)
        lp_truth("2.7 InfluxQL (DBRP)", "influxql", iql2, points, span)
        own = self_points(db2.influxql, db2.bucket)
        raw_and_self_truth("2.7 Flux", "flux", flux, points, own, span)
        raw_and_self_truth("2.7 InfluxQL (DBRP)", "influxql", iql2, points, own, span)


def promql_checks(tmp, tasks, bursts_dir, run_dir, expect):
    """The PromQL set on a real VictoriaMetrics, fed through its InfluxDB
    /write by the influxdb sink: the truth scenarios, every query, and the
    ResourceUsageSummary over the whole run within alpha of the generator's."""
    if not prom_harness.available("victoria-metrics"):
        print("SKIP PromQL checks: victoria-metrics is not installed (scripts/install-deps.sh)")
        return
    label = "VictoriaMetrics PromQL"
    with prom_harness.VictoriaMetrics() as vm:
        r = subprocess.run([TASKLENS, "lines", "--influx-url", vm.url, "--influx-db", "bursts", "--spool-dir",
                            os.path.join(tmp, "spool-vm"), "-q", bursts_dir], capture_output=True, text=True)
        vm.flush()
        check(r.returncode == 0, "%s: tasklens lines wrote the truth tasks through /write %s" % (label, r.stderr[-300:]))
        truth_checks(label, "promql", PromRunner(vm), tasks)
    with prom_harness.VictoriaMetrics() as vm:
        wq_log = os.path.join(REPO, "tests", "data", "wq", "demo-cctools-9.9.log")
        r = subprocess.run([TASKLENS, "lines", "--influx-url", vm.url, "--influx-db", "tl", "--spool-dir",
                            os.path.join(tmp, "spool-vm2"), "-q", wq_log, run_dir], capture_output=True, text=True)
        vm.flush()
        check(r.returncode == 0, "%s: tasklens lines wrote the Work Queue log and the LSST run %s" % (
            label, r.stderr[-300:]))
        pts = [p for p in parse_lp(r.stdout) if p[0] == "task"]
        lp = subprocess.run([TASKLENS, "lines", "-q", wq_log, run_dir], capture_output=True, text=True).stdout
        t_ns = [p[3] for p in parse_lp(lp) if p[0] == "task"]
        rng = extent((min(t_ns) // 1_000_000, max(t_ns) // 1_000_000))
        promql_every_query(label, vm, rng)
        summary_hist_equals(label, "promql", PromRunner(vm), rng, expect)
        overview_equals_points(label, vm, rng, parse_lp(lp), summary_failed(wq_log))
        del pts


def summary_failed(path):
    """`tasklens summary`'s failed tasks of one input: the number the gauges must end at."""
    out = subprocess.run([TASKLENS, "summary", "--format", "json", path], capture_output=True, text=True,
                         check=True).stdout
    return sum(g["failed"] for g in json.loads(out)["groups"])


def overview_equals_points(label, vm, rng, points, failed):
    """The PromQL workflow overview over the whole range (its own queries, the
    interval set to the range) against the points it was fed: tasks finished
    per category (the final task points with a wall time) and each
    workflow's last gauges; the failed gauge ends at `summary`'s failed."""
    panels = {p.title: p for p in BOARDS[("promql", "workflow-overview")][1]}
    whole = Range(rng.start_ms, rng.stop_ms, rng.stop_ms - rng.start_ms)
    allv = {"workflow": None, "category": None, "host": None}
    (expr, _), = panels["Tasks finished per minute"].hist.promql
    got = {labels.get("category"): v * whole.interval_ms / 60000
           for labels, [(_, v)] in PromRunner(vm).run(expr, whole, allv, True)}
    want = {}
    for m, tags, f, t in points:
        if m == "task" and "wall_time_s" in f and tags.get("retried") != "true":
            want[tags.get("category")] = want.get(tags.get("category"), 0) + 1
    check(set(got) == set(want) and all(abs(got[c] - want[c]) < 1e-6 for c in want),
          "%s: workflow overview: tasks finished over the range per category = the final task points "
          "(%d categories, %d tasks) %s" % (label, len(want), sum(want.values()),
                                           "" if got == want else "got %s want %s" % (got, want)))
    last = {}
    for m, tags, f, t in points:
        if m == "workflow" and t >= last.get(tags.get("workflow"), (-1, None))[0]:
            last[tags.get("workflow")] = (t, f)
    for expr, legend in panels["Tasks waiting / running / done / failed"].hist.promql:
        field = "tasks_" + legend.split()[-1]
        got = {labels.get("workflow"): v for labels, [(_, v)] in PromRunner(vm).run(expr, whole, allv, True)}
        want = {w: f[field] for w, (_, f) in last.items() if field in f}
        check(got == want, "%s: workflow overview: last %s per workflow = the points' %s" % (
            label, field, "" if got == want else "got %s want %s" % (got, want)))
    got_failed = sum(f["tasks_failed"] for _, f in last.values())
    check(got_failed == failed, "%s: the failed gauges end at summary's failed tasks (%d, %d)" % (
        label, got_failed, failed))


def promql_every_query(label, vm, rng):
    """Every variable and target of the PromQL set runs and returns data."""
    for (blang, board), (d, panels) in BOARDS.items():
        if blang != "promql":
            continue
        allv = {v["name"]: None for v in d["templating"]["list"] if v["name"] != "hwin"}
        for v in d["templating"]["list"]:
            if v["name"] == "hwin":  # hidden: the windows the panels read, from the range
                got = PromRunner(vm).hwin(v["definition"], rng)
                want = make_dashboards.prom_level((rng.stop_ms - rng.start_ms) // 1000)
                check(got == [want], "%s: %s variable $hwin over %s -> %s (%s)" % (label, board, rng, got, want))
                continue
            m = re.match(r"label_values\((\w+), (\w+)\)", v["query"])
            vals = vm.label_values(m.group(2), m.group(1), rng.start_ms / 1000, rng.stop_ms / 1000)
            # workflow and host are labels only when the run groups by them (`by`)
            check(vals or v["name"] != "category", "%s: %s variable $%s -> %d values" % (
                label, board, v["name"], len(vals)))
        for p in d["panels"]:
            for t in p["targets"]:
                q = promql_text(t["expr"].replace("$hwin", make_dashboards.prom_level(
                    (rng.stop_ms - rng.start_ms) // 1000)), rng, allv)
                try:
                    out = PromRunner(vm).run(t["expr"], rng, allv, t["instant"])
                    err = None
                except Exception as e:  # noqa: BLE001
                    out, err = [], str(e)
                check(err is None and out and not unsubstituted(q), "%s: %s / %s / %s: %d series %s" % (
                    label, board, p["title"], t["refId"], len(out), (err or "")[:300]))


def summary_hist_equals(label, lang, runner, rng, expect):
    """The histogram ResourceUsageSummary over the whole run: counts and sums
    exact, p000 and p100 exact, the rest within alpha plus one bucket of the
    generator's own values."""
    p = [p for p in BOARDS[(lang, "task-resources")][1] if p.title.startswith("Resource usage summary")][0]
    got = runner.panel(panel_queries(p, lang), rng, {"workflow": None, "host": None, "category": None},
                       interval_key=False)
    compared, diffs = 0, []
    for lbl, items in expect.items():
        want = generator_row(items, lambda vs, pc: hist_value(("q", pc), vs))
        g = got.get(((("category", lbl),), None), {})
        for c, wv in want.items():
            compared += 1
            if not same(g.get(c), wv):
                diffs.append("%s.%s: panel %r, generator %r" % (lbl, c, g.get(c), wv))
    check(not diffs and compared > 100, "%s: ResourceUsageSummary (histogram form) over the whole run: %d "
          "numbers within alpha plus one bucket of the generator's (p000, p100, counts and sums exact) %s" % (
              label, compared, "; ".join(diffs[:3])))


FIELD_OF = {"task": "attempt", "workflow": "workers", "tasklens": "lines", "task_advice": "attempts",
            "task_plan": "tasks", "task_energy": "kwh"}


def first_last_iql(query, db, measurements):
    """The first and last time (ms) of the points of these measurements."""
    lo = hi = None
    for m in measurements:
        f = FIELD_OF[m]
        for fn in ("first", "last"):
            doc = query('SELECT %s("%s") FROM "%s"' % (fn, f, m), db, epoch="ms")
            for res in doc.get("results", []):
                for s in res.get("series", []):
                    t = s["values"][0][0]
                    lo = t if lo is None else min(lo, t)
                    hi = t if hi is None else max(hi, t)
    return lo, hi


if __name__ == "__main__":
    main()
    sys.exit(finish())
