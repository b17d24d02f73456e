#!/usr/bin/env python3
"""The `ndjson` sink (sinks/ndjson.c), the example of ARCHITECTURE.md's
"Adding a sink" (issue 41 point 2): a sink that does not speak line protocol,
added as one file plus its registry line, working end to end beside a
line-protocol sink in the same run.

1. `tasklens run` with a `file` sink and an `ndjson` sink over the bundled
   Work Queue log: every task point of the file sink has exactly one JSON
   object with the same category, task id, attempt, result and metric values;
   no other task objects.
2. With `windows: true`, every task_quantiles point of the file sink has one
   window object with the same tags, count and sum.
3. `run --help-config` lists the sink type with its options (from its
   table); `check` reaches it; a missing path is refused with file:line.

usage: example_sink.py TASKLENS DEMO_LOG
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

CONFIG = """\
sources:
  - type: file
    path: {log}
    follow: false
sinks:
  - type: file
    path: {lp}
  - type: ndjson
    path: {nd}
    windows: true
"""


def unescape(v):
    return v.replace("\\ ", " ").replace("\\,", ",").replace("\\=", "=")


def parse_lp(line):
    """(measurement, tags, fields, time) of one line of the file sink's output,
    enough of line protocol for tasklens's own points."""
    head, fields, ts = line.rsplit(" ", 2) if '"' not in line else split_quoted(line)
    parts = head.split(",")
    tags = dict(p.split("=", 1) for p in parts[1:])
    out = {}
    for kv in fields.split(","):
        k, v = kv.split("=", 1)
        if v.endswith("i"):
            out[k] = int(v[:-1])
        elif v.startswith('"'):
            out[k] = v.strip('"')
        elif v in ("true", "false"):
            out[k] = v == "true"
        else:
            out[k] = float(v)
    return parts[0], {k: unescape(v) for k, v in tags.items()}, out, int(ts)


def split_quoted(line):
    # a string field holds spaces: split the tags off at the first unescaped space
    i = 0
    while True:
        i = line.index(" ", i)
        if line[i - 1] != "\\":
            break
        i += 1
    head, rest = line[:i], line[i + 1:]
    fields, ts = rest.rsplit(" ", 1)
    return head, fields, ts


def main():
    tasklens, demo = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as tmp:
        lp, nd = os.path.join(tmp, "out.lp"), os.path.join(tmp, "out.ndjson")
        cfg = os.path.join(tmp, "run.yaml")
        with open(cfg, "w") as f:
            f.write(CONFIG.format(log=demo, lp=lp, nd=nd))
        r = subprocess.run([tasklens, "run", "-c", cfg, "-q"], capture_output=True, text=True,
                           timeout=120)
        check(r.returncode == 0, "run with a file and an ndjson sink exits 0 (%s)" % r.stderr.strip()[:200])
        points = [parse_lp(l) for l in open(lp).read().splitlines() if l]
        objs = [json.loads(l) for l in open(nd)]
        tasks = [p for p in points if p[0] == "task"]
        tobjs = [o for o in objs if o["kind"] == "task"]
        check(len(tasks) > 100 and len(tobjs) == len(tasks),
              "one task object per task point (%d objects, %d points)" % (len(tobjs), len(tasks)))
        by_key = {}
        for o in tobjs:
            by_key.setdefault((o.get("task_id"), o.get("attempt")), []).append(o)
        bad = []
        for _, tags, fields, _ in tasks:
            key = (fields.get("task_id"), fields.get("attempt"))
            got = by_key.get(key, [])
            if len(got) != 1:
                bad.append((key, "objects: %d" % len(got)))
                continue
            o = got[0]
            if o.get("category") != tags.get("category") or o.get("result") != tags.get("result"):
                bad.append((key, "tags"))
            for k, v in fields.items():
                if k in ("task_id", "attempt", "exit_code", "task_key") or isinstance(v, (bool, str)):
                    continue
                if k not in o or abs(o[k] - v) > 1e-9 * max(1.0, abs(v)):
                    bad.append((key, k, o.get(k), v))
        check(not bad, "every task object carries its point's tags and values (%s)" % bad[:3])

        wins = [p for p in points if p[0] == "task_quantiles"]
        wobjs = {(o.get("category"), o.get("source"), o["metric"], o["window"], o.get("scope"), o["end"]): o
                 for o in objs if o["kind"] == "window"}
        wbad = []
        for _, tags, fields, ts in wins:
            k = (tags.get("category"), tags.get("source"), tags["metric"], tags["window"], tags.get("scope"), ts)
            o = wobjs.get(k)
            if not o or o["count"] != fields["count"] or abs(o["sum"] - fields["sum"]) > 1e-9 * max(1, abs(fields["sum"])):
                wbad.append((k, o and o["count"], fields["count"]))
        check(wins and not wbad and len(wobjs) == len(wins),
              "one window object per task_quantiles point, same count and sum (%d, %s)" % (len(wins), wbad[:2]))

        h = subprocess.run([tasklens, "run", "--help-config"], capture_output=True, text=True).stdout
        check("sinks: - type: ndjson" in h and "windows" in h, "--help-config lists the ndjson sink and its options")
        c = subprocess.run([tasklens, "check", "-c", cfg], capture_output=True, text=True)
        check("sinks[1] ndjson" in c.stdout and "writable" in c.stdout, "check tries the ndjson sink")
        with open(cfg, "w") as f:
            f.write(CONFIG.format(log=demo, lp=lp, nd=nd).replace("    path: " + nd + "\n", ""))
        r = subprocess.run([tasklens, "run", "-c", cfg], capture_output=True, text=True)
        check(r.returncode == 2 and ":8:" in r.stderr and "sinks[1] (ndjson)" in r.stderr and "`path` is required" in r.stderr,
              "a sink without its path is refused with file:line: %s" % r.stderr.strip())
    return finish()


if __name__ == "__main__":
    sys.exit(main())
