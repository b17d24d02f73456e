#!/usr/bin/env python3
"""The manual cannot drift from the binary (issue 41 point 6).

1. Every generated block of docs/ (a command's --help, `run --help-config`,
   `formats`) equals what the binary prints now (docs/sync.py --check).
2. Every command `tasklens --help` lists has its page docs/COMMAND.md,
   linked from the manual's index.
3. The man pages the build wrote hold every command's options and every
   setting of the configuration file, from the same tables.
4. The README is the front door: under 15 KB, the two commands first.

usage: docs_current.py TASKLENS REPO_DIR MAN_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402


def main():
    tasklens, repo, man = sys.argv[1:4]
    r = subprocess.run([sys.executable, os.path.join(repo, "docs", "sync.py"), tasklens, "--check"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "docs/ generated blocks are current: %s" % (r.stdout.strip() or r.stderr.strip()))

    top = subprocess.run([tasklens, "--help"], capture_output=True, text=True).stdout
    cmds = sorted(set(re.findall(r"^  ([a-z]+) ", top, re.M)) - {"version"})
    index = open(os.path.join(repo, "docs", "README.md")).read()
    missing = [c for c in cmds if c != "formats" and not os.path.exists(os.path.join(repo, "docs", c + ".md"))]
    unlinked = [c for c in cmds if c != "formats" and "(%s.md)" % c not in index]
    check(len(cmds) >= 9 and not missing and not unlinked,
          "a page per command, linked from docs/README.md (%s; missing %s, unlinked %s)" % (cmds, missing, unlinked))

    page1 = open(os.path.join(man, "tasklens.1")).read()
    page5 = open(os.path.join(man, "tasklens.yaml.5")).read()
    flags = set()
    joined = []
    for c in cmds:
        if c == "formats":
            continue
        h = subprocess.run([tasklens, c, "--help"], capture_output=True, text=True).stdout
        flags |= set(re.findall(r"--[a-z][a-z0-9-]+", h))
        joined += ["%s: %s" % (c, l.strip()) for l in h.splitlines() if re.search(r"\S  +-(-[a-z]|[a-zA-Z] )", l)]
    check(not joined, "every option of every --help starts its own line (run on: %s)" % joined[:3])
    lost = sorted(f for f in flags if f.replace("-", "\\-") not in page1 and f not in page1)
    check(flags and not lost, "tasklens.1 holds every command's %d flags (lost: %s)" % (len(flags), lost[:5]))
    cfg = subprocess.run([tasklens, "run", "--help-config"], capture_output=True, text=True).stdout
    keys = set(re.findall(r"^  ([a-z][a-z0-9_.]+) ", cfg, re.M))
    lost = sorted(k for k in keys if k not in page5)
    check(len(keys) > 40 and not lost, "tasklens.yaml.5 holds every setting (%d; lost: %s)" % (len(keys), lost[:5]))
    check(page1.startswith(".\\\"") and ".TH TASKLENS 1" in page1 and ".TH TASKLENS.YAML 5" in page5,
          "the man pages are roff with their titles")

    readme = open(os.path.join(repo, "README.md")).read()
    first = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines() if "```sh\n" in readme else []
    check(len(readme.encode()) < 15000 and len(first) == 2 and "quickstart.sh" in first[0] and "test.sh" in first[1],
          "README: %d bytes, opens with the two commands" % len(readme.encode()))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
