#!/usr/bin/env python3
"""Quantiles against an independent implementation.

wall_time_s is defined as in docs/summary.md: the resource monitor's wall_time,
else TaskVine's time_worker_end - time_worker_start, else the lifecycle
RUNNING -> WAITING_RETRIEVAL.

Parses Work Queue / TaskVine logs with its own few lines of Python (not
tasklens's rules), computes per-category quantiles with numpy.quantile
(linear interpolation, the numpy/pandas default), and requires tasklens
summary's JSON to agree to 1e-9 relative on every quantile, the count, min,
max and mean.

usage: quantiles_numpy.py TASKLENS LOG...
"""
import json
import subprocess
import sys

import numpy as np

MB = 2.0 ** 20
QS = [0, 0.01, 0.05, 0.32, 0.5, 0.68, 0.95, 0.99, 1]
KEYS = ["0", "0.01", "0.05", "0.32", "0.5", "0.68", "0.95", "0.99", "1"]


def resources(tok):
    d = json.loads(tok)
    return {k: v[0] * (MB if v[1] == "MB" else 1.0) for k, v in d.items()}


def parse(path):
    """Per category: metric -> list of values from each task's DONE."""
    tasks, out = {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            w = line.split()
            if len(w) < 5 or w[0].startswith("#") or w[2] != "TASK":
                continue
            ts, pid, tid, state = int(w[0]), w[1], w[3], w[4]
            t = tasks.setdefault((pid, tid), {})
            if state in ("WAITING", "READY"):
                # category = words between state and the allocation mode
                mode = next(i for i in range(len(w) - 1, 4, -1)
                            if w[i] in ("FIRST_RESOURCES", "MAX_RESOURCES"))
                t.update(cat=" ".join(w[5:mode]), waiting=ts)
                t.pop("running", None)
                t.pop("wret", None)
            elif state == "RUNNING":
                t["running"] = ts
            elif state == "WAITING_RETRIEVAL":
                t["wret"] = ts
            elif state == "RETRIEVED":
                objs = [x for x in w[5:] if x.startswith("{")]
                t["measured"] = resources(objs[-1]) if objs else {}
            elif state == "DONE":
                objs = [x for x in w[5:] if x.startswith("{")]
                m = resources(objs[-1]) if objs else t.get("measured", {})
                vals = out.setdefault(t.get("cat"), {})
                ws, we = m.get("time_worker_start", 0), m.get("time_worker_end", 0)
                if "wall_time" in m:  # resource monitor
                    wall = m["wall_time"]
                elif ws > 0 and we >= ws:  # TaskVine worker-reported execution
                    wall = we - ws
                elif "running" in t and "wret" in t:
                    wall = (t["wret"] - t["running"]) / 1e6
                else:
                    wall = None
                if wall is not None:
                    vals.setdefault("wall_time_s", []).append(wall)
                if "cpu_time" in m:
                    vals.setdefault("cpu_time_s", []).append(m["cpu_time"])
                if "memory" in m:
                    vals.setdefault("max_rss_bytes", []).append(m["memory"])
                if "waiting" in t and "running" in t:
                    vals.setdefault("queue_time_s", []).append((t["running"] - t["waiting"]) / 1e6)
                del tasks[(pid, tid)]
    return out


def close(a, b):
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def main():
    tasklens, logs = sys.argv[1], sys.argv[2:]
    failures, compared, worst = 0, 0, 0.0
    for log in logs:
        mine = parse(log)
        doc = json.loads(subprocess.run([tasklens, "summary", "--format", "json", log],
                                        check=True, stdout=subprocess.PIPE, text=True).stdout)
        groups = {g["key"]["category"]: g for g in doc["groups"]}
        for cat, metrics in mine.items():
            for metric, values in metrics.items():
                g = groups[cat]["metrics"][metric]
                v = np.array(values, dtype=float)
                want = dict(zip(KEYS, np.quantile(v, QS)))
                pairs = [(g["quantiles"][k], want[k]) for k in KEYS]
                pairs += [(g["min"], v.min()), (g["max"], v.max()), (g["mean"], v.mean())]
                if g["count"] != len(v):
                    print("FAIL %s %s %s: count %d != %d" % (log, cat, metric, g["count"], len(v)))
                    failures += 1
                for got, exp in pairs:
                    compared += 1
                    if exp != 0:
                        worst = max(worst, abs(got - exp) / abs(exp))
                    if not close(got, float(exp)):
                        print("FAIL %s %s %s: %r != %r" % (log, cat, metric, got, exp))
                        failures += 1
    print("compared %d numbers, worst relative difference %.3g" % (compared, worst))
    print("%d passed, %d failed" % (compared - failures, failures))
    return 1 if failures or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
