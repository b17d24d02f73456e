#!/usr/bin/env python3
"""The InfluxDB sink against a real influxd (Debian's, on 127.0.0.1):

1. round trip over HTTP (gzip, batches): every task point arrives; a second
   run changes nothing (idempotent timestamps); a missing database is created
   with --influx-create-db;
2. partial write: one point whose field conflicts in type is refused by
   InfluxDB, the rest of its batch is written, the drop is counted;
3. outage while ~100k records flow: influxd stopped (SIGSTOP) or killed
   (SIGKILL) for >= 10 s, then back: every record arrives exactly once, the
   spool grows and drains to zero;
4. spool corruption: a segment cut mid-frame; the next run drains the intact
   frames, and reports the loss with file and offset;
5. 413: an influxd with a small max-body-size; batches split until they fit;
6. 503: an influxd throttled by a competing writer; backoff, retry, delivery;
7. a full spool: backpressure (reading pauses, nothing lost), or with
   --spool-drop-oldest, counted drops.

usage: influx_sink.py TASKLENS GEN_WQ DEMO_LOG
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402
from influxd_harness import Influxd, free_port  # noqa: E402



def count(db, name):
    rows = db.rows("SELECT count(attempt) FROM task", name)
    return rows[0]["count"] if rows else 0


def spool_bytes(d):
    return sum(os.path.getsize(f) for f in glob.glob(os.path.join(d, "seg-*.tls")))


def lines_cmd(tasklens, url, dbname, spool, stats, *extra):
    return [tasklens, "lines", "--influx-url", url, "--influx-db", dbname, "--spool-dir", spool,
            "--stats", stats, *extra]


def round_trip(tasklens, demo, db, tmp):
    summary = json.loads(subprocess.run([tasklens, "summary", "--format", "json", demo],
                                        check=True, stdout=subprocess.PIPE).stdout)
    attempts = sum(g["attempts"] for g in summary["groups"])
    spool, stats = os.path.join(tmp, "spool-rt"), os.path.join(tmp, "rt.json")
    r = subprocess.run(lines_cmd(tasklens, db.url, "rt", spool, stats, "--influx-create-db", demo),
                       stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, "round trip exit 0 (%s)" % r.stderr.strip())
    n = count(db, "rt")
    check(n == attempts, "round trip: %d task points == %d attempts" % (n, attempts))
    st = json.load(open(stats))
    check(st["batches_spooled"] == 0 and st["spool_bytes"] == 0, "nothing spooled: %s" % st)
    subprocess.run(lines_cmd(tasklens, db.url, "rt", spool, stats, demo), check=True)
    check(count(db, "rt") == attempts, "second run: still %d points" % attempts)
    hog = db.rows("SELECT max_rss_bytes, exit_code FROM task WHERE category = 'hog'", "rt")
    check(len(hog) == 1 and hog[0]["max_rss_bytes"] == 293 * 2**20 and hog[0]["exit_code"] == 143,
          "spot value: hog %s" % hog)
    # a missing database without --influx-create-db: a clear error naming it, nothing lost
    r = subprocess.run(lines_cmd(tasklens, db.url, "nope", os.path.join(tmp, "spool-nope"),
                                 os.path.join(tmp, "nope.json"), "--drain-timeout", "1", demo),
                       stderr=subprocess.PIPE, text=True)
    check(r.returncode == 1 and "database not found" in r.stderr and "remain in the spool" in r.stderr,
          "404: named and spooled (%s)" % r.stderr.strip().splitlines()[-1])
    return attempts


def partial_write(tasklens, demo, db, tmp):
    db.query("CREATE DATABASE pw")
    hog = db.rows("SELECT * FROM task WHERE category = 'hog'", "rt")[0]
    t = hog["time"]
    # limit_memory_bytes exists only on the hog's point: make it an integer first
    ts = int(subprocess.run(["date", "-d", t, "+%s%N"], stdout=subprocess.PIPE, text=True).stdout)
    db.write("pw", b"task,category=pre limit_memory_bytes=1i %d\n" % (ts - 1000))
    stats = os.path.join(tmp, "pw.json")
    r = subprocess.run(lines_cmd(tasklens, db.url, "pw", os.path.join(tmp, "spool-pw"), stats, demo),
                       stderr=subprocess.PIPE, text=True)
    st = json.load(open(stats))
    n = count(db, "pw") - 0
    total = count(db, "rt")
    check(r.returncode == 0 and "field type conflict" in r.stderr, "partial write reported: %s" % r.stderr.strip())
    check(st["points_dropped"] == 1, "exactly one point dropped and counted (%d)" % st["points_dropped"])
    # the pre-written point has no `attempt` field, so count(attempt) is tasklens's points
    check(n == total - 1, "the rest of the batch was written: %d == %d - 1" % (n, total))


def outage(tasklens, gen, db, tmp, how, n_tasks=20000):
    """n_tasks tasks = 5 lines each = 100k lines, fed over ~20 s."""
    name = "out_" + how
    db.query("CREATE DATABASE " + name)
    spool, stats = os.path.join(tmp, "spool-" + how), os.path.join(tmp, how + ".json")
    data = subprocess.run([gen, str(n_tasks), "4", "7"], check=True, stdout=subprocess.PIPE).stdout
    p = subprocess.Popen(lines_cmd(tasklens, db.url, name, spool, stats, "--window", "0",
                                   "--influx-timeout", "1000", "--drain-timeout", "120", "-"),
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], spool_bytes(spool))
            time.sleep(0.05)
    w = threading.Thread(target=watch, daemon=True)  # never keeps a failed test alive
    w.start()
    chunks = 40
    step = len(data) // chunks + 1
    for i in range(chunks):
        if i == 8:  # ~4 s in: take InfluxDB away for >= 10 s while data keeps flowing
            if how == "sigstop":
                db.pause()
            else:
                db.kill()
            down_at = time.time()
        if i == 30:
            while time.time() - down_at < 10:
                time.sleep(0.1)
            if how == "sigstop":
                db.resume()
            else:
                db.start()
        p.stdin.write(data[i * step:(i + 1) * step])
        p.stdin.flush()
        time.sleep(0.5)
    p.stdin.close()
    err = p.stderr.read().decode()
    rc = p.wait(300)
    done.set()
    w.join()
    st = json.load(open(stats))
    n = count(db, name)
    check(rc == 0, "%s: exit 0 (%s)" % (how, err.strip().splitlines()[-1:] if err.strip() else ""))
    check(n == n_tasks, "%s: %d of %d tasks in InfluxDB, exactly once" % (how, n, n_tasks))
    check(st["batches_spooled"] > 0 and peak[0] > 0, "%s: the spool grew (peak %d bytes, %d batches)"
          % (how, peak[0], st["batches_spooled"]))
    check(st["spool_bytes"] == 0 and spool_bytes(spool) == 0, "%s: and drained to zero" % how)


def corruption(tasklens, gen, db, tmp):
    spool, stats = os.path.join(tmp, "spool-corrupt"), os.path.join(tmp, "c.json")
    log = os.path.join(tmp, "12k.log")
    with open(log, "wb") as f:
        f.write(subprocess.run([gen, "12000", "4", "9"], check=True, stdout=subprocess.PIPE).stdout)
    dead = "http://127.0.0.1:%d" % free_port()  # nothing listens: everything spools
    r = subprocess.run([tasklens, "lines", "--influx-url", dead, "--influx-db", "cor", "--spool-dir", spool,
                        "--window", "0", "--drain-timeout", "0", "--stats", stats, "--quiet", log],
                       stderr=subprocess.PIPE, text=True)
    st = json.load(open(stats))
    check(r.returncode == 1 and st["spool_frames"] >= 2, "batches spooled while down (%d)" % st["spool_frames"])
    seg = sorted(glob.glob(os.path.join(spool, "seg-*.tls")))[-1]
    # read the frames ourselves (magic, length, raw length, CRCs, zstd payload)
    # to know how many task points the last one holds
    raw = open(seg, "rb").read()
    off, frames = 0, []
    while off < len(raw):
        n = int.from_bytes(raw[off + 4:off + 8], "little")
        h = 20 if raw[off:off + 4] == b"TLF2" else 16
        frames.append((off, raw[off + h:off + h + n]))
        off += h + n
    last = subprocess.run(["zstd", "-d", "-c"], input=frames[-1][1], check=True, stdout=subprocess.PIPE).stdout
    lost_tasks = sum(1 for line in last.splitlines() if line.startswith(b"task,"))
    os.truncate(seg, len(raw) - 100)  # cut the last frame
    db.query("CREATE DATABASE cor")
    r = subprocess.run([tasklens, "lines", "--influx-url", db.url, "--influx-db", "cor", "--spool-dir", spool,
                        "--stats", stats, "/dev/null"], stderr=subprocess.PIPE, text=True)
    st = json.load(open(stats))
    check("truncated frame" in r.stderr and seg in r.stderr, "loss reported with the file: %s" % r.stderr.strip())
    check(st["spool_corrupt_frames"] == 1 and st["spool_bytes"] == 0, "corrupt frame counted, rest drained")
    check(count(db, "cor") == 12000 - lost_tasks,
          "the intact batches arrived: %d tasks == 12000 - %d in the cut frame" % (count(db, "cor"), lost_tasks))


def too_large(tasklens, gen, tmp):
    """influxd with a small max-body-size answers 413: batches are split in
    halves until they fit, and everything arrives."""
    log = os.path.join(tmp, "4k.log")
    with open(log, "wb") as f:
        f.write(subprocess.run([gen, "4000", "4", "11"], check=True, stdout=subprocess.PIPE).stdout)
    stats = os.path.join(tmp, "413.json")
    with Influxd(http_extra="max-body-size = 60000") as small:
        small.query("CREATE DATABASE big")
        r = subprocess.run(lines_cmd(tasklens, small.url, "big", os.path.join(tmp, "spool-413"), stats,
                                     "--window", "0", "--drain-timeout", "30", log),
                           stderr=subprocess.PIPE, text=True)
        st = json.load(open(stats))
        check(r.returncode == 0 and st["batches_split"] > 0 and st["spool_bytes"] == 0,
              "413: batches split %d times, nothing left spooled" % st["batches_split"])
        check(count(small, "big") == 4000, "413: all 4000 tasks arrived (%d)" % count(small, "big"))


def throttled(tasklens, gen, tmp):
    """influxd limited to one concurrent write answers 503 while a competing
    writer keeps it busy: tasklens backs off, retries, and delivers all."""
    log = os.path.join(tmp, "3k.log")
    with open(log, "wb") as f:
        f.write(subprocess.run([gen, "3000", "4", "13"], check=True, stdout=subprocess.PIPE).stdout)
    stats = os.path.join(tmp, "503.json")
    extra = 'max-concurrent-write-limit = 1\n  max-enqueued-write-limit = 1\n  enqueued-write-timeout = "1ms"'
    with Influxd(http_extra=extra) as busy:
        busy.query("CREATE DATABASE thr")
        noise = b"".join(b"noise,k=%d v=%di %d\n" % (i % 50, i, 1700000000000000000 + i) for i in range(20000))
        stop = threading.Event()

        def hammer():
            while not stop.is_set():
                try:
                    busy.write("thr", noise)
                except Exception:
                    pass
        threads = [threading.Thread(target=hammer) for _ in range(3)]
        for t in threads:
            t.start()
        p = subprocess.Popen(lines_cmd(tasklens, busy.url, "thr", os.path.join(tmp, "spool-503"), stats,
                                       "--window", "0", "--drain-timeout", "120", log),
                             stderr=subprocess.PIPE, text=True)
        time.sleep(4)  # four seconds of contention, then the competitor leaves
        stop.set()
        for t in threads:
            t.join()
        err = p.communicate(timeout=180)[1]
        st = json.load(open(stats))
        check(p.returncode == 0 and "503" in err, "503: reported, then delivered (exit %d)" % p.returncode)
        check(st["retries"] > 0 and st["spool_bytes"] == 0, "503: %d retries, spool drained" % st["retries"])
        check(count(busy, "thr") == 3000, "503: all 3000 tasks arrived (%d)" % count(busy, "thr"))


def spool_full(tasklens, gen, db, tmp):
    """A spool too small for the outage. Default: reading pauses until
    InfluxDB is back (backpressure), nothing is lost. With
    --spool-drop-oldest: the run goes on, and the dropped batches are
    counted -- exactly the points missing from InfluxDB."""
    data = subprocess.run([gen, "20000", "4", "17"], check=True, stdout=subprocess.PIPE).stdout
    log = os.path.join(tmp, "20k.log")
    with open(log, "wb") as f:
        f.write(data)
    db.kill()  # down before we start
    stats = os.path.join(tmp, "bp.json")
    p = subprocess.Popen(lines_cmd(tasklens, db.url, "bp", os.path.join(tmp, "spool-bp"), stats,
                                   "--window", "0", "--spool-max", "150K", "--influx-timeout", "500",
                                   "--drain-timeout", "120", "--quiet", log))
    time.sleep(6)
    check(p.poll() is None, "backpressure: still running (paused) while InfluxDB is down")
    db.start()
    db.query("CREATE DATABASE bp")
    rc = p.wait(180)
    st = json.load(open(stats))
    check(rc == 0 and count(db, "bp") == 20000 and st["spool_dropped_frames"] == 0,
          "backpressure: all 20000 tasks arrived once InfluxDB was back (%d)" % count(db, "bp"))

    db.kill()
    stats = os.path.join(tmp, "drop.json")
    p = subprocess.Popen(lines_cmd(tasklens, db.url, "dropold", os.path.join(tmp, "spool-drop"), stats,
                                   "--window", "0", "--spool-max", "150K", "--spool-drop-oldest",
                                   "--influx-timeout", "500", "--drain-timeout", "120", "--quiet", log))
    time.sleep(4)
    db.start()
    db.query("CREATE DATABASE dropold")
    rc = p.wait(180)
    st = json.load(open(stats))
    arrived = count(db, "dropold")
    check(rc == 0 and st["spool_dropped_frames"] > 0 and arrived < 20000,
          "drop_oldest: %d batches dropped and counted, %d tasks arrived" % (st["spool_dropped_frames"], arrived))


def tls(tasklens, demo, attempts, tmp):
    """HTTPS: the CA file and insecure-skip-verify pass through to libcurl."""
    if not shutil.which("openssl"):
        print("SKIP: openssl not installed; HTTPS not tried")
        return
    with Influxd(tls=True) as sdb:
        sdb.query("CREATE DATABASE tls")
        spool, stats = os.path.join(tmp, "spool-tls"), os.path.join(tmp, "tls.json")
        r = subprocess.run(lines_cmd(tasklens, sdb.url, "tls", spool, stats, "--drain-timeout", "1", demo),
                           stderr=subprocess.PIPE, text=True)
        last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
        check(r.returncode == 1 and count(sdb, "tls") == 0 and "remain in the spool" in r.stderr
              and "certificate" in r.stderr.lower(),
              "https, unknown CA: refused, said why, spooled (%s)" % last)
        r = subprocess.run(lines_cmd(tasklens, sdb.url, "tls", spool, stats, "--influx-ca-file", sdb.ca, demo),
                           stderr=subprocess.PIPE, text=True)
        check(r.returncode == 0 and count(sdb, "tls") == attempts,
              "https with --influx-ca-file: %d points (the spooled batch drained first, then the same "
              "points again: idempotent) (%s)" % (count(sdb, "tls"), r.stderr.strip()))
        sdb.query("DROP DATABASE tls")
        sdb.query("CREATE DATABASE tls")
        r = subprocess.run(lines_cmd(tasklens, sdb.url, "tls", os.path.join(tmp, "spool-tls2"), stats,
                                     "--influx-insecure", demo), stderr=subprocess.PIPE, text=True)
        check(r.returncode == 0 and count(sdb, "tls") == attempts,
              "https with --influx-insecure: %d points" % count(sdb, "tls"))


def beyond_retention(tasklens, demo, db, tmp):
    """A database whose retention (1 h) is shorter than the log's age (its
    tasks ran days ago): InfluxDB drops those points ("points beyond
    retention policy dropped=N", a partial write). Exactly they are counted,
    said once, not resent; the self-metrics point (now) is stored."""
    db.query("CREATE DATABASE ret WITH DURATION 1h")
    old = [x for x in subprocess.run([tasklens, "lines", demo], stdout=subprocess.PIPE,
                                     text=True).stdout.splitlines()
           if x and not x.startswith("tasklens,")]  # all at the log's times
    stats = os.path.join(tmp, "ret.json")
    r = subprocess.run(lines_cmd(tasklens, db.url, "ret", os.path.join(tmp, "spool-ret"), stats, demo),
                       stderr=subprocess.PIPE, text=True, timeout=120)
    st = json.load(open(stats))
    stored = db.rows("SELECT count(lines) FROM tasklens", "ret")
    check(r.returncode == 0 and "retention" in r.stderr and st["points_dropped"] == len(old) and
          st["retries"] == 0 and st["spool_bytes"] == 0 and count(db, "ret") == 0 and stored,
          "beyond retention: %d points dropped and counted (want %d, the old ones), %d retries, "
          "the self-metrics stored: %s" % (st["points_dropped"], len(old), st["retries"], r.stderr.strip()[-200:]))


def main():
    tasklens, gen, demo = sys.argv[1:4]
    with tempfile.TemporaryDirectory(prefix="tl-sink-") as tmp, Influxd() as db:
        attempts = round_trip(tasklens, demo, db, tmp)
        tls(tasklens, demo, attempts, tmp)
        partial_write(tasklens, demo, db, tmp)
        beyond_retention(tasklens, demo, db, tmp)
        outage(tasklens, gen, db, tmp, "sigstop")
        outage(tasklens, gen, db, tmp, "sigkill")
        corruption(tasklens, gen, db, tmp)
        spool_full(tasklens, gen, db, tmp)
        too_large(tasklens, gen, tmp)
        throttled(tasklens, gen, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
