#!/usr/bin/env python3
"""The parsers of what the field writes (issue 45): Nextflow traces,
Snakemake benchmarks, codecarbon CSV and line_profiler output, on the real
samples in ../shared (skipped, saying so, when absent).

Every record `tasklens records -f ndjson` writes is compared with an
independent reading of the same file in Python's standard library, written
from each producer's documented format (../shared/*/FORMAT.md), not from
tasklens's code: per row, every field tasklens maps (SI units), the
category, the result, the times; per file and category, the count and sums.
line_profiler: the `.lprof` read with pickle (a stub for LineStats), the
text renderings (plain, -rmt with ANSI and wrapped rows, -u 1e-3, kernprof
-lv stdout, public reports) against it and against their own Total time and
% Time columns. An input of no known format makes `summary` exit non-zero.

usage: field_formats.py TASKLENS REPO_DIR
"""
import csv
import datetime
import glob
import html as html_lib
import io
import json
import math
import os
import shutil
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

TL = sys.argv[1]
SHARED = os.environ.get("TL_SHARED_DIR") or os.path.join(os.path.dirname(os.path.abspath(sys.argv[2])), "shared")
MIB = 1048576.0


def records(path, *opts):
    p = subprocess.run([TL, "records", "-f", "ndjson", *opts, path], capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr)
    return p.returncode, [json.loads(line) for line in p.stdout.splitlines() if line], p.stderr


def close(a, b, rel=1e-9):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-12


def compare(name, got, want, keys):
    """Row by row, every key of `keys` (absent on both sides counts)."""
    ok = check(len(got) == len(want), "%s: %d records (Python reads %d)" % (name, len(got), len(want)))
    bad = []
    for i, (g, w) in enumerate(zip(got, want)):
        for k in keys:
            gv, wv = g.get(k), w.get(k)
            same = close(gv, wv) if isinstance(wv, float) or isinstance(gv, float) else gv == wv
            if not same:
                bad.append("row %d %s: tasklens %r, Python %r" % (i + 1, k, gv, wv))
    check(ok and not bad, "%s: every field of every row as Python reads it%s" % (
        name, "" if not bad else " -- " + "; ".join(bad[:4])))


# ---------------------------------------------------------------- Nextflow

def nf_time_ms(v):
    if re.fullmatch(r"\d+(\.\d+)?", v):
        return float(v)
    parts = re.findall(r"([\d.]+)(ms|s|m|h|d)", v)
    assert parts and "".join(a + b for a, b in parts) == v.replace(" ", ""), v
    mult = {"ms": 1, "s": 1000, "m": 60000, "h": 3600000, "d": 86400000}
    return sum(round(float(a) * mult[b]) for a, b in parts)


def nf_mem(v):
    if re.fullmatch(r"\d+(\.\d+)?", v):
        return float(v)
    num, unit = v.split(" ")
    return float(round(float(num) * 1024 ** "B KB MB GB TB PB EB ZB".split().index(unit)))


def nf_date_ms(v):
    if re.fullmatch(r"\d+", v):
        return int(v)
    d = datetime.datetime.strptime(v, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
    return round(d.timestamp() * 1000)


def nf_date_s(v):
    return nf_date_ms(v) / 1000


def nf_expected(path):
    lines = open(path).read().splitlines()
    sep = "\t" if "\t" in lines[0] else ","
    head = lines[0].split(sep)
    out = []
    for n, line in enumerate(lines[1:], start=2):
        cells = line.split(sep)
        if len(cells) > len(head) and "name" in head:  # a separator inside the name
            i, extra = head.index("name"), len(cells) - len(head)
            cells[i:i + extra + 1] = [sep.join(cells[i:i + extra + 1])]
        d = {k: v for k, v in zip(head, cells) if v != "-"}
        r = {"category": d.get("process") or d.get("name", "").split(" (")[0],
             "task_id": int(d["task_id"]) if "task_id" in d else n, "result": d.get("status", "COMPLETED"),
             "attempt": int(d.get("attempt", 1))}
        if "exit" in d:
            r["exit_code"] = int(d["exit"])
        rt = nf_time_ms(d["realtime"]) if "realtime" in d else None
        if rt is not None:
            r["wall_time_s"] = rt / 1000
        if "%cpu" in d:
            pc = float(d["%cpu"].rstrip("%"))
            r["cores_avg"] = pc / 100
            if rt is not None:
                r["cpu_time_s"] = rt * pc / 100000
        if "start" in d and "submit" in d:
            r["queue_time_s"] = (nf_date_ms(d["start"]) - nf_date_ms(d["submit"])) / 1000
        elif "duration" in d and rt is not None:
            r["queue_time_s"] = (nf_time_ms(d["duration"]) - rt) / 1000
        if "complete" in d:
            r["end_epoch_s"] = nf_date_s(d["complete"])
        elif "submit" in d and "duration" in d:
            r["end_epoch_s"] = nf_date_s(d["submit"]) + nf_time_ms(d["duration"]) / 1000
        else:  # no time in the row: the file's (written as the run ends)
            r["end_epoch_s"] = os.stat(path).st_mtime_ns / 1e9
        mem = {"peak_rss" if "peak_rss" in head else "rss": "max_rss_bytes",
               "peak_vmem" if "peak_vmem" in head else "vmem": "virtual_memory_bytes",
               "rchar": "bytes_read", "wchar": "bytes_written", "read_bytes": "storage_read_bytes",
               "write_bytes": "storage_written_bytes", "memory": "req_memory_bytes",
               "disk": "req_disk_bytes"}
        for k, f in mem.items():
            if k in d:
                r[f] = nf_mem(d[k])
        if "cpus" in d:
            r["req_cores"] = float(d["cpus"])
        if "time" in d:
            r["req_wall_time_s"] = nf_time_ms(d["time"]) / 1000
        out.append(r)
    return out


NF_KEYS = ["category", "task_id", "result", "attempt", "exit_code", "wall_time_s", "cpu_time_s",
           "cores_avg", "queue_time_s", "end_epoch_s", "max_rss_bytes", "virtual_memory_bytes",
           "bytes_read", "bytes_written", "storage_read_bytes", "storage_written_bytes",
           "req_memory_bytes", "req_disk_bytes", "req_cores", "req_wall_time_s"]


def nextflow():
    files = sorted(glob.glob(os.path.join(SHARED, "nextflow/samples/*.t*")))
    files = [f for f in files if not f.endswith("sha256sums.txt")]
    if not check(len(files) >= 5, "nextflow: real traces in ../shared (%d)" % len(files)):
        return
    for f in files:
        rc, got, err = records(f)
        check(rc == 0 and "rejected" not in err, "nextflow %s: read without a reject" % os.path.basename(f))
        for g in got:  # an open task (in flight at the end) carries its state, not a result
            g.setdefault("result", None)
        compare("nextflow " + os.path.basename(f), got, nf_expected(f), NF_KEYS)
    # CSV with a comma inside a name (trace.sep=','): glued back, not lost
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as t:
        t.write("task_id,name,status,exit,realtime,%cpu,peak_rss\n"
                "1,ALIGN (a, b),COMPLETED,0,1m 5s,150.0%,1.5 GB\n2,ALIGN (c),FAILED,1,-,-,-\n")
    rc, got, _ = records(t.name)
    compare("nextflow CSV with a comma in a tag", got, nf_expected(t.name), NF_KEYS)
    check(got and got[0]["max_rss_bytes"] == 1610612736 and got[0]["wall_time_s"] == 65,
          "nextflow: '1.5 GB' is 1.5 x 1024^3 bytes (MemoryUnit), '1m 5s' 65 s")
    # dates carry no zone: utc_offset states it
    rc, shifted, _ = records(os.path.join(SHARED, "nextflow/samples/BU-ISCIII-SARS_Cov2_assembly-nf_trace.txt"),
                             "-O", "nextflow.utc_offset=2")
    bu = os.path.join(SHARED, "nextflow/samples/BU-ISCIII-SARS_Cov2_assembly-nf_trace.txt")
    base, mtime = nf_expected(bu), os.stat(bu).st_mtime_ns / 1e9
    check(shifted and all(close(s["end_epoch_s"], b["end_epoch_s"] - 7200) for s, b in zip(shifted, base)
                          if b["end_epoch_s"] != mtime),
          "nextflow: -O nextflow.utc_offset=2 reads the dates as UTC+2")
    os.unlink(t.name)


# ---------------------------------------------------------------- Snakemake

def sm_rule(path):
    parent = os.path.basename(os.path.dirname(path))
    if parent in ("benchmarks", "benchmark"):
        return os.path.splitext(os.path.basename(path))[0]
    return parent


def sm_row(d, path, n):
    def num(k):
        v = d.get(k)
        if v is None or v in ("NA", "-"):
            return None
        return float(v)
    r = {"category": d.get("rule_name") or sm_rule(path), "task_id": n, "result": "SUCCESS"}
    for k, f in (("s", "wall_time_s"), ("cpu_time", "cpu_time_s")):
        if num(k) is not None:
            r[f] = num(k)
    if num("mean_load") is not None:
        r["cores_avg"] = num("mean_load") / 100
    not_sampled = str(d.get("max_rss")) == "0" and str(d.get("max_vms")) == "0"
    mib = {"io_in": "storage_read_bytes", "io_out": "storage_written_bytes"}
    if not not_sampled:
        mib.update({"max_rss": "max_rss_bytes", "max_vms": "virtual_memory_bytes",
                    "max_uss": "uss_bytes", "max_pss": "pss_bytes"})
    for k, f in mib.items():
        if num(k) is not None:
            r[f] = float(round(num(k) * MIB))
    if num("threads") is not None:
        r["alloc_cores"] = num("threads")
    return r


def sm_expected(path):
    text = open(path).read().splitlines()
    if text and text[0].startswith("{"):
        return [sm_row({k: (v if not isinstance(v, (dict, list)) else None) for k, v in json.loads(line).items()},
                       path, n) for n, line in enumerate(text, start=1)]
    rows = list(csv.DictReader(io.StringIO("\n".join(text) + "\n"), delimiter="\t"))
    return [sm_row(d, path, n) for n, d in enumerate(rows, start=2)]


SM_KEYS = ["category", "task_id", "result", "wall_time_s", "cpu_time_s", "cores_avg", "max_rss_bytes",
           "virtual_memory_bytes", "uss_bytes", "pss_bytes", "storage_read_bytes",
           "storage_written_bytes", "alloc_cores"]


def snakemake():
    files = sorted(glob.glob(os.path.join(SHARED, "snakemake/samples/**/*.tsv"), recursive=True) +
                   glob.glob(os.path.join(SHARED, "snakemake/samples/**/*.jsonl"), recursive=True) +
                   glob.glob(os.path.join(SHARED, "snakemake/samples/snakemake-tests/*.txt")))
    if not check(len(files) >= 20, "snakemake: real benchmark files in ../shared (%d)" % len(files)):
        return
    for f in files:
        rc, got, err = records(f)
        check(rc == 0 and "rejected" not in err, "snakemake %s: read without a reject" % os.path.relpath(f, SHARED))
        compare("snakemake " + os.path.relpath(f, SHARED), got, sm_expected(f), SM_KEYS)
        mtime = os.stat(f).st_mtime
        check(all(abs(g.get("end_epoch_s", 0) - mtime) < 1e-3 for g in got),
              "snakemake %s: rows take the file's modification time" % os.path.basename(f))
    quick = os.path.join(SHARED, "snakemake/samples/generated/runA/benchmarks/quick.tsv")
    _, got, _ = records(quick)
    check(got and "max_rss_bytes" not in got[0], "snakemake: a job done before the first sample has no "
          "memory (integer 0 in quick.tsv), not 0 bytes")
    _, got, _ = records(os.path.join(SHARED, "snakemake/samples/generated/runA/benchmarks/alloc_mem.tsv"),
                        "-O", "snakemake.rule=ALLOC")
    check(got and got[0]["category"] == "ALLOC", "snakemake: -O snakemake.rule=NAME names the rule")


# ---------------------------------------------------------------- codecarbon

def cc_expected(path):
    rows = list(csv.DictReader(open(path, newline="")))
    out = []
    kwh = {"energy_consumed": "energy_j", "cpu_energy": "cpu_energy_j", "gpu_energy": "gpu_energy_j",
           "ram_energy": "ram_energy_j"}
    plain = {"duration": "wall_time_s", "emissions": "emissions_kg", "cpu_power": "cpu_power_w",
             "gpu_power": "gpu_power_w", "ram_power": "ram_power_w", "cpu_count": "machine_cpus",
             "cpu_utilization_percent": "cpu_utilization_percent",
             "gpu_utilization_percent": "gpu_utilization_percent",
             "ram_utilization_percent": "ram_utilization_percent"}
    gib = {"ram_used_gb": "ram_used_bytes", "ram_total_size": "machine_memory_bytes"}
    for n, d in enumerate(rows, start=2):
        cat = d["project_name"]
        if "task_name" in d:
            cat += "/" + re.sub(r"_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$", "", d["task_name"])
        r = {"category": cat, "task_id": n, "result": "SUCCESS"}
        for table, scale in ((kwh, 3.6e6), (plain, 1), (gib, 1024 ** 3)):
            for k, f in table.items():
                if d.get(k) not in (None, ""):
                    r[f] = float(d[k]) * scale
        ts = datetime.datetime.strptime(d["timestamp"], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
        r["end_epoch_s"] = ts.timestamp()
        out.append(r)
    return out


CC_KEYS = ["category", "task_id", "result", "wall_time_s", "energy_j", "emissions_kg", "cpu_energy_j",
           "gpu_energy_j", "ram_energy_j", "cpu_power_w", "gpu_power_w", "ram_power_w", "machine_cpus",
           "cpu_utilization_percent", "gpu_utilization_percent", "ram_utilization_percent",
           "ram_used_bytes", "machine_memory_bytes", "end_epoch_s"]


def codecarbon():
    files = sorted(glob.glob(os.path.join(SHARED, "codecarbon/samples/*/*.csv")))
    if not check(len(files) >= 3, "codecarbon: real CSV files in ../shared (%d)" % len(files)):
        return
    for f in files:
        rc, got, err = records(f)
        check(rc == 0 and "rejected" not in err, "codecarbon %s: read without a reject" % os.path.basename(f))
        compare("codecarbon " + os.path.basename(f), got, cc_expected(f), CC_KEYS)
        # per category, the energy and CO2 sums
        want = {}
        for r in cc_expected(f):
            w = want.setdefault(r["category"], [0, 0.0, 0.0])
            w[0] += 1
            w[1] += r.get("energy_j", 0)
            w[2] += r.get("emissions_kg", 0)
        have = {}
        for r in got:
            h = have.setdefault(r["category"], [0, 0.0, 0.0])
            h[0] += 1
            h[1] += r.get("energy_j", 0)
            h[2] += r.get("emissions_kg", 0)
        check(have.keys() == want.keys() and all(have[k][0] == want[k][0] and close(have[k][1], want[k][1])
                                                  and close(have[k][2], want[k][2]) for k in want),
              "codecarbon %s: per category, tasks, energy and CO2 sums" % os.path.basename(f))
    tasks = [f for f in files if os.path.basename(f).startswith("emissions_tasks_")]
    if tasks:
        _, got, _ = records(tasks[0])
        cats = sorted({g["category"] for g in got})
        check(cats == ["task_api_pipeline/classify", "task_api_pipeline/load_alerts",
                       "task_api_pipeline/write_results"],
              "codecarbon: a reused task name's _<uuid4> is removed: %s" % cats)


# ---------------------------------------------------------------- line_profiler

class _LineStats:
    def __setstate__(self, state):
        self.__dict__.update(state)


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if name == "LineStats":
            return _LineStats
        raise pickle.UnpicklingError("not a LineStats pickle: %s.%s" % (module, name))


def lprof_expected(path):
    with open(path, "rb") as f:
        st = _Unpickler(f).load()
    out = []
    for (fname, first, func), lines in st.timings.items():
        for lineno, hits, t in lines:
            out.append({"category": "%s:%d:%s" % (fname, first, func), "task_id": lineno,
                        "hits": float(hits), "wall_time_s": t * st.unit})
    return out


def text_functions(path):
    """Per function of a text report: Total time, and % Time per line (plain renderings)."""
    funcs, cur = {}, None
    for line in open(path, errors="replace"):
        m = re.match(r"Total time: ([\d.e+-]+) s", line)
        if m:
            total = float(m.group(1))
        m = re.match(r"Function: (.*) at line (\d+)", line)
        if m:
            cur = {"total": total, "pct": {}}
            funcs[(m.group(1), int(m.group(2)))] = cur
        m = re.match(r"\s*(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([\d.]+)\s", line)
        if m and cur is not None:
            cur["pct"][int(m.group(1))] = float(m.group(5))
    return funcs


def lineprof():
    gen = os.path.join(SHARED, "lineprof/samples/generated")
    lprofs = sorted(glob.glob(gen + "/*/*.lprof"))
    if not check(len(lprofs) >= 4, "lineprof: real .lprof files in ../shared (%d)" % len(lprofs)):
        return
    for f in lprofs:
        rc, got, err = records(f)
        want = lprof_expected(f)
        check(rc == 0 and "rejected" not in err, "lineprof %s: read without a reject" % os.path.basename(f))
        key = lambda r: (r["category"], r["task_id"])  # noqa: E731
        compare("lineprof " + os.path.relpath(f, gen), sorted(got, key=key), sorted(want, key=key),
                ["category", "task_id", "hits", "wall_time_s"])
        # every text rendering of it: the same lines, within the text's rounding
        exact = {key(r): r for r in want}
        for txt in sorted(glob.glob(f + ".*txt")):
            unit = 1e-3 if "u1e-3" in txt else 1e-6
            _, tgot, terr = records(txt)
            far = [k for k in (key(r) for r in tgot) if k not in exact]
            worst = max((abs(r["wall_time_s"] - exact[key(r)]["wall_time_s"]) /
                         max(0.05 * unit, 5e-3 * exact[key(r)]["wall_time_s"]) for r in tgot if key(r) in exact),
                        default=0)
            hits_ok = all(r["hits"] == exact[key(r)]["hits"] for r in tgot if key(r) in exact)
            check(len(tgot) == len(want) and not far and worst <= 1.0001 and hits_ok,
                  "lineprof %s: %d of %d lines, hits equal, times within the text's rounding (worst %.2f of it)"
                  % (os.path.basename(txt), len(tgot), len(want), worst))
        # per function, the lines' sum is line_profiler's Total time, and % Time reads back
        plain = f + ".txt"
        if os.path.exists(plain):
            _, tgot, _ = records(plain)
            sums = {}
            for r in tgot:
                sums.setdefault(r["category"], {})[r["task_id"]] = r["wall_time_s"]
            bad = []
            for (func, first), fd in text_functions(plain).items():
                cat = next((c for c in sums if c.endswith(":%d:%s" % (first, func))), None)
                if cat is None:
                    if fd["total"]:
                        bad.append("%s missing" % func)
                    continue
                s = sum(sums[cat].values())
                if abs(s - fd["total"]) > 1e-6 * max(1, len(sums[cat])) + 5e-6 * fd["total"]:
                    bad.append("%s: lines sum %.7g, Total time %.7g" % (func, s, fd["total"]))
                for ln, pct in fd["pct"].items():
                    if ln in sums[cat] and abs(100 * sums[cat][ln] / s - pct) > 0.051:
                        bad.append("%s:%d %% Time %.1f, from records %.3f" % (func, ln, pct, 100 * sums[cat][ln] / s))
            check(not bad, "lineprof %s: per function the lines sum to Total time, %% Time reads back%s"
                  % (os.path.basename(plain), "" if not bad else " -- " + "; ".join(bad[:3])))
    # kernprof -lv stdout: the program's output first, then the report
    lv = glob.glob(gen + "/*/*_-lv_stdout.txt")
    for f in lv:
        _, got, _ = records(f)
        lp = f.replace(".kernprof_-lv_stdout.txt", ".lprof")
        want = lprof_expected(lp) if os.path.exists(lp) else []
        check(len(got) == len(want) and got, "lineprof %s: the report after the program's output (%d lines, "
              ".lprof %d)" % (os.path.basename(f), len(got), len(want)))
    # public reports: fink's README block (no Timer unit, no Total time), a 2018 report
    fink = glob.glob(os.path.join(SHARED, "lineprof/samples/public/fink-science-perf*"))
    for f in fink:
        _, got, _ = records(f)
        rows = [re.match(r"\s*(\d+)\s+(\d+)\s+([\d.e+]+)\s+(\S+)\s+([\d.]+)\s", line) for line in open(f)]
        rows = [m for m in rows if m]
        total = sum(float(m.group(3)) for m in rows)
        bad = [m.group(1) for m in rows
               if not any(r["task_id"] == int(m.group(1)) and close(r["wall_time_s"], float(m.group(3)) * 1e-6)
                          and r["hits"] == float(m.group(2)) and abs(100 * r["wall_time_s"] / (total * 1e-6) -
                                                                   float(m.group(5))) <= 0.051 for r in got)]
        top = max(got, key=lambda r: r["wall_time_s"]) if got else {}
        check(got and len(got) == len(rows) and not bad,
              "lineprof fink README: %d timed lines, each line's time, hits and %% Time as the README shows"
              " (top: line %s)" % (len(got), top.get("task_id")))
    res = glob.glob(os.path.join(SHARED, "lineprof/samples/public/*.res"))
    for f in res:
        rc, got, err = records(f)
        n_rows = 0
        started = False
        for line in open(f, errors="replace"):
            if line.startswith("Line #"):
                started = True
            elif started and re.match(r"\s*\d+\s+\d+\s+[\d.e+]+\s+[\d.e+]+\s+[\d.]+", line):
                n_rows += 1
        check(rc == 0 and len(got) == n_rows and n_rows > 0,
              "lineprof %s: every timed line of a 2018 report after test output (%d, Python %d)"
              % (os.path.basename(f), len(got), n_rows))


def cells(html, table):
    """The data-k/data-v cells of each row of one data-table."""
    m = re.search(r'<table[^>]*data-table="%s".*?</table>' % re.escape(table), html, re.S)
    if not m:
        return None
    rows = []
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", m.group(0), re.S):
        row = {k: None if v == "null" else float(v) for k, v in re.findall(r'data-k="([^"]+)" data-v="([^"]+)"', tr)}
        name = re.search(r'<td class="n(?: parts| long)?"[^>]*>(.*?)</td>', tr, re.S)
        if row:
            row["name"] = html_lib.unescape(re.sub(r"<[^>]+>", "", name.group(1))) if name else None
            rows.append(row)
    return rows


def profile_page(lp, html, funcs, want, tmp):
    """A line profile's page (issue 58 point 4): its own card and nothing task-shaped; each line's code from
    the source file the function names, found one folder up from the .lprof (where kernprof ran), as
    line_profiler shows it; without the file, the page says so."""
    card = re.search(r'data-card="profile".*?data-k="functions" data-v="(\d+)".*?data-k="lines" data-v="(\d+)"', html)
    check(card and (int(card.group(1)), int(card.group(2))) == (len(funcs), len(want))
          and all(x not in html for x in ('id="summary"', 'id="tasks"', 'id="failures"', 'id="groups"', "tasks</")),
          "report: a profile's card counts %d functions and %d lines, and the page has no task-shaped section"
          % (len(funcs), len(want)))
    src = os.path.join(os.path.dirname(os.path.dirname(lp)), "alerts_pipeline.py")
    text = open(src).read().split("\n")
    bad, n = [], 0
    for table in re.findall(r'<table class="lines" data-table="lines-\d+">(.*?)</table>', html, re.S):
        for line, code in re.findall(r'data-k="line" data-v="(\d+)".*?<td class="n code">(.*?)</td>', table, re.S):
            n += 1
            if html_lib.unescape(code) != text[int(line) - 1]:
                bad.append((line, code, text[int(line) - 1]))
    check(n == len(want) and not bad and os.path.realpath(src) in html,
          "report: all %d lines' code read from %s, as the file has it, and the page names the file (differ: %s)"
          % (n, os.path.basename(src), bad[:2]))
    alone = os.path.join(tmp, "alone")
    os.makedirs(alone, exist_ok=True)
    shutil.copy(lp, alone)
    out = os.path.join(tmp, "alone.html")
    subprocess.run([TL, "report", "-q", "-o", out, os.path.join(alone, os.path.basename(lp))], check=True,
                   cwd=tmp)
    page = open(out).read()
    check('data-missing="%d"' % len(funcs) in page and "was not found" in page
          and not re.search(r'<td class="n code">[^<]', page),
          "report: a .lprof without its source beside it shows no code and says the %d functions' file was "
          "not found" % len(funcs))


def energy_views(html, gen):
    """codecarbon's page (issue 58 point 4): energy in Wh or kWh and CO2 in g or kg, one unit per column as its
    head says; categories by energy; the attempts that emitted most, as Python ranks the CSVs' rows; each
    attempt's mean power over time."""
    rows = cells(html, "energy") or []
    table = re.search(r'data-table="energy" data-energy-unit="(\w+)" data-co2-unit="(\w+)"', html)
    eu, cu = (table.group(1), table.group(2)) if table else (None, None)
    per = {"Wh": 3600, "kWh": 3.6e6, "g": 1e-3, "kg": 1}
    shown = re.findall(r'data-k="measured_j" data-v="([^"]+)" title="[^"]+">([^<]+)<', html)
    ok_units = eu in ("Wh", "kWh") and cu in ("g", "kg") and shown and all(
        abs(float(t) - float(v) / per[eu]) <= 0.01 * float(v) / per[eu] + 1e-12 for v, t in shown)
    energies = [r["measured_j"] for r in rows]
    check(ok_units and energies == sorted(energies, reverse=True),
          "report: energy in %s and CO2 in %s, one unit per column; categories by energy, most first" % (eu, cu))
    want = []
    for f in glob.glob(gen + "/*.csv"):
        want += [r for r in cc_expected(f) if r.get("emissions_kg") is not None]
    want.sort(key=lambda r: -r["emissions_kg"])
    top = cells(html, "top-emissions") or []
    check(len(top) == min(10, len(want)) and all(close(t["kg"], w["emissions_kg"]) for t, w in zip(top, want)),
          "report: the %d attempts that emitted most, most first, as the CSVs' rows rank" % len(top))
    pts = re.search(r'data-plot="energy-power"(.*?)</svg>', html, re.S)
    n = len(re.findall(r"<circle class=\"pt\"", pts.group(1))) if pts else 0
    check(n == len([r for r in want if r.get("wall_time_s")]),
          "report: each measured attempt's mean power over time (%d points)" % n)


def spark_page(tmp):
    """A Spark run's page (issue 58 point 4): per stage the run time, JVM GC time, shuffle read and write, input,
    output and skew (longest / median task) = the same from `records`' last attempts; executor metrics plotted
    in bytes and seconds."""
    log = os.path.join(SHARED, "spark/samples/local-1795570335358")
    if not os.path.exists(log):
        print("SKIP part: no Spark event log in ../shared")
        return
    out = os.path.join(tmp, "spark.html")
    subprocess.run([TL, "report", "-q", "-o", out, log], check=True)
    html = open(out).read()
    recs = [json.loads(l) for l in subprocess.run([TL, "records", "-q", "-f", "ndjson", log], capture_output=True,
                                                   text=True, check=True).stdout.splitlines()]
    by = {}
    for r in recs:
        if r.get("final") and r.get("jvm_gc_time_s") is not None:
            by.setdefault(r["category"], []).append(r)
    rows = {r["name"]: r for r in cells(html, "stages") or []}
    bad = []
    for cat, rs in by.items():
        walls = sorted(r["wall_time_s"] for r in rs)
        n = len(walls)
        median = walls[n // 2] if n % 2 else (walls[n // 2 - 1] + walls[n // 2]) / 2
        want = {"tasks": n, "run_s": sum(walls), "gc_s": sum(r["jvm_gc_time_s"] for r in rs),
                "shuffle_read": sum(r["bytes_received"] for r in rs), "shuffle_write": sum(r["bytes_sent"] for r in rs),
                "input": sum(r["bytes_read"] for r in rs), "output": sum(r["bytes_written"] for r in rs),
                "max_s": walls[-1], "median_s": median, "skew": walls[-1] / median}
        got = rows.get(cat)
        if not got or any(not close(got[k], v) for k, v in want.items()):
            bad.append((cat, got, want))
    order = [r["run_s"] for r in cells(html, "stages") or []]
    check(by and len(rows) == len(by) and not bad and order == sorted(order, reverse=True),
          "report: %d Spark stages, each's run time, GC time, shuffle read/write, input, output and skew as "
          "`records` gives them, most run time first (differ: %s)" % (len(rows), bad[:1]))
    units = {}
    for name, body in re.findall(r'<div data-samples="([^"]+)".*?<svg(.*?)</svg>', html, re.S):
        units[name] = body
    mem = [b for n, b in units.items() if n.endswith("Memory")]
    gc = [b for n, b in units.items() if n.endswith("GCTime")]
    check(mem and all(re.search(r">\d[\d.]*[KMG]iB<", b) for b in mem) and gc
          and all(re.search(r">\d[\d.]*m?s<", b) for b in gc),
          "report: executor metrics in the page's units: %d ...Memory series in bytes, %d ...GCTime in seconds"
          % (len(mem), len(gc)))


def report_pages(tmp):
    """The report's line profile and energy tables against Python's reading."""
    spark_page(tmp)
    lp = os.path.join(SHARED, "lineprof/samples/generated/line_profiler-5.1.0/alerts_pipeline.lprof")
    if os.path.exists(lp):
        out = os.path.join(tmp, "lp.html")
        p = subprocess.run([TL, "report", "-q", "-o", out, lp], capture_output=True, text=True)
        html = open(out).read() if p.returncode == 0 else ""
        want = lprof_expected(lp)
        funcs = {}
        for r in want:
            funcs.setdefault(r["category"], []).append(r)
        heads = re.findall(r'<h3 class="fn">(.*?) <span', html)
        order = sorted(funcs, key=lambda c: -sum(r["wall_time_s"] for r in funcs[c]))
        check(heads == order, "report: the line profile's functions, most time first (%s)" % heads)
        bad = []
        for k, cat in enumerate(heads):
            rows = cells(html, "lines-%d" % k) or []
            total = sum(r["wall_time_s"] for r in funcs[cat])
            exp = sorted(funcs[cat], key=lambda r: r["task_id"])
            if len(rows) != len(exp):
                bad.append("%s: %d rows, %d lines" % (cat, len(rows), len(exp)))
                continue
            for row, e in zip(rows, exp):
                if (row["line"] != e["task_id"] or row["hits"] != e["hits"] or not close(row["time"], e["wall_time_s"])
                        or not close(row["pct"], 100 * e["wall_time_s"] / total)
                        or not close(row["per_hit"], e["wall_time_s"] / e["hits"])):
                    bad.append("%s:%d %r" % (cat, e["task_id"], row))
        check(html and not bad, "report: every profiled line's hits, time, per hit and %% Time as the .lprof "
              "gives them%s" % ("" if not bad else " -- " + "; ".join(bad[:3])))
        first = html.find('id="lines"')
        check(0 < first < html.find('id="inputs"'), "report: a line profile comes first, before the inputs")
        profile_page(lp, html, funcs, want, tmp)
    gen = os.path.join(SHARED, "codecarbon/samples/generated")
    if os.path.isdir(gen):
        out = os.path.join(tmp, "cc.html")
        p = subprocess.run([TL, "report", "-q", "-o", out, gen], capture_output=True, text=True)
        html = open(out).read() if p.returncode == 0 else ""
        want = {}
        for f in glob.glob(gen + "/*.csv"):
            for r in cc_expected(f):
                w = want.setdefault(r["category"], [0, 0.0, 0.0])
                w[0] += 1
                w[1] += r.get("energy_j", 0)
                w[2] += r.get("emissions_kg", 0)
        rows = {r["name"]: r for r in cells(html, "energy") or []}
        bad = [c for c, w in want.items() if c not in rows or rows[c]["attempts"] != w[0]
               or not close(rows[c]["measured_j"], w[1]) or not close(rows[c]["measured_kg"], w[2])]
        check(rows and not bad and len(rows) == len(want),
              "report: per category, codecarbon's measured energy and CO2 (%d categories; differ: %s)"
              % (len(rows), bad[:3]))
        check("Estimated" in html and "never added" in html,
              "report: the measurement and tasklens's estimate each labelled")
        energy_views(html, gen)


RUN_CONFIG = """\
sources:
  - type: file
    path: {path}
    follow: true
sinks:
  - type: file
    path: {out}
flush_interval: 100
"""


def task_points(text, keep_time):
    """Task points; without their timestamp for formats timed by their file."""
    pts = [l for l in text.splitlines() if l.startswith("task,")]
    return sorted(pts if keep_time else [l.rsplit(" ", 1)[0] for l in pts])


def followed(tmp):
    """`run` following each format's file as it is written, row by row: the
    task points `lines` writes for the whole file."""
    cases = [("nextflow/samples/jianhong-chipseq_gh-pages_execution_trace.txt", True),
             ("snakemake/samples/generated/runB/benchmarks/burn_cpu/1.tsv", False),
             ("snakemake/samples/generated/runC/benchmarks/burn_cpu/2.jsonl", False),
             ("codecarbon/samples/generated/emissions.csv", True),
             ("lineprof/samples/generated/line_profiler-5.1.0/matrix_ops.lprof.rmt.txt", False)]
    for rel, keep_time in cases:
        src = os.path.join(SHARED, rel)
        if not os.path.exists(src):
            continue
        data = open(src, "rb").read()
        want = task_points(subprocess.run([TL, "lines", "-q", src], capture_output=True, text=True).stdout,
                           keep_time)
        path = os.path.join(tmp, "grow-" + os.path.basename(src))
        # the same folder name as the original: a Snakemake rule comes from it
        if "snakemake" in rel:
            os.makedirs(os.path.join(tmp, "burn_cpu"), exist_ok=True)
            path = os.path.join(tmp, "burn_cpu", os.path.basename(src))
        out = os.path.join(tmp, "run-" + os.path.basename(src) + ".lp")
        cfg = os.path.join(tmp, "run-" + os.path.basename(src) + ".yaml")
        with open(cfg, "w") as f:
            f.write(RUN_CONFIG.format(path=path, out=out))
        lines = data.splitlines(keepends=True)
        with open(path, "wb") as f:
            f.write(b"".join(lines[:1]))
        p = subprocess.Popen([TL, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        step = max(1, len(lines) // 5)
        for i in range(1, len(lines), step):
            with open(path, "ab") as f:
                f.write(b"".join(lines[i:i + step]))
            time.sleep(0.3)
        got, deadline = [], time.time() + 20
        while time.time() < deadline:
            time.sleep(0.3)
            got = task_points(open(out).read(), keep_time) if os.path.exists(out) else []
            if len(got) >= len(want):
                break
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=30)
        if not keep_time:  # the workflow tag is the file's folder or name: the copy's
            got = [re.sub(r"workflow=[^, ]+", "workflow=W", g) for g in got]
            want = [re.sub(r"workflow=[^, ]+", "workflow=W", w) for w in want]
        else:
            got = [g.replace("workflow=grow-", "workflow=") for g in got]
        check(got == want and want, "run follows %s as it is written: %d of %d task points, those of lines"
              % (os.path.basename(src), len(got), len(want)))


def unknown_input():
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as t:
        t.write("hello\nthis is no trace\n")
    p = subprocess.run([TL, "summary", t.name], capture_output=True, text=True)
    check(p.returncode != 0 and "format not recognized" in p.stderr,
          "summary on an input of no known format exits %d, saying so" % p.returncode)
    os.unlink(t.name)
    p = subprocess.run([TL, "formats"], capture_output=True, text=True)
    check(all(re.search(r"^%s\b" % n, p.stdout, re.M) for n in ("nextflow", "snakemake", "codecarbon", "lineprof")),
          "formats lists nextflow, snakemake, codecarbon and lineprof")


def main():
    if not os.path.isdir(SHARED):
        print("SKIP: ../shared (the real samples) is absent")
        return 77
    nextflow()
    snakemake()
    codecarbon()
    lineprof()
    with tempfile.TemporaryDirectory() as tmp:
        report_pages(tmp)
        followed(tmp)
    unknown_input()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
