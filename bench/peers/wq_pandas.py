#!/usr/bin/env python3
"""The plain-Python peer: what a notebook does with a Work Queue / TaskVine
transaction log today (after cctools' vine_plot_txn_log: line.split(maxsplit=5),
json.loads on the resources, pandas for the table).

Job, the same as `tasklens summary`'s core: per task, category, measured
memory (MB) and wall time (s; measured wall_time, else DONE - RUNNING), then
per category the count and quantiles p0 p1 p5 p32 p50 p68 p95 p99 p100.

  wq_pandas.py append LOG   -- rows added with df.loc[len(df)] = ... (the
                               recipe seen in notebooks; quadratic)
  wq_pandas.py list LOG     -- rows collected in a list, one DataFrame
Prints "<tasks> tasks <categories> categories" and the table to stdout.
"""
import json
import sys

import pandas as pd

Q = [0, .01, .05, .32, .5, .68, .95, .99, 1]
COLS = ["manager", "task", "category", "memory_mb", "wall_s"]


def tasks(path):
    category, running = {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.split(maxsplit=5)
            if len(parts) < 5 or parts[2] != "TASK":
                continue
            key = (parts[1], parts[3])
            state = parts[4]
            rest = parts[5] if len(parts) > 5 else ""
            if state in ("WAITING", "READY"):
                category[key] = rest.split(maxsplit=1)[0] if rest else "default"
            elif state == "RUNNING":
                running[key] = int(parts[0])
            elif state == "DONE":
                measured = {}
                brace = rest.rfind(" {")
                if brace >= 0:
                    try:
                        measured = json.loads(rest[brace + 1:])
                    except ValueError:
                        measured = {}
                mem = measured.get("memory", [float("nan")])[0]
                if "wall_time" in measured:
                    wall = measured["wall_time"][0]
                elif key in running:
                    wall = (int(parts[0]) - running[key]) / 1e6
                else:
                    wall = float("nan")
                yield [parts[1], parts[3], category.get(key, "default"), mem, wall]


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "append":
        df = pd.DataFrame(columns=COLS)
        for row in tasks(path):
            df.loc[len(df)] = row
    else:
        df = pd.DataFrame(list(tasks(path)), columns=COLS)
    df[["memory_mb", "wall_s"]] = df[["memory_mb", "wall_s"]].astype(float)
    g = df.groupby("category")[["memory_mb", "wall_s"]]
    table = g.quantile(Q).unstack()
    table.insert(0, "count", g.size())
    print(len(df), "tasks", len(table), "categories")
    print(table.to_string())


if __name__ == "__main__":
    main()
