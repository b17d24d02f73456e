#!/usr/bin/env python3
"""LSST metadata: files/s for `tasklens summary --lsst-summary`, and the peer.

Generates a datastore tree with tests/integration/lsst_summary.py's
generator (JSON TaskMetadata, provenance, PropertySet YAML in three styles,
plain YAML; 24 labels), then, warm cache, best of 3:
  - tasklens summary --lsst-summary --format csv DIR
  - the peer: what a notebook does today -- Python walks the tree, reads
    each file with json.load or yaml.load (C loader when available, with
    constructors for the lsst.daf.base tags), takes the quantum values and
    computes the same table with pandas-style numpy quantiles.

usage: lsst_files.py TASKLENS [N_FILES]
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
import lsst_summary as gen  # noqa: E402

PEER = r'''
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
'''


def best_of(cmd, k=3):
    best, out = None, ""
    for _ in range(k):
        t = time.time()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        dt = time.time() - t
        if best is None or dt < best:
            best, out = dt, r.stdout.strip().splitlines()[-1] + " | " + r.stderr.strip()[-160:]
    return best, out


def main():
    tasklens = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    with tempfile.TemporaryDirectory(prefix="tl-lsst-bench-") as tmp:
        root = os.path.join(tmp, "repo")
        gen.generate(root, n, random.Random(7))
        size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(root) for f in fs)
        subprocess.run(["cat"] + [os.path.join(dp, f) for dp, _, fs in os.walk(root) for f in fs][:1],
                       stdout=subprocess.DEVNULL)
        subprocess.run([tasklens, "summary", "--lsst-summary", "-q", root], stdout=subprocess.DEVNULL)  # warm
        t, out = best_of([tasklens, "summary", "--lsst-summary", "--format", "csv", root])
        print("tasklens: %d files (%.1f MB) in %.3f s: %.0f files/s, %.1f MB/s" % (n, size / 1e6, t, n / t, size / 1e6 / t))
        peer = os.path.join(tmp, "peer.py")
        with open(peer, "w") as f:
            f.write(PEER)
        t2, out2 = best_of([sys.executable, peer, root])
        print("peer (python json/yaml + numpy): %.3f s: %.0f files/s (%s)" % (t2, n / t2, out2.split(" | ")[0]))
        print("ratio: tasklens %.1fx faster" % (t2 / t))


if __name__ == "__main__":
    main()
