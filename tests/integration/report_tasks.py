#!/usr/bin/env python3
"""The report's task table and timeline (issue 58 points 2 and 3), in
headless Chromium, on real inputs (Nextflow's openproblems trace, the
bundled Work Queue log, Snakemake's benchmarks from ../shared) and a
generated Work Queue log of 100,000 tasks:

- every attempt is in the page's data, in input order, and each of its
  cells (name or id, tag, category, status, exit, attempt, submission, wait,
  wall and CPU time, peak memory, I/O, requests) equals what `records`
  says of that attempt, computed here;
- the table draws only the rows in view (a few dozen of 100,000), and
  scrolling draws the rows at that place;
- search keeps exactly the attempts whose name, tag, category, status or
  exit contain the text; a click on a header sorts by that column (largest
  first for numbers, absent values last), a second click reverses;
- the timeline draws one bar per attempt in order of submission, or every
  k-th past 1,000 and says so;
- a name that is markup stays text: a category named like a script
  element shows as itself and adds no element;
- the page at 100,000 attempts is under 25 MB, asks the network for nothing,
  and logs no error.

usage: report_tasks.py TASKLENS REPO GEN_WQ"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, ran  # noqa: E402
import browser  # noqa: E402

TL, REPO, GEN = sys.argv[1], sys.argv[2], sys.argv[3]
SHARED = os.environ.get("TL_SHARED_DIR") or os.path.join(os.path.dirname(os.path.abspath(REPO)), "shared")
HOSTILE = '</script><img src=x onerror="document.title=1">&amp; "c"'


def records(inputs):
    r = subprocess.run([TL, "records", "-q", "-f", "ndjson"] + inputs, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in r.stdout.splitlines()]


def cached(r):
    return (r.get("result") or "").upper() == "CACHED"


FILE_TIMES = set()  # the inputs' modification times: a row timed by its file (Snakemake's benchmarks)


def file_times(inputs):
    FILE_TIMES.clear()
    for p in inputs:
        for root, _, files in os.walk(p) if os.path.isdir(p) else [(os.path.dirname(p), [], [os.path.basename(p)])]:
            for f in files:
                FILE_TIMES.add(round(os.stat(os.path.join(root, f)).st_mtime, 3))


def timed(r):
    return r.get("end_epoch_s") is not None and not cached(r) and round(r["end_epoch_s"], 3) not in FILE_TIMES


def submit_of(r):
    """As the page's concurrency plot counts it: end - wall time - queue time."""
    return r["end_epoch_s"] - (r.get("wall_time_s") or 0) - (r.get("queue_time_s") or 0)


def us(v):
    """Seconds as the page's microseconds (rounded half up)."""
    return None if v is None else int(math.floor(v * 1e6 + 0.5))


def expected(recs):
    """Each attempt's cells, from `records`."""
    t0 = min((submit_of(r) for r in recs if timed(r)), default=None)
    out = []
    for r in recs:
        label = r.get("name") or r.get("task_key") or (str(r["task_id"]) if r.get("task_id", -1) >= 0 else "")
        out.append({
            "task": label, "tag": r.get("tag") or "", "cat": r.get("category") or "(none)",
            "status": r.get("result") or "", "exit": r.get("exit_code"),
            "attempt": r.get("attempt") or None,
            "submit": us(submit_of(r) - t0) if timed(r) and t0 is not None else None,
            "queue": us(r.get("queue_time_s")), "wall": us(r.get("wall_time_s")), "cpu": us(r.get("cpu_time_s")),
            "rss": r.get("max_rss_bytes"), "read": r.get("bytes_read"), "written": r.get("bytes_written"),
            "req_cores": None if r.get("req_cores") is None else int(math.floor(r["req_cores"] * 1000 + 0.5)),
            "req_mem": r.get("req_memory_bytes"), "req_time": us(r.get("req_wall_time_s")),
            "alloc_cores": None if r.get("alloc_cores") is None else int(math.floor(r["alloc_cores"] * 1000 + 0.5)),
            "alloc_mem": r.get("alloc_memory_bytes")})
    return out


# what the page's data holds, read back in the browser: one object per attempt
READ = """(function(){var d=JSON.parse(document.getElementById('task-data').textContent),n=d.n,out=[];
function col(k){if(d[k]===undefined)return null;var out=[],acc=0,delta=(d.deltas||[]).indexOf(k)>=0;
d[k].split(',').forEach(function(t){var m=/^(-?[0-9]*)(?:[*]([0-9]+))?$/.exec(t),r=m[2]===undefined?1:+m[2];
for(var j=0;j<r;j++){var v=m[1]===''?null:+m[1];if(v!==null&&delta)v=acc+=v;out.push(v);}});return out;}
var K=['cat','status','exit','attempt','id','submit','queue','wall','cpu','rss','read','written','req_cores','req_mem',
'req_time','alloc_cores','alloc_mem'],C={};K.forEach(function(k){C[k]=col(k);});
for(var i=0;i<n;i++){var o={task:d.label&&d.label[i]!==null?d.label[i]:(C.id&&C.id[i]!==null?String(C.id[i]):''),
tag:d.tag&&d.tag[i]!==null?d.tag[i]:'',cat:d.cats[C.cat[i]],status:C.status?d.statuses[C.status[i]]:''};
K.slice(2).forEach(function(k){if(k!=='id')o[k]=C[k]?C[k][i]:null;});out.push(o);}return out;})()"""


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(a - b) <= max(1, 1e-12 * abs(b))  # integers the page rounds, or bytes a double holds


def compare(label, page, want):
    bad = []
    for i, (p, w) in enumerate(zip(page, want)):
        for k, v in w.items():
            if k == "exit" and v is None and p.get(k) is None:
                continue
            if not same(p.get(k), v):
                bad.append((i, k, p.get(k), v))
    check(len(page) == len(want) and not bad,
          "%s: the page holds all %d attempts in input order, every cell as `records` says it (differ: %s)"
          % (label, len(want), bad[:3]))


def haystack(w):
    return " ".join([w["task"], w["tag"], w["cat"], w["status"], "" if w["exit"] is None else str(w["exit"])]).lower()


def search(b, text):
    b.eval("(function(){var s=document.getElementById('task-search');s.value=%s;"
           "s.dispatchEvent(new Event('input'));})()" % json.dumps(text))
    b.eval("new Promise(r=>setTimeout(r,400))", wait=True)
    return b.eval("+document.getElementById('task-table').getAttribute('data-shown')")


def click(b, col):
    b.eval("document.querySelector('#task-table th[data-col=%s]').click()" % col)
    b.eval("new Promise(r=>requestAnimationFrame(()=>requestAnimationFrame(r)))", wait=True)
    return b.eval("Array.from(document.querySelectorAll('#task-table tbody tr[data-i]')).slice(0,3)"
                  ".map(r=>+r.getAttribute('data-i'))")


def sorted_first(want, key, largest):
    vals = [(w[key], i) for i, w in enumerate(want) if w[key] is not None]
    if not vals:
        return None
    best = max(v for v, _ in vals) if largest else min(v for v, _ in vals)
    return {i for v, i in vals if v == best}


def interact(label, b, want):
    n = len(want)
    drawn = b.eval("document.querySelectorAll('#task-table tbody tr[data-i]').length")
    check(b.eval("+document.getElementById('task-table').getAttribute('data-shown')") == n
          and 0 < drawn <= min(n, 200),
          "%s: the table says %d attempts and draws the %d in view" % (label, n, drawn))
    # what the page's own script decoded (runs, differences) and drew, against `records`
    cells = b.eval("Array.from(document.querySelectorAll('#task-table tbody tr[data-i]')).map(tr=>"
                   "[+tr.getAttribute('data-i')].concat(Array.from(tr.cells).map(td=>td.textContent)))")
    heads = b.eval("Array.from(document.querySelectorAll('#task-table th')).map(t=>t.getAttribute('data-col'))")
    plain = {"task": lambda w: w["task"], "cat": lambda w: w["cat"], "status": lambda w: w["status"],
             "exit": lambda w: "" if w["exit"] is None else str(w["exit"]),
             "attempt": lambda w: "" if w["attempt"] is None else str(w["attempt"])}
    wrong = [(row[0], col, row[1 + c], plain[col](want[row[0]])) for row in cells for c, col in enumerate(heads)
             if col in plain and row[1 + c] != plain[col](want[row[0]])]
    check(cells and not wrong, "%s: the %d rows drawn show each attempt's name, category, status, exit and attempt "
          "as `records` says (differ: %s)" % (label, len(cells), wrong[:3]))
    word = want[n // 2]["cat"]
    got = search(b, word.upper())
    check(got == sum(1 for w in want if word.lower() in haystack(w)),
          "%s: search %r keeps the %d attempts whose name, tag, category, status or exit hold it"
          % (label, word.upper(), got))
    search(b, "")
    heads = b.eval("Array.from(document.querySelectorAll('#task-table th')).map(t=>t.getAttribute('data-col'))")
    for col, largest in (("wall", True), ("wall", False), ("rss", True)):
        if col not in heads:
            continue
        first = click(b, col)
        best = sorted_first(want, col, largest)
        check(best is None or (first and first[0] in best),
              "%s: sorted by %s, %s first (row %s)" % (label, col, "largest" if largest else "smallest",
                                                       first[:1]))
    click(b, "cat")
    first = b.eval("document.querySelector('#task-table tbody tr[data-i] td:nth-child(%d)').textContent"
                   % (3 if "tag" in b.eval("Array.from(document.querySelectorAll('#task-table th'))"
                                           ".map(t=>t.getAttribute('data-col'))") else 2))
    check(first == min(w["cat"] for w in want), "%s: sorted by category, %r first" % (label, first))
    if n > 1000:
        at = b.eval("(function(){var s=document.getElementById('task-scroll');s.scrollTop=s.scrollHeight/2;"
                    "s.dispatchEvent(new Event('scroll'));return s.scrollTop;})()")
        b.eval("new Promise(r=>requestAnimationFrame(()=>requestAnimationFrame(r)))", wait=True)
        rows = b.eval("document.querySelectorAll('#task-table tbody tr[data-i]').length")
        check(at > 0 and 0 < rows <= 200, "%s: scrolled halfway, %d rows drawn there" % (label, rows))


def timeline_checks(label, html, want):
    n = sum(1 for w in want if w["submit"] is not None)
    if not n:
        check('data-timeline="0"' in html and "<g class=\"tb\">" not in html,
              "%s: no attempt records a time: no timeline, and the page says why" % label)
        return
    k = 1 if n <= 1000 else -(-n // 1000)
    bars = html.count('<g class="tb">')
    check(bars == -(-n // k) and ('data-every="%d"' % k) in html and (k == 1 or "Every %d" % k in html),
          "%s: the timeline draws %d bars for %d timed attempts (every %d%s)" % (label, bars, n, k,
                                                                              ", said" if k > 1 else ""))


def one(label, inputs, tmp, want_tag=False):
    page = os.path.join(tmp, "page.html")
    r = subprocess.run([TL, "report", "-q", "-o", page] + inputs, capture_output=True, text=True, timeout=600)
    if not check(r.returncode == 0, "%s: report writes the page (%s)" % (label, r.stderr.strip()[-200:])):
        return None
    file_times(inputs)
    want = expected(records(inputs))
    html = open(page, encoding="utf-8").read()
    with browser.Chromium(width=1400, height=1000) as b:
        b.open(page)
        compare(label, b.eval(READ), want)
        interact(label, b, want)
        check(not b.problems() and all(u.startswith("file:") for u in b.requests()),
              "%s: no error in the console, no request past the page (%s)" % (label, b.problems()[:2]))
    timeline_checks(label, html, want)
    if want_tag:
        check(any(w["tag"] for w in want) and 'data-col="tag">' in html, "%s: a tag column" % label)
    return page


def hostile(tmp, demo):
    log = os.path.join(tmp, "hostile.log")
    with open(demo) as f, open(log, "w") as g:
        g.write(f.read().replace(" compute ", " %s " % HOSTILE.replace(" ", "_")))
    name = HOSTILE.replace(" ", "_")
    page = os.path.join(tmp, "hostile.html")
    subprocess.run([TL, "report", "-q", "-o", page, log], check=True)
    with browser.Chromium(width=1400, height=1000) as b:
        b.open(page)
        shown = search(b, "img_src")
        imgs = b.eval("document.querySelectorAll('img').length")
        title = b.eval("document.title")
        cells = b.eval("Array.from(document.querySelectorAll('#task-table td')).filter(t=>t.textContent===%s).length"
                       % json.dumps(name))
    check(imgs == 0 and title != "1" and shown > 0 and cells > 0,
          "a category named %r: search finds its %d attempts, it is text in the table (%d cells drawn), adds no "
          "element, runs nothing" % (name, shown, cells))


def main():
    demo = os.path.join(REPO, "tests/data/wq/demo-cctools-9.9.log")
    if not browser.find_chromium():
        print("SKIP: no Chromium")
        return 77
    with tempfile.TemporaryDirectory(prefix="tl-tasks-") as tmp:
        one("the bundled Work Queue log", [demo], tmp)
        page = one("a Chrome trace (slices of microseconds)", [os.path.join(REPO, "tests/data/chrome/edge.json")], tmp)
        if page:
            html = open(page, encoding="utf-8").read()
            check('data-col="status">' not in html and re.search(r'title="[0-9.e-]+">[0-9.]+\s*(us|µs|ms)<', html),
                  "a Chrome trace: no status column (it records no result), and its slices read in us or ms, "
                  "not as 0 s")
        hostile(tmp, demo)
        op = os.path.join(SHARED, "nextflow/samples/openproblems_2022-05-13_execution_trace.txt")
        if os.path.exists(op):
            one("openproblems (Nextflow)", [op], tmp)
        else:
            print("SKIP part: ../shared has no openproblems trace")
        bench = os.path.join(SHARED, "snakemake/samples/generated/runA/benchmarks")
        if os.path.isdir(bench):
            one("Snakemake benchmarks", [bench], tmp, want_tag=True)
        big = os.path.join(tmp, "big.log")
        with open(big, "w") as f:
            subprocess.run([GEN, "100000", "16"], stdout=f, check=True)
        page = one("100,000 generated tasks", [big], tmp)
        if page:
            size = os.path.getsize(page)
            check(size < 25e6, "the page of 100,000 attempts is %.1f MB (under 25)" % (size / 1e6))
    if not ran():
        return 77
    return finish()


if __name__ == "__main__":
    sys.exit(main())
