#!/usr/bin/env python3
"""The InfluxDB 2.x write API and the replies a real server will not give on
demand, against a loopback HTTP server that records what tasklens sends
(influx2_sink.py covers the real InfluxDB 2.7):
  - POST /api/v2/write?org=O&bucket=B&precision=ns with
    `Authorization: Token T` (T from $INFLUX_TOKEN), gzip bodies;
  - the token appears in no log line;
  - 429 with `Retry-After: 3` (seconds) and 503 with Retry-After as an
    HTTP-date: the next try waits at least that long (backoff alone would
    retry after ~0.5-1 s), and every point arrives exactly once;
  - 400 for a batch holding a line the server cannot parse (2.x then writes
    nothing of the batch): tasklens halves the batch until that line is
    alone, drops and counts only it, and every other point arrives;
  - 401 and 403 from 1.x and 2.x: kept in the spool, exit 1 at once, the
    setting to fix named.

usage: influx_protocol.py TASKLENS DEMO_LOG
"""
import email.utils
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from http_fakes import Server  # noqa: E402

TASKLENS, DEMO = sys.argv[1:3]
TOKEN = "s3cr3t-t0ken-%d" % os.getpid()


def points(text):
    return [ln for ln in text.splitlines() if ln.startswith("task,")]


def main():
    want = points(subprocess.run([TASKLENS, "lines", "--window", "0", "-q", DEMO], check=True,
                                 stdout=subprocess.PIPE, text=True).stdout)
    check(len(want) > 10, "the demo log gives %d task points" % len(want))
    # the date is made when the answer is: 4 s ahead, whole seconds
    answers = [(429, lambda: {"Retry-After": "3"}),
               (503, lambda: {"Retry-After": email.utils.formatdate(time.time() + 4, usegmt=True)})]
    with Server(answers) as srv, tempfile.TemporaryDirectory(prefix="tl-proto-") as tmp:
        env = dict(os.environ, INFLUX_TOKEN=TOKEN)
        r = subprocess.run([TASKLENS, "lines", "--window", "0", "--influx-url", srv.url,
                            "--influx-org", "my org", "--influx-bucket", "b/1", "--spool-dir",
                            os.path.join(tmp, "spool"), "--stats", os.path.join(tmp, "stats.json"), DEMO],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        reqs = srv.requests
        stats = json.load(open(os.path.join(tmp, "stats.json")))
    check(r.returncode == 0, "exit 0 (%s)" % r.stderr.strip()[-300:])
    check(len(reqs) >= 3, "%d requests: refused twice, then written" % len(reqs))
    if len(reqs) < 3:
        return finish()
    u = urllib.parse.urlsplit(reqs[0]["path"])
    q = urllib.parse.parse_qs(u.query)
    check(u.path == "/api/v2/write" and q == {"org": ["my org"], "bucket": ["b/1"], "precision": ["ns"]},
          "2.x write endpoint with org, bucket (escaped) and precision=ns: %s" % reqs[0]["path"])
    check(all(x["auth"] == "Token " + TOKEN for x in reqs), "Authorization: Token <$INFLUX_TOKEN> on every request")
    check(all(x["gzip"] for x in reqs), "gzip request bodies")
    check(TOKEN not in r.stderr and TOKEN not in r.stdout, "the token appears in no log line")
    gap1, gap2 = reqs[1]["t"] - reqs[0]["t"], reqs[2]["t"] - reqs[1]["t"]
    check(gap1 >= 2.9, "429 with Retry-After: 3 -> next try after %.2f s (>= 3)" % gap1)
    check(gap2 >= 2.9, "503 with Retry-After: <HTTP-date 4 s ahead, whole seconds> -> next try "
          "after %.2f s (>= 3)" % gap2)
    check(stats.get("retries") == 2, "2 retries counted (%s)" % stats.get("retries"))
    got = [ln for x in reqs[2:] for ln in points(x["body"])]
    check(sorted(got) == sorted(want) and reqs[0]["body"] == reqs[1]["body"] == reqs[2]["body"],
          "every point once after the retries (%d written, %d expected); the refused batch was sent "
          "again unchanged" % (len(got), len(want)))
    refused_line(want)
    credentials_refused()
    password_in_url()
    return finish()


def password_in_url():
    """No part of a password written in the URL shows, whatever it holds."""
    secret = "Pw/x@y:z%d" % os.getpid()
    pieces = [p for p in secret.replace("/", " ").replace("@", " ").replace(":", " ").split() if len(p) >= 2]
    with tempfile.TemporaryDirectory(prefix="tl-proto-") as tmp:
        url = "http://user:%s@127.0.0.1:9" % secret
        r = subprocess.run([TASKLENS, "lines", "--influx-url", url, "--influx-db", "d", "--spool-dir",
                            os.path.join(tmp, "sp"), "--drain-timeout", "0", DEMO], capture_output=True, text=True)
        cfg = os.path.join(tmp, "c.yaml")
        with open(cfg, "w") as f:
            f.write("sources:\n  - type: file\n    path: %s\nsinks:\n  - type: influxdb\n    url: %s\n"
                    "    db: d\n    spool_dir: %s/sp2\n" % (DEMO, url, tmp))
        c = subprocess.run([TASKLENS, "check", "-c", cfg], capture_output=True, text=True)
    out = r.stdout + r.stderr + c.stdout + c.stderr
    shown = [p for p in pieces if p in out]
    check(not shown and "127.0.0.1" in out, "a password with / @ : in the URL: no part of it in `lines` or `check` "
          "messages (shown: %s)" % shown)


def credentials_refused():
    """401 and 403, from 1.x and 2.x: the batch stays in the spool, `lines`
    ends at once with exit 1, and the message names the setting to fix."""
    cases = [(401, ["--influx-db", "d", "--influx-user", "u"], "`password`"),
             (403, ["--influx-db", "d", "--influx-user", "u"], "WRITE on database d"),
             (401, ["--influx-org", "o", "--influx-bucket", "b"], "`token`"),
             (403, ["--influx-org", "o", "--influx-bucket", "b"], "write access to bucket b")]
    for status, flags, want in cases:
        with Server([(status, dict)] * 50) as srv, tempfile.TemporaryDirectory(prefix="tl-proto-") as tmp:
            spool = os.path.join(tmp, "spool")
            t0 = time.time()
            r = subprocess.run([TASKLENS, "lines", "--influx-url", srv.url, *flags, "--spool-dir", spool, DEMO],
                               env=dict(os.environ, INFLUX_TOKEN=TOKEN, INFLUX_PASSWORD=TOKEN),
                               capture_output=True, text=True, timeout=120)
            took = time.time() - t0
            spooled = sum(os.path.getsize(os.path.join(spool, f)) for f in os.listdir(spool))
        check(r.returncode == 1 and want in r.stderr and "remain in the spool" in r.stderr and spooled > 0 and
              took < 30 and TOKEN not in r.stderr,
              "HTTP %d (%s): exit %d in %.1f s, the setting named (%s), %d bytes kept in the spool: %s" % (
                  status, "1.x" if "--influx-db" in flags else "2.x", r.returncode, took, want, spooled,
                  r.stderr.strip()[-240:]))


def refused_line(want):
    """A 2.x 400 refuses a whole batch: only the line it cannot take is lost."""
    bad = want[len(want) // 3]
    with Server([], refuse=bad) as srv, tempfile.TemporaryDirectory(prefix="tl-proto-") as tmp:
        r = subprocess.run([TASKLENS, "lines", "--window", "0", "--influx-url", srv.url, "--influx-org", "o",
                            "--influx-bucket", "b", "--spool-dir", os.path.join(tmp, "spool"),
                            "--stats", os.path.join(tmp, "stats.json"), DEMO],
                           env=dict(os.environ, INFLUX_TOKEN=TOKEN), capture_output=True, text=True, timeout=120)
        stats = json.load(open(os.path.join(tmp, "stats.json")))
        written = [ln for x in srv.requests if bad not in x["body"] for ln in points(x["body"])]
    check(r.returncode == 0 and "unable to parse" in r.stderr, "400 of a whole batch: exit 0, InfluxDB's "
          "reason said: %s" % r.stderr.strip()[-200:])
    check(sorted(written) == sorted(w for w in want if w != bad),
          "every other point written (%d of %d), the refused line alone is not" % (len(written), len(want) - 1))
    check(stats["points_dropped"] == 1 and stats["batches_split"] > 0,
          "1 point counted as refused after %d splits" % stats["batches_split"])


if __name__ == "__main__":
    sys.exit(main())
