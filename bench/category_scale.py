#!/usr/bin/env python3
"""How `summary` and `report` grow with categories (issue 61 point 3).

Doubles the number of categories (every task its own category: the worst
case for anything per category) and times both commands at each size, with
the ratio to the size before: O(n log n) doubles a little over 2x, a
quadratic step 4x. `--baseline` runs the report against a baseline log of
the same size whose category names carry another hash (Dask's and
TaskVine's per-run names), so every match goes through the normalized
names.

  bench/category_scale.py TASKLENS GEN_WQ [--baseline] [SIZES...]
"""
import os
import re
import resource
import subprocess
import sys
import tempfile
import time


def hashed(src, dst, tag):
    """src's categories renamed catN -> catN-<16 hex digits of tag>."""
    pat = re.compile(rb" (cat\d+) FIRST_RESOURCES")
    with open(src, "rb") as f, open(dst, "wb") as g:
        for line in f:
            g.write(pat.sub(lambda m: b" " + m.group(1) + b"-" + tag + b" FIRST_RESOURCES", line))


def timed(cmd):
    """Best wall time of two runs, and the peak RSS of the children (MB)."""
    best = None
    for _ in range(2):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main():
    args = sys.argv[1:]
    tl, gen = args[0], args[1]
    base = "--baseline" in args
    sizes = [int(a) for a in args[2:] if a.isdigit()] or [125000, 250000, 500000, 1000000]
    tmp = tempfile.mkdtemp(prefix="tl-scale-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    prev = None
    print("categories  summary s  (x)    report s  (x)    report/summary  page MB%s" %
          ("   (report with --baseline, hashed names)" if base else ""))
    for n in sizes:
        log = os.path.join(tmp, "run.log")
        with open(log, "wb") as f:
            subprocess.run([gen, str(n), str(n), "7"], stdout=f, check=True)
        extra = []
        if base:
            b = os.path.join(tmp, "base.log")
            with open(b + ".raw", "wb") as f:
                subprocess.run([gen, str(n), str(n), "8"], stdout=f, check=True)
            hashed(b + ".raw", b, b"7fa71a94910c03e2")
            os.remove(b + ".raw")
            h = os.path.join(tmp, "run.hashed.log")
            hashed(log, h, b"0f8bcde2b85e69ee")
            os.replace(h, log)
            extra = ["--baseline", b]
        s, _ = timed([tl, "summary", "-q", log])
        page = os.path.join(tmp, "r.html")
        r, rss = timed([tl, "report", "-q", *extra, "-o", page, log])
        ratio = lambda now, was: "(%.2f)" % (now / was) if was else "      "
        print("%10d  %8.2f  %6s  %8.2f  %6s  %5.2f  %14.1f" % (n, s, ratio(s, prev and prev[0]), r,
              ratio(r, prev and prev[1]), r / s, os.path.getsize(page) / 1e6), flush=True)
        prev = (s, r)
    print("peak RSS of any run: %.0f MB" % rss)
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
