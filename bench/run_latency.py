#!/usr/bin/env python3
"""`tasklens run --follow` end to end: latency and sustained throughput.

latency: a writer appends one finished Work Queue task (5 lines, DONE last)
every 20 ms, 1000 tasks, while `run` follows the file into a real influxd at
flush interval 1 s. A poller asks InfluxDB `count(attempt)` every 20 ms; a
task is queryable when the count reaches its number. Latency = first poll
that sees it - the moment its DONE line was written. Resolution: the poll
period plus one query (about 20-30 ms).

throughput: a writer appends a generated log (N tasks, 5 lines each) as
fast as it can in 1 MiB pieces while `run` follows it into a line-protocol
file on /dev/shm; the time until the self-metrics report every line read.

usage: run_latency.py TASKLENS GEN_WQ [THROUGHPUT_TASKS]
"""
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from influxd_harness import Influxd  # noqa: E402


def latency(tasklens, gen, tmp, n=1000):
    full = os.path.join(tmp, "lat-full.log")
    with open(full, "wb") as f:
        subprocess.run([gen, str(n), "4", "5"], stdout=f, check=True)
    lines = open(full, "rb").read().splitlines(keepends=True)
    header, body = lines[:4], lines[4:-1]
    # regroup per task: gen_wq writes 64 tasks per phase; reorder so each
    # task's five lines are written together, DONE last
    per_task = {}
    for ln in body:
        parts = ln.split(b" ")
        if parts[2] == b"TASK":
            per_task.setdefault(int(parts[3]), []).append(ln)
    log = os.path.join(tmp, "lat.log")
    with Influxd() as db:
        db.query("CREATE DATABASE lat")
        with open(log, "wb") as w:
            w.writelines(header)
        run = subprocess.Popen([tasklens, "run", "--follow", log, "--influx-url", db.url, "--influx-db", "lat",
                                "--spool-dir", os.path.join(tmp, "spool"), "--flush-interval", "1000",
                                "--quiet"])
        time.sleep(1)
        written = {}
        seen = {}
        done = threading.Event()

        def poll():
            while not done.is_set() or len(seen) < n:
                rows = db.rows("SELECT count(attempt) FROM task", "lat")
                c = rows[0]["count"] if rows else 0
                now = time.time()
                for i in range(1, c + 1):
                    seen.setdefault(i, now)
                if done.is_set() and time.time() > done_at[0] + 10:
                    break
                time.sleep(0.02)

        done_at = [0]
        t = threading.Thread(target=poll)
        t.start()
        with open(log, "ab", buffering=0) as w:
            for i in sorted(per_task):
                w.write(b"".join(per_task[i]))
                written[i] = time.time()
                time.sleep(0.02)
        done_at[0] = time.time()
        done.set()
        t.join()
        run.send_signal(signal.SIGTERM)
        run.wait(60)
    lat = sorted(seen[i] - written[i] for i in written if i in seen)
    missing = n - len(lat)
    med = statistics.median(lat)
    p99 = lat[int(0.99 * (len(lat) - 1))]
    print("latency: %d tasks, median %.3f s, p99 %.3f s, max %.3f s, %d never seen"
          % (len(lat), med, p99, lat[-1], missing))
    return med, p99


def throughput(tasklens, gen, tmp, tasks):
    full = os.path.join(tmp, "tp-full.log")
    with open(full, "wb") as f:
        subprocess.run([gen, str(tasks), "16", "9"], stdout=f, check=True)
    size = os.path.getsize(full)
    total = sum(1 for _ in open(full, "rb"))
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else tmp
    log = os.path.join(shm, "tl-tp-%d.log" % os.getpid())
    out = os.path.join(shm, "tl-tp-%d.lp" % os.getpid())
    open(log, "wb").close()
    run = subprocess.Popen([tasklens, "run", "--follow", log, "--lines-out", out, "--flush-interval", "100",
                            "--quiet"])
    time.sleep(0.5)
    t0 = time.time()
    with open(full, "rb") as r, open(log, "ab", buffering=0) as w:
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            w.write(b)
    t_written = time.time() - t0
    got = 0
    while time.time() - t0 < 600:
        with open(out, "rb") as f:
            f.seek(max(0, os.path.getsize(out) - 65536))
            tail = f.read()
        m = re.findall(rb"^tasklens,[^ ]* lines=(\d+)i", tail, re.M)
        if m:
            got = int(m[-1])
        if got >= total:
            break
        time.sleep(0.05)
    t_done = time.time() - t0
    run.send_signal(signal.SIGTERM)
    run.wait(60)
    os.unlink(log)
    os.unlink(out)
    print("throughput: %d lines (%.0f MB) appended in %.2f s; all read after %.2f s: %.2f M lines/s, %.0f MB/s"
          % (total, size / 1e6, t_written, t_done, total / t_done / 1e6, size / t_done / 1e6))


def main():
    tasklens, gen = sys.argv[1:3]
    tasks = int(sys.argv[3]) if len(sys.argv) > 3 else 400000
    with tempfile.TemporaryDirectory(prefix="tl-lat-") as tmp:
        latency(tasklens, gen, tmp)
        throughput(tasklens, gen, tmp, tasks)


if __name__ == "__main__":
    main()
