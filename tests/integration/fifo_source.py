#!/usr/bin/env python3
"""The `fifo` source (pipeline/src_fifo.c), the example of issue 31 point 5:
a source added as one file plus its registry line, working end to end.

1. Two writers, one after the other, write the bundled Work Queue log into
   a named pipe (cut in the middle of a line); `tasklens run` reads both
   (a closing writer is not the end) and writes exactly the task points of
   `tasklens lines` on the same log; SIGTERM stops it with exit 0.
2. `follow: false`: the first writer's end ends the run by itself.
3. `tasklens check` says the path is a named pipe, and a regular file is not.

usage: fifo_source.py TASKLENS DEMO_LOG
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

CONFIG = """\
sources:
  - type: fifo
    path: {fifo}
    parser: wq
    follow: {follow}
sinks:
  - type: file
    path: {out}
flush_interval: 100
"""


def task_lines(path):
    with open(path) as f:
        return sorted(l for l in f.read().splitlines() if l.startswith("task,"))


def write_to(fifo, data):
    with open(fifo, "wb") as f:  # blocks until tasklens has the read end open
        f.write(data)


def config(tmp, name, follow):
    fifo = os.path.join(tmp, name + ".fifo")
    out = os.path.join(tmp, name + ".lp")
    os.mkfifo(fifo)
    cfg = os.path.join(tmp, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(CONFIG.format(fifo=fifo, out=out, follow=follow))
    return fifo, out, cfg


def main():
    tasklens, demo = sys.argv[1:3]
    with open(demo, "rb") as f:
        log = f.read()
    want = sorted(l for l in subprocess.run([tasklens, "lines", demo], capture_output=True,
                                            text=True, check=True).stdout.splitlines()
                  if l.startswith("task,"))
    with tempfile.TemporaryDirectory() as tmp:
        fifo, out, cfg = config(tmp, "two", "true")
        p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
        cut = len(log) // 2 + 17
        write_to(fifo, log[:cut])
        write_to(fifo, log[cut:])
        deadline = time.time() + 20
        while time.time() < deadline and len(task_lines(out) if os.path.exists(out) else []) < len(want):
            time.sleep(0.1)
        check(p.poll() is None, "a closing writer does not end a followed fifo")
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=30)[1]
        check(p.returncode == 0, "SIGTERM: exit 0 (%s; %s)" % (p.returncode, err.strip()[-300:]))
        got = task_lines(out)
        check(got == want, "two writers: the task points of one `lines` pass (%d vs %d)"
              % (len(got), len(want)))

        fifo, out, cfg = config(tmp, "once", "false")
        p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)  # tasklens waits for a writer, and does not take "none yet" for an end
        check(p.poll() is None, "follow: false waits for the first writer")
        write_to(fifo, log)
        try:
            err = p.communicate(timeout=30)[1]
        except subprocess.TimeoutExpired:
            p.kill()
            err = p.communicate()[1]
        check(p.returncode == 0, "follow: false ends by itself when the writer closes (%s)"
              % p.returncode)
        got = task_lines(out)
        check(got == want, "follow: false: every task point (%d vs %d)" % (len(got), len(want)))

        r = subprocess.run([tasklens, "check", "-c", cfg], capture_output=True, text=True)
        check("a named pipe" in r.stdout, "check: the path is a named pipe (%r)" % r.stdout)
        os.unlink(fifo)
        open(fifo, "w").close()
        r = subprocess.run([tasklens, "check", "-c", cfg], capture_output=True, text=True)
        check(r.returncode == 1 and "not a named pipe" in r.stdout,
              "check: a regular file is not a named pipe (exit %d)" % r.returncode)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
