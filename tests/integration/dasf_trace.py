#!/usr/bin/env python3
"""DASF profiler traces (msgpack), on the real files dasf-core wrote
(../shared/dasf/samples), each number checked against an independent reading
with Python's msgpack package and against DASF's own analysis:

1. DASF's "Function bottleneck" table: per (host, worker, function) the task
   count, total and mean task time equal `summary --by host,worker,category`
   row for row (function_bottleneck.csv, 125 rows); its "Task balance"
   equals `summary --dasf-task-balance` (task_balance.csv, 40 rows).
2. Every Compute event is one task (8,299; keys computed many times count
   each time); Managed Memory and Resource Usage are samples, never tasks.
3. Time: monotonic seconds mapped to the epoch with args.time of the
   ResourceMonitor file beside the trace (the offset in the input report);
   alone, the stated fallback, said; never a 1970 date.
4. Damage: a truncated last event and an absurd length field are rejected
   with their byte offset; the events after the bad length are read.
5. The dask 2025.7 files (tuple keys as msgpack arrays) read without a
   rejected event.
6. `run` following a trace that grows in DASF's 1000-event batches: every
   Compute read exactly once.

usage: dasf_trace.py TASKLENS SHARED_DIR
"""
import csv
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

TASKLENS, SHARED = sys.argv[1:3]
S = os.path.join(SHARED, "dasf", "samples")
TP = os.path.join(S, "Tutorial_5_Profile-TracePlugin-vm.msgpack")
RM = os.path.join(S, "Tutorial_5_Profile-ResourceMonitor-vm.msgpack")


def frames(path):
    """(offset, raw record) of every event."""
    data = open(path, "rb").read()
    off, out = 0, []
    while off < len(data):
        n = struct.unpack(">Q", data[off:off + 8])[0]
        out.append((off, data[off:off + 8 + n]))
        off += 8 + n
    return out


def events(path):
    import msgpack
    return [msgpack.unpackb(raw[8:], raw=False, strict_map_key=False) for _, raw in frames(path)]


def summary(*args):
    r = subprocess.run([TASKLENS, "summary", "--format", "json", *args], capture_output=True, text=True)
    return json.loads(r.stdout), r.stderr


def function_bottleneck():
    d, _ = summary("--by", "host,worker,category", "--metrics", "wall_time_s", TP)
    got = {(g["key"]["host"], g["key"]["worker"], g["key"]["category"]): g for g in d["groups"] if g["tasks"]}
    rows = list(csv.DictReader(open(os.path.join(S, "dasf_analysis__TracePlugin_only.csv", "function_bottleneck.csv"))))
    bad = []
    for r in rows:
        g = got.get((r["Host"], "worker-%s-%s" % (r["Host"], r["GPU"]), r["Function"]))
        m = g and g["metrics"]["wall_time_s"]
        if not g or g["tasks"] != int(r["Num Tasks (chunks)"]) or \
                abs(m["sum"] - float(r["Duration (s)"])) > 1e-12 * max(1.0, m["sum"]) or \
                abs(m["mean"] - float(r["Mean Task time (s)"])) > 1e-12:
            bad.append((r["Function"], r["GPU"], g and (g["tasks"], m["sum"], m["mean"])))
    check(len(rows) == 125 and not bad and len(got) == len(rows),
          "DASF's function bottleneck, %d rows: count, total and mean task time per (host, worker, function) "
          "equal (%d groups; differing: %s)" % (len(rows), len(got), bad[:3]))


def task_balance():
    """DASF's task balance table: `summary --dasf-task-balance` equals
    task_balance.csv row for row (seconds and each worker's tasks)."""
    r = subprocess.run([TASKLENS, "summary", "--dasf-task-balance", TP], capture_output=True, text=True)
    got = list(csv.reader(r.stdout.splitlines()))
    want = list(csv.reader(open(os.path.join(S, "dasf_analysis__TracePlugin_only.csv", "task_balance.csv"))))
    same = len(got) == len(want) and got[0] == want[0] and all(
        [float(x or 0) for x in g[1:]] == [float(x or 0) for x in w[1:]] for g, w in zip(got[1:], want[1:]))
    check(r.returncode == 0 and same and len(want) == 41,
          "DASF's task balance: %d rows, each second's tasks per worker equal (%s)" % (
              len(got) - 1, r.stderr.strip()[:120]))


def tasks_and_samples():
    ev = events(TP)
    comp = [e for e in ev if e["name"] == "Compute"]
    d, _ = summary(TP)
    tasks = sum(g["tasks"] for g in d["groups"])
    inp = d["inputs"][0]
    check(tasks == len(comp) == 8299 and inp["line_kinds"]["compute"] == 8299 and inp["rejected"] == 0,
          "every Compute is a task: %d (independent: %d), %d events, none rejected" % (tasks, len(comp), inp["lines"]))
    mm = [e for e in ev if e["name"] == "Managed Memory"]
    samples = {g["key"]["category"]: g["samples"] for g in d["groups"] if g["samples"]}
    check(samples == {"Managed Memory size": len(mm), "Managed Memory tasks": len(mm)},
          "Managed Memory events are samples (size, tasks), not tasks: %s" % samples)
    rm = [e for e in events(RM) if e["name"] == "Resource Usage"]
    d, _ = summary(RM)
    samples = {g["key"]["category"]: g["samples"] for g in d["groups"]}
    keys = {"Resource Usage " + k for k in rm[0]["args"] if k != "time"}
    check(set(samples) == keys and all(v == len(rm) for v in samples.values()) and
          sum(g["tasks"] for g in d["groups"]) == 0,
          "Resource Usage: one sample series per numeric arg (%d series x %d), args.time is the anchor" % (
              len(samples), len(rm)))


def times():
    rm = [e for e in events(RM) if e["name"] == "Resource Usage"]
    offset = rm[0]["args"]["time"] - rm[0]["timestamp"]
    comp = [e for e in events(TP) if e["name"] == "Compute"]
    d, _ = summary(TP)
    lp = subprocess.run([TASKLENS, "lines", "--window", "0", TP], capture_output=True, text=True).stdout
    ts = sorted(int(x.rsplit(" ", 1)[1]) for x in lp.splitlines() if x.startswith("task,"))
    want = sorted((e["timestamp"] + offset) * 1e9 for e in comp)
    # a task point's time is its end plus a deterministic sub-ms offset from its id
    worst = max(abs(a - b) for a, b in zip(ts, want))
    check(d["inputs"][0]["line_kinds"].get("time_anchor_sibling") == 1 and
          d["inputs"][0]["line_kinds"]["time_offset_s"] == round(offset) and worst < 1e6,
          "monotonic -> epoch by the ResourceMonitor file's args.time (offset %.2f s, in the input "
          "report): every task ends within %.3f ms of the independent time" % (offset, worst / 1e6))
    with tempfile.TemporaryDirectory(prefix="tl-dasf-") as tmp:
        alone = os.path.join(tmp, os.path.basename(TP))
        shutil.copy(TP, alone)
        born = subprocess.run(["stat", "-c", "%W %Y", alone], capture_output=True, text=True).stdout.split()
        born = int(born[0]) if born and born[0] not in ("0", "-") else int(born[1])  # else mtime
        time.sleep(3)  # read later than it was made: the time of the read must not matter
        d, err = summary(alone)
        lp = subprocess.run([TASKLENS, "lines", "--window", "0", alone], capture_output=True, text=True).stdout
        time.sleep(1.5)
        again = subprocess.run([TASKLENS, "lines", "--window", "0", alone], capture_output=True, text=True).stdout
    pts = sorted(x for x in lp.splitlines() if x.startswith("task,"))
    first_ev = min(e["timestamp"] for e in comp)
    first = min(int(x.rsplit(" ", 1)[1]) for x in pts)
    end_of_first = min(e["timestamp"] for e in comp) - first_ev  # the first task's end after the first event
    check(d["inputs"][0]["line_kinds"].get("time_anchor_fallback") == 1 and "no wall-clock anchor" in err and
          abs(first / 1e9 - (born + end_of_first)) < 2,
          "no ResourceMonitor beside it: the stated fallback (first event = the file's birth), said: %s"
          % err.strip()[:160])
    check(pts == sorted(x for x in again.splitlines() if x.startswith("task,")) and len(pts) == 8299,
          "read again later, the same %d task points (a replay overwrites in InfluxDB, never doubles)" % len(pts))


def task_keys():
    """Each task point carries its Dask key as the string field task_key:
    the key as written, or a tuple key's parts joined by ", " (dask 2025)."""
    import re
    for path, n in ((TP, 8299), (os.path.join(S, "dask-2025.7.0", "Tutorial_5_Profile-TracePlugin-vm.msgpack"), 429)):
        if not os.path.exists(path):
            continue
        want = [e["args"]["key"] for e in events(path) if e["name"] == "Compute"]
        want = [k if isinstance(k, str) else ", ".join(str(x) for x in k) for k in want]
        lp = subprocess.run([TASKLENS, "lines", "--window", "0", path], capture_output=True, text=True).stdout
        got = []
        for x in lp.splitlines():
            if x.startswith("task,"):
                m = re.search(r',task_key="((?:[^"\\]|\\.)*)"', x)
                got.append((int(re.search(r"task_id=(\d+)i", x).group(1)), m and re.sub(r"\\(.)", r"\1", m.group(1))))
        got = [k for _, k in sorted(got)]
        check(got == want and len(got) == n, "%s: every task point's task_key is its Dask key (%d)" % (
            os.path.relpath(path, S), len(got)))


def damage():
    fr = frames(TP)
    data = b"".join(raw for _, raw in fr)
    with tempfile.TemporaryDirectory(prefix="tl-dasf-") as tmp:
        cut = os.path.join(tmp, "cut-TracePlugin-x.msgpack")
        open(cut, "wb").write(data[:fr[-1][0] + 20])  # the last event cut after 20 bytes
        d, err = summary(cut)
        i = d["inputs"][0]
        check(i["rejected_by"] == {"truncated": 1} and "at byte %d, has 20 of" % fr[-1][0] in err and
              sum(g["tasks"] for g in d["groups"]) + (1 if events(TP)[-1]["name"] == "Compute" else 0) == 8299,
              "a last event cut short: rejected as truncated with its byte offset: %s" % err.strip()[:160])
        bad = bytearray(data)
        k = 5000
        off = fr[k][0]
        bad[off:off + 8] = b"\x7f" * 8  # an absurd length
        damaged = os.path.join(tmp, "bad-TracePlugin-x.msgpack")
        open(damaged, "wb").write(bytes(bad))
        d, err = summary(damaged)
        i = d["inputs"][0]
        lost = 1 if events(TP)[k]["name"] == "Compute" else 0
        check(i["rejected_by"] == {"too_large": 1} and "at byte %d" % off in err and
              sum(g["tasks"] for g in d["groups"]) == 8299 - lost and i["line_kinds"].get("skipped_bytes", 0) > 0,
              "an absurd length: rejected with its byte offset, the next events read (%d tasks, %d bytes skipped)" % (
                  sum(g["tasks"] for g in d["groups"]), i["line_kinds"].get("skipped_bytes", 0)))


def dask_2025():
    tp = os.path.join(S, "dask-2025.7.0", "Tutorial_5_Profile-TracePlugin-vm.msgpack")
    if not os.path.exists(tp):
        print("SKIP dask_2025: %s absent" % tp)
        return
    comp = [e for e in events(tp) if e["name"] == "Compute"]
    d, _ = summary(tp)
    check(d["inputs"][0]["rejected"] == 0 and sum(g["tasks"] for g in d["groups"]) == len(comp) == 429,
          "dask 2025.7 (tuple keys as arrays): %d tasks, none rejected" % len(comp))


def followed():
    fr = frames(TP)
    with tempfile.TemporaryDirectory(prefix="tl-dasf-") as tmp:
        log = os.path.join(tmp, "grow-TracePlugin-vm.msgpack")
        out = os.path.join(tmp, "out.lp")
        open(log, "wb").close()
        p = subprocess.Popen([TASKLENS, "run", "--follow", log, "--lines-out", out, "--window", "0",
                              "--flush-interval", "100"], stderr=subprocess.PIPE, text=True)
        for i in range(0, len(fr), 1000):  # DASF appends 1000-event batches
            with open(log, "ab") as f:
                batch = b"".join(raw for _, raw in fr[i:i + 1000])
                f.write(batch[:len(batch) // 2])  # a batch seen half written
                f.flush()
                time.sleep(0.05)
                f.write(batch[len(batch) // 2:])
            time.sleep(0.1)
        time.sleep(2)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        ids = [x for x in open(out).read().splitlines() if x.startswith("task,")]
    check(p.returncode == 0 and len(ids) == 8299 and len(set(ids)) == 8299 and "rejected" not in err,
          "followed while it grows in 1000-event batches: %d task points, %d distinct: %s" % (
              len(ids), len(set(ids)), err.strip()[-200:]))


def resumed():
    """Followed with a checkpoint directory, killed with SIGKILL halfway
    (an event half written at the kill), restarted: every Compute there."""
    fr = frames(TP)
    with tempfile.TemporaryDirectory(prefix="tl-dasf-") as tmp:
        log = os.path.join(tmp, "grow-TracePlugin-vm.msgpack")
        out, ck = os.path.join(tmp, "out.lp"), os.path.join(tmp, "ck")
        cmd = [TASKLENS, "run", "--follow", log, "--lines-out", out, "--window", "0", "--flush-interval", "100",
               "--checkpoint-dir", ck, "--checkpoint-interval", "1"]
        data = b"".join(raw for _, raw in fr)
        half = fr[len(fr) // 2][0] + 100  # inside an event
        open(log, "wb").write(data[:half])
        p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        p.send_signal(signal.SIGKILL)
        p.communicate()
        with open(log, "ab") as f:
            f.write(data[half:])
        p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        pts = [x for x in open(out).read().splitlines() if x.startswith("task,")]
    check(p.returncode == 0 and len(set(pts)) == 8299 and "resuming at byte" in err,
          "kill -9 halfway, restart from the checkpoint: %d distinct task points of 8299 (%d written)" % (
              len(set(pts)), len(pts)))


def main():
    if not os.path.exists(TP):
        print("SKIP: %s absent (the real DASF samples)" % TP)
        return 77
    try:
        import msgpack  # noqa: F401
    except ImportError:
        print("SKIP: python3-msgpack is not installed")
        return 77
    function_bottleneck()
    task_balance()
    tasks_and_samples()
    times()
    task_keys()
    damage()
    dask_2025()
    followed()
    resumed()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
