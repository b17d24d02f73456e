#!/usr/bin/env python3
"""Absurd times and integers are damage, not data (issue 46 point 9).

A real Spark event log (../shared/spark/samples) and a real resource_monitor
summary (written here by Debian's resource_monitor) are damaged one field at
a time, as a bad disk or a buggy writer would: a task's Finish Time of -5,
1e300 or 1e16 ms, an Attempt of 4e9; a summary's `end` removed or 1e20, an
exit_status of 2^40. Each damaged unit is rejected with file:line and the
field named; no point of `lines` lands outside 2000..2200; no attempt or
exit code is invented; the undamaged tasks are all there.

usage: absurd_values.py TASKLENS
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, ran, resource_monitor  # noqa: E402

TL = sys.argv[1]
SHARED = os.environ.get("TL_SHARED_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "..", "..", "..", "shared")
LO, HI = 946684800 * 10**9, 7258118400 * 10**9  # 2000-01-01, 2200-01-01 in ns


def lines(path):
    p = subprocess.run([TL, "lines", path], capture_output=True, text=True)
    pts = [l for l in p.stdout.splitlines() if l.startswith("task,")]
    return pts, p.stderr


def times(pts):
    return [int(p.rsplit(" ", 1)[1]) for p in pts]


def spark(tmp):
    src = os.path.join(SHARED, "spark", "samples", "local-1795570335358")
    if not os.path.exists(src):
        print("SKIP the Spark part: %s absent" % src)
        return
    base, _ = lines(src)
    rows = open(src).read().splitlines()
    ends = [i for i, r in enumerate(rows) if '"Event":"SparkListenerTaskEnd"' in r]
    cases = [("Finish Time", -5), ("Finish Time", 1e300), ("Finish Time", 1e16), ("Attempt", 4e9)]
    for k, (field, value) in enumerate(cases):
        damaged = list(rows)
        i = ends[k]
        ev = json.loads(damaged[i])
        ev["Task Info"][field] = value
        damaged[i] = json.dumps(ev)
        path = os.path.join(tmp, "spark-%d" % k)
        with open(path, "w") as f:
            f.write("\n".join(damaged) + "\n")
        pts, err = lines(path)
        said = re.search(r"%s:%d: impossible resource value \(%s out of range" % (re.escape(path), i + 1, field), err)
        ok_times = all(LO <= t < HI for t in times(pts))
        attempts = [int(m) for m in re.findall(r"attempt=(-?\d+)i", "\n".join(pts))]
        check(said and ok_times and len(pts) == len(base) - 1 and all(1 <= a < 10**6 for a in attempts),
              "spark: %s = %g is rejected at its line (%s), %d of %d other tasks kept, every point in "
              "2000..2200, no attempt invented" % (field, value, said.group(0) if said else err.strip()[-200:],
                                                   len(pts), len(base) - 1))


def rmonitor(tmp):
    rm = shutil.which("resource_monitor")
    if not rm:
        print("SKIP the resource_monitor part: resource_monitor absent (coop-computing-tools)")
        return
    body = resource_monitor(os.path.join(tmp, "t"), ["sh", "-c", "exit 3"])
    if not check(body, "resource_monitor wrote a summary"):
        return
    good = json.loads(body.decode().replace("\\'", "'"))
    for what, change in (("end removed", lambda d: d.pop("end")),
                         ("end = 1e20", lambda d: d.__setitem__("end", [1e20, "s"])),
                         ("exit_status = 2^40", lambda d: d.__setitem__("exit_status", 2 ** 40))):
        d = json.loads(json.dumps(good))
        change(d)
        path = os.path.join(tmp, "bad-%s.summary" % what.split()[0])
        with open(path, "w") as f:
            json.dump(d, f)
        pts, err = lines(path)
        field = "exit_status" if "exit" in what else "end"
        said = re.search(r"%s:1: missing or malformed fields \(%s" % (re.escape(path), field), err)
        mtime = os.stat(path).st_mtime_ns
        t = times(pts)
        codes = re.findall(r"exit_code=(-?\d+)i", "\n".join(pts))
        placed = t and LO <= t[0] < HI and (field != "end" or abs(t[0] - mtime) < 10**6)
        check(said and len(pts) == 1 and placed and (field != "exit_status" or not codes),
              "rmonitor: %s is said at file:1 (%s), the task kept %s%s" % (
                  what, said.group(0) if said else err.strip()[-200:],
                  "at its file's time" if field == "end" else "in time",
                  ", with no exit code invented" if field == "exit_status" else ""))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        spark(tmp)
        rmonitor(tmp)
    if not ran():
        print("SKIP: the Spark sample and resource_monitor are both absent: nothing to damage")
        return 77
    return finish()


if __name__ == "__main__":
    sys.exit(main())
