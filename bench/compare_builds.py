#!/usr/bin/env python3
"""Two builds of tasklens on every real input: `summary` (table and `--format json`),
`lines` (without its wall-clock `tasklens` self-metrics points),
`records -f ndjson` (without the `depends` key, new in issue 59), the
line protocol of `advise`, `plan` and `energy`, and the `report` page
(without the minute it was made) must be the same, exit status too. For restructurings that must not change behaviour
(issue 60).

usage: bench/compare_builds.py OLD_TASKLENS NEW_TASKLENS
"""
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("TL_SHARED_DIR", os.path.join(HERE, "..", "..", "shared"))
old, new = sys.argv[1], sys.argv[2]
files = sorted(f for f in glob.glob(os.path.join(SHARED, "*", "samples", "**", "*"), recursive=True)
               if os.path.isfile(f) and not f.endswith((".md", ".txt", ".sha256")) and "SOURCES" not in f)
files += [os.path.join(HERE, "..", "tests", "data", "wq", "demo-cctools-9.9.log")]
same = diff = 0
bad = []
def run(tl, *a):
    r = subprocess.run([tl, *a], capture_output=True, timeout=300)
    return r.returncode, r.stdout
for f in files:
    for cmd in (["summary", "-q", "--format", "json", f], ["summary", "-q", f], ["lines", "-q", "-o", "-", f], ["records", "-q", "-f", "ndjson", f],
                ["advise", "-q", "--format", "lp", f], ["energy", "-q", "--format", "lp", f],
                ["plan", "-q", "--node", "cores=64,mem=256GiB", "--format", "lp", f],
                ["report", "-q", "-o", "-", f]):
        a, b = run(old, *cmd), run(new, *cmd)
        x, y = a[1], b[1]
        if cmd[0] == "records":  # the new depends column, apart
            def strip(t):
                out = []
                for l in t.splitlines():
                    try:
                        d = json.loads(l); d.pop("depends", None); out.append(json.dumps(d, sort_keys=True))
                    except Exception:
                        out.append(l.decode(errors="replace"))
                return out
            x, y = strip(x), strip(y)
        if cmd[0] == "lines":  # the self-metrics points carry the wall clock
            x = [l for l in x.splitlines() if not l.startswith(b"tasklens,")]
            y = [l for l in y.splitlines() if not l.startswith(b"tasklens,")]
        if cmd[0] == "report":  # the page says when it was made, to the minute
            made = re.compile(rb", made \d{4}-\d\d-\d\d \d\d:\d\d UTC")
            x, y = made.sub(b"", x), made.sub(b"", y)
        if a[0] == b[0] and x == y:
            same += 1
        else:
            diff += 1
            bad.append((cmd[0], os.path.relpath(f, SHARED), a[0], b[0]))
print("inputs", len(files), "same", same, "differ", diff)
for b in bad[:30]:
    print(" ", b)
sys.exit(1 if diff else 0)
