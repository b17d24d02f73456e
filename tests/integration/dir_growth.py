#!/usr/bin/env python3
"""A `dir` source reads each task once when a file grows or is renamed
(issue 46 point 5):

1. A Work Queue log written in two halves, the second after the first had
   settled and been read: the new bytes only are read, through the parser's
   state, so tasks whose DONE is in the second half complete -- the task
   points equal `lines` on the whole log, and the cumulative counts are the
   tasks' (they were 280 for 206 tasks: the file read again from byte 0).
2. A Spark event log written as `app.inprogress`, then the rest, then
   renamed to `app` as Spark does: the renamed file is the same file (read
   on, never again from its start); task points and cumulative counts those
   of the whole log (they were 103 for 41 tasks).
3. A document format (an rmonitor summary) that grows is not read twice:
   said, once.

usage: dir_growth.py TASKLENS DEMO_LOG
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, resource_monitor  # noqa: E402

TL, DEMO = sys.argv[1:3]
SHARED = os.environ.get("TL_SHARED_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "..", "..", "..", "shared")


def points(text):
    return sorted(l for l in text.splitlines() if l.startswith("task,"))


def cumulative(text):
    """The last cumulative count of wall_time_s per category."""
    out = {}
    for l in text.splitlines():
        if l.startswith("task_quantiles,") and "metric=wall_time_s" in l and "window=cumulative" in l:
            cat = re.search(r"category=((?:\\.|[^,])*)", l).group(1)
            out[cat] = int(re.search(r"count=(\d+)i", l).group(1))
    return out


def start(tmp, name, d):
    out = os.path.join(tmp, name + ".lp")
    cfg = os.path.join(tmp, name + ".yaml")
    with open(cfg, "w") as f:
        f.write("sources:\n  - type: dir\n    path: %s\nsinks:\n  - type: file\n    path: %s\n"
                "flush_interval: 100\n" % (d, out))
    err = open(os.path.join(tmp, name + ".err"), "w")
    return subprocess.Popen([TL, "run", "-c", cfg], stderr=err), out, err.name


def wait_for(out, n, timeout=30):
    deadline = time.time() + timeout
    text = ""
    while time.time() < deadline:
        text = open(out).read() if os.path.exists(out) else ""
        if len(points(text)) >= n:
            break
        time.sleep(0.3)
    return text


def stop(p):
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)


def grow(tmp, name, src, first_name, final_name=None):
    whole = open(src, "rb").read()
    want_text = subprocess.run([TL, "lines", "-q", src], capture_output=True, text=True).stdout
    want, want_cum = points(want_text), cumulative(want_text)
    d = os.path.join(tmp, name)
    os.makedirs(d)
    half = whole.rfind(b"\n", 0, len(whole) // 2) + 1
    path = os.path.join(d, first_name)
    with open(path, "wb") as f:
        f.write(whole[:half])
    os.utime(path, (time.time() - 5, time.time() - 5))  # settled
    p, out, err = start(tmp, name, d)
    first = wait_for(out, 1)
    time.sleep(1.5)
    with open(path, "ab") as f:
        f.write(whole[half:])
    os.utime(path, (time.time() - 5, time.time() - 5))
    if final_name:
        time.sleep(1.5)
        os.rename(path, os.path.join(d, final_name))
    text = wait_for(out, len(want))
    time.sleep(3)  # a second read from byte 0 would show now
    stop(p)  # the cumulative points are written at the stop
    text = open(out).read()
    got = points(text)
    # the workflow tag of a trace is its file's name: compare without it
    strip = lambda ls: sorted(re.sub(r"workflow=[^, ]+", "workflow=W", l) for l in ls)  # noqa: E731
    return strip(got), strip(want), cumulative(text), want_cum, len(points(first)), open(err).read()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        got, want, cum, want_cum, first, err = grow(tmp, "wq", DEMO, "manager.log")
        check(first > 0 and got == want and cum == want_cum,
              "a Work Queue log grown after it was read: %d task points (lines: %d; %d after the first half), "
              "cumulative counts %s (want %s)" % (len(got), len(want), first, cum, want_cum))
        spark = os.path.join(SHARED, "spark", "samples", "local-1795570335358")
        if os.path.exists(spark):
            got, want, cum, want_cum, first, err = grow(tmp, "spark", spark, "app.inprogress", "app")
            check(first > 0 and got == want and cum == want_cum,
                  "Spark's app.inprogress grown then renamed to app: %d task points (lines: %d), cumulative "
                  "%s (want %s)" % (len(got), len(want), sum(cum.values()), sum(want_cum.values())))
        else:
            print("SKIP the Spark part: %s absent" % spark)
        d = os.path.join(tmp, "docs")
        os.makedirs(d)
        doc = os.path.join(d, "t.summary")
        body = resource_monitor(os.path.join(tmp, "t"), ["true"])
        if body:
            with open(doc, "wb") as f:
                f.write(body)
            os.utime(doc, (time.time() - 5, time.time() - 5))
            p, out, errf = start(tmp, "docs", d)
            wait_for(out, 1)
            with open(doc, "ab") as f:
                f.write(body)
            os.utime(doc, (time.time() - 5, time.time() - 5))
            time.sleep(3)
            stop(p)
            text, err = open(out).read(), open(errf).read()
            check(len(points(text)) == 1 and err.count("grew after it was read") == 1,
                  "a document that grows is not read twice, and that is said once (%d points): %s"
                  % (len(points(text)), " ".join(re.findall(r"[^\n]*grew after[^\n]*", err))[:200]))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
