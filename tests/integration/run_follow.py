#!/usr/bin/env python3
"""`tasklens run --follow` on live files.

1. A log written in pieces, rotated 9 times (rename + create and
   copytruncate in turn), followed into a line-protocol file: every task point exactly once, SIGTERM exits 0,
   and the last cumulative quantiles equal `summary` on the whole log.
2. A real Work Queue manager (tests/integration/wq_manager.c) writes its
   transaction log while `run` follows it into a real influxd: every task
   attempt arrives once, and the final cumulative quantiles in InfluxDB equal
   `summary` on the finished log.

3. InfluxDB stopped for 30 s while a writer appends and `run` follows:
   the points wait in the spool and drain when it is back; every task point
   arrives exactly once and the spool ends empty.

usage: run_follow.py TASKLENS WQ_MANAGER DEMO_LOG [GEN_WQ]
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402
from influxd_harness import Influxd  # noqa: E402



def summary(tasklens, *logs):
    out = subprocess.run([tasklens, "summary", "--by", "source,category", "--format", "json", *logs],
                         check=True, stdout=subprocess.PIPE).stdout
    return {g["key"]["category"]: g for g in json.loads(out)["groups"]}


def parse_lp_cumulative(path):
    """Last cumulative wall_time_s point per category: (q50, count)."""
    last = {}
    for line in open(path, encoding="utf-8"):
        if not line.startswith("task_quantiles,") or "window=cumulative" not in line \
                or "metric=wall_time_s" not in line:
            continue
        tags, fields, _ = line.rsplit(" ", 2)
        cat = next(t.split("=", 1)[1] for t in tags.replace("\\ ", "\x00").split(",")
                   if t.startswith("category=")).replace("\x00", " ")
        f = dict(kv.split("=", 1) for kv in fields.split(","))
        last[cat] = (float(f["q50"]), int(f["count"].rstrip("i")))
    return last


def task_count(db, dbname):
    rows = db.rows("SELECT count(attempt) FROM task", dbname)
    return rows[0]["count"] if rows else 0


def drain_and_stop(db, dbname, run, want, timeout):
    """Waits until InfluxDB holds `want` task points (or timeout), then
    SIGTERMs the run. Returns (exit code, task points after the exit)."""
    deadline = time.time() + timeout
    while time.time() < deadline and task_count(db, dbname) < want:
        time.sleep(0.5)
    time.sleep(1)
    run.send_signal(signal.SIGTERM)
    rc = run.wait(60)
    return rc, task_count(db, dbname)


def wait_read(pid, path, timeout=20):
    """Until process pid has read path to its current size (its read offset
    in /proc/PID/fdinfo): the writer's stand-in for logrotate's delay, so a
    slow machine does not turn the rotation into a race the test is not
    about. False if it never gets there."""
    size = os.path.getsize(path)
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            for fd in os.listdir("/proc/%d/fd" % pid):
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) != path:
                    continue
                with open("/proc/%d/fdinfo/%s" % (pid, fd)) as info:
                    pos = int(info.readline().split()[1])  # "pos:	N"
                if pos >= size:
                    return True
        except OSError:
            pass  # the fd closed or changed between the calls
        time.sleep(0.05)
    return False


def file_follow(tasklens, demo, tmp):
    """10 rounds: the log grows, then is rotated -- rename + create and
    copytruncate in turn -- while `run` follows it. The writer waits a
    little before each rotation, as logrotate's delay does: what was written
    to a file that copytruncate empties before anyone read it is gone for
    every follower (tail -F included), so that is not what is tested."""
    import shutil
    log, out = os.path.join(tmp, "live.log"), os.path.join(tmp, "out.lp")
    lines = open(demo, encoding="utf-8").read().splitlines(keepends=True)
    rounds = 10
    per = len(lines) // rounds + 1
    p = subprocess.Popen([tasklens, "run", "--follow", log, "--lines-out", out, "--flush-interval", "200",
                          "--window", "0", "--quiet"])
    time.sleep(0.5)  # the file does not exist yet
    for r in range(rounds):
        with open(log, "a") as f:
            for i, line in enumerate(lines[r * per:(r + 1) * per]):
                f.write(line)
                if i % 50 == 0:
                    f.flush()
                    time.sleep(0.02)
        time.sleep(0.4)
        if r == rounds - 1:
            break
        check(wait_read(p.pid, log), "file: round %d read to the end before the rotation" % r)
        if r % 2 == 0:
            os.rename(log, "%s.%d" % (log, r))  # rename + create (the next append creates it)
        else:
            shutil.copy(log, "%s.%d" % (log, r))  # copytruncate
            with open(log, "r+") as f:
                f.truncate(0)
    time.sleep(1.5)
    p.send_signal(signal.SIGTERM)
    rc = p.wait(30)
    check(rc == 0, "file: SIGTERM -> exit 0 (%d)" % rc)
    tasks = [line for line in open(out, encoding="utf-8") if line.startswith("task,")]
    want = sum(g["attempts"] for g in summary(tasklens, demo).values())
    check(len(tasks) == want and len(set(tasks)) == want,
          "file: %d task points, %d distinct, want %d (nothing lost or repeated across 9 rotations)"
          % (len(tasks), len(set(tasks)), want))
    got = parse_lp_cumulative(out)
    # the reference is the whole log as one input: run keeps one parser (and
    # its open tasks) across the rotation, which separate inputs would not
    ref = summary(tasklens, demo)
    same = all(got.get(cat) == (g["metrics"]["wall_time_s"]["quantiles"]["0.5"],
                                g["metrics"]["wall_time_s"]["count"])
               for cat, g in ref.items() if g["metrics"]["wall_time_s"]["count"])
    check(same and got, "file: last cumulative quantiles equal summary (%d categories)" % len(got))


def live_wq(tasklens, manager, tmp):
    log, expected = os.path.join(tmp, "wq.log"), os.path.join(tmp, "expected.tsv")
    with Influxd() as db:
        db.query("CREATE DATABASE live")
        run = subprocess.Popen([tasklens, "run", "--follow", log, "--influx-url", db.url, "--influx-db", "live",
                                "--spool-dir", os.path.join(tmp, "spool"), "--flush-interval", "500",
                                "--cumulative-interval", "2", "--quiet"])
        m = subprocess.run([manager, log, expected, "2"], timeout=400,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        check(m.returncode == 0, "live: the manager finished")
        ref = summary(tasklens, log)
        want = sum(g["attempts"] for g in ref.values())
        rc, n = drain_and_stop(db, "live", run, want, 30)
        check(rc == 0, "live: SIGTERM -> exit 0")
        check(n == want, "live: %d task attempts in InfluxDB, summary says %d" % (n, want))
        q = db.rows("SELECT last(q50) AS q50, last(\"count\") AS n FROM task_quantiles "
                    "WHERE window = 'cumulative' AND metric = 'wall_time_s' GROUP BY category", "live")
        got = {r["category"]: (r["q50"], r["n"]) for r in q}
        same = all(got.get(cat) == (g["metrics"]["wall_time_s"]["quantiles"]["0.5"],
                                    g["metrics"]["wall_time_s"]["count"])
                   for cat, g in ref.items() if g["metrics"]["wall_time_s"]["count"])
        check(same and len(got) >= 4, "live: final cumulative quantiles equal summary (%d categories)" % len(got))


def outage(tasklens, gen, tmp):
    full, log, stats = (os.path.join(tmp, n) for n in ("outage-full.log", "outage.log", "outage.json"))
    with open(full, "wb") as f:
        subprocess.run([gen, "6000", "6", "3", "1000"], stdout=f, check=True)
    data = open(full, "rb").read()
    want_tasks = 6000
    with Influxd() as db:
        db.query("CREATE DATABASE outage")
        run = subprocess.Popen([tasklens, "run", "--follow", log, "--influx-url", db.url, "--influx-db", "outage",
                                "--spool-dir", os.path.join(tmp, "outage-spool"), "--flush-interval", "200",
                                "--checkpoint-dir", os.path.join(tmp, "outage-ckpt"),
                                "--influx-timeout", "2000", "--stats", stats, "--quiet"])
        t0, off, stopped_at, restarted = time.time(), 0, None, False
        with open(log, "ab", buffering=0) as w:
            # about 45 s of writing; influxd is down from 5 s to 35 s
            while off < len(data):
                n = max(1, len(data) // 450)
                w.write(data[off:off + n])
                off += n
                time.sleep(0.1)
                if stopped_at is None and time.time() - t0 > 5:
                    db.stop()
                    stopped_at = time.time()
                elif stopped_at and not restarted and time.time() - stopped_at > 30:
                    db.start()
                    restarted = True
        if not restarted:
            time.sleep(max(0, 30 - (time.time() - stopped_at)))
            db.start()
        rc, n = drain_and_stop(db, "outage", run, want_tasks, 90)
        check(rc == 0, "outage: SIGTERM -> exit 0")
        check(n == want_tasks, "outage: %d task points in InfluxDB, want %d (nothing lost)" % (n, want_tasks))
        st = json.load(open(stats))
        check(st["batches_spooled"] > 0 and st["spool_frames"] == 0 and st["spool_bytes"] == 0,
              "outage: %d batches waited in the spool, which ended empty" % st["batches_spooled"])


def main():
    tasklens, manager, demo = sys.argv[1:4]
    gen = sys.argv[4] if len(sys.argv) > 4 else None
    with tempfile.TemporaryDirectory(prefix="tl-run-") as tmp:
        file_follow(tasklens, demo, tmp)
        if manager != "-":
            live_wq(tasklens, manager, tmp)
        if gen:
            outage(tasklens, gen, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
