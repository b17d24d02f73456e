#!/usr/bin/env python3
"""Kafka -> tasklens -> a real influxd, through crashes and a broker restart.

Two managers' transaction logs (keys mgrA, mgrB) are produced into a
4-partition topic while tasklens runs. tasklens is killed with SIGKILL at
random moments in 10 rounds (seeded, printed), the broker is restarted once
mid-stream with tasklens running, and a last run reads to the end. Then, in
InfluxDB:
  - per manager, the `task` series equal `tasklens lines` on its file: every
    task there, exactly once (the points are deterministic, so a replay after
    a crash rewrites the same point);
  - per category, the task count equals `tasklens summary` on the two
    original logs;
  - per category, the last cumulative `task_quantiles` count equals it too:
    the aggregator state that survived ten kills counted nothing twice.

usage: kafka_influx.py TASKLENS DATA_DIR SHARED_DIR
"""
import json
import os
import random
import signal
import subprocess
import sys
import shutil
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka_harness  # noqa: E402
from checks import check, fail, finish  # noqa: E402
from influxd_harness import Influxd  # noqa: E402

TASKLENS, DATA, SHARED = sys.argv[1:4]


demo = os.path.join(DATA, "wq", "demo-cctools-9.9.log")
big = os.path.join(SHARED, "wq", "samples", "ccl_taskvine-logs__colmena_wq.txn.log")
if not os.path.exists(big):
    print("SKIP the real colmena log: %s absent; a copy of the bundled log stands in for it" % big)
    # a second manager's log: a copy, since `summary` reads a path named
    # twice once (the two managers are two inputs, whatever their bytes)
    big = os.path.join(tempfile.mkdtemp(prefix="tl-kafka-influx-"), "mgrB.log")
    shutil.copy(demo, big)
logs = {"mgrA": demo, "mgrB": big}


def lines_of(path):
    r = subprocess.run([TASKLENS, "lines", "--format-in", "wq", "-q", path], capture_output=True, text=True)
    return [l for l in r.stdout.splitlines() if l.startswith("task,")]


def ts_and_id(line):
    """(task_id, attempt, time): what identifies a task point."""
    head, fields, ts = line.rsplit(" ", 2)
    f = dict(kv.split("=", 1) for kv in fields.split(","))
    return (int(f["task_id"].rstrip("i")), int(f["attempt"].rstrip("i")), int(ts))


expect = {k: {ts_and_id(l) for l in lines_of(p)} for k, p in logs.items()}
summ = json.loads(subprocess.run([TASKLENS, "summary", "--format", "json", "-q"] + list(logs.values()),
                                 capture_output=True, text=True).stdout)
want_attempts = {g["key"]["category"]: g["attempts"] for g in summ["groups"]}
want_wall = {g["key"]["category"]: g["metrics"]["wall_time_s"]["count"]
             for g in summ["groups"] if g["metrics"].get("wall_time_s", {}).get("count")}

seed = int(os.environ.get("TL_TEST_SEED", random.randrange(1 << 30)))
rnd = random.Random(seed)
print("seed", seed, "(TL_TEST_SEED to replay)")

tmp = tempfile.mkdtemp(prefix="tl-kafka-influx-")
cfg = os.path.join(tmp, "run.yaml")
with kafka_harness.Kafka(partitions=4) as k, Influxd() as db:
    db.query("CREATE DATABASE tl")
    with open(cfg, "w") as f:
        f.write(f"""sources:
  - type: kafka
    brokers: {k.bootstrap}
    topics: wqe
    group: ge
    parser: wq
    key_tag: manager
    properties:
      fetch.wait.max.ms: "50"
      session.timeout.ms: "6000"
      heartbeat.interval.ms: "500"
sinks:
  - type: influxdb
    url: {db.url}
    db: tl
    spool_dir: {tmp}/spool
checkpoint_dir: {tmp}/ck
checkpoint_interval: 1
cumulative_interval: 1
flush_interval: 200
aggregate: {{window: 0}}
""")

    def chunks(path, n):
        with open(path, "rb") as f:
            ls = f.read().splitlines(keepends=True)
        return [b"".join(ls[i:i + n]) for i in range(0, len(ls), n)]

    a, b = chunks(logs["mgrA"], 5), chunks(logs["mgrB"], 40)
    k.produce("wqe", [b"#\n"], key=b"mgrA")  # the topic exists before tasklens subscribes

    producing_done = threading.Event()
    # no produce request spans the broker restart: one whose answer is lost
    # would be sent again by the retry below and the log would hold that
    # chunk twice (tasklens would then rightly see those tasks run again)
    broker_lock = threading.Lock()

    def producer():
        # about 20 s of traffic, so the kills fall mid-stream
        steps = 40
        for s in range(steps):
            ia, ib = len(a) * s // steps, len(b) * s // steps
            ja, jb = len(a) * (s + 1) // steps, len(b) * (s + 1) // steps
            with broker_lock:
                if ja > ia:
                    k.produce("wqe", a[ia:ja], key=b"mgrA", compression="zstd")
                if jb > ib:
                    k.produce("wqe", b[ib:jb], key=b"mgrB", compression="lz4")
            time.sleep(0.5)
        producing_done.set()

    th = threading.Thread(target=producer)
    th.start()
    for rnd_i in range(10):
        p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(rnd.uniform(0.4, 2.5))
        if rnd_i == 4:
            print("broker restart while tasklens runs", flush=True)
            with broker_lock:
                k.restart(down_s=2.0)
            time.sleep(rnd.uniform(1.0, 3.0))
        p.send_signal(signal.SIGKILL)
        p.wait()
    th.join()
    # the topic holds each chunk once, in order: else a miscount below is
    # the producer's, not tasklens'
    sent = {"mgrA": [b"#\n"] + a, "mgrB": b}
    got_msgs = {}
    for key, _, _, value in k.consume("wqe"):
        got_msgs.setdefault(key, []).append(value.encode())
    for key in sent:
        check(got_msgs.get(key) == sent[key], "topic holds the %d %s chunks once each, in order "
              "(has %d)" % (len(sent[key]), key, len(got_msgs.get(key, []))))
    print("10 rounds of kill -9 done; the last run reads to the end", flush=True)

    p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    total = sum(len(v) for v in expect.values())
    deadline, n = time.time() + 180, 0
    while time.time() < deadline:
        rows = db.rows("SELECT count(attempt) FROM task", "tl")
        n = rows[0]["count"] if rows else 0
        if n >= total:
            break
        time.sleep(0.5)
    time.sleep(2.5)  # a cumulative interval and a checkpoint
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=120)
    if p.returncode != 0:
        fail("the last run exited %s: %s" % (p.returncode, err[-2000:]))

    for key, pts in expect.items():
        rows = db.rows("SELECT task_id, attempt FROM task WHERE manager = '%s'" % key, "tl", epoch="ns")
        got = {(int(r["task_id"]), int(r["attempt"]), int(r["time"])) for r in rows}
        if len(rows) != len(pts) or got != pts:
            fail("%s: %d task points in InfluxDB, expected %d (missing %d, extra %d)" % (
                key, len(rows), len(pts), len(pts - got), len(got - pts)))
        else:
            check(True, "%s: %d task points in InfluxDB, each once" % (key, len(rows)))
    per_cat = {r["category"]: r["count"] for r in
               db.rows("SELECT count(attempt) FROM task GROUP BY category", "tl")}
    if per_cat != want_attempts:
        fail("task points per category %s != summary %s" % (per_cat, want_attempts))
    else:
        check(True, "task points per category equal `tasklens summary` (%d categories)" % len(per_cat))
    cum = {r["category"]: r["n"] for r in
           db.rows("SELECT last(\"count\") AS n FROM task_quantiles WHERE \"window\" = 'cumulative' "
                   "AND metric = 'wall_time_s' GROUP BY category", "tl")}
    if cum != want_wall:
        fail("cumulative wall_time_s counts %s != summary %s" % (cum, want_wall))
    else:
        check(True, "cumulative quantile counts equal `tasklens summary`: nothing counted twice")

sys.exit(finish())
