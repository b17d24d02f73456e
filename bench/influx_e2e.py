#!/usr/bin/env python3
"""End to end into a local InfluxDB 1.x (Debian's influxd on 127.0.0.1):
points/s, the count that arrived, and the CPU seconds of tasklens and of
influxd for the same points (from /proc, so the ratio is measured, not
guessed). Never run by CI.
    bench/influx_e2e.py BUILD_DIR [TASKS]"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from influxd_harness import Influxd  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK  # utime + stime


def main():
    build = sys.argv[1]
    tasks = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
    tl, gen = os.path.join(build, "cli", "tasklens"), os.path.join(build, "bench", "gen_wq")
    with tempfile.TemporaryDirectory() as tmp, Influxd() as db:
        log = os.path.join(tmp, "in.log")
        with open(log, "wb") as f:
            subprocess.run([gen, str(tasks), "8"], check=True, stdout=f)
        db.query("CREATE DATABASE bench")
        c0 = cpu_seconds(db.proc.pid)
        t0 = time.time()
        r = subprocess.run(["/usr/bin/time", "-f", "%U %S", tl, "lines", "--window", "0", "--influx-url", db.url,
                            "--influx-db", "bench", "--spool-dir", os.path.join(tmp, "spool"), log],
                           stderr=subprocess.PIPE, text=True)
        wall = time.time() - t0
        time.sleep(1)
        c1 = cpu_seconds(db.proc.pid)
        u, s = map(float, r.stderr.strip().splitlines()[-1].split())
        n = db.rows("SELECT count(attempt) FROM task", "bench")[0]["count"]
        points = tasks + 8 * 9
        print("tasks %d, task points in InfluxDB %d (exit %d)" % (tasks, n, r.returncode))
        print("wall %.2f s, %.0f points/s end to end" % (wall, points / wall))
        print("CPU: tasklens %.2f s (user %.2f + sys %.2f), influxd %.2f s; tasklens/influxd = %.1f %%"
              % (u + s, u, s, c1 - c0, 100 * (u + s) / (c1 - c0)))


if __name__ == "__main__":
    main()
