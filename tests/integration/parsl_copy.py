#!/usr/bin/env python3
"""Parsl's monitoring database within bounds (issue 55 point 6): a database
in WAL mode is read through a private copy in $TMPDIR; that copy

1. is made mode 0700 under a recognizable name (tasklens-parsl-<pid>-...)
   and removed when SIGTERM or SIGINT ends `summary` while it exists (the
   process still ends by that signal); it used to stay (94-236 MB a run);
2. left by a process a SIGKILL ended is swept at the next start; a copy
   whose process still runs is left alone;
3. parsl.max_db counts the -wal beside the database: a 1 MB database with
   3 MB of WAL is refused at max_db=2M, said;
4. a database read in memory takes it once: peak RSS at most 1.3x the
   database plus a small constant (it took 2x).

SQLite databases are made here with Python's sqlite3 (a WAL kept open by
a writer that does not checkpoint, as Parsl's monitoring hub keeps one).

usage: parsl_copy.py TASKLENS
"""
import glob
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, peak_rss  # noqa: E402

TL = sys.argv[1]
MB = 1 << 20


def make_db(path, mb, wal_mb=0):
    """A database of about mb MB; with wal_mb, in WAL mode with that much
    left in its -wal by a connection that stays open (returned)."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA page_size=65536")
    if wal_mb:
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("CREATE TABLE blobs (b BLOB)")
    blob = os.urandom(MB)
    con.execute("BEGIN")
    for _ in range(mb):
        con.execute("INSERT INTO blobs VALUES (?)", (blob,))
    con.execute("COMMIT")
    if wal_mb:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("BEGIN")
        for _ in range(wal_mb):
            con.execute("INSERT INTO blobs VALUES (?)", (blob,))
        con.execute("COMMIT")
        return con
    con.close()
    return None


def copies(tmpdir):
    return glob.glob(os.path.join(tmpdir, "tasklens-parsl-*"))


def killed_mid_copy(tmp, db, sig):
    tdir = os.path.join(tmp, "tmp-" + sig.name)
    os.makedirs(tdir)
    env = dict(os.environ, TMPDIR=tdir)
    p = subprocess.Popen([TL, "summary", "-q", "--format-in", "parsl", db], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen, mode = None, None
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None and not seen:
        c = copies(tdir)
        if c and os.path.exists(os.path.join(c[0], "monitoring.db")):
            seen = c[0]
            mode = stat.S_IMODE(os.stat(seen).st_mode)
            p.send_signal(sig)
        time.sleep(0.002)
    rc = p.wait(timeout=60)
    if not check(seen is not None, "%s: the private copy was seen while summary read (it ended first: %s)"
                 % (sig.name, rc)):
        return
    check(mode == 0o700 and os.path.basename(seen).startswith("tasklens-parsl-%d-" % p.pid),
          "%s: the copy is private (mode %o) and named with the pid (%s)" % (sig.name, mode, os.path.basename(seen)))
    check(rc == -sig, "%s: summary ended by the signal (%s)" % (sig.name, rc))
    check(not copies(tdir) and not os.listdir(tdir), "%s: nothing left in $TMPDIR (%s)" % (sig.name, os.listdir(tdir)))


def stale_swept(tmp, small):
    tdir = os.path.join(tmp, "tmp-stale")
    os.makedirs(tdir)
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer runs
    stale = os.path.join(tdir, "tasklens-parsl-%d-abc123" % dead.pid)
    live = os.path.join(tdir, "tasklens-parsl-%d-def456" % os.getpid())
    for d in (stale, live):
        os.makedirs(d, mode=0o700)
        open(os.path.join(d, "monitoring.db"), "wb").write(b"\0" * 1000)
    r = subprocess.run([TL, "summary", "-q", "--format-in", "parsl", small], env=dict(os.environ, TMPDIR=tdir),
                       capture_output=True, text=True)
    check(not os.path.exists(stale) and os.path.exists(live) and sorted(os.listdir(tdir)) == [os.path.basename(live)],
          "a copy a SIGKILL left is swept at the next start, a running process's copy kept (%s)" % os.listdir(tdir))


def wal_counts(tmp):
    db = os.path.join(tmp, "walcount.db")
    con = make_db(db, 1, wal_mb=3)
    r = subprocess.run([TL, "summary", "--format-in", "parsl", "-O", "parsl.max_db=2M", db], capture_output=True,
                       text=True)
    con.close()
    check("database and its -wal or -journal over max_db" in r.stderr,
          "max_db counts the -wal: 1 MB + 3 MB of WAL refused at 2M (%s)" % r.stderr.strip()[:200])


def memory_once(tmp):
    db = os.path.join(tmp, "big.db")
    make_db(db, 256)
    size = os.path.getsize(db)
    rc, err, rss = peak_rss([TL, "summary", "-q", "--format-in", "parsl", db])
    if os.environ.get("TL_SANITIZED") == "1":
        print("SKIP memory once: peak RSS under a sanitizer (its shadow memory and quarantine)")
        return
    check(rss <= 1.3 * size + 48 * MB, "a %d MB database read in memory peaks at %d MB (at most 1.3x + 48 MB)"
          % (size // MB, rss // MB))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "walbig.db")
        con = make_db(big, 400, wal_mb=8)
        for sig in (signal.SIGTERM, signal.SIGINT):
            killed_mid_copy(tmp, big, sig)
        stale_swept(tmp, big)
        con.close()
        wal_counts(tmp)
        memory_once(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
