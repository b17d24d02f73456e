#!/usr/bin/env python3
"""Issue 58 point 1: a real Nextflow run (its jars, local executor) with
Nextflow's own -with-report and -with-trace; tasklens's page of the same
trace must show the numbers Nextflow's report shows: per process the five
numbers and the mean of cpuUsage, memUsage and timeUsage (read from
`window.data` in Nextflow's HTML, rounded as it rounds them), and the run's
status (its tasks, succeeded).

usage: nextflow_report.py TASKLENS REPO"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nextflow_jars  # noqa: E402
from checks import check, finish  # noqa: E402

TL, REPO = sys.argv[1], sys.argv[2]

WORKFLOW = """
process burn {
  cpus 2
  memory '512 MB'
  time '2m'
  input: val x
  output: stdout
  script:
  \"\"\"
  head -c ${x}000000 /dev/zero | tail -n 1 > /dev/null
  timeout 1.${x} sh -c 'while :; do :; done' || true
  echo ${x}
  \"\"\"
}
process rest {
  cpus 1
  memory '256 MB'
  time '1m'
  input: val x
  output: stdout
  script:
  \"\"\"
  sleep 1
  echo ${x}
  \"\"\"
}
workflow { burn(channel.of(20, 40, 60, 80, 90, 30)); rest(channel.of(1, 2, 3, 4)) }
"""

CONFIG = """
executor { cpus = 64 }
trace {
  enabled = true
  overwrite = true
  raw = true
  fields = 'task_id,hash,native_id,name,process,tag,status,exit,submit,start,complete,duration,realtime,%cpu,peak_rss,rchar,wchar,cpus,memory,time'
}
report { enabled = true; overwrite = true }
"""

KEYS = {"cpuUsage": "cpu_usage", "memUsage": "mem_usage", "timeUsage": "time_usage"}


def nextflow_data(html):
    """window.data of Nextflow's report (its JSON escapes ' as \\')."""
    i = html.index("window.data = ") + len("window.data = ")
    return json.JSONDecoder().raw_decode(html[i:].replace("\\'", "'"))[0]


def ours(html):
    """Per category, our usage cells: {kind: {min, q1, q2, q3, max, mean}}."""
    if 'data-table="usage"' not in html:
        return {}
    table = html.split('data-table="usage"')[1].split("</table>")[0]
    out = {}
    for row in re.findall(r'<tr data-g="([^"]*)">(.*?)</tr>', table):
        cells = {}
        for m in re.finditer(r'data-k="(\w+)" data-v="([^"]+)" data-min="([^"]+)" data-q1="([^"]+)" '
                             r'data-q3="([^"]+)" data-max="([^"]+)" data-mean="([^"]+)"', row[1]):
            k, q2, mn, q1, q3, mx, mean = m.groups()
            cells[k] = {"min": float(mn), "q1": float(q1), "q2": float(q2), "q3": float(q3), "max": float(mx),
                        "mean": float(mean)}
        out[row[0]] = cells
    return out


def main():
    if not shutil.which("java"):
        print("SKIP: no java for Nextflow")
        return 77
    jdir = nextflow_jars.jars(REPO)
    if not check(jdir is not None, "Nextflow's jars from Maven Central"):
        return finish()
    with tempfile.TemporaryDirectory(prefix="tl-nfreport-") as work:
        with open(os.path.join(work, "main.nf"), "w") as f:
            f.write(WORKFLOW)
        with open(os.path.join(work, "base.config"), "w") as f:
            f.write(CONFIG)
        r = nextflow_jars.launch(jdir, work, ["-c", "base.config", "-with-trace", "trace.txt",
                                              "-with-report", "report.html"],
                                 outputs=["trace.txt", "report.html"])
        if not check(r.returncode == 0, "the workflow runs with Nextflow's report and trace (exit %d)" % r.returncode):
            print((r.stdout + r.stderr)[-1500:])
            return finish()
        nf = nextflow_data(open(os.path.join(work, "report.html")).read())
        page = os.path.join(work, "tasklens.html")
        subprocess.run([TL, "report", "-q", "-o", page, os.path.join(work, "trace.txt")], check=True)
        html = open(page, encoding="utf-8").read()
        got = ours(html)
        bad, n = [], 0
        for p in nf["summary"]:
            for nk, tk in KEYS.items():
                want = p.get(nk)
                if not want:
                    continue
                g = got.get(p["process"], {}).get(tk)
                for q in ("min", "q1", "q2", "q3", "max", "mean"):
                    n += 1
                    # Nextflow rounds to 2 decimals (half up, and in exact decimal where Groovy
                    # divides two integers): ours is within half a cent of its figure
                    if g is None or abs(g[q] - want[q]) > 0.005 + 1e-9:
                        bad.append((p["process"], nk, q, g and g[q], want[q]))
        check(n >= 30 and not bad, "per process cpuUsage, memUsage and timeUsage (min, q1, median, q3, max, mean): "
              "tasklens's page = Nextflow's report of the same run (%d numbers; differ: %s)" % (n, bad[:3]))
        completed = sum(1 for t in nf["trace"] if t.get("status") == "COMPLETED")
        card = dict(re.findall(r'class="stat" data-k="(tasks|succeeded)" data-v="([0-9.e+]+)"', html))
        check(completed == 10 and float(card.get("tasks", -1)) == len(nf["trace"]) and
              float(card.get("succeeded", -1)) == completed,
              "the card's tasks and succeeded = Nextflow's records (%d, %d completed): %s"
              % (len(nf["trace"]), completed, card))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
