#!/usr/bin/env python3
"""The Kafka source against a real broker (KRaft, started here on 127.0.0.1).

Two managers' transaction logs go into one 3-partition topic, interleaved,
keyed by manager, several lines per message, compressed with zstd, lz4 and
gzip in turn. `tasklens run` consumes them (key_tag: manager) into a
line-protocol file. Checked:
  - per manager, the set of `task` points equals what `tasklens lines` makes
    of that manager's file (streams per key never mix their open tasks);
  - a malformed line is rejected and reported as kafka:topic/partition@offset;
  - a librdkafka secret given in `properties` never shows in the output;
  - lag per partition is in the `tasklens` self-metrics;
  - offsets are committed at exit: a restart of the same group reads only
    what was produced since;
  - kill -9 twice mid-stream, then a restart: every task point is there
    (at least once; the points are deterministic, so InfluxDB keeps one).

usage: kafka_source.py TASKLENS DATA_DIR SHARED_DIR
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka_harness  # noqa: E402
from checks import check, fail, finish  # noqa: E402
from http_fakes import Server  # noqa: E402

TASKLENS, DATA, SHARED = sys.argv[1:4]


def task_points(text, drop_tag=None):
    out = set()
    for line in text.splitlines():
        if not line.startswith("task,"):
            continue
        if drop_tag:
            line = re.sub(r",%s=[^,= ]*" % drop_tag, "", line)
        out.add(line)
    return out


def expected_points(path):
    r = subprocess.run([TASKLENS, "lines", "--format-in", "wq", "-q", path], capture_output=True, text=True)
    return task_points(r.stdout)


def manager_points(text, key):
    return task_points("\n".join(l for l in text.splitlines() if ",manager=%s" % key in l), "manager")


logs = {"mgrA": os.path.join(DATA, "wq", "demo-cctools-9.9.log")}
big = os.path.join(SHARED, "wq", "samples", "ccl_taskvine-logs__colmena_wq.txn.log")
if os.path.exists(big):
    logs["mgrB"] = big
else:
    print("SKIP the second manager's real log: %s absent; using the bundled log twice" % big)
    logs["mgrB"] = logs["mgrA"]
expect = {k: expected_points(p) for k, p in logs.items()}
for k, v in expect.items():
    if not v:
        fail("no expected task points for %s" % k)


def chunks(path, lines_per_msg):
    with open(path, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    return [b"".join(lines[i:i + lines_per_msg]) for i in range(0, len(lines), lines_per_msg)]


def produce_interleaved(k, topic):
    a, b = chunks(logs["mgrA"], 7), chunks(logs["mgrB"], 25)
    codecs = ["zstd", "lz4", "gzip"]
    i = j = n = 0
    step = 40
    while i < len(a) or j < len(b):
        if i < len(a):
            k.produce(topic, a[i:i + step], key=b"mgrA", compression=codecs[n % 3])
            i += step
        if j < len(b):
            k.produce(topic, b[j:j + step * 4], key=b"mgrB", compression=codecs[(n + 1) % 3])
            j += step * 4
        n += 1


def config(path, k, topic, group, out, ckdir):
    with open(path, "w") as f:
        f.write(f"""sources:
  - type: kafka
    brokers: {k.bootstrap}
    topics: {topic}
    group: {group}
    parser: wq
    key_tag: manager
    properties:
      sasl.password: ${{TL_TEST_KAFKA_SECRET}}
      fetch.wait.max.ms: "50"
      # the kill -9 phase: a killed member holds its partitions until its
      # session times out (librdkafka's default 45 s ate most of the 90 s
      # wait, and under ASan with a parallel test all of it)
      session.timeout.ms: "6000"
sinks:
  - type: file
    path: {out}
checkpoint_dir: {ckdir}
checkpoint_interval: 1
flush_interval: 200
aggregate: {{window: 0}}
""")


def run(cfg, env):
    return subprocess.Popen([TASKLENS, "run", "-c", cfg], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env)


def wait_for(out, want, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = open(out).read() if os.path.exists(out) else ""
        if all(manager_points(text, key) >= pts for key, pts in want.items()):
            return text
        time.sleep(0.3)
    return open(out).read() if os.path.exists(out) else ""


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
        fail("tasklens did not stop on SIGTERM")
    return p.returncode, err


SECRET = "s3cr3t-do-not-print"
env = dict(os.environ, TL_TEST_KAFKA_SECRET=SECRET)
tmp = tempfile.mkdtemp(prefix="tl-kafka-src-")
with kafka_harness.Kafka(partitions=3) as k:
    produce_interleaved(k, "wq")
    k.produce("wq", [b"this is not a transaction line\n"], key=b"mgrA")

    # 1. consume everything, stop, check
    out, ck, cfg = (os.path.join(tmp, n) for n in ("out.lp", "ck", "run.yaml"))
    config(cfg, k, "wq", "g1", out, ck)
    r = subprocess.run([TASKLENS, "check", "-c", cfg], capture_output=True, text=True, env=env)
    if not re.search(r"ok +sources\[0\]: kafka .*1 broker; topic wq: 3 partitions", r.stdout):
        fail("`tasklens check` does not describe the Kafka source:\n" + r.stdout + r.stderr)
    else:
        check(True, "tasklens check: %s" % (re.search(r"sources\[0\]: kafka[^\n]*", r.stdout).group(0),))
    p = run(cfg, env)
    text = wait_for(out, expect)
    time.sleep(1.5)  # a checkpoint interval: offsets committed while running too
    rc, err = stop(p)
    text = open(out).read()
    if rc != 0:
        fail("tasklens run exited %s: %s" % (rc, err[-2000:]))
    for key, pts in expect.items():
        got = manager_points(text, key)
        if got != pts:
            fail("%s: %d task points, expected %d (missing %d, extra %d)" % (
                key, len(got), len(pts), len(pts - got), len(got - pts)))
        else:
            check(True, "%s: %d task points equal `tasklens lines` on its file" % (key, len(got)))
    if not re.search(r"kafka:wq/\d+@\d+ key mgrA: .*", err):
        fail("the malformed line was not reported with topic/partition@offset:\n" + err[-1500:])
    else:
        check(True, "malformed line reported: %s" % (re.search(r"kafka:wq/\d+@\d+ key mgrA: [^\n]*", err).group(0),))
    if SECRET in err or SECRET in text:
        fail("the sasl.password value appeared in the output")
    lag = re.findall(r"^tasklens,input=kafka:wq/(\d+),.*[ ,]lag=(\d+)i", text, re.M)
    if len({pnum for pnum, _ in lag}) < 2:
        fail("no per-partition lag in the tasklens self-metrics")
    else:
        check(True, "self-metrics carry lag for partitions %s" % (sorted({pnum for pnum, _ in lag}),))
    before = len([l for l in text.splitlines() if l.startswith("task,")])

    # 2. restart the same group: only new messages
    k.produce("wq", chunks(logs["mgrA"], 1000), key=b"mgrC")
    p = run(cfg, env)
    text = wait_for(out, {"mgrC": expect["mgrA"]})
    rc, err = stop(p)
    text = open(out).read()
    after = [l for l in text.splitlines() if l.startswith("task,")]
    new_ab = len([l for l in after if ",manager=mgrC" not in l]) - before
    if manager_points(text, "mgrC") != expect["mgrA"]:
        fail("restart: the new manager's points are not all there")
    elif new_ab != 0:
        fail("restart: %d task points of already committed messages were written again" % new_ab)
    else:
        check(True, "restart of the group reads only the new messages (%d points)" % len(expect["mgrA"]))

    # 3. kill -9 twice mid-stream, then run to the end: nothing lost
    out2, ck2, cfg2 = (os.path.join(tmp, n) for n in ("out2.lp", "ck2", "run2.yaml"))
    config(cfg2, k, "wq", "g2", out2, ck2)
    killed = []
    for delay in (0.6, 1.4):
        p = run(cfg2, env)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        killed.append(p.communicate()[1])
    p = run(cfg2, env)
    want = dict(expect, mgrC=expect["mgrA"])
    t0 = time.time()
    text = wait_for(out2, want)
    waited = time.time() - t0
    rc, err = stop(p)
    text = open(out2).read()
    ok = True
    for key, pts in want.items():
        if manager_points(text, key) != pts:
            ok = False
            fail("after kill -9: %s has %d of %d task points" % (key, len(manager_points(text, key) & pts), len(pts)))
    if not ok:  # what the three runs said, to tell a slow group join from a failed restore
        for i, e in enumerate(killed + [err]):
            print("  run %d stderr (last 1500 bytes):\n%s" % (i + 1, e[-1500:]))
        print("  last run exit status %s after %.1f s; out2 holds %d bytes" % (rc, waited, len(text)))
    if ok:
        lines = [l for l in text.splitlines() if l.startswith("task,")]
        check(True, "after two kill -9: every task point there (%d lines written, %d distinct) after %.1f s" % (
            len(lines), len(set(lines)), waited))

    # 4. a sink that cannot take the points (InfluxDB answers 503, the spool
    #    is full at 64 KiB: reading pauses, the output is not acknowledged),
    #    then kill -9, then a restart with InfluxDB taking them: every task
    #    arrives -- no offset was committed past what was durable
    srv = Server()
    srv.down = True
    srv.__enter__()
    out4 = os.path.join(tmp, "ck4")
    cfg4 = os.path.join(tmp, "run4.yaml")
    config(cfg4, k, "wq", "g4", os.path.join(tmp, "unused.lp"), out4)
    text = open(cfg4).read().replace(
        "  - type: file\n    path: %s\n" % os.path.join(tmp, "unused.lp"),
        "  - type: influxdb\n    url: %s\n    db: d\n    spool_dir: %s\n    spool_max: 65536\n" % (
            srv.url, os.path.join(tmp, "spool4")))
    open(cfg4, "w").write(text)
    p = run(cfg4, env)
    time.sleep(6)  # consumed, refused, spooled until full, paused
    spooled = sum(os.path.getsize(os.path.join(tmp, "spool4", f)) for f in os.listdir(os.path.join(tmp, "spool4")))
    p.send_signal(signal.SIGKILL)
    paused = "reading pauses" in p.communicate()[1]
    before = srv.written()
    srv.down = False
    p = run(cfg4, env)
    deadline = time.time() + 90
    while time.time() < deadline and any(manager_points(srv.written(), key) != pts for key, pts in want.items()):
        time.sleep(0.5)
    rc, err = stop(p)
    got = srv.written()
    srv.__exit__(None, None, None)
    missing = {key: len(pts - manager_points(got, key)) for key, pts in want.items()}
    # whether the first batches fit the 64 KiB spool or reading paused at
    # once depends on how big they were when flushed: either way nothing
    # was acknowledged by InfluxDB before the kill
    check(not manager_points(before, "mgrA") and (paused or spooled > 64) and srv.refused() > 0 and
          not any(missing.values()),
          "503 and a 64 KiB spool (%s), kill -9, restart: every task arrives (missing per manager: %s; "
          "%d spool bytes at the kill, %d refused requests)" % (
              "reading paused" if paused else "batches spooled", missing, spooled, srv.refused()))

    # 5. the profilers' formats through Kafka: a Spark event log as lines
    #    and a DASF trace as raw bytes (its 8-byte framing crosses message
    #    boundaries), each in its own topic and parser
    spark_log = os.path.join(SHARED, "spark", "samples", "local-1795570335358")
    dasf_log = os.path.join(SHARED, "dasf", "samples", "Tutorial_5_Profile-TracePlugin-vm.msgpack")
    if os.path.exists(spark_log) and os.path.exists(dasf_log):
        k.produce("sp", chunks(spark_log, 20), key=b"app", partition=0)
        raw = open(dasf_log, "rb").read()
        k.produce_binary("ds", [raw[i:i + 65536] for i in range(0, len(raw), 65536)], key=b"vm", partition=0)
        out5, cfg5 = os.path.join(tmp, "out5.lp"), os.path.join(tmp, "run5.yaml")
        with open(cfg5, "w") as f:
            f.write("sources:\n")
            for topic, parser in (("sp", "spark"), ("ds", "dasf")):
                f.write("  - type: kafka\n    brokers: %s\n    topics: %s\n    group: g5%s\n    parser: %s\n"
                        "    properties: {fetch.wait.max.ms: \"50\"}\n" % (k.bootstrap, topic, topic, parser))
            f.write("sinks:\n  - type: file\n    path: %s\nflush_interval: 200\naggregate: {window: 0}\n" % out5)
        p = run(cfg5, env)
        deadline = time.time() + 60
        counts = {}
        while time.time() < deadline:
            text = open(out5).read() if os.path.exists(out5) else ""
            counts = {src: sum(1 for x in text.splitlines() if x.startswith("task,") and ",source=%s," % src in x)
                      for src in ("spark", "dasf")}
            if counts == {"spark": 42, "dasf": 8299}:
                break
            time.sleep(0.5)
        rc, err = stop(p)
        check(counts == {"spark": 42, "dasf": 8299} and "rejected" not in err,
              "Spark lines and a DASF trace as raw bytes through Kafka: %s task points (want 42 and 8299)" % counts)
    else:
        print("SKIP the Spark/DASF Kafka case: samples absent")

    # 6. the one door (issue 41): a topic whose first message no parser
    #    recognizes, then a Spark event log, with `parser: auto`: the first
    #    message is refused and said (it used to make the stream a Work
    #    Queue log for good, and every Spark line was rejected), the rest is
    #    detected as Spark and read whole
    if os.path.exists(spark_log):
        k.produce("mx", [b"hello, this is no trace\n"], key=b"app", partition=0)
        k.produce("mx", chunks(spark_log, 20), key=b"app", partition=0)
        out6, cfg6 = os.path.join(tmp, "out6.lp"), os.path.join(tmp, "run6.yaml")
        with open(cfg6, "w") as f:
            f.write("sources:\n  - type: kafka\n    brokers: %s\n    topics: mx\n    group: g6\n"
                    "    parser: auto\n    properties: {fetch.wait.max.ms: \"50\"}\n"
                    "sinks:\n  - type: file\n    path: %s\nflush_interval: 200\naggregate: {window: 0}\n"
                    % (k.bootstrap, out6))
        p = run(cfg6, env)
        deadline = time.time() + 60
        n = 0
        while time.time() < deadline:
            text = open(out6).read() if os.path.exists(out6) else ""
            n = sum(1 for x in text.splitlines() if x.startswith("task,") and ",source=spark," in x)
            if n == 42:
                break
            time.sleep(0.5)
        rc, err = stop(p)
        said = re.search(r"kafka:mx/0@0 key app: format not recognized[^\n]*", err)
        check(n == 42 and said is not None,
              "an unrecognized first message is refused and said (%s), the Spark log after it read: "
              "%d task points (want 42)" % (said.group(0) if said else err.strip()[-300:], n))

    # 7. what the field writes (issue 45) through Kafka, detected from the
    #    first message (`parser: auto`): a Nextflow trace and codecarbon's
    #    CSV as lines, their header in the first message; the task points
    #    are those `lines` writes for the files
    nf = os.path.join(SHARED, "nextflow", "samples", "jianhong-chipseq_gh-pages_execution_trace.txt")
    cc = os.path.join(SHARED, "codecarbon", "samples", "generated", "emissions.csv")
    if os.path.exists(nf) and os.path.exists(cc):
        want = {}
        for topic, path in (("nf", nf), ("cc", cc)):
            k.produce(topic, chunks(path, 9), key=b"run", partition=0)
            want[topic] = len([x for x in subprocess.run([TASKLENS, "lines", "-q", path], capture_output=True,
                                                          text=True).stdout.splitlines() if x.startswith("task,")])
        out7, cfg7 = os.path.join(tmp, "out7.lp"), os.path.join(tmp, "run7.yaml")
        with open(cfg7, "w") as f:
            f.write("sources:\n")
            for topic in ("nf", "cc"):
                f.write("  - type: kafka\n    brokers: %s\n    topics: %s\n    group: g7%s\n    parser: auto\n"
                        "    properties: {fetch.wait.max.ms: \"50\"}\n" % (k.bootstrap, topic, topic))
            f.write("sinks:\n  - type: file\n    path: %s\nflush_interval: 200\naggregate: {window: 0}\n" % out7)
        p = run(cfg7, env)
        deadline = time.time() + 60
        counts = {}
        while time.time() < deadline:
            text = open(out7).read() if os.path.exists(out7) else ""
            counts = {t: sum(1 for x in text.splitlines() if x.startswith("task,") and ",source=%s," % src in x)
                      for t, src in (("nf", "nextflow"), ("cc", "codecarbon"))}
            if counts == want:
                break
            time.sleep(0.5)
        rc, err = stop(p)
        check(counts == want and "rejected" not in err,
              "a Nextflow trace and codecarbon's CSV through Kafka, detected: %s task points (lines: %s)"
              % (counts, want))
    else:
        print("SKIP the Nextflow/codecarbon Kafka case: samples absent")

    # 8. `tasklens top -c` on a configuration with a Kafka source (issue 48):
    #    its own group (GROUP.top), the table summary prints for the same log
    k.produce("topwq", chunks(logs["mgrA"], 11), key=b"mgr", partition=0)
    cfg8 = os.path.join(tmp, "top8.yaml")
    with open(cfg8, "w") as f:
        f.write("sources:\n  - type: kafka\n    brokers: %s\n    topics: topwq\n    group: g8\n"
                "    parser: wq\n    properties: {fetch.wait.max.ms: \"50\"}\n"
                "sinks:\n  - type: file\n    path: %s\n" % (k.bootstrap, os.path.join(tmp, "out8.lp")))
    top = subprocess.run([TASKLENS, "top", "--once", "-c", cfg8], capture_output=True, text=True, env=env,
                         timeout=120)
    doc = json.loads(subprocess.run([TASKLENS, "summary", "--format", "json", logs["mgrA"]], capture_output=True,
                                    text=True).stdout)
    # DONE + FAIL: the tasks, a cancelled one apart (the glossary: neither done nor failed)
    want = {g["key"]["category"]: g["tasks"] - g["results"].get("CANCELED", 0) for g in doc["groups"]}
    shown = {}
    for line in top.stdout.splitlines():
        m = re.match(r"^(.+?)\s+(-|\d+)\s+(-|\d+)\s+(\d+)\s+(\d+)\s", line)
        if m and m.group(1).strip() in want:
            shown[m.group(1).strip()] = int(m.group(4)) + int(m.group(5))
    check(top.returncode == 0 and shown == want and not os.path.exists(os.path.join(tmp, "out8.lp")),
          "top --once -c with a Kafka source: every category's done + failed as summary counts them (%s; want %s)"
          % (shown, want))

sys.exit(finish())
