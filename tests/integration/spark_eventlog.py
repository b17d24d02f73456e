#!/usr/bin/env python3
"""Apache Spark event logs, on the real log Spark 3.5 wrote
(../shared/spark/samples), every figure checked against Python's json on
the same file:

1. per stage name: tasks (successful attempts), attempts (every TaskEnd,
   the failed one included), the sum and count of Executor Run Time and
   Executor CPU Time, shuffle bytes written, result sizes;
2. the failed attempt is a task attempt with its reason, not final; its
   retry is;
3. executor metrics (StageExecutorMetrics) are samples per metric, the
   process-tree RSS of the JVM and of the Python workers among them;
4. gzip and zstd copies read the same (Spark's zstd codec writes zstd
   frames); a log cut in the middle of its last line (an `.inprogress`
   log) reports that line as truncated;
5. a rolling event-log directory (eventlog_v2_*) read in index order;
6. `run` following an `.inprogress` log as Spark appends it, killed with
   SIGKILL halfway and restarted from its checkpoint: every attempt there.

usage: spark_eventlog.py TASKLENS SHARED_DIR
"""
import collections
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

TASKLENS, SHARED = sys.argv[1:3]
LOG = os.path.join(SHARED, "spark", "samples", "local-1795570335358")


def summary(*args):
    r = subprocess.run([TASKLENS, "summary", "--format", "json", *args], capture_output=True, text=True)
    return json.loads(r.stdout), r.stderr


def independent():
    stage, per = {}, collections.defaultdict(lambda: collections.defaultdict(float))
    for line in open(LOG):
        e = json.loads(line)
        if e["Event"] == "SparkListenerStageSubmitted":
            stage[e["Stage Info"]["Stage ID"]] = e["Stage Info"]["Stage Name"]
        elif e["Event"] == "SparkListenerTaskEnd":
            g = per[stage[e["Stage ID"]]]
            g["attempts"] += 1
            if e["Task End Reason"]["Reason"] != "Success":
                continue
            m = e["Task Metrics"]
            g["tasks"] += 1
            g["run"] += m["Executor Run Time"] / 1e3
            g["cpu"] += m["Executor CPU Time"] / 1e9
            g["shuffle_w"] += m["Shuffle Write Metrics"]["Shuffle Bytes Written"]
            g["result"] += m["Result Size"]
            g["gc"] += m["JVM GC Time"] / 1e3
            g["peak"] = max(g["peak"], m["Peak Execution Memory"])
    return per


def per_stage():
    want = independent()
    d, err = summary(LOG)
    got = {g["key"]["category"]: g for g in d["groups"] if g["attempts"]}
    bad = []
    for name, w in want.items():
        g = got.get(name)
        m = g and g["metrics"]
        if not g or g["tasks"] != w["tasks"] or g["attempts"] != w["attempts"] or \
                abs(m["wall_time_s"]["sum"] - w["run"]) > 1e-9 or m["wall_time_s"]["count"] != w["tasks"] or \
                abs(m["cpu_time_s"]["sum"] - w["cpu"]) > 1e-9:
            bad.append((name, g and (g["tasks"], g["attempts"]), dict(w)))
    check(len(want) == 6 and not bad and set(got) == set(want) and d["inputs"][0]["rejected"] == 0,
          "per stage name: tasks, attempts, run and CPU time equal Python's json (%d stages; differing: %s)" % (
              len(want), bad[:2]))
    d, _ = summary("--metrics", "bytes_sent,output_bytes", LOG)
    got = {g["key"]["category"]: g["metrics"] for g in d["groups"] if g["attempts"]}
    bad = [n for n, w in want.items()
           if got[n].get("bytes_sent", {}).get("sum", 0) != w["shuffle_w"] or got[n]["output_bytes"]["sum"] != w["result"]]
    check(not bad, "shuffle bytes written and result sizes per stage equal (differing: %s)" % bad)
    d, _ = summary("--metrics", "jvm_gc_time_s,peak_execution_memory_bytes", LOG)
    got = {g["key"]["category"]: g["metrics"] for g in d["groups"] if g["attempts"]}
    bad = [(n, got[n]["jvm_gc_time_s"]["sum"], w["gc"], got[n]["peak_execution_memory_bytes"]["max"], w["peak"])
           for n, w in want.items()
           if abs(got[n]["jvm_gc_time_s"]["sum"] - w["gc"]) > 1e-9 or
           (got[n]["peak_execution_memory_bytes"]["max"] or 0) != w["peak"]]
    check(not bad, "JVM GC time (sum) and peak execution memory (max) per stage are record fields "
          "equal to Python's json (differing: %s)" % bad[:2])


def failed_attempt():
    lp = subprocess.run([TASKLENS, "lines", "--window", "0", LOG], capture_output=True, text=True).stdout
    tasks = [x for x in lp.splitlines() if x.startswith("task,")]
    failed = [x for x in tasks if "result=ExceptionFailure" in x]
    retry = [x for x in tasks if "task_id=39i" in x]
    check(len(tasks) == 42 and len(failed) == 1 and "retried=true" in failed[0] and "attempt=1i" in failed[0] and
          "final=false" in failed[0] and len(retry) == 1 and "attempt=2i" in retry[0] and "final=true" in retry[0],
          "42 attempts; the failed one (TID 37) with its reason, not final; its retry (TID 39) attempt 2, final")


def executor_samples():
    want = collections.Counter()
    for line in open(LOG):
        e = json.loads(line)
        if e["Event"] == "SparkListenerStageExecutorMetrics":
            for k in e["Executor Metrics"]:
                want["executor " + k] += 1
    d, _ = summary(LOG)
    got = {g["key"]["category"]: g["samples"] for g in d["groups"] if g["key"]["category"].startswith("executor ")}
    mx = {g["key"]["category"]: g["metrics"]["value"]["max"] for g in d["groups"]
          if g["key"]["category"] == "executor ProcessTreeJVMRSSMemory"}
    jvm = max(json.loads(x)["Executor Metrics"]["ProcessTreeJVMRSSMemory"] for x in open(LOG)
              if '"SparkListenerStageExecutorMetrics"' in x)
    check(got == dict(want) and mx.get("executor ProcessTreeJVMRSSMemory") == jvm,
          "StageExecutorMetrics: one sample series per metric (%d series), JVM RSS max %d B" % (len(got), jvm))


def codecs_and_cut():
    ref, _ = summary(LOG)
    with tempfile.TemporaryDirectory(prefix="tl-spark-") as tmp:
        gz, zst = os.path.join(tmp, "app.gz"), os.path.join(tmp, "app.zst")
        with open(LOG, "rb") as f, gzip.open(gz, "wb") as g:
            shutil.copyfileobj(f, g)
        subprocess.run(["zstd", "-q", LOG, "-o", zst], check=True)
        same = all(summary(p)[0]["groups"] == ref["groups"] for p in (gz, zst))
        data = open(LOG, "rb").read()
        cut = os.path.join(tmp, "app.inprogress")
        open(cut, "wb").write(data[:len(data) - 40])
        d, err = summary(cut)
    check(same and d["inputs"][0]["rejected_by"] == {"truncated": 1} and "cut short" in err,
          "gzip and zstd copies give the same groups; a cut last line is reported as truncated")


def rolling():
    """A rolling event log (spark.eventLog.rolling.enabled): eventlog_v2_<app>/
    with events_1_<app> ... events_11_<app> (one zstd) and appstatus_<app>:
    read as one stream in index order, the same groups as the single file."""
    ref, _ = summary(LOG)
    lines = open(LOG, "rb").read().splitlines(keepends=True)
    with tempfile.TemporaryDirectory(prefix="tl-spark-") as tmp:
        d = os.path.join(tmp, "eventlog_v2_local-1")
        os.makedirs(d)
        k = 11
        for i in range(k):
            part = b"".join(lines[i * len(lines) // k:(i + 1) * len(lines) // k])
            name = os.path.join(d, "events_%d_local-1" % (i + 1))
            open(name, "wb").write(part)
            if i == 4:
                subprocess.run(["zstd", "-q", "--rm", name, "-o", name + ".zstd"], check=True)
        open(os.path.join(d, "appstatus_local-1"), "w").close()
        got, err = summary(d + "/")
    check(got["groups"] == ref["groups"] and got["inputs"][0]["rejected"] == 0,
          "a rolling event log directory (11 parts, events_10 after events_9, one zstd): the same groups "
          "as the single file: %s" % err.strip()[:200])


def followed():
    lines = open(LOG, "rb").read().splitlines(keepends=True)
    with tempfile.TemporaryDirectory(prefix="tl-spark-") as tmp:
        log = os.path.join(tmp, "local-1.inprogress")
        out, ck = os.path.join(tmp, "out.lp"), os.path.join(tmp, "ck")
        cmd = [TASKLENS, "run", "--follow", log, "--lines-out", out, "--window", "0", "--flush-interval", "100",
               "--checkpoint-dir", ck, "--checkpoint-interval", "1"]
        open(log, "wb").close()
        p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        for i, ln in enumerate(lines):
            with open(log, "ab") as f:
                f.write(ln)
            if i == len(lines) // 2:
                time.sleep(2)
                p.send_signal(signal.SIGKILL)
                p.communicate()
                p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
            time.sleep(0.01)
        time.sleep(2.5)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        pts = {x for x in open(out).read().splitlines() if x.startswith("task,")}
    check(p.returncode == 0 and len(pts) == 42,
          "an .inprogress log followed as it grows, kill -9 halfway, resumed: %d distinct attempts of 42: %s" % (
              len(pts), err.strip()[-200:]))


def main():
    if not os.path.exists(LOG):
        print("SKIP: %s absent (the real Spark sample)" % LOG)
        return 77
    per_stage()
    failed_attempt()
    executor_samples()
    codecs_and_cut()
    rolling()
    followed()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
