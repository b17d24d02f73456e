#!/usr/bin/env python3
"""One door into a parser (parsers/drive.c, issue 41 point 1): a batch
command and `run` (a file read once, a followed file) choose the parser the
same way and refuse what no parser recognizes the same way.

1. Input no parser recognizes: `summary` exits non-zero and says "format
   not recognized"; `run` over the same file (read once) says it too and
   writes no task point (it used to read it silently as a Work Queue log,
   one rejected line per line).
2. A followed file whose first bytes are too few to recognize (a manager
   that has written "# tim" so far) is held, not guessed: once the rest is
   written, `run` writes exactly the task points of `lines` on the whole
   log, and says while it waits.
3. The same Work Queue log read by `lines` and by `run` (read once) gives
   the same task points.
4. An empty input (a file, stdin) has nothing to recognize: zero lines,
   exit 0, no probe handed a null buffer (UBSan caught that once).

usage: one_door.py TASKLENS DEMO_LOG
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
  - type: file
    path: {path}
    follow: {follow}
sinks:
  - type: file
    path: {out}
flush_interval: 100
"""


def task_lines(text):
    return sorted(l for l in text.splitlines() if l.startswith("task,"))


def write_config(tmp, name, path, follow):
    out = os.path.join(tmp, name + ".lp")
    cfg = os.path.join(tmp, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(CONFIG.format(path=path, out=out, follow=follow))
    return cfg, out


def main():
    tasklens, demo = sys.argv[1:3]
    with open(demo, "rb") as f:
        log = f.read()
    expected = task_lines(subprocess.run([tasklens, "lines", "-q", demo], capture_output=True,
                                         text=True, check=True).stdout)
    check(len(expected) > 100, "lines on the demo log writes its %d task points" % len(expected))
    with tempfile.TemporaryDirectory() as tmp:
        garbage = os.path.join(tmp, "notes.txt")
        with open(garbage, "w") as f:
            f.write("these are someone's notes\nnot a trace of anything\n")
        r = subprocess.run([tasklens, "summary", garbage], capture_output=True, text=True)
        check(r.returncode != 0 and "format not recognized" in r.stderr,
              "summary refuses input no parser recognizes (exit %d): %s" % (r.returncode, r.stderr.strip()))

        cfg, out = write_config(tmp, "once", garbage, "false")
        r = subprocess.run([tasklens, "run", "-c", cfg], capture_output=True, text=True, timeout=60)
        lp = open(out).read() if os.path.exists(out) else ""
        check("format not recognized" in r.stderr,
              "run (read once) says the format is not recognized: %s" % r.stderr.strip()[:200])
        check(not task_lines(lp) and "line does not start" not in r.stderr,
              "run reads nothing of it as a Work Queue log")

        empty = os.path.join(tmp, "empty.log")
        open(empty, "w").close()
        r1 = subprocess.run([tasklens, "summary", "--format", "json", empty], capture_output=True, text=True)
        r2 = subprocess.run([tasklens, "lines", "-"], input="", capture_output=True, text=True)
        check(r1.returncode == 0 and '"lines":0' in r1.stdout and r2.returncode == 0 and not r2.stderr,
              "an empty file and an empty stdin read as zero lines, exit 0 (%d, %d: %s)"
              % (r1.returncode, r2.returncode, (r1.stderr + r2.stderr).strip()[:200]))

        cfg, out = write_config(tmp, "read", demo, "false")
        r = subprocess.run([tasklens, "run", "-c", cfg], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and task_lines(open(out).read()) == expected,
              "run (read once) writes exactly the task points of lines (exit %d)" % r.returncode)

        growing = os.path.join(tmp, "manager.log")
        with open(growing, "wb") as f:
            f.write(log[:5])
        cfg, out = write_config(tmp, "follow", growing, "true")
        p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        with open(growing, "ab") as f:
            f.write(log[5:])
        deadline = time.time() + 30
        got = []
        while time.time() < deadline:
            time.sleep(0.3)
            got = task_lines(open(out).read()) if os.path.exists(out) else []
            if len(got) >= len(expected):
                break
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=30)[1]
        check(got == expected,
              "a followed file first seen as %r: %d of %d task points, exactly those of lines"
              % (log[:5].decode(), len(got), len(expected)))
        check("waiting for more" in err, "run says it waits for bytes to recognize the format")
        check(p.returncode == 0, "SIGTERM stops the run with exit 0 (%s)" % p.returncode)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
