#!/usr/bin/env python3
"""Two tasklens binaries side by side on the paths `run` takes (issue 31
point 6: the runtime moved out of cli/ and sources became plugins; no speed
may be lost). Interleaved rounds, best and median per binary:

  summary  `tasklens summary LOG` (the batch path, for reference)
  once     `run -c` with a `type: file` source, `follow: false`, a file sink
           on /dev/shm: until it exits
  follow   `run -c` following an empty file; LOG is appended in one go;
           until the self-metrics say every line was read
  dir      `run -c` with a `type: dir` source over N LSST metadata files
           (the test generator's tree); until every quantum's task point is out

usage: runtime_ab.py OLD NEW LOG [ROUNDS] [LSST_FILES]
"""
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
import lsst_summary as gen  # noqa: E402

SHM = "/dev/shm"


def tail(path, n=262144):
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - n))
            return f.read().decode(errors="replace")
    except FileNotFoundError:
        return ""


def write_cfg(tmp, src, extra=""):
    cfg = os.path.join(tmp, "run.yaml")
    out = os.path.join(tmp, "out.lp")
    with open(cfg, "w") as f:
        f.write("sources:\n  - " + src.replace("\n", "\n    ") + "\nsinks:\n  - type: file\n"
                "    path: %s\nflush_interval: 100\nquiet: true\n%s" % (out, extra))
    return cfg, out


def t_summary(tl, log, tmp):
    t = time.time()
    subprocess.run([tl, "summary", log], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.time() - t


def t_once(tl, log, tmp):
    cfg, _ = write_cfg(tmp, "type: file\npath: %s\nparser: wq\nfollow: false" % log)
    t = time.time()
    subprocess.run([tl, "run", "-c", cfg], check=True, stderr=subprocess.DEVNULL)
    return time.time() - t


def wait_self(out, pattern, p, limit=300):
    t0 = time.time()
    while time.time() - t0 < limit:
        if re.search(pattern, tail(out)):
            return True
        time.sleep(0.01)
    return False


def t_follow(tl, log, tmp, lines):
    live = os.path.join(tmp, "live.log")
    open(live, "w").close()
    cfg, out = write_cfg(tmp, "type: file\npath: %s\nparser: wq" % live)
    p = subprocess.Popen([tl, "run", "-c", cfg], stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    t = time.time()
    with open(live, "ab") as w, open(log, "rb") as r:
        shutil.copyfileobj(r, w, 1 << 22)
    ok = wait_self(out, r"tasklens,[^ ]* .*\blines=%di" % lines, p)
    dt = time.time() - t
    p.send_signal(signal.SIGTERM)
    p.wait()
    return dt if ok else float("nan")


def t_dir(tl, root, tmp, records):
    cfg, out = write_cfg(tmp, "type: dir\npath: %s\nmatch: '*_metadata*'" % root,
                         "aggregate: {window: 0}\n")
    t = time.time()
    p = subprocess.Popen([tl, "run", "-c", cfg], stderr=subprocess.DEVNULL)
    ok = wait_self(out, r"tasklens,[^ ]* .*\brecords=%di" % records, p)
    dt = time.time() - t
    p.send_signal(signal.SIGTERM)
    p.wait()
    return dt if ok else float("nan")


def main():
    old, new, log = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    nfiles = int(sys.argv[5]) if len(sys.argv) > 5 else 5000
    with open(log, "rb") as f:
        lines = sum(1 for _ in f)
    times = {}
    with tempfile.TemporaryDirectory(dir=SHM, prefix="tl-ab-") as tmp:
        root = os.path.join(tmp, "repo")
        gen.generate(root, nfiles, random.Random(7))
        probe = subprocess.run([new, "summary", "--format", "json", root], capture_output=True,
                               text=True, check=True).stdout
        records = int(re.search(r'"records":\s*(\d+)', probe).group(1))
        for _ in range(rounds):
            for label, tl in (("old", old), ("new", new)):
                for name, fn in (("summary", lambda: t_summary(tl, log, tmp)),
                                 ("once", lambda: t_once(tl, log, tmp)),
                                 ("follow", lambda: t_follow(tl, log, tmp, lines)),
                                 ("dir", lambda: t_dir(tl, root, tmp, records))):
                    for f in os.listdir(tmp):
                        if f != "repo":
                            os.unlink(os.path.join(tmp, f))
                    times.setdefault((name, label), []).append(fn())
    print("input: %s (%d lines, %.1f MB); dir: %d LSST files; %d rounds, interleaved"
          % (log, lines, os.path.getsize(log) / 1e6, nfiles, rounds))
    for name in ("summary", "once", "follow", "dir"):
        o, n = times[(name, "old")], times[(name, "new")]
        print("%-8s old best %.3f s median %.3f s | new best %.3f s median %.3f s"
              % (name, min(o), statistics.median(o), min(n), statistics.median(n)))


if __name__ == "__main__":
    main()
