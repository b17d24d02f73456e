#!/usr/bin/env python3
"""Real Work Queue end to end: a manager linked against Debian's
libwork_queue.a runs >= 200 tasks on 2 local work_queue_worker processes
(tests/integration/wq_manager.c) and records what it saw through the API.
tasklens must report, per category, the same number of tasks, the same
results and the same exit codes, reject no line, and see the forced memory
exhaustion as a measurement above its limit.

usage: wq_e2e.py TASKLENS WQ_MANAGER
"""
import collections
import json
import os
import subprocess
import sys
import tempfile


def main():
    tasklens, manager = sys.argv[1], sys.argv[2]
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    with tempfile.TemporaryDirectory(prefix="tl-wq-e2e-") as tmp:
        log = os.path.join(tmp, "transactions.log")
        expected = os.path.join(tmp, "expected.tsv")
        run = subprocess.run([manager, log, expected, "2"], timeout=400,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "(no output)")
        check(run.returncode == 0, "wq_manager exit %d" % run.returncode)

        want = collections.defaultdict(lambda: {"tasks": 0, "results": collections.Counter(),
                                                "exit_codes": collections.Counter()})
        with open(expected) as f:
            for line in f:
                cat, _tid, result, code = line.rstrip("\n").split("\t")
                w = want[cat]
                w["tasks"] += 1
                w["results"][result] += 1
                if code != "":
                    w["exit_codes"][code] += 1
        total = sum(w["tasks"] for w in want.values())
        print("manager saw %d tasks in %d categories" % (total, len(want)))
        check(total >= 200, "at least 200 tasks")
        check(len(want) >= 4, "at least 4 categories")
        check(want["hog"]["results"]["RESOURCE_EXHAUSTION"] == 1, "hog exhausted its memory")
        check(want["sleeper"]["results"]["CANCELED"] == 1, "one task cancelled")
        check(any(c != "0" for c in want["failing"]["exit_codes"]), "non-zero exits")

        out = subprocess.run([tasklens, "summary", "--format", "json", "--strict", log],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sys.stderr.write(out.stderr)
        check(out.returncode == 0, "tasklens exit %d" % out.returncode)
        doc = json.loads(out.stdout)
        check(doc["inputs"][0]["rejected"] == 0, "no rejected lines")
        check(doc["inputs"][0]["format"] == "wq", "detected as wq")
        got = {g["key"]["category"]: g for g in doc["groups"]}
        check(set(got) == set(want), "categories %s == %s" % (sorted(got, key=str), sorted(want)))
        for cat, w in want.items():
            g = got.get(cat)
            if not g:
                continue
            check(g["tasks"] == w["tasks"], "%s: tasks %d == %d" % (cat, g["tasks"], w["tasks"]))
            check(g["results"] == dict(w["results"]),
                  "%s: results %s == %s" % (cat, g["results"], dict(w["results"])))
            check(g["exit_codes"] == dict(w["exit_codes"]),
                  "%s: exit codes %s == %s" % (cat, g["exit_codes"], dict(w["exit_codes"])))
            check(g["open"] == 0, "%s: no open tasks" % cat)
        hog = got.get("hog")
        if hog:
            rss = hog["metrics"]["max_rss_bytes"]["max"]
            check(rss is not None and rss > 50 * 2**20,
                  "hog measured above its 50 MB limit (%s bytes)" % rss)
    print("%d passed, %d failed" % (1 if not failures else 0, 1 if failures else 0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
