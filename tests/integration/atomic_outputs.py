#!/usr/bin/env python3
"""Every file tasklens writes is written whole or not at all (issue 55
point 3): `advise --emit -o`, `advise -o`, `records -o`, `report -o` and
`lines -o` on a
full disk (a small tmpfs, really full) and into a directory that refuses
new files (read-only) leave the previous file byte for byte as it was and
no temporary file beside it, exit non-zero and say which file and why;
on a disk with room the new file replaces the old one, keeping its mode.

Needs root for the tmpfs (mount -t tmpfs); says SKIP for that part
otherwise.

usage: atomic_outputs.py TASKLENS DEMO_LOG
"""
import os
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

TL, DEMO = sys.argv[1], sys.argv[2]
OLD = b"# the previous config, which must survive\n" * 20

COMMANDS = {
    "advise --emit bps": lambda out: [TL, "advise", "-q", "--emit", "bps", "-o", out, DEMO],
    "advise --format json": lambda out: [TL, "advise", "-q", "--format", "json", "-o", out, DEMO],
    "records": lambda out: [TL, "records", "-q", "-o", out, DEMO],
    "report": lambda out: [TL, "report", "-q", "-o", out, DEMO],
    "lines": lambda out: [TL, "lines", "-q", "-o", out, DEMO],
}


def fill(mnt):
    """Fills the file system at mnt to the last byte."""
    fd = os.open(os.path.join(mnt, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"\0" * 4096) > 0:
            pass
    except OSError:
        pass
    os.close(fd)


def refused(name, d, why):
    out = os.path.join(d, "out.file")
    with open(out, "wb") as f:
        f.write(OLD)
    os.chmod(out, 0o640)
    fill(d)
    r = subprocess.run(COMMANDS[name](out), capture_output=True, text=True)
    left = sorted(f for f in os.listdir(d) if f not in ("out.file", "filler"))
    check(r.returncode != 0, "%s, %s: exits non-zero (%d)" % (name, why, r.returncode))
    check(open(out, "rb").read() == OLD, "%s, %s: the previous file is intact" % (name, why))
    check(not left, "%s, %s: no temporary file left (%s)" % (name, why, left))
    reason = "No space left on device"
    check(out in r.stderr and reason in r.stderr, "%s, %s: the message names the file and the "
          "cause (%r)" % (name, why, r.stderr.strip()[-200:]))
    try:
        os.remove(os.path.join(d, "filler"))
    except FileNotFoundError:
        pass
    os.remove(out)


def replaced(name, d):
    out = os.path.join(d, "out.file")
    with open(out, "wb") as f:
        f.write(OLD)
    os.chmod(out, 0o640)
    r = subprocess.run(COMMANDS[name](out), capture_output=True, text=True)
    new = open(out, "rb").read()
    check(r.returncode == 0 and new != OLD and len(new) > 100 and os.stat(out).st_mode & 0o777 == 0o640,
          "%s: with room, the new file replaces the old, its mode kept (%o)" % (name, os.stat(out).st_mode & 0o777))
    check(sorted(os.listdir(d)) == ["out.file"], "%s: nothing else left beside it" % name)
    os.remove(out)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        roomy = os.path.join(tmp, "roomy")
        os.makedirs(roomy)
        for name in COMMANDS:
            replaced(name, roomy)
        # a target that is not a regular file is written, never replaced:
        # a rename over /dev/full once made it a regular file
        for name in COMMANDS:
            r = subprocess.run(COMMANDS[name]("/dev/null"), capture_output=True, text=True)
            check(r.returncode == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode),
                  "%s -o /dev/null: written to the device, which stays one (%s)" % (name, r.stderr.strip()[-120:]))
        mnt = os.path.join(tmp, "small")
        os.makedirs(mnt)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt],
                          capture_output=True).returncode != 0:
            print("SKIP full disk: cannot mount a tmpfs here (needs root)")
        else:
            try:
                for name in COMMANDS:
                    refused(name, mnt, "full")
            finally:
                subprocess.run(["umount", "-l", mnt])
        if os.geteuid() == 0:
            # root ignores a directory's mode: a read-only bind mount refuses
            ro = os.path.join(tmp, "ro")
            os.makedirs(ro)
            if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", ro],
                              capture_output=True).returncode == 0:
                try:
                    for name in COMMANDS:
                        with open(os.path.join(ro, "out.file"), "wb") as f:
                            f.write(OLD)
                        subprocess.run(["mount", "-o", "remount,ro", ro], check=True)
                        r = subprocess.run(COMMANDS[name](os.path.join(ro, "out.file")),
                                           capture_output=True, text=True)
                        check(r.returncode != 0 and open(os.path.join(ro, "out.file"), "rb").read() == OLD
                              and "Read-only file system" in r.stderr and "out.file" in r.stderr,
                              "%s, read-only file system: refused, the file intact, said (%r)"
                              % (name, r.stderr.strip()[-160:]))
                        subprocess.run(["mount", "-o", "remount,rw", ro], check=True)
                finally:
                    subprocess.run(["umount", "-l", ro])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
