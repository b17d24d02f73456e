#!/usr/bin/env python3
"""`tasklens run` following a log through the rotations other log shippers
lost or doubled data in (issue 30, points 1-5). Each case runs the real
binary on the bundled Work Queue log (207 tasks) cut in pieces, with a
checkpoint directory and a file sink, and counts the task points: every
task exactly once, or the gap said and counted.

1. Rotated while stopped, whatever the file became: `.1.gz` (logrotate
   `compress` without `delaycompress`), `.1.zst`, a dateext name, a
   configured glob in another directory, copytruncate (copied, then
   compressed), rotated twice. The rest of the checkpointed content is read
   from it (found by its first bytes and the bytes before the offset).
2. Not found: one warning with the byte count, self-metrics gaps/gap_bytes.
3. Inode reuse (a loop-mounted ext4, where a recreated file gets the old
   inode): the new file is read from 0.
4. copytruncate racing the reader: the writer appends, the log is copied
   and truncated and written past the old offset before tasklens looks
   (it is stopped with SIGSTOP meanwhile): the copy's rest, then the file.
5. A writer that keeps appending to the renamed file for 1.5 s after the
   rotation: every line once (the old file is read until quiet).
6. `from: beginning` never overrides a checkpoint.

usage: rotation_faults.py TASKLENS DEMO_LOG
"""
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402
from run_follow import wait_read  # noqa: E402

CONFIG = """\
sources:
  - type: file
    path: {log}
    parser: wq
{extra}sinks:
  - type: file
    path: {out}
checkpoint_dir: {ck}
checkpoint_interval: 1
flush_interval: 100
cumulative_interval: 1
aggregate: {{window: 0}}
"""


class Case:
    """A directory with f.log, its configuration and output."""

    def __init__(self, tasklens, tmp, name, extra=""):
        self.tasklens = tasklens
        self.d = os.path.join(tmp, name)
        os.makedirs(self.d)
        self.log = os.path.join(self.d, "f.log")
        self.out = os.path.join(self.d, "out.lp")
        self.cfg = os.path.join(self.d, "c.yaml")
        with open(self.cfg, "w") as f:
            f.write(CONFIG.format(log=self.log, out=self.out, ck=os.path.join(self.d, "ck"),
                                  extra=extra))
        self.err = ""

    def append(self, lines, path=None):
        with open(path or self.log, "a", encoding="utf-8") as f:
            f.writelines(lines)

    def start(self):
        return subprocess.Popen([self.tasklens, "run", "-c", self.cfg], stderr=subprocess.PIPE,
                                text=True)

    def stop(self, p):
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        self.err += err
        return p.returncode

    def run_for(self, seconds=3):
        """Runs a while (a restart reads what is there), then stops; the exit status."""
        p = self.start()
        time.sleep(seconds)
        return self.stop(p)

    def run_until_read(self, settle=1.5):
        """Runs until the log is read to its end (and checkpointed), then stops."""
        p = self.start()
        ok = wait_read(p.pid, self.log)
        time.sleep(settle)  # a checkpoint after the last read
        return self.stop(p) == 0 and ok

    def tasks(self):
        """The task points written: (workflow, task id, attempt) -> times seen."""
        seen = {}
        for line in open(self.out, encoding="utf-8"):
            if not line.startswith("task,"):
                continue
            wf = re.search(r",workflow=([^, ]+)", line)
            k = (wf.group(1) if wf else "", re.search(r"[ ,]task_id=(\d+)i", line).group(1),
                 re.search(r",attempt=(\d+)i", line).group(1))
            seen[k] = seen.get(k, 0) + 1
        return seen

    def self_metric(self, name):
        """The last value of a tasklens self-metric field, or None."""
        v = None
        for line in open(self.out, encoding="utf-8"):
            if line.startswith("tasklens,") and (" %s=" % name in line or ",%s=" % name in line):
                v = int(line.split(name + "=")[1].split(",")[0].split(" ")[0].rstrip("i"))
        return v


def demo_lines(demo):
    return open(demo, encoding="utf-8").read().splitlines(keepends=True)


def exactly_once(case, want):
    seen = case.tasks()
    dup = sum(1 for v in seen.values() if v > 1)
    return len(seen) == want and dup == 0, "%d distinct task points of %d, %d repeated" % (
        len(seen), want, dup)


def gzip_file(path):
    subprocess.run(["gzip", path], check=True)


def zstd_file(path):
    subprocess.run(["zstd", "-q", "--rm", path], check=True)


def rotated_while_stopped(tasklens, demo, tmp):
    """logrotate's shapes, done while tasklens is stopped (a restart, an
    upgrade, a reboot): half read and checkpointed, the rest appended, the
    log rotated, restarted. Every task once."""
    lines = demo_lines(demo)
    half = len(lines) // 2
    d2 = lambda c: os.path.join(c.d, "old")  # noqa: E731

    def gz(c):
        os.rename(c.log, c.log + ".1")
        gzip_file(c.log + ".1")
        open(c.log, "w").close()

    def zst(c):
        os.rename(c.log, c.log + ".1")
        zstd_file(c.log + ".1")
        open(c.log, "w").close()

    def dateext(c):
        os.rename(c.log, c.log + "-20261125")
        gzip_file(c.log + "-20261125")
        open(c.log, "w").close()

    def olddir(c):
        os.makedirs(d2(c))
        os.rename(c.log, os.path.join(d2(c), "f.log.1"))
        gzip_file(os.path.join(d2(c), "f.log.1"))
        open(c.log, "w").close()

    def copytruncate(c):
        shutil.copy2(c.log, c.log + ".1")
        os.truncate(c.log, 0)
        gzip_file(c.log + ".1")

    cases = [("gzip, no delaycompress", gz, ""), ("zstd", zst, ""), ("dateext", dateext, ""),
             ("olddir and a configured glob", olddir, "    rotated: old/f.log.*\n"),
             ("copytruncate, then compressed", copytruncate, "")]
    for i, (name, rotate, extra) in enumerate(cases):
        c = Case(tasklens, tmp, "stopped%d" % i, extra)
        c.append(lines[:half])
        first = c.run_until_read()
        c.append(lines[half:half + 200])
        rotate(c)
        c.append(lines[half + 200:])
        rc = c.run_for()
        ok, why = exactly_once(c, 207)
        check(first and rc == 0 and ok and "rotated while stopped" in c.err and
              "lost: " not in c.err,
              "rotated while stopped (%s): %s; %s" % (name, why, c.err.strip()[-300:]))

    # rotated twice while stopped: f.log.2.gz (the checkpointed file), f.log.1.gz, then f.log
    c = Case(tasklens, tmp, "twice")
    c.append(lines[:half])
    first = c.run_until_read()
    c.append(lines[half:half + 100])
    gz(c)
    time.sleep(0.05)  # a later mtime for the later file
    c.append(lines[half + 100:half + 300])
    os.rename(c.log + ".1.gz", c.log + ".2.gz")
    gz(c)
    c.append(lines[half + 300:])
    rc = c.run_for()
    ok, why = exactly_once(c, 207)
    check(first and rc == 0 and ok and "then the files rotated after it" in c.err,
          "rotated twice while stopped, both compressed: %s; %s" % (why, c.err.strip()[-300:]))


def not_found(tasklens, demo, tmp):
    """The checkpointed file rotated to a name outside the glob: the gap is
    said once with the bytes known unread (test_follow checks the count
    itself), and counted in the self-metrics gaps and gap_bytes."""
    lines = demo_lines(demo)
    half = len(lines) // 2
    c = Case(tasklens, tmp, "notfound")
    c.append(lines[:half])
    first = c.run_until_read()
    c.append(lines[half:half + 200])
    os.rename(c.log, os.path.join(c.d, "archive"))
    gzip_file(os.path.join(c.d, "archive"))
    c.append(lines[half + 200:])
    rc = c.run_for()
    warned = [x for x in c.err.splitlines() if "lost: " in x]
    gaps, gap_bytes = c.self_metric("gaps"), c.self_metric("gap_bytes")
    check(first and rc == 0 and len(warned) == 1 and "bytes known unread" in warned[0] and
          gaps == 1 and gap_bytes is not None,
          "checkpointed file not found: one warning with the byte count, gaps=%s gap_bytes=%s: %s" % (
              gaps, gap_bytes, warned))


def inode_reuse(tasklens, demo, tmp):
    """On ext4 a file deleted and created again gets the old inode: the new
    one is read from 0, because its content is not the checkpointed one."""
    lines = demo_lines(demo)
    img, mnt = os.path.join(tmp, "ext4.img"), os.path.join(tmp, "mnt")
    os.makedirs(mnt)
    with open(img, "wb") as f:
        f.truncate(16 << 20)
    made = subprocess.run(["mkfs.ext4", "-q", img], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0 if shutil.which("mkfs.ext4") else False
    if not made or subprocess.run(["mount", "-o", "loop", img, mnt], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL).returncode:
        print("SKIP inode_reuse: cannot loop-mount an ext4 image here (needs root and loop devices)")
        return
    try:
        c = Case(tasklens, mnt, "reuse")
        c.append(lines)
        first = c.run_until_read()
        ino = os.stat(c.log).st_ino
        os.unlink(c.log)
        # another manager's run: the same log with another pid
        other = [x.replace(" 6045 ", " 6046 ") for x in lines]
        c.append(other)
        same = os.stat(c.log).st_ino == ino
        rc = c.run_for()
        seen = c.tasks()
        new = sum(1 for k in seen if "6046" in k[0])
        check(first and rc == 0 and same and new == 207 and len(seen) == 414,
              "inode reused (%s): the new file read from 0: %d of its 207 tasks, %d in all" % (
                  "same inode" if same else "NOT the same inode", new, len(seen)))
    finally:
        subprocess.run(["umount", mnt])


def copytruncate_race(tasklens, demo, tmp):
    """Appended, copied away, truncated and written past the old offset, all
    before tasklens reads again: the copy's rest, then the file from 0."""
    lines = demo_lines(demo)
    c = Case(tasklens, tmp, "race")
    c.append(lines[:300])
    p = c.start()
    first = wait_read(p.pid, c.log)
    time.sleep(0.5)
    old = os.path.getsize(c.log)
    os.kill(p.pid, signal.SIGSTOP)
    c.append(lines[300:400])  # never read from f.log: only the copy has them
    shutil.copy2(c.log, c.log + ".1")
    with open(c.log, "r+") as f:
        f.truncate(0)
    c.append(lines[400:])
    past = os.path.getsize(c.log) > old
    os.kill(p.pid, signal.SIGCONT)
    time.sleep(3)
    rc = c.stop(p)
    ok, why = exactly_once(c, 207)
    check(first and past and rc == 0 and ok,
          "copytruncate, then written past the old offset before the next read: %s; %s" % (
              why, c.err.strip()[-300:]))


def writer_after_rotation(tasklens, demo, tmp):
    """The writer keeps appending to the renamed file for 1.5 s after the
    rotation (it has not reopened yet), then writes to the new one."""
    lines = demo_lines(demo)
    c = Case(tasklens, tmp, "late")
    c.append(lines[:300])
    p = c.start()
    first = wait_read(p.pid, c.log)
    w = open(c.log, "a", encoding="utf-8")
    os.rename(c.log, c.log + ".1")
    open(c.log, "w").close()
    for i in range(300, 600, 20):  # 15 writes, 0.1 s apart
        w.writelines(lines[i:i + 20])
        w.flush()
        time.sleep(0.1)
    w.close()
    c.append(lines[600:])
    time.sleep(4)
    rc = c.stop(p)
    ok, why = exactly_once(c, 207)
    check(first and rc == 0 and ok,
          "a writer that appends to the renamed file for 1.5 s: %s; %s" % (why, c.err.strip()[-300:]))


def from_beginning_resumes(tasklens, demo, tmp):
    """`from: beginning` is where a first start reads from, never where a
    restart does."""
    lines = demo_lines(demo)
    c = Case(tasklens, tmp, "frombeg", "    from: beginning\n")
    c.append(lines[:500])
    first = c.run_until_read()
    c.append(lines[500:])
    second = c.run_until_read()
    ok, why = exactly_once(c, 207)
    check(first and second and ok and "resuming at byte" in c.err,
          "from: beginning with a checkpoint resumes: %s" % why)


def main():
    tasklens, demo = sys.argv[1:3]
    with tempfile.TemporaryDirectory(prefix="tl-rot-") as tmp:
        rotated_while_stopped(tasklens, demo, tmp)
        not_found(tasklens, demo, tmp)
        inode_reuse(tasklens, demo, tmp)
        copytruncate_race(tasklens, demo, tmp)
        writer_after_rotation(tasklens, demo, tmp)
        from_beginning_resumes(tasklens, demo, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
