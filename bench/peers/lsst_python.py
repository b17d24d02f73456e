#!/usr/bin/env python3
"""The notebook peer for LSST task metadata: walk the tree, json.load or
yaml.load (C loader, constructors for the lsst.daf.base tags) each
*_metadata file, take the quantum values and compute per label the memory
and CPU-time quantiles with numpy.
  lsst_python.py ROOT"""
import json, os, sys, numpy as np
try:
    import yaml
    Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    def seq(loader, suffix, node):
        return loader.construct_sequence(node, deep=True)
    yaml.add_multi_constructor("tag:yaml.org,2002:python/tuple", lambda l, s, n: l.construct_sequence(n, deep=True), Loader=Loader)
    yaml.add_multi_constructor("lsst.daf.base.", seq, Loader=Loader)
except ImportError:
    yaml = None
def last(v):
    return v[-1] if isinstance(v, list) else v
def quantum(doc):
    if isinstance(doc, dict):
        if "attempts" in doc: doc = doc["attempts"][-1]
        secs = doc.get("metadata", doc)
        q = secs.get("quantum", {})
        if "arrays" in q: return {**q.get("scalars", {}), **{k: last(v) for k, v in q["arrays"].items()}}, secs
        return {k: last(v) for k, v in q.items()}, secs
    secs = {e[0]: e[2] for e in doc if len(e) >= 3}
    return {e[0]: last(e[2]) for e in secs.get("quantum", []) if len(e) >= 3}, secs
rows = {}
n = 0
for dp, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        if "_metadata" not in f: continue
        p = os.path.join(dp, f); n += 1
        try:
            doc = json.load(open(p)) if f.endswith(".json") else (yaml.load(open(p), Loader=Loader) if yaml else None)
            q, secs = quantum(doc)
            label = next(k for k in secs if k not in ("quantum", "job") and ":" not in k)
            end = q["endCpuTime"]
            rows.setdefault(label, []).append((q["endMaxResidentSetSize"] / 1024**3, end - q.get("startCpuTime", end)))
        except Exception:
            pass
for label, v in sorted(rows.items()):
    a = np.array(v)
    np.quantile(a[:, 0], [0, .01, .05, .32, .5, .68, .95, .99, 1]); np.quantile(a[:, 1], [0, .01, .05, .32, .5, .68, .95, .99, 1])
print(n, "files", sum(len(v) for v in rows.values()), "quanta", "yaml" if yaml else "no-yaml")
