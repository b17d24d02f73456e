"""Runs a dashboard's queries the way Grafana runs them, against a real
InfluxDB, and turns the answers into plain numbers for comparison.

Grafana's substitutions, as its InfluxDB data source makes them:
- InfluxQL: $timeFilter (time >= Xms and time <= Yms), $__interval,
  $__interval_ms, and each variable $name as a regex ("All" = the custom
  all value .*, unescaped; one value = regex-escaped, kbn.regexEscape);
- Flux: v.timeRangeStart / v.timeRangeStop (RFC 3339 times), v.windowPeriod
  (a duration), v.defaultBucket (the data source's bucket, quoted), and
  ${name:regex} as above;
- PromQL (its Prometheus data source): $__interval and $__range as
  durations, $name as a regex as above; a graph is a range query from the
  range's start to its stop, both aligned to the step (the interval), a
  table an instant query at the stop.

A Range is what a user picks: [start_ms, stop_ms] and the interval Grafana
derives from the zoom. Flux's range() excludes its stop and InfluxQL's
$timeFilter includes it: tests keep points off the edges.
"""
import re
import time


class Range:
    def __init__(self, start_ms, stop_ms, interval_ms):
        self.start_ms, self.stop_ms, self.interval_ms = start_ms, stop_ms, interval_ms

    def __repr__(self):
        return "[%s, %s] every %gs" % (rfc3339(self.start_ms), rfc3339(self.stop_ms), self.interval_ms / 1000)


def rfc3339(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)


def regex_escape(v):
    """Grafana's kbn.regexEscape."""
    return re.sub(r"([\\^$*+?.()|{}\[\]/])", r"\\\1", v)


def var_value(values):
    """A variable's substitution: None or "All" -> .*, else the escaped values as (a|b)."""
    if values is None:
        return ".*"
    esc = [regex_escape(v) for v in values]
    return esc[0] if len(esc) == 1 else "(" + "|".join(esc) + ")"


def influxql_text(q, rng, variables):
    q = q.replace("$timeFilter", "time >= %dms and time <= %dms" % (rng.start_ms, rng.stop_ms))
    q = q.replace("$__interval_ms", str(rng.interval_ms))
    q = q.replace("$__interval", "%dms" % rng.interval_ms)
    for name in sorted(variables, key=len, reverse=True):
        q = q.replace("$" + name, var_value(variables[name]))
    return q


def flux_text(q, rng, variables, bucket):
    q = q.replace("v.timeRangeStart", rfc3339(rng.start_ms))
    q = q.replace("v.timeRangeStop", rfc3339(rng.stop_ms))
    q = q.replace("v.windowPeriod", "%dms" % rng.interval_ms)
    q = q.replace("v.defaultBucket", '"%s"' % bucket)
    for name in variables:
        q = q.replace("${%s:regex}" % name, var_value(variables[name]))
    return q


def duration(ms):
    return "%ds" % (ms // 1000) if ms % 1000 == 0 else "%dms" % ms


def promql_text(q, rng, variables):
    q = q.replace("$__interval_ms", str(rng.interval_ms))
    q = q.replace("$__interval", duration(rng.interval_ms))
    q = q.replace("$__range", duration(rng.stop_ms - rng.start_ms))
    for name in sorted(variables, key=len, reverse=True):
        q = q.replace("$" + name, var_value(variables[name]))
    return q


def unsubstituted(q):
    return re.search(r"\$\w|\$\{|v\.(timeRange|windowPeriod|defaultBucket)", q)


def to_float(v):
    if v is None or v == "":
        return None
    return float(v)


class InfluxQLRunner:
    """query(q) -> the InfluxQL answer of a 1.x Influxd or a 2.x Influxd2 (DBRP)."""

    def __init__(self, query, db):
        self.query, self.db = query, db

    def series(self, q):
        doc = self.query(q, self.db)
        out = []
        for res in doc.get("results", []):
            out += res.get("series", [])
        return out

    def panel(self, panel_queries, rng, variables, interval_key=True, tag_keys=None):
        """{(tags..., bucket or None): {column: value}} over all targets of a
        panel (tags: those named in tag_keys, or all the series has)."""
        rows = {}
        for q in panel_queries:
            for s in self.series(influxql_text(q, rng, variables)):
                tags = tuple(sorted((k, v) for k, v in s.get("tags", {}).items()
                                    if tag_keys is None or k in tag_keys))
                for v in s["values"]:
                    row = dict(zip(s["columns"], v))
                    t = row.pop("time")
                    key = (tags, bucket_of(t, rng) if interval_key else None)
                    rows.setdefault(key, {}).update({k: to_float(x) for k, x in row.items()})
        return rows


class FluxRunner:
    def __init__(self, db, bucket):
        self.db, self.bucket = db, bucket

    def tables(self, q):
        return self.db.flux(q)

    def panel(self, panel_queries, rng, variables, interval_key=True, tag_keys=("category",)):
        """Same shape as InfluxQLRunner.panel: per-interval series give
        {alias (_field): value}; tables give their own columns."""
        rows = {}
        for q in panel_queries:
            for table in self.tables(flux_text(q, rng, variables, self.bucket)):
                for r in table:
                    tags = tuple(sorted((k, r[k]) for k in tag_keys if k in r and r[k] != ""))
                    if "_value" in r:
                        t = iso_ms(r["_time"]) if r.get("_time") else None
                        key = (tags, bucket_of(t, rng) if interval_key else None)
                        rows.setdefault(key, {})[r.get("_field") or "_value"] = to_float(r["_value"])
                    else:
                        key = (tags, None)
                        skip = {"", "result", "table", "_start", "_stop", "_time", "_measurement", "binds"} | set(tag_keys)
                        rows.setdefault(key, {}).update({k: to_float(v) for k, v in r.items() if k not in skip})
        return rows


def iso_ms(s):
    """An RFC 3339 time from Flux's CSV -> epoch ms (floor)."""
    m = re.match(r"(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)(?:\.(\d+))?Z", s)
    y, mo, d, h, mi, se = (int(x) for x in m.groups()[:6])
    frac = (m.group(7) or "0")[:3].ljust(3, "0")
    import calendar
    return calendar.timegm((y, mo, d, h, mi, se, 0, 0, 0)) * 1000 + int(frac)


def bucket_of(t, rng):
    """The interval of the graph a time falls in (epoch-aligned, as both
    GROUP BY time() and aggregateWindow() align it)."""
    if t is None:
        return None
    if isinstance(t, str):
        t = iso_ms(t)
    return t // rng.interval_ms


class PromRunner:
    """The PromQL set against a Prometheus-compatible server (prom_harness)."""

    def __init__(self, api):
        self.api = api

    def hwin(self, query, rng):
        """A query_result() variable as Grafana evaluates it: the inner
        query at the range's stop, the value the variable's regex takes
        from the result."""
        inner = re.match(r"query_result\((.*)\)$", query, re.S).group(1)
        inner = inner.replace("$__range_s", str((rng.stop_ms - rng.start_ms) // 1000))
        got = self.api.query(inner, rng.stop_ms / 1000)
        return [labels["w"] for labels, _ in got]

    def run(self, expr, rng, variables, instant, hwin_query=None):
        if "$hwin" in expr:
            if hwin_query is None:
                import make_dashboards
                hwin_query = "query_result(%s)" % make_dashboards.PROM_HWIN
            (w,) = self.hwin(hwin_query, rng)
            expr = expr.replace("$hwin", w)
        q = promql_text(expr, rng, variables)
        if instant:
            return [(labels, [(rng.stop_ms / 1000, v)]) for labels, v in self.api.query(q, rng.stop_ms / 1000)]
        i = rng.interval_ms
        start, stop = rng.start_ms // i * i, -(-rng.stop_ms // i) * i
        return self.api.query_range(q, start / 1000, stop / 1000, i / 1000)

    def panel(self, targets, rng, variables, interval_key=True, tag_keys=("category",)):
        """Same shape as the others: a graph's series are named by their
        legend's last word (p50, p95, ...), a table's by its column."""
        rows = {}
        for expr, legend in targets:
            name = legend.split()[-1] if interval_key else legend
            for labels, points in self.run(expr, rng, variables, not interval_key):
                tags = tuple(sorted((k, labels[k]) for k in tag_keys if k in labels))
                if legend == "@col":  # a table as one query: each cell's column in its label
                    name = labels.get("col")
                for t, v in points:
                    if interval_key and not rng.start_ms <= t * 1000 <= rng.stop_ms:
                        continue  # the step-aligned points outside the range are not drawn
                    key = (tags, round(t * 1000) // rng.interval_ms if interval_key else None)
                    rows.setdefault(key, {})[name] = v
        return rows
