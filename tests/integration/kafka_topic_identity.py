#!/usr/bin/env python3
"""A Kafka topic deleted and created again while tasklens is stopped
(issue 46 point 3), against a real Kafka 3.9 broker:

The checkpoint's offset of the old topic used to be applied to the new one:
its first messages were never read, with only "assigned wq2/0 (from
checkpoint)" in the log. A resumed partition now reads the last message it
had read before the checkpoint again and compares it (offset, length, key,
first bytes): the same topic reads on after it; another one (librdkafka
2.0 has no topic IDs) has its saved state dropped, is read from its
beginning, and that is said.

1. A Work Queue log in topic wq2; `run` reads part of it, stops.
2. wq2 deleted (Kafka's own AdminClient) and created again with another
   manager's log; `run` restarts from the checkpoint: every task point of
   the new log arrives (as `lines` makes them), the change is said.
3. A plain restart (the topic kept, more messages produced) says nothing
   and reads each message once.
4. A resumed partition whose message-to-verify is slow to come (the broker
   holds the fetch) while checkpoints are taken, then kill -9, then a
   restart: each message still read once. (Those checkpoints used to save
   the consumer's position -- one before the verified message, without its
   fingerprint -- so the next start fed that message to the parser again:
   a Work Queue chunk twice, the category-less duplicates kafka_influx once
   caught.)
5. The exit checkpoint fails (its directory on a full tmpfs) after new
   messages were read: nothing is committed, so the next start resumes from
   the last checkpoint that was saved and every task point is right. (The
   revoke at exit used to commit anyway: the next start found the group's
   commit past its state, dropped the state and read on without it --
   tasks in flight lost their category.) Needs root for the tmpfs.

usage: kafka_topic_identity.py TASKLENS DEMO_LOG
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka_harness  # noqa: E402
from checks import check, finish  # noqa: E402

TASKLENS, DEMO = sys.argv[1:3]

DELETE = """
import java.util.*;
import org.apache.kafka.clients.admin.*;
public class DeleteTopic {
    public static void main(String[] a) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", a[0]);
        try (Admin admin = Admin.create(p)) {
            admin.deleteTopics(List.of(a[1])).all().get();
        }
    }
}
"""


def points(text):
    return sorted(l for l in text.splitlines() if l.startswith("task,"))


def shifted(src, offset_s, pid):
    out = []
    for line in open(src):
        parts = line.split(" ", 2)
        if line.startswith("#") or len(parts) < 3 or not parts[0].isdigit():
            out.append(line)
        else:
            out.append("%d %s %s" % (int(parts[0]) + offset_s * 10**6, pid, parts[2]))
    return "".join(out)


def chunks(text, n):
    lines = text.encode().splitlines(keepends=True)
    return [b"".join(lines[i:i + n]) for i in range(0, len(lines), n)]


def run(cfg, out, want, timeout=60):
    err = open(out + ".err", "a")
    p = subprocess.Popen([TASKLENS, "run", "-c", cfg], stderr=err)
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = points(open(out).read()) if os.path.exists(out) else []
        if len(got) >= want:
            break
        time.sleep(0.3)
    time.sleep(1)
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)


def main():
    with kafka_harness.Kafka(partitions=1) as k, tempfile.TemporaryDirectory() as tmp:
        jdir = kafka_harness.jars()
        old = open(DEMO).read()
        new = shifted(DEMO, 3600, "4242") + shifted(DEMO, 7200, "4343")
        want_new = points(subprocess.run([TASKLENS, "lines", "-"], input=new, capture_output=True,
                                         text=True).stdout)
        old_msgs = chunks(old, 20)
        k.produce("wq2", old_msgs[:20], key=b"m")
        cfg, out = os.path.join(tmp, "run.yaml"), os.path.join(tmp, "out.lp")
        with open(cfg, "w") as f:
            f.write("sources:\n  - type: kafka\n    brokers: %s\n    topics: wq2\n    group: gid\n"
                    "    parser: wq\n    properties: {fetch.wait.max.ms: \"50\"}\nsinks:\n  - type: file\n"
                    "    path: %s\ncheckpoint_dir: %s/ck\ncheckpoint_interval: 1\nflush_interval: 100\n"
                    "aggregate: {window: 0}\n" % (k.bootstrap, out, tmp))
        run(cfg, out, 1, timeout=30)
        first = points(open(out).read())
        src = os.path.join(tmp, "DeleteTopic.java")
        with open(src, "w") as f:
            f.write(DELETE)
        r = subprocess.run(["java", "-cp", os.path.join(jdir, "*"), src, k.bootstrap, "wq2"],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and first, "the topic read in part (%d task points), then deleted (%s)"
              % (len(first), r.stderr.strip()[-200:]))
        time.sleep(2)
        k.produce("wq2", chunks(new, 20), key=b"m")
        os.unlink(out)
        run(cfg, out, len(want_new))
        got = points(open(out).read())
        err = open(out + ".err").read()
        check(got == want_new and "not the topic the checkpoint was saved from" in err,
              "created again with another log: all %d of %d task points of the new topic, the change said: %s"
              % (len(got), len(want_new), [l for l in err.splitlines() if "not the topic" in l][:1]))

        # the same topic across a restart: nothing said, nothing twice
        k.produce("wq3", old_msgs[:len(old_msgs) // 2], key=b"m")
        cfg3, out3 = os.path.join(tmp, "run3.yaml"), os.path.join(tmp, "out3.lp")
        with open(cfg3, "w") as f:
            f.write(open(cfg).read().replace("topics: wq2", "topics: wq3").replace(out, out3)
                    .replace("/ck", "/ck3").replace("gid", "gid3"))
        run(cfg3, out3, 1, timeout=30)
        k.produce("wq3", old_msgs[len(old_msgs) // 2:], key=b"m")
        want = points(subprocess.run([TASKLENS, "lines", DEMO], capture_output=True, text=True).stdout)
        run(cfg3, out3, len(want))
        got = points(open(out3).read())
        err = open(out3 + ".err").read()
        check(sorted(set(got)) == want and len(got) == len(want) and "not the topic" not in err,
              "the same topic across a restart: %d of %d task points, each once, nothing said"
              % (len(got), len(want)))
        # checkpoints while the resumed partition waits for its first message
        k.produce("wq4", old_msgs[:len(old_msgs) // 2], key=b"m")
        cfg4, out4 = os.path.join(tmp, "run4.yaml"), os.path.join(tmp, "out4.lp")
        base4 = (open(cfg).read().replace("topics: wq2", "topics: wq4").replace(out, out4)
                 .replace("/ck", "/ck4").replace("gid", "gid4")
                 .replace('{fetch.wait.max.ms: "50"}', '{fetch.wait.max.ms: "50", session.timeout.ms: "6000", '
                          'heartbeat.interval.ms: "500"}'))
        with open(cfg4, "w") as f:
            f.write(base4)
        run(cfg4, out4, 1, timeout=30)
        slow = os.path.join(tmp, "run4slow.yaml")
        with open(slow, "w") as f:  # the broker holds a fetch 10 s for bytes that never come
            f.write(base4.replace('fetch.wait.max.ms: "50"', 'fetch.wait.max.ms: "10000", '
                                  'fetch.min.bytes: "10000000"'))
        before = len(points(open(out4).read()))
        p = subprocess.Popen([TASKLENS, "run", "-c", slow], stderr=open(out4 + ".err", "a"))
        time.sleep(6)  # assigned, several checkpoints taken, the verified message not fetched yet
        p.send_signal(signal.SIGKILL)
        p.wait()
        held = len(points(open(out4).read()))
        k.produce("wq4", old_msgs[len(old_msgs) // 2:], key=b"m")
        run(cfg4, out4, len(want), timeout=90)
        got = points(open(out4).read())
        check(held == before and sorted(set(got)) == want and len(got) == len(want),
              "checkpoints while a resumed partition waits for its verified message, kill -9, restart: "
              "%d of %d task points, each once (the held run wrote %d)" % (len(got), len(want), held - before))
        exit_checkpoint_fails(k, cfg, tmp, old_msgs, want)
    return finish()


def exit_checkpoint_fails(k, cfg, tmp, msgs, want):
    """Part 5: new messages read while checkpoints fail (a full disk), then a stop."""
    mnt = tempfile.mkdtemp(prefix="tl-ck5-")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt],
                      capture_output=True).returncode:
        print("SKIP a failed exit checkpoint: cannot mount a tmpfs here (needs root)")
        return
    p = None
    try:
        out5 = os.path.join(tmp, "out5.lp")
        cfg5 = os.path.join(tmp, "run5.yaml")
        with open(cfg5, "w") as f:
            f.write(open(cfg).read().replace("topics: wq2", "topics: wq5").replace(os.path.join(tmp, "out.lp"), out5)
                    .replace("%s/ck" % tmp, "%s/ck" % mnt).replace("gid", "gid5"))
        third = len(msgs) // 3
        k.produce("wq5", msgs[:third], key=b"m")
        run(cfg5, out5, 1, timeout=30)  # a saved checkpoint, its offsets committed
        p = subprocess.Popen([TASKLENS, "run", "-c", cfg5], stderr=open(out5 + ".err", "a"))
        time.sleep(3)  # resumed, idle
        fd = os.open(os.path.join(mnt, "fill"), os.O_WRONLY | os.O_CREAT)
        try:  # the disk fills up
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        before = len(points(open(out5).read()))
        k.produce("wq5", msgs[third:2 * third], key=b"m")
        deadline = time.time() + 30
        while len(points(open(out5).read())) == before and time.time() < deadline:
            time.sleep(0.3)
        time.sleep(2)
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
        p = None
        failed = "checkpoint failed" in open(out5 + ".err").read()
        os.unlink(os.path.join(mnt, "fill"))
        k.produce("wq5", msgs[2 * third:], key=b"m")
        mark = len(open(out5 + ".err").read())
        run(cfg5, out5, len(want), timeout=90)
        got = points(open(out5).read())
        err = open(out5 + ".err").read()[mark:]
        check(failed and sorted(set(got)) == want and "the group committed" not in err,
              "new messages read while checkpoints fail (full disk), stop, restart: %d distinct task points "
              "of %d, every one right%s" % (len(set(got)), len(want),
                                            "" if "the group committed" not in err else
                                            "; but: " + [l for l in err.splitlines() if "committed" in l][0]))
    finally:
        if p:
            p.kill()
            p.wait()
        subprocess.run(["umount", "-l", mnt])
        os.rmdir(mnt)


if __name__ == "__main__":
    sys.exit(main())
