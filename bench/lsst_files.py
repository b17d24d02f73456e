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

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "lsst_python.py")


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
        t2, out2 = best_of([sys.executable, PEER, root])
        print("peer (python json/yaml + numpy): %.3f s: %.0f files/s (%s)" % (t2, n / t2, out2.split(" | ")[0]))
        print("ratio: tasklens %.1fx faster" % (t2 / t))


if __name__ == "__main__":
    main()
