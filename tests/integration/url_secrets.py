#!/usr/bin/env python3
"""Credentials written into an InfluxDB URL never show, and never mangle
the request (issue 46 point 10), against a real influxd 1.x with
authentication on:

1. `?u=admin&p=SECRET` (a form 1.x documents): refused before anything is
   sent, naming the settings to use instead (`user`, `password`), exit 2;
   SECRET in no output of `lines` or `check` (it used to be printed whole,
   and the write path became `/?u=..&p=../write?db=`: 0 of 207 points
   stored while tasklens said "database not found").
2. A password holding `?`, `#`, `/`, `@` and `:` written as it is in the
   URL's user info: `lines` stores every task point of the demo log (the
   user info goes to libcurl's own options, never into the path), `check`
   passes, and no piece of the password is in any output.
3. With the server stopped, the outage messages name scheme://host:port
   only.

usage: url_secrets.py TASKLENS DEMO_LOG
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
import influxd_harness  # noqa: E402

TASKLENS, DEMO = sys.argv[1:3]
PASSWORD = "Pq7?Zx9#Wv3/Ku5@Ry2:%d" % os.getpid()


def q(db, query, user="admin", password=PASSWORD, dbname=None):
    params = {"q": query}
    if dbname:
        params["db"] = dbname
    req = urllib.request.Request(db.url + "/query", data=urllib.parse.urlencode(params).encode(), headers={
        "Authorization": "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def count(db):
    doc = q(db, "SELECT count(attempt) FROM task", dbname="d")
    series = doc["results"][0].get("series")
    return series[0]["values"][0][1] if series else 0


def pieces(secret):
    return [p for p in secret.replace("?", " ").replace("#", " ").replace("/", " ").replace("@", " ")
            .replace(":", " ").split() if len(p) >= 3] + [secret]


def main():
    want = sum(1 for x in subprocess.run([TASKLENS, "lines", DEMO], capture_output=True, text=True).stdout
               .splitlines() if x.startswith("task,"))
    with influxd_harness.Influxd(http_extra="auth-enabled = true") as db, \
            tempfile.TemporaryDirectory(prefix="tl-url-") as tmp:
        # the first admin user may be made without credentials
        data = urllib.parse.urlencode({"q": "CREATE USER admin WITH PASSWORD '%s' WITH ALL PRIVILEGES"
                                       % PASSWORD.replace("'", "\\'")}).encode()
        urllib.request.urlopen(db.url + "/query", data=data, timeout=30).read()
        q(db, "CREATE DATABASE d")
        host = db.url.split("://")[1]

        url = "http://%s?u=admin&p=SECRET%d" % (host, os.getpid())
        r = subprocess.run([TASKLENS, "lines", "--influx-url", url, "--influx-db", "d", "--spool-dir",
                            os.path.join(tmp, "sp1"), DEMO], capture_output=True, text=True, timeout=60)
        cfg = os.path.join(tmp, "q.yaml")
        with open(cfg, "w") as f:
            f.write("sources:\n  - type: file\n    path: %s\nsinks:\n  - type: influxdb\n    url: \"%s\"\n"
                    "    db: d\n    spool_dir: %s/sp2\n" % (DEMO, url, tmp))
        c = subprocess.run([TASKLENS, "check", "-c", cfg], capture_output=True, text=True, timeout=60)
        out = r.stdout + r.stderr + c.stdout + c.stderr
        check(r.returncode == 2 and "`user` and `password`" in r.stderr and "SECRET" not in out and c.returncode != 0,
              "credentials in the URL's query are refused (exit %d), naming `user` and `password`; the "
              "secret in no output: %s" % (r.returncode, r.stderr.strip()[-200:]))
        check(count(db) == 0, "and nothing was sent with them")

        url = "http://admin:%s@%s" % (PASSWORD, host)
        r = subprocess.run([TASKLENS, "lines", "--influx-url", url, "--influx-db", "d", "--spool-dir",
                            os.path.join(tmp, "sp3"), DEMO], capture_output=True, text=True, timeout=120)
        with open(cfg, "w") as f:
            f.write("sources:\n  - type: file\n    path: %s\nsinks:\n  - type: influxdb\n    url: \"%s\"\n"
                    "    db: d\n    spool_dir: %s/sp4\n" % (DEMO, url, tmp))
        c = subprocess.run([TASKLENS, "check", "-c", cfg], capture_output=True, text=True, timeout=60)
        out = r.stdout + r.stderr + c.stdout + c.stderr
        shown = [p for p in pieces(PASSWORD) if p in out]
        n = count(db)
        check(r.returncode == 0 and n == want and c.returncode == 0 and not shown,
              "a password with ? # / @ : in the URL's user info: %d of %d task points stored, check passes "
              "(exit %d), no piece of it shown (%s)" % (n, want, c.returncode, shown))

        db.kill()
        r = subprocess.run([TASKLENS, "lines", "--influx-url", url, "--influx-db", "d", "--spool-dir",
                            os.path.join(tmp, "sp5"), "--drain-timeout", "1", DEMO],
                           capture_output=True, text=True, timeout=120)
        shown = [p for p in pieces(PASSWORD) if p in r.stdout + r.stderr]
        check("http://%s" % host in r.stderr and not shown and "admin" not in r.stderr,
              "with the server down, the outage names http://%s only: %s" % (host, r.stderr.strip()[-200:]))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
