#!/usr/bin/env python3
"""Out of memory is said, never a crash, a hang or a cut answer given as
whole: every batch command reads a directory of six Work Queue logs on three
threads under an address-space limit (RLIMIT_AS), stepped from where nothing
can be read to past where everything can, so allocations fail at every place
a run reaches -- the pool's blocks and parts, the parsers' tables, the
sketches, the report's model and page.

Each run ends by itself (60 s), by exit 0 or 1, never by a signal. Exit 0
means the answer of the run without a limit: the same bytes (the report without
the minute it was made, `lines` without its own wall-clock points), except
`summary`'s quantiles, which may come from the sketch once its exact values
had no room (within alpha, as `--format json` says with "approx": true) --
its tasks, attempts, results and the count of values per metric are the same.
Exit 1 means stderr said "out of memory".

Then `records` reads each samples directory of ../shared (every format's
parser, its real files) under limits the same way: the answer of the run
without a limit (its exit status too), or exit 1 and "out of memory" -- a
parser must not take its own lack of memory for bad input (Spark's events
were rejected as "malformed JSON" with exit 0).

Under a sanitizer it is skipped: ASan's and TSan's shadow memory need
terabytes of address space, which the limit forbids.

usage: memory_limit.py TASKLENS GEN_WQ [SHARED]
"""
import os
import re
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

TL, GEN = sys.argv[1:3]
SHARED = sys.argv[3] if len(sys.argv) > 3 else None
MB = 1 << 20
MADE = re.compile(rb", made \d{4}-\d\d-\d\d \d\d:\d\d UTC")

COMMANDS = [  # (name, arguments, MB from, to, step)
    ("summary", ["summary", "-q"], 20, 90, 1),
    ("records", ["records", "-q", "-f", "csv"], 20, 180, 3),
    ("lines", ["lines", "-q", "-o", "-"], 20, 180, 3),
    ("report", ["report", "-q", "-o", "-"], 20, 200, 3),
    ("advise", ["advise", "-q"], 20, 180, 3),
    ("plan", ["plan", "-q", "--node", "cores=64,mem=256GiB"], 20, 180, 3),
    ("energy", ["energy", "-q"], 20, 180, 3),
    ("path", ["path", "-q"], 20, 180, 3),
]


def limited(mb):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_AS, (mb * MB, mb * MB))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return set_limit


def run(args, mb=None):
    try:
        return subprocess.run([TL] + args, capture_output=True, timeout=60,
                              preexec_fn=limited(mb) if mb else None)
    except subprocess.TimeoutExpired:
        return None


def same_answer(name, got, want):
    """Is got (stdout of a run that said nothing wrong) the unlimited answer?"""
    if name == "report":
        return MADE.sub(b"", got) == MADE.sub(b"", want)
    if name == "lines":
        def own(t):
            return [l for l in t.splitlines() if not l.startswith(b"tasklens,")]
        return own(got) == own(want)
    if name == "summary":
        def counts(t):  # a metric's row: its name and n; every other line whole
            return [l.split()[:2] if re.match(rb"  [a-z_]+ +\d+ ", l) else l for l in t.splitlines()]
        return counts(got) == counts(want)
    return got == want


def samples_under_limits():
    """records of each real samples directory, under limits from 16 to 80 MB."""
    if not SHARED or not os.path.isdir(SHARED):
        print("SKIP part: no ../shared: the parsers' real samples are not read under limits")
        return
    for fmt in sorted(os.listdir(SHARED)):
        d = os.path.join(SHARED, fmt, "samples")
        if not os.path.isdir(d):
            continue
        args = ["records", "-q", "-f", "csv", "--threads", "3", d]
        want = run(args)
        bad, failed, answered = [], 0, 0
        for mb in range(16, 81, 2):
            r = run(args, mb)
            if r and r.returncode == want.returncode and r.stdout == want.stdout:
                answered += 1
            elif r and r.returncode == 1 and re.search(rb"out of memory|Cannot allocate memory", r.stderr):
                failed += 1
            else:
                bad.append((mb, r and r.returncode, r and r.stderr[-160:]))
        print("%s samples: %d limits: %d answered whole, %d said out of memory" % (fmt, 33, answered, failed))
        check(not bad, "%s samples: under a memory limit, records gives the whole answer or says out of memory "
              "(%s)" % (fmt, bad[:2]))


def main():
    if os.environ.get("TL_SANITIZED") == "1":
        print("SKIP: a sanitizer's shadow memory needs more address space than any limit here allows")
        return 77
    with tempfile.TemporaryDirectory(prefix="tl-memlimit-") as tmp:
        logs = os.path.join(tmp, "logs")
        os.mkdir(logs)
        for seed in range(6):  # each past 1 MiB: summary gives each its own part
            with open(os.path.join(logs, "wq%d.log" % seed), "w") as f:
                subprocess.run([GEN, "20000", "8", str(seed), "100"], stdout=f, check=True)
        for name, args, lo, hi, step in COMMANDS:
            full = args + ["--threads", "3", logs]
            want = run(full)
            check(want is not None and want.returncode == 0, "%s: the unlimited run answers (%s)"
                  % (name, want and want.stderr[-200:]))
            crashed, hung, silent, cut, failed, answered = [], [], [], [], 0, 0
            for mb in range(lo, hi + 1, step):
                r = run(full, mb)
                if r is None:
                    hung.append(mb)
                elif r.returncode < 0 or r.returncode > 1:
                    crashed.append((mb, r.returncode, r.stderr[-160:]))
                elif r.returncode == 1:
                    failed += 1
                    if not re.search(rb"out of memory|Cannot allocate memory", r.stderr):
                        silent.append((mb, r.stderr[-160:]))
                else:
                    answered += 1
                    if not same_answer(name, r.stdout, want.stdout):
                        cut.append(mb)
            print("%s: %d limits from %d to %d MB: %d answered whole, %d said out of memory"
                  % (name, len(range(lo, hi + 1, step)), lo, hi, answered, failed))
            check(not crashed, "%s: no run under a memory limit ends by a signal or another status (%s)"
                  % (name, crashed[:3]))
            check(not hung, "%s: every run under a memory limit ends within 60 s (%s MB)" % (name, hung))
            check(not silent, "%s: a run that fails for memory says so (%s)" % (name, silent[:3]))
            check(not cut, "%s: exit 0 under a limit is the whole answer (MB: %s)" % (name, cut))
            check(failed and answered, "%s: the limits reach both sides: some runs fail, some answer" % name)
    samples_under_limits()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
