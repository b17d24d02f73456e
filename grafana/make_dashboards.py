#!/usr/bin/env python3
"""Writes grafana/dashboards/{influxql,flux}/*.json and the per-panel table of
grafana/README.md: the source of truth for the panels.

    python3 grafana/make_dashboards.py        # rewrite both sets and the README table

Two sets of the same four dashboards, on the schema of shared/DESIGN.md:
- influxql/: InfluxQL, data source uid `tasklens-influxdb` (InfluxDB 1.x, or
  2.x through a DBRP mapping);
- flux/: Flux, data source uid `tasklens-influxdb-flux` (InfluxDB 2.x).

The rule every panel keeps (DESIGN.md, Sketch): a quantile is the quantile of
exactly the tasks whose `task` points fall in the selected range (and, on a
time axis, in each interval) and match the selected variables. So quantile
panels read the raw `task` points: InfluxQL PERCENTILE() (nearest rank),
Flux quantile(method: "exact_mean") (linear interpolation, as numpy and
`tasklens summary` compute). No panel shows last()/max()/mean() of stored
per-window quantiles. Panels that cannot follow the range (the insight
tables, written by `tasklens advise/plan/energy --format lp` over their own
inputs) say so in their titles.

Each panel is a Panel: both queries, plus `method`, the one line on what it
computes and its error bound that grafana/README.md lists.
tests/integration/grafana_panels.py runs every query of both sets against a
real InfluxDB 1.x and 2.7 and compares the quantile panels with numbers
computed from the input itself.
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
DS = {"influxql": {"type": "influxdb", "uid": "tasklens-influxdb"},
      "flux": {"type": "influxdb", "uid": "tasklens-influxdb-flux"},
      "promql": {"type": "prometheus", "uid": "tasklens-victoriametrics"}}
GIB = 1073741824

# ------------------------------------------------------------------ InfluxQL
WF = '("workflow" =~ /^$workflow$/)'
CAT = '("category" =~ /^$category$/)'
HOST = '("host" =~ /^$host$/)'
TASKS = "%s AND %s AND %s" % (WF, CAT, HOST)
FINAL = TASKS + ' AND "retried" != \'true\''  # each task's last attempt, as `tasklens summary` takes

# ------------------------------------------------------------------ Flux
# Tag filters sit right after range() so InfluxDB pushes them into storage,
# where an absent tag matches as "" (as in InfluxQL): All (.*) keeps tasks
# without a host.
FTASKS = ('  |> filter(fn: (r) => r.workflow =~ /^${workflow:regex}$/ and '
          'r.category =~ /^${category:regex}$/ and r.host =~ /^${host:regex}$/)\n')
FCAT = '  |> filter(fn: (r) => r.category =~ /^${category:regex}$/)\n'
FINST = ('  |> filter(fn: (r) => r.instance =~ /^${instance:regex}$/ and '
         'r.input =~ /^${input:regex}$/)\n')


def fsrc(measurement, fields, tags=FTASKS):
    """from |> range |> the measurement's fields |> the tag filters."""
    fl = " or ".join('r._field == "%s"' % f for f in fields)
    return ('from(bucket: v.defaultBucket)\n'
            '  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)\n'
            '  |> filter(fn: (r) => r._measurement == "%s" and (%s))\n' % (measurement, fl) + tags)


def fvalues(metric, final_only, tags=FTASKS):
    """The `task` values of one metric; final_only keeps each task's last
    attempt (points without the `retried` tag), as `tasklens summary` does."""
    return fsrc("task", [metric], tags) + (
        '  |> filter(fn: (r) => r.retried != "true")\n' if final_only else "")


def fagg(fn):
    """A Flux aggregate call for a spec: ("q", 0.95) quantile, or a name."""
    if isinstance(fn, tuple):
        return 'quantile(q: %s, method: "exact_mean"%s)' % (fn[1], "%s")
    return fn + "(%s)"


def flux_table(columns, final_only, tags=FTASKS, by=("category",)):
    """One row per `by` value over the whole range: columns are
    (name, field, fn, scale) with fn ("q", Q), "count", "sum", "min", "max",
    "median"; a field is read once per column."""
    keys = ", ".join('"%s"' % b for b in by)
    parts = []
    for name, field, fn, scale in columns:
        call = fagg(fn) % "" if isinstance(fn, tuple) else (
            'quantile(q: 0.5, method: "exact_mean")' if fn == "median" else fn + "()")
        rec = ", ".join("%s: r.%s" % (b, b) for b in by)
        parts.append('  %s\n    |> group(columns: [%s])\n    |> %s\n'
                     '    |> map(fn: (r) => ({%s, _field: "%s", _value: float(v: r._value)%s}))'
                     % (fvalues(field, final_only, tags).replace("\n", "\n    ").rstrip(), keys, call,
                        rec, name, " * %s" % scale if scale != 1 else ""))
    streams = parts[0].strip() + "\n" if len(parts) == 1 else "union(tables: [\n" + ",\n".join(parts) + "\n])\n"
    return (streams +
            "  |> group(columns: [%s])\n"
            '  |> pivot(rowKey: [%s], columnKey: ["_field"], valueColumn: "_value")\n'
            "  |> group()\n"
            "  |> sort(columns: [%s])" % (keys, keys, keys))


def flux_last_table(measurement, fields, by, tags="", where=""):
    """The newest value of each field per `by` group, one row per group."""
    keys = ", ".join('"%s"' % b for b in by)
    fill = "".join('  |> map(fn: (r) => ({r with %s: if exists r.%s then r.%s else ""}))\n' % (b, b, b)
                   for b in by)  # a tag some points lack (the plan's `total` has no binds)
    return (fsrc(measurement, fields, tags) + where +
            '  |> last()\n  |> toFloat()\n' + fill +
            '  |> group(columns: [%s])\n'
            '  |> pivot(rowKey: [%s], columnKey: ["_field"], valueColumn: "_value")\n'
            '  |> group()\n'
            '  |> sort(columns: [%s])' % (keys, keys, keys))


# ------------------------------------------------------------------ histograms
# `task_histogram` points (shared/DESIGN.md): per closed window (60 s), group
# and metric, one point per sketch bucket the window touched, tagged
# vmrange="<lo>...<hi>" (bounds fixed by alpha alone, the same in every
# window and instance) and the same bounds as numbers in `lo` and `hi`,
# field `bucket` = its count; and one point with the
# window's count, sum, min and max. A quantile over any range is the
# quantile of the buckets summed over the windows in it: within alpha plus
# one bucket, at the cost of the windows, not of the tasks. A window counts
# where its end falls: a range's edges are rounded to the window.
# Which windows a histogram panel reads (tasklens writes 60 s windows and,
# merged from them, 600 s and 3600 s ones: aggregate.histogram_windows): the
# coarsest that still fits the graph's interval, or the range of a table,
# so a day or a week costs hundreds of windows, not tens of thousands. A
# table over more than 6 hours rounds its edges to 10 minutes, over more
# than 3 days to the hour. Grafana draws at most HIST_POINTS points.
HIST_POINTS = 100
HIST_LEVELS = [(3600, 3 * 86400), (600, 6 * 3600), (60, 0)]  # (window s, range above which a table reads it)
FLUX_LEVEL_INTERVAL = (
    'hwin = if int(v: v.windowPeriod) >= 3600000000000 then "3600s"\n'
    '    else if int(v: v.windowPeriod) >= 600000000000 then "600s" else "60s"\n')
FLUX_LEVEL_RANGE = (
    'span = int(v: v.timeRangeStop) - int(v: v.timeRangeStart)\n'
    'hwin = if span > %d then "3600s" else if span > %d then "600s" else "60s"\n'
    % (HIST_LEVELS[0][1] * 10**9, HIST_LEVELS[1][1] * 10**9))


def fhist_src(metrics, fields, tags=FTASKS):
    """The task_histogram points of some metrics and fields, of the windows
    `hwin` names."""
    ml = " or ".join('r.metric == "%s"' % m for m in metrics)
    fl = " or ".join('r._field == "%s"' % f for f in fields)
    return ('from(bucket: v.defaultBucket)\n'
            '  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)\n'
            '  |> filter(fn: (r) => r._measurement == "task_histogram" and r.window == hwin and (%s) and (%s))\n'
            % (fl, ml) + tags)


def fhist_cumulative(sums, keys):
    """Summed buckets (one row per bucket, by keys) -> cumulative counts
    over `le`, as histogramQuantile() wants them. Each bucket's lower bound
    is added as a zero-count row: the buckets are sparse, and the
    interpolation must start at the bucket's own lower bound, not at the
    previous bucket that had tasks. (No regrouping by `le`: a table per
    row is what made a day's graph take minutes.)"""
    cols = ", ".join("%s: r.%s" % (k, k) for k in keys)
    klist = ", ".join('"%s"' % k for k in keys)
    # the bounds from the lo/hi tags: float() of a tag runs in Flux's
    # vectorized map; strings.split of vmrange cost ~24 us a row (28.8 s for
    # a day's graph, bench/RESULTS.md)
    bound = 'float(v: r.%s)'
    return ('union(tables: [\n'
            '    %s |> map(fn: (r) => ({%s, le: %s, _value: float(v: r._value)})),\n'
            '    %s |> map(fn: (r) => ({%s, le: %s, _value: 0.0}))])\n'
            '  |> group(columns: [%s])\n  |> sort(columns: ["le"])\n  |> cumulativeSum()\n'
            % (sums, cols, bound % "hi", sums, cols, bound % "lo", klist))


def flux_hist_interval(metric, qs, by="category", tags=FTASKS):
    """p-quantiles of one metric per `by` value and interval, from the
    buckets of the windows ending in each interval; 100 is the max field."""
    keys = [by, "_time"]
    out = [FLUX_LEVEL_INTERVAL +
           'sums = ' + fhist_src([metric], ["bucket"], tags) +
           '  |> group(columns: ["%s", "lo", "hi"])\n'
           '  |> aggregateWindow(every: v.windowPeriod, fn: sum, timeSrc: "_start", createEmpty: false)\n'
           % by + 'hist = ' + fhist_cumulative("sums", keys)]
    parts = []
    for alias, q in qs:
        if q == 100:
            parts.append('    %s  |> group(columns: ["%s"])\n'
                         '  |> aggregateWindow(every: v.windowPeriod, fn: max, timeSrc: "_start", '
                         'createEmpty: false)\n  |> set(key: "_field", value: "%s")'
                         % (fhist_src([metric], ["max"], tags), by, alias))
        else:
            parts.append('    hist |> histogramQuantile(quantile: %s) |> set(key: "_field", value: "%s")'
                         % (q / 100, alias))
    out.append('union(tables: [\n%s])\n  |> group(columns: ["%s", "_field"])\n  |> sort(columns: ["_time"])'
               % (",\n".join(parts), by))
    return "".join(out)


def flux_hist_table(columns, by=("category",), tags=FTASKS):
    """One row per `by` value over the whole range: columns are (name,
    metric, fn, scale) with fn ("q", Q) from the summed buckets, or
    "count"/"sum" (summed window counts and sums), "min"/"max" (of the
    windows' min and max: exact p0 and p100)."""
    keys = list(by)
    klist = ", ".join('"%s"' % k for k in keys)
    rec = ", ".join("%s: r.%s" % (k, k) for k in keys)
    qmetrics = sorted({m for _, m, fn, _ in columns if isinstance(fn, tuple) and fn[1] not in (0, 1)})
    text = FLUX_LEVEL_RANGE
    if qmetrics:
        text += ('sums = ' + fhist_src(qmetrics, ["bucket"], tags) +
                 '  |> group(columns: [%s, "metric", "lo", "hi"])\n  |> sum()\n' % klist +
                 'hist = ' + fhist_cumulative("sums", keys + ["metric"]))
    parts = []
    for name, metric, fn, scale in columns:
        sc = " * %s" % scale if scale != 1 else ""
        if isinstance(fn, tuple) and fn[1] not in (0, 1):
            src = 'hist |> filter(fn: (r) => r.metric == "%s") |> histogramQuantile(quantile: %s)' % (metric, fn[1])
        else:
            field, agg = {"count": ("count", "sum"), "sum": ("sum", "sum"), "min": ("min", "min"),
                          "max": ("max", "max")}[fn if not isinstance(fn, tuple) else ("min" if fn[1] == 0 else "max")]
            src = ('(%s  |> group(columns: [%s])\n  |> %s())'
                   % (fhist_src([metric], [field], tags).replace("\n", "\n    "), klist, agg))
        parts.append('    %s\n    |> map(fn: (r) => ({%s, _field: "%s", _value: float(v: r._value)%s}))'
                     % (src, rec, name, sc))
    return (text + 'union(tables: [\n%s])\n' % ",\n".join(parts) +
            "  |> group(columns: [%s])\n"
            '  |> pivot(rowKey: [%s], columnKey: ["_field"], valueColumn: "_value")\n'
            "  |> group()\n"
            "  |> sort(columns: [%s])" % (klist, klist, klist))


# PromQL (VictoriaMetrics): a line-protocol field is the series
# <measurement>_<field> with the point's tags as labels; histogram_quantile
# reads the vmrange buckets summed with sum_over_time over the interval or
# the range (exact sums: the windows' counts are gauges, not counters).
PSEL = 'category=~"$category",workflow=~"$workflow",host=~"$host"'


# PromQL cannot choose a label by the range inside a query without
# evaluating every choice, so a hidden dashboard variable does: $hwin, the
# windows to read, from the range (refreshed when the range changes): 3600 s
# windows beyond 100 hours, 600 s beyond 1000 minutes (a graph of 100
# points then has intervals at least that long), else 60 s.
PROM_LEVELS = [(3600, 360000), (600, 60000), (60, 0)]  # (window s, range above which it is read)
PROM_HWIN = " or ".join(
    'label_replace((vector($__range_s) > %d)%s, "w", "%ds", "", "")'
    % (above, " <= %d" % PROM_LEVELS[i - 1][1] if i else "", w) if above else
    'label_replace(vector($__range_s) <= %d, "w", "%ds", "", "")' % (PROM_LEVELS[i - 1][1], w)
    for i, (w, above) in enumerate(PROM_LEVELS))


def prom_level(span_s):
    """What $hwin holds for a range of span_s seconds."""
    return next("%ds" % w for w, above in PROM_LEVELS if span_s > above or not above)


def psel(field, metric):
    return 'task_histogram_%s{metric="%s",window="$hwin",%s}' % (field, metric, PSEL)


def prom_quantile(metric, q, span, by="category"):
    return ('histogram_quantile(%s, sum by (%s, vmrange) (sum_over_time(%s[%s])))'
            % (q, by, psel("bucket", metric), span))


def prom_agg(metric, fn, span, by="category"):
    """count / sum (of the windows'), min / max (of the windows' min, max)."""
    field, outer, inner = {"count": ("count", "sum", "sum_over_time"), "sum": ("sum", "sum", "sum_over_time"),
                           "min": ("min", "min", "min_over_time"), "max": ("max", "max", "max_over_time")}[fn]
    return "%s by (%s) (%s(%s[%s]))" % (outer, by, inner, psel(field, metric), span)


def prom_interval(metric, qs):
    """[(expr, legend)] per category and interval."""
    return [(prom_agg(metric, "max", "$__interval") if q == 100 else
             prom_quantile(metric, q / 100, "$__interval"), "{{category}} %s" % alias) for alias, q in qs]


def prom_table_one(columns):
    """[(expr, "@col")]: the whole table as one instant query over the range,
    each column a series labelled col=<name> (MetricsQL: union, label_set,
    and histogram_quantiles for all quantiles of a metric from one sum of
    its buckets): one round trip instead of one per column."""
    parts, quantiles = [], {}
    for name, metric, fn, scale in columns:
        sc = " * %r" % scale if scale != 1 else ""
        if isinstance(fn, tuple) and fn[1] not in (0, 1):
            quantiles.setdefault((metric, scale), []).append((fn[1], name))
            continue
        agg = ("min" if fn[1] == 0 else "max") if isinstance(fn, tuple) else fn
        parts.append('label_set(%s%s, "col", "%s")' % (prom_agg(metric, agg, "$__range"), sc, name))
    for (metric, scale), qs in quantiles.items():
        sc = " * %r" % scale if scale != 1 else ""
        phis = ", ".join(repr(q) for q, _ in qs)
        names = ", ".join('"%r", "%s"' % (q, n) for q, n in qs)
        parts.append('label_map(histogram_quantiles("col", %s, sum by (category, vmrange) (sum_over_time(%s[$__range]))), '
                     '"col", %s)%s' % (phis, psel("bucket", metric), names, sc))
    return [("union(\n  " + ",\n  ".join(parts) + "\n)", "@col")]


def prom_table(columns):
    """[(expr, column)] over the range, one instant query per column."""
    out = []
    for name, metric, fn, scale in columns:
        if isinstance(fn, tuple):
            e = (prom_agg(metric, "min" if fn[1] == 0 else "max", "$__range") if fn[1] in (0, 1) else
                 prom_quantile(metric, fn[1], "$__range"))
        else:
            e = prom_agg(metric, fn, "$__range")
        out.append((e + (" * %r" % scale if scale != 1 else ""), name))
    return out


# ------------------------------------------------------------------ panels
class Panel:
    """A panel in both languages. check: what tests/integration/grafana_panels.py
    compares with its own computation from the input:
      ("interval", metric, [(alias, fn)]): per category and interval;
      ("range", metric-by-alias): per category over the whole range;
    final: the panel reads only each task's last attempt;
    cost: {language: what the query costs}, measured by bench/dashboard_cost.py;
    units: {column: Grafana unit} where a table's column is not in the panel's unit."""

    def __init__(self, title, desc, unit, influxql, flux, method, kind="timeseries", w=12, h=8,
                 fmt="time_series", extra=None, check=None, final=False, cost=None, hist=None,
                 units=None):
        self.__dict__.update(locals())
        del self.__dict__["self"]


class Hist:
    """A panel's histogram form (task_histogram buckets): the Flux queries
    that replace the exact ones in the Flux set, the PromQL targets
    [(expr, legend or column)] of the PromQL set, the description both
    show, and what their checks read (each task's last attempt)."""

    def __init__(self, desc, flux, promql, instant=False, columns=None, quantiles=True):
        self.desc, self.flux, self.promql, self.instant = desc, flux, promql, instant
        self.quantiles = quantiles  # False: counts and gauges, no quantile method to state
        self.columns = columns  # a table's columns in order (PromQL: one query, cells by label)


def variables(lang):
    def var(name, iql, flux, label=None):
        q = iql if lang == "influxql" else flux if lang == "flux" else \
            "label_values(task_histogram_count, %s)" % name
        return {"name": name, "label": label or name, "type": "query", "datasource": DS[lang],
                "query": q, "definition": q, "refresh": 2, "includeAll": True, "allValue": ".*",
                "multi": True, "sort": 1,
                "current": {"selected": True, "text": ["All"], "value": ["$__all"]}}

    def ftags(tag, measurement, pred=""):
        return ('import "influxdata/influxdb/schema"\n'
                'schema.tagValues(bucket: v.defaultBucket, tag: "%s", predicate: (r) => '
                'r._measurement == "%s"%s, start: v.timeRangeStart, stop: v.timeRangeStop)'
                % (tag, measurement, pred))

    wf_pred = ' and r.workflow =~ /^${workflow:regex}$/'
    hwin = {"name": "hwin", "label": "histogram windows", "type": "query", "datasource": DS[lang],
            "query": {"query": "query_result(%s)" % PROM_HWIN, "refId": "hwin"},
            "definition": "query_result(%s)" % PROM_HWIN, "regex": '/w="([^"]+)"/', "refresh": 2,
            "hide": 2, "includeAll": False, "multi": False,
            "description": "the task_histogram windows the panels read, chosen from the range"}
    return {
        "hwin": hwin,
        # the PromQL overview's workflows are the manager gauges' (histograms have a
        # workflow label only when the run groups by it)
        "gworkflow": dict(var("workflow", "", ""), query="label_values(workflow_tasks_waiting, workflow)",
                          definition="label_values(workflow_tasks_waiting, workflow)"),
        "workflow": var("workflow", 'SHOW TAG VALUES FROM "task" WITH KEY = "workflow"',
                        ftags("workflow", "task")),
        "category": var("category", 'SHOW TAG VALUES FROM "task" WITH KEY = "category" WHERE ' + WF,
                        ftags("category", "task", wf_pred)),
        "host": var("host", 'SHOW TAG VALUES FROM "task" WITH KEY = "host" WHERE ' + WF,
                    ftags("host", "task", wf_pred)),
        "icategory": var("category", 'SHOW TAG VALUES FROM "task_advice" WITH KEY = "category"',
                         ftags("category", "task_advice")),
        "instance": var("instance", 'SHOW TAG VALUES FROM "tasklens" WITH KEY = "instance"',
                        ftags("instance", "tasklens")),
        "input": var("input", 'SHOW TAG VALUES FROM "tasklens" WITH KEY = "input" WHERE '
                     '("instance" =~ /^$instance$/)',
                     ftags("input", "tasklens", ' and r.instance =~ /^${instance:regex}$/')),
    }


# bench/RESULTS.md: one day of 100 tasks/s in InfluxDB 1.6 and 2.7
COST_INTERVAL = {"influxql": "~1 s for an hour, ~15-30 s for a day",
                 "flux": "~5 s for an hour, ~90 s for a day"}
EXACT_IQL = ("InfluxQL PERCENTILE() over the raw `task` points: exact, nearest rank (the value "
             "at rank round(q*n), empty where that rank is below 1, e.g. p01 of fewer than 50 tasks)")
EXACT_FLUX = ("Flux quantile(method: \"exact_mean\") over the raw `task` points: exact, linear "
              "interpolation between the two nearest ranks (numpy's default, as `tasklens "
              "summary` computes)")


def quantile_interval_panel(title, metric, qs, unit, what):
    """p-quantiles (and max) of one metric per category in each interval,
    over each task's last attempt (as `tasklens summary`)."""
    iql = ", ".join(('percentile("%s", %s) AS "%s"' % (metric, q, a)) if q != 100 else
                    'max("%s") AS "%s"' % (metric, a) for a, q in qs)
    return Panel(
        title, "%s per category, of the tasks whose last attempt ended in each interval of the "
        "graph (the interval follows the zoom; one point per interval). Computed from the raw "
        "`task` points at query time, so any range and zoom shows the quantile of exactly those "
        "tasks." % what, unit,
        ['SELECT %s FROM "task" WHERE %s AND $timeFilter GROUP BY time($__interval), "category" '
         'fill(none)' % (iql, FINAL)],
        [],  # the Flux set shows the histogram form
        method="per category and interval: " + what, check=("interval", metric, qs), final=True,
        cost=COST_INTERVAL,
        hist=Hist("%s per category, of the tasks whose last attempt ended in the 60 s windows that end "
                  "in each interval of the graph, from the `task_histogram` buckets summed over those "
                  "windows (a max from the windows' max)." % what,
                  [flux_hist_interval(metric, qs)], prom_interval(metric, qs)))


def workflow_overview():
    W = "(%s)" % WF
    FW = '  |> filter(fn: (r) => r.workflow =~ /^${workflow:regex}$/)\n'

    def flux_last(fields):
        return [fsrc("workflow", [f], FW) +
                '  |> aggregateWindow(every: v.windowPeriod, fn: last, timeSrc: "_start", createEmpty: false)'
                for f in fields]

    return [
        Panel("Tasks waiting / running / done / failed",
              "Work Queue manager's task counts over time, from the `workflow` points tasklens "
              "writes at each manager status line (last value per interval); done and failed "
              "split the finished tasks by the glossary's failed.", "short",
              ['SELECT last("tasks_waiting") AS "waiting", last("tasks_running") AS "running", '
               'last("tasks_done") AS "done", last("tasks_failed") AS "failed" FROM "workflow" WHERE '
               '%s AND $timeFilter GROUP BY time($__interval), "workflow" fill(previous)' % W],
              flux_last(["tasks_waiting", "tasks_running", "tasks_done", "tasks_failed"]),
              method="gauges: the manager's last reported count in each interval",
              check=("last", "workflow", "workflow", {"waiting": "tasks_waiting", "running": "tasks_running",
                                                      "done": "tasks_done", "failed": "tasks_failed"})),
        Panel("Workers connected and cores available",
              "Workers connected to the manager and the cores they offer (`workflow` points: "
              "worker connections and resource reports), last value per interval.", "short",
              ['SELECT last("workers") AS "workers", last("cores") AS "cores" FROM "workflow" '
               'WHERE %s AND $timeFilter GROUP BY time($__interval), "workflow" fill(previous)' % W],
              flux_last(["workers", "cores"]),
              method="gauges: the last reported value in each interval",
              check=("last", "workflow", "workflow", {"workers": "workers", "cores": "cores"})),
        Panel("Throughput (tasks finished per minute)",
              "Attempts that ended, per minute: `task` points counted per interval of their end "
              "time, scaled to one minute.", "opm",
              ['SELECT count("attempt") * 60000 / $__interval_ms AS "tasks/min" FROM "task" WHERE %s '
               'AND $timeFilter GROUP BY time($__interval), "category" fill(0)' % TASKS],
              [fsrc("task", ["attempt"]) +
               '  |> group(columns: ["category"])\n'
               '  |> aggregateWindow(every: v.windowPeriod, fn: count, timeSrc: "_start")\n'
               '  |> map(fn: (r) => ({r with _value: float(v: r._value) * 60000000000.0 / '
               'float(v: int(v: v.windowPeriod))}))\n  |> set(key: "_field", value: "tasks/min")'],
              method="exact count of attempts per interval, x 60 s / interval",
              check=("rate", "attempt")),
        Panel("Failures by cause",
              "`task` points carrying the tag failed=true (the glossary's failed: a failure result "
              "or a non-zero exit), counted per interval of their end time and grouped by their "
              "cause tag.",
              "short",
              ['SELECT count("attempt") FROM "task" WHERE %s AND "failed" = \'true\' AND '
               '$timeFilter GROUP BY time($__interval), "cause" fill(0)' % TASKS],
              [fsrc("task", ["attempt"]) +
               '  |> filter(fn: (r) => r.failed == "true")\n'
               '  |> group(columns: ["cause"])\n'
               '  |> aggregateWindow(every: v.windowPeriod, fn: count, timeSrc: "_start", '
               'createEmpty: false)'],
              method="exact count per interval and cause (the task points' failed and cause tags)",
              check=("failures",),
              extra={"fieldConfig": {"defaults": {"unit": "short", "custom": {"drawStyle": "bars"}},
                                     "overrides": []}}),
        Panel("Top categories by wall-hours",
              "Sum of the wall time of each task's last attempt that ended in the selected range, "
              "per category, in hours, cached tasks (an earlier run's) left out: the glossary's "
              "wall-hours, as `tasklens summary` sums it (LSST's integrated_runtime_hrs is the "
              "CPU-time sum; the ResourceUsageSummary panel shows that).", "h",
              ['SELECT sum("wall_time_s") / 3600 AS "runtime" FROM "task" WHERE %s AND "result" != '
               '\'CACHED\' AND $timeFilter GROUP BY "category"' % FINAL],
              [flux_table([("runtime", "wall_time_s", "sum", "(1.0 / 3600.0)")], True,
                          tags=FTASKS + '  |> filter(fn: (r) => r.result != "CACHED")\n')],
              method="exact sum over the selected range, each task's last attempt, cached apart",
              kind="bargauge", w=24, fmt="table", final=True,
              check=("range", {"runtime": ("wall_time_s", "sum", 1 / 3600)}),
              extra={"options": {"orientation": "horizontal", "displayMode": "basic",
                                 "reduceOptions": {"calcs": ["lastNotNull"], "values": True},
                                 "showUnfilled": True},
                     "transformations": [{"id": "sortBy", "options": {"sort": [{"field": "runtime",
                                                                                "desc": True}]}},
                                         {"id": "limit", "options": {"limitField": 20}}]}),
    ]


PCT = [0, 1, 5, 32, 50, 68, 95, 99, 100]
COLS = ["p000", "p001", "p005", "p032", "p050", "p068", "p095", "p099", "p100"]
SUMMARY = [("mem_GB", "max_rss_bytes", 1 / GIB, "(1.0 / 1073741824.0)"),
           ("runtime_s", "cpu_time_s", 1, 1), ("walltime_s", "wall_time_s", 1, 1)]


def summary_influxql(prefix, metric, scale):
    """Nine quantiles of one metric per category. PERCENTILE's rank
    round(q*n) is below 1 for a low quantile of few tasks (p001 of fewer
    than 50), and it returns nothing there; the outer max() over the union
    with the min gives the rank-1 value, the min, as the nearest-rank rule
    (rank at least 1) does: never a blank cell where the tasks have values."""
    s = " / %d" % GIB if scale != 1 else ""
    inner, low, outer = [], [], []
    for p, c in zip(PCT, COLS):
        a = "%s_%s" % (prefix, c)
        fn = 'min("%s")' % metric if p == 0 else 'max("%s")' % metric if p == 100 else \
            'percentile("%s", %d)' % (metric, p)
        inner.append('%s AS "%s"' % (fn, a))
        low.append('min("%s") AS "%s"' % (metric, a))
        outer.append('max("%s")%s AS "%s"' % (a, s, a))
    where = 'FROM "task" WHERE %s AND $timeFilter GROUP BY "category"' % FINAL
    return 'SELECT %s FROM (SELECT %s %s), (SELECT %s %s) WHERE $timeFilter GROUP BY "category"' % (
        ", ".join(outer), ", ".join(inner), where, ", ".join(low), where)


def summary_columns():
    """The table's columns: (name, metric, fn, scale)."""
    cols = [("quanta", "cpu_time_s", "count", 1), ("integrated_runtime_hrs", "cpu_time_s", "sum", 1 / 3600)]
    for prefix, metric, scale, _ in SUMMARY:
        for p, c in zip(PCT, COLS):
            cols.append(("%s_%s" % (prefix, c), metric, ("q", p / 100), scale))
    return cols


def summary_hist():
    cols = summary_columns()
    fcols = [(n, m, fn, "(1.0 / 1073741824.0)" if sc == 1 / GIB else "(1.0 / 3600.0)" if sc == 1 / 3600 else 1)
             for n, m, fn, sc in cols]
    return Hist("Per category, over the tasks whose last attempt ended in the 60 s windows that end in "
                "the selected range: quanta, integrated_runtime_hrs (sum of CPU time / 3600), mem_GB_pXXX "
                "(GiB = bytes / 1024^3), runtime_s_pXXX (CPU time), walltime_s_pXXX, from the "
                "`task_histogram` points: p000 and p100 exact (the windows' min and max), the other "
                "quantiles from the buckets summed over the range.",
                [flux_hist_table(fcols)], prom_table_one(cols), instant=True,
                columns=[c[0] for c in cols])


def summary_check():
    want = {"quanta": ("cpu_time_s", "count", 1), "integrated_runtime_hrs": ("cpu_time_s", "sum", 1 / 3600)}
    for prefix, metric, scale, _ in SUMMARY:
        for p, c in zip(PCT, COLS):
            want["%s_%s" % (prefix, c)] = (metric, ("q1", p), scale)  # InfluxQL: rank at least 1
    return ("range", want)


def task_resources():
    core_s = ('SELECT sum("cpu") / sum("core_s") * 100 AS "efficiency" FROM (SELECT "cpu_time_s" '
              'AS "cpu", "wall_time_s" * "alloc_cores" AS "core_s" FROM "task" WHERE %s AND '
              '"alloc_cores" > 0 AND "cpu_time_s" >= 0 AND "wall_time_s" >= 0 AND $timeFilter '
              'GROUP BY "category") WHERE $timeFilter GROUP BY time($__interval), "category" '
              'fill(none)' % TASKS)
    flux_eff = (fsrc("task", ["cpu_time_s", "wall_time_s", "alloc_cores"]) +
                '  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")\n'
                '  |> filter(fn: (r) => exists r.cpu_time_s and exists r.wall_time_s and '
                'exists r.alloc_cores and r.alloc_cores > 0.0)\n'
                '  |> map(fn: (r) => ({_time: r._time, category: r.category, cpu: r.cpu_time_s, '
                'core_s: r.wall_time_s * r.alloc_cores}))\n'
                '  |> group(columns: ["category"])\n'
                '  |> window(every: v.windowPeriod)\n'
                '  |> reduce(identity: {cpu: 0.0, core_s: 0.0}, fn: (r, accumulator) => '
                '({cpu: accumulator.cpu + r.cpu, core_s: accumulator.core_s + r.core_s}))\n'
                '  |> map(fn: (r) => ({_time: r._start, category: r.category, _field: "efficiency", '
                '_value: r.cpu / r.core_s * 100.0}))\n'
                '  |> group(columns: ["category", "_field"])')

    def flux_mean(field, alias):
        return (fsrc("task", [field]) + '  |> group()\n'
                '  |> aggregateWindow(every: v.windowPeriod, fn: mean, timeSrc: "_start", '
                'createEmpty: false)\n  |> set(key: "_field", value: "%s")' % alias)

    return [
        quantile_interval_panel("Wall time p50 / p95 / p99 per category", "wall_time_s",
                                [("p50", 50), ("p95", 95), ("p99", 99)], "s", "wall time p50/p95/p99"),
        quantile_interval_panel("Peak memory p50 / p95 / max per category", "max_rss_bytes",
                                [("p50", 50), ("p95", 95), ("max", 100)], "bytes",
                                "peak resident memory (max_rss_bytes) p50/p95/max"),
        Panel("CPU efficiency",
              "cpu_time / (wall_time x allocated cores), summed over the attempts of each interval "
              "that carry all three, per category, from `task` points (Work Queue: cores "
              "allocated to the task).", "percent", [core_s], [flux_eff],
              method="exact ratio of sums per interval", check=("efficiency",)),
        Panel("Memory: requested vs allocated vs measured",
              "Mean per interval of memory requested and allocated by the manager and the peak "
              "measured; the gap between allocated and measured is waste.", "bytes",
              ['SELECT mean("req_memory_bytes") AS "requested", mean("alloc_memory_bytes") AS '
               '"allocated", mean("max_rss_bytes") AS "measured" FROM "task" WHERE %s AND '
               '$timeFilter GROUP BY time($__interval) fill(none)' % TASKS],
              [flux_mean("req_memory_bytes", "requested"), flux_mean("alloc_memory_bytes", "allocated"),
               flux_mean("max_rss_bytes", "measured")],
              method="exact means per interval",
              check=("means", {"requested": "req_memory_bytes", "allocated": "alloc_memory_bytes",
                               "measured": "max_rss_bytes"})),
        Panel("Memory vs runtime (one point per task)",
              "Each attempt's wall time against its peak memory, from the `task` points (at most "
              "5000 per category).", "s",
              ['SELECT "wall_time_s", "max_rss_bytes" FROM "task" WHERE %s AND $timeFilter '
               'GROUP BY "category" LIMIT 5000' % TASKS],
              [fsrc("task", ["wall_time_s", "max_rss_bytes"]) +
               '  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")\n'
               '  |> group(columns: ["category"])\n  |> limit(n: 5000)\n'
               '  |> keep(columns: ["_time", "category", "wall_time_s", "max_rss_bytes"])'],
              method="raw points (the first 5000 per category)",
              kind="xychart", fmt="table", check=("raw", ["wall_time_s", "max_rss_bytes"]),
              extra={"options": {"seriesMapping": "auto", "dims": {"x": "wall_time_s"}}}),
        Panel("Queue time distribution",
              "Histogram of the time attempts waited between submission and start (queue_time_s "
              "of the `task` points).", "s",
              ['SELECT "queue_time_s" FROM "task" WHERE %s AND $timeFilter' % TASKS],
              [fsrc("task", ["queue_time_s"]) + '  |> group()\n  |> keep(columns: ["_time", "_value"])'],
              method="raw points, binned by Grafana", kind="histogram", check=("raw", ["queue_time_s"])),
        Panel("Resource usage summary over the selected range (as LSST's ResourceUsageSummary)",
              "Per category, over the tasks whose last attempt ended in the selected range: quanta, "
              "integrated_runtime_hrs (sum of CPU time / 3600), mem_GB_pXXX (GiB = bytes / "
              "1024^3), runtime_s_pXXX (CPU time), walltime_s_pXXX, from the raw `task` points. "
              "Flux (2.x): linear interpolation, the numbers of `tasklens summary --lsst-summary` "
              "on the same tasks. InfluxQL: nearest rank (PERCENTILE), the rank at least 1 (the "
              "minimum where q x n rounds to 0, as for p001 of fewer than 50 tasks).", "none",
              ['SELECT count("cpu_time_s") AS "quanta", sum("cpu_time_s") / 3600 AS '
               '"integrated_runtime_hrs" FROM "task" WHERE %s AND $timeFilter GROUP BY "category"'
               % FINAL] + [summary_influxql(p, m, s) for p, m, s, _ in SUMMARY],
              [],  # the Flux set shows the histogram form
              method="per category over the selected range, each task's last attempt: count, sum "
              "and nine quantiles of three metrics",
              kind="table", w=24, h=10, fmt="table", check=summary_check(), final=True, hist=summary_hist(),
              cost={"influxql": "~8 s for an hour, ~4 min for a day", "flux": "~1.4 s for an hour, ~35 s for a day"},
              extra={"transformations": [{"id": "merge", "options": {}},
                                         {"id": "organize",
                                          "options": {"excludeByName": {"Time": True}}}]}),
    ]


def pipeline_health():
    I = '("instance" =~ /^$instance$/) AND ("input" =~ /^$input$/)'

    def rate(field, alias):
        return (fsrc("tasklens", [field], FINST) +
                '  |> aggregateWindow(every: v.windowPeriod, fn: last, timeSrc: "_start", createEmpty: false)\n'
                '  |> derivative(unit: 1s, nonNegative: true)\n  |> set(key: "_field", value: "%s")'
                % alias)

    def peak(field, by):
        return (fsrc("tasklens", [field], FINST) + '  |> group(columns: ["%s"])\n' % by +
                '  |> aggregateWindow(every: v.windowPeriod, fn: max, timeSrc: "_start", createEmpty: false)')

    def new(field, alias):
        return (fsrc("tasklens", [field], FINST) + '  |> group(columns: ["instance"])\n'
                '  |> aggregateWindow(every: v.windowPeriod, fn: max, timeSrc: "_start", createEmpty: false)\n'
                '  |> difference(nonNegative: true)\n  |> set(key: "_field", value: "%s")' % alias)

    return [
        Panel("Lines, records and rejected lines per second",
              "Rates of tasklens's own counters (`tasklens` self-metrics, one series per input): "
              "lines read, records made, lines rejected (parse errors).", "short",
              ['SELECT non_negative_derivative(last("lines"), 1s) AS "lines/s", '
               'non_negative_derivative(last("records"), 1s) AS "records/s", '
               'non_negative_derivative(last("parse_errors"), 1s) AS "rejected/s" FROM "tasklens" '
               'WHERE %s AND $timeFilter GROUP BY time($__interval), "input" fill(none)' % I],
              [rate("lines", "lines/s"), rate("records", "records/s"), rate("parse_errors", "rejected/s")],
              method="rate of the counters between intervals"),
        Panel("Source lag",
              "Messages behind the end of each Kafka partition (0 for files, which are read to "
              "their end), from the `tasklens` self-metrics.", "short",
              ['SELECT last("lag") FROM "tasklens" WHERE %s AND $timeFilter GROUP BY '
               'time($__interval), "input" fill(none)' % I],
              [fsrc("tasklens", ["lag"], FINST) + '  |> group(columns: ["input"])\n'
               '  |> aggregateWindow(every: v.windowPeriod, fn: last, timeSrc: "_start", createEmpty: false)'],
              method="gauge: last value per interval", check=("self", "lag", "input", "last")),
        Panel("Queue depth",
              "Line protocol waiting in tasklens's output buffer before the sinks take it (the "
              "largest value in each interval).", "bytes",
              ['SELECT max("queue_bytes") FROM "tasklens" WHERE %s AND $timeFilter GROUP BY '
               'time($__interval), "instance" fill(none)' % I], [peak("queue_bytes", "instance")],
              method="gauge: largest value per interval", w=8,
              check=("self", "queue_bytes", "instance", "max")),
        Panel("Spool",
              "Bytes in the disk spool: batches InfluxDB could not take yet (grows during an "
              "outage, drains after); the largest value in each interval.", "bytes",
              ['SELECT max("spool_bytes") FROM "tasklens" WHERE %s AND $timeFilter GROUP BY '
               'time($__interval), "instance" fill(none)' % I], [peak("spool_bytes", "instance")],
              method="gauge: largest value per interval", w=8,
              check=("self", "spool_bytes", "instance", "max")),
        Panel("Sink errors",
              "New HTTP errors, retries and points InfluxDB refused per interval (from the "
              "sink's counters in the self-metrics).", "short",
              ['SELECT non_negative_difference(max("http_errors")) AS "http errors", '
               'non_negative_difference(max("retries")) AS "retries", '
               'non_negative_difference(max("points_dropped")) AS "points refused" FROM "tasklens" '
               'WHERE %s AND $timeFilter GROUP BY time($__interval), "instance" fill(none)' % I],
              [new("http_errors", "http errors"), new("retries", "retries"),
               new("points_dropped", "points refused")],
              method="increase of the counters between intervals", w=8),
    ]


RIGHT_SIZING = [("tasks", "max_rss_bytes", "count", 1), ("allocated p50", "alloc_memory_bytes", ("q", 0.5), 1),
                ("used p95", "max_rss_bytes", ("q", 0.95), 1), ("used max", "max_rss_bytes", ("q", 1), 1)]


def insights():
    """The tables `tasklens advise / plan / energy --format lp` write answer for the inputs of
    that run, whatever the range: their titles say so. The first panel follows the range."""
    IC = '("category" =~ /^$category$/)'
    table = {"transformations": [{"id": "organize", "options": {"excludeByName": {"Time": True}}}]}
    span = " (as of the last `tasklens %s` run, over its inputs; not the selected range)"
    return [
        Panel("Memory right-sizing over the selected range: allocated vs used per category",
              "Per category, over the attempts that ended in the selected range and match the "
              "variables (every attempt, as `tasklens advise` counts them): attempts with a peak memory, median allocation, the p95 and the maximum "
              "of peak resident memory (bytes), from the raw `task` points. `tasklens advise` "
              "turns the p95 into a recommendation (x margin, rounded up).", "bytes",
              ['SELECT count("max_rss_bytes") AS "tasks", median("alloc_memory_bytes") AS '
               '"allocated p50", percentile("max_rss_bytes", 95) AS "used p95", max("max_rss_bytes") '
               'AS "used max" FROM "task" WHERE %s AND $timeFilter GROUP BY "category"' % TASKS],
              [],  # the Flux set shows the histogram form
              method="per category over the selected range: count, median, p95 and max",
              cost={"influxql": "~1 s for an hour, ~20 s for a day", "flux": "~0.1 s for an hour, ~2 s for a day"},
              hist=Hist("Per category, over the tasks whose last attempt ended in the 60 s windows that "
                        "end in the selected range and match the variables: tasks with a peak memory, "
                        "median allocation, the p95 and the maximum of peak resident memory (bytes), "
                        "from the `task_histogram` points. `tasklens advise` turns the p95 into a "
                        "recommendation (x margin, rounded up).",
                        [flux_hist_table(RIGHT_SIZING)], prom_table(RIGHT_SIZING), instant=True),
              kind="table", w=24, h=8, fmt="table", extra=table, units={"tasks": "short"},
              check=("range", {"tasks": ("max_rss_bytes", "count", 1),
                               "allocated p50": ("alloc_memory_bytes", "median", 1),
                               "used p95": ("max_rss_bytes", ("q", 95), 1),
                               "used max": ("max_rss_bytes", ("q", 100), 1)})),
        Panel("Right-sizing per category and resource" + span % "advise",
              "From `tasklens advise --format lp` (measurement `task_advice`): median allocation, "
              "the used quantile (used_q, p95 by default), the recommended first allocation (used "
              "quantile x margin for memory and disk, rounded up to the worker granularity), the "
              "share of attempts above it, the waste now and what the recommendation saves (core-"
              "hours for cores, GiB-hours for memory and disk), and the RESOURCE_EXHAUSTION "
              "attempts it would have avoided. Memory and disk are in bytes. The numbers are "
              "those of the advise run's inputs; the panel shows its newest points.", "none",
              ['SELECT last("allocated_p50") AS "allocated", last("used_q") AS "used", '
               'last("recommend") AS "recommend", last("exceed_fraction") * 100 AS "exceed %%", '
               'last("waste_hours") AS "waste (h)", last("saves_hours") AS "saves (h)", '
               'last("exhausted") AS "exhausted", last("exhausted_avoided") AS "avoided" '
               'FROM "task_advice" WHERE %s AND $timeFilter GROUP BY "category", "resource"' % IC],
              [flux_last_table("task_advice", ["allocated_p50", "used_q", "recommend",
                                               "exceed_fraction", "waste_hours", "saves_hours",
                                               "exhausted", "exhausted_avoided"],
                               ["category", "resource"], FCAT)],
              method="the advise run's own figures (exact over its inputs)",
              check=("table_last", "task_advice", ("category", "resource"), {
                  "allocated": ("allocated_p50", 1), "used": ("used_q", 1), "recommend": ("recommend", 1),
                  "exceed %": ("exceed_fraction", 100), "waste (h)": ("waste_hours", 1),
                  "saves (h)": ("saves_hours", 1), "exhausted": ("exhausted", 1),
                  "avoided": ("exhausted_avoided", 1)}),
              kind="table", w=24, h=9, fmt="table", extra=table),
        Panel("Capacity plan: node-hours per category and node type" + span % "plan",
              "From `tasklens plan --format lp` (measurement `task_plan`): tasks planned, the p95 "
              "time and memory per task, jobs per node (min of cores / cores per task and node "
              "memory / memory p95), which resource binds, and the node-hours and node-days; the "
              "`total` row sums the categories.", "none",
              ['SELECT last("tasks") AS "tasks", last("time_s") AS "time p95 (s)", '
               'last("memory_bytes") / 1073741824 AS "memory p95 (GiB)", last("jobs_per_node") AS '
               '"jobs/node", last("node_hours") AS "node-hours", last("node_days") AS "node-days" '
               'FROM "task_plan" WHERE ("category" =~ /^$category$/ OR "category" = \'total\') AND '
               '$timeFilter GROUP BY "node", "category", "binds"'],
              [flux_last_table("task_plan", ["tasks", "time_s", "memory_bytes", "jobs_per_node",
                                             "node_hours", "node_days"], ["node", "category", "binds"],
                               '  |> filter(fn: (r) => r.category =~ /^${category:regex}$/ or '
                               'r.category == "total")\n')],
              method="the plan run's own figures (exact over its inputs)",
              check=("table_last", "task_plan", ("node", "category"), {
                  "tasks": ("tasks", 1), "time p95 (s)": ("time_s", 1),
                  "memory p95 (GiB)": ("memory_bytes", 1 / GIB), "jobs/node": ("jobs_per_node", 1),
                  "node-hours": ("node_hours", 1), "node-days": ("node_days", 1)}),
              kind="table", w=24, h=9, fmt="table", extra=table),
        Panel("Energy and emissions per category" + span % "energy",
              "From `tasklens energy --format lp` (measurement `task_energy`): kWh = PUE x (CPU "
              "seconds x W per core + peak-RSS GiB x wall seconds x W per GiB) / 3.6e6, kgCO2eq = "
              "kWh x grid intensity / 1000; the model's assumptions are columns of the table.",
              "none",
              ['SELECT last("kwh") AS "kWh", last("kwh_cpu") AS "kWh CPU", last("kwh_memory") AS '
               '"kWh memory", last("kg_co2eq") AS "kgCO2eq", last("attempts") AS "attempts", '
               'last("w_per_core") AS "W/core", last("w_per_gib") AS "W/GiB", last("pue") AS "PUE", '
               'last("g_co2eq_per_kwh") AS "gCO2eq/kWh" FROM "task_energy" WHERE "scope" = '
               '\'category\' AND %s AND $timeFilter GROUP BY "category"' % IC],
              [flux_last_table("task_energy", ["kwh", "kwh_cpu", "kwh_memory", "kg_co2eq", "attempts",
                                               "w_per_core", "w_per_gib", "pue", "g_co2eq_per_kwh"],
                               ["category"], FCAT, '  |> filter(fn: (r) => r.scope == "category")\n')],
              method="the energy run's own figures (exact over its inputs)",
              kind="table", w=16, h=9, fmt="table", extra=table,
              check=("table_last", "task_energy", ("category",), {
                  "kWh": ("kwh", 1), "kWh CPU": ("kwh_cpu", 1), "kWh memory": ("kwh_memory", 1),
                  "kgCO2eq": ("kg_co2eq", 1), "attempts": ("attempts", 1), "W/core": ("w_per_core", 1),
                  "W/GiB": ("w_per_gib", 1), "PUE": ("pue", 1), "gCO2eq/kWh": ("g_co2eq_per_kwh", 1)})),
        Panel("Emissions per workflow" + span % "energy",
              "kgCO2eq per workflow (Work Queue manager run, LSST run, trace file) from "
              "`task_energy` points with scope = workflow.", "none",
              ['SELECT last("kg_co2eq") AS "kgCO2eq" FROM "task_energy" WHERE "scope" = '
               '\'workflow\' AND $timeFilter GROUP BY "workflow"'],
              [fsrc("task_energy", ["kg_co2eq"], '  |> filter(fn: (r) => r.scope == "workflow")\n') +
               '  |> last()\n  |> group(columns: ["workflow"])'],
              method="the energy run's own figures (exact over its inputs)",
              kind="bargauge", w=8, h=9, fmt="time_series"),
    ]


BOARDS = [
    ("workflow-overview", "tasklens-workflow-overview", "tasklens: workflow overview",
     "Is the workflow moving? Queue, workers, throughput, failures.", workflow_overview,
     ["workflow", "category", "host"]),
    ("task-resources", "tasklens-task-resources", "tasklens: task resources",
     "What do tasks cost, per category, and how much of the allocation is used? Every quantile "
     "is computed from the raw task points of the selected range.", task_resources,
     ["workflow", "category", "host"]),
    ("pipeline-health", "tasklens-pipeline-health", "tasklens: pipeline health",
     "Is tasklens keeping up, and is anything being rejected or held back?", pipeline_health,
     ["instance", "input"]),
    ("insights", "tasklens-insights", "tasklens: insights",
     "Right-sizing over the selected range, and the tables of tasklens advise, plan and energy.",
     insights, ["workflow", "category", "host"]),
]


class Layout:
    def __init__(self):
        self.x = self.y = self.row_h = 0
        self.id = 0

    def place(self, w, h):
        if self.x + w > 24:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0
        pos = {"x": self.x, "y": self.y, "w": w, "h": h}
        self.x += w
        self.row_h = max(self.row_h, h)
        self.id += 1
        return self.id, pos


def ref_id(i):
    """A, B, ..., Z, AA, AB, ...: Grafana's target ids."""
    return chr(65 + i) if i < 26 else ref_id(i // 26 - 1) + chr(65 + i % 26)


def targets_of(p, lang):
    ds = DS[lang]
    if lang == "influxql":
        return [{"refId": ref_id(i), "datasource": ds, "rawQuery": True, "query": q,
                 "resultFormat": p.fmt} for i, q in enumerate(p.influxql)]
    if lang == "flux":
        return [{"refId": ref_id(i), "datasource": ds, "query": q}
                for i, q in enumerate(p.hist.flux if p.hist else p.flux)]
    inst = p.hist.instant
    return [{"refId": ref_id(i), "datasource": ds, "expr": e, "legendFormat": legend, "instant": inst,
             "range": not inst, "format": "table" if inst else "time_series"}
            for i, (e, legend) in enumerate(p.hist.promql)]


HIST_METHOD = {"flux": "Flux histogramQuantile() over the `task_histogram` buckets summed over the "
                       "range (each bucket's lower bound added, the buckets being sparse)",
               "promql": "histogram_quantile() over the `task_histogram` vmrange buckets summed with "
                         "sum_over_time() over the range"}
# bench/RESULTS.md, "Histogram panels": one day of 100 tasks/s
HIST_COST = {"flux": "graphs ~2 s for an hour, ~3.5 s for a day; tables 1-4.5 s",
             "promql": "0.1-0.7 s for an hour or a day"}


# What a panel says to the person looking at it: one sentence and the unit. How
# it is computed (the query's mechanics, its quantile method and cost) is in
# docs/grafana.md, "What each panel computes", written from mechanics() below.
SAY = {
    "Tasks waiting / running / done / failed": ("The Work Queue manager's task counts over time.", "tasks"),
    "Tasks finished per minute": ("Tasks whose last attempt ended, per minute and category.",
                                  "tasks per minute"),
    "Workers connected and cores available": ("Workers connected to the manager and the cores they offer.",
                                              "workers, cores"),
    "Throughput (tasks finished per minute)": ("Attempts that ended per minute, per category.",
                                               "attempts per minute"),
    "Failures by cause": ("Failed attempts per interval, by why they failed (glossary: failed, cause).",
                          "attempts"),
    "Top categories by wall-hours": ("The categories whose tasks held the most wall time in the range.",
                                     "wall-hours"),
    "Wall time p50 / p95 / p99 per category": ("How long the tasks of each category ran, per interval.",
                                               "seconds"),
    "Peak memory p50 / p95 / max per category": ("Peak resident memory of each category's tasks, per "
                                                 "interval.", "bytes"),
    "CPU efficiency": ("CPU time over allocated core time, per category (100 % = every allocated core busy).",
                       "percent"),
    "Memory: requested vs allocated vs measured": ("Memory asked for, given and used, on average per "
                                                   "interval; the gap is waste.", "bytes"),
    "Memory vs runtime (one point per task)": ("Each task's wall time against its peak memory.",
                                               "seconds, bytes"),
    "Queue time distribution": ("How long attempts waited between submission and start.", "seconds"),
    "Resource usage summary over the selected range (as LSST's ResourceUsageSummary)": (
        "LSST's ResourceUsageSummary table over the range, with LSST's column names and meanings "
        "(integrated_runtime_hrs is LSST's CPU-time sum).", "per column: count, hours, GB"),
    "Lines, records and rejected lines per second": ("What tasklens reads, makes and rejects, per input.",
                                                     "per second"),
    "Source lag": ("Messages behind the end of each Kafka partition (0 for files).", "messages"),
    "Queue depth": ("Line protocol waiting for the sinks inside tasklens.", "bytes"),
    "Spool": ("Batches on disk waiting for the store to take them (grows in an outage).", "bytes"),
    "Sink errors": ("New HTTP errors, retries and refused points per interval.", "count"),
    "Memory right-sizing over the selected range: allocated vs used per category": (
        "Per category, the median memory allocated against the p95 and max used.",
        "tasks: count; the rest: bytes"),
}
SAY_PREFIXED = {  # the insight tables' titles end with the run they come from
    "Right-sizing per category and resource": ("What `tasklens advise` recommends per category and "
                                               "resource, and what it saves or costs.", "per column"),
    "Capacity plan": ("Node-hours per category and node type from `tasklens plan`, and what binds.",
                      "per column"),
    "Energy and emissions per category": ("kWh and kgCO2eq per category from `tasklens energy`, with "
                                          "the model's assumptions.", "per column"),
    "Emissions per workflow": ("kgCO2eq per workflow from `tasklens energy`.", "kgCO2eq"),
}


def say(p):
    """(sentence, unit) a panel shows; KeyError for a panel without one."""
    if p.title in SAY:
        return SAY[p.title]
    return next(v for k, v in SAY_PREFIXED.items() if p.title.startswith(k))


def description(p, lang):
    sentence, unit = say(p)
    return "%s Unit: %s." % (sentence, unit)


def mechanics(p, lang):
    if lang != "influxql" and p.hist and not p.hist.quantiles:
        return p.hist.desc
    if lang != "influxql" and p.hist:
        return (p.hist.desc + " Quantiles: %s: within alpha (0.5 %%) plus one bucket of the exact "
                "quantile of those tasks, whatever the range. Cost at 100 tasks/s: %s "
                "(bench/RESULTS.md). A workflow or host selected shows data only where tasklens "
                "groups by that tag (aggregate: by: source,workflow,category); otherwise the panel "
                "stays empty." % (HIST_METHOD[lang], HIST_COST[lang]))
    desc = p.desc
    if is_quantile_panel(p):
        desc += " Quantiles: " + (EXACT_IQL if lang == "influxql" else EXACT_FLUX) + "."
    if p.cost:
        desc += (" Cost: every value in the range is read and sorted at query time; at 100 "
                 "tasks/s, %s (bench/RESULTS.md)." % p.cost[lang])
    return desc


def render_panel(lay, p, lang):
    pid, pos = lay.place(p.w, p.h)
    ds = DS[lang]
    targets = targets_of(p, lang)
    out = {"id": pid, "type": p.kind, "title": p.title, "description": description(p, lang),
           "datasource": ds, "gridPos": pos, "fieldConfig": {"defaults": {"unit": p.unit}, "overrides": []},
           "targets": targets,
           "options": {"legend": {"displayMode": "list", "placement": "bottom"},
                       "tooltip": {"mode": "multi"}}}
    if p.extra:
        out.update(p.extra)
    for col, unit in (p.units or {}).items():
        out["fieldConfig"]["overrides"].append(
            {"matcher": {"id": "byName", "options": col}, "properties": [{"id": "unit", "value": unit}]})
    if lang != "influxql" and p.hist and not p.hist.instant:
        out["maxDataPoints"] = HIST_POINTS  # intervals that fit the coarser windows
    if lang == "promql" and p.hist.instant and targets[0]["legendFormat"] == "@col":
        # one query, each cell a series labelled col: a matrix of category x col
        order = {"category": 0}
        order.update({c: i + 1 for i, c in enumerate(p.hist.columns)})
        out["transformations"] = [
            {"id": "groupingToMatrix", "options": {"columnField": "col", "rowField": "category",
                                                   "valueField": "Value"}},
            {"id": "organize", "options": {"renameByName": {"category\\col": "category"},
                                           "indexByName": order}}]
        targets[0]["legendFormat"] = ""
    elif lang == "promql" and p.hist.instant:  # one instant query per column: merged, each named
        out["transformations"] = [
            {"id": "merge", "options": {}},
            {"id": "organize", "options": {"excludeByName": {"Time": True},
                                           "renameByName": {"Value #%s" % t["refId"]: t["legendFormat"]
                                                            for t in targets}}}]
    return out


def is_quantile_panel(p):
    if not p.check:
        return False
    if p.check[0] == "interval":
        return any(q != 100 for _, q in p.check[2])
    if p.check[0] == "range":
        return any(isinstance(v[1], tuple) and v[1][1] not in (0, 100) for v in p.check[1].values())
    return False


LANG_TITLE = {"influxql": " (InfluxQL)", "flux": " (Flux)", "promql": " (PromQL)"}


def dashboard(lang, uid, title, desc, panels, variables_used):
    lay = Layout()
    vs = variables(lang)
    suffix = "" if lang == "influxql" else "-" + lang
    return {
        "uid": uid + suffix, "title": title + LANG_TITLE[lang],
        "description": desc, "tags": ["tasklens", lang], "schemaVersion": 39, "version": 1,
        "editable": False, "refresh": "30s", "time": {"from": "now-24h", "to": "now"},
        "timezone": "utc", "templating": {"list": [vs[v] for v in variables_used]},
        "annotations": {"list": []},
        "panels": [render_panel(lay, p, lang) for p in panels],
    }


def prom_overview():
    """The PromQL set's workflow overview, from the points a Prometheus store
    holds: the Work Queue manager's gauges (workflow_*) and the task_histogram
    counts (tasks finished per window)."""
    PW = 'workflow=~"$workflow"'

    def gauges(fields):
        return [('max by (workflow) (last_over_time(workflow_%s{%s}[$__interval]))' % (f, PW),
                 "{{workflow}} %s" % alias) for alias, f in fields]

    return [
        Panel("Tasks waiting / running / done / failed", "", "short", [], [],
              method="gauges: the manager's last reported count in each interval",
              hist=Hist("The Work Queue manager's gauges workflow_tasks_waiting, _running, _done and "
                        "_failed (done and failed split by the glossary's failed), the last value in "
                        "each interval.", None,
                        gauges([("waiting", "tasks_waiting"), ("running", "tasks_running"),
                                ("done", "tasks_done"), ("failed", "tasks_failed")]), quantiles=False)),
        Panel("Workers connected and cores available", "", "short", [], [],
              method="gauges: the last reported value in each interval",
              hist=Hist("The Work Queue manager's gauges workflow_workers and workflow_cores, the last "
                        "value in each interval.", None,
                        gauges([("workers", "workers"), ("cores", "cores")]), quantiles=False)),
        Panel("Tasks finished per minute", "", "opm", [], [],
              method="exact: the windows' task counts summed per interval, x 60 s / interval",
              hist=Hist("task_histogram_count of wall_time_s (the tasks whose last attempt ended in "
                        "each window, per category) summed over the interval and scaled to one "
                        "minute.", None,
                        [("sum by (category) (sum_over_time(%s[$__interval])) * 60000 / $__interval_ms"
                          % psel("count", "wall_time_s"), "{{category}}")], quantiles=False)),
    ]


PROMQL_OVERVIEW_BOARD = ("workflow-overview", "tasklens-workflow-overview", "tasklens: workflow overview",
                         "Is the workflow moving? Queue, workers, tasks finished and failed, from the "
                         "points a Prometheus store holds.", ["hwin", "gworkflow", "category", "host"])

PROMQL_BOARD = ("task-resources", "tasklens-task-resources", "tasklens: task resources",
                "What do tasks cost, per category, over any range? Every quantile comes from the "
                "`task_histogram` buckets tasklens writes per window (VictoriaMetrics: through "
                "its InfluxDB /write or Prometheus remote write), summed over the range.",
                ["hwin", "workflow", "category", "host"])


def boards():
    """{(lang, name): (dashboard JSON, [Panel])}: what main() writes and the tests import."""
    out = {}
    hist_panels = []
    for name, uid, title, desc, make, vs in BOARDS:
        panels = make()
        hist_panels += [p for p in panels if p.hist]
        for lang in ("influxql", "flux"):
            out[(lang, name)] = (dashboard(lang, uid, title, desc, panels, vs), panels)
    name, uid, title, desc, vs = PROMQL_OVERVIEW_BOARD
    overview = prom_overview()
    out[("promql", name)] = (dashboard("promql", uid, title, desc, overview, vs), overview)
    name, uid, title, desc, vs = PROMQL_BOARD
    out[("promql", name)] = (dashboard("promql", uid, title, desc, hist_panels, vs), hist_panels)
    return out


def readme_table(all_boards):
    rows = ["| dashboard | panel | computes | quantiles (InfluxQL / Flux / PromQL) | cost at 100 tasks/s, "
            "a day (InfluxQL / Flux / PromQL) |", "|---|---|---|---|---|"]
    for (lang, name), (_, panels) in all_boards.items():
        if lang != "influxql":
            continue
        for p in panels:
            if p.hist:
                q = "nearest rank, exact / histogram, alpha + 1 bucket / same"
            else:
                q = "nearest rank, exact / linear, exact / -" if is_quantile_panel(p) else "-"
            cost = "-"
            if p.cost:
                cost = "%s / %s / %s" % (p.cost["influxql"], HIST_COST["flux"] if p.hist else p.cost["flux"],
                                         HIST_COST["promql"] if p.hist else "-")
            rows.append("| %s | %s | %s | %s | %s |" % (name, p.title.replace("|", "/"), p.method, q, cost))
    return "\n".join(rows)


def mechanics_doc(all_boards):
    """docs/grafana.md's "What each panel computes": per dashboard and panel, what its
    description says and how each language computes it."""
    out = []
    for (lang, name), (_, panels) in all_boards.items():
        if lang != "influxql":
            continue
        out.append("#### %s\n" % name)
        for p in panels:
            sentence, unit = say(p)
            out.append("- **%s** -- %s Unit: %s." % (p.title, sentence, unit))
            langs = ["influxql", "flux"] + (["promql"] if p.hist else [])
            texts = {}
            for lg in langs:
                texts.setdefault(mechanics(p, lg), []).append(LANG_TITLE[lg].strip(" ()"))
            for text, lgs in texts.items():
                out.append("  - %s: %s" % (" and ".join(lgs), text))
        out.append("")
    for (lang, name), (_, panels) in all_boards.items():
        if lang == "promql" and ("influxql", name) in all_boards and all(p.hist and not p.hist.quantiles
                                                                          for p in panels):
            out.append("#### %s (PromQL)\n" % name)
            for p in panels:
                sentence, unit = say(p)
                out.append("- **%s** -- %s Unit: %s.\n  - PromQL: %s" % (p.title, sentence, unit,
                                                                          mechanics(p, lang)))
            out.append("")
    return "\n".join(out).rstrip()


def replace_block(path, name, content):
    """Rewrites the text between <!-- NAME: begin --> and <!-- NAME: end --> in path."""
    with open(path) as f:
        text = f.read()
    block = "<!-- %s: begin -->\n%s\n<!-- %s: end -->" % (name, content, name)
    text = re.sub(r"<!-- %s: begin -->.*<!-- %s: end -->" % (name, name), lambda m: block, text, flags=re.S)
    with open(path, "w") as f:
        f.write(text)


def main():
    all_boards = boards()
    for (lang, name), (d, _) in all_boards.items():
        os.makedirs(os.path.join(HERE, "dashboards", lang), exist_ok=True)
        path = os.path.join(HERE, "dashboards", lang, name + ".json")
        with open(path, "w") as f:
            json.dump(d, f, indent=2)
            f.write("\n")
        print(path, len(d["panels"]), "panels")
    replace_block(os.path.join(HERE, "..", "docs", "grafana.md"), "mechanics", mechanics_doc(all_boards))
    replace_block(os.path.join(HERE, "README.md"), "panels", readme_table(all_boards))


if __name__ == "__main__":
    main()
