#!/usr/bin/env python3
"""tasklens against a real InfluxDB 2.7 (/api/v2/write, token from the
environment), built once per machine by scripts/build-influxd2.sh:

1. `lines`: every point of the demo log arrives, each task point with its
   values; a second run changes nothing (idempotent timestamps);
2. a field-type conflict (2.x answers 422 "partial write"): the conflicting
   points are counted as refused, said once, and every other point of the
   batch is written (before: 422 was fatal and `lines` waited out its drain);
3. a bad token (401) and a missing bucket (404): a clear error that names
   the bucket and never the token, the batch kept in the spool, exit 1 at
   once; with the token fixed / the bucket created, the next run delivers
   all of it;
4. an outage: influxd killed for >= 8 s while 50k lines flow through
   `lines -`, then started again: every task arrives exactly once, the spool
   grows and drains to zero;
5. `run` with a YAML sink whose token is ${INFLUX_TOKEN}, and `check -c`:
   reachable and writable with the right token; a bad token or a missing
   bucket is a failed check with a clear message.

usage: influx2_sink.py TASKLENS GEN_WQ DEMO_LOG
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
import influxd2_harness  # noqa: E402

TASKLENS, GEN, DEMO = sys.argv[1:4]


def flux_count(db, bucket, measurement="task", field="attempt"):
    t = db.flux('from(bucket: "%s") |> range(start: 0) |> filter(fn: (r) => r._measurement == "%s" and '
                'r._field == "%s") |> group() |> count()' % (bucket, measurement, field))
    return int(t[0][0]["_value"]) if t else 0


def lines(db, bucket, spool, stats, *extra, token=None, inp=DEMO, **kw):
    env = dict(os.environ, INFLUX_TOKEN=token or db.token)
    return subprocess.run([TASKLENS, "lines", "--influx-url", db.url, "--influx-org", db.org,
                           "--influx-bucket", bucket, "--spool-dir", spool, "--stats", stats, *extra, inp],
                          env=env, capture_output=True, text=True, timeout=300, **kw)


def spool_bytes(d):
    return sum(os.path.getsize(f) for f in glob.glob(os.path.join(d, "seg-*.tls")))


def task_points(lp):
    """{(series, time): wall_time_s} of the task points in line protocol."""
    out = {}
    for ln in lp.splitlines():
        if ln.startswith("task,"):
            series, fields, t = ln.rsplit(" ", 2)
            wall = [f.split("=")[1] for f in fields.split(",") if f.startswith("wall_time_s=")]
            out[(series, int(t))] = float(wall[0]) if wall else None
    return out


def round_trip(db, tmp):
    want = task_points(subprocess.run([TASKLENS, "lines", DEMO], capture_output=True, text=True).stdout)
    spool, stats = os.path.join(tmp, "sp-rt"), os.path.join(tmp, "rt.json")
    r = lines(db, db.bucket, spool, stats)
    check(r.returncode == 0 and not r.stderr.strip(), "lines -> 2.7: exit 0 %s" % r.stderr[-300:])
    rows = db.flux('from(bucket: "%s") |> range(start: 0) |> filter(fn: (r) => r._measurement == "task" and '
                   'r._field == "wall_time_s") |> group() |> keep(columns: ["_time", "_value", "category"])'
                   % db.bucket)
    got = sorted(float(x["_value"]) for t in rows for x in t)
    wants = sorted(v for v in want.values() if v is not None)
    check(got == wants, "every task point's wall time arrived: %d of %d" % (len(got), len(wants)))
    n = flux_count(db, db.bucket)
    check(n == len(want), "%d task points == %d written" % (n, len(want)))
    r = lines(db, db.bucket, spool, stats)
    check(r.returncode == 0 and flux_count(db, db.bucket) == n, "a second run changes nothing (%d)" % n)


def type_conflict(db, tmp):
    db.create_bucket("conflict")
    lp = subprocess.run([TASKLENS, "lines", DEMO], capture_output=True, text=True).stdout
    first = next(ln for ln in lp.splitlines() if ln.startswith("task,") and "wall_time_s=" in ln)
    t = int(first.rsplit(" ", 1)[1])
    db.write(b'task,source=wq wall_time_s="text" %d\n' % t, bucket="conflict")  # the field is a string now
    spool, stats = os.path.join(tmp, "sp-conf"), os.path.join(tmp, "conf.json")
    t0 = time.time()
    r = lines(db, "conflict", spool, stats)
    st = json.load(open(stats))
    with_wall = sum(1 for ln in lp.splitlines() if ln.startswith("task,") and "wall_time_s=" in ln)
    total = sum(1 for ln in lp.splitlines() if ln.strip())
    check(r.returncode == 0 and time.time() - t0 < 30, "422 partial write: exit %d after %.1f s (no waiting "
          "out the drain)" % (r.returncode, time.time() - t0))
    check(st["points_dropped"] == with_wall and st["points_acked"] == total - with_wall,
          "the %d points with a float wall_time_s counted as refused, %d acknowledged (%s)" % (
              with_wall, total - with_wall, {k: st[k] for k in ("points_dropped", "points_acked")}))
    check(r.stderr.count("refused points") == 1 and "field type conflict" in r.stderr,
          "said once, with InfluxDB's reason: %s" % r.stderr.strip()[:200])
    n_q = flux_count(db, "conflict", "task_quantiles", "count")
    want_q = sum(1 for ln in lp.splitlines() if ln.startswith("task_quantiles,"))
    no_wall = sum(1 for ln in lp.splitlines() if ln.startswith("task,") and "wall_time_s=" not in ln)
    check(n_q == want_q and flux_count(db, "conflict") == no_wall,
          "everything else of the batch was written: %d/%d quantile points, %d task points without "
          "wall time" % (n_q, want_q, no_wall))


def beyond_retention(db, tmp):
    """A bucket whose retention (1 h) is shorter than the log's age: 2.7
    answers 422 for the old points; exactly they are counted, said, not
    resent; the self-metrics point (now) is stored."""
    db.create_bucket("ret", retention_s=3600)
    old = [x for x in subprocess.run([TASKLENS, "lines", DEMO], capture_output=True, text=True).stdout.splitlines()
           if x and not x.startswith("tasklens,")]
    spool, stats = os.path.join(tmp, "sp-ret"), os.path.join(tmp, "ret.json")
    r = lines(db, "ret", spool, stats)
    st = json.load(open(stats))
    check(r.returncode == 0 and "retention" in r.stderr and st["points_dropped"] == len(old) and
          st["retries"] == 0 and spool_bytes(spool) == 0 and flux_count(db, "ret") == 0 and
          flux_count(db, "ret", "tasklens", "lines") == 1,
          "beyond retention: %d points dropped and counted (want %d), %d retries, the self-metrics "
          "stored: %s" % (st["points_dropped"], len(old), st["retries"], r.stderr.strip()[-200:]))


def operator_errors(db, tmp):
    want = len(task_points(subprocess.run([TASKLENS, "lines", DEMO], capture_output=True, text=True).stdout))
    bad = "bad-token-%d" % os.getpid()
    spool, stats = os.path.join(tmp, "sp-401"), os.path.join(tmp, "401.json")
    t0 = time.time()
    r = lines(db, "auth", spool, stats, token=bad)
    check(r.returncode == 1 and "401" in r.stderr and "remain in the spool" in r.stderr and
          time.time() - t0 < 30, "bad token: exit 1 within %.1f s, HTTP 401 said, batch kept: %s" % (
              time.time() - t0, r.stderr.strip()[-200:]))
    check(bad not in r.stderr + r.stdout, "the token appears in no message")
    check(spool_bytes(spool) > 0, "the refused batch is in the spool (%d bytes)" % spool_bytes(spool))
    db.create_bucket("auth")
    r = lines(db, "auth", spool, stats, "--drain-timeout", "30", inp="/dev/null")
    check(r.returncode == 0 and flux_count(db, "auth") == want and spool_bytes(spool) == 0,
          "token fixed: the next run delivers the spooled batch (%d of %d task points)" % (
              flux_count(db, "auth"), want))

    spool, stats = os.path.join(tmp, "sp-404"), os.path.join(tmp, "404.json")
    r = lines(db, "missing", spool, stats)
    check(r.returncode == 1 and 'bucket not found in org %s' % db.org in r.stderr and
          "influx bucket create --name missing" in r.stderr,
          "missing bucket: exit 1, names the bucket and how to create it: %s" % r.stderr.strip()[-300:])
    db.create_bucket("missing")
    r = lines(db, "missing", spool, stats, inp="/dev/null")
    check(r.returncode == 0 and flux_count(db, "missing") == want,
          "bucket created: the next run delivers the spooled batch (%d of %d)" % (flux_count(db, "missing"), want))


def outage(db, tmp, n_tasks=10000):
    db.create_bucket("outage")
    spool, stats = os.path.join(tmp, "sp-out"), os.path.join(tmp, "out.json")
    data = subprocess.run([GEN, str(n_tasks), "4", "7"], check=True, stdout=subprocess.PIPE).stdout
    env = dict(os.environ, INFLUX_TOKEN=db.token)
    p = subprocess.Popen([TASKLENS, "lines", "--influx-url", db.url, "--influx-org", db.org,
                          "--influx-bucket", "outage", "--spool-dir", spool, "--stats", stats, "--window", "0",
                          "--influx-timeout", "1000", "--drain-timeout", "120", "-"],
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    chunks, peak = 30, 0
    step = len(data) // chunks + 1
    for i in range(chunks):
        if i == 6:
            db.proc.kill()
            db.proc.wait()
            down_at = time.time()
        if i == 24:
            while time.time() - down_at < 8:
                time.sleep(0.1)
            db.launch()
        p.stdin.write(data[i * step:(i + 1) * step])
        p.stdin.flush()
        time.sleep(0.4)
        peak = max(peak, spool_bytes(spool))
    p.stdin.close()
    err = p.stderr.read().decode()
    rc = p.wait(300)
    st = json.load(open(stats))
    n = flux_count(db, "outage")
    check(rc == 0, "outage: exit 0 %s" % err.strip()[-200:])
    check(n == n_tasks, "outage: %d of %d tasks in InfluxDB 2.7, exactly once" % (n, n_tasks))
    check(st["batches_spooled"] > 0 and peak > 0 and st["retries"] > 0,
          "outage: the spool grew (peak %d bytes, %d batches, %d retries)" % (peak, st["batches_spooled"],
                                                                            st["retries"]))
    check(st["spool_bytes"] == 0 and spool_bytes(spool) == 0, "outage: and drained to zero")


def run_and_check(db, tmp):
    db.create_bucket("run")
    cfg = os.path.join(tmp, "run.yaml")

    def config(bucket):
        with open(cfg, "w") as f:
            f.write(f"""sources:
  - type: file
    path: {DEMO}
    parser: wq
sinks:
  - type: influxdb
    url: {db.url}
    org: {db.org}
    bucket: {bucket}
    token: ${{INFLUX_TOKEN}}
    spool_dir: {tmp}/sp-run
checkpoint_dir: {tmp}/ck-run
flush_interval: 200
quiet: true
""")
    config("run")
    env = dict(os.environ, INFLUX_TOKEN=db.token)
    r = subprocess.run([TASKLENS, "check", "-c", cfg], env=env, capture_output=True, text=True)
    check(r.returncode == 0 and "bucket run accepts writes" in r.stdout, "check: 2.7 reachable and the bucket "
          "accepts writes: %s" % (r.stdout + r.stderr).strip()[-300:])
    r = subprocess.run([TASKLENS, "check", "-c", cfg], env=dict(env, INFLUX_TOKEN="nope-token"),
                       capture_output=True, text=True)
    out = r.stdout + r.stderr
    check(r.returncode != 0 and "401" in out and "nope-token" not in out,
          "check: a bad token fails the check with HTTP 401, token not shown: %s" % out.strip()[-200:])
    config("absent")
    r = subprocess.run([TASKLENS, "check", "-c", cfg], env=env, capture_output=True, text=True)
    out = r.stdout + r.stderr
    check(r.returncode != 0 and "absent" in out and "404" in out,
          "check: a missing bucket fails the check and is named: %s" % out.strip()[-200:])
    config("run")
    want = len(task_points(subprocess.run([TASKLENS, "lines", DEMO], capture_output=True, text=True).stdout))
    p = subprocess.Popen([TASKLENS, "run", "-c", cfg], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and flux_count(db, "run") < want:
        time.sleep(0.3)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    check(p.returncode == 0 and flux_count(db, "run") == want,
          "run (token from ${INFLUX_TOKEN}): %d of %d task points, exit %d %s" % (
              flux_count(db, "run"), want, p.returncode, err[-200:]))
    n_self = flux_count(db, "run", "tasklens", "lines")
    check(n_self > 0 and db.token not in err, "run: self-metrics written (%d points), token in no message" % n_self)


def main():
    if not influxd2_harness.binary():
        print("SKIP: influxd 2.7 is not built (bash scripts/build-influxd2.sh)")
        return 77
    with influxd2_harness.Influxd2() as db, tempfile.TemporaryDirectory(prefix="tl-influx2-") as tmp:
        round_trip(db, tmp)
        type_conflict(db, tmp)
        beyond_retention(db, tmp)
        operator_errors(db, tmp)
        run_and_check(db, tmp)
        outage(db, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
