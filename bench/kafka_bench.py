#!/usr/bin/env python3
"""Kafka source throughput against a real broker (KRaft, the test harness's),
one tasklens instance, two cores shared with the broker (and influxd).

  /usr/bin/python3 bench/kafka_bench.py TASKLENS WQ_LOG [BURST_S]

1. The log goes into a 1-partition topic as messages of 200 lines (kcat).
2. Floor, same run: `kcat -C` reading the topic to /dev/null.
3. tasklens run -> line-protocol file on /dev/shm: time until the
   self-metrics say every line was read (lines/s, messages/s, records/s).
4. tasklens run -> a real influxd (Debian's 1.6.7): the same, and the
   points InfluxDB acknowledged.
5. A burst: kcat produces the log again for BURST_S seconds (default 60)
   while tasklens follows into the file; the lag summed over partitions at
   the end of the burst, and the time to drain it.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "integration"))
import kafka_harness  # noqa: E402
from influxd_harness import Influxd  # noqa: E402

TASKLENS, LOG = sys.argv[1:3]
BURST = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
with open(LOG, "rb") as f:
    lines = f.read().splitlines(keepends=True)
msgs = [b"".join(lines[i:i + 200]) for i in range(0, len(lines), 200)]
nbytes = sum(len(m) for m in msgs)
print("input: %s, %d lines, %.1f MB, %d messages" % (LOG, len(lines), nbytes / 1e6, len(msgs)),
      flush=True)


def produce(k, topic, ms):
    cmd = ["kcat", "-P", "-b", k.bootstrap, "-t", topic, "-p", "0", "-K", "\x1e", "-D", "\x1d",
           "-X", "linger.ms=20", "-X", "batch.size=1000000", "-z", "lz4"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for m in ms:
        p.stdin.write(b"mix\x1e" + m + b"\x1d")
    p.stdin.close()
    p.wait()


def self_lines(text):
    """(lines read, lag) from the newest self-metrics point per partition."""
    last = {}
    for m in re.finditer(r"^tasklens,input=kafka:(\S+?),[^ ]* (\S+) ", text, re.M):
        f = dict(kv.split("=", 1) for kv in m.group(2).split(","))
        last[m.group(1)] = (int(f["lines"].rstrip("i")), int(f.get("lag", "0i").rstrip("i")))
    return sum(v[0] for v in last.values()), sum(v[1] for v in last.values())


def tail(path, n=262144):
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - n))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def config(path, k, topic, group, sink, tmp):
    with open(path, "w") as f:
        f.write(f"""sources:
  - type: kafka
    brokers: {k.bootstrap}
    topics: {topic}
    group: {group}
    parser: wq
sinks:
{sink}
checkpoint_dir: {tmp}/ck-{group}
checkpoint_interval: 5
flush_interval: 200
quiet: true
aggregate: {{window: 60}}
""")


def rusage_run(cfg):
    return subprocess.Popen([TASKLENS, "run", "-c", cfg], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def usage(p):
    """(cpu seconds user+sys, peak RSS in MB) of a running process."""
    with open("/proc/%d/stat" % p.pid) as f:
        st = f.read().rsplit(")", 1)[1].split()
    cpu = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
    with open("/proc/%d/status" % p.pid) as f:
        hwm = [l for l in f if l.startswith("VmHWM")][0].split()[1]
    return cpu, int(hwm) / 1024


def finish(p):
    u = usage(p)
    p.terminate()
    p.wait()
    return u


tmp = tempfile.mkdtemp(prefix="tl-kbench-", dir="/dev/shm")
try:
    with kafka_harness.Kafka(partitions=1) as k, Influxd() as db:
        t0 = time.time()
        produce(k, "wqb", msgs)
        tp = time.time() - t0
        print("produce (kcat, lz4): %.2f s, %.2f M lines/s" % (tp, len(lines) / tp / 1e6), flush=True)

        t0 = time.time()
        subprocess.run(["kcat", "-C", "-b", k.bootstrap, "-t", "wqb", "-o", "beginning", "-e", "-q"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        tk = time.time() - t0
        print("floor kcat -C > /dev/null: %.2f s, %.2f M lines/s, %.0f MB/s" % (
            tk, len(lines) / tk / 1e6, nbytes / tk / 1e6), flush=True)

        out = os.path.join(tmp, "out.lp")
        cfg = os.path.join(tmp, "file.yaml")
        config(cfg, k, "wqb", "bench-file", f"  - type: file\n    path: {out}", tmp)
        t0 = time.time()
        p = rusage_run(cfg)
        while self_lines(tail(out))[0] < len(lines):
            time.sleep(0.05)
        tt = time.time() - t0
        cpu, rss = finish(p)
        n_task = 0
        with open(out, "rb") as f:
            for l in f:
                n_task += l.startswith(b"task,")
        print("tasklens -> file: %.2f s (incl. start and group join), %.2f M lines/s, %.0f k messages/s, "
              "%.2f M records/s; %d task points; tasklens cpu %.2f s, peak RSS %.0f MB" % (
                  tt, len(lines) / tt / 1e6, len(msgs) / tt / 1e3, n_task / tt / 1e6, n_task,
                  cpu, rss), flush=True)

        db.query("CREATE DATABASE tl")
        cfg = os.path.join(tmp, "influx.yaml")
        config(cfg, k, "wqb", "bench-influx", f"  - type: influxdb\n    url: {db.url}\n    db: tl\n"
               f"    spool_dir: {tmp}/spool", tmp)
        t0 = time.time()
        p = rusage_run(cfg)
        n = 0
        while n < n_task:
            rows = db.rows("SELECT count(attempt) FROM task", "tl")
            n = rows[0]["count"] if rows else 0
            time.sleep(0.25)
        ti = time.time() - t0
        cpu, rss = finish(p)
        print("tasklens -> influxd: %.2f s, %.2f M lines/s, %.0f k task points/s acknowledged (%d); "
              "tasklens cpu %.2f s" % (ti, len(lines) / ti / 1e6, n / ti / 1e3, n, cpu), flush=True)

        # the burst: tasklens follows while kcat produces for BURST seconds
        # the points go through a FIFO to grep, which keeps only the
        # self-metrics (gigabytes of task points would fill /dev/shm)
        fifo, out2 = os.path.join(tmp, "burst.fifo"), os.path.join(tmp, "burst-self.lp")
        os.mkfifo(fifo)
        grep = subprocess.Popen("grep --line-buffered '^tasklens,' < %s > %s" % (fifo, out2), shell=True)
        cfg = os.path.join(tmp, "burst.yaml")
        config(cfg, k, "wqburst", "bench-burst", f"  - type: file\n    path: {fifo}", tmp)
        produce(k, "wqburst", msgs[:1])
        p = rusage_run(cfg)
        time.sleep(3)
        sent = [0]
        stop = threading.Event()

        def burst():
            while not stop.is_set():
                produce(k, "wqburst", msgs)
                sent[0] += len(lines)
        th = threading.Thread(target=burst)
        t0 = time.time()
        th.start()
        time.sleep(BURST)
        stop.set()
        read_at_end, lag = self_lines(tail(out2))
        th.join()
        tb = time.time() - t0
        total = 200 + sent[0]
        t1 = time.time()
        while self_lines(tail(out2))[0] < total:
            time.sleep(0.05)
        td = time.time() - t1
        finish(p)
        grep.wait()
        print("burst %.0f s (last kcat finished at %.0f s): %d lines produced; at %.0f s tasklens had "
              "read %d lines, lag %d messages; drained %.2f s after the producer finished" % (
                  BURST, tb, total, BURST, read_at_end, lag, td))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
