#!/usr/bin/env python3
"""Damage costs only what is damaged (issue 46 point 7):

1. One flipped bit in the length field of a real DASF trace's event (the
   length still under max_event, so it looks valid): that event is
   rejected with its byte offset, and every other Compute event is read
   (it used to swallow the 200-678 events inside the longer length); so
   does any byte of that header flipped any way.
2. Five summaries written by the real resource_monitor, concatenated, the
   third cut short: the cut one is rejected with file:line, the four intact
   ones are read (it used to keep 2 and drop the rest uncounted).

usage: damage.py TASKLENS
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, ran, resource_monitor  # noqa: E402

TL = sys.argv[1]
SHARED = os.environ.get("TL_SHARED_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "..", "..", "..", "shared")


def frames(data):
    """(offset, length) of each 8-byte big-endian framed event."""
    out, at = [], 0
    while at + 8 <= len(data):
        n = struct.unpack(">Q", data[at:at + 8])[0]
        out.append((at, n))
        at += 8 + n
    return out


def tasks(path, *extra):
    p = subprocess.run([TL, "records", "-f", "ndjson", *extra, path], capture_output=True, text=True)
    return [json.loads(x) for x in p.stdout.splitlines() if x], p.stderr


def dasf(tmp):
    src = os.path.join(SHARED, "dasf", "samples", "Tutorial_5_Profile-TracePlugin-vm.msgpack")
    if not os.path.exists(src):
        print("SKIP the DASF part: %s absent" % src)
        return
    data = bytearray(open(src, "rb").read())
    fr = frames(bytes(data))
    base, _ = tasks(src, "--format-in", "dasf")
    # a Compute event in the middle: its length gets bit 16 (n + 65536 < 1 MiB)
    k = len(fr) // 2
    while b"Compute" not in data[fr[k][0] + 8:fr[k][0] + 8 + fr[k][1]]:
        k += 1
    at, n = fr[k]
    struct.pack_into(">Q", data, at, n | 1 << 16)
    path = os.path.join(tmp, "flipped-TracePlugin-vm.msgpack")
    open(path, "wb").write(data)
    got, err = tasks(path, "--format-in", "dasf")
    said = re.search(r":\d+: document does not parse \(event at byte %d: not one msgpack value" % at, err)
    keys = lambda rs: sorted((r.get("task_key"), r.get("wall_time_s")) for r in rs)  # noqa: E731
    lost = len(base) - len(got)
    check(said and lost == 1 and set(keys(got)) <= set(keys(base)),
          "DASF: one flipped bit in an event's length: that event rejected at its byte (%s), %d of %d "
          "Compute tasks read (lost %d)" % (said.group(0) if said else err.strip()[-200:], len(got), len(base), lost))
    # any byte of the header, flipped any way (the length past max_event, or
    # pointing into the next event): that event only (issue 55 point 5)
    worst = 0
    for pos in range(8):
        for x in (0xFF, 0x01, 0x80):
            d = bytearray(open(src, "rb").read())
            d[at + pos] ^= x
            open(path, "wb").write(d)
            got, _ = tasks(path, "--format-in", "dasf")
            worst = max(worst, len(base) - len(got))
    check(worst == 1, "DASF: each of the header's 8 bytes flipped three ways costs its one event (worst %d)" % worst)


def rmonitor(tmp):
    rm = shutil.which("resource_monitor")
    if not rm:
        print("SKIP the resource_monitor part: resource_monitor absent (coop-computing-tools)")
        return
    parts = []
    for i in range(1, 6):
        body = resource_monitor(os.path.join(tmp, "s%d" % i), ["sh", "-c", "exit %d" % i])
        if not check(body, "resource_monitor wrote summary %d" % i):
            return
        parts.append(body)
    parts[2] = parts[2][:len(parts[2]) // 2]
    path = os.path.join(tmp, "five.summary")
    open(path, "wb").write(b"".join(parts))
    got, err = tasks(path)
    codes = sorted(r.get("exit_code") for r in got)
    said = re.search(r"five\.summary:3: input ends inside a record", err)
    check(codes == [1, 2, 4, 5] and said and "1 of 5" in err,
          "resource_monitor: five summaries, the third cut: the four intact read (exit codes %s), the cut "
          "one said at file:3 and counted: %s" % (codes, err.strip()[-200:]))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        dasf(tmp)
        rmonitor(tmp)
    if not ran():
        print("SKIP: the DASF sample and resource_monitor are both absent: nothing to damage")
        return 77
    return finish()


if __name__ == "__main__":
    sys.exit(main())
