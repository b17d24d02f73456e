#!/usr/bin/env python3
"""`tasklens path` (issue 59): where the makespan went, against an
independent computation (path_ref.py, plain Python from docs/path.md) on

1. a real Parsl run with dependencies (parsl_dag.py: two workers, so ready
   tasks wait; a straggler; a try that fails and is retried): the path
   follows task_depends from the report back, the steps tile the makespan,
   the retried task's first try counts as retries, the bound, slack, the
   replay and what-ifs, waves and stragglers equal the reference's;
2. the bundled Work Queue log (no dependencies: the slot rule) and the real
   inputs in ../shared (Nextflow traces, Chrome traces, Spark event logs);
3. names are data: a category with an escape sequence is shown escaped in
   the table and comes back whole from the JSON.

usage: path.py TASKLENS DEMO_WQ_LOG
"""
import decimal
import glob
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402
import path_ref  # noqa: E402

TL = sys.argv[1]
WQ_LOG = sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared"))


def records(path):
    r = subprocess.run([TL, "records", "-q", "-f", "ndjson", path], capture_output=True, text=True)
    return [json.loads(l, parse_float=decimal.Decimal) for l in r.stdout.splitlines()]


def tl_path(path, *extra):
    r = subprocess.run([TL, "path", "-q", "--format", "json", *extra, path], capture_output=True, text=True)
    return r, (json.loads(r.stdout) if r.returncode == 0 and r.stdout else None)


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and math.isinf(a):
        return a == b
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def differ(got, want, where=""):
    """The first place got and want differ (numbers within 1e-6), or None."""
    if isinstance(want, dict):
        for k, v in want.items():
            if k not in got:
                return "%s.%s missing" % (where, k)
            d = differ(got[k], v, "%s.%s" % (where, k))
            if d:
                return d
        return None
    if isinstance(want, list):
        if len(got) != len(want):
            return "%s: %d items, want %d" % (where, len(got), len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            d = differ(g, w, "%s[%d]" % (where, i))
            if d:
                return d
        return None
    if isinstance(want, (int, float)) and not isinstance(want, bool) and want is not None:
        return None if isinstance(got, (int, float)) and close(float(got), float(want)) else \
            "%s: %r, want %r" % (where, got, want)
    return None if got == want else "%s: %r, want %r" % (where, got, want)


def against_reference(path, name, deps=None, flows=False):
    r, got = tl_path(path)
    if not check(r.returncode == 0 and got, "%s: path runs (%s)" % (name, r.stderr.strip()[:200])):
        return None
    mtime = decimal.Decimal(os.stat(path).st_mtime_ns) / 10**9
    want = path_ref.analyze(records(path), deps, untimed_end=mtime, flows=flows)
    d = differ(got["runs"], want, "runs")
    against_reference.last = want
    check(d is None, "%s: every number equals the independent computation (%d runs, %d path steps)%s"
          % (name, len(want), sum(len(w["path"]) for w in want), "" if d is None else ": " + d))
    for run in got["runs"]:
        total = sum(s[k] for s in run["path"] for k in ("deps_s", "retries_s", "queue_s", "compute_s"))
        if not check(abs(total - run["makespan_s"]) <= 1e-6 * max(1, run["makespan_s"]),
                     "%s: the steps tile the makespan (%.9f s of %.9f s)" % (name, total, run["makespan_s"])):
            break
    return got


def report_section(path, name, tmp, want_runs):
    """The report's "Where the time went" equals the reference: the split
    along the path, the bound, the what-ifs (of the run with most tasks)."""
    import re
    out = os.path.join(tmp, "where.html")
    r = subprocess.run([TL, "report", "-q", "-o", out, path], capture_output=True, text=True)
    html = open(out, encoding="utf-8").read() if r.returncode == 0 else ""
    sec = html[html.find('<section id="where"'):]
    sec = sec[:sec.find("</section>")]
    want = max(want_runs, key=lambda w: w["tasks"])
    split = dict(re.findall(r'<tr data-part="(\w+)"><td class="n">.*?</td><td data-v="([^"]+)"', sec))
    bound = re.search(r'data-k="bound" data-v="([^"]+)"', sec)
    rows = re.findall(r'<table data-table="where-whatif">(.*?)</table>', sec, re.S)
    whatif = re.findall(r'<tr><td class="n">.*?</td><td data-v="([^"]+)">.*?</td><td data-v="[^"]+">.*?</td>'
                        r'<td data-v="([^"]+)">', rows[0]) if rows else []
    parts = {"compute": "compute_s", "queue": "queue_s", "retries": "retries_s", "deps": "deps_s"}
    ok_split = split and all(close(float(split[p]), sum(s[k] for s in want["path"])) for p, k in parts.items()) \
        and close(float(split["makespan"]), want["makespan_s"])
    ok_whatif = len(whatif) == len(want["what_if"]) and all(
        close(float(a), w["replay_s"]) and close(float(b), w["cpm_s"]) for (a, b), w in zip(whatif, want["what_if"]))
    check(r.returncode == 0 and ok_split and bound and close(float(bound.group(1)), want["bound"]["cpm_s"]) and ok_whatif,
          "%s: the report's \"Where the time went\" shows the reference's split, bound and %d what-ifs (%s)"
          % (name, len(want["what_if"]), r.stderr.strip()[:200]))


def parsl_run(tmp):
    """The real Parsl DAG run's monitoring.db, or None (said) when Parsl
    cannot be installed."""
    import parsl_monitoring
    py = parsl_monitoring.ensure_parsl()
    if not py:
        return None
    run_dir = os.path.join(tmp, "parsl")
    env = dict(os.environ, PATH=os.path.join(parsl_monitoring.VENV, "bin") + ":" + os.environ["PATH"])
    r = subprocess.run([py, os.path.join(HERE, "parsl_dag.py"), run_dir], env=env, capture_output=True, text=True,
                       timeout=300)
    if not check(r.returncode == 0, "the Parsl DAG run finished (%s)" % r.stderr.strip()[-300:]):
        return None
    return os.path.join(run_dir, "monitoring.db")


def parsl_deps(db):
    c = sqlite3.connect(db)
    out = {}
    for run, task, deps in c.execute("SELECT run_id, task_id, task_depends FROM task"):
        out.setdefault(run, {})[task] = [int(x) for x in (deps or "").split(",") if x.strip()]
    return out


def parsl_part(tmp):
    db = parsl_run(tmp)
    if not db:
        return
    deps = parsl_deps(db)
    got = against_reference(db, "Parsl DAG run", deps)
    if not got:
        return
    listed = {(r["workflow"], r["task_id"]): [int(x) for x in r.get("depends", "").split(",") if x]
              for r in records(db)}
    check(all(listed[k] == d for w in deps for t, d in deps[w].items() for k in [(w, t)] if k in listed) and
          any(listed.values()), "Parsl: records' depends column is task_depends, task by task")
    report_section(db, "Parsl DAG run", tmp, against_reference.last)
    run = got["runs"][0]
    c = sqlite3.connect(db)
    name = dict(c.execute("SELECT task_id, task_func_name FROM task"))
    cats = [s["category"] for s in run["path"]]
    check(cats[-2:] == ["merge", "report"] and run["dependencies"] == sum(len(v) for v in deps[list(deps)[0]].values()),
          "Parsl: the path ends merge -> report, along task_depends (%s)" % " -> ".join(cats))
    steps = run["path"]
    linked = all(steps[i - 1]["task_id"] in deps[run["workflow"]].get(s["task_id"], []) for i, s in enumerate(steps)
                 if i and deps[run["workflow"]].get(s["task_id"]))
    check(linked, "Parsl: each step with dependencies stepped back to one of them")
    ended = {t: e for t, e in c.execute("SELECT task_id, max(task_try_time_returned) FROM try GROUP BY task_id")}
    merge = next(s for s in steps if s["category"] == "merge")
    merge_deps = deps[run["workflow"]][merge["task_id"]]
    check(steps[steps.index(merge) - 1]["task_id"] == max(merge_deps, key=lambda d: ended[d]),
          "Parsl: merge stepped back to the dependency that ended last (%s)" % name[steps[steps.index(merge) - 1]["task_id"]])
    flaky = [w for w in run["waves"] if w["category"] == "flaky_once"]
    tries = c.execute("SELECT count(*) FROM try y JOIN task t USING (task_id, run_id) WHERE task_func_name = 'flaky_once'").fetchone()[0]
    check(flaky and tries == 2, "Parsl: the flaky task was tried twice (%d)" % tries)
    check(any(s["category"] == "align" and s["task_id"] in [st["task_id"] for st in run["stragglers"]] for s in steps),
          "Parsl: the straggling align is on the path and listed as a straggler")
    check(run["bound"]["cpm_s"] < run["makespan_s"] and run["replay"]["slots"] >= 2,
          "Parsl: the bound with unlimited workers (%.2f s) is below the makespan (%.2f s)"
          % (run["bound"]["cpm_s"], run["makespan_s"]))
    r = subprocess.run([TL, "path", db], capture_output=True, text=True)
    check(r.returncode == 0 and "critical path, %d steps" % len(steps) in r.stdout and "dependencies" in r.stdout,
          "Parsl: the table says the path and the dependencies")


def spark_deps(path):
    """A Spark event log's dependencies, read here from the log: each task
    waits for the task that ended last in each parent stage -- or, a
    parent skipped, in the earlier stage that computed the same RDD."""
    parents, rdd, last, rdd_stage, deps, app = {}, {}, {}, {}, {}, None
    for line in open(path, encoding="utf-8"):
        e = json.loads(line)
        kind = e.get("Event")
        if kind == "SparkListenerApplicationStart":
            app = e.get("App ID")
        elif kind == "SparkListenerJobStart":
            for si in e.get("Stage Infos", []):
                if si.get("RDD Info"):
                    rdd.setdefault(si["Stage ID"], si["RDD Info"][0]["RDD ID"])
        elif kind == "SparkListenerStageSubmitted":
            si = e["Stage Info"]
            parents.setdefault(si["Stage ID"], si.get("Parent IDs", []))
            if si.get("RDD Info"):
                rdd.setdefault(si["Stage ID"], si["RDD Info"][0]["RDD ID"])
        elif kind == "SparkListenerTaskEnd":
            stage, info = e["Stage ID"], e["Task Info"]
            found = []
            for p in parents.get(stage, []):
                l = last.get(p) or last.get(rdd_stage.get(rdd.get(p)))
                if l:
                    found.append(l[1])
            if found:
                deps[info["Task ID"]] = found
            if stage not in last or info["Finish Time"] >= last[stage][0]:
                last[stage] = (info["Finish Time"], info["Task ID"])
            if stage in rdd:
                rdd_stage[rdd[stage]] = stage
    return app, deps


def chrome_ns(v):
    """A trace time (decimal microseconds) in integer nanoseconds, exactly."""
    return int(decimal.Decimal(str(v)) * 1000)


def chrome_thread(e):
    """(pid, tid) as the trace viewers key a thread: 25738 and "25738" are one."""
    def part(v):
        if isinstance(v, bool) or v is None:
            return ("n", "")
        if isinstance(v, int) or (isinstance(v, str) and v.isdigit() and v.isascii() and len(v) <= 20):
            return ("i", str(v))
        return ("s", str(v))
    pid = part(e.get("pid"))
    return pid, (part(e["tid"]) if "tid" in e else pid)


def chrome_deps(path):
    """A Chrome trace's dependencies, bound here from its flow events as the
    Trace Event Format says: s and t bind to the innermost slice around
    their ts on their thread, f to the next slice starting at or after it
    (the one around it with "bp": "e"); v2 flows name their slice
    (bind_id, flow_in, flow_out). Each point's slice depends on the flow's
    previous point's slice. Task ids are the events' ordinals, as
    `records` numbers them."""
    import gzip
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    slices, points, open_b, n = {}, {}, {}, 0
    for e in events:
        if not isinstance(e, dict) or not e:
            continue
        n += 1
        ph, th = e.get("ph"), chrome_thread(e)
        typed = (repr(e.get("pid")), repr(e.get("tid", e.get("pid"))))
        start = None
        if ph == "X" and e.get("dur") is not None and e.get("ts") is not None and chrome_ns(e["dur"]) >= 0:
            start, end, ordinal = chrome_ns(e["ts"]), chrome_ns(e["ts"]) + chrome_ns(e["dur"]), n
        elif ph == "B" and e.get("ts") is not None:
            open_b.setdefault(typed, []).append((chrome_ns(e["ts"]), n))
            start = None
        elif ph == "E" and open_b.get(typed) and e.get("ts") is not None:
            b_ts, b_n = open_b[typed].pop()
            if chrome_ns(e["ts"]) >= b_ts:
                slices.setdefault(th, []).append((b_ts, -chrome_ns(e["ts"]), b_n))
        if start is not None:
            slices.setdefault(th, []).append((start, -end, ordinal))
        if ph in ("X", "B") and e.get("bind_id") is not None and e.get("ts") is not None:
            key = ("2", str(e["bind_id"]))
            if e.get("flow_in") is True:
                points.setdefault(key, []).append((chrome_ns(e["ts"]), 2 * n, "f", n))
            if e.get("flow_out") is True:
                points.setdefault(key, []).append((chrome_ns(e["ts"]), 2 * n + 1, "s", n))
        if ph in ("s", "t", "f") and e.get("id") is not None and e.get("ts") is not None:
            key = ("1", e.get("cat"), e.get("name"), str(e["id"]))
            enclosing = ph != "f" or e.get("bp") == "e"
            points.setdefault(key, []).append((chrome_ns(e["ts"]), 2 * n, ph, (th, enclosing)))
    for v in slices.values():
        v.sort()

    def bind(where, ts):
        """The latest slice (by start, then shortest) around ts, looked for
        back from the last to start by ts; or the first to start at or
        after it."""
        import bisect
        th, enclosing = where
        v = slices.get(th, [])
        i = bisect.bisect_right(v, (ts, math.inf))
        if enclosing:
            return next((v[j][2] for j in range(i - 1, -1, -1) if -v[j][1] >= ts), None)
        i = bisect.bisect_left(v, (ts, -math.inf))
        return v[i][2] if i < len(v) else None

    deps = {}
    for key, pts in points.items():
        prev = None
        for ts, _, ph, where in sorted(pts, key=lambda p: (p[0], p[1])):
            sl = where if isinstance(where, int) else bind(where, ts)
            if ph == "s":
                prev = sl
                continue
            if sl is not None:
                if prev is not None and prev != sl:
                    deps.setdefault(sl, set()).add(prev)
                prev = sl
            if ph == "f":
                prev = None
    return {k: sorted(v) for k, v in deps.items()}


def one_step_page(path, name):
    """A path of one slice that spans the run (a profiler's own span): the
    report says why nothing shortens it, in the singular, and shows no
    "-0.0 %" change."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "one.html")
        r = subprocess.run([TL, "report", "-q", "-o", out, path], capture_output=True, text=True)
        page = open(out, encoding="utf-8").read() if r.returncode == 0 else ""
    sec = page[page.find('<section id="where"'):]
    sec = sec[:sec.find("</section>")]
    check('data-k="one-step"' in sec and "1 steps" not in sec and "-0.0 %" not in sec,
          "%s: one slice spans the run: the report says so, in the singular, without a -0.0 %% change" % name)


def chrome_part():
    """Chrome traces with flows: the dependencies tasklens binds equal the
    ones bound here, and every number of the path follows from them."""
    traces = sorted(glob.glob(os.path.join(SHARED, "chrome", "samples", "*.json*")))
    if not traces:
        print("SKIP: no Chrome traces in %s (the flow checks are left out)" % SHARED)
        return
    for p in traces:
        name = os.path.relpath(p, SHARED)
        deps = chrome_deps(p)
        recs = records(p)
        if not recs:
            continue
        wf = recs[0].get("workflow")
        tasks = {r.get("task_id") for r in recs}
        edges = sum(1 for to, fr in deps.items() if to in tasks for d in fr if d in tasks)
        got = against_reference(p, name, {wf: deps}, flows=True)
        if got and len(got["runs"][0]["path"]) == 1 and got["runs"][0]["tasks"] > 1000:
            one_step_page(p, name)
        if got:
            check(got["runs"][0]["dependencies"] == edges,
                  "%s: %d flow edges bound, as the trace's flow events say (%d)"
                  % (name, got["runs"][0]["dependencies"], edges))


def flows_part(tmp):
    """Every way a flow binds, in one small trace: s inside a nest (the
    innermost slice), a t on another thread, an f without "bp" (the next
    slice on its thread, written before its s), a lone f (no edge), v2's
    bind_id, and a slice's tid a string where its flow's is a number."""
    ev = [
        {"ph": "f", "id": 7, "cat": "c", "name": "n", "pid": 3, "tid": 3, "ts": 61},
        {"ph": "X", "name": "outer", "pid": 1, "tid": "1", "ts": 0, "dur": 100},
        {"ph": "X", "name": "inner", "pid": 1, "tid": "1", "ts": 10, "dur": 20},
        {"ph": "s", "id": 7, "cat": "c", "name": "n", "pid": 1, "tid": 1, "ts": 15},
        {"ph": "X", "name": "mid", "pid": 2, "tid": "2", "ts": 40, "dur": 20},
        {"ph": "t", "id": 7, "cat": "c", "name": "n", "pid": 2, "tid": 2, "ts": 45},
        {"ph": "X", "name": "last", "pid": 3, "tid": "3", "ts": 70, "dur": 40},
        {"ph": "f", "id": 99, "cat": "c", "name": "n", "pid": 3, "tid": 3, "ts": 0, "bp": "e"},
        {"ph": "X", "name": "v2src", "pid": 4, "tid": "4", "ts": 0, "dur": 5, "bind_id": "0xa", "flow_out": True},
        {"ph": "X", "name": "v2dst", "pid": 5, "tid": "5", "ts": 50, "dur": 55, "bind_id": "0xa", "flow_in": True},
    ]
    path = os.path.join(tmp, "flows.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)
    deps = chrome_deps(path)
    check(deps == {5: [3], 7: [5], 10: [9]},
          "flows: the reference binds inner->mid->last and v2src->v2dst, the lone f nowhere (%r)" % deps)
    got = against_reference(path, "flow corner cases", {"flows.json": deps}, flows=True)
    steps = [s["category"] for s in got["runs"][0]["path"]] if got else []
    check(got and got["runs"][0]["dependencies"] == 3 and steps == ["inner", "mid", "last"],
          "flows: the path steps back through the flow from last to mid to inner (%r)" % steps)
    last = got["runs"][0]["path"][-1] if got else {}
    check(close(last.get("queue_s"), 10e-6) and last.get("deps_s") == 0,
          "flows: a slice a flow leads to was submitted when its source ended: its wait after that is queue (%r)"
          % {k: last.get(k) for k in ("deps_s", "queue_s")})
    r = subprocess.run([TL, "summary", "-q", "--format", "json", path], capture_output=True, text=True)
    check(r.returncode == 0 and '"edge"' not in r.stdout, "flows: summary holds no edges (it does not ask for them)")


def shared_part():
    inputs = sorted(glob.glob(os.path.join(SHARED, "nextflow", "samples", "*.t*")) +
                    glob.glob(os.path.join(SHARED, "spark", "samples", "*")))
    inputs = [p for p in inputs if os.path.isfile(p) and not p.endswith((".md", ".txt")) or p.endswith("trace.txt")
              or "_trace" in os.path.basename(p)]
    inputs = [p for p in inputs if os.path.isfile(p) and os.path.getsize(p) < (8 << 20)
              and not os.path.basename(p).startswith(("SOURCES", "sha256"))]
    if not inputs:
        print("SKIP: no real inputs in %s (the checks on ../shared are left out)" % SHARED)
        return
    for p in inputs:
        recs = records(p)
        if not recs or len(recs) > 4000:
            continue
        deps = None
        if "/spark/" in p:
            wf = recs[0].get("workflow")
            app, d = spark_deps(p)
            deps = {wf: d}
            check(d and sum(map(len, d.values())) > 0,
                  "%s: stage parents give %d tasks dependencies (application %s)" % (os.path.relpath(p, SHARED),
                                                                                     len(d), app))
            listed = {r["task_id"]: [int(x) for x in r.get("depends", "").split(",") if x] for r in recs}
            check(all(listed.get(t, []) == v for t, v in d.items()) and sum(map(len, listed.values())) == sum(map(len, d.values())),
                  "%s: records' depends column holds those dependencies" % os.path.relpath(p, SHARED))
        against_reference(p, os.path.relpath(p, SHARED), deps)


def names_part(tmp):
    odd = "odd\x1b[31mred\u202ename"
    src = open(WQ_LOG, encoding="utf-8").read().replace("odd name", odd)
    path = os.path.join(tmp, "odd.log")
    with open(path, "w", encoding="utf-8") as f:
        f.write(src)
    r = subprocess.run([TL, "path", path], capture_output=True, text=True)
    check(r.returncode == 0 and "\x1b" not in r.stdout and "\u202e" not in r.stdout and "odd\\x1b[31mred" in r.stdout,
          "names are data: the table shows the category's escape and bidi override as visible escapes")
    _, got = tl_path(path)
    cats = {s["category"] for run in got["runs"] for s in run["path"]} if got else set()
    check(odd in cats, "names are data: the JSON gives the category back whole")
    html_name = 'odd</td><script>x("1")</script>&'
    path = os.path.join(tmp, "html.log")
    with open(path, "w", encoding="utf-8") as f:
        f.write(src.replace(odd, html_name))
    out = os.path.join(tmp, "html.html")
    r = subprocess.run([TL, "report", "-q", "-o", out, path], capture_output=True, text=True)
    page = open(out, encoding="utf-8").read() if r.returncode == 0 else ""
    sec = page[page.find('<section id="where"'):]
    sec = sec[:sec.find("</section>")]
    check(sec and "<script>" not in sec and "odd&lt;/td&gt;&lt;script&gt;x(&quot;1&quot;)&lt;/script&gt;&amp;" in sec,
          "names are data: the report's \"Where the time went\" shows a category of HTML as text")


def flow_limit_part():
    """Flow binding holds the trace's slices; past chrome.max_flow_bytes it
    lets go: said with file:line, the run goes on, and the path is the one
    of a trace without flows (each step waited for its worker)."""
    trace = os.path.join(SHARED, "chrome", "samples", "hta_df_index_resolver.json.gz")
    if not os.path.exists(trace):
        print("SKIP: %s absent (the flow limit check is left out)" % trace)
        return
    r, got = tl_path(trace, "-O", "chrome.max_flow_bytes=64K")
    loud = subprocess.run([TL, "path", "-O", "chrome.max_flow_bytes=64K", trace], capture_output=True, text=True)
    said = re.search(r"hta_df_index_resolver\.json\.gz:\d+: .*chrome\.max_flow_bytes", loud.stderr)
    check(r.returncode == 0 and got and said and got["runs"][0]["dependencies"] == 0,
          "a trace's flows past chrome.max_flow_bytes are left out, said with file:line (%s)" % loud.stderr.strip()[:200])
    if got:
        want = path_ref.analyze(records(trace), None, untimed_end=decimal.Decimal(os.stat(trace).st_mtime_ns) / 10**9)
        d = differ(got["runs"], want, "runs")
        check(d is None, "without its flows the path is the slot rule's, number for number%s" % ("" if d is None else ": " + d))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        got = against_reference(WQ_LOG, "bundled Work Queue log")
        if got:
            report_section(WQ_LOG, "bundled Work Queue log", tmp, against_reference.last)
            check(got["runs"][0]["dependencies"] == 0 and len(got["runs"][0]["path"]) > 1,
                  "Work Queue: no dependencies recorded, the path follows worker slots")
        names_part(tmp)
        shared_part()
        flows_part(tmp)
        flow_limit_part()
        chrome_part()
        parsl_part(tmp)
        r = subprocess.run([TL, "path", "--format", "lp", WQ_LOG], capture_output=True, text=True)
        check(r.returncode == 2 and "table or json" in r.stderr, "path --format lp is refused with the formats it has")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
