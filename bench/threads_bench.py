#!/usr/bin/env python3
"""Many inputs on every core (issue 61.1): each batch command with
--threads 1 and --threads N over a tree of LSST metadata files and over a
set of Work Queue logs, beside `find | xargs cat` and `find | xargs -P N
cat` (the cost of only reading the same bytes on one and on N processes),
warm cache, best of 5 wall-clock seconds. Outputs are checked identical.

usage: threads_bench.py TASKLENS GEN_WQ [LSST_FILES [WQ_LOGS [WQ_TASKS]]]
"""
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
import lsst_summary as gen  # noqa: E402


def best_of(cmd, k=5, shell=False):
    best, out = None, None
    for _ in range(k):
        t = time.time()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, shell=shell)
        dt = time.time() - t
        if best is None or dt < best:
            best, out = dt, r.stdout + r.stderr
    return best, out


def compare(tl, cmds, inputs, cores, label):
    print("%s (%d cores):" % (label, cores))
    find = "find %s -type f -print0 | xargs -0 %%s cat > /dev/null" % " ".join(inputs)
    c1, _ = best_of(find % "", shell=True)
    nfiles = sum(len(fs) for i in inputs for _, _, fs in os.walk(i)) if os.path.isdir(inputs[0]) else len(inputs)
    cn, _ = best_of(find % ("-P%d -n%d" % (cores, max(1, nfiles // (4 * cores)))), shell=True)
    print("  find | xargs cat: %.3f s; find | xargs -P%d cat: %.3f s" % (c1, cores, cn))
    for name, args in cmds:
        t1, o1 = best_of([tl] + args + ["--threads", "1"] + inputs)
        tn, on = best_of([tl] + args + ["--threads", str(cores)] + inputs)
        print("  %-28s --threads 1: %.3f s  --threads %d: %.3f s  %.2fx  %s"
              % (" ".join(args), t1, cores, tn, t1 / tn, "same output" if o1 == on else "OUTPUT DIFFERS"))


def main():
    tl, gen_wq = sys.argv[1], sys.argv[2]
    nfiles = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    nlogs = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    ntasks = int(sys.argv[5]) if len(sys.argv) > 5 else 50000
    cores = len(os.sched_getaffinity(0))
    cmds = [("summary", ["summary"]), ("summary json", ["summary", "--format", "json"]),
            ("records", ["records", "-o", "/dev/null"]), ("lines", ["lines", "-o", "/dev/null"]),
            ("report", ["report", "-o", "/dev/null"]), ("advise", ["advise"]), ("plan", ["plan", "--node", "cores=64,mem=256GiB"]),
            ("energy", ["energy"])]
    with tempfile.TemporaryDirectory(prefix="tl-threads-bench-") as tmp:
        root = os.path.join(tmp, "repo")
        gen.generate(root, nfiles, random.Random(7))
        compare(tl, [c for c in cmds if c[0] not in ("energy",)], [root], cores,
                "%d LSST metadata files, one directory" % nfiles)
        logs = []
        for i in range(nlogs):
            p = os.path.join(tmp, "wq%02d.log" % i)
            with open(p, "w") as f:
                subprocess.run([gen_wq, str(ntasks), "16", str(i + 1)], stdout=f, check=True)
            logs.append(p)
        size = sum(os.path.getsize(p) for p in logs)
        compare(tl, [c for c in cmds if c[0] not in ("energy",)], logs, cores,
                "%d Work Queue logs of %d tasks (%.0f MB)" % (nlogs, ntasks, size / 1e6))


if __name__ == "__main__":
    main()
