#!/usr/bin/env python3
"""`tasklens report` as a person sees it (issue 32): the page opened in a
real headless Chromium, and every number on it checked against an
independent computation from the same input.

1. The bundled Work Queue log: the page loads from the file alone (no
   request but itself, no <script>), with no console error or exception;
   every plot drew marks; the screenshot is not blank and its lines are told
   apart in grayscale (distinct lightness or dash).
2. Every summary cell (tasks, attempts, open, p50/p95/p99 of wall, CPU,
   memory, queue) and every CDF mark equals `summary --format json` on the
   same input.
   The per source and workflow table equals `summary --by source,workflow`.
3. Time to 50/90/99 % done and the longest-wall / most-memory outliers equal
   what Python computes from `tasklens lines` (task points, all fields).
4. The requested-vs-used advice equals `advise --format json`.
5. Rejected input: a log with bad lines shows each reason's count as
   `summary` does.
6. `--baseline`: every shift equals new/old - 1 from the two summaries'
   quantiles, highlighted exactly when beyond the threshold.
7. LSST metadata, a Chrome trace, a DASF trace, a Spark event log, a
   resource_monitor summary and a mix of formats: a page with marks, no error,
   and the summary's numbers, for each.
8. The first screen (issue 42), on every one of those pages and on the
   TaskVine Colmena run: at 1400 x 1000 the run card and the right-sizing
   ranking start within the first 1000 px; the card's tasks, attempts,
   success rate and CPU time equal sums over `summary --format json`, its
   unused allocations and every ranked cell (allocated, recommend, saves per
   resource) equal `advise --format json`; the ranking is by each
   category's largest share of the run's savings; no number in it is in
   exponent notation; the page is no wider than the window.
12. Sample series (Spark executors, DASF managed memory, Chrome counters)
   are drawn over time, not as task rows: each one's count, min and max
   equal summary JSON's.
11. Categories side by side: per metric a row per category (twenty at
   most, by cost) whose p5/p32/p50/p68/p95 equal summary JSON and whose
   memory diamond is advise's allocated p50.
10. Runs are runs: when the inputs hold several (the mix of formats), each
   is drawn on its own clock, its 50/90/99 % done times as Python computes
   them from `records` for that run alone.
9. Failures: per category the tasks that failed for good (their last
   attempt's result is not a success, or its exit code is not 0), the
   rate and the retried attempts equal what Python counts from `tasklens
   records` (NDJSON) of the same inputs; the results and exit codes with
   their counts equal `summary --format json`.

usage: report_browser.py TASKLENS REPO_DIR [SCREENSHOT_OUT]
(SCREENSHOT_OUT: also write the top of the demo page there, as docs/report-demo.png was made)
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from browser import Chromium, find_chromium, png_pixels  # noqa: E402
from checks import check, finish, resource_monitor  # noqa: E402
import advise_emit  # noqa: E402  (its BPS submit file)
import glossary_ref  # noqa: E402

DRAWN = ["wall_time_s", "cpu_time_s", "max_rss_bytes", "queue_time_s"]


def run(args, check=False, **kw):
    """args run; with check, a nonzero exit stops the test saying what the
    command said (a bare CalledProcessError hides it)."""
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    if check and r.returncode:
        sys.exit("%s exited %d:\n%s" % (" ".join(args), r.returncode, r.stderr[-3000:]))
    return r


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def num(v):
    return None if v in (None, "null") else float(v)


PAGE_FACTS = """(() => {
  const cells = [...document.querySelectorAll('table[data-table=summary] tr[data-g]')].map(tr => ({
    g: tr.dataset.g,
    counts: Object.fromEntries([...tr.querySelectorAll('td[data-k]')].map(td => [td.dataset.k, td.dataset.v])),
    q: [...tr.querySelectorAll('[data-m]')].map(td => [td.dataset.m, td.dataset.q, td.dataset.v]),
  }));
  const plots = [...document.querySelectorAll('svg.plot')].map(s => ({
    name: s.dataset.plot,
    marks: s.querySelectorAll('rect.bar, circle.pt, rect.box, line.med, rect.run').length +
           [...s.querySelectorAll('polyline')].filter(p => p.getAttribute('points').trim()).length,
  }));
  const cdfmarks = [...document.querySelectorAll('svg.plot[data-plot^="cdf "] line[data-q]')].map(l =>
    [l.closest('svg').dataset.plot, l.dataset.q, l.dataset.v]);
  const done = [...document.querySelectorAll('line[data-done]')].map(l => [l.dataset.done, l.dataset.v]);
  const tops = [...document.querySelectorAll('table[data-table^=top-]')].map(t =>
    [...t.querySelectorAll('tr')].slice(2).map(tr => [...tr.querySelectorAll('td')].map(td => td.dataset.v || td.textContent)));
  const advice = [...document.querySelectorAll('table[data-table=advice]')].map(t => ({
    g: t.dataset.g,
    rows: [...t.querySelectorAll('tr[data-res]')].map(tr => [tr.dataset.res,
      Object.fromEntries([...tr.querySelectorAll('td[data-k]')].map(td => [td.dataset.k, td.dataset.v])),
      tr.querySelector('td[data-k=exceed_fraction]')?.textContent]),
  }));
  const reasons = [...document.querySelectorAll('span[data-reason]')].map(s => [s.dataset.reason, s.dataset.v]);
  const base = [...document.querySelectorAll('table[data-table=baseline] td[data-m]')].map(td =>
    [td.closest('tr').dataset.g, td.dataset.m, td.dataset.q, td.dataset.v, td.dataset.hl, td.className]);
  const strokes = Object.fromEntries([...document.querySelectorAll('polyline[data-line]')].map(p => {
    const cs = getComputedStyle(p); return [p.dataset.line, [cs.stroke, cs.strokeDasharray]]; }));
  const wfs = [...document.querySelectorAll('table[data-table=workflows] tr[data-wf]')].map(tr => ({
    wf: tr.dataset.wf,
    counts: Object.fromEntries([...tr.querySelectorAll('td[data-k]')].map(td => [td.dataset.k, td.dataset.v])),
    q: [...tr.querySelectorAll('td[data-m]')].map(td => [td.dataset.q, td.dataset.v]),
  }));
  return {cells, plots, wfs, cdfmarks, done, tops, advice, reasons, base, strokes,
          scripts: [...document.querySelectorAll('script')].filter(e => e.src || !['task-data', 'task-script']
                     .includes(e.id)).length,
          external: [...document.querySelectorAll('[src],[href]')].map(e => e.getAttribute('src') || e.getAttribute('href'))
                      .filter(u => !u.startsWith('#'))};
})()"""


def dsl2_names(c, tasklens, repo, tmp):
    """Nextflow DSL2 process names (WF:SUB:PROC, up to 75 characters) wrap at their colons: the summary
    table fits a 1400 px window and no name spills out of its cell."""
    trace = os.path.join(repo, "..", "shared", "nextflow", "samples", "jianhong-chipseq_gh-pages_execution_trace.txt")
    if not os.path.exists(trace):
        print("SKIP part: no DSL2 trace in ../shared")
        return
    html = os.path.join(tmp, "dsl2.html")
    run([tasklens, "report", "-q", trace, "-o", html], check=True)
    open_page(c, html, "DSL2 names")
    got = c.eval("""(() => ({
      right: document.querySelector('table[data-table=summary]').getBoundingClientRect().right,
      width: document.documentElement.clientWidth,
      parts: document.querySelectorAll('table[data-table=summary] td.parts').length,
      spill: [...document.querySelectorAll('td.parts')].filter(td => td.scrollWidth > td.clientWidth + 1).length}))()""")
    check(got["parts"] > 0 and got["right"] <= got["width"] and not got["spill"],
          "DSL2 names: %d long names wrap at their colons; the summary table ends at %d px of %d; none spills "
          "out of its cell (%d)" % (got["parts"], got["right"], got["width"], got["spill"]))


def open_page(c, html, what):
    t = c.open(html)
    problems = c.problems()
    check(not problems, "%s: no console error or exception (%s)" % (what, problems[:3]))
    reqs = c.requests()
    check(len(reqs) == 1 and reqs[0].startswith("file://"),
          "%s: no request but the page itself (%s)" % (what, [u[:80] for u in reqs[:3]]))
    facts = c.eval(PAGE_FACTS)
    check(facts["scripts"] == 0 and not facts["external"],
          "%s: no script but the task table's own, inline; no external resource (%s)"
          % (what, [u[:80] for u in facts["external"][:3]]))
    layout = c.eval("""(() => {
      const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
      let clash = [];
      for (const svg of document.querySelectorAll('svg.plot[data-plot^="cdf "]')) {
        const boxes = [...svg.querySelectorAll('text.ql')].map(t => t.getBoundingClientRect());
        for (let i = 0; i < boxes.length; i++)
          for (let j = i + 1; j < boxes.length; j++) if (hit(boxes[i], boxes[j])) clash.push(svg.dataset.plot);
      }
      const zeros = [...document.querySelectorAll('g[data-q05]')].filter(g => +g.dataset.q05 <= 0);
      const atZero = [...document.querySelectorAll('svg.plot[data-plot^="scatter "] circle.pt title')]
        .filter(t => /(allocated|requested) 0B?,|used 0B?$/.test(t.textContent)).length;
      return {clash, zeros: zeros.length, unmarked: zeros.filter(g => !g.querySelector('[data-zero]')).length,
              atZero};
    })()""")
    check(not layout["clash"] and not layout["unmarked"] and not layout["atZero"],
          "%s: no two quantile labels of a CDF overlap (%s); every strip with a quantile of 0 marks it at the "
          "axis edge (%d of %d unmarked); no scatter point drawn for a 0 a log axis has no place for (%d)"
          % (what, layout["clash"][:2], layout["unmarked"], layout["zeros"], layout["atZero"]))
    empty = [p["name"] for p in facts["plots"] if not p["marks"]]
    check(facts["plots"] and not empty, "%s: %d plots, each drew marks (empty: %s)"
          % (what, len(facts["plots"]), empty[:5]))
    return facts, t


def is_series(g):
    """A group of samples only (a resource counter): not a row of task tables."""
    return not g["tasks"] and not g["attempts"] and not g["open"] and g["samples"]


def summary_checks(facts, summary):
    groups = {(g["key"]["category"] if g["key"]["category"] is not None else "(none)"): g
              for g in summary["groups"] if not is_series(g)}
    check(sorted(c["g"] for c in facts["cells"]) == sorted(groups),
          "summary rows: one per category of `summary` (%d)" % len(groups))
    bad = []
    for c in facts["cells"]:
        g = groups[c["g"]]
        for k in ("tasks", "attempts", "open"):
            if int(c["counts"][k]) != g[k]:
                bad.append((c["g"], k))
        for m, q, v in c["q"]:
            want = g["metrics"].get(m, {}).get("quantiles", {}).get(q)
            if not same(num(v), want):
                bad.append((c["g"], m, q, v, want))
    check(not bad, "every summary cell equals summary --format json (%d cells; differ: %s)"
          % (sum(3 + len(c["q"]) for c in facts["cells"]), bad[:3]))
    bad = []
    for plot, q, v in facts["cdfmarks"]:
        _, metric, name = plot.split(" ", 2)
        want = groups[name]["metrics"][metric]["quantiles"][q]
        if not same(float(v), want):
            bad.append((plot, q, v, want))
    check(facts["cdfmarks"] and not bad, "every CDF's p50/p95/p99 mark equals the summary's (%d; "
          "differ: %s)" % (len(facts["cdfmarks"]), bad[:3]))


def workflow_checks(facts, tasklens, inputs):
    s = json.loads(run([tasklens, "summary", "-q", "--by", "source,workflow", "--metrics",
                        "wall_time_s", "--format", "json"] + inputs, check=True).stdout)
    want = {"%s|%s" % (g["key"]["source"] or "", g["key"]["workflow"] or ""): g for g in s["groups"]}
    bad = [w["wf"] for w in facts["wfs"] if w["wf"] not in want or
           any(int(w["counts"][k]) != want[w["wf"]][k] for k in ("tasks", "attempts", "open")) or
           any(not same(num(v), want[w["wf"]]["metrics"]["wall_time_s"]["quantiles"][q])
               for q, v in w["q"])]
    check(len(facts["wfs"]) == len(want) and not bad,
          "per source and workflow: %d rows = summary --by source,workflow (differ: %s)"
          % (len(want), bad[:3]))


def lines_tasks(tasklens, inputs):
    """Task points of `tasklens lines`: (tags, fields, time in s)."""
    out = run([tasklens, "lines", "-q"] + inputs, check=True).stdout
    tasks = []
    for l in out.splitlines():
        if not l.startswith("task,"):
            continue
        head, fields, ts = re.match(r"(\S+(?:\\ \S+)*) (\S+) (\d+)$", l).groups()
        f = {}
        for kv in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,]+)', fields):
            k, v = kv
            f[k] = v if v.startswith('"') or v in ("true", "false") else float(v.rstrip("i"))
        tags = dict(t.split("=", 1) for t in re.split(r"(?<!\\),", head)[1:])
        tasks.append((tags, f, int(ts) / 1e9))
    return tasks


def time_and_outlier_checks(facts, tasks):
    t0 = min(ts - f.get("wall_time_s", 0) - f.get("queue_time_s", 0) for _, f, ts in tasks)
    ends = sorted(ts for _, f, ts in tasks if f.get("final") == "true")
    want = {}
    for p in (50, 90, 99):
        k = math.ceil(p / 100 * len(ends) - 1e-9)
        want[str(p)] = ends[max(k, 1) - 1] - t0
    got = dict(facts["done"])
    check(all(abs(float(got[p]) - want[p]) < 1e-6 for p in want),
          "time to 50/90/99 %% done equals Python's from the task points (%s vs %s)"
          % ({p: round(float(got[p]), 6) for p in got}, {p: round(want[p], 6) for p in want}))
    walls = sorted((f["wall_time_s"] for _, f, _ in tasks if "wall_time_s" in f), reverse=True)[:10]
    mems = sorted((f["max_rss_bytes"] for _, f, _ in tasks if "max_rss_bytes" in f), reverse=True)[:10]
    got_w = [float(r[-1]) for r in facts["tops"][0]]
    got_m = [float(r[-1]) for r in facts["tops"][1]]
    check(got_w == walls, "the 10 longest attempts' wall times are the task points' (%s)" % got_w[:3])
    check(got_m == mems, "the 10 largest memory peaks are the task points' (%s)" % got_m[:3])
    ids = [r[0] for r in facts["tops"][0]]
    check(all(i.startswith("task ") for i in ids), "outliers are named by task id (%s)" % ids[:2])


def advice_checks(facts, advise):
    cats = {c["category"]: c for c in advise["categories"]}
    keymap = {"allocated_p50": "allocated_p50", "used_q": "used_p95", "recommend": "recommend",
              "exceed_fraction": "exceed_fraction", "waste": "waste"}
    bad, n, shown = [], 0, []
    for t in facts["advice"]:
        for res, vals, text in t["rows"]:
            v = num(vals["exceed_fraction"])
            if v is not None and text != "%.1f%%" % (100 * v):
                shown.append((t["g"], res, text, v))
            a = cats[t["g"]]["resources"][res]
            for k, jk in keymap.items():
                n += 1
                if not same(num(vals[k]), a[jk]):
                    bad.append((t["g"], res, k, vals[k], a[jk]))
    check(n and not bad, "advice cells equal advise --format json (%d; differ: %s)" % (n, bad[:3]))
    check(not shown, "the share over the recommendation reads as advise prints it, a percentage (%s)" % shown[:3])


GLANCE_FACTS = """(() => {
  const g = document.querySelector('#glance');
  const t = document.querySelector('table[data-table=rightsizing]');
  return {
    card: Object.fromEntries([...document.querySelectorAll('[data-card=run] .stat')]
      .map(s => [s.dataset.k, s.dataset.v])),
    rows: [...document.querySelectorAll('table[data-table=rightsizing] tr[data-g]')].map(tr =>
      [tr.dataset.g, Object.fromEntries([...tr.querySelectorAll('td[data-k]')]
        .map(td => [td.dataset.k, td.dataset.v]))]),
    none: !!document.querySelector('[data-none=rightsizing]'),
    top: (t || document.querySelector('[data-none=rightsizing]') || g).getBoundingClientRect().top + scrollY,
    text: g ? g.innerText : '',
    page: document.body.innerText + ' ' + [...document.querySelectorAll('svg text')]
      .map(x => x.textContent).join(' '),
    width: document.documentElement.scrollWidth,
    collide: (() => { const out = [];
      for (const svg of document.querySelectorAll('svg.plot')) {
        const t = [...svg.querySelectorAll('text')].map(x => [x.textContent, x.getBoundingClientRect()]);
        for (let i = 0; i < t.length; i++) for (let j = i + 1; j < t.length; j++) {
          const a = t[i][1], b = t[j][1];
          if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
            out.push([svg.dataset.plot, t[i][0], t[j][0]]);
        }
      } return out; })(),
    wide: [...document.querySelectorAll('table')].filter(t => t.getBoundingClientRect().right > innerWidth)
      .map(t => [t.dataset.table, Math.round(t.getBoundingClientRect().width)]),
  };
})()"""

EXPONENT = r"(?<![\w.])\d+(?:\.\d+)?[eE][+-]\d+(?!\w)"
CANCELLED = tuple(glossary_ref.CANCELLED)  # the glossary's cancelled: neither failed nor succeeded


def glance_checks(c, tasklens, inputs, what, advise_args=()):
    f = c.eval(GLANCE_FACTS)
    s = json.loads(run([tasklens, "summary", "-q", "--format", "json"] + inputs).stdout)
    a = json.loads(run([tasklens, "advise", "-q", "--format", "json", *advise_args] + inputs).stdout)
    card = {k: num(v) for k, v in f["card"].items()}
    groups = s["groups"]
    results = [(k, n) for g in groups for k, n in g.get("results", {}).items() if k != "(none)"]
    want = {"tasks": sum(g["tasks"] for g in groups), "attempts": sum(g["attempts"] for g in groups),
            "inputs": len(s["inputs"])}
    records = [json.loads(l) for l in run([tasklens, "records", "-q", "-f", "ndjson"] + inputs).stdout.splitlines()]
    # the glossary: a cached task (an earlier run's) and a TaskVine library instance are counted
    # apart, never in this run's rate or CPU time; open tasks are said
    this_run = [r for r in records if r.get("result") not in ("CACHED", "LIBRARY_EXIT")]
    finals = [r for r in this_run if r["final"]]
    for key, res in (("cached", ("CACHED",)), ("libraries", ("LIBRARY_EXIT",)), ("cancelled", CANCELLED)):
        n = sum(1 for r in records if r["final"] and r.get("result") in res)
        if n:
            want[key] = n
    if sum(g["open"] for g in groups):
        want["open"] = sum(g["open"] for g in groups)
    if (results or any("exit_code" in r for r in finals)) and finals:
        ok = [r for r in finals if glossary_ref.succeeded(r.get("result"), r.get("exit_code"))]
        want["success_rate"] = len(ok) / len(finals)
        # the run's status as Nextflow's report counts it: succeeded, failed, retried
        want["succeeded"] = len(ok)
        want["failed"] = sum(1 for r in finals if glossary_ref.failed(r.get("result"), r.get("exit_code")))
        retried = sum(1 for r in records if not r["final"])
        if retried:
            want["retried"] = retried
    cpu = [r["cpu_time_s"] for r in finals if "cpu_time_s" in r]  # CPU-hours: this run's tasks'
    if cpu:
        want["cpu_hours"] = sum(cpu) / 3600
    core_h = sum((r["alloc_cores"] if r.get("alloc_cores") is not None else r.get("req_cores") or 0)
                 * r["wall_time_s"] for r in finals if r.get("wall_time_s") is not None) / 3600
    if core_h > 0:
        want["core_hours"] = core_h
    for res, key in (("cores", "waste_core_hours"), ("memory", "waste_mem_gib_hours"),
                     ("disk", "waste_disk_gib_hours")):
        w = sum(x["resources"][res]["waste"] or 0 for x in a["categories"])
        if w > 0:
            want[key] = w
    bad = [(k, card.get(k), v) for k, v in want.items() if not same(card.get(k), v)]
    bad += [(k, "extra") for k in card if k not in want and k not in ("start", "end", "makespan")]
    check(not bad, "%s: the run card equals sums over summary and advise JSON (%d figures; differ: %s)"
          % (what, len(card), bad[:3]))
    cats = {x["category"]: x["resources"] for x in a["categories"]}
    totals = {r: sum(x[r]["saves"] for x in cats.values() if x[r]["saves"] is not None) for r in
              ("cores", "memory", "disk")}
    bad, scores = [], []
    for g, cells in f["rows"]:
        res = cats.get(g)
        if res is None:
            bad.append((g, "not in advise"))
            continue
        for r in ("cores", "memory", "disk"):
            for k, jk in (("allocated", "allocated_p50"), ("recommend", "recommend"), ("saves", "saves")):
                got = cells.get("%s_%s" % (k, r))
                wantv = res[r][jk] if res[r]["measured"] else None
                if not same(None if got == "null" else num(got), wantv):
                    bad.append((g, k, r, got, wantv))
        scores.append(max([res[r]["saves"] / totals[r] for r in totals
                           if res[r]["saves"] is not None and totals[r] > 0] or [0]))
    ordered = all(x >= y - 1e-12 for x, y in zip(scores, scores[1:]))
    check(not bad and ordered and (f["rows"] or f["none"]),
          "%s: %d ranked categories, every cell = advise JSON, by largest share of the savings "
          "(differ: %s; order %s)" % (what, len(f["rows"]), bad[:3], [round(x, 3) for x in scores[:5]]))
    exps = re.findall(EXPONENT, f["text"])
    check(f["top"] < 1000 and f["width"] <= 1400 and not exps,
          "%s: the ranking starts at y=%d (first screen: < 1000), page %d px wide in 1400, no "
          "exponent in the first screen (%s)" % (what, f["top"], f["width"], exps[:3]))
    check(not f["wide"], "%s: no table wider than the 1400 px window, none behind a scroll (%s)"
          % (what, f["wide"][:3]))
    check(not f["collide"], "%s: no two labels of a plot overlap, by the browser's own boxes (%d: %s)"
          % (what, len(f["collide"]), f["collide"][:3]))
    exps = re.findall(EXPONENT, f["page"])
    check(not exps, "%s: no number on the page, text or plot label, in exponent notation (%s)"
          % (what, exps[:3]))


FAILURE_FACTS = """[...document.querySelectorAll('table[data-table=failures] tr[data-g]')].map(tr => [
  tr.dataset.g,
  Object.fromEntries([...tr.querySelectorAll('td[data-k]')].map(td => [td.dataset.k, td.dataset.v])),
  [...tr.querySelectorAll('span[data-result]')].map(x => [x.dataset.result, +x.dataset.v]),
  [...tr.querySelectorAll('span[data-exit]')].map(x => [x.dataset.exit, +x.dataset.v]),
  Object.fromEntries([...tr.querySelectorAll('span[data-cause]')].map(x => [x.dataset.cause, +x.dataset.v]))])"""

CORE_HOURS_FACTS = """Object.fromEntries([...document.querySelectorAll(
  'table[data-table=summary] tr[data-g]')].map(tr => [tr.dataset.g,
  tr.querySelector('td[data-k=core_hours]').dataset.v]))"""


TOP_FACTS = """(() => {
  const t = document.querySelector('table[data-table=summary]');
  const o = t.querySelector('tr[data-others]');
  return {top: [...t.querySelectorAll('tr[data-g]')].map(tr => tr.dataset.g),
          others: o ? [...o.querySelectorAll('td')].slice(0, 5).map(td => td.dataset.v || td.textContent) : null,
          collapsed: [...document.querySelectorAll('details table[data-table=summary] tr[data-g]')].map(tr => tr.dataset.g)};
})()"""


def top_checks(c, tasklens, inputs, what):
    """The summary table: the categories that cost most core-hours first, 20 of
    them when there are more than 21, the rest as one "others" row whose sums
    are theirs, and their own rows collapsed below."""
    s = json.loads(run([tasklens, "summary", "-q", "--format", "json"] + inputs).stdout)
    gs = [((g["key"]["category"] if g["key"]["category"] is not None else "(none)"), g) for g in s["groups"]
          if not is_series(g)]
    gs.sort(key=lambda x: (-x[1]["wall_hours"], -x[1]["tasks"], x[0]))
    f = c.eval(TOP_FACTS)
    top = 20 if len(gs) > 21 else len(gs)
    ok = f["top"] == [n for n, _ in gs[:top]] and f["collapsed"] == [n for n, _ in gs[top:top + 1000]]
    rest = [g for _, g in gs[top:]]
    if rest:
        want = ["%d others" % len(rest), sum(g["tasks"] for g in rest), sum(g["attempts"] for g in rest),
                sum(g["open"] for g in rest), sum(g["wall_hours"] for g in rest)]
        got = f["others"] or [None] * 5
        ok = ok and got[0] == want[0] and [int(x) for x in got[1:4]] == want[1:4] and same(float(got[4]), want[4])
    else:
        ok = ok and f["others"] is None
    check(ok, "%s: summary rows by wall-hours, %d shown, %d as one others row and collapsed (%s / %s)"
          % (what, top, len(rest), f["top"][:3], f["others"]))


RUN_FACTS = """[...document.querySelectorAll('section.run')].map(r => [r.dataset.run,
  Object.fromEntries([...r.querySelectorAll('line[data-done]')].map(l => [l.dataset.done, +l.dataset.v]))])"""


def run_checks(c, tasklens, inputs, what):
    """Several runs in the inputs: each drawn on its own clock, its 50/90/99 %
    done times as Python computes them from `records` for that run alone."""
    rows = [json.loads(l) for l in run([tasklens, "records", "-q", "-f", "ndjson"] + inputs).stdout.splitlines()]
    by = {}
    for r in rows:
        if "end_epoch_s" in r:
            by.setdefault("%s %s" % (r.get("source", "-"), r.get("workflow", "-")), []).append(r)
    runs = c.eval(RUN_FACTS)
    bad = []
    for name, done in runs:
        rs = by.get(name, [])
        t0 = min(min(r["end_epoch_s"] - r.get("wall_time_s", 0) - r.get("queue_time_s", 0), r["end_epoch_s"])
                 for r in rs)
        ends = sorted(r["end_epoch_s"] for r in rs if r["final"])
        for p in ("50", "90", "99"):
            k = max(1, math.ceil(int(p) / 100 * len(ends) - 1e-9))
            want = ends[k - 1] - t0
            if abs(done.get(p, float("nan")) - want) > 1e-6 * max(1, abs(want)):
                bad.append((name, p, done.get(p), want))
    with_tasks = [n for n, rs in by.items() if any(r["final"] for r in rs)]
    check(len(runs) == min(len(with_tasks), 8) and not bad if len(with_tasks) > 1 else not runs,
          "%s: %d runs, each on its own clock, its 50/90/99 %% done times = Python over its records "
          "(differ: %s)" % (what, len(runs), bad[:3]))


BASE_FACTS = """(() => ({
  pairs: [...document.querySelectorAll('table[data-table=baseline] tr[data-g]')].map(tr => [tr.dataset.g,
    [...tr.querySelectorAll('td[data-was]')].map(td => +td.dataset.was),
    [...tr.querySelectorAll('td[data-now]')].map(td => +td.dataset.now),
    [...tr.querySelectorAll('td[data-m]')].map(td => td.dataset.m)]),
  inputs: [...document.querySelectorAll('table[data-table=inputs] tr[data-baseline]')].map(tr =>
    [...tr.querySelectorAll('td[data-v]')].map(td => +td.dataset.v)),
  overlays: [...document.querySelectorAll('svg.plot[data-plot^="cdf "]')].filter(s =>
    s.querySelector('polyline.cdf.base')).map(s => s.dataset.plot),
  missing: [...document.querySelectorAll('table[data-table=baseline] tr[data-g]')].filter(tr =>
    tr.textContent.includes('not in the baseline')).map(tr => tr.dataset.g),
  hl: [...new Set([...document.querySelectorAll('table[data-table=baseline] td[data-hl="1"]')].map(td =>
    td.closest('tr').dataset.g))],
  said: (p => p && [+p.dataset.shifted, +p.dataset.missing, p.textContent])(document.querySelector('p[data-shifted]')),
}))()"""


def baseline_checks(c, tasklens, demo, base_log, new, old, tmp, text):
    """--baseline: both runs' p50 and p95 side by side (equal each summary's),
    the baseline's inputs in the Inputs table, its CDFs drawn under the run's;
    categories named with a per-run hash match, unless --exact-names."""
    f = c.eval(BASE_FACTS)
    bad = []
    for g, was, now, metrics in f["pairs"]:
        m = metrics[0] if metrics else None
        for k, q in enumerate(("0.5", "0.95")):
            if m and not (same(was[k], old[g]["metrics"][m]["quantiles"][q]) and
                          same(now[k], new[g]["metrics"][m]["quantiles"][q])):
                bad.append((g, m, q, was[k], now[k]))
    b = json.loads(run([tasklens, "summary", "-q", "--format", "json", base_log]).stdout)["inputs"][0]
    check(f["pairs"] and not bad and f["inputs"] == [[b["lines"], b["records"], b["rejected"]]],
          "baseline: each metric's p50 and p95 of both runs side by side = the two summaries; the "
          "baseline's input in the Inputs table (differ: %s; %s)" % (bad[:2], f["inputs"]))
    check(len(f["overlays"]) >= 4, "baseline: the baseline's CDFs drawn under the run's (%d plots)"
          % len(f["overlays"]))
    said = f["said"]
    check(said and said[:2] == [len(f["hl"]), len(set(f["missing"]))] and
          said[2].startswith("%d of %d " % (said[0], len({p[0] for p in f["pairs"]} | set(f["missing"])))),
          "baseline: the count of shifted categories is the table's highlighted ones (%s; highlighted %s, "
          "missing %s)" % (said, f["hl"], sorted(set(f["missing"]))))
    # a category named with a per-run hash, as Dask and TaskVine name them
    hashed = os.path.join(tmp, "hashed.log")
    hashed_base = os.path.join(tmp, "hashed-base.log")
    open(hashed, "w").write("".join(text).replace(" compute ", " compute-0f8bcde2b85e69eeb8e595ae20b0a367 "))
    open(hashed_base, "w").write("".join(text[: len(text) * 2 // 3]).replace(
        " compute ", " compute-7fa71a94910c03e2b248a00601700085 "))
    html = os.path.join(tmp, "hashed.html")
    for extra, want_missing in (([], []), (["--exact-names"], ["compute-0f8bcde2b85e69eeb8e595ae20b0a367"])):
        run([tasklens, "report", "-q", hashed, "--baseline", hashed_base, *extra, "-o", html], check=True)
        c.open(html)
        f = c.eval(BASE_FACTS)
        check(sorted(set(f["missing"])) == want_missing,
              "baseline%s: a category whose name carries a per-run hash %s (not matched: %s)"
              % (" --exact-names" if extra else "", "stays apart" if extra else "matches its baseline",
                 sorted(set(f["missing"]))))
        # its plots overlay the baseline's CDF exactly when its table row has the baseline
        hashed_overlays = [p for p in f["overlays"] if " compute-" in p]
        check(bool(hashed_overlays) == (not want_missing),
              "baseline%s: the hashed category's CDFs %s the baseline's (%d overlaid)"
              % (" --exact-names" if extra else "", "stand alone, without" if extra else "overlay",
                 len(hashed_overlays)))


STRIP_FACTS = """[...document.querySelectorAll('svg[data-plot^="strips "] g[data-g]')].map(g => [g.dataset.g,
  g.dataset.m, ['q05', 'q32', 'q50', 'q68', 'q95'].map(k => g.dataset[k]), g.dataset.alloc])"""


def strip_checks(c, tasklens, inputs, what):
    """Categories side by side: each row's p5/p32/p50/p68/p95 = summary JSON,
    memory's diamond = advise's allocated p50; twenty rows at most, by cost."""
    rows, bad = c.eval(STRIP_FACTS), []
    metrics = sorted({m for _, m, _, _ in rows} | {"bytes_read", "bytes_written", "virtual_memory_bytes"})
    s = json.loads(run([tasklens, "summary", "-q", "--format", "json", "--metrics", ",".join(metrics)]
                       + inputs).stdout)
    a = {x["category"]: x["resources"] for x in json.loads(
        run([tasklens, "advise", "-q", "--format", "json"] + inputs).stdout)["categories"]}
    groups = {(g["key"]["category"] if g["key"]["category"] is not None else "(none)"): g
              for g in s["groups"] if not is_series(g)}
    for g, m, qs, alloc in rows:
        want = groups[g]["metrics"][m]["quantiles"]
        for got, q in zip(qs, ("0.05", "0.32", "0.5", "0.68", "0.95")):
            if not same(num(got), want.get(q)):
                bad.append((g, m, q, got, want.get(q)))
        wa = a.get(g, {}).get("memory", {}) if m == "max_rss_bytes" else {}
        wa = wa.get("allocated_p50") if wa.get("measured") else None
        if not same(num(alloc), wa):
            bad.append((g, m, "alloc", alloc, wa))
    per = {}
    for g, m, _, _ in rows:
        per[m] = per.get(m, 0) + 1
    io = [m for m in ("bytes_read", "bytes_written", "virtual_memory_bytes")
          if any((g["metrics"].get(m, {}).get("max") or 0) > 0 for g in groups.values())]  # all 0: no log axis
    check(rows and not bad and max(per.values()) <= 20 and set(io) <= set(per),
          "%s: categories side by side, %d rows: quantiles = summary JSON, memory's allocation = "
          "advise, I/O where measured (%s) (differ: %s)" % (what, len(rows), io, bad[:3]))


SAMPLE_FACTS = """({series: [...document.querySelectorAll('[data-samples]')].map(d => [d.dataset.samples,
  +d.dataset.count, +d.dataset.min, +d.dataset.max, d.querySelector('polyline').getAttribute('points').trim()
  .split(/\\s+/).length]),
  constant: +((document.querySelector('[data-constant]') || {dataset: {constant: 0}}).dataset.constant)})"""


def sample_checks(c, tasklens, inputs, what):
    """Sample series (not tasks) drawn over time: each one's count, min and max
    = summary JSON's for that series; constant ones counted, not drawn."""
    s = json.loads(run([tasklens, "summary", "-q", "--format", "json"] + inputs).stdout)
    series = {g["key"]["category"]: g for g in s["groups"] if g["samples"]}
    f = c.eval(SAMPLE_FACTS)
    bad = []
    for name, count, lo, hi, points in f["series"]:
        v = series[name]["metrics"]["value"]
        if count != series[name]["samples"] or not same(lo, v["min"]) or not same(hi, v["max"]) or \
                points > 602:
            bad.append((name, count, lo, hi, points))
    varying = [n for n, g in series.items() if g["metrics"]["value"]["min"] != g["metrics"]["value"]["max"]]
    want_drawn = min(len(varying), 12)
    constant = len(series) - len(varying)
    said_ok = f["constant"] == constant if len(varying) <= 12 else f["constant"] <= constant
    check(not bad and len(f["series"]) == want_drawn and said_ok,
          "%s: %d sample series drawn over time (count, min, max = summary JSON), %d constant said "
          "(differ: %s)" % (what, len(f["series"]), f["constant"], bad[:3]))


def narrow_check(tasklens, repo, tmp):
    """At 1000 px the page still fits: wide tables scroll in their own box,
    plots scale down; nothing makes the page itself wider than the window."""
    demo = os.path.join(repo, "tests", "data", "wq", "demo-cctools-9.9.log")
    html = os.path.join(tmp, "narrow.html")
    run([tasklens, "report", "-q", demo, "-o", html], check=True)
    with Chromium(width=1000, height=900) as c:
        c.open(html)
        w = c.eval("document.documentElement.scrollWidth")
        over = c.eval("[...document.querySelectorAll('svg.plot')].filter(s => s.getBoundingClientRect()"
                      ".right > innerWidth).map(s => s.dataset.plot)")
    check(w <= 1000 and not over, "at 1000 px: the page %d px wide, no plot past the window (%s)"
          % (w, over[:3]))


def failure_checks(c, tasklens, inputs, what):
    rows = [json.loads(l) for l in run([tasklens, "records", "-q", "-f", "ndjson"] + inputs).stdout.splitlines()]
    s = json.loads(run([tasklens, "summary", "-q", "--format", "json"] + inputs).stdout)
    groups = {(g["key"]["category"] if g["key"]["category"] is not None else "(none)"): g for g in s["groups"]}
    want = {}
    for r in rows:
        w = want.setdefault(r.get("category", "(none)"), {"tasks": 0, "failed": 0, "retried": 0, "this_run": 0})
        if not r["final"]:
            w["retried"] += 1
            continue
        w["tasks"] += 1
        w["this_run"] += r.get("result") not in CANCELLED + ("LIBRARY_EXIT", "CACHED")
        w["failed"] += glossary_ref.failed(r.get("result"), r.get("exit_code"))
    causes, core_h = {}, {}
    for r in rows:
        cause = glossary_ref.cause(r)
        cat = r.get("category", "(none)")
        if cause:
            causes.setdefault(cat, {}).setdefault(cause, 0)
            causes[cat][cause] += 1
        cores = r.get("alloc_cores") if r.get("alloc_cores") is not None else r.get("req_cores")
        if r["final"] and cores and r.get("wall_time_s") is not None:
            core_h[cat] = core_h.get(cat, 0.0) + cores * r["wall_time_s"] / 3600
    bad = []
    got = c.eval(FAILURE_FACTS)
    for g, cells, results, exits, got_causes in got:
        if got_causes != causes.get(g, {}):
            bad.append((g, "causes", got_causes, causes.get(g, {})))
        w = want.get(g, {})
        for k in ("tasks", "retried", "failed"):
            if cells.get(k) != "null" and num(cells.get(k)) != w.get(k):
                bad.append((g, k, cells.get(k), w.get(k)))
        if cells.get("failure_rate") not in (None, "null") and not same(
                num(cells["failure_rate"]), w["failed"] / w["this_run"]):
            bad.append((g, "rate", cells["failure_rate"]))
        if dict(results) != groups[g].get("results", {}) or dict(exits) != groups[g].get("exit_codes", {}):
            bad.append((g, "counts", results[:3], exits[:3]))
    check(got and not bad and len(got) == len([g for g in want if want[g]["tasks"]]),
          "%s: failures per category (failed for good, rate, retried, failed attempts by cause) = "
          "Python over `records`, results and exit codes = summary JSON (%d rows, %d failed attempts "
          "with a cause; differ: %s)" % (what, len(got), sum(sum(v.values()) for v in causes.values()), bad[:3]))
    cells = c.eval(CORE_HOURS_FACTS)
    bad = [(g, v, core_h.get(g)) for g, v in cells.items()
           if (v == "null") != (g not in core_h) or (v != "null" and not same(float(v), core_h[g]))]
    check(cells and not bad, "%s: core-hours per category (allocated, else requested, cores x wall) = "
          "Python over `records` (%d categories with cores; differ: %s)" % (what, len(core_h), bad[:3]))


def screenshot_checks(c, shot, facts):
    c.screenshot(shot)
    w, h, rows = png_pixels(shot)
    rows = rows[:1500]
    ink = sum(1 for r in rows for p in r if sum(p) < 600) / float(w * len(rows))
    check(w >= 1000 and 0.01 < ink < 0.6, "screenshot %dx%d: %.1f %% of its top drawn" % (w, h, ink * 100))
    lum = {}
    for name, (stroke, dash) in facts["strokes"].items():
        r, g, b = [int(x) for x in re.findall(r"\d+", stroke)[:3]]
        lum[name] = (round(0.299 * r + 0.587 * g + 0.114 * b), dash)
    check(len(set(lum.values())) == len(lum),
          "each line differs from the others in grayscale: lightness or dash (%s)" % lum)


def main():
    tasklens, repo = sys.argv[1:3]
    shot_out = sys.argv[3] if len(sys.argv) > 3 else None
    if not find_chromium():
        print("SKIP: chromium is not installed (scripts/install-deps.sh installs it)")
        return 77
    demo = os.path.join(repo, "tests", "data", "wq", "demo-cctools-9.9.log")
    with tempfile.TemporaryDirectory() as tmp, Chromium(width=1400, height=1000) as c:
        html = os.path.join(tmp, "demo.html")
        r = run([tasklens, "report", demo, "-o", html])
        if not check(r.returncode == 0, "report on the demo log exits 0 (%s)" % r.stderr[-300:]):
            return finish()
        facts, t = open_page(c, html, "demo")
        exits = c.eval("[...document.querySelectorAll('span[data-exit]')].map(x => [x.dataset.exit, x.textContent])")
        check(c.eval("document.title") == "tasklens report: " + os.path.basename(demo)
              and exits and all(txt.startswith("exit %s \u00d7" % e) for e, txt in exits),
              "demo: titled with the input's name, not its path (%r); exit codes read 'exit N \u00d7count' (%s)"
              % (c.eval("document.title"), [t for _, t in exits[:3]]))
        summary = json.loads(run([tasklens, "summary", "--format", "json", demo], check=True).stdout)
        summary_checks(facts, summary)
        workflow_checks(facts, tasklens, [demo])
        tasks = lines_tasks(tasklens, [demo])
        time_and_outlier_checks(facts, tasks)
        advise = json.loads(run([tasklens, "advise", "--format", "json", demo], check=True).stdout)
        advice_checks(facts, advise)
        glance_checks(c, tasklens, [demo], "demo")
        failure_checks(c, tasklens, [demo], "demo")
        strip_checks(c, tasklens, [demo], "demo")
        screenshot_checks(c, os.path.join(tmp, "demo.png"), facts)
        if shot_out:
            c.screenshot(shot_out, max_height=2300)

        bad_log = os.path.join(tmp, "bad.log")
        with open(demo) as f:
            text = f.read().splitlines(True)
        with open(bad_log, "w") as f:
            f.writelines(text[:200] + ["garbage line\n", "1795302021 6045 TASK x y z\n"] + text[200:])
        html = os.path.join(tmp, "bad.html")
        run([tasklens, "report", "-q", bad_log, "-o", html], check=True)
        facts, _ = open_page(c, html, "rejected lines")
        s = json.loads(run([tasklens, "summary", "-q", "--format", "json", bad_log]).stdout)
        want = sorted((k, str(v)) for k, v in s["inputs"][0]["rejected_by"].items())
        check(want and sorted(tuple(r) for r in facts["reasons"]) == want,
              "rejected lines by reason as summary says (%s)" % facts["reasons"])

        # a category name that is markup: shown as text, never run or parsed
        evil = '<script>alert(1)</script><b>"odd"</b>&amp;'
        evil_log = os.path.join(tmp, "evil.log")
        with open(evil_log, "w") as f:
            f.write("".join(text).replace(" odd name ", " %s " % evil))
        html = os.path.join(tmp, "evil.html")
        run([tasklens, "report", "-q", evil_log, "-o", html], check=True)
        facts, _ = open_page(c, html, "a category named with markup")
        shown = c.eval("[...document.querySelectorAll('table[data-table=summary] tr[data-g] td.n')]"
                       ".map(td => td.textContent)")
        check(evil in shown and c.eval("document.querySelectorAll('script:not(#task-data):not(#task-script), td b, "
                                       "svg b').length") == 0,
              "a category named with markup is shown as its text, nothing of it runs (%s)" % shown[:6])

        # the baseline: the same log with every wall time doubled for `compute`
        # would need a writer; a real other run is the second half of the demo
        base_log = os.path.join(tmp, "base.log")
        with open(base_log, "w") as f:
            f.writelines(text[: len(text) * 2 // 3])
        html = os.path.join(tmp, "vs.html")
        run([tasklens, "report", "-q", demo, "--baseline", base_log, "--threshold", "10", "-o", html],
            check=True)
        facts, _ = open_page(c, html, "baseline")
        sb = json.loads(run([tasklens, "summary", "-q", "--format", "json", base_log]).stdout)
        old = {(g["key"]["category"]): g for g in sb["groups"]}
        new = {(g["key"]["category"]): g for g in summary["groups"]}
        bad, hl = [], 0
        for g, m, q, v, h, cls in facts["base"]:
            a = new[g]["metrics"][m]["quantiles"][q]
            b = old[g]["metrics"][m]["quantiles"][q] if g in old else None
            shift = a / b - 1 if a is not None and b else None
            if not same(num(v) if v != "NaN" else None, shift):
                bad.append((g, m, q, v, shift))
            want_hl = shift is not None and abs(shift) > 0.10
            hl += want_hl
            if (h == "1") != want_hl:
                bad.append((g, m, q, "highlight", h))
            if want_hl and cls != ("shift worse" if shift > 0 else "shift better"):
                bad.append((g, m, q, "up is worse, down better", cls))
        check(facts["base"] and not bad, "baseline: %d shifts = new/old - 1, %d highlighted beyond "
              "10 %%, a rise marked worse and a fall better (differ: %s)" % (len(facts["base"]), hl, bad[:3]))
        baseline_checks(c, tasklens, demo, base_log, new, old, tmp, text)
        dsl2_names(c, tasklens, repo, tmp)

        shared = os.path.join(repo, "..", "shared")
        cases = [("LSST metadata", [os.path.join(repo, "tests", "data", "lsst")]),
                 ("Chrome trace", [os.path.join(repo, "tests", "data", "chrome", "edge.json")])]
        chrome = os.path.join(shared, "chrome", "samples", "catapult_simple_trace.json")
        if os.path.exists(chrome):
            cases.append(("a mix of formats", [demo, chrome, os.path.join(repo, "tests", "data", "lsst")]))
        else:
            print("SKIP: %s absent; the mix uses the bundled files only" % chrome)
            cases.append(("a mix of formats", [demo, os.path.join(repo, "tests", "data", "chrome", "edge.json")]))
        for what, path in (("TaskVine Colmena run", os.path.join(
                               shared, "wq", "samples",
                               "ccl_taskvine-logs__taskvine_paper_colmena_transactions_peer_enabled")),
                           ("PyTorch Kineto trace", os.path.join(
                               shared, "chrome", "samples",
                               "pytorch_kineto_tbplugin_resnet50_worker0.1623143566756.pt.trace.json.gz")),
                           ("DASF trace", os.path.join(shared, "dasf", "samples",
                                                       "Tutorial_5_Profile-TracePlugin-vm.msgpack")),
                           ("Spark event log", os.path.join(shared, "spark", "samples",
                                                            "local-1795570335358")),
                           ("Nextflow run with deaths by exit 137", os.path.join(
                               shared, "nextflow", "samples", "openproblems_2022-05-13_execution_trace.txt"))):
            if os.path.exists(path):
                cases.append((what, [path]))
            else:
                print("SKIP: %s absent; the report of a %s is not tried" % (path, what))
        if shutil.which("resource_monitor"):
            rm = os.path.join(tmp, "rm")
            resource_monitor(rm, ["sleep", "0.2"])
            cases.append(("resource_monitor summary", [rm + ".summary"]))
        # --requests (LSST quanta allocated what a BPS file requests) and --metrics
        bps = os.path.join(tmp, "submit.yaml")
        with open(bps, "w") as f:
            f.write(advise_emit.BPS)
        lsst = os.path.join(repo, "tests", "data", "lsst")
        html = os.path.join(tmp, "req.html")
        run([tasklens, "report", "-q", "--requests", bps, lsst, "-o", html], check=True)
        open_page(c, html, "LSST with --requests")
        glance_checks(c, tasklens, [lsst], "LSST with --requests", ["--requests", bps])
        saves = c.eval("[...document.querySelectorAll('table[data-table=rightsizing] td[data-k^=saves_]')]"
                       ".filter(td => td.dataset.v !== 'null').length")
        check(saves > 0, "LSST with --requests: the savings the BPS allocation allows are on the page (%d)" % saves)
        html = os.path.join(tmp, "metrics.html")
        run([tasklens, "report", "-q", "--metrics", "bytes_read,virtual_memory_bytes", demo, "-o", html], check=True)
        facts, _ = open_page(c, html, "demo with --metrics")
        extra = json.loads(run([tasklens, "summary", "-q", "--format", "json", "--metrics",
                                "bytes_read,virtual_memory_bytes", demo]).stdout)
        merged = json.loads(json.dumps(summary))
        for g, e in zip(merged["groups"], extra["groups"]):
            g["metrics"].update(e["metrics"])
        summary_checks(facts, merged)
        shown = {m for cell in facts["cells"] for m, _, _ in cell["q"]}
        check({"bytes_read", "virtual_memory_bytes"} <= shown,
              "--metrics bytes_read,virtual_memory_bytes: their p50 · p95 · p99 in the summary table (%s)"
              % sorted(shown))

        for what, inputs in cases:
            html = os.path.join(tmp, "case.html")
            r = run([tasklens, "report", "-q"] + inputs + ["-o", html])
            if not check(r.returncode == 0, "%s: report exits 0 (%s)" % (what, r.stderr[-200:])):
                continue
            facts, _ = open_page(c, html, what)
            s = json.loads(run([tasklens, "summary", "-q", "--format", "json"] + inputs).stdout)
            summary_checks(facts, s)
            workflow_checks(facts, tasklens, inputs)
            glance_checks(c, tasklens, inputs, what)
            failure_checks(c, tasklens, inputs, what)
            top_checks(c, tasklens, inputs, what)
            run_checks(c, tasklens, inputs, what)
            strip_checks(c, tasklens, inputs, what)
            sample_checks(c, tasklens, inputs, what)
    with tempfile.TemporaryDirectory() as tmp:
        narrow_check(tasklens, repo, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
