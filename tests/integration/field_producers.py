#!/usr/bin/env python3
"""The real producers (issue 45): line_profiler 5.1.0 and codecarbon 3.3.2
from PyPI (a venv cached in ~/.cache/tasklens), and Snakemake 9.27.1 (the
venv of advise_field.py), write fresh files here; tasklens reads them and
every figure is compared with what the producing tool itself reads back:

1. kernprof -l on a script with a loop, a callee and a recursive function:
   each record equals line_profiler's own load_stats() (hits, time x unit),
   per function; `python -m line_profiler` renders the same profile and the
   records from the text equal it within the text's rounding.
2. codecarbon's OfflineEmissionsTracker around two modules and the task API:
   per category, tasks, energy (kWh x 3.6e6 J) and CO2 as pandas reads the
   CSVs codecarbon wrote (its own stack).
3. Snakemake with benchmark: (TSV, repeat(), --benchmark-extended, JSON
   lines): every row as json/csv read it, the rule from the path; a row
   Snakemake's own BenchmarkRecord writes without PSS (max_pss the int 0)
   has no pss_bytes, where 0.00 is a measured 0.

usage: field_producers.py TASKLENS
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

TL = sys.argv[1]
CACHE = os.path.expanduser("~/.cache/tasklens")
VENV = os.path.join(CACHE, "producers-venv")
PY = os.path.join(VENV, "bin", "python")
PINS = ["line_profiler==5.1.0", "codecarbon==3.3.2"]

SCRIPT = '''
from line_profiler import profile

@profile
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

@profile
def work(n):
    total = 0
    for i in range(n):
        total += i * i
    s = sorted(str(i) for i in range(n // 10))
    return total + len(s) + fib(12)

if __name__ == "__main__":
    for _ in range(3):
        work(20000)
'''

LOAD = '''
import json, sys
from line_profiler import load_stats
st = load_stats(sys.argv[1])
out = []
for (fname, first, func), lines in st.timings.items():
    for lineno, hits, t in lines:
        out.append({"category": "%s:%d:%s" % (fname, first, func), "task_id": lineno,
                    "hits": hits, "wall_time_s": t * st.unit})
print(json.dumps(out))
'''

TRACK = '''
import hashlib, sys, time
from codecarbon import OfflineEmissionsTracker
out = sys.argv[1]
def burn(s):
    t = time.time()
    while time.time() - t < s:
        hashlib.sha256(b"x" * 4096).digest()
for name, s in (("module_a", 1.2), ("module_b", 0.6), ("module_a", 0.8)):
    tr = OfflineEmissionsTracker(country_iso_code="FRA", project_name=name, output_dir=out,
                                 measure_power_secs=1, log_level="error")
    tr.start(); burn(s); tr.stop()
tr = OfflineEmissionsTracker(country_iso_code="FRA", project_name="pipe", output_dir=out,
                             measure_power_secs=1, log_level="error", experiment_name="t")
tr.start()
for task in ("load", "fit", "load"):
    tr.start_task(task); burn(0.5); tr.stop_task()
tr.stop()
'''


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def records(path):
    p = run([TL, "records", "-q", "-f", "ndjson", path])
    return [json.loads(x) for x in p.stdout.splitlines() if x]


def close(a, b, rel=1e-9):
    return a is not None and b is not None and abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-12


def ensure_venv():
    ok = run([PY, "-c", "import line_profiler, codecarbon; print(line_profiler.__version__, "
              "codecarbon.__version__)"]) if os.path.exists(PY) else None
    if ok and ok.returncode == 0 and ok.stdout.split() == ["5.1.0", "3.3.2"]:
        return True
    r = run(["/usr/bin/python3", "-m", "venv", VENV])
    if r.returncode == 0:
        r = run([os.path.join(VENV, "bin", "pip"), "install", "-q"] + PINS)
    if r.returncode != 0:
        print("SKIP: %s could not be installed from PyPI: %s" % (", ".join(PINS), r.stderr[-300:]))
        return False
    return True


def line_profiler(tmp):
    with open(os.path.join(tmp, "job.py"), "w") as f:
        f.write(SCRIPT)
    r = run([os.path.join(VENV, "bin", "kernprof"), "-l", "-o", "job.lprof", "job.py"], cwd=tmp, timeout=300)
    lprof = os.path.join(tmp, "job.lprof")
    if not check(r.returncode == 0 and os.path.exists(lprof), "kernprof -l wrote job.lprof" +
                 ("" if r.returncode == 0 else ": " + r.stderr[-200:])):
        return
    load = os.path.join(tmp, "load.py")
    with open(load, "w") as f:
        f.write(LOAD)
    want = json.loads(run([PY, load, lprof], check=True).stdout)
    got = records(lprof)
    key = lambda r: (r["category"], r["task_id"])  # noqa: E731
    g = {key(r): r for r in got}
    bad = [k for k in (key(w) for w in want) if k not in g]
    bad += [key(w) for w in want if key(w) in g and (g[key(w)]["hits"] != w["hits"] or
                                                       not close(g[key(w)]["wall_time_s"], w["wall_time_s"]))]
    check(want and len(got) == len(want) and not bad,
          "line_profiler: %d timed lines, each equal to line_profiler's own load_stats (differ: %s)"
          % (len(got), bad[:3]))
    txt = run([PY, "-m", "line_profiler", "job.lprof"], cwd=tmp, check=True).stdout
    tp = os.path.join(tmp, "job.txt")
    with open(tp, "w") as f:
        f.write(txt)
    tgot = records(tp)
    worst = max((abs(r["wall_time_s"] - g[key(r)]["wall_time_s"]) / max(0.05e-6, 5e-3 * g[key(r)]["wall_time_s"])
                 for r in tgot if key(r) in g), default=9)
    check(len(tgot) == len(got) and worst <= 1.0001,
          "line_profiler: its text rendering reads to the same %d lines within its rounding (worst %.2f)"
          % (len(tgot), worst))


def codecarbon(tmp):
    out = os.path.join(tmp, "cc")
    os.makedirs(out)
    track = os.path.join(tmp, "track.py")
    with open(track, "w") as f:
        f.write(TRACK)
    r = run([PY, track, out], timeout=300)
    if not check(r.returncode == 0, "codecarbon's OfflineEmissionsTracker ran" +
                 ("" if r.returncode == 0 else ": " + r.stderr[-300:])):
        return
    files = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".csv"))
    reader = os.path.join(tmp, "sums.py")
    with open(reader, "w") as f:
        f.write("import json, re, sys\nimport pandas as pd\nout = {}\nfor p in sys.argv[1:]:\n"
                "    d = pd.read_csv(p)\n"
                "    cat = d['project_name'] if 'task_name' not in d else d['project_name'] + '/' + "
                "d['task_name'].str.replace(r'_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$', '', regex=True)\n"
                "    for c, e, k in zip(cat, d['energy_consumed'], d['emissions']):\n"
                "        w = out.setdefault(c, [0, 0.0, 0.0]); w[0] += 1; w[1] += e * 3.6e6; w[2] += k\n"
                "print(json.dumps(out))\n")
    want = json.loads(run([PY, reader] + files, check=True).stdout)
    have = {}
    for f in files:
        for r in records(f):
            h = have.setdefault(r["category"], [0, 0.0, 0.0])
            h[0] += 1
            h[1] += r.get("energy_j", 0)
            h[2] += r.get("emissions_kg", 0)
    ok = have.keys() == want.keys() and all(have[c][0] == want[c][0] and close(have[c][1], want[c][1], 1e-12)
                                            and close(have[c][2], want[c][2], 1e-12) for c in want)
    check(ok and "pipe/load" in have and have["pipe/load"][0] == 2,
          "codecarbon: per category, runs and tasks, energy and CO2 as pandas reads codecarbon's CSVs "
          "(%s)" % sorted(have))


SNAKEFILE = '''
rule all:
    input: "a.txt", "b.txt", "c.txt"
rule burn:
    output: "a.txt"
    benchmark: repeat("benchmarks/burn.tsv", 2)
    shell: "python3 -c 'sum(i*i for i in range(3000000))' && touch {output}"
rule mem:
    output: "b.txt"
    benchmark: "benchmarks/mem/x.jsonl"
    shell: "python3 -c 'import time; x = bytearray(150 << 20); time.sleep(1.2)' && touch {output}"
rule io:
    output: "c.txt"
    benchmark: "benchmarks/io/one.tsv"
    shell: "head -c 20000000 /dev/zero > c.tmp && cat c.tmp > /dev/null && mv c.tmp {output}"
'''


def snakemake(tmp):
    sm = os.path.join(CACHE, "snakemake-venv", "bin", "snakemake")
    if not os.path.exists(sm):
        print("SKIP the Snakemake part: %s absent (advise_field installs it)" % sm)
        return
    work = os.path.join(tmp, "sm")
    os.makedirs(work)
    with open(os.path.join(work, "Snakefile"), "w") as f:
        f.write(SNAKEFILE)
    r = run([sm, "--cores", "1", "--quiet", "--benchmark-extended"], cwd=work, timeout=600)
    if not check(r.returncode == 0, "Snakemake ran the benchmarked rules" +
                 ("" if r.returncode == 0 else ": " + (r.stdout + r.stderr)[-300:])):
        return
    bad = []
    n = 0
    for rel, rule in (("benchmarks/burn.tsv", "burn"), ("benchmarks/mem/x.jsonl", "mem"),
                      ("benchmarks/io/one.tsv", "io")):
        path = os.path.join(work, rel)
        got = records(path)
        if rel.endswith(".jsonl"):
            rows = [json.loads(x) for x in open(path) if x.strip()]
        else:
            rows = list(csv.DictReader(open(path), delimiter="\t"))
        if len(got) != len(rows):
            bad.append("%s: %d records, %d rows" % (rel, len(got), len(rows)))
            continue
        for g, w in zip(got, rows):
            n += 1
            if g["category"] != rule or not close(g["wall_time_s"], float(w["s"])) or \
                    ("max_rss_bytes" in g) != (str(w["max_rss"]) not in ("0", "NA")) or \
                    ("max_rss_bytes" in g and not close(g["max_rss_bytes"], round(float(w["max_rss"]) * 1048576))):
                bad.append("%s: %r vs %r" % (rel, g, w))
    mem = records(os.path.join(work, "benchmarks/mem/x.jsonl"))
    check(not bad and n == 4, "Snakemake: %d rows (repeat x2, JSON lines, extended TSV), each as csv/json read it"
          " (differ: %s)" % (n, bad[:2]))
    check(mem and mem[0].get("max_rss_bytes", 0) > 150 * 1048576,
          "Snakemake: the 150 MiB job's max_rss (MiB in the file) is %.0f MiB in bytes"
          % (mem[0].get("max_rss_bytes", 0) / 1048576 if mem else 0))
    pss_unmeasured(tmp, sm)


# Snakemake's own BenchmarkRecord writes a row as its benchmark code does
# when psutil gives no PSS (macOS, an old kernel): max_pss stays the int 0
# of `getattr(meminfo, "pss", 0)`; a measured value is a float (0.00 or more).
PSS_WRITER = r"""
import sys
from snakemake.benchmark import BenchmarkRecord
for pss in (0, 0.0, 12.5):
    r = BenchmarkRecord(running_time=2.5, max_rss=10.0, max_vms=20.0, max_uss=9.0, max_pss=pss,
                        io_in=0.0, io_out=0.0, cpu_usage=100.0, cpu_time=1.0)
    r.data_collected = True
    if pss == 0 and isinstance(pss, int):
        sys.stdout.write("\t".join(BenchmarkRecord.get_header(False)) + "\n")
    sys.stdout.write(r.to_tsv(False) + "\n")
"""


def pss_unmeasured(tmp, sm):
    py = os.path.join(os.path.dirname(sm), "python")
    r = run([py, "-c", PSS_WRITER])
    if not check(r.returncode == 0, "Snakemake's BenchmarkRecord writes rows (%s)" % r.stderr.strip()[-200:]):
        return
    d = os.path.join(tmp, "pss", "benchmarks")
    os.makedirs(d)
    path = os.path.join(d, "pssrule.tsv")
    open(path, "w").write(r.stdout)
    got = records(path)
    pss = [g.get("pss_bytes") for g in got]
    check(pss == [None, 0, round(12.5 * 1048576)],
          "Snakemake: max_pss written as the int 0 (PSS not measured) is absent, 0.00 is 0 bytes, 12.50 "
          "is 12.5 MiB (%s; rows %r)" % (pss, r.stdout.splitlines()[1:]))


def main():
    if not ensure_venv():
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        line_profiler(tmp)
        codecarbon(tmp)
        snakemake(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
