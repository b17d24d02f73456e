#!/usr/bin/env python3
"""The spool under real faults, against a real influxd (Debian's 1.x):

1. a full disk: the spool on a 512 KiB tmpfs, InfluxDB down, 40,000 tasks
   through `lines -`: the full disk is said once with the file and errno,
   reading pauses (the feeder blocks, memory stays bounded) instead of
   points piling up or being lost; InfluxDB comes back, and every task
   arrives exactly once; no partial frame is left in the spool;
2. damage: in a spool of many frames, one payload byte flipped in one
   frame and one bit flipped in another frame's length: only those two
   frames are lost (counted, reported with file and offset), every other
   frame -- before and after, in the same segment -- is delivered;
3. one owner: a second tasklens on the same spool directory refuses at
   once, naming the directory and the owner's pid;
4. stoppable: `run` with its spool full and InfluxDB down stops on SIGTERM
   within its drain timeout, and a restart delivers everything;
5. reload: SIGHUP with a configuration whose sink cannot open keeps the
   running one (said), and SIGHUP while the spool is full and InfluxDB is
   down keeps the sinks that still hold points (said): in both, every task
   arrives once InfluxDB can take it.

Needs root for the tmpfs (mount -t tmpfs); says SKIP for that case
otherwise.

usage: spool_faults.py TASKLENS GEN_WQ
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from influxd_harness import Influxd, free_port  # noqa: E402

TASKLENS, GEN = sys.argv[1:3]


def count(db, name):
    try:
        rows = db.rows("SELECT count(attempt) FROM task", name)
    except RuntimeError:
        return 0
    return rows[0]["count"] if rows else 0


def frames_of(path):
    """[(offset, header size, payload length)] of a spool segment, read as
    spool.h documents the format."""
    raw = open(path, "rb").read()
    off, out = 0, []
    while off + 16 <= len(raw):
        h = 20 if raw[off:off + 4] == b"TLF2" else 16
        n = int.from_bytes(raw[off + 4:off + 8], "little")
        out.append((off, h, n))
        off += h + n
    return out


def tasks_in_frame(path, off, h, n):
    data = open(path, "rb").read()[off + h:off + h + n]
    lp = subprocess.run(["zstd", "-d", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout
    return sum(1 for ln in lp.splitlines() if ln.startswith(b"task,"))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1])
    return 0


def full_disk(tmp):
    mnt = os.path.join(tmp, "small")
    os.makedirs(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mnt],
                      stderr=subprocess.DEVNULL).returncode:
        print("SKIP full disk: cannot mount a tmpfs here (needs root)")
        return
    try:
        n_tasks = 40000
        data = subprocess.run([GEN, str(n_tasks), "4", "13"], check=True, stdout=subprocess.PIPE).stdout
        db = Influxd()  # its port is chosen now; it starts later
        spool = os.path.join(mnt, "spool")
        stats = os.path.join(tmp, "full.json")
        p = subprocess.Popen([TASKLENS, "lines", "--influx-url", db.url, "--influx-db", "full",
                              "--influx-create-db", "--spool-dir", spool, "--stats", stats, "--window", "0",
                              "--influx-timeout", "1000", "--drain-timeout", "120", "-"],
                             stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        fed = [0]

        def feed():
            step = 64 << 10
            try:
                for i in range(0, len(data), step):
                    p.stdin.write(data[i:i + step])
                    p.stdin.flush()
                    fed[0] = i + step
                p.stdin.close()
            except BrokenPipeError:
                pass
        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        # wait until the disk is full and reading has paused: the feeder stops advancing
        deadline, last, still, peak = time.time() + 60, -1, 0, 0
        while time.time() < deadline and still < 6:
            time.sleep(0.5)
            peak = max(peak, rss_kib(p.pid))
            still = still + 1 if fed[0] == last else 0
            last = fed[0]
        paused_at = fed[0]
        check(paused_at < len(data), "disk full, InfluxDB down: reading paused at %d of %d bytes (the feeder "
              "blocks)" % (paused_at, len(data)))
        time.sleep(3)
        peak = max(peak, rss_kib(p.pid))
        check(fed[0] == paused_at and peak < 64 << 10, "and stays paused, memory bounded (peak RSS %d KiB)" % peak)
        db.start()  # InfluxDB is back: the spool drains, reading resumes
        feeder.join(120)
        err = p.stderr.read().decode()
        rc = p.wait(180)
        st = json.load(open(stats))
        n = count(db, "full")
        db.__exit__(None, None, None)
        said = [ln for ln in err.splitlines() if "No space left on device" in ln]
        check(len(said) == 1 and spool in said[0], "the full disk said once, with the file and errno: %s" % said)
        check(rc == 0 and n == n_tasks, "InfluxDB back: exit %d, %d of %d tasks in InfluxDB, exactly once" % (
            rc, n, n_tasks))
        check(st["spool_write_errors"] >= 1 and st["spool_corrupt_frames"] == 0,
              "write errors counted (%d), no damaged frame left behind (%d)" % (
                  st["spool_write_errors"], st["spool_corrupt_frames"]))
    finally:
        subprocess.run(["umount", "-l", mnt])


def damage(tmp, db):
    spool, stats = os.path.join(tmp, "sp-dmg"), os.path.join(tmp, "dmg.json")
    log = os.path.join(tmp, "dmg.log")
    with open(log, "wb") as f:
        f.write(subprocess.run([GEN, "30000", "4", "17"], check=True, stdout=subprocess.PIPE).stdout)
    dead = "http://127.0.0.1:%d" % free_port()
    r = subprocess.run([TASKLENS, "lines", "--influx-url", dead, "--influx-db", "dmg", "--spool-dir", spool,
                        "--window", "0", "--drain-timeout", "0", "--stats", stats, "-q", log],
                       capture_output=True, text=True)
    segs = sorted(glob.glob(os.path.join(spool, "seg-*.tls")))
    fr = frames_of(segs[-1]) if segs else []
    check(r.returncode == 1 and len(segs) == 1 and len(fr) >= 6, "all spooled while down: %d frames in one "
          "segment" % len(fr))
    if len(fr) < 6:
        return
    seg = segs[0]
    a, b = fr[1], fr[len(fr) // 2]
    lost = tasks_in_frame(seg, *a) + tasks_in_frame(seg, *b)
    with open(seg, "r+b") as f:
        f.seek(a[0] + a[1] + a[2] // 2)  # a payload byte of frame a
        x = f.read(1)
        f.seek(a[0] + a[1] + a[2] // 2)
        f.write(bytes([x[0] ^ 0x01]))
        f.seek(b[0] + 5)  # a bit of frame b's length
        x = f.read(1)
        f.seek(b[0] + 5)
        f.write(bytes([x[0] ^ 0x10]))
    db.query("CREATE DATABASE dmg")
    r = subprocess.run([TASKLENS, "lines", "--influx-url", db.url, "--influx-db", "dmg", "--spool-dir", spool,
                        "--stats", stats, "/dev/null"], capture_output=True, text=True)
    st = json.load(open(stats))
    n = count(db, "dmg")
    check(r.returncode == 0 and n == 30000 - lost, "two damaged frames cost only themselves: %d tasks == 30000 - "
          "%d in them (the frames after them in the segment arrived)" % (n, lost))
    check(st["spool_corrupt_frames"] == 2 and st["spool_bytes"] == 0,
          "both counted (%d frames, %d bytes), the rest drained" % (st["spool_corrupt_frames"],
                                                                   st["spool_corrupt_bytes"]))
    check("%s:%d: CRC mismatch" % (seg, a[0]) in r.stderr and "%s:%d: damaged frame header" % (seg, b[0]) in r.stderr,
          "each reported with its file and offset: %s" % r.stderr.strip()[:300])


def one_owner(tmp):
    spool = os.path.join(tmp, "sp-own")
    dead = "http://127.0.0.1:%d" % free_port()
    first = subprocess.Popen([TASKLENS, "lines", "--influx-url", dead, "--influx-db", "x", "--spool-dir", spool,
                              "-"], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    r = subprocess.run([TASKLENS, "lines", "--influx-url", dead, "--influx-db", "x", "--spool-dir", spool,
                        "/dev/null"], capture_output=True, text=True, timeout=30)
    first.stdin.close()
    first.kill()
    first.wait()
    check(r.returncode != 0 and "in use by another tasklens (pid %d)" % first.pid in r.stderr and spool in r.stderr,
          "a second instance on the spool directory refuses: %s" % r.stderr.strip())


def stoppable(tmp, db):
    spool, ck = os.path.join(tmp, "sp-stop"), os.path.join(tmp, "ck-stop")
    log = os.path.join(tmp, "stop.log")
    with open(log, "wb") as f:
        f.write(subprocess.run([GEN, "20000", "4", "19"], check=True, stdout=subprocess.PIPE).stdout)
    cfg = os.path.join(tmp, "stop.yaml")
    run_cfg(cfg, log, db.url, "stop", spool, ck, spool_max="200000", drain_timeout=3000)
    db.stop()
    p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(5)  # the spool is full by now, reading paused
    t0 = time.time()
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(20)
        took = time.time() - t0
    except subprocess.TimeoutExpired:
        took = None
        p.kill()
        p.wait()
    err = p.stderr.read()
    check(took is not None and took < 3 + 5 and p.returncode == 0, "spool full, InfluxDB down: SIGTERM honoured "
          "in %s s (drain timeout 3 s), exit %s: nothing lost (spooled, or before the checkpoint)" % (
              None if took is None else round(took, 1), p.returncode))
    check(err.count("is full") == 1 and spool in err, "the full spool said once: %s" % err.strip()[:300])
    db.start()
    p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 90
    while time.time() < deadline and count(db, "stop") < 20000:
        time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    p.wait(60)
    check(count(db, "stop") == 20000, "a restart delivers everything: %d of 20000 tasks" % count(db, "stop"))


def run_cfg(path, log, url, db, spool, ck, spool_max="1G", drain_timeout=20000):
    with open(path, "w") as f:
        f.write(f"""sources:
  - type: file
    path: {log}
    parser: wq
sinks:
  - type: influxdb
    url: {url}
    db: {db}
    create_db: true
    timeout: 1000
    spool_dir: {spool}
    spool_max: {spool_max}
checkpoint_dir: {ck}
flush_interval: 200
drain_timeout: {drain_timeout}
aggregate: {{window: 0}}
quiet: true
""")


def wait_count(db, name, n, secs=90):
    deadline = time.time() + secs
    while time.time() < deadline and count(db, name) < n:
        time.sleep(0.3)
    return count(db, name)


def reload_cases(tmp, db):
    # a new sink that cannot open: the running configuration stays
    log, cfg = os.path.join(tmp, "rl.log"), os.path.join(tmp, "rl.yaml")
    gen = lambda n, seed: subprocess.run([GEN, str(n), "4", str(seed)], check=True,  # noqa: E731
                                         stdout=subprocess.PIPE).stdout
    lines = gen(600, 21).splitlines(keepends=True)
    half = len(lines) // 2
    with open(log, "wb") as f:
        f.write(b"".join(lines[:half]))
    run_cfg(cfg, log, db.url, "rl", os.path.join(tmp, "sp-rl"), os.path.join(tmp, "ck-rl"))
    p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    first = wait_count(db, "rl", 250, 30)
    run_cfg(cfg, log, db.url, "rl", "/proc/no-spool-here", os.path.join(tmp, "ck-rl"))
    p.send_signal(signal.SIGHUP)
    time.sleep(1)
    with open(log, "ab") as f:
        f.write(b"".join(lines[half:]))
    n = wait_count(db, "rl", 600)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    check(0 < first < 600 and n == 600 and "keeping the running configuration" in err,
          "SIGHUP with a sink that cannot open: the running sinks stay (said), %d then %d of 600 tasks "
          "arrive: %s" % (first, n, err.strip()[-300:]))

    # a full spool with InfluxDB away: the sinks holding points are kept
    log, cfg = os.path.join(tmp, "rl2.log"), os.path.join(tmp, "rl2.yaml")
    with open(log, "wb") as f:
        f.write(gen(20000, 23))
    run_cfg(cfg, log, db.url, "rl2", os.path.join(tmp, "sp-rl2"), os.path.join(tmp, "ck-rl2"), spool_max="200000")
    db.stop()
    p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(4)  # the spool is full, reading paused, a batch held
    p.send_signal(signal.SIGHUP)
    time.sleep(2)
    db.start()
    n = wait_count(db, "rl2", 20000, 120)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    check(n == 20000 and "still holds points" in err, "SIGHUP with the spool full and InfluxDB down: the "
          "sinks stay (said), and when InfluxDB is back %d of 20000 tasks arrive: %s" % (n, err.strip()[-300:]))


def main():
    with tempfile.TemporaryDirectory(prefix="tl-spoolf-") as tmp:
        full_disk(tmp)
        one_owner(tmp)
        with Influxd() as db:
            damage(tmp, db)
            stoppable(tmp, db)
            reload_cases(tmp, db)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
