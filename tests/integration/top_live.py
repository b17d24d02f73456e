#!/usr/bin/env python3
"""`tasklens top` as an operator uses it (issue 48): in a terminal (tmux,
80 x 24 as over ssh, resized), following a log a real Work Queue manager
(Debian cctools, tests/integration/wq_manager.c) writes while its workers
run, keys pressed with send-keys, the screen read with capture-pane.

Every figure on the screen is checked against an independent computation
on the same input:
  * DONE, FAIL, WALL and MEM p50/p95 per category against `tasklens
    summary` on the log (the same numbers, formatted as summary formats
    them), over the whole run and the 5-minute window;
  * RUN and WAIT per category, the workers, and the stragglers' running
    times against this file's own reading of the transaction log (each
    task's last state, the WORKER lines) at a known prefix;
  * the 5-minute window's counts and quantiles against numpy over the
    records of the tasks that ended in it (`tasklens records`);
  * the ETA against open / rate as shown.
Then the keys (sort, filter, window, pause, quit), a resize, NO_COLOR and
--once into a pipe.

usage: top_live.py TASKLENS WQ_MANAGER GEN_WQ
"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

TL, MANAGER, GEN = sys.argv[1:4]
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def tmux(*args, check_rc=True):
    return subprocess.run(["tmux", "-L", SOCK] + list(args), capture_output=True, text=True,
                          check=check_rc).stdout


def screen(escapes=False):
    return tmux("capture-pane", "-p", "-t", "top", *(["-e"] if escapes else []))


def start(cmd, width, height, env=""):
    tmux("new-session", "-d", "-s", "top", "-x", str(width), "-y", str(height),
         env + " exec " + cmd)


def alive():
    return subprocess.run(["tmux", "-L", SOCK, "has-session", "-t", "top"],
                          capture_output=True).returncode == 0


def quit_top():
    """q, and the session is gone within 3 s (else it is killed, and False)."""
    tmux("send-keys", "-t", "top", "q", check_rc=False)
    end = time.time() + 3
    while alive() and time.time() < end:
        time.sleep(0.05)
    gone = not alive()
    if not gone:
        tmux("kill-session", "-t", "top", check_rc=False)
    return gone


def wait_for(pred, timeout=15):
    end = time.time() + timeout
    while time.time() < end:
        s = screen() if alive() else ""
        if pred(s):
            return s
        time.sleep(0.2)
    return screen() if alive() else ""


# ---------------------------------------------------------------- reading the screen

ROW = re.compile(r"^(?P<cat>.+?)\s+(?P<run>-|\d+)\s+(?P<wait>-|\d+)\s+(?P<done>\d+)\s+(?P<fail>\d+)\s+"
                 r"(?P<rate>\S+)\s+(?P<w50>\S+)\s+(?P<w95>\S+)\s+(?P<m50>\S+)\s+(?P<m95>\S+)\s+(?P<waste>\S+)")


def table(s):
    """Category rows of a frame: name -> cells (between the header and the next section)."""
    rows, inside = {}, False
    for line in s.splitlines():
        if line.startswith("CATEGORY"):
            inside = True
            continue
        if inside:
            m = ROW.match(line.rstrip())
            if not m:
                break
            rows[m["cat"].strip()] = m.groupdict()
    return rows


# ---------------------------------------------------------------- independent figures

def failed_per_category(log):
    """Tasks whose last DONE line is a failure in the glossary's sense (a
    result other than SUCCESS, or a non-zero exit code), read from the log,
    and the cancelled ones (CANCELED: neither failed nor done)."""
    cat_of, last = {}, {}
    for line in open(log):
        f = line.split()
        if len(f) >= 6 and f[2] == "TASK" and f[4] == "WAITING":
            k = next((i for i in range(5, len(f)) if f[i] in ("FIRST_RESOURCES", "MAX_RESOURCES")), len(f))
            cat_of[f[3]] = " ".join(f[5:k]) or None  # a category may hold spaces ("odd name")
        elif len(f) >= 7 and f[2] == "TASK" and f[4] == "DONE":
            last[f[3]] = (f[5], f[6])
        elif len(f) >= 5 and f[2] == "TASK" and f[4] == "CANCELED":
            last[f[3]] = ("CANCELED", None)
    per, cancelled = {}, {}
    for t, (result, code) in last.items():
        if result == "CANCELED":
            cancelled[cat_of.get(t)] = cancelled.get(cat_of.get(t), 0) + 1
        elif result != "SUCCESS" or code not in ("0", None):
            per[cat_of.get(t)] = per.get(cat_of.get(t), 0) + 1
    return per, cancelled


def summary(log):
    out = subprocess.run([TL, "summary", "--format", "json", log], capture_output=True, text=True)
    doc = json.loads(out.stdout)
    per = {}
    fails, cancelled = failed_per_category(log)
    for g in doc["groups"]:
        cat = g["key"]["category"]
        failed = fails.get(cat, 0)
        per[cat] = {"done": g["tasks"] - failed - cancelled.get(cat, 0), "fail": failed,
                    "wall": g["metrics"].get("wall_time_s", {}).get("quantiles", {}),
                    "rss": g["metrics"].get("max_rss_bytes", {}).get("quantiles", {})}
    return per


def summary_cells(log):
    """category -> {w50, w95, m50, m95} as summary's human table prints them."""
    out = subprocess.run([TL, "summary", log], capture_output=True, text=True).stdout
    cells, cat = {}, None
    for line in out.splitlines():
        if line.startswith("category="):
            cat = line.split("=", 1)[1]
            cells[cat] = {}
        w = line.split()
        if cat and w and w[0] in ("wall_time_s", "max_rss_bytes"):
            # metric n p000 p001 p005 p032 p050 p068 p095 p099 p100
            k = "w" if w[0] == "wall_time_s" else "m"
            cells[cat][k + "50"], cells[cat][k + "95"] = w[6], w[8]
    return cells


def log_state(path, upto=None):
    """This test's own reading of a transaction log: per category running
    and waiting now, workers connected, and each running task's start."""
    tasks, workers = {}, set()
    with open(path) as f:
        for i, line in enumerate(f):
            if upto is not None and i >= upto:
                break
            w = line.split()
            if len(w) < 5 or w[0].startswith("#"):
                continue
            if w[2] == "WORKER" and w[-1] == "CONNECTION":
                workers.add(w[3])
            elif w[2] == "WORKER" and w[-2:-1] == ["DISCONNECTION"] or (w[2] == "WORKER" and "DISCONNECTION" in w):
                workers.discard(w[3])
            elif w[2] == "TASK":
                t = tasks.setdefault(w[3], {})
                t["state"] = w[4]
                if w[4] == "WAITING":
                    mode = next(k for k in range(len(w) - 1, 4, -1) if w[k] in ("FIRST_RESOURCES", "MAX_RESOURCES"))
                    t["cat"] = " ".join(w[5:mode])
                elif w[4] == "RUNNING":
                    t["start"] = int(w[0]) / 1e6
    run, wait = {}, {}
    for tid, t in tasks.items():
        if t["state"] in ("RUNNING", "WAITING_RETRIEVAL"):
            run[t["cat"]] = run.get(t["cat"], 0) + 1
        elif t["state"] == "WAITING":
            wait[t["cat"]] = wait.get(t["cat"], 0) + 1
    return run, wait, len(workers), tasks


def compare_rows(shown, want_counts, want_cells, what, run=None, wait=None):
    cats = set(want_counts)
    check(set(shown) == cats, "%s: the categories (%s)" % (what, ", ".join(sorted(cats))))
    bad = []
    for cat in cats & set(shown):
        s, c = shown[cat], want_counts[cat]
        if int(s["done"]) != c["done"] or int(s["fail"]) != c["fail"]:
            bad.append("%s done/fail %s/%s want %d/%d" % (cat, s["done"], s["fail"], c["done"], c["fail"]))
        for k in ("w50", "w95", "m50", "m95"):
            want = want_cells.get(cat, {}).get(k, "-")
            if s[k] != want:
                bad.append("%s %s %s want %s" % (cat, k, s[k], want))
        if run is not None and (s["run"] != str(run.get(cat, 0)) or s["wait"] != str(wait.get(cat, 0))):
            bad.append("%s run/wait %s/%s want %d/%d" % (cat, s["run"], s["wait"], run.get(cat, 0), wait.get(cat, 0)))
    check(not bad, "%s: every cell equals summary / the log%s" % (what, (": " + "; ".join(bad[:6])) if bad else ""))


def window_numbers(log, now_s, minutes):
    """numpy over the records of the final attempts that ended in the last
    `minutes` minutes (minute-aligned, as the screen says)."""
    out = subprocess.run([TL, "records", log], capture_output=True, text=True).stdout
    first = (int(now_s // 60) - minutes + 1) * 60
    per = {}
    for r in csv.DictReader(io.StringIO(out)):
        if r["final"] != "true" or not r["end_epoch_s"] or float(r["end_epoch_s"]) < first:
            continue
        d = per.setdefault(r["category"], {"n": 0, "wall": []})
        d["n"] += 1
        if r["wall_time_s"]:
            d["wall"].append(float(r["wall_time_s"]))
    return per


def phase_live_manager(tmp):
    """A real manager and its workers write the log while top follows it."""
    log = os.path.join(tmp, "wq.log")
    mgr = subprocess.Popen([MANAGER, log, os.path.join(tmp, "expected.tsv"), "2"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not os.path.exists(log) and mgr.poll() is None:
        time.sleep(0.05)
    start("%s top --follow %s" % (TL, log), 80, 24)
    frames = []
    while mgr.poll() is None:
        time.sleep(0.5)
        frames.append(screen())
    mgr.wait()
    mid = [f for f in frames if table(f) and any(r["run"] not in ("0", "-") for r in table(f).values())]
    check(len(mid) >= 1, "while the manager runs, top shows tasks running (%d of %d frames)" % (len(mid), len(frames)))
    check(all(len(l) <= 80 for f in frames for l in f.splitlines()), "every frame fits 80 columns")
    time.sleep(2.5)
    want, cells = summary(log), summary_cells(log)
    final = screen()
    print(final)
    ended = {c: w for c, w in want.items() if w["done"] + w["fail"]}  # the others are idle in the window
    compare_rows(table(final), ended, cells, "the manager's log, last 5 min", run={}, wait={})
    tmux("send-keys", "-t", "top", "w", "w")
    s = wait_for(lambda s: "whole run" in s)
    compare_rows(table(s), want, cells, "the manager's log, whole run", run={}, wait={})
    done = sum(w["done"] for w in want.values())
    failed = sum(w["fail"] for w in want.values())
    check("%d done  %d failed" % (done, failed) in s, "the task line says %d done, %d failed" % (done, failed))
    keys(log, want)


def keys(log, want):
    """Sort, filter, pause, resize, quit, on the screen of the finished run."""
    tmux("send-keys", "-t", "top", "s", "s", "s")  # seen -> run -> wait -> done
    s = wait_for(lambda s: "sort (done)" in s)
    order = [int(r["done"]) for r in table(s).values()]
    check(order == sorted(order, reverse=True) and len(order) > 1, "s: rows sorted by DONE, largest first %s" % order)
    tmux("send-keys", "-t", "top", "f", "c", "o", "m", "p", "Enter")
    s = wait_for(lambda s: "filter comp" in s)
    check(list(table(s)) == [c for c in want if "comp" in c], "f comp: only %s" % [c for c in want if "comp" in c])
    tmux("send-keys", "-t", "top", "f", "Escape")
    s = wait_for(lambda s: len(table(s)) == len(want))
    check(len(table(s)) == len(want), "f then Esc: every category again")
    tmux("send-keys", "-t", "top", "p")
    s = wait_for(lambda s: "PAUSED" in s)
    check("PAUSED" in s and "p resume" in s, "p: the screen says PAUSED")
    tmux("send-keys", "-t", "top", "p")
    wait_for(lambda s: "PAUSED" not in s)
    tmux("resize-window", "-t", "top", "-x", "120", "-y", "40")
    s = wait_for(lambda s: "WCPU" in s)
    check("WCPU" in s and all(len(l) <= 120 for l in s.splitlines()), "resized to 120 x 40: the cpu waste column appears")
    tmux("resize-window", "-t", "top", "-x", "80", "-y", "24")
    s = wait_for(lambda s: "WCPU" not in s and len(s.splitlines()) > 3 and "CATEGORY" in s.splitlines()[3])
    check(all(len(l) <= 80 for l in s.splitlines()) and "CATEGORY" in s.splitlines()[3],
          "back to 80 x 24: every line fits, the frame starts at the top")
    check(quit_top(), "q: top exits at once")


def frame_now(s):
    """The log time the frame says it shows (its first line: ...-HH:MM:SS UTC)."""
    m = re.search(r"(\d\d):(\d\d):(\d\d) UTC", s.splitlines()[0])
    return int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3]) if m else None


def phase_prefixes(tmp):
    """A long log (gen_wq: 40 minutes, tasks in flight) appended in parts:
    after each, the screen equals the independent figures of that prefix."""
    src = os.path.join(tmp, "gen.log")
    with open(src, "w") as f:
        subprocess.run([GEN, "20000", "3", "7", "1000"], stdout=f, check=True)
    lines = open(src).read().splitlines(True)
    log = os.path.join(tmp, "prefix.log")
    open(log, "w").close()
    start("%s top --follow %s" % (TL, log), 200, 50)
    written = 0
    for frac in (0.3, 0.6):
        upto = int(len(lines) * frac)
        with open(log, "a") as f:
            f.writelines(lines[written:upto])
        written = upto
        run, wait, workers, tasks = log_state(log)
        want, cells = summary(log), summary_cells(log)
        what = "prefix %d%% (%d lines)" % (frac * 100, upto)
        # top has read it all when its clock shows the last line's time
        last = [l for l in lines[:upto] if l[:1].isdigit()][-1]
        now_s = int(last.split()[0]) / 1e6
        hms = time.strftime("%H:%M:%S", time.gmtime(int(now_s)))
        s = wait_for(lambda s: s and ("-%s UTC" % hms) in s.splitlines()[0], timeout=30)
        check(("-%s UTC" % hms) in s.splitlines()[0] if s else False,
              "%s: top reads to the end (its clock shows %s)" % (what, hms))
        # the 5-minute window against numpy on the records that ended in it
        per = window_numbers(log, now_s, 5)
        shown = table(s)
        bad = []
        for cat, d in per.items():
            r = shown.get(cat)
            if not r or int(r["done"]) + int(r["fail"]) != d["n"]:
                bad.append("%s: %s ended, want %d" % (cat, r and r["done"], d["n"]))
                continue
            for k, q in (("w50", 0.5), ("w95", 0.95)):
                v = float(np.quantile(d["wall"], q))
                if not close(r[k], v):
                    bad.append("%s %s %s vs numpy %.4g" % (cat, k, r[k], v))
            if abs(float(r["rate"]) - d["n"] / 5) > 0.051 * max(1, d["n"] / 5):
                bad.append("%s rate %s want %.3g" % (cat, r["rate"], d["n"] / 5))
        check(not bad and per, "%s, last 5 min: counts, wall p50/p95 and rate equal numpy over the "
              "records that ended in it%s" % (what, ": " + "; ".join(bad[:5]) if bad else ""))
        check(all(shown[c]["run"] == str(run.get(c, 0)) and shown[c]["wait"] == str(wait.get(c, 0)) for c in shown),
              "%s: RUN and WAIT per category equal the log's open tasks (%s)" % (what, run))
        check(("workers %d " % workers) in s, "%s: %d workers connected" % (what, workers))
        stragglers(s, tasks, now_s, what)
        eta_check(s, what)
        tmux("send-keys", "-t", "top", "w", "w")
        totals = {c: w["done"] for c, w in want.items()}
        s = wait_for(lambda s: "whole run" in s and {c: int(r["done"]) for c, r in table(s).items()} == totals)
        if {c: int(r["done"]) for c, r in table(s).items()} != totals:
            print(s)  # what it showed instead
        compare_rows(table(s), want, cells, what + ", whole run", run=run, wait=wait)
        tmux("send-keys", "-t", "top", "w")
        wait_for(lambda s: "last 5 min" in s)
    quit_top()


def close(cell, v):
    """A human cell ('2.47min', '812ms') against a number in seconds, to its 3 digits."""
    m = re.match(r"^([\d.]+)(ns|us|ms|s|min|h)$", cell)
    if not m:
        return False
    x = float(m[1]) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "min": 60, "h": 3600}[m[2]]
    return abs(x - v) <= 0.006 * abs(v) + 1e-9


def stragglers(s, tasks, now_s, what):
    """Each listed task runs in the log, for as long as the screen says."""
    rows = re.findall(r"^\s+([\d.]+)x  task (\d+)  (\S+)  running (\S+), p95", s, re.M)
    bad = []
    for ratio, tid, cat, ran in rows:
        t = tasks.get(tid, {})
        if t.get("state") not in ("RUNNING", "WAITING_RETRIEVAL") or t.get("cat") != cat:
            bad.append("task %s is not running in %s" % (tid, cat))
            continue
        secs = sum(int(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in re.findall(r"(\d+)([hms])", ran))
        if abs(secs - (now_s - t["start"])) > 1.01:
            bad.append("task %s running %s, the log says %.0fs" % (tid, ran, now_s - t["start"]))
    check(rows and not bad, "%s: %d stragglers, each running in the log for what the screen says%s"
          % (what, len(rows), ": " + "; ".join(bad) if bad else ""))


def eta_check(s, what):
    """ETA = max(open / rate, the critical path left at p50 .. p95): the
    throughput part against the open tasks and the rate shown, and each end
    of the ETA against the larger of its two parts (issue 59)."""
    m = re.search(r"ETA (\S+?)(?:\.\.(\S+))? = (?:max\()?(\d+) open / ([\d.]+)(k?) per min"
                  r"(?:, path left (\S+?)(?:\.\.(\S+?))?\))?", s)
    t = re.search(r"tasks (\d+) running  (\d+) waiting", s)
    if not m or not t:
        check(False, "%s: an ETA and the open tasks are shown" % what)
        return
    secs = lambda d: sum(int(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in re.findall(r"(\d+)([hms])", d))  # noqa: E731
    open_n = int(t[1]) + int(t[2])
    rate = float(m[4]) * (1000 if m[5] else 1)
    want = open_n / rate * 60
    lo, hi = secs(m[1]), secs(m[2] or m[1])
    tol = max(1, 0.01 * want) + 60 * (want >= 3600)
    if m[6]:
        p50, p95 = secs(m[6]), secs(m[7] or m[6])
        ok = p50 <= p95 and abs(lo - max(want, p50)) <= tol + 60 * (p50 >= 3600) and \
            abs(hi - max(want, p95)) <= tol + 60 * (p95 >= 3600)
    else:
        ok = abs(lo - want) <= tol and lo == hi
    check(int(m[3]) == open_n and ok,
          "%s: ETA %s%s = max(%d open / %s per min, path left %s..%s)"
          % (what, m[1], ".." + m[2] if m[2] else "", open_n, m[4], m[6], m[7]))


def young_run_rate(log):
    """A run younger than the window: its rate is over its age (the demo run
    lasts 5.6 s; over the 1-hour window's 60 minutes it read 3.4 per min)."""
    stamps = [int(l.split()[0]) for l in open(log) if l.strip() and not l.startswith("#")]
    age_min = (stamps[-1] - stamps[0]) / 60e6
    for window in ("1h", "5m"):
        out = subprocess.run([TL, "top", "--once", "--window", window, log], capture_output=True,
                             text=True).stdout
        m = re.search(r"(\d+) done  (\d+) failed  ([\d.]+)(k?) ended/min", out)
        got = float(m[3]) * (1000 if m[4] else 1) if m else None
        want = (int(m[1]) + int(m[2])) / age_min if m else None
        check(m and abs(got - want) <= 0.006 * want,
              "top --window %s on a %.1f s old run: %s ended/min = ended / its age (%.4g)"
              % (window, age_min * 60, m[3] + m[4] if m else "-", want or 0))
    # used cores: the CPU time of this run's tasks that ended, over the run's age (records, not top)
    rows = [json.loads(l) for l in subprocess.run([TL, "records", "-q", "-f", "ndjson", log], capture_output=True,
                                                  text=True).stdout.splitlines()]
    cpu = sum(r.get("cpu_time_s", 0) for r in rows if r["final"] and r.get("result") not in
              ("CANCELED", "LIBRARY_EXIT", "CACHED"))
    out = subprocess.run([TL, "top", "--once", "--window", "1h", log], capture_output=True, text=True).stdout
    m = re.search(r"cores \S+ \((?:[^)]*, )?([\d.]+) used\)", out)
    want = cpu / (age_min * 60)
    check(m and abs(float(m[1]) - want) <= 0.006 * want,
          "top's used cores = CPU time of the tasks ended / the run's age: %s (%.4g)" % (m[1] if m else "-", want))


def phase_plain(tmp, demo_log):
    """NO_COLOR and a pipe: no colour; --once prints the table once."""
    start("%s top %s" % (TL, demo_log), 100, 30)
    s = wait_for(lambda s: "CATEGORY" in s)
    coloured = screen(escapes=True)
    quit_top()
    start("%s top %s" % (TL, demo_log), 100, 30, env="NO_COLOR=1")
    wait_for(lambda s: "CATEGORY" in s)
    plain = screen(escapes=True)
    quit_top()
    check("\x1b[" in coloured and re.search(r"\x1b\[[0-9;]*3[1-7]m", coloured) is not None,
          "a terminal gets colour (failures in red)")
    check(re.search(r"\x1b\[[0-9;]*(3[1-7]|7|1)m", plain) is None, "NO_COLOR=1: no colour, no bold, no reverse")
    out = subprocess.run([TL, "top", "--once", demo_log], capture_output=True, text=True)
    check(out.returncode == 0 and "\x1b" not in out.stdout and out.stdout.count("CATEGORY") == 1,
          "--once into a pipe: the table once, no escape sequence")
    compare_rows(table(out.stdout), summary(demo_log), summary_cells(demo_log), "--once", run={}, wait={})
    # workers that never said their resources: cores unknown, not 0
    gen_log = os.path.join(tmp, "noresources.log")
    with open(gen_log, "w") as f:
        subprocess.run([GEN, "300", "2", "1", "1"], stdout=f, check=True)
    head = subprocess.run([TL, "top", "--once", gen_log], capture_output=True, text=True).stdout
    m = re.search(r"workers (\d+)  cores (\S+)", head)
    check(m is not None and int(m[1]) > 0 and m[2] == "-",
          "workers without resources: cores '-', not 0 (%s)" % (m[0] if m else head[:200]))
    # the same through stdin and through a run configuration's source
    with open(demo_log) as f:
        piped = subprocess.run([TL, "top", "--once", "-"], stdin=f, capture_output=True, text=True).stdout
    cfg = os.path.join(tmp, "top.yaml")
    with open(cfg, "w") as f:
        f.write("sources:\n  - type: file\n    path: %s\nsinks:\n  - type: file\n    path: %s\n"
                % (os.path.abspath(demo_log), os.path.join(tmp, "never-written.lp")))
    configured = subprocess.run([TL, "top", "--once", "-c", cfg], capture_output=True, text=True).stdout
    check(table(piped) == table(out.stdout) and table(configured) == table(out.stdout),
          "stdin (-) and -c CONFIG show the same table as the file")
    check(not os.path.exists(os.path.join(tmp, "never-written.lp")), "-c CONFIG: the configuration's sinks are not written")
    # the terminal goes away (an ssh connection dropped): top ends, it does not spin
    start("%s top --follow %s" % (TL, demo_log), 80, 24)
    wait_for(lambda s: "CATEGORY" in s)
    pid = int(tmux("display", "-p", "-t", "top", "#{pane_pid}").strip())
    tmux("kill-server", check_rc=False)
    end = time.time() + 5
    while os.path.exists("/proc/%d" % pid) and time.time() < end:
        time.sleep(0.1)
    check(not os.path.exists("/proc/%d" % pid), "the terminal hung up: top exits (no spinning on a dead tty)")


def phase_missing(tmp, demo):
    """A followed path that does not exist yet is said on screen, as tail -F
    says it, and read once it appears; without --follow it is an error."""
    path = os.path.join(tmp, "later.log")
    start("%s top --follow %s" % (TL, path), 120, 20)
    s = wait_for(lambda s: "waiting for %s" % path in s, timeout=10)
    check(s and "waiting for %s (it does not exist yet)" % path in s,
          "top --follow on a missing path says it waits for it (%r)" % (s.splitlines()[0] if s else ""))
    shutil.copy(demo, path)
    s = wait_for(lambda s: "following %s" % path in s and "compute" in s, timeout=15)
    check(s and "waiting for" not in s and "compute" in s, "top reads the file once it appears")
    quit_top()
    young_run_rate(demo)
    r = subprocess.run([TL, "top", "--once", os.path.join(tmp, "never.log")], capture_output=True, text=True)
    check(r.returncode == 1 and "never.log: No such file or directory" in r.stderr,
          "top --once on a missing path: exit 1, named")


def main():
    if not shutil.which("tmux"):
        print("SKIP: tmux is not installed")
        return 77
    with tempfile.TemporaryDirectory(prefix="tl-top-") as tmp:
        global SOCK
        SOCK = "tl-top-%d" % os.getpid()
        try:
            phase_live_manager(tmp)
            phase_prefixes(tmp)
            phase_plain(tmp, os.path.join(os.path.dirname(__file__), "..", "data", "wq", "demo-cctools-9.9.log"))
            phase_missing(tmp, os.path.join(os.path.dirname(__file__), "..", "data", "wq", "demo-cctools-9.9.log"))
        finally:
            subprocess.run(["tmux", "-L", SOCK, "kill-server"], capture_output=True)
    print("%d failed" % len(FAILS))
    return 1 if FAILS else 0


SOCK = ""
if __name__ == "__main__":
    sys.exit(main())
