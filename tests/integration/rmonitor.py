#!/usr/bin/env python3
"""The `rmonitor` parser (issue 33 point 3) on summaries written by the real
resource_monitor of Debian's coop-computing-tools, monitoring real commands:

1. resource_monitor -O around: a sleep, a Python that holds 150 MB for 3 s
   (sampled every second), a shell that exits 3, a Python killed for going
   over a 50 MB limit (-L), and a shell killed by a signal. Every task point
   of `tasklens lines` equals Python's own reading of the same JSON: each
   documented field in canonical units (MB = 2^20 bytes, s), the end as the
   time, the result (SUCCESS / RESOURCE_EXHAUSTION / SIGNAL), the exit code,
   the limit, the category (the program's name), the task key (file name).
2. Makeflow --monitor: the directory makeflow writes for a workflow made of
   `advise --emit makeflow` blocks; every summary carries its rule's
   category, and each category's recommendation came back as makeflow saw it.
3. The summaries concatenated on stdin read as the files do; a cut summary is
   `truncated` and a damaged one `bad_document`, with file:line, and the
   others still count. `formats` lists the parser with its options.

usage: rmonitor.py TASKLENS REPO_DIR
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, resource_monitor  # noqa: E402

MB = 1048576.0
FIELDS = {  # resource_monitor field -> (task point field, factor to canonical)
    "wall_time": ("wall_time_s", 1), "cpu_time": ("cpu_time_s", 1),
    "memory": ("max_rss_bytes", MB), "virtual_memory": ("virtual_memory_bytes", MB),
    "swap_memory": ("swap_bytes", MB), "disk": ("disk_bytes", MB),
    "bytes_read": ("bytes_read", MB), "bytes_written": ("bytes_written", MB),
    "bytes_received": ("bytes_received", MB), "bytes_sent": ("bytes_sent", MB),
    "bandwidth": ("bandwidth_mbps", 1), "cores": ("cores", 1), "cores_avg": ("cores_avg", 1),
    "gpus": ("gpus", 1), "machine_cpus": ("machine_cpus", 1),
    "context_switches": ("context_switches", 1),
    "max_concurrent_processes": ("max_concurrent_processes", 1),
    "total_processes": ("total_processes", 1), "total_files": ("total_files", 1),
}


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def read_summary(path):
    with open(path) as f:
        return json.loads(f.read().replace("\\'", "'"))  # cctools writes JX's \' in commands


def expected(path):
    d = read_summary(path)
    f = {}
    for k, (name, factor) in FIELDS.items():
        if k in d:
            v = d[k][0] * factor
            f[name] = round(v) if factor == MB else v
    et = d["exit_type"]
    result = "RESOURCE_EXHAUSTION" if et.startswith("limit") else "SIGNAL" if et == "signal" else "SUCCESS"
    if "limits_exceeded" in d and "memory" in d["limits_exceeded"]:
        f["limit_memory_bytes"] = d["limits_exceeded"]["memory"][0] * MB
    f["exit_code"] = d["exit_status"]
    cat = d.get("category") or os.path.basename(d["command"].split()[0])
    key = os.path.basename(path)[:-len(".summary")]
    return cat, key, result, f, round(d["end"][0] * 1e6) * 1000  # a microsecond clock


def task_points(tasklens, inputs, stdin=None):
    out = run([tasklens, "lines", "-q"] + inputs, input=stdin).stdout
    pts = []
    for l in out.splitlines():
        if not l.startswith("task,"):
            continue
        head, fields, ts = re.match(r"(.*?[^\\]) (\S+) (\d+)$", l).groups()
        tags = dict(t.split("=", 1) for t in re.split(r"(?<!\\),", head)[1:])
        f = {}
        for k, v in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,]+)', fields):
            f[k] = v.strip('"') if v.startswith('"') else v if v in ("true", "false") else float(v.rstrip("i"))
        pts.append((tags, f, int(ts)))
    return pts


def same(a, b):
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def monitored(tmp):
    runs = [("sleep", [], ["sleep", "0.3"]),
            ("hold", ["-i", "1"], ["/usr/bin/python3", "-c",
                                   "x = bytearray(150 * 1024 * 1024); import time; time.sleep(3)"]),
            ("exit3", [], ["sh", "-c", "exit 3"]),
            ("limit", ["-i", "1", "-L", "memory: 50"],
             ["/usr/bin/python3", "-c", "x = bytearray(150 * 1024 * 1024); import time; time.sleep(3)"]),
            ("signal", [], ["sh", "-c", "kill -9 $$"])]
    for name, opts, cmd in runs:
        resource_monitor(os.path.join(tmp, name), cmd, opts)  # bounded, tried again (checks.py)
    return sorted(glob.glob(os.path.join(tmp, "*.summary")))


def compare(files, pts, what, keyed=True):
    """Task points against the summaries, matched by file name (keyed), or
    by end time when the input had no name (stdin)."""
    bad = []
    by_key = {(f.get("task_key") if keyed else ts // 1000): (tags, f, ts) for tags, f, ts in pts}
    for path in files:
        cat, key, result, want, end = expected(path)
        k = key if keyed else end // 1000
        if k not in by_key:
            bad.append((key, "missing"))
            continue
        tags, got, ts = by_key[k]
        # the point's time is the end to the microsecond (line protocol adds a
        # few ns to keep points of one instant apart)
        if tags["category"] != cat.replace(" ", "\\ ") or tags["result"] != result or \
                not 0 <= ts - end < 1000:
            bad.append((key, tags["category"], tags["result"], ts, end))
        for k, v in want.items():
            if k not in got or not same(got[k], v):
                bad.append((key, k, got.get(k), v))
    check(len(pts) == len(files) and not bad, "%s: %d task points = Python's reading of the "
          "summaries, field for field (differ: %s)" % (what, len(files), bad[:3]))


def records(tasklens, files, tmp):
    """`tasklens records` rows (NDJSON) against Python's reading of the summaries:
    every value, the start and end times, the key; absent stays absent."""
    rows = [json.loads(l) for l in run([tasklens, "records", "-q", "-f", "ndjson", tmp]).stdout.splitlines()]
    by_key, bad = {r.get("task_key"): r for r in rows}, []
    for path in files:
        cat, key, result, want, end = expected(path)
        want = {("bandwidth_bit_per_s" if k == "bandwidth_mbps" else k): v * (1e6 if k == "bandwidth_mbps" else 1)
                for k, v in want.items()}
        start = round(read_summary(path)["start"][0] * 1e6) / 1e6
        r = by_key.get(key, {})
        metrics = {k: v for k, v in r.items() if k not in (
            "source", "workflow", "category", "task_id", "task_key", "name", "tag", "attempt", "final", "result",
            "host", "worker", "start", "end", "start_epoch_s", "end_epoch_s", "data_id")}
        if r.get("category") != cat or r.get("result") != result or \
                abs(r.get("end_epoch_s", 0) - end / 1e9) > 1e-6 or abs(r.get("start_epoch_s", 0) - start) > 1e-6:
            bad.append((key, r.get("category"), r.get("result"), r.get("start_epoch_s"), start))
        if set(metrics) != set(want) or any(not same(metrics[k], v) for k, v in want.items()):
            bad.append((key, sorted(set(metrics) ^ set(want)), [(k, metrics.get(k), v) for k, v in want.items()
                                                                  if not same(metrics.get(k, -1), v)][:3]))
    check(len(rows) == len(files) and not bad, "records: one row per summary, every column = Python's "
          "reading of it, nothing more (differ: %s)" % bad[:3])


def main():
    tasklens, repo = sys.argv[1:3]
    if not shutil.which("resource_monitor"):
        print("SKIP: resource_monitor not installed (coop-computing-tools)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        files = monitored(tmp)
        check(len(files) == 5, "resource_monitor wrote 5 summaries (%d)" % len(files))
        kinds = {expected(f)[2] for f in files}
        check(kinds == {"SUCCESS", "RESOURCE_EXHAUSTION", "SIGNAL"},
              "normal, limit and signal endings among them (%s)" % sorted(kinds))
        hold = [expected(f)[3] for f in files if f.endswith("hold.summary")]
        check(hold and hold[0]["max_rss_bytes"] >= 150 * MB,
              "the held 150 MB was measured (%.0f MB)" % (hold[0]["max_rss_bytes"] / MB if hold else 0))
        compare(files, task_points(tasklens, [tmp]), "a directory of summaries")
        records(tasklens, files, tmp)
        cat = "".join(open(f).read() for f in files)
        compare(files, task_points(tasklens, ["--format-in", "rmonitor", "-"], stdin=cat),
                "the same concatenated on stdin", keyed=False)

        bad_dir = os.path.join(tmp, "bad")
        os.mkdir(bad_dir)
        text = open(files[0]).read()
        for i, f in enumerate(files[1:3]):
            shutil.copy(f, bad_dir)
        with open(os.path.join(bad_dir, "cut.summary"), "w") as f:
            f.write(text[: len(text) // 2])
        with open(os.path.join(bad_dir, "damaged.summary"), "w") as f:
            f.write(text.replace('"wall_time"', '"wall_time" oops', 1))
        r = run([tasklens, "summary", "--format", "json", "--format-in", "rmonitor", bad_dir])
        s = json.loads(r.stdout)
        by = s["inputs"][0]["rejected_by"]
        check(by.get("truncated") == 1 and by.get("bad_document") == 1 and
              re.search(r"cut\.summary:1: .*", r.stderr) and re.search(r"damaged\.summary:1: ", r.stderr),
              "a cut summary is truncated, a damaged one bad_document, with file:line (%s)" % by)
        check(sum(g["tasks"] for g in s["groups"]) == 2, "the two good summaries still count")

        mf_dir = os.path.join(tmp, "mf")
        os.mkdir(mf_dir)
        emitted = run([tasklens, "advise", "--emit", "makeflow", os.path.join(repo, "tests", "data",
                       "wq", "demo-cctools-9.9.log")], check=True).stdout
        blocks, names = [], []
        for k, block in enumerate(emitted.split("\n\n")):
            blocks.append(block)
            m = re.search(r"^CATEGORY=(.*)$", block, re.M)
            if m:
                names.append(m.group(1))
                blocks.append("out%d.txt:\n\tsleep 0.1; echo %d > out%d.txt" % (k, k, k))
        with open(os.path.join(mf_dir, "Makeflow"), "w") as f:
            f.write("\n\n".join(blocks) + "\n")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        r = run(["makeflow", "-T", "local", "--monitor=mon", "Makeflow"], cwd=mf_dir, env=env, timeout=120)
        mon = sorted(glob.glob(os.path.join(mf_dir, "mon", "*.summary")))
        seen = sorted(read_summary(f).get("category") for f in mon)
        check(r.returncode == 0 and seen == sorted(names),
              "makeflow --monitor: each rule's summary carries the category its emitted block "
              "named (%s; exit %d)" % (seen, r.returncode))
        pts = task_points(tasklens, [os.path.join(mf_dir, "mon")])
        check(sorted(t["category"].replace("\\ ", " ") for t, _, _ in pts) == sorted(names),
              "tasklens reads Makeflow's monitor directory, one task per rule, by category")

        r = run([tasklens, "formats"])
        check("rmonitor" in r.stdout and "rmonitor.max_document" in r.stdout
              and "rmonitor.peak_times" in r.stdout, "formats lists rmonitor with its options")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
