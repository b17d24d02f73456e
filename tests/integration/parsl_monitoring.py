#!/usr/bin/env python3
"""Parsl's monitoring.db (issue 33 point 4), written by a real Parsl run
(Parsl from PyPI in a venv cached in ~/.cache/tasklens, a
HighThroughputExecutor on localhost, apps that sleep, hold 100-200 MB, and
one that fails and is retried):

1. `tasklens run` with a `type: parsl` source follows the database while
   the workflow runs (it does not exist yet when tasklens starts) and emits
   every try once; its task points equal `tasklens lines monitoring.db`'s.
2. Those task points equal Python's own reading of the database with
   sqlite3, try by try: app, attempt, last try, status, wall and queue time,
   the worker's peak memory and the increase of its counters between the
   try's samples.
3. A restart from the checkpoint emits nothing twice; a read that catches the
   file half-written is rejected with its name, and the next change is read
   whole: every try once.
4. `formats` lists the parser; `check` knows the source.

usage: parsl_monitoring.py TASKLENS REPO_DIR
"""
import datetime
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

PARSL_VERSION = "2026.10.26"
VENV = os.path.expanduser("~/.cache/tasklens/parsl-venv")
HERE = os.path.dirname(os.path.abspath(__file__))


def ensure_parsl():
    py = os.path.join(VENV, "bin", "python")
    ok = subprocess.run([py, "-c", "import parsl, sqlalchemy; print(parsl.__version__)"],
                        capture_output=True, text=True) if os.path.exists(py) else None
    if ok and ok.returncode == 0 and ok.stdout.strip() == PARSL_VERSION:
        return py
    r = subprocess.run(["/usr/bin/python3", "-m", "venv", VENV], capture_output=True, text=True)
    if r.returncode == 0:
        r = subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q",
                            "parsl[monitoring]==" + PARSL_VERSION], capture_output=True, text=True)
    if r.returncode != 0:
        print("SKIP: Parsl %s could not be installed from PyPI into %s: %s"
              % (PARSL_VERSION, VENV, r.stderr.strip()[-300:]))
        return None
    return py


def ts(s):
    if s is None:
        return None
    return datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S.%f").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def expected(db):
    """Per (task, attempt): what Python reads from the database."""
    c = sqlite3.connect(db)
    out = {}
    tries = c.execute("SELECT y.run_id, y.task_id, y.try_id, t.task_func_name, "
                      "y.task_try_time_launched, y.task_try_time_running, y.task_try_time_returned, "
                      "t.task_time_returned FROM try y JOIN task t USING (task_id, run_id)").fetchall()
    last = {}
    for run, task, tr, *_ in tries:
        last[(run, task)] = max(last.get((run, task), -1), tr)
    for run, task, tr, app, launched, running, returned, task_returned in tries:
        if returned is None or (tr == last[(run, task)] and task_returned is None):
            continue
        status = c.execute("SELECT task_status_name FROM status WHERE run_id=? AND task_id=? AND "
                           "try_id=? ORDER BY timestamp DESC LIMIT 1", (run, task, tr)).fetchone()[0]
        rows = c.execute("SELECT psutil_process_memory_resident, psutil_process_time_user + "
                         "psutil_process_time_system, psutil_process_disk_read, psutil_process_memory_virtual FROM resource "
                         "WHERE run_id=? AND task_id=? AND try_id=?", (run, task, tr)).fetchall()
        f = {"wall_time_s": ts(returned) - ts(running or launched)}
        if running:
            f["queue_time_s"] = ts(running) - ts(launched)
        if rows:
            f["max_rss_bytes"] = max(r[0] for r in rows)
            f["virtual_memory_bytes"] = max(r[3] for r in rows)
        if len(rows) > 1:
            f["cpu_time_s"] = max(r[1] for r in rows) - min(r[1] for r in rows)
            f["bytes_read"] = max(r[2] for r in rows) - min(r[2] for r in rows)
        out[(task, tr + 1)] = (app, status, tr == last[(run, task)], f)
    return out


def task_points(text):
    pts = {}
    for l in text.splitlines():
        if not l.startswith("task,"):
            continue
        head, fields, _ = re.match(r"(.*?[^\\]) (\S+) (\d+)$", l).groups()
        tags = dict(t.split("=", 1) for t in re.split(r"(?<!\\),", head)[1:])
        f = {k: v for k, v in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,]+)', fields)}
        key = (int(f["task_id"].rstrip("i")), int(f["attempt"].rstrip("i")))
        pts.setdefault(key, []).append((tags, f, l))
    return pts


CRASH_MID_TRANSACTION = """
import os, sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA journal_mode=DELETE")
con.execute("PRAGMA cache_size=1")  # dirty pages spill into the file before the commit
con.execute("BEGIN IMMEDIATE")
con.execute("DELETE FROM try")
con.execute("UPDATE resource SET psutil_process_memory_resident = 1")
os._exit(9)  # the writer dies: a hot journal, half a transaction in the file
"""

INTO_WAL = """
import os, sqlite3, sys
src, dst = sys.argv[1:3]
con = sqlite3.connect(dst, isolation_level=None)
con.execute("PRAGMA journal_mode=WAL")
con.execute("PRAGMA wal_autocheckpoint=0")  # the committed rows stay in -wal
con.execute("ATTACH ? AS src", (src,))
for (sql,) in con.execute("SELECT sql FROM src.sqlite_master WHERE type='table'").fetchall():
    con.execute(sql)
for (name,) in con.execute("SELECT name FROM src.sqlite_master WHERE type='table'").fetchall():
    con.execute('INSERT INTO main."%s" SELECT * FROM src."%s"' % (name, name))
os._exit(9)  # no checkpoint at close: the file holds no row, the WAL all of them
"""


def journal_and_wal(tasklens, db, tmp, batch):
    """What SQLite reads is what counts (issue 46 point 8): a writer killed
    mid-transaction (a hot -journal beside a half-written file) and a
    database in WAL mode (its committed rows in -wal) read whole; the
    original files are not written; an unreadable database fails `lines`."""
    hot = os.path.join(tmp, "hot.db")
    shutil.copy(db, hot)
    subprocess.run([sys.executable, "-c", CRASH_MID_TRANSACTION, hot])
    before = open(hot, "rb").read(), open(hot + "-journal", "rb").read() if os.path.exists(hot + "-journal") else b""
    probe = os.path.join(tmp, "probe.db")
    shutil.copy(hot, probe)
    shutil.copy(hot + "-journal", probe + "-journal")
    sqlite_reads = sqlite3.connect(probe).execute("SELECT count(*) FROM try").fetchone()[0]
    r = subprocess.run([tasklens, "lines", "-q", "--window", "0", hot], capture_output=True, text=True)
    got = task_points(r.stdout)
    after = open(hot, "rb").read(), open(hot + "-journal", "rb").read()
    check(before[1] and sqlite_reads >= len(batch) and r.returncode == 0 and sorted(got) == sorted(batch),
          "a writer killed mid-transaction (hot journal): every committed try, as SQLite reads them "
          "(%d of %d; SQLite %d)" % (len(got), len(batch), sqlite_reads))
    check(before == after, "the database and its journal are left as they were (read in a private copy)")
    wal = os.path.join(tmp, "wal.db")
    subprocess.run([sys.executable, "-c", INTO_WAL, db, wal])
    r = subprocess.run([tasklens, "lines", "-q", "--window", "0", wal], capture_output=True, text=True)
    got = task_points(r.stdout)
    check(os.path.getsize(wal + "-wal") > 0 and r.returncode == 0 and sorted(got) == sorted(batch),
          "a WAL-mode database, its rows in -wal: every try (%d of %d; %s)"
          % (len(got), len(batch), r.stderr.strip()[-200:]))
    bad = os.path.join(tmp, "bad.db")
    with open(bad, "wb") as f:
        f.write(open(db, "rb").read()[:4096])
    r = subprocess.run([tasklens, "lines", bad], capture_output=True, text=True)
    check(r.returncode != 0 and "not a Parsl monitoring database" in r.stderr,
          "a database that cannot be read fails `lines` (exit %d): %s" % (r.returncode, r.stderr.strip()[-160:]))


def main():
    tasklens, repo = sys.argv[1:3]
    py = ensure_parsl()
    if not py:
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = os.path.join(tmp, "run")
        db = os.path.join(run_dir, "monitoring.db")
        out = os.path.join(tmp, "live.lp")
        cfg = os.path.join(tmp, "run.yaml")
        with open(cfg, "w") as f:
            f.write("sources:\n  - type: parsl\n    path: %s\n    poll: 300\nsinks:\n  - type: file\n"
                    "    path: %s\ncheckpoint_dir: %s\nflush_interval: 100\n"
                    % (db, out, os.path.join(tmp, "ckpt")))
        live = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
        env = dict(os.environ, PATH=os.path.join(VENV, "bin") + ":" + os.environ["PATH"])
        r = subprocess.run([py, os.path.join(HERE, "parsl_workflow.py"), run_dir], env=env,
                           capture_output=True, text=True, timeout=300)
        check(r.returncode == 0 and os.path.exists(db),
              "a real Parsl run wrote monitoring.db (%s)" % r.stderr.strip()[-300:])
        want = expected(db)
        deadline = time.time() + 30
        while time.time() < deadline:
            if os.path.exists(out) and len(task_points(open(out).read())) >= len(want):
                break
            time.sleep(0.2)
        time.sleep(1)
        live.send_signal(signal.SIGTERM)
        err = live.communicate(timeout=30)[1]
        check(live.returncode == 0, "the live run stops on SIGTERM with 0 (%s)" % err.strip()[-200:])
        got_live = task_points(open(out).read())
        batch = task_points(subprocess.run([tasklens, "lines", "-q", db], capture_output=True,
                                           text=True, check=True).stdout)
        check(len(want) >= 7 and sorted(got_live) == sorted(want),
              "followed while it ran: every finished try, %d of %d" % (len(got_live), len(want)))
        check(all(len(v) == 1 for v in got_live.values()), "each try once")
        diff = [(v[0][2], batch.get(k, [(0, 0, None)])[0][2]) for k, v in got_live.items()
                if v[0][2] != batch.get(k, [(0, 0, None)])[0][2]]
        check(not diff and len(got_live) == len(batch),
              "the live task points equal `lines monitoring.db`'s (differ: %s)" % diff[:1])
        bad = []
        for key, (app, status, final, fields) in want.items():
            tags, f, _ = batch[key][0]
            if tags["category"] != app or tags["result"] != status or \
                    (f.get("final") == "true") != final:
                bad.append((key, tags["category"], tags["result"], f.get("final")))
            for k, v in fields.items():
                g = float(f[k]) if k in f else None
                if g is None or abs(g - v) > 1e-6 * max(1, abs(v)):
                    bad.append((key, k, g, v))
            extra = {"cpu_time_s", "bytes_read", "max_rss_bytes"} - set(fields)
            if any(k in f for k in extra):
                bad.append((key, "a value without samples", sorted(k for k in extra if k in f)))
        check(not bad, "every try = Python's sqlite3 reading: app, status, attempt, last try, "
              "wall, queue, peak memory, counter increases (differ: %s)" % bad[:3])
        rows = [json.loads(l) for l in subprocess.run([tasklens, "records", "-q", "-f", "ndjson", db],
                                                      capture_output=True, text=True).stdout.splitlines()]
        bad = []
        for r in rows:
            key = (r.get("task_id"), r.get("attempt"))
            if key not in want:
                bad.append((key, "not a finished try"))
                continue
            app, status, final, fields = want[key]
            values = {k: v for k, v in r.items() if k.endswith(("_s", "_bytes", "bytes_read")) and
                      k not in ("start_epoch_s", "end_epoch_s")}
            if (r["category"], r["result"], r["final"]) != (app, status, final) or set(values) != set(fields):
                bad.append((key, r["category"], r["result"], r["final"], sorted(set(values) ^ set(fields))))
            bad += [(key, k, values.get(k), v) for k, v in fields.items()
                    if abs(values.get(k, -1) - v) > 1e-6 * max(1, abs(v))]
            if abs(r["end_epoch_s"] - r["start_epoch_s"] - fields["wall_time_s"]) > 1e-5:
                bad.append((key, "start/end", r["start_epoch_s"], r["end_epoch_s"]))
        check(len(rows) == len(want) and not bad, "records: one row per finished try, every value = "
              "Python's sqlite3 reading, no other (differ: %s)" % bad[:3])
        retried = [k for k, v in want.items() if k[1] == 2]
        check(retried and want[(retried[0][0], 1)][1] == "fail_retryable",
              "the failing app's first try is fail_retryable, its retry the last")
        hungry = [v[3]["max_rss_bytes"] for v in want.values() if v[0] == "hungry"
                  and "max_rss_bytes" in v[3]]
        check(hungry and max(hungry) >= 200 * 2 ** 20,
              "a 200 MB app shows in its worker's peak (%.0f MB)" % (max(hungry) / 2 ** 20 if hungry else 0))

        before = open(out).read().count("\ntask,")
        again = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.DEVNULL)
        time.sleep(2)
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=30)
        check(open(out).read().count("\ntask,") == before,
              "a restart from the checkpoint emits no try again")

        # a read that catches the database half-written: rejected, and read
        # again when it changes, nothing lost nor doubled
        torn = os.path.join(tmp, "torn.db")
        with open(db, "rb") as f:
            whole = f.read()
        with open(torn, "wb") as f:
            f.write(whole[: len(whole) // 2])
        out2 = os.path.join(tmp, "torn.lp")
        cfg2 = os.path.join(tmp, "torn.yaml")
        with open(cfg2, "w") as f:
            f.write("sources:\n  - type: parsl\n    path: %s\n    poll: 200\nsinks:\n  - type: file\n"
                    "    path: %s\nflush_interval: 100\n" % (torn, out2))
        p = subprocess.Popen([tasklens, "run", "-c", cfg2], stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        with open(torn + ".tmp", "wb") as f:
            f.write(whole)
        os.replace(torn + ".tmp", torn)
        deadline = time.time() + 15
        while time.time() < deadline and len(task_points(open(out2).read() if os.path.exists(out2) else "")) < len(want):
            time.sleep(0.2)
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=30)[1]
        got = task_points(open(out2).read())
        check(re.search(r"torn\.db:1: document does not parse \(not a Parsl monitoring database", err),
              "a half-written database is rejected as a bad document (%s)" % err.strip()[-200:])
        check(sorted(got) == sorted(want) and all(len(v) == 1 for v in got.values()),
              "then read whole when it changed: every try, once (%d of %d)" % (len(got), len(want)))

        # an older schema (Parsl's own test databases): no context-switch
        # columns; read with those values absent, every other value the same
        old_db = os.path.join(tmp, "older.db")
        shutil.copy(db, old_db)
        con = sqlite3.connect(old_db)
        for col in ("psutil_process_num_ctx_switches_voluntary",
                    "psutil_process_num_ctx_switches_involuntary"):
            con.execute("ALTER TABLE resource DROP COLUMN %s" % col)
        con.commit()
        con.close()
        r = subprocess.run([tasklens, "lines", "--window", "0", old_db], capture_output=True, text=True)
        older = task_points(r.stdout)
        strip = lambda f: {k: v for k, v in f.items() if k != "context_switches"}
        same = sorted(older) == sorted(batch) and all(
            strip(older[k][0][1]) == strip(batch[k][0][1]) and "context_switches" not in older[k][0][1]
            for k in batch)
        check(r.returncode == 0 and same and "not a Parsl" not in r.stderr,
              "a database without the context-switch columns: every try, context switches absent, "
              "the rest equal (%d of %d; %s)" % (len(older), len(batch), r.stderr.strip()[:200]))

        journal_and_wal(tasklens, db, tmp, batch)

        r = subprocess.run([tasklens, "formats"], capture_output=True, text=True)
        check("parsl" in r.stdout and "parsl.utc_offset" in r.stdout,
              "formats lists parsl with its options")
        r = subprocess.run([tasklens, "check", "-c", cfg], capture_output=True, text=True)
        check("an SQLite database" in r.stdout, "check: the source's file is an SQLite database")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
