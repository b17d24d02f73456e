#!/usr/bin/env python3
"""Keeps the manual's generated blocks equal to what the binary says.

A page marks a block with the command whose output it holds:

    <!-- tasklens run --help-config -->
    ```
    ...output...
    ```
    <!-- end -->

`docs/sync.py TASKLENS` rewrites every such block under docs/ from the
binary; `--check` only compares, and exits 1 naming each stale block (the
`docs_current` test). The option tables are the one declaration: --help,
--help-config, `formats`, the man pages and these blocks all come from them.

usage: sync.py TASKLENS [--check]
"""
import glob
import os
import re
import subprocess
import sys

BLOCK = re.compile(r"(<!-- tasklens (?P<args>[^>]*?) -->\n```\n)(?P<body>.*?)(```\n<!-- end -->)", re.S)


def output_of(tasklens, args):
    """What `tasklens ARGS` prints, run from the repository's top (a block
    may name a bundled file: tests/data/...)."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([os.path.abspath(tasklens)] + args.split(), capture_output=True, text=True, cwd=top)
    if r.returncode != 0:
        sys.exit("sync.py: `tasklens %s` failed: %s" % (args, r.stderr.strip()))
    return r.stdout if r.stdout.endswith("\n") else r.stdout + "\n"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tasklens, check = sys.argv[1], "--check" in sys.argv[2:]
    root = os.path.dirname(os.path.abspath(__file__))
    stale, blocks = [], 0
    for page in sorted(glob.glob(os.path.join(root, "**", "*.md"), recursive=True)):
        text = open(page, encoding="utf-8").read()

        def fresh(m):
            nonlocal blocks
            blocks += 1
            want = output_of(tasklens, m.group("args"))
            if want != m.group("body"):
                stale.append("%s: tasklens %s" % (os.path.relpath(page, root), m.group("args")))
            return m.group(1) + want + m.group(4)

        new = BLOCK.sub(fresh, text)
        if not check and new != text:
            open(page, "w", encoding="utf-8").write(new)
    if check:
        for s in stale:
            print("stale: %s (run docs/sync.py TASKLENS)" % s)
        print("%d generated blocks, %d stale" % (blocks, len(stale)))
        return 1 if stale or not blocks else 0
    print("%d generated blocks, %d rewritten" % (blocks, len(stale)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
