#!/usr/bin/env python3
"""InfluxDB 2.x refusals keep the data and are said while `run` runs
(issue 46 points 1-2), against a real InfluxDB 2.7 (the harness of
influx2_sink.py):

1. `org: ""` (what an unset ${INFLUX_ORG:-} gives) fails validation, naming
   `org`, in `run -c` and in `lines --influx-org ""`; the real 2.7 answers an
   org-less write 400 "Please provide either orgID or org" -- a refusal of
   the request, not of a line.
2. A 400 about the request (that very answer, replayed by a loopback
   stand-in for a while): nothing is dropped; `run` says the refusal once,
   naming `org`, while it goes on; says once when writes go through again;
   every task arrives.
3. A missing bucket on the real 2.7 while `run` runs: said once while it
   runs (not only at its exit), and once when the bucket is created; every
   task of the demo log arrives, exactly once.

usage: influx2_refusals.py TASKLENS DEMO_LOG
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from http_fakes import Server  # noqa: E402
import influxd2_harness  # noqa: E402

TASKLENS, DEMO = sys.argv[1:3]
ORGLESS = "Please provide either orgID or org"


def config(path, url, org, bucket, tmp, name):
    with open(path, "w") as f:
        f.write(f"""sources:
  - type: file
    path: {DEMO}
    parser: wq
sinks:
  - type: influxdb
    url: {url}
    org: "{org}"
    bucket: {bucket}
    token: ${{INFLUX_TOKEN}}
    spool_dir: {tmp}/sp-{name}
checkpoint_dir: {tmp}/ck-{name}
flush_interval: 200
aggregate: {{window: 0}}
""")


def want_tasks():
    out = subprocess.run([TASKLENS, "lines", DEMO], capture_output=True, text=True).stdout
    return sum(1 for x in out.splitlines() if x.startswith("task,"))


def flux_count(db, bucket):
    t = db.flux('from(bucket: "%s") |> range(start: 0) |> filter(fn: (r) => r._measurement == "task" and '
                'r._field == "attempt") |> group() |> count()' % bucket)
    return int(t[0][0]["_value"]) if t else 0


def empty_org(db, tmp):
    cfg = os.path.join(tmp, "empty.yaml")
    config(cfg, db.url, "", "tl", tmp, "empty")
    r = subprocess.run([TASKLENS, "run", "-c", cfg], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, INFLUX_TOKEN=db.token))
    check(r.returncode == 2 and "`org` is empty" in r.stderr,
          "run -c with org: \"\" refuses to start, naming `org` (exit %d): %s" % (r.returncode, r.stderr.strip()[-200:]))
    r = subprocess.run([TASKLENS, "lines", "--influx-url", db.url, "--influx-org", "", "--influx-bucket", "tl", DEMO],
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, INFLUX_TOKEN=db.token))
    check(r.returncode == 2 and "`org` is empty" in r.stderr,
          "lines --influx-org \"\" refuses too (exit %d): %s" % (r.returncode, r.stderr.strip()[-200:]))
    try:
        db.request("POST", "/api/v2/write?bucket=tl", "m v=1 1700000000000000000", raw=True)
        said = ""
    except influxd2_harness.HTTPError as e:
        said = "%d %s" % (e.status, e.body)
    check(said.startswith("400") and ORGLESS in said and "unable to parse" not in said,
          "the real 2.7 answers an org-less write 400 \"%s\", about the request: %s" % (ORGLESS, said[:160]))


def wait_text(path, pattern, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = open(path).read() if os.path.exists(path) else ""
        if re.search(pattern, text):
            return text
        time.sleep(0.2)
    return open(path).read() if os.path.exists(path) else ""


def request_refused(tmp):
    want = want_tasks()
    with Server() as srv:
        srv.bad_request = ORGLESS
        cfg = os.path.join(tmp, "fake.yaml")
        config(cfg, srv.url, "tasklens", "tl", tmp, "fake")
        err = os.path.join(tmp, "fake.err")
        with open(err, "w") as ef:
            p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stdout=subprocess.DEVNULL, stderr=ef,
                                 env=dict(os.environ, INFLUX_TOKEN="t0k"))
        text = wait_text(err, r"refused the request \(HTTP 400", 30)
        refusal = re.findall(r"refused the request \(HTTP 400[^\n]*", text)
        check(p.poll() is None and len(refusal) == 1 and "`org`" in refusal[0],
              "a 400 about the request is said once while run goes on, naming `org`: %s" % refusal[:1])
        time.sleep(2)
        srv.bad_request = None
        text = wait_text(err, r"takes the points again", 30)
        deadline = time.time() + 60
        got = set()
        while time.time() < deadline:
            got = {ln for ln in srv.written().splitlines() if ln.startswith("task,")}
            if len(got) >= want:
                break
            time.sleep(0.3)
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
        text = open(err).read()
        check(text.count("refused the request (HTTP 400") == 1 and text.count("takes the points again") == 1,
              "said once when it starts and once when it clears (%d, %d)"
              % (text.count("refused the request (HTTP 400"), text.count("takes the points again")))
        check(len(got) == want and "dropped" not in text,
              "nothing dropped: %d of %d tasks arrive once the request is taken" % (len(got), want))


def missing_bucket(db, tmp):
    want = want_tasks()
    cfg = os.path.join(tmp, "later.yaml")
    config(cfg, db.url, db.org, "later", tmp, "later")
    err = os.path.join(tmp, "later.err")
    with open(err, "w") as ef:
        p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stdout=subprocess.DEVNULL, stderr=ef,
                             env=dict(os.environ, INFLUX_TOKEN=db.token))
    text = wait_text(err, r"bucket not found", 30)
    check(p.poll() is None and text.count("bucket not found") == 1 and "later" in text,
          "a missing bucket on the real 2.7 is said while run runs, once: %s"
          % (re.findall(r"[^\n]*bucket not found[^\n]*", text)[:1]))
    time.sleep(2)
    db.create_bucket("later")
    text = wait_text(err, r"takes the points again", 60)
    deadline = time.time() + 90
    n = 0
    while time.time() < deadline:
        n = flux_count(db, "later")
        if n >= want:
            break
        time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
    text = open(err).read()
    check(text.count("bucket not found") == 1 and text.count("takes the points again") == 1 and n == want,
          "once the bucket is created: said once, and all %d of %d tasks arrive (%d refusal lines)"
          % (n, want, text.count("bucket not found")))


def main():
    if not influxd2_harness.binary():
        print("SKIP: influxd 2.7 is not built (bash scripts/build-influxd2.sh)")
        return 77
    with influxd2_harness.Influxd2() as db, tempfile.TemporaryDirectory(prefix="tl-refuse-") as tmp:
        empty_org(db, tmp)
        request_refused(tmp)
        missing_bucket(db, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
