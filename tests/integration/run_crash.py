#!/usr/bin/env python3
"""Crash safety of `tasklens run` with checkpoints, against a real influxd.

A writer appends a 200k-line Work Queue log in random pieces (often cut
mid-line) while `tasklens run -c FILE` follows it into InfluxDB with
checkpoints every second. It is killed with SIGKILL at 20 random moments
and restarted each time; at every fourth kill the log is also rotated
while tasklens is down (renamed, a new file started), so a restart that
did not resume from its checkpoint would lose the old file's tail. When the writer is done and tasklens has caught
up, it is stopped with SIGTERM. A reference run follows the finished log
without interruption into another database. The two databases must hold
the same thing:
  - every raw task point (all fields), exactly once;
  - the per-category task counts;
  - the latest cumulative quantiles of every (category, metric);
  - every closed 60 s window, and every workflow point.

usage: run_crash.py TASKLENS GEN_WQ [ROUNDS]
"""
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402
from influxd_harness import Influxd  # noqa: E402

CONFIG = """\
sources:
  - type: file
    path: {log}
    parser: wq
sinks:
  - type: influxdb
    url: {url}
    db: {db}
    spool_dir: {spool}
aggregate:
  by: [source, category]
  window: 60
checkpoint_dir: {ckpt}
checkpoint_interval: 1
flush_interval: 200
cumulative_interval: 1
log_level: info
"""


def write_config(tmp, name, log, url, db):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(CONFIG.format(log=log, url=url, db=db, spool=os.path.join(tmp, name + "-spool"),
                              ckpt=os.path.join(tmp, name + "-ckpt")))
    return path


def wait_caught_up(db, dbname, total_lines, timeout=120):
    """Until the self-metrics say every line of the log was read."""
    deadline, seen = time.time() + timeout, 0
    while time.time() < deadline:
        rows = db.rows("SELECT max(lines) FROM tasklens", dbname)
        seen = rows[0]["max"] if rows else 0
        if seen >= total_lines:
            return True, seen
        time.sleep(0.3)
    return False, seen


def content(db, dbname):
    """What a dashboard would see, in a comparable form."""
    tasks = db.rows("SELECT * FROM task", dbname)
    task_rows = sorted(repr(sorted(r.items())) for r in tasks)
    per_cat = {r["category"]: r["count"] for r in
               db.rows("SELECT count(attempt) FROM task GROUP BY category", dbname)}
    cum = {(r["category"], r["metric"]): (r["q05"], r["q50"], r["q95"], r["q100"], r["n"], r["s"])
           for r in db.rows("SELECT last(q05) AS q05, last(q50) AS q50, last(q95) AS q95, "
                            "last(q100) AS q100, last(\"count\") AS n, last(\"sum\") AS s "
                            "FROM task_quantiles WHERE window = 'cumulative' "
                            "GROUP BY category, metric", dbname)}
    windows = sorted(repr(sorted(r.items())) for r in
                     db.rows("SELECT * FROM task_quantiles WHERE window = '60s'", dbname))
    workflow = sorted(repr(sorted(r.items())) for r in
                      db.rows("SELECT * FROM workflow", dbname))
    return task_rows, per_cat, cum, windows, workflow


def main():
    tasklens, gen = sys.argv[1:3]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    rnd = random.Random(int(os.environ.get("TL_SEED", "20261122")))
    with tempfile.TemporaryDirectory(prefix="tl-crash-") as tmp, Influxd() as db:
        full = os.path.join(tmp, "full.log")
        with open(full, "wb") as f:
            subprocess.run([gen, "40000", "12", "7", "1000"], stdout=f, check=True)
        data = open(full, "rb").read()
        total_lines = data.count(b"\n")
        check(total_lines >= 200000, "the log has %d lines" % total_lines)
        for name in ("crash", "ref"):
            db.query("CREATE DATABASE %s" % name)

        # the interrupted run: a live writer, 20 kill -9 and restarts
        log = os.path.join(tmp, "live.log")
        cfg = write_config(tmp, "crash", log, db.url, "crash")
        open(log, "wb").close()
        errlog = open(os.path.join(tmp, "crash.err"), "w")
        proc = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=errlog)
        # the first start writes a checkpoint at once; before it exists no
        # run could know a rotated file (nothing identified it yet)
        ckpt = os.path.join(tmp, "crash-ckpt", "tasklens.ckpt")
        deadline = time.time() + 30
        while not os.path.exists(ckpt) and time.time() < deadline:
            time.sleep(0.01)
        check(os.path.exists(ckpt), "the first start wrote a checkpoint at once")
        next_kill = time.time() + rnd.uniform(0.3, 1.2)
        off, restarts, bad_exit = 0, 0, []
        rotated = 0
        w = open(log, "ab", buffering=0)
        if True:
            while off < len(data) or restarts < rounds:
                if off < len(data):
                    n = rnd.randint(200, 20000)  # pieces cut anywhere, mid-line too
                    w.write(data[off:off + n])
                    off += n
                    time.sleep(0.01)
                else:
                    time.sleep(0.05)
                if restarts < rounds and time.time() >= next_kill:
                    if proc.poll() is not None:
                        bad_exit.append(proc.returncode)
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    if restarts % 4 == 3 and off < len(data):
                        # rotate at a line end while tasklens is down
                        nl = data.find(b"\n", off)
                        nl = len(data) if nl < 0 else nl + 1
                        w.write(data[off:nl])
                        off = nl
                        w.close()
                        os.rename(log, "%s.%d" % (log, restarts))
                        w = open(log, "ab", buffering=0)
                        rotated += 1
                    proc = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=errlog)
                    restarts += 1
                    next_kill = time.time() + rnd.uniform(0.3, 1.2)
        w.close()
        check(not bad_exit, "no run ended on its own between kills %s" % bad_exit)
        check(restarts == rounds, "%d kill -9 and restarts" % restarts)
        ok, seen = wait_caught_up(db, "crash", total_lines)
        check(ok, "the restarted run caught up (%d of %d lines)" % (seen, total_lines))
        time.sleep(1.5)
        proc.send_signal(signal.SIGTERM)
        check(proc.wait(60) == 0, "SIGTERM after the last restart -> exit 0")
        errlog.close()
        err = open(os.path.join(tmp, "crash.err")).read()
        resumed = err.count("resuming at byte") + err.count("rotated while stopped")
        found_rotated = err.count("rotated while stopped")
        check(resumed >= rounds // 2, "%d of %d restarts resumed from a checkpoint" % (resumed, rounds))
        check(rotated >= 4 and found_rotated >= 1,
              "rotated %d times while down; %d restarts finished the rotated file first"
              % (rotated, found_rotated))
        check("damaged" not in err and "failed" not in err, "no checkpoint errors:\n" + err[-2000:])

        # the reference: the finished log, uninterrupted
        ref_log = os.path.join(tmp, "ref.log")
        with open(ref_log, "wb") as f:
            f.write(data)
        cfg = write_config(tmp, "ref", ref_log, db.url, "ref")
        proc = subprocess.Popen([tasklens, "run", "-c", cfg])
        ok, seen = wait_caught_up(db, "ref", total_lines)
        check(ok, "the reference run caught up (%d of %d lines)" % (seen, total_lines))
        time.sleep(1.5)
        proc.send_signal(signal.SIGTERM)
        check(proc.wait(60) == 0, "reference: SIGTERM -> exit 0")

        got, want = content(db, "crash"), content(db, "ref")
        written = b"".join(open(p, "rb").read() for p in
                           ["%s.%d" % (log, i) for i in range(rounds) if os.path.exists("%s.%d" % (log, i))] + [log])
        check(written == data, "the writer wrote the whole log (%d files)" % (rotated + 1))
        check(len(want[0]) > 30000, "reference: %d task points" % len(want[0]))
        check(got[0] == want[0], "raw task points identical (%d vs %d)" % (len(got[0]), len(want[0])))
        check(got[1] == want[1], "per-category task counts identical (%d categories)" % len(want[1]))
        diff = [k for k in want[2] if got[2].get(k) != want[2][k]]
        check(len(want[2]) >= 12 and not diff and len(got[2]) == len(want[2]),
              "latest cumulative quantiles identical for %d (category, metric) pairs%s"
              % (len(want[2]), "; differ: %s" % diff[:3] if diff else ""))
        check(got[3] == want[3], "closed 60 s windows identical (%d vs %d points)" % (len(got[3]), len(want[3])))
        check(got[4] == want[4], "workflow points identical (%d vs %d)" % (len(got[4]), len(want[4])))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
