#!/usr/bin/env python3
"""`tasklens report` on a large run (issue 32 point 4): the page's size, the
time to make it beside `summary` on the same input, and the time a real
headless Chromium takes to load and draw it (navigation to the second frame
after the load event), best of N.

usage: report_bench.py TASKLENS GEN_WQ [TASKS] [CATEGORIES] [ROUNDS]
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from browser import Chromium  # noqa: E402


def best(cmd, rounds):
    times = []
    for _ in range(rounds):
        t = time.time()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.time() - t)
    return min(times)


def main():
    tasklens, gen = sys.argv[1:3]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000000
    k = sys.argv[4] if len(sys.argv) > 4 else "16"
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="tl-report-bench-") as tmp:
        log = os.path.join(tmp, "wq.log")
        with open(log, "w") as f:
            subprocess.run([gen, str(n), k, "7", "100"], stdout=f, check=True)
        html = os.path.join(tmp, "run.html")
        t_sum = best([tasklens, "summary", log], rounds)
        t_rep = best([tasklens, "report", log, "-o", html], rounds)
        r = subprocess.run(["/usr/bin/time", "-f", "%M", tasklens, "report", log, "-o", html],
                           capture_output=True, text=True, check=True)
        rss = int(r.stderr.strip().splitlines()[-1])
        size = os.path.getsize(html)
        loads = []
        with Chromium() as c:
            for _ in range(rounds):
                loads.append(c.open(html))
            problems = c.problems()
            plots = c.eval("document.querySelectorAll('svg.plot').length")
            nodes = c.eval("document.getElementsByTagName('*').length")
        print("input: %d tasks, %s categories, %.0f MB (bench/gen_wq)" % (n, k, os.path.getsize(log) / 1e6))
        print("summary %.2f s | report %.2f s (peak RSS %d MB) | page %.2f MB, %d plots, %d elements"
              % (t_sum, t_rep, rss // 1024, size / 1e6, plots, nodes))
        print("chromium load + first frames: best %.2f s, worst %.2f s; console problems: %d"
              % (min(loads), max(loads), len(problems)))


if __name__ == "__main__":
    main()
