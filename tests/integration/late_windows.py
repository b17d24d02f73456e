#!/usr/bin/env python3
"""Every record lands in its window (issue 46 point 4): the window quantile
points of `lines` (the last one written for each window: a window written
again with its late records replaces the first in InfluxDB) hold every task
that ended in the window, within aggregate.allowed_lateness; later records
are counted (self-metric too_late_records) and said.

1. Two managers' logs of the same minutes (the real demo log, and a copy
   of it as a second manager 10 minutes earlier), read one after the other:
   every window's count is its tasks' (it was 1,022 of 2,456).
2. A log whose clock steps back an hour: those records are too late, said
   once, counted exactly in the self-metrics; the others land.

usage: late_windows.py TASKLENS DEMO_LOG
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

TL, DEMO = sys.argv[1:3]
MIN = 60 * 10**9


def shifted(src, dst, offset_s, pid=None):
    """The log with its clock moved (and another manager pid)."""
    out = []
    for line in open(src):
        parts = line.split(" ", 2)
        if line.startswith("#") or len(parts) < 3 or not parts[0].isdigit():
            out.append(line)
            continue
        out.append("%d %s %s" % (int(parts[0]) + offset_s * 10**6, pid or parts[1], parts[2]))
    with open(dst, "w") as f:
        f.writelines(out)


def windows(lp):
    """{(category, window start ns): count}: the last wall_time_s window point of each."""
    out = {}
    for l in lp.splitlines():
        if l.startswith("task_quantiles,") and "metric=wall_time_s" in l and "window=60s" in l:
            cat = re.search(r"category=((?:\\.|[^,])*)", l).group(1)
            src = re.search(r"source=([^,]*)", l).group(1)
            end = int(l.rsplit(" ", 1)[1])
            out[(src, cat, end - MIN)] = int(re.search(r"count=(\d+)i", l).group(1))
    return out


def tasks(lp):
    """{(source, category, window start): tasks that ended in it}, from the task points."""
    out = {}
    for l in lp.splitlines():
        if not l.startswith("task,") or "retried=true" in l or "wall_time_s=" not in l:
            continue
        cat = re.search(r"category=((?:\\.|[^,])*)", l).group(1)
        src = re.search(r"source=([^,]*)", l).group(1)
        t = int(l.rsplit(" ", 1)[1])
        k = (src, cat, t - t % MIN)
        out[k] = out.get(k, 0) + 1
    return out


def run(*paths):
    p = subprocess.run([TL, "lines", "--by", "source,category", *paths], capture_output=True, text=True)
    return p.stdout, p.stderr


def main():
    with tempfile.TemporaryDirectory() as tmp:
        b = os.path.join(tmp, "manager-b.log")
        shifted(DEMO, b, -600, pid="777")
        lp, err = run(DEMO, b)
        w, t = windows(lp), tasks(lp)
        diff = {k: (w.get(k), v) for k, v in t.items() if w.get(k) != v}
        check(t and not diff and sum(w.values()) == sum(t.values()),
              "two managers' logs 10 minutes apart: every window holds its tasks (%d tasks in %d windows; "
              "differ: %s)" % (sum(t.values()), len(t), list(diff.items())[:3]))
        check("too_late" not in err and "more than 900 s after" not in err, "nothing said too late")

        back = os.path.join(tmp, "back.log")
        lines = open(DEMO).read().splitlines(keepends=True)
        body = [i for i, l in enumerate(lines) if not l.startswith("#")]
        half = body[len(body) // 2]
        rest = os.path.join(tmp, "rest.log")
        with open(rest, "w") as f:
            f.writelines(lines[half:])
        shifted(rest, rest, -3600)
        with open(back, "w") as f:
            f.writelines(lines[:half] + open(rest).readlines())
        p = subprocess.run([TL, "lines", back], capture_output=True, text=True)
        late = [int(x) for x in re.findall(r"too_late_records=(\d+)i", p.stdout)]
        pts = [int(l.rsplit(" ", 1)[1]) for l in p.stdout.splitlines() if l.startswith("task,")]
        newest = max(pts)
        back_pts = sum(1 for t in pts if t < newest - 1800 * 10**9)
        said = p.stderr.count("after their window was written")
        w, t = windows(p.stdout), tasks(p.stdout)
        landed = {k: v for k, v in t.items() if k[2] >= newest - 1800 * 10**9}
        diff = {k: (w.get(k), v) for k, v in landed.items() if w.get(k) != v}
        check(late and late[-1] == back_pts and said == 1 and not diff,
              "a clock stepping back an hour: its %d task records counted too late (%s), said %d time(s); "
              "the others in their windows (differ: %s)" % (back_pts, late[-1:], said, list(diff.items())[:2]))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
