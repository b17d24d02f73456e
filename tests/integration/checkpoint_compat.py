#!/usr/bin/env python3
"""A `tasklens run` checkpoint written by an older tasklens restores in this
one (issue 31, point 4): the runtime and the sources moved rooms, and the
files they leave behind must not notice.

The fixture (tests/data/checkpoints/run-1e15fb9.ckpt, made as its README
says) is what tasklens at 1e15fb9 saved when stopped with SIGTERM after
reading the first 136,415 bytes of the bundled Work Queue log at
/tmp/tasklens-ckpt-fixture/run.log (the middle of a line, 75 tasks out):
the file source's position and content identity, the wq parser's open
tasks, and the aggregator. Here the log was rotated while tasklens was
stopped: the whole log is run.log.1, a new empty run.log is at the path.
The restored run must read the rest of run.log.1 from the checkpoint, and:
  - its task points plus the 75 the old run wrote are exactly those of one
    uninterrupted `tasklens lines` over the whole log;
  - its final cumulative quantiles (every category and metric) equal the
    uninterrupted run's, field for field: the aggregator's state restored.

A second fixture, run-1e15fb9-retrieved.ckpt, was saved right after the
RETRIEVED line of task 138 (line 549), its DONE line unread: the wq state
holds a measured attempt, saved when the record had two metrics fewer
(jvm_gc_time_s and peak_execution_memory_bytes came after), so it restores
through the layout translation of the parser's state.

usage: checkpoint_compat.py TASKLENS FIXTURE_DIR DEMO_LOG
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

WHERE = "/tmp/tasklens-ckpt-fixture"  # the absolute path the checkpoint names
CONFIG = """\
sources:
  - type: file
    path: run.log
    parser: wq
    follow: false
    rotate_quiet: 0
sinks:
  - type: file
    path: second.lp
checkpoint_dir: ckpt
flush_interval: 100
"""


def task_lines(text):
    """The task points, without the cause and failed tags a failed attempt
    carries since issue 56 (the fixtures' old run wrote none)."""
    return sorted(re.sub(r",cause=[a-z_]+,failed=true(?=[ ,])", "", l)
                  for l in text.splitlines() if l.startswith("task,"))


def last_cumulative(text):
    """(series key) -> fields of the last cumulative task_quantiles point."""
    out = {}
    for l in text.splitlines():
        if l.startswith("task_quantiles,") and ",window=cumulative " in l:
            key, fields, _ = l.rsplit(" ", 2)
            out[key] = fields
    return out


def restore(tasklens, fixtures, demo, name, first_tasks):
    """Restores fixture `name` in WHERE (as it was made) and checks it."""
    if os.path.exists(WHERE):
        shutil.rmtree(WHERE)
    os.makedirs(os.path.join(WHERE, "ckpt"))
    try:
        shutil.copy(os.path.join(fixtures, name + ".ckpt"),
                    os.path.join(WHERE, "ckpt", "tasklens.ckpt"))
        shutil.copy(demo, os.path.join(WHERE, "run.log.1"))
        open(os.path.join(WHERE, "run.log"), "w").close()
        with open(os.path.join(WHERE, "run.yaml"), "w") as f:
            f.write(CONFIG)
        r = subprocess.run([tasklens, "run", "-c", "run.yaml"], cwd=WHERE, capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 0, "%s: the restored run exits 0 (%d: %s)" % (name, r.returncode, r.stderr))
        check("restored from" in r.stderr and "reading the rest of run.log.1" in r.stderr,
              "%s: it says it restored, and reads the rest of the rotated file" % name)
        check("not in the checkpoint" not in r.stderr, "%s: the file's section is found" % name)
        with open(os.path.join(WHERE, "second.lp")) as f:
            second = f.read()
        with open(os.path.join(fixtures, name + "-first-task.lp")) as f:
            first = f.read()
        full = subprocess.run([tasklens, "lines", demo], capture_output=True, text=True,
                              check=True).stdout
        got = task_lines(first + second)
        want = task_lines(full)
        check(len(task_lines(first)) == first_tasks, "%s: the old run wrote %d task points"
              % (name, first_tasks))
        check(got == want, "%s: old + restored task points = one pass (%d vs %d)"
              % (name, len(got), len(want)))
        cg, cw = last_cumulative(second), last_cumulative(full)
        check(cw and cg == cw, "%s: final cumulative quantiles equal one pass's (%d series; %d "
              "differ)" % (name, len(cw), sum(1 for k in cw if cg.get(k) != cw[k])))
    finally:
        shutil.rmtree(WHERE, ignore_errors=True)


def main():
    tasklens, fixtures, demo = sys.argv[1:4]
    restore(tasklens, fixtures, demo, "run-1e15fb9", 75)
    restore(tasklens, fixtures, demo, "run-1e15fb9-retrieved", 74)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
