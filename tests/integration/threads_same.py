#!/usr/bin/env python3
"""Issue 61: many inputs on every core give what one thread gives, byte for
byte. Every batch command that reads files (summary as table and JSON,
records, lines, report, advise, plan, energy, path) runs with --threads 1 and with
--threads 3 (more threads than this machine's cores, so they interleave)
on every real sample in ../shared -- each samples directory as one input,
and its files as many inputs -- and on made inputs that exercise what the
threads must hand back in order: rejected lines past the run's budget
(--max-errors 3, over several files), a directory with files of no known
format, an empty directory, a file that cannot be read, a rolling Spark
event log directory beside plain files, gzip and zstd, and Work Queue logs
large enough that a worker fills its stream and waits. stdout, stderr,
the exit status and the written file must be the same.

--quick (the ThreadSanitizer build, scripts/test.sh): summary, records,
lines and report only, on the made inputs and two sample directories.

usage: threads_same.py TASKLENS SHARED_DIR [--quick]"""
import gzip
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, ran  # noqa: E402

TL, SHARED = sys.argv[1], sys.argv[2]
QUICK = "--quick" in sys.argv[3:]
ENV = dict(os.environ, TZ="UTC")

COMMANDS = [
    ("summary", ["summary"]),
    ("summary json", ["summary", "--format", "json"]),
    ("records", ["records"]),
    ("lines", ["lines", "-o", "-"]),
    ("report", ["report", "-o", "{out}"]),
    ("advise", ["advise"]),
    ("plan", ["plan", "--node", "cores=64,mem=256GiB"]),
    ("energy", ["energy"]),
    ("path", ["path"]),
]
if QUICK:  # and report: a parsing thread that waits encodes its task table (pipeline/batch.h, idle)
    COMMANDS = COMMANDS[:5]


def self_point_time(lp):
    """`lines` stamps its own `tasklens` point with the time it is written,
    and with queue_bytes, the points not yet handed to the sink at that
    moment (handed on at 1 MiB or after a second, so a slow run -- ASan --
    hands on elsewhere): those two, and only those, are not the input's."""
    def masked(x):
        x = re.sub(rb",queue_bytes=\d+i", b",queue_bytes=Q", x)
        return x.rsplit(b" ", 1)[0] + b" T"
    return b"\n".join(masked(x) if x.startswith(b"tasklens,") else x for x in lp.split(b"\n"))


def page_time(html):
    """`report` says when the page was made, to the minute: not the input's."""
    return re.sub(rb", made \d{4}-\d\d-\d\d \d\d:\d\d UTC", b", made T", html)


def run(args, inputs, threads, out):
    a = [x.replace("{out}", out) for x in args]
    r = subprocess.run([TL] + a + ["--threads", str(threads)] + inputs, capture_output=True,
                       env=ENV, timeout=1200)
    stdout = self_point_time(r.stdout) if args[0] == "lines" else r.stdout
    written = b""
    if "{out}" in args and os.path.exists(out):
        with open(out, "rb") as f:
            written = page_time(f.read())
        os.remove(out)
    return r.returncode, stdout, r.stderr, written


def first_difference(a, b):
    n = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
    return "at byte %d of %d/%d: %r vs %r" % (n, len(a), len(b), a[max(0, n - 40):n + 40],
                                                 b[max(0, n - 40):n + 40])


def same(label, inputs, tmp, extra=()):
    """Every command on inputs, one thread and three: the same."""
    out = os.path.join(tmp, "out.file")
    for name, args in COMMANDS:
        one = run(list(args) + list(extra), inputs, 1, out)
        many = run(list(args) + list(extra), inputs, 3, out)
        what = ["exit status", "stdout", "stderr", "written file"]
        bad = [w for w, x, y in zip(what, one, many) if x != y]
        detail = ""
        if bad:
            k = what.index(bad[0])
            detail = ": %s differs %s" % (bad[0], first_difference(one[k], many[k]) if k else
                                          "%d vs %d" % (one[0], many[0]))
        check(not bad, "%s, %s: --threads 3 gives what --threads 1 gives (exit %d, %d bytes out, "
              "%d bytes said)%s" % (label, name, one[0], len(one[1]) + len(one[3]), len(one[2]), detail))


def wq_log(path, tasks, seed, bad_every=0, cats=8):
    """A Work Queue transaction log (the form tests/data and gen_wq write),
    with a malformed line every bad_every tasks."""
    rnd = random.Random(seed)
    t = 1700000000000000 + seed * 10 ** 9
    lines = ["# time manager_pid MANAGER START|END", "%d 4242 MANAGER START" % t,
             "%d 4242 WORKER w%d 10.0.0.%d:9000 CONNECTION" % (t, seed, seed)]
    for i in range(1, tasks + 1):
        c = "cat%d" % rnd.randrange(cats)
        t += rnd.randrange(1000, 90000)
        lines.append('%d 4242 TASK %d WAITING %s FIRST_RESOURCES {"cores":[1,"cores"]}' % (t, i, c))
        t += rnd.randrange(1000, 9000)
        lines.append("%d 4242 TASK %d RUNNING w%d FIRST_RESOURCES {\"cores\":[1,\"cores\"]}" % (t, i, seed))
        t += rnd.randrange(10 ** 5, 10 ** 7)
        lines.append("%d 4242 TASK %d WAITING_RETRIEVAL w%d" % (t, i, seed))
        t += 1000
        rss = rnd.randrange(10, 4000)
        wall = rnd.randrange(10 ** 5, 10 ** 8)
        lines.append('%d 4242 TASK %d RETRIEVED SUCCESS 0 {"wall_time":[%.6f,"s"],"cpu_time":[%.6f,"s"],'
                     '"memory":[%d,"MB"],"cores":[%.2f,"cores"]} {}' % (t, i, wall / 1e6, wall / 2e6, rss,
                                                                       rnd.random() * 2))
        lines.append("%d 4242 TASK %d DONE SUCCESS 0 {} {}" % (t, i))
        if bad_every and i % bad_every == 0:
            lines.append("%d 4242 TASK this is not a task line %d" % (t, i))
    lines.append("%d 4242 MANAGER END" % (t + 1))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def made_inputs(tmp):
    d = os.path.join(tmp, "made")
    os.makedirs(d)
    logs = []
    for i in range(6):  # rejected lines in several files: one budget over the run
        p = os.path.join(d, "bad%d.log" % i)
        wq_log(p, 40, i + 1, bad_every=7)
        logs.append(p)
    same("6 Work Queue logs with rejected lines, --max-errors 3", logs, tmp, ["--max-errors", "3"])
    tree = os.path.join(d, "tree")
    os.makedirs(os.path.join(tree, "a", "b"))
    os.makedirs(os.path.join(tree, "a-c"))
    os.makedirs(os.path.join(tree, "empty"))
    for k, sub in enumerate(["a/b", "a-c", "a", "."]):
        wq_log(os.path.join(tree, sub, "x%d.log" % k), 30, 10 + k, bad_every=11)
    with open(os.path.join(tree, "a", "notes.txt"), "w") as f:
        f.write("not a trace of any kind\n" * 3)
    with open(os.path.join(tree, "a", "b", "x.log.gz"), "wb") as f:
        with open(os.path.join(tree, "a", "b", "x0.log"), "rb") as g:
            f.write(gzip.compress(g.read()))
    if shutil.which("zstd"):
        subprocess.run(["zstd", "-q", "-f", os.path.join(tree, "a-c", "x1.log"), "-o",
                        os.path.join(tree, "a-c", "x1z.log.zst")], check=True)
    empty = os.path.join(d, "empty")
    os.makedirs(empty)
    same("a tree (nested names that sort around '/', a file of no known format, gzip, zstd, an "
         "empty directory), an empty directory, a missing file", [tree, empty, os.path.join(d, "missing.log"), logs[0]],
         tmp)
    spark = os.path.join(SHARED, "spark", "samples")
    parts = [os.path.join(spark, x) for x in sorted(os.listdir(spark)) if x.startswith("eventlog_v2_")] \
        if os.path.isdir(spark) else []
    if parts:
        same("a rolling Spark event log directory beside Work Queue logs", [logs[1], parts[0], logs[2]], tmp)
    big = []
    for i in range(4):  # records past a worker's stream: it waits for its turn
        p = os.path.join(d, "big%d.log" % i)
        wq_log(p, 3000 if QUICK else 12000, 100 + i, cats=40)
        big.append(p)
    same("4 Work Queue logs of %d tasks each" % (3000 if QUICK else 12000), big, tmp)
    # summary: a file of 1 MiB or more is summarized apart and merged, a
    # smaller one's records go straight to the whole -- in the same order
    sizes = [os.path.getsize(p) for p in big + logs[:1]]
    check(max(sizes) >= 1 << 20 > min(sizes), "the made logs are on both sides of 1 MiB (%s)" % sizes)
    same("logs on both sides of 1 MiB, interleaved", [big[0], logs[0], big[1], logs[1]], tmp)
    # one file parsed beside the thread that takes its records, which `report`
    # keeps waiting: the parser encodes the task table's rows meanwhile
    one = os.path.join(d, "one.log")
    wq_log(one, 20000 if QUICK else 60000, 7, cats=16)
    same("one Work Queue log of %d tasks" % (20000 if QUICK else 60000), [one], tmp)


def known(path):
    """A file tasklens recognizes (`summary` reads it without a format error)."""
    r = subprocess.run([TL, "summary", "-q", "--threads", "1", path], capture_output=True, env=ENV)
    return b"format not recognized" not in r.stderr


def samples(tmp):
    dirs = sorted(os.path.join(SHARED, x, "samples") for x in os.listdir(SHARED)
                  if os.path.isdir(os.path.join(SHARED, x, "samples")))
    if QUICK:
        dirs = [x for x in dirs if "/wq/" in x or "/lsst/" in x]
    for d in dirs:
        same(os.path.relpath(d, SHARED) + " as one input", [d], tmp)
        # the traces among them (a file of no known format stops `report`; the
        # directory form above has those)
        files = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(d) for f in fs
                       if known(os.path.join(dp, f)))
        if not QUICK:
            same(os.path.relpath(d, SHARED) + " as %d inputs" % len(files), files, tmp)


def main():
    with tempfile.TemporaryDirectory(prefix="tl-threads-") as tmp:
        made_inputs(tmp)
        if os.path.isdir(SHARED):
            samples(tmp)
        else:
            print("SKIP part: no samples at %s (the real inputs)" % SHARED)
    return finish() if ran() else 77


if __name__ == "__main__":
    sys.exit(main())
