#!/usr/bin/env python3
"""Two tasklens instances in one consumer group, against a real broker.

Four managers' transaction logs (keys mgrA..mgrD, one per partition of a
4-partition topic, a `workflow` header on every message) are produced in two
halves. Instances A and B share the group and a compacted state topic:

  - the partitions split between them while the first halves are read;
  - B stops; A takes B's partitions over *from the state topic* (parser
    streams and sketches), then reads the second halves: tasks that started
    in B's half and end in A's are whole, so the union of both outputs
    equals, per manager, `tasklens lines` on that manager's file -- no task
    lost, none rejected, none invented;
  - the header became a tag on every task point;
  - A's last `scope=global` quantiles equal those of a single instance S
    that read everything alone, and S's global quantiles equal its own local
    cumulative ones: merging per-partition sketches counts every task once.

usage: kafka_group.py TASKLENS DATA_DIR SHARED_DIR
"""
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

TASKLENS, DATA, SHARED = sys.argv[1:4]


def task_points(text, keep=None):
    out = set()
    for line in text.splitlines():
        if line.startswith("task,") and (keep is None or keep in line):
            out.add(re.sub(r",(manager|workflow)=[^,= ]*", "", line))
    return out


demo = os.path.join(DATA, "wq", "demo-cctools-9.9.log")
big = os.path.join(SHARED, "wq", "samples", "ccl_taskvine-logs__colmena_wq.txn.log")
if not os.path.exists(big):
    print("SKIP the real colmena log: %s absent; using the bundled log for every manager" % big)
    big = demo
logs = {"mgrA": demo, "mgrB": big, "mgrC": big, "mgrD": demo}
expect = {}
for key, path in logs.items():
    r = subprocess.run([TASKLENS, "lines", "--format-in", "wq", "-q", path], capture_output=True, text=True)
    expect[key] = task_points(r.stdout)
    if not expect[key]:
        fail("no expected task points for %s" % key)


def halves(path):
    with open(path, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    mid = len(lines) // 2
    msgs = lambda ls: [b"".join(ls[i:i + 20]) for i in range(0, len(ls), 20)]
    return msgs(lines[:mid]), msgs(lines[mid:])


def config(path, k, group, out, ckdir, instance):
    with open(path, "w") as f:
        f.write(f"""sources:
  - type: kafka
    brokers: {k.bootstrap}
    topics: wq4
    group: {group}
    parser: wq
    key_tag: manager
    header_tags: workflow
    state_topic: tasklens-state
    properties:
      fetch.wait.max.ms: "50"
      session.timeout.ms: "6000"
      heartbeat.interval.ms: "500"
sinks:
  - type: file
    path: {out}
checkpoint_dir: {ckdir}
checkpoint_interval: 1
cumulative_interval: 1
flush_interval: 200
instance: {instance}
aggregate: {{window: 0}}
""")


def run(cfg):
    p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stdout=subprocess.DEVNULL,
                         stderr=open(cfg + ".err", "w"))
    p.errpath = cfg + ".err"
    return p


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=90)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        fail("tasklens did not stop on SIGTERM")
    err = read(p.errpath)
    if p.returncode != 0:
        fail("tasklens exited %s: %s" % (p.returncode, err[-2000:]))
    return err


def read(path):
    return open(path).read() if os.path.exists(path) else ""


def wait_for(outs, want, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = "".join(read(o) for o in outs)
        if all(task_points(text, ",manager=%s," % key) >= pts for key, pts in want.items()):
            return True
        time.sleep(0.3)
    return False


def holding(err):
    """The partitions a member holds after its log's rebalances: each
    assignment adds one, a revocation (eager: all of them) clears them."""
    held = set()
    for m in re.finditer(r"kafka: assigned wq4/(\d+)|kafka: (?:the|one of the) partitions? revoked", err):
        if m.group(1) is None:
            held.clear()
        else:
            held.add(int(m.group(1)))
    return held


def final_global(text):
    """series -> fields of the newest scope=global points."""
    pts = [l for l in text.splitlines() if l.startswith("task_quantiles,") and ",scope=global" in l]
    if not pts:
        return {}
    tmax = max(int(l.rsplit(" ", 1)[1]) for l in pts)
    out = {}
    for l in pts:
        head, fields, ts = l.rsplit(" ", 2)
        if int(ts) == tmax:
            out[head.replace(",scope=global", "")] = fields
    return out


def local_cumulative(text):
    out = {}
    for l in text.splitlines():
        if l.startswith("task_quantiles,") and ",scope=" not in l and ",window=cumulative" in l:
            head, fields, _ = l.rsplit(" ", 2)
            out[head] = fields
    return out


tmp = tempfile.mkdtemp(prefix="tl-kafka-group-")
with kafka_harness.Kafka(partitions=4) as k:
    parts = {key: halves(path) for key, path in logs.items()}
    k.produce("wq4", [b"#\n"], key=b"mgrA", partition=0)  # the topic, before anyone subscribes

    A = [os.path.join(tmp, n) for n in ("a.yaml", "a.lp", "ck-a")]
    B = [os.path.join(tmp, n) for n in ("b.yaml", "b.lp", "ck-b")]
    config(A[0], k, "gg", A[1], A[2], "inst-a")
    config(B[0], k, "gg", B[1], B[2], "inst-b")
    pa = run(A[0])
    time.sleep(2)
    pb = run(B[0])
    # the data goes in once both members hold partitions (B's first assignment
    # alone does not prove A is still in the group: it may hold all four)
    deadline = time.time() + 60
    while time.time() < deadline:
        ha, hb = holding(read(pa.errpath)), holding(read(pb.errpath))
        if ha and hb and not ha & hb and len(ha | hb) == 4:
            break
        time.sleep(0.2)
    else:
        fail("the group never split the partitions: A holds %s, B holds %s" % (sorted(ha), sorted(hb)))
    time.sleep(1)
    for i, key in enumerate(logs):
        k.produce("wq4", parts[key][0], key=key.encode(), partition=i, headers={"workflow": "wf-" + key})
    first = {}
    for key in logs:
        half = os.path.join(tmp, key + ".half.log")
        with open(half, "wb") as f:
            f.write(b"".join(parts[key][0]))
        r = subprocess.run([TASKLENS, "lines", "--format-in", "wq", "-q", half], capture_output=True,
                           text=True)
        first[key] = task_points(r.stdout)
    if not wait_for([A[1], B[1]], first):
        fail("the first halves were not all read")
    time.sleep(2.5)  # a checkpoint: B's partitions' state published
    errb = stop(pb)
    a_keys = {m for m in re.findall(r",manager=(mgr\w)", read(A[1]))}
    b_keys = {m for m in re.findall(r",manager=(mgr\w)", read(B[1]))}
    if not a_keys or not b_keys:
        fail("the partitions did not split: A read %s, B read %s" % (sorted(a_keys), sorted(b_keys)))
    else:
        check(True, "partitions split: A read %s, B read %s" % (sorted(a_keys), sorted(b_keys)))

    for i, key in enumerate(logs):
        k.produce("wq4", parts[key][1], key=key.encode(), partition=i, headers={"workflow": "wf-" + key})
    if not wait_for([A[1], B[1]], expect):
        fail("after B stopped, A did not read everything")
    time.sleep(2.5)
    erra = stop(pa)
    text = read(A[1]) + read(B[1])
    for key, pts in expect.items():
        got = task_points(text, ",manager=%s," % key)
        if got != pts:
            fail("%s: %d task points, expected %d (missing %d, extra %d)" % (
                key, len(got), len(pts), len(pts - got), len(got - pts)))
        else:
            check(True, "%s: %d task points equal `tasklens lines` on its file" % (key, len(got)))
    if not re.search(r"taken over from inst-b", erra):
        fail("A did not report taking B's partitions over:\n" + erra[-3000:])
    else:
        check(True, "A took over from the state topic: %s" % (re.findall(r"kafka:wq4/\d+: taken over[^\n]*", erra),))
    rej = re.findall(r"kafka:wq4/\d+@\d+[^\n]*", erra + errb)
    if rej:
        fail("rejected messages: %s" % rej[:5])
    untagged = [l for l in text.splitlines() if l.startswith("task,") and ",workflow=wf-mgr" not in l]
    if not text.count("\ntask,"):
        fail("no task points at all")
    elif untagged:
        fail("%d task points without the workflow header tag, e.g. %s" % (len(untagged), untagged[0]))
    else:
        check(True, "every task point carries the workflow header as a tag")

    S = [os.path.join(tmp, n) for n in ("s.yaml", "s.lp", "ck-s")]
    config(S[0], k, "gs", S[1], S[2], "inst-s")
    ps = run(S[0])
    if not wait_for([S[1]], expect):
        fail("the single instance did not read everything")
    time.sleep(2.5)
    stop(ps)
    ga, gs, ls = final_global(read(A[1])), final_global(read(S[1])), local_cumulative(read(S[1]))
    if not gs:
        fail("no scope=global quantiles from the single instance")
    elif ga != gs:
        diff = [h for h in set(ga) | set(gs) if ga.get(h) != gs.get(h)]
        fail("global quantiles of the two-instance group differ from a single instance in %d of %d "
             "series, e.g. %s\n  A: %s\n  S: %s" % (len(diff), len(gs), diff[0], ga.get(diff[0]), gs.get(diff[0])))
    else:
        check(True, "A's last global quantiles equal a single instance's (%d series)" % len(gs))
    if gs and gs != ls:
        diff = [h for h in set(ls) | set(gs) if ls.get(h) != gs.get(h)]
        fail("merged partition sketches differ from the instance's own in %d series, e.g. %s\n"
             "  global: %s\n  local:  %s" % (len(diff), diff[0], gs.get(diff[0]), ls.get(diff[0])))
    elif gs:
        check(True, "merged per-partition sketches equal the single aggregator (%d series)" % len(ls))

sys.exit(finish())
