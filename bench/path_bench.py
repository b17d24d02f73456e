#!/usr/bin/env python3
"""`tasklens path` at scale (issue 59 point 4): a Parsl monitoring.db of N
tasks with K dependencies each (gen_parsl_dag.py), timed with its peak
memory, beside what a notebook does with the same database: read it with
sqlite3, build a networkx DiGraph, walk the observed critical path back
from the last end through the dependency that ended last, and take the
bound with unlimited workers over a topological order. The two answers
are compared (the path's task ids, the bound).

usage: path_bench.py TASKLENS DB
"""
import datetime
import json
import os
import resource
import sqlite3
import subprocess
import sys
import time


def ts(s):
    return datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()


def networkx_path(db):
    import networkx as nx
    c = sqlite3.connect(db)
    g = nx.DiGraph()
    t = {}
    for task, deps, launched, running, returned in c.execute(
            "SELECT t.task_id, t.task_depends, y.task_try_time_launched, y.task_try_time_running, "
            "y.task_try_time_returned FROM task t JOIN try y USING (task_id, run_id)"):
        t[task] = (ts(launched), ts(running), ts(returned))
        g.add_node(task)
        for d in (deps or "").split(","):
            if d:
                g.add_edge(int(d), task)
    end = {k: v[2] for k, v in t.items()}
    cur, path = max(t, key=lambda k: (end[k], k)), []
    while cur is not None:
        path.append(cur)
        deps = [d for d in g.predecessors(cur) if end[d] < end[cur]]
        cur = max(deps, key=lambda d: end[d]) if deps else None
    path.reverse()
    ef = {}
    for k in nx.topological_sort(g):
        deps = [ef[d] for d in g.predecessors(k)]
        ef[k] = (max(deps) if deps else t[k][0]) + (t[k][2] - t[k][1])
    t0 = min(min(v[0], v[1]) for v in t.values())
    return path, max(ef.values()) - t0


VENV = os.path.expanduser("~/.cache/tasklens/networkx-venv")


def ensure_networkx():
    """networkx from PyPI in a cached venv (re-run there) when this Python has none."""
    try:
        import networkx  # noqa: F401
        return
    except ImportError:
        pass
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.run(["/usr/bin/python3", "-m", "venv", VENV], check=True)
        subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q", "networkx"], check=True)
    os.execv(py, [py] + sys.argv)


def main():
    ensure_networkx()
    tasklens, db = sys.argv[1:3]
    t = time.time()
    r = subprocess.run([tasklens, "path", "--format", "json", db], capture_output=True, text=True, check=True)
    tl_s = time.time() - t
    tl_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    got = json.loads(r.stdout)["runs"][0]
    t = time.time()
    path, cpm = networkx_path(db)
    py_s = time.time() - t
    py_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    same = [s["task_id"] for s in got["path"]] == path and abs(got["bound"]["cpm_s"] - cpm) < 1e-3
    print("tasklens path: %.2f s, %.0f MiB peak; %d tasks, %d dependencies, %d steps, bound %.1f s"
          % (tl_s, tl_kib / 1024, got["tasks"], got["dependencies"], len(got["path"]), got["bound"]["cpm_s"]))
    print("python+networkx %s (path + bound only): %.2f s, %.0f MiB peak; same path and bound: %s"
          % (__import__("networkx").__version__, py_s, py_kib / 1024, same))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
