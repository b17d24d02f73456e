#!/usr/bin/env python3
"""Parsers read what they understand and refuse the rest, said with
file:line and counted (issue 55 point 5), and what `records` writes loads in
pandas whatever bytes a name holds (point 1). Runs under the notebook venv
(pandas from PyPI).

1. codecarbon: an emissions.csv written by pandas with a line break, quotes
   and commas inside project names reads as its rows, each whole, numbered
   by its first line; a quoted cell never closed is refused (truncated).
2. Nextflow: a status Nextflow never writes is refused with file:line, not
   counted as a task still running; `--strict` exits 1.
3. Snakemake JSON lines: a line holding an array or a string is refused.
4. Work Queue: a resource given as a string or `true` is counted and said
   with file:line.
5. records CSV and TSV of names that are not UTF-8: pandas reads every row
   (bad bytes as U+FFFD, as NDJSON has them), and the count is said.

usage: parser_refusals.py TASKLENS DEMO_WQ_LOG
"""
import io
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import notebook_venv  # noqa: E402

if __name__ == "__main__" and (rc := notebook_venv.rerun_inside()) is not None:
    sys.exit(rc)

import pandas as pd  # noqa: E402  (the venv's)

from checks import check, finish  # noqa: E402

TL, DEMO = sys.argv[1], sys.argv[2]


def run(*args):
    return subprocess.run([TL, *args], capture_output=True)


def ndjson(path, *extra):
    import json
    r = run("records", "-f", "ndjson", *extra, path)
    return [json.loads(x) for x in r.stdout.decode().splitlines() if x], r.stderr.decode(errors="replace")


def codecarbon(tmp):
    names = ["proj\nwith a line break", 'q"uo"te, and, commas', "plain", "crlf\r\ninside"]
    df = pd.DataFrame({"timestamp": ["2024-01-01T00:0%d:00" % i for i in range(len(names))],
                       "project_name": names, "run_id": ["r%d" % i for i in range(len(names))],
                       "duration": [10.5 + i for i in range(len(names))],
                       "emissions": [0.001 * (i + 1) for i in range(len(names))],
                       "energy_consumed": [0.02 * (i + 1) for i in range(len(names))]})
    path = os.path.join(tmp, "emissions.csv")
    df.to_csv(path, index=False)
    got, err = ndjson(path)
    check(sorted(r["category"] for r in got) == sorted(names) and not err.strip(),
          "codecarbon: pandas' CSV with line breaks and quotes in names reads as its %d rows, each whole "
          "(%r %s)" % (len(names), [r["category"] for r in got], err.strip()[:200]))
    want_e = {n: 0.02 * (i + 1) * 3.6e6 for i, n in enumerate(names)}
    check(all(abs(r["energy_j"] - want_e[r["category"]]) < 1e-6 for r in got),
          "codecarbon: each row keeps its own energy")
    lines = open(path, newline="").read().split("\n")
    firsts = [i + 1 for i, ln in enumerate(lines) if re.match(r"2024-01-01T", ln)]
    check(sorted(r["task_id"] for r in got) == firsts, "codecarbon: a row is numbered by its first line (%s)" % firsts)
    with open(path, "a") as f:
        f.write('2024-01-01T00:09:00,"never closed,r9,1,1,1\n')
    got, err = ndjson(path)
    check(len(got) == len(names) and re.search(r"emissions\.csv:\d+: input ends inside a record \(a quoted cell "
                                               r"never closed\)", err),
          "codecarbon: a quoted cell never closed is refused as truncated, with file:line (%s)" % err.strip()[:200])


def nextflow(tmp):
    path = os.path.join(tmp, "trace.txt")
    with open(path, "w") as f:
        f.write("task_id\tname\tstatus\texit\trealtime\n1\tA (1)\tCOMPLETED\t0\t1s\n"
                "2\tA (2)\tHALF_DONE\t0\t1s\n3\tA (3)\tRUNNING\t-\t-\n")
    r = run("summary", "--strict", "--format", "json", path)
    err = r.stderr.decode()
    check(r.returncode == 1 and "trace.txt:3: missing or malformed fields (status 'HALF_DONE' is none of Nextflow's)"
          in err, "nextflow: an unknown status refused with file:line, --strict exits 1 (%d: %s)"
          % (r.returncode, err.strip()[:200]))
    import json
    g = json.loads(r.stdout)["groups"][0]
    check(g["tasks"] == 1 and g["open"] == 1, "nextflow: the refused row is neither a task nor an open one "
          "(tasks %d, open %d)" % (g["tasks"], g["open"]))


def snakemake(tmp):
    path = os.path.join(tmp, "bench.jsonl")
    with open(path, "w") as f:
        f.write('{"s": 1.0, "h:m:s": "0:00:01", "max_rss": 10, "rule": "a"}\n[1, 2, 3]\n'
                '{"s": 2.0, "h:m:s": "0:00:02", "max_rss": 20, "rule": "a"}\n"text"\n')
    got, err = ndjson(path, "--format-in", "snakemake")
    check(len(got) == 2 and "bench.jsonl:2: " in err and "an array, not an object" in err and "bench.jsonl:4: " in err,
          "snakemake: JSON lines that are not objects refused with file:line (%d rows; %s)"
          % (len(got), err.strip()[:200]))


def work_queue(tmp):
    path = os.path.join(tmp, "wq.log")
    text = open(DEMO).read()
    text = re.sub(r'"memory":\[2,"MB"\]', '"memory":"2 MB"', text, count=1)
    text = re.sub(r'"memory":\[3,"MB"\]', '"memory":true', text, count=1)
    open(path, "w").write(text)
    lines = [i + 1 for i, ln in enumerate(text.split("\n")) if '"memory":"2 MB"' in ln or '"memory":true' in ln]
    r = run("summary", path)
    err = r.stderr.decode()
    said = ["wq.log:%d: impossible resource value (max_rss_bytes=not a number)" % n in err for n in lines]
    check(len(lines) == 2 and all(said), "work queue: a resource given as a string or true is said with "
          "file:line (%s)" % err.strip()[:200])


def records_utf8(tmp):
    path = os.path.join(tmp, "bad_utf8_trace.txt")
    with open(path, "wb") as f:
        f.write(b"task_id\tname\tstatus\texit\trealtime\tprocess\n")
        for i, n in enumerate([b"ok", b"bad\xff\xfename", b"\xc3", b"caf\xc3\xa9"]):
            f.write(b"%d\tp (%d)\tCOMPLETED\t0\t%ds\t%s\n" % (i + 1, i, i + 1, n))
    for fmt, sep in (("csv", ","), ("tsv", "\t")):
        out = os.path.join(tmp, "records." + fmt)
        r = run("records", "-f", fmt, "-o", out, path)
        try:
            df = pd.read_csv(out, sep=sep)
            cats = list(df["category"])
        except Exception as e:  # noqa: BLE001
            cats = ["pandas failed: %s" % e]
        check(cats == ["ok", "bad\ufffd\ufffdname", "\ufffd", "café"],
              "records %s: pandas reads every row, bad bytes as U+FFFD (%r)" % (fmt, cats))
        check("2 names held bytes that are not UTF-8" in r.stderr.decode(),
              "records %s: the count is said (%s)" % (fmt, r.stderr.decode().strip()[:160]))
    nd, _ = ndjson(path)
    check([x["category"] for x in nd] == ["ok", "bad\ufffd\ufffdname", "\ufffd", "café"],
          "records ndjson: the same names as the CSV")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        codecarbon(tmp)
        nextflow(tmp)
        snakemake(tmp)
        work_queue(tmp)
        records_utf8(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
