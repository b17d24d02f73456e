#!/usr/bin/env python3
"""`tasklens lines` into a real influxd: every task point arrives, a replay
changes nothing (deterministic timestamps), field values read back equal the
parsed records, and hostile names survive the escaping byte for byte.

usage: influx_lines.py TASKLENS DEMO_LOG
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from influxd_harness import Influxd  # noqa: E402

NAMES = ["plain", "with space", "comma,here", "equals=sign", 'quote"d', "back\\slash",
         "ünïcødé ✓", "a b,c=d\\e\"f", "trailing\\"]
# Line protocol cannot carry a tag value ending in a backslash: that point
# is refused and reported, the others must round-trip byte for byte.
UNWRITABLE = {"trailing\\"}


def hostile_log(path):
    """A small WQ log whose categories and host are hard to escape."""
    t, pid = 1700000000000000, 777
    lines = ["%d %d MANAGER START" % (t, pid),
             "%d %d WORKER worker-abc host-1.example:9000  CONNECTION" % (t + 1, pid)]
    for i, name in enumerate(NAMES, start=1):
        t += 1000
        lines += [
            "%d %d TASK %d WAITING %s FIRST_RESOURCES {}" % (t, pid, i, name),
            "%d %d TASK %d RUNNING host-1.example:9000  FIRST_RESOURCES {\"cores\":[1,\"cores\"]}" % (t + 1, pid, i),
            "%d %d TASK %d WAITING_RETRIEVAL host-1.example:9000 " % (t + 2, pid, i),
            "%d %d TASK %d RETRIEVED SUCCESS  0  {} {\"memory\":[%d,\"MB\"],\"wall_time\":[1.5,\"s\"]}" % (t + 3, pid, i, i),
            "%d %d TASK %d DONE SUCCESS  0 " % (t + 4, pid, i),
        ]
    lines.append("%d %d MANAGER END" % (t + 10, pid))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    tasklens, demo = sys.argv[1], sys.argv[2]
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory(prefix="tl-lines-") as tmp, Influxd() as db:
        db.query("CREATE DATABASE tl")
        body = subprocess.run([tasklens, "lines", demo], check=True, stdout=subprocess.PIPE).stdout
        summary = json.loads(subprocess.run([tasklens, "summary", "--format", "json", demo],
                                            check=True, stdout=subprocess.PIPE).stdout)
        attempts = sum(g["attempts"] for g in summary["groups"])
        check(db.write("tl", body) == 204, "write accepted")
        n = db.rows("SELECT count(attempt) FROM task", "tl")[0]["count"]
        check(n == attempts, "task points %d == attempts %d" % (n, attempts))
        db.write("tl", body)  # replay
        n2 = db.rows("SELECT count(attempt) FROM task", "tl")[0]["count"]
        check(n2 == attempts, "replay is idempotent (%d)" % n2)
        # spot values: the hog's memory and exit code, straight from the log
        hog = db.rows("SELECT max_rss_bytes, exit_code, limit_memory_bytes FROM task WHERE category = 'hog'", "tl")
        check(len(hog) == 1 and hog[0]["max_rss_bytes"] == 293 * 2**20 and hog[0]["exit_code"] == 143
              and hog[0]["limit_memory_bytes"] == 50 * 2**20, "hog point: %s" % hog)
        # cumulative quantiles equal summary's
        q = db.rows("SELECT q50, q95, \"count\" FROM task_quantiles WHERE window = 'cumulative' "
                    "AND metric = 'wall_time_s' GROUP BY category", "tl")
        want = {g["key"]["category"]: g["metrics"]["wall_time_s"] for g in summary["groups"]}
        good = all(abs(r["q50"] - want[r["category"]]["quantiles"]["0.5"]) == 0 and
                   r["count"] == want[r["category"]]["count"] for r in q)
        check(len(q) == len([w for w in want.values() if w["count"]]) and good,
              "cumulative task_quantiles equal summary (%d categories)" % len(q))

        # the workflow's final state and the self-metrics
        wf = db.rows("SELECT last(tasks_done) AS done, last(tasks_failed) AS failed, last(workers) AS workers "
                     "FROM workflow", "tl")
        # the manager's gauges split the finished tasks by the glossary's failed;
        # a cancelled task is in neither
        failed = sum(g["failed"] for g in summary["groups"])
        cancelled = sum(g["results"].get("CANCELED", 0) for g in summary["groups"])
        done = sum(g["tasks"] for g in summary["groups"]) - failed - cancelled
        check(wf and wf[0]["done"] == done and wf[0]["failed"] == failed and wf[0]["workers"] == 0,
              "workflow final state: %s (want done %d, failed %d)" % (wf, done, failed))
        me = db.rows("SELECT last(lines) AS lines, last(parse_errors) AS errors FROM tasklens", "tl")
        check(me and me[0]["lines"] == 1105 and me[0]["errors"] == 0, "tasklens self-metrics: %s" % me)

        log = os.path.join(tmp, "hostile.log")
        hostile_log(log)
        db.query("CREATE DATABASE esc")
        run = subprocess.run([tasklens, "lines", "--window", "0", log], check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # its task point and its group's cumulative quantile points are refused
        check("points refused" in run.stderr and "trailing backslash" in run.stderr,
              "unwritable points reported: %r" % run.stderr.strip())
        db.write("esc", run.stdout.encode())
        got = {r["value"] for r in db.rows('SHOW TAG VALUES FROM task WITH KEY = "category"', "esc")}
        want = set(NAMES) - UNWRITABLE
        check(got == want, "escaped names round-trip: missing %s, extra %s" % (want - got, got - want))
        hosts = {r["value"] for r in db.rows('SHOW TAG VALUES FROM task WITH KEY = "host"', "esc")}
        check(hosts == {"host-1.example"}, "host tag %s" % hosts)
        mem = {r["category"]: r["max_rss_bytes"] for r in
               db.rows("SELECT max_rss_bytes FROM task GROUP BY category", "esc")}
        check(all(mem.get(name) == (i + 1) * 2**20 for i, name in enumerate(NAMES) if name not in UNWRITABLE),
              "values under escaped tags")
    print("%d passed, %d failed" % (0 if failures else 1, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
