#!/usr/bin/env python3
"""A Parsl monitoring.db with N tasks and about K dependencies each, for
`tasklens path`'s scale figure (issue 59 point 4): task i depends on K
distinct tasks among the 1,000 before it; it is launched when its last
dependency returns (plus a few ms), waits 0-50 ms for a worker, runs
0.1-10 s (one in a thousand 20x longer: stragglers). Parsl's own schema
(the columns tasklens reads), one try per task.

usage: gen_parsl_dag.py N K OUT.db [SEED]
"""
import datetime
import random
import sqlite3
import sys

SCHEMA = """
CREATE TABLE workflow (run_id TEXT NOT NULL, workflow_name TEXT, time_began DATETIME NOT NULL,
  time_completed DATETIME, PRIMARY KEY (run_id));
CREATE TABLE task (task_id INTEGER NOT NULL, run_id TEXT NOT NULL, task_depends TEXT,
  task_func_name TEXT NOT NULL, task_time_invoked DATETIME, task_time_returned DATETIME,
  PRIMARY KEY (task_id, run_id));
CREATE TABLE try (try_id INTEGER NOT NULL, task_id INTEGER NOT NULL, run_id TEXT NOT NULL,
  hostname TEXT, task_executor TEXT NOT NULL, task_try_time_launched DATETIME,
  task_try_time_running DATETIME, task_try_time_returned DATETIME, PRIMARY KEY (try_id, task_id, run_id));
CREATE TABLE status (task_id INTEGER NOT NULL, task_status_name TEXT NOT NULL, timestamp DATETIME NOT NULL,
  run_id TEXT NOT NULL, try_id INTEGER NOT NULL, PRIMARY KEY (task_id, run_id, task_status_name, timestamp));
CREATE TABLE resource (task_id INTEGER NOT NULL, try_id INTEGER NOT NULL, run_id TEXT NOT NULL,
  timestamp DATETIME NOT NULL, psutil_process_memory_resident BIGINT, psutil_process_memory_virtual BIGINT,
  psutil_process_time_user FLOAT, psutil_process_time_system FLOAT, psutil_process_disk_read BIGINT,
  psutil_process_disk_write BIGINT, psutil_process_num_ctx_switches_voluntary BIGINT,
  psutil_process_num_ctx_switches_involuntary BIGINT);
"""
APPS = ["prepare", "align", "call", "merge", "filter", "annotate", "plot", "index"]


def stamp(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")


def main():
    n, k, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rnd = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 59)
    db = sqlite3.connect(out)
    db.executescript(SCHEMA)
    run, t0 = "bench-run", 1795000000.0
    end = [0.0] * n
    tasks, tries, status = [], [], []
    for i in range(n):
        deps = rnd.sample(range(max(0, i - 1000), i), min(k, i)) if i else []
        launched = (max(end[d] for d in deps) if deps else t0) + rnd.uniform(0.001, 0.005)
        running = launched + rnd.uniform(0, 0.05)
        run_s = rnd.uniform(0.1, 10) * (20 if rnd.random() < 0.001 else 1)
        end[i] = running + run_s
        app = APPS[i % len(APPS)]
        tasks.append((i, run, ",".join(map(str, deps)), app, stamp(t0), stamp(end[i])))
        tries.append((0, i, run, "node%d" % (i % 16), "htex", stamp(launched), stamp(running), stamp(end[i])))
        status.append((i, "exec_done", stamp(end[i]), run, 0))
    db.execute("INSERT INTO workflow VALUES (?, 'bench', ?, ?)", (run, stamp(t0), stamp(max(end))))
    db.executemany("INSERT INTO task VALUES (?, ?, ?, ?, ?, ?)", tasks)
    db.executemany("INSERT INTO try VALUES (?, ?, ?, ?, ?, ?, ?, ?)", tries)
    db.executemany("INSERT INTO status VALUES (?, ?, ?, ?, ?)", status)
    db.commit()
    print("%d tasks, %d dependencies: %s" % (n, sum(t[2].count(",") + 1 for t in tasks if t[2]), out))


if __name__ == "__main__":
    main()
