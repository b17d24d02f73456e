#!/usr/bin/env python3
"""tasklens records, read the way a notebook reads it, against independent parses.

For every format with real inputs (the bundled Work Queue log and Chrome
trace, the LSST fixture tree; ../shared's Work Queue / TaskVine logs,
Chrome traces, LSST provenance, Spark event log and DASF traces when that
folder is beside the repository), `tasklens records` is read in one call
each: pd.read_csv (CSV), pl.read_csv (TSV), pd.read_json(lines=True)
(NDJSON). The three must agree, carry numeric dtypes in every numeric
column, and every row must match this file's own parse of the input
(its own few lines per format, not tasklens's code): identity, result,
exit code, start and end, and every metric value, with absent values absent
(never 0) and no value tasklens shows that the independent parse lacks.

pandas and polars come from PyPI into a cached venv
(~/.cache/tasklens/notebook-venv); the test re-runs itself under it.

usage: records.py TASKLENS SOURCE_DIR SHARED_DIR
"""
import collections
import datetime
import decimal
import glob
import gzip
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import notebook_venv  # noqa: E402

if __name__ == "__main__" and (rc := notebook_venv.rerun_inside()) is not None:
    sys.exit(rc)

import numpy as np  # noqa: E402  (the venv's)
import pandas as pd  # noqa: E402
import polars as pl  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

TASKLENS, SRC, SHARED = sys.argv[1:4]
MB = 2.0 ** 20

IDENTITY = ["source", "workflow", "category", "task_id", "task_key", "name", "tag", "depends", "attempt", "final", "result",
            "exit_code", "host", "worker", "start", "end", "start_epoch_s", "end_epoch_s", "data_id"]
NUMERIC_IDS = ["task_id", "attempt", "exit_code", "start_epoch_s", "end_epoch_s"]


def records(path, fmt, *extra):
    r = subprocess.run([TASKLENS, "records", "--format", fmt, *extra, path], capture_output=True)
    if r.returncode:
        check(False, "records --format %s %s: exit %d %s" % (
            fmt, os.path.basename(path), r.returncode, r.stderr.decode()[-300:]))
    return r.stdout


def read_all(path):
    """The table, read three ways in one call each; the pandas CSV frame."""
    import io
    # round_trip: pandas' default CSV float parser is 1 ulp off at times
    csv = pd.read_csv(io.BytesIO(records(path, "csv")), float_precision="round_trip")
    tsv = pl.read_csv(io.BytesIO(records(path, "tsv")), separator="\t", infer_schema_length=None)
    # precise_float: pandas' default JSON float parser is 1 ulp off at times
    nd = pd.read_json(io.BytesIO(records(path, "ndjson")), lines=True, precise_float=True)
    name = os.path.basename(path)
    check(list(csv.columns) == tsv.columns, "%s: pandas and polars see the same columns" % name)
    metrics = [c for c in csv.columns if c not in IDENTITY]
    numeric = [c for c in NUMERIC_IDS + metrics if csv[c].notna().any()]
    bad = [c for c in numeric if not pd.api.types.is_numeric_dtype(csv[c])]
    bad += [c for c in numeric if not tsv[c].dtype.is_numeric()]
    check(not bad, "%s: every numeric column read as numbers by pandas and polars (not: %s)" % (name, bad))
    same = len(csv) == len(tsv) == len(nd)
    for c in numeric:
        a = csv[c].to_numpy(dtype=float)
        b = tsv[c].to_numpy().astype(float)
        n = nd[c].to_numpy(dtype=float) if c in nd else np.full(len(nd), np.nan)
        same = same and np.array_equal(a, b, equal_nan=True) and np.array_equal(a, n, equal_nan=True)
    check(same, "%s: CSV (pandas), TSV (polars) and NDJSON (pandas) hold the same %d rows" % (name, len(csv)))
    return csv


def ns_of_iso(s):
    """ISO 8601 UTC from the table to int ns, exactly (no float)."""
    if not isinstance(s, str):
        return None
    base, _, frac = s.rstrip("Z").partition(".")
    t = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 10 ** 9 + int((frac + "000000000")[:9])


def compare(name, df, want, key_of, exact_ids=("category", "result", "exit_code")):
    """Every row of df against want (key -> {column: value}); times in ns."""
    rows = {}
    for row in df.to_dict("records"):
        rows[key_of(row)] = row
    check(set(rows) == set(want) and len(rows) == len(df),
          "%s: %d rows, the independent parse %d (missing %s, extra %s)" % (
              name, len(df), len(want), list(set(want) - set(rows))[:3], list(set(rows) - set(want))[:3]))
    metrics = [c for c in df.columns if c not in IDENTITY]
    wrong = []
    for k, w in want.items():
        got = rows.get(k)
        if got is None:
            continue
        for c in exact_ids:
            g = got.get(c)
            g = None if isinstance(g, float) and math.isnan(g) else g
            if c in w and (g if g is None else type(w[c])(g)) != w[c]:
                wrong.append((k, c, g, w[c]))
        for c, t in (("start", "start_ns"), ("end", "end_ns")):
            if ns_of_iso(got[c]) != w.get(t):
                wrong.append((k, c, got[c], w.get(t)))
            e = got[c + "_epoch_s"]
            if (w.get(t) is None) != (isinstance(e, float) and math.isnan(e)) or \
                    w.get(t) is not None and abs(e - w[t] / 1e9) > 1e-6:
                wrong.append((k, c + "_epoch_s", e, w.get(t)))
        for c in metrics:
            g, x = got[c], w.get(c)
            if isinstance(g, float) and math.isnan(g):
                if x is not None:
                    wrong.append((k, c, "empty", x))
            elif x is None or abs(g - x) > 1e-9 * max(1.0, abs(x)):
                wrong.append((k, c, g, x))
    check(not wrong, "%s: every identity, time and metric value as the independent parse (%d wrong: %s)"
          % (name, len(wrong), wrong[:4]))


# ------------------------------------------------------------ Work Queue

CCTOOLS = {  # cctools key -> (column, factor from its unit)
    "wall_time": "wall_time_s", "cpu_time": "cpu_time_s", "memory": "max_rss_bytes",
    "virtual_memory": "virtual_memory_bytes", "swap_memory": "swap_bytes", "disk": "disk_bytes",
    "bytes_read": "bytes_read", "bytes_written": "bytes_written", "bytes_sent": "bytes_sent",
    "bytes_received": "bytes_received", "bandwidth": "bandwidth_bit_per_s", "cores": "cores",
    "cores_avg": "cores_avg", "gpus": "gpus", "context_switches": "context_switches",
    "total_processes": "total_processes", "max_concurrent_processes": "max_concurrent_processes",
    "total_files": "total_files", "machine_cpus": "machine_cpus",
    "wq_input_time": "input_time_s", "wq_output_time": "output_time_s",
    "wq_input_size": "input_bytes", "wq_output_size": "output_bytes",
    "vine_input_time": "input_time_s", "vine_output_time": "output_time_s",
    "vine_input_size": "input_bytes", "vine_output_size": "output_bytes",
    "time_input_mgr": "input_time_s", "time_output_mgr": "output_time_s",
    "size_input_mgr": "input_bytes", "size_output_mgr": "output_bytes",
}
LIMITS = {"cores": "limit_cores", "memory": "limit_memory_bytes", "disk": "limit_disk_bytes",
          "wall_time": "limit_wall_time_s"}
UNIT = {"MB": MB, "GB": 2.0 ** 30, "KB": 1024.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "Mbps": 1e6}


def cctools(obj):
    out = {}
    for k, v in obj.items():
        if k in CCTOOLS and isinstance(v, list) and len(v) == 2 and isinstance(v[0], (int, float)):
            out[CCTOOLS[k]] = v[0] * UNIT.get(v[1], 1.0)
    return out


def box(obj, prefix):
    """A RUNNING/WAITING allocation {"cores":[1,"cores"],"memory":[1000,"MB"]} as columns."""
    names = {"cores": "cores", "memory": "memory_bytes", "disk": "disk_bytes", "gpus": "gpus"}
    return {prefix + names[k]: v[0] * UNIT.get(v[1], 1.0) for k, v in obj.items()
            if k in names and isinstance(v, list) and v[0] >= 0}


def wq_rows(path):
    """(pid, task id, end µs) -> expected columns, for every final attempt (DONE);
    and how many attempts went back to the queue."""
    tasks, want, requeued = {}, {}, 0
    for line in open(path, errors="replace"):
        w = line.split()
        if len(w) < 5 or w[0].startswith("#") or w[2] != "TASK":
            continue
        ts, pid, tid, state = int(w[0]), w[1], int(w[3]), w[4]
        t = tasks.setdefault((pid, tid), {})
        objs = [json.loads(x) for x in w[5:] if x.startswith("{")]
        if state in ("WAITING", "READY"):
            if "running" in t and "done" not in t:
                requeued += 1
            mode = [i for i in range(5, len(w)) if w[i] in ("FIRST_RESOURCES", "MAX_RESOURCES")]
            if mode:
                t.update(cat=" ".join(w[5:mode[0]]), req=box(objs[-1], "req_") if objs else {})
            t.update(waiting=ts)
            for k in ("running", "wret", "retrieved", "measured", "alloc"):
                t.pop(k, None)
        elif state == "RUNNING":
            t["running"] = ts
            t["alloc"] = box(objs[-1], "alloc_") if objs else {}
        elif state == "WAITING_RETRIEVAL":
            t["wret"] = ts
        elif state == "RETRIEVED":
            t["retrieved"] = ts
            t["measured"] = objs[-1] if objs else {}
        elif state in ("DONE", "CANCELED") and "done" not in t:
            t["done"] = True
            m = objs[-1] if objs and objs[-1] else t.get("measured", {})
            row = {"category": t.get("cat"), "result": w[5] if state == "DONE" else state}
            limits = objs[-2] if len(objs) == 2 else {}
            row.update({LIMITS[k]: v[0] * UNIT.get(v[1], 1.0) for k, v in limits.items() if k in LIMITS})
            if state == "DONE" and len(w) > 6 and w[6].lstrip("-").isdigit():
                row["exit_code"] = int(w[6])
            row.update(cctools(m))
            row.update(t.get("req", {}))
            row.update(t.get("alloc", {}))
            # a TaskVine library function call: allocated nothing of its own, monitored by
            # nothing -- the zeros written as its measurement are no measurement (absent)
            if all(row.get(k) == 0 for k in ("alloc_cores", "alloc_memory_bytes", "alloc_disk_bytes")):
                for k in ("cores", "max_rss_bytes", "disk_bytes", "virtual_memory_bytes", "cores_avg", "gpus"):
                    if row.get(k) == 0:
                        del row[k]
            ws, we = (m.get(k, [0])[0] for k in ("time_worker_start", "time_worker_end"))
            if "wall_time_s" not in row and ws > 0 and we >= ws:
                row["wall_time_s"] = we - ws
            if "waiting" in t and "running" in t:
                row["queue_time_s"] = (t["running"] - t["waiting"]) / 1e6
            end = t.get("wret", t.get("retrieved"))
            if "running" in t and end:
                row["exec_time_s"] = (end - t["running"]) / 1e6
                row.setdefault("wall_time_s", row["exec_time_s"])
            if "wret" in t and "retrieved" in t:
                row["retrieval_time_s"] = (t["retrieved"] - t["wret"]) / 1e6
            row["start_ns"] = t["running"] * 1000 if "running" in t else None
            end_us = t.get("retrieved", ts)
            row["end_ns"] = end_us * 1000
            want[(pid, tid, end_us)] = row
    return want, requeued


def work_queue(paths):
    for path in paths:
        name = os.path.basename(path)
        df = read_all(path)
        want, requeued = wq_rows(path)
        final = df[df["final"]]
        compare(name, final, want,
                lambda r: (r["workflow"].split("@")[0], int(r["task_id"]), ns_of_iso(r["end"]) // 1000),
                exact_ids=("category", "result", "exit_code"))
        check((~df["final"]).sum() == requeued, "%s: %d attempts sent back to the queue are rows too "
              "(final false; independent: %d)" % (name, (~df["final"]).sum(), requeued))


# ------------------------------------------------------------ Chrome traces

def chrome_ns(v):
    """A ts or dur in µs (number or numeric string) to int ns, half up; None if not one."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str, decimal.Decimal)):
        return None
    try:
        d = decimal.Decimal(v) if not isinstance(v, float) else decimal.Decimal(repr(v))
    except decimal.InvalidOperation:
        return None
    return int((d * 1000).to_integral_value(rounding=decimal.ROUND_HALF_UP)) if d.is_finite() else None


def chrome_rows(path):
    """(name, start ns, end ns) of every complete slice: X with a dur, B/E pairs per thread."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        text = f.read().decode("utf-8")
    try:
        d = json.loads(text, parse_float=decimal.Decimal)
        events = d["traceEvents"] if isinstance(d, dict) else d
    except json.JSONDecodeError:  # the array form may end without its "]"
        m = re.search(r'"traceEvents"\s*:\s*\[', text)
        dec, i, events = json.JSONDecoder(parse_float=decimal.Decimal), m.end() if m else text.index("[") + 1, []
        while True:
            while i < len(text) and text[i] in " \t\r\n,":
                i += 1
            if i >= len(text) or text[i] == "]":
                break
            try:
                v, i = dec.raw_decode(text, i)
            except json.JSONDecodeError:
                break
            events.append(v)
    out, stacks = [], collections.defaultdict(list)
    for e in events:
        if not isinstance(e, dict) or not isinstance(e.get("ph"), str) or not e["ph"]:
            continue
        name = e["name"] if isinstance(e.get("name"), str) else "(no name)"
        ts, ph = chrome_ns(e.get("ts")), e["ph"][0]
        thread = (repr(e.get("pid")), repr(e.get("tid", e.get("pid"))))
        if ph == "X" and ts is not None and "dur" in e:
            dur = chrome_ns(e["dur"])
            if dur is not None and dur >= 0:
                out.append((name, ts, ts + dur))
        elif ph == "B" and ts is not None:
            stacks[thread].append((name, ts))
        elif ph == "E" and stacks[thread] and ts is not None:
            name, b = stacks[thread][-1]
            if ts >= b:
                stacks[thread].pop()
                out.append((name, b, ts))
            else:
                stacks[thread].pop()
    return out


def chrome(paths):
    for path in paths:
        name = os.path.basename(path)
        df = read_all(path)
        got = collections.Counter()
        extra = [c for c in df.columns if c not in IDENTITY and c != "wall_time_s" and df[c].notna().any()]
        for r in df.to_dict("records"):
            s, e = ns_of_iso(r["start"]), ns_of_iso(r["end"])
            end_s = r["end_epoch_s"]
            if e is None and s == 0 and r["wall_time_s"] == 0:
                e = end_s = 0  # a record's end time 0 means unknown: a slice ending at 0 on the trace's clock
            ok = abs(r["wall_time_s"] - (e - s) / 1e9) <= 1e-9 * max(1, r["wall_time_s"]) and \
                abs(end_s - e / 1e9) < 1e-6 and abs(r["start_epoch_s"] - s / 1e9) < 1e-6
            got[(r["category"], s, e, ok)] += 1
        want = collections.Counter((n, s, e, True) for n, s, e in chrome_rows(path))
        check(got == want and not extra, "%s: %d slices, each its name, start, end and duration as the "
              "independent parse (%d; differing %s; other columns %s)" % (
                  name, len(df), sum(want.values()), list((got - want) + (want - got))[:3], extra))


# ------------------------------------------------------------ Spark

def spark_rows(path):
    stage, want = {}, {}
    for line in open(path):
        e = json.loads(line)
        if e["Event"] == "SparkListenerStageSubmitted":
            stage[e["Stage Info"]["Stage ID"]] = e["Stage Info"]["Stage Name"]
        elif e["Event"] == "SparkListenerTaskEnd":
            i, m = e["Task Info"], e.get("Task Metrics") or {}
            row = {"category": stage[e["Stage ID"]], "result": e["Task End Reason"]["Reason"],
                   "host": i["Host"], "worker": i["Executor ID"],
                   "start_ns": i["Launch Time"] * 10 ** 6, "end_ns": i["Finish Time"] * 10 ** 6}
            sr, sw = m.get("Shuffle Read Metrics", {}), m.get("Shuffle Write Metrics", {})
            for col, v in (("wall_time_s", m.get("Executor Run Time", None)),
                           ("cpu_time_s", m.get("Executor CPU Time")), ("output_bytes", m.get("Result Size")),
                           ("bytes_read", m.get("Input Metrics", {}).get("Bytes Read")),
                           ("bytes_written", m.get("Output Metrics", {}).get("Bytes Written")),
                           ("bytes_sent", sw.get("Shuffle Bytes Written")),
                           ("jvm_gc_time_s", m.get("JVM GC Time")),
                           ("peak_execution_memory_bytes", m.get("Peak Execution Memory"))):
                if v is not None:
                    row[col] = v / {"wall_time_s": 1e3, "cpu_time_s": 1e9, "jvm_gc_time_s": 1e3}.get(col, 1)
            if "Remote Bytes Read" in sr and "Local Bytes Read" in sr:
                row["bytes_received"] = sr["Remote Bytes Read"] + sr["Local Bytes Read"]
            want[(i["Task ID"], i["Attempt"] + 1)] = row
    return want


def spark(dirs):
    for d in dirs:
        path = os.path.join(d, sorted(os.listdir(d))[0]) if os.path.isdir(d) else d
        df = read_all(path)
        compare(os.path.basename(path), df, spark_rows(path), lambda r: (int(r["task_id"]), int(r["attempt"])),
                exact_ids=("category", "result", "host", "worker"))


# ------------------------------------------------------------ DASF

def dasf(paths):
    import msgpack
    for path in paths:
        name = os.path.basename(path)
        data, off, evs = open(path, "rb").read(), 0, []
        while off < len(data):
            n = struct.unpack(">Q", data[off:off + 8])[0]
            evs.append(msgpack.unpackb(data[off + 8:off + 8 + n], raw=False, strict_map_key=False))
            off += 8 + n
        rm = os.path.join(os.path.dirname(path), name.replace("TracePlugin", "ResourceMonitor"))
        first = next(e for e in dasf_events(rm) if e["name"] == "Resource Usage")
        offset = first["args"]["time"] - first["timestamp"]
        want = sorted((e["args"]["name"], dasf_key(e["args"]["key"]), (e["timestamp"] + offset) * 1e9,
                       e["duration"], e["args"].get("size")) for e in evs if e["name"] == "Compute")
        df = read_all(path)
        got = sorted((r["category"], r["task_key"], ns_of_iso(r["end"]), r["wall_time_s"],
                      None if math.isnan(r["output_bytes"]) else r["output_bytes"], ns_of_iso(r["start"]))
                     for r in df.to_dict("records"))
        bad = [(g, w) for g, w in zip(got, want) if g[:2] != w[:2] or abs(g[2] - w[2]) > 1e3 or
               abs(g[3] - w[3]) > 1e-12 or g[4] != w[4] or abs(g[2] - g[5] - w[3] * 1e9) > 1e3]
        check(len(got) == len(want) and not bad, "%s: %d Compute events, each its name, Dask key, end "
              "(epoch by the ResourceMonitor file), start, duration and size as read here (%d; wrong %s)"
              % (name, len(got), len(want), bad[:2]))


def dasf_events(path):
    import msgpack
    data, off = open(path, "rb").read(), 0
    while off < len(data):
        n = struct.unpack(">Q", data[off:off + 8])[0]
        yield msgpack.unpackb(data[off + 8:off + 8 + n], raw=False, strict_map_key=False)
        off += 8 + n


def dasf_key(k):
    return k if isinstance(k, str) else ", ".join(str(x) for x in k)


# ------------------------------------------------------------ LSST (JSON metadata)

def lsst_time(s):
    t = datetime.datetime.fromisoformat(s)
    return int(t.replace(tzinfo=t.tzinfo or datetime.timezone.utc).timestamp()) * 10 ** 9 + t.microsecond * 1000


def lsst_quantum(node):
    """The `quantum` arrays of a task-metadata JSON (the last attempt of a provenance file)."""
    if "attempts" in node:
        node = node["attempts"][-1]
    return {k: v[-1] for k, v in node["metadata"]["quantum"]["arrays"].items() if v}


def lsst_yaml_quantum(path):
    """The quantum's (phase)(Key) entries of a PropertySet YAML, read with a
    regex (both shapes: 4-element PropertyList lists and old 3-element
    tuples); a repeated value's last; ru_maxrss in KiB before __version__ 1."""
    text, q = open(path).read(), {}
    for key, v in re.findall(r"\[((?:prep|init|start|end)\w+), \w+, (\[[^\]]*\]|'[^']*'|[^,\]]+)", text):
        v = v.strip()
        if v.startswith("["):
            v = v[1:-1].split(",")[-1].strip()
        q[key] = v.strip("'") if key.endswith("Utc") else float(v)
    if "__version__" not in text:
        q = {k: v * 1024 if k.endswith("MaxResidentSetSize") else v for k, v in q.items()}
    return q


def lsst_row(path):
    q = lsst_yaml_quantum(path) if path.endswith(".yaml") else lsst_quantum(json.load(open(path)))
    row = {"start_ns": lsst_time(q["prepUtc"]), "end_ns": lsst_time(q["endUtc"]),
           # as LSST's ResourceUsageSummary computes it: ns x 1e-9 (0.022 s reads 0.022000000000000002)
           "wall_time_s": float(lsst_time(q["endUtc"]) - lsst_time(q["prepUtc"])) * 1e-9,
           "max_rss_bytes": q["endMaxResidentSetSize"]}
    worked = "startCpuTime" in q or "initCpuTime" in q
    row["result"] = "SUCCESS" if worked else "NO_WORK"
    row["cpu_time_s"] = q["endCpuTime"] - q["startCpuTime"] if worked else 0.0
    row["init_time_s"] = q["startCpuTime"] - q["initCpuTime"] if worked else 0.0
    deltas = {"UserTime": "user_time_s", "SystemTime": "system_time_s",
              "VoluntaryContextSwitches": "context_switches",
              "InvoluntaryContextSwitches": "involuntary_context_switches",
              "MinorPageFaults": "minor_page_faults", "MajorPageFaults": "major_page_faults",
              "BlockInputs": "block_inputs", "BlockOutputs": "block_outputs"}
    for k, col in deltas.items():
        if "end" + k in q and "start" + k in q:
            row[col] = q["end" + k] - q["start" + k]
    return row


def lsst(paths):
    for path in paths:
        df = read_all(path)
        name = os.path.basename(path)
        compare(name, df, {0: lsst_row(path)}, lambda r: 0, exact_ids=("result",))


def names_and_tags(traces, bench):
    """Issue 58: Nextflow's name and tag, Snakemake's wildcards, kept as
    records' columns: each row's name/tag = the trace's own cells (read here
    with csv), and each benchmark row's tag = its file's stem."""
    import csv as csvmod
    if not traces:
        print("SKIP part: no Nextflow traces in ../shared: their names and tags are not checked")
    bad, n = [], 0
    for path in traces:
        with open(path, newline="") as f:
            rows = list(csvmod.DictReader(f, delimiter="\t"))
        if not rows or "name" not in rows[0]:
            continue
        got = [json.loads(l) for l in records(path, "ndjson", "-q").decode().splitlines()]
        want = [(r["name"], r.get("tag") if r.get("tag") not in (None, "", "-") else None) for r in rows
                if r.get("status") not in ("NEW", "SUBMITTED", "RUNNING")]
        have = [(g.get("name"), g.get("tag")) for g in got]
        n += len(want)
        if sorted(have, key=str) != sorted(want, key=str):
            bad.append((os.path.basename(path), have[:2], want[:2]))
    if traces:
        check(n and not bad, "records: every Nextflow row keeps its name and tag as the trace writes them "
              "(%d rows of %d traces; differ: %s)" % (n, len(traces), bad[:2]))
    if not os.path.isdir(bench):
        print("SKIP part: no Snakemake benchmarks in ../shared")
        return
    got = [json.loads(l) for l in records(bench, "ndjson", "-q").decode().splitlines()]
    files = {}
    for root, _, fs in os.walk(bench):
        for f in fs:
            if root != bench:  # benchmarks/<rule>/<wildcards>.tsv
                files.setdefault(os.path.basename(root), set()).add(os.path.splitext(f)[0])
    tags = {}
    for g in got:
        tags.setdefault(g["category"], set()).add(g.get("tag"))
    check(files and all(tags.get(rule) == stems for rule, stems in files.items()),
          "records: Snakemake's wildcards (benchmarks/<rule>/<wildcards>.tsv) are each row's tag (%s)"
          % {r: sorted(t, key=str) for r, t in tags.items()})


def main():
    assert subprocess.run([TASKLENS, "records", "--help"], capture_output=True).returncode == 0
    work_queue([os.path.join(SRC, "tests/data/wq/demo-cctools-9.9.log")] + shared_files("wq"))
    chrome([os.path.join(SRC, "tests/data/chrome/edge.json")] +
           [p for p in shared_files("chrome") if p.endswith((".json", ".json.gz"))])
    lsst(sorted(glob.glob(os.path.join(SRC, "tests/data/lsst/u/**/*_metadata_*.*"), recursive=True)) +
         [p for p in shared_files("lsst") if p.endswith(".provenance.json")])
    spark(shared_files("spark", ["local-1795570335358"]))
    dasf(shared_files("dasf", ["Tutorial_5_Profile-TracePlugin-vm.msgpack"]))
    names_and_tags([p for p in shared_files("nextflow") if p.endswith((".txt", ".tsv"))],
                   os.path.join(SHARED, "snakemake", "samples", "generated", "runA", "benchmarks"))
    return finish()


def shared_files(fmt, names=None):
    d = os.path.join(SHARED, fmt, "samples")
    if not os.path.isdir(d):
        print("SKIP: %s absent: the %s samples are not read" % (d, fmt))
        return []
    skip = ("SOURCES.md", "sha256sums.txt")
    return [os.path.join(d, f) for f in sorted(os.listdir(d))
            if f not in skip and not f.endswith(".expected") and (names is None or f in names)]


if __name__ == "__main__":
    sys.exit(main())
