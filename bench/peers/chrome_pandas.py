#!/usr/bin/env python3
"""The plain-Python peer for Chrome traces: json.load the file (object or
array form), keep complete events (ph X, with dur), and per event name the
count and duration quantiles p0 p1 p5 p32 p50 p68 p95 p99 p100 with pandas.
  chrome_pandas.py TRACE.json"""
import json
import sys

import pandas as pd

doc = json.load(open(sys.argv[1]))
events = doc["traceEvents"] if isinstance(doc, dict) else doc
rows = [(e.get("name", ""), e["dur"]) for e in events if isinstance(e, dict) and e.get("ph") == "X" and "dur" in e]
df = pd.DataFrame(rows, columns=["name", "dur_us"])
g = df.groupby("name")["dur_us"]
table = g.quantile([0, .01, .05, .32, .5, .68, .95, .99, 1]).unstack()
table.insert(0, "count", g.size())
print(len(df), "complete events", len(table), "names")
