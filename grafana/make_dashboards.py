#!/usr/bin/env python3
"""Writes grafana/dashboards/*.json: the source of truth for the panels.

    python3 grafana/make_dashboards.py        # rewrite the three dashboards

Every panel is an InfluxQL query on the schema of shared/DESIGN.md
(`task`, `task_quantiles`, `workflow`, `tasklens`), against the data source
uid `tasklens-influxdb` (grafana/provisioning/datasources). Panels are laid
out left to right on Grafana's 24-column grid. tests/integration/grafana_panels.py
runs every query against a real influxd filled by tasklens.
"""
import json
import os

DS = {"type": "influxdb", "uid": "tasklens-influxdb"}
HERE = os.path.dirname(os.path.abspath(__file__))

WF = '("workflow" =~ /^$workflow$/)'
CAT = '("category" =~ /^$category$/)'
HOST = '("host" =~ /^$host$/)'
TASKS = "%s AND %s AND %s" % (WF, CAT, HOST)


def var(name, query, label=None, multi=True):
    return {
        "name": name, "label": label or name, "type": "query", "datasource": DS,
        "query": query, "definition": query, "refresh": 2, "includeAll": True,
        "allValue": ".*", "multi": multi, "sort": 1,
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
    }


VARS = {
    "workflow": var("workflow", 'SHOW TAG VALUES FROM "task" WITH KEY = "workflow"'),
    "category": var("category", 'SHOW TAG VALUES FROM "task" WITH KEY = "category" WHERE ' + WF),
    "host": var("host", 'SHOW TAG VALUES FROM "task" WITH KEY = "host" WHERE ' + WF),
    "icategory": var("category", 'SHOW TAG VALUES FROM "task_advice" WITH KEY = "category"'),
    "qcategory": var("category", 'SHOW TAG VALUES FROM "task_quantiles" WITH KEY = "category"'),
    "window": dict(var("window", 'SHOW TAG VALUES FROM "task_quantiles" WITH KEY = "window"',
                       multi=False), includeAll=False,
                   current={"selected": True, "text": "cumulative", "value": "cumulative"}),
    "instance": var("instance", 'SHOW TAG VALUES FROM "tasklens" WITH KEY = "instance"'),
    "input": var("input", 'SHOW TAG VALUES FROM "tasklens" WITH KEY = "input" WHERE '
                 '("instance" =~ /^$instance$/)'),
}


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


def panel(lay, title, desc, unit, queries, kind="timeseries", w=12, h=8, fmt="time_series",
          extra=None):
    pid, pos = lay.place(w, h)
    p = {
        "id": pid, "type": kind, "title": title, "description": desc, "datasource": DS,
        "gridPos": pos,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [{"refId": chr(65 + i), "datasource": DS, "rawQuery": True, "query": q,
                     "resultFormat": fmt} for i, q in enumerate(queries)],
        "options": {"legend": {"displayMode": "list", "placement": "bottom"},
                    "tooltip": {"mode": "multi"}},
    }
    if extra:
        p.update(extra)
    return p


def dashboard(uid, title, desc, panels, variables):
    return {
        "uid": uid, "title": title, "description": desc, "tags": ["tasklens"],
        "schemaVersion": 39, "version": 1, "editable": False, "refresh": "30s",
        "time": {"from": "now-24h", "to": "now"}, "timezone": "utc",
        "templating": {"list": [VARS[v] for v in variables]},
        "annotations": {"list": []}, "panels": panels,
    }


def workflow_overview():
    L = Layout()
    W = "(%s)" % WF
    ps = [
        panel(L, "Tasks waiting / running / done",
              "Work Queue manager's task counts over time, from the `workflow` points tasklens "
              "writes at each manager status line (last value per interval).", "short",
              ['SELECT last("tasks_waiting") AS "waiting", last("tasks_running") AS "running", '
               'last("tasks_done") AS "done" FROM "workflow" WHERE %s AND $timeFilter '
               'GROUP BY time($__interval), "workflow" fill(previous)' % W]),
        panel(L, "Workers connected and cores available",
              "Workers connected to the manager and the cores they offer (`workflow` points: "
              "worker connections and resource reports).", "short",
              ['SELECT last("workers") AS "workers", last("cores") AS "cores" FROM "workflow" '
               'WHERE %s AND $timeFilter GROUP BY time($__interval), "workflow" fill(previous)' % W]),
        panel(L, "Throughput (tasks finished per minute)",
              "Attempts that ended, per minute: `task` points counted per interval of their end "
              "time, scaled to one minute.", "opm",
              ['SELECT count("attempt") * 60000 / $__interval_ms AS "tasks/min" FROM "task" WHERE %s '
               'AND $timeFilter GROUP BY time($__interval), "category" fill(0)' % TASKS],
              kind="timeseries"),
        panel(L, "Failures by result",
              "Attempts whose result is not SUCCESS, by result (e.g. RESOURCE_EXHAUSTION, "
              "SIGNAL, MAX_RETRIES), per interval; from the `task` points' result tag.", "short",
              ['SELECT count("attempt") FROM "task" WHERE %s AND "result" != \'SUCCESS\' AND '
               '$timeFilter GROUP BY time($__interval), "result" fill(0)' % TASKS],
              kind="timeseries",
              extra={"fieldConfig": {"defaults": {"unit": "short",
                                                  "custom": {"drawStyle": "bars"}},
                                     "overrides": []}}),
        panel(L, "Top categories by integrated runtime",
              "Sum of wall time of every attempt in the time range, per category, in hours -- "
              "the `integrated_runtime_hrs` of a ResourceUsageSummary, over wall time.", "h",
              ['SELECT sum("wall_time_s") / 3600 AS "runtime" FROM "task" WHERE %s AND $timeFilter '
               'GROUP BY "category"' % TASKS], kind="bargauge", w=24, fmt="table",
              extra={"options": {"orientation": "horizontal", "displayMode": "basic",
                                 "reduceOptions": {"calcs": ["lastNotNull"], "values": True},
                                 "showUnfilled": True},
                     "transformations": [{"id": "sortBy", "options": {"sort": [{"field": "runtime",
                                                                                "desc": True}]}},
                                         {"id": "limit", "options": {"limitField": 20}}]}),
    ]
    return dashboard("tasklens-workflow-overview", "tasklens: workflow overview",
                     "Is the workflow moving? Queue, workers, throughput, failures.", ps,
                     ["workflow", "category", "host"])


Q = '("category" =~ /^$category$/) AND ("window" = \'$window\')'
PCT = ["q0", "q01", "q05", "q32", "q50", "q68", "q95", "q99", "q100"]
COLS = ["p000", "p001", "p005", "p032", "p050", "p068", "p095", "p099", "p100"]


def summary_query(metric, prefix, scale=""):
    cols = ", ".join('last("%s")%s AS "%s_%s"' % (q, scale, prefix, c) for q, c in zip(PCT, COLS))
    return ('SELECT %s FROM "task_quantiles" WHERE "metric" = \'%s\' AND "window" = \'cumulative\' '
            'AND ("category" =~ /^$category$/) AND $timeFilter GROUP BY "category"' % (cols, metric))


def task_resources():
    L = Layout()
    ps = [
        panel(L, "Wall time p50 / p95 / p99 per category",
              "Quantiles of wall time per category from the `task_quantiles` points (tasklens's "
              "mergeable sketches; window = the selected window, `cumulative` = since the start).",
              "s",
              ['SELECT last("q50") AS "p50", last("q95") AS "p95", last("q99") AS "p99" FROM '
               '"task_quantiles" WHERE "metric" = \'wall_time_s\' AND %s AND $timeFilter '
               'GROUP BY time($__interval), "category" fill(none)' % Q]),
        panel(L, "Peak memory p50 / p95 / max per category",
              "Quantiles of each task's peak resident memory (max_rss_bytes) per category, from "
              "`task_quantiles`.", "bytes",
              ['SELECT last("q50") AS "p50", last("q95") AS "p95", last("q100") AS "max" FROM '
               '"task_quantiles" WHERE "metric" = \'max_rss_bytes\' AND %s AND $timeFilter '
               'GROUP BY time($__interval), "category" fill(none)' % Q]),
        panel(L, "CPU efficiency",
              "cpu_time / (wall_time x allocated cores) summed over the attempts of each interval, "
              "per category, from `task` points (Work Queue: cores allocated to the task).",
              "percent",
              ['SELECT sum("cpu") / sum("core_s") * 100 AS "efficiency" FROM (SELECT "cpu_time_s" '
               'AS "cpu", "wall_time_s" * "alloc_cores" AS "core_s" FROM "task" WHERE %s AND '
               '$timeFilter GROUP BY "category") WHERE $timeFilter GROUP BY time($__interval), '
               '"category" fill(none)' % TASKS]),
        panel(L, "Memory: requested vs allocated vs measured",
              "Mean per interval of memory requested and allocated by the manager and the peak "
              "measured; the gap between allocated and measured is waste.", "bytes",
              ['SELECT mean("req_memory_bytes") AS "requested", mean("alloc_memory_bytes") AS '
               '"allocated", mean("max_rss_bytes") AS "measured", mean("alloc_memory_bytes") - '
               'mean("max_rss_bytes") AS "waste" FROM "task" WHERE %s AND $timeFilter GROUP BY '
               'time($__interval) fill(none)' % TASKS]),
        panel(L, "Memory vs runtime (one point per task)",
              "Each attempt's wall time against its peak memory, from the `task` points (at most "
              "5000 per category).", "s",
              ['SELECT "wall_time_s", "max_rss_bytes" FROM "task" WHERE %s AND $timeFilter '
               'GROUP BY "category" LIMIT 5000' % TASKS], kind="xychart", fmt="table",
              extra={"options": {"seriesMapping": "auto", "dims": {"x": "wall_time_s"}}}),
        panel(L, "Queue time distribution",
              "Histogram of the time attempts waited between submission and start (queue_time_s "
              "of the `task` points).", "s",
              ['SELECT "queue_time_s" FROM "task" WHERE %s AND $timeFilter' % TASKS],
              kind="histogram"),
        panel(L, "Resource usage summary (as LSST's ResourceUsageSummary)",
              "Per category: quanta, integrated_runtime_hrs (sum of CPU time / 3600), "
              "mem_GB_pXXX (GiB = bytes / 1024^3), runtime_s_pXXX (CPU time), walltime_s_pXXX, "
              "from the newest cumulative `task_quantiles` points; equals `tasklens summary "
              "--lsst-summary` on the same input.", "none",
              ['SELECT last("count") AS "quanta", last("sum") / 3600 AS "integrated_runtime_hrs" '
               'FROM "task_quantiles" WHERE "metric" = \'cpu_time_s\' AND "window" = \'cumulative\' '
               'AND ("category" =~ /^$category$/) AND $timeFilter GROUP BY "category"',
               summary_query("max_rss_bytes", "mem_GB", " / 1073741824"),
               summary_query("cpu_time_s", "runtime_s"),
               summary_query("wall_time_s", "walltime_s")],
              kind="table", w=24, h=10, fmt="table",
              extra={"transformations": [{"id": "merge", "options": {}},
                                         {"id": "organize",
                                          "options": {"excludeByName": {"Time": True}}}]}),
    ]
    return dashboard("tasklens-task-resources", "tasklens: task resources",
                     "What do tasks cost, per category, and how much of the allocation is used?",
                     ps, ["qcategory", "window", "workflow", "host"])


def pipeline_health():
    L = Layout()
    I = '("instance" =~ /^$instance$/) AND ("input" =~ /^$input$/)'
    ps = [
        panel(L, "Lines, records and rejected lines per second",
              "Rates of tasklens's own counters (`tasklens` self-metrics, one series per input): "
              "lines read, records made, lines rejected (parse errors).", "short",
              ['SELECT non_negative_derivative(last("lines"), 1s) AS "lines/s", '
               'non_negative_derivative(last("records"), 1s) AS "records/s", '
               'non_negative_derivative(last("parse_errors"), 1s) AS "rejected/s" FROM "tasklens" '
               'WHERE %s AND $timeFilter GROUP BY time($__interval), "input" fill(none)' % I]),
        panel(L, "Source lag",
              "Messages behind the end of each Kafka partition (0 for files, which are read to "
              "their end), from the `tasklens` self-metrics.", "short",
              ['SELECT last("lag") FROM "tasklens" WHERE %s AND $timeFilter GROUP BY '
               'time($__interval), "input" fill(none)' % I]),
        panel(L, "Queue depth",
              "Line protocol waiting in tasklens's output buffer before the sinks take it.",
              "bytes",
              ['SELECT max("queue_bytes") FROM "tasklens" WHERE %s AND $timeFilter GROUP BY '
               'time($__interval), "instance" fill(none)' % I], w=8),
        panel(L, "Spool",
              "Bytes in the disk spool: batches InfluxDB could not take yet (grows during an "
              "outage, drains after).", "bytes",
              ['SELECT max("spool_bytes") FROM "tasklens" WHERE %s AND $timeFilter GROUP BY '
               'time($__interval), "instance" fill(none)' % I], w=8),
        panel(L, "Sink errors",
              "New HTTP errors, retries and points InfluxDB refused per interval (from the "
              "sink's counters in the self-metrics).", "short",
              ['SELECT non_negative_difference(max("http_errors")) AS "http errors", '
               'non_negative_difference(max("retries")) AS "retries", '
               'non_negative_difference(max("points_dropped")) AS "points refused" FROM "tasklens" '
               'WHERE %s AND $timeFilter GROUP BY time($__interval), "instance" fill(none)' % I],
              w=8),
    ]
    return dashboard("tasklens-pipeline-health", "tasklens: pipeline health",
                     "Is tasklens keeping up, and is anything being rejected or held back?", ps,
                     ["instance", "input"])


def insights():
    """One row per insight command; tasklens advise / plan / energy --format lp write the
    points (see the README, Insights)."""
    L = Layout()
    IC = '("category" =~ /^$category$/)'
    table = {"transformations": [{"id": "organize", "options": {"excludeByName": {"Time": True}}}]}
    ps = [
        panel(L, "Right-sizing: allocated, used and recommended per category and resource",
              "From `tasklens advise --format lp` (measurement `task_advice`): median allocation, "
              "the used quantile (used_q, p95 by default), the recommended first allocation (used "
              "quantile x margin for memory and disk, rounded up to the worker granularity), the "
              "share of attempts above it, the waste now and what the recommendation saves (core-"
              "hours for cores, GiB-hours for memory and disk), and the RESOURCE_EXHAUSTION "
              "attempts it would have avoided. Memory and disk are in bytes.", "none",
              ['SELECT last("allocated_p50") AS "allocated", last("used_q") AS "used", '
               'last("recommend") AS "recommend", last("exceed_fraction") * 100 AS "exceed %%", '
               'last("waste_hours") AS "waste (h)", last("saves_hours") AS "saves (h)", '
               'last("exhausted") AS "exhausted", last("exhausted_avoided") AS "avoided" '
               'FROM "task_advice" WHERE %s AND $timeFilter GROUP BY "category", "resource"' % IC],
              kind="table", w=24, h=9, fmt="table", extra=table),
        panel(L, "Capacity plan: node-hours per category and node type",
              "From `tasklens plan --format lp` (measurement `task_plan`): tasks planned, the p95 "
              "time and memory per task, jobs per node (min of cores / cores per task and node "
              "memory / memory p95), which resource binds, and the node-hours and node-days; the "
              "`total` row sums the categories.", "none",
              ['SELECT last("tasks") AS "tasks", last("time_s") AS "time p95 (s)", '
               'last("memory_bytes") / 1073741824 AS "memory p95 (GiB)", last("jobs_per_node") AS '
               '"jobs/node", last("node_hours") AS "node-hours", last("node_days") AS "node-days" '
               'FROM "task_plan" WHERE ("category" =~ /^$category$/ OR "category" = \'total\') AND '
               '$timeFilter GROUP BY "node", "category", "binds"'],
              kind="table", w=24, h=9, fmt="table", extra=table),
        panel(L, "Energy and emissions per category",
              "From `tasklens energy --format lp` (measurement `task_energy`): kWh = PUE x (CPU "
              "seconds x W per core + peak-RSS GiB x wall seconds x W per GiB) / 3.6e6, kgCO2eq = "
              "kWh x grid intensity / 1000; the model's assumptions are columns of the table.",
              "none",
              ['SELECT last("kwh") AS "kWh", last("kwh_cpu") AS "kWh CPU", last("kwh_memory") AS '
               '"kWh memory", last("kg_co2eq") AS "kgCO2eq", last("attempts") AS "attempts", '
               'last("w_per_core") AS "W/core", last("w_per_gib") AS "W/GiB", last("pue") AS "PUE", '
               'last("g_co2eq_per_kwh") AS "gCO2eq/kWh" FROM "task_energy" WHERE "scope" = '
               '\'category\' AND %s AND $timeFilter GROUP BY "category"' % IC],
              kind="table", w=16, h=9, fmt="table", extra=table),
        panel(L, "Emissions per workflow",
              "kgCO2eq per workflow (Work Queue manager run, LSST run, trace file) from "
              "`task_energy` points with scope = workflow.", "none",
              ['SELECT last("kg_co2eq") AS "kgCO2eq" FROM "task_energy" WHERE "scope" = '
               '\'workflow\' AND $timeFilter GROUP BY "workflow"'],
              kind="bargauge", w=8, h=9, fmt="time_series"),
    ]
    return dashboard("tasklens-insights", "tasklens: insights",
                     "Right-sizing, capacity planning and energy per category (tasklens advise, "
                     "plan, energy).", ps, ["icategory"])


def main():
    for name, d in (("workflow-overview", workflow_overview()), ("task-resources", task_resources()),
                    ("pipeline-health", pipeline_health()), ("insights", insights())):
        path = os.path.join(HERE, "dashboards", name + ".json")
        with open(path, "w") as f:
            json.dump(d, f, indent=2)
            f.write("\n")
        print(path, len(d["panels"]), "panels")


if __name__ == "__main__":
    main()
