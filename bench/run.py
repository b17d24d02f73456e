#!/usr/bin/env python3
"""tasklens beside the tools people would otherwise use, same input, same run.

Called by bench/run.sh (see there for usage). Builds the inputs under
bench/out/ (never in git), runs every tool of a group RUNS times interleaved
(A B C A B C ..., warm cache), and writes medians with min-max, lines/s,
MB/s, records/s and peak RSS as markdown to bench/out/run-results.md, and
between the run.sh markers of bench/RESULTS.md. Never run by CI.
"""
import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")
SHARED = os.environ.get("TL_SHARED_DIR", os.path.join(REPO, "..", "shared"))
PY = "/usr/bin/python3"
TICK = os.sysconf("SC_CLK_TCK")
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))

report = []


def say(*a):
    print(*a, flush=True)


def md(line=""):
    report.append(line)
    say(line)


# ------------------------------------------------------------------ inputs

def wq_mix(copies):
    """`copies` copies of the real samples plus the bundled cctools log."""
    path = os.path.join(OUT, "wq-x%d.log" % copies)
    if not os.path.exists(path):
        subprocess.run([os.path.join(HERE, "make_wq_mix.sh"), path + ".tmp", "1", str(copies)], check=True)
        os.rename(path + ".tmp", path)
    return path


def head_lines(src, n):
    path = os.path.join(OUT, "wq-%dk-lines.log" % (n // 1000))
    if not os.path.exists(path):
        with open(src, "rb") as f, open(path + ".tmp", "wb") as o:
            for i, line in enumerate(f):
                if i == n:
                    break
                o.write(line)
        os.rename(path + ".tmp", path)
    return path


def chrome_inputs():
    hta = os.path.join(OUT, "hta.json")
    big = os.path.join(OUT, "hta-x26-array.json")
    src = os.path.join(SHARED, "chrome", "samples", "hta_df_index_resolver.json.gz")
    if not os.path.exists(hta):
        with open(hta + ".tmp", "wb") as f:
            subprocess.run(["gzip", "-dc", src], stdout=f, check=True)
        os.rename(hta + ".tmp", hta)
    if not os.path.exists(big):
        events = json.load(open(hta))["traceEvents"]
        lines = [json.dumps(e, separators=(",", ":")) for e in events]
        with open(big + ".tmp", "w") as f:
            f.write("[\n")
            for k in range(26):
                f.write(",\n".join(lines))
                f.write(",\n" if k < 25 else "\n]\n")
        os.rename(big + ".tmp", big)
    return hta, big


def lsst_tree(n):
    root = os.path.join(OUT, "lsst-%dk" % (n // 1000))
    if not os.path.isdir(root):
        import random

        import lsst_summary as gen
        gen.generate(root + ".tmp", n, random.Random(7))
        os.rename(root + ".tmp", root)
    return root


def tree_size(root):
    files = size = 0
    for dp, _, fs in os.walk(root):
        for f in fs:
            files += 1
            size += os.path.getsize(os.path.join(dp, f))
    return files, size


def count_lines(path):
    n = 0
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 24)
            if not b:
                return n
            n += b.count(b"\n")


# ------------------------------------------------------------------ running

def timed(cmd, stdout=subprocess.DEVNULL):
    """Runs cmd; returns (seconds, cpu seconds, peak RSS KiB, stdout tail)."""
    tf = os.path.join(OUT, "time.txt")
    t0 = time.time()
    r = subprocess.run(["/usr/bin/time", "-o", tf, "-f", "%e %U %S %M"] + cmd, stdout=stdout,
                       stderr=subprocess.PIPE)
    wall = time.time() - t0
    if r.returncode != 0:
        raise SystemExit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr.decode()[-2000:]))
    e, u, s, m = open(tf).read().split()[-4:]
    return wall, float(u) + float(s), int(m)


def group(title, tools, runs, units):
    """tools: [(label, cmd)]; units: dict with lines/bytes/records/files for the rates.
    Interleaved: run k of every tool before run k+1 of any."""
    res = {label: [] for label, _ in tools}
    for k in range(runs):
        for label, cmd in tools:
            res[label].append(timed(cmd))
            say("  %s run %d: %.2f s" % (label, k + 1, res[label][-1][0]))
    md("#### " + title)
    md()
    cols = [c for c in ("lines", "MB", "records", "files") if units.get(c)]
    md("| tool | s, median (min-max) | CPU s | " + " | ".join(c + "/s" for c in cols) + " | peak RSS MB |")
    md("|---|---|---|" + "---|" * len(cols) + "---|")
    med = {}
    for label, cmd in tools:
        t = sorted(x[0] for x in res[label])
        m = statistics.median(t)
        med[label] = m
        cpu = statistics.median(x[1] for x in res[label])
        rates = []
        for c in cols:
            v = units[c] / m
            rates.append("%.2f M" % (v / 1e6) if v >= 1e6 else "%.0f k" % (v / 1e3) if v >= 1e4 else "%.0f" % v)
        md("| %s | %.3f (%.3f-%.3f) | %.2f | %s | %.0f |" % (label, m, t[0], t[-1], cpu, " | ".join(rates),
                                                            max(x[2] for x in res[label]) / 1024))
    md()
    md("Commands: " + "; ".join("`%s`" % " ".join(shorten(a) for a in cmd) for _, cmd in tools))
    md()
    return med


def shorten(a):
    a = a.replace(REPO + "/", "").replace(OUT + "/", "bench/out/")
    return a


def telegraf_bin():
    for p in (os.environ.get("TELEGRAF", ""), os.path.expanduser("~/.cache/tasklens/go/bin/telegraf"),
              shutil.which("telegraf") or ""):
        if p and os.access(p, os.X_OK):
            return p
    return None


def telegraf_conf(tmp, log, output, extra=""):
    """inputs.tail + grok on the DONE lines -> aggregators.quantile -> output.
    A line parser cannot join a DONE line to its WAITING line, so Telegraf
    gets no category: it groups by manager and result."""
    conf = os.path.join(tmp, "telegraf-%s.conf" % output)
    with open(os.path.join(HERE, "peers", "telegraf.conf.in")) as f:
        text = f.read()
    text = text.replace("@LOG@", log).replace("@OUTPUT@", output).replace("@EXTRA@", extra)
    with open(conf, "w") as f:
        f.write(text)
    return conf


def run_telegraf(tel, conf, expect_lines, log):
    """Telegraf's tail never ends: run it until it has read the whole file
    and the output stopped growing, then SIGTERM. Returns wall, cpu, rss."""
    t0 = time.time()
    p = subprocess.Popen([tel, "--config", conf], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    size = os.path.getsize(log)
    rss = cpu = 0
    last = None
    stable = 0
    while p.poll() is None:
        time.sleep(0.2)
        try:
            io = dict(l.split(": ") for l in open("/proc/%d/io" % p.pid).read().splitlines())
            st = open("/proc/%d/status" % p.pid).read()
            rss = int(re.search(r"VmHWM:\s+(\d+)", st).group(1))
            cpu = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
            cpu = (int(cpu[11]) + int(cpu[12])) / TICK
        except (OSError, AttributeError):
            break
        if int(io["rchar"]) >= size:
            state = (cpu,)
            stable = stable + 1 if state == last else 0
            last = state
            if stable >= 3:  # 0.6 s without CPU: done
                break
        if time.time() - t0 > 3600:
            break
    wall = time.time() - t0 - 0.6
    if p.poll() is not None:
        raise SystemExit("telegraf exited: %s" % p.stderr.read().decode()[-2000:])
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    return wall, cpu, rss


def proc_cpu(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def run_follow_rss(tl, log, tmp):
    """`tasklens run` on a file (file sink): peak RSS once the file is read."""
    ck = tempfile.mkdtemp(dir=tmp)
    p = subprocess.Popen([tl, "run", "--follow", log, "--lines-out", "/dev/null", "--checkpoint-dir", ck, "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    size = os.path.getsize(log)
    t0 = time.time()
    rss = 0
    while p.poll() is None and time.time() - t0 < 1800:
        time.sleep(0.2)
        io = dict(l.split(": ") for l in open("/proc/%d/io" % p.pid).read().splitlines())
        rss = int(re.search(r"VmHWM:\s+(\d+)", open("/proc/%d/status" % p.pid).read()).group(1))
        if int(io["rchar"]) >= size:
            break
    wall = time.time() - t0
    time.sleep(1.5)  # a checkpoint and a flush after the end
    rss = int(re.search(r"VmHWM:\s+(\d+)", open("/proc/%d/status" % p.pid).read()).group(1))
    p.send_signal(signal.SIGTERM)
    p.wait(60)
    shutil.rmtree(ck, ignore_errors=True)
    return wall, rss


# ------------------------------------------------------------------ groups

def bench_wq(tl, runs, tel, tmp, copies):
    big = wq_mix(copies)
    lines, size = count_lines(big), os.path.getsize(big)
    r = subprocess.run([tl, "summary", "--format", "json", "-q", big], stdout=subprocess.PIPE, check=True)
    js = json.loads(r.stdout)
    records = sum(i["records"] for i in js["inputs"])
    md("### Work Queue / TaskVine log: %d copies of the real samples + the bundled cctools log" % copies)
    md()
    md("`%s`: %.0f MB, %d lines, %d records (task attempts and workflow records). Job: per task memory and wall time, "
       "per category count and quantiles p0-p100." % (shorten(big), size / 1e6, lines, records))
    md()
    cat(big)
    tools = [
        ("tasklens summary", [tl, "summary", "--format", "json", "-q", big]),
        ("tasklens summary --approx", [tl, "summary", "--approx", "--format", "json", "-q", big]),
        ("tasklens lines", [tl, "lines", "-q", "-o", "/dev/null", big]),
        ("python: list, one DataFrame", [PY, os.path.join(HERE, "peers", "wq_pandas.py"), "list", big]),
        ("wc -l", ["wc", "-l", big]),
        ("cat > /dev/null", ["cat", big]),
    ]
    group("One core, whole file", tools, runs, {"lines": lines, "MB": size / 1e6, "records": records})
    if tel:
        bench_telegraf(tl, runs, tel, tmp)


def bench_records(tl, runs):
    """`tasklens records` on a 1 GiB log beside `lines` (the floor it must
    meet) and the notebook's pandas recipe; then the table into pandas and
    polars (the notebook venv of tests/integration/records.py)."""
    big = os.path.join(OUT, "wq-1g.log")
    if not os.path.exists(big):
        subprocess.run([os.path.join(HERE, "make_wq_mix.sh"), big + ".tmp"], check=True)
        os.rename(big + ".tmp", big)
    nb = os.path.expanduser("~/.cache/tasklens/notebook-venv/bin/python")
    lines, size = count_lines(big), os.path.getsize(big)
    table = os.path.join(OUT, "wq-1g.csv")
    subprocess.run([tl, "records", "-q", "-o", table, big], check=True)
    rows = count_lines(table) - 1
    md("### `tasklens records` (issue 43)")
    md()
    md("`%s`: %.0f MB, %d lines; %d task attempts, a %.0f MB CSV of %d columns."
       % (shorten(big), size / 1e6, lines, rows, os.path.getsize(table) / 1e6,
          open(table).readline().count(",") + 1))
    md()
    cat(big)
    tools = [
        ("tasklens lines", [tl, "lines", "-q", "-o", "/dev/null", big]),
        ("tasklens records (csv)", [tl, "records", "-q", "-o", "/dev/null", big]),
        ("tasklens records -f ndjson", [tl, "records", "-q", "-f", "ndjson", "-o", "/dev/null", big]),
        ("python: list, one DataFrame", [nb, os.path.join(HERE, "peers", "wq_pandas.py"), "list", big]),
    ]
    group("The log into per-task rows, one core", tools, runs, {"lines": lines, "MB": size / 1e6, "records": rows})
    tools = [
        ("pandas.read_csv", [nb, os.path.join(HERE, "peers", "read_table.py"), "pandas", table]),
        ("polars.read_csv", [nb, os.path.join(HERE, "peers", "read_table.py"), "polars", table]),
    ]
    group("records' CSV into a DataFrame", tools, runs, {"MB": os.path.getsize(table) / 1e6, "records": rows})


def nextflow_trace(rows):
    """A trace of `rows` rows: the real openproblems trace's rows over and
    over, task ids renumbered (../shared/nextflow/samples)."""
    path = os.path.join(OUT, "nextflow-%d.txt" % rows)
    if os.path.exists(path):
        return path
    src = os.path.join(HERE, "..", "..", "shared", "nextflow", "samples",
                       "openproblems_2022-05-13_execution_trace.txt")
    lines = open(src).read().splitlines()
    with open(path + ".tmp", "w") as f:
        f.write(lines[0] + "\n")
        body = lines[1:]
        for i in range(rows):
            cells = body[i % len(body)].split("\t")
            cells[0] = str(i + 1)
            f.write("\t".join(cells) + "\n")
    os.rename(path + ".tmp", path)
    return path


def bench_field(tl, runs):
    """A Nextflow trace of a million tasks: `tasklens summary` and `records`
    beside the notebook's pandas recipe (read_csv, the units, the quantiles)."""
    nb = os.path.expanduser("~/.cache/tasklens/notebook-venv/bin/python")
    trace = nextflow_trace(1000000)
    lines, size = count_lines(trace), os.path.getsize(trace)
    md("### A Nextflow trace of a million tasks (issue 45)")
    md()
    md("`%s`: %.0f MB, %d lines (the rows of a real trace, `openproblems_2022-05-13`, repeated)."
       % (shorten(trace), size / 1e6, lines))
    md()
    cat(trace)
    tools = [
        ("tasklens summary", [tl, "summary", "--format", "json", "-q", trace]),
        ("tasklens records (csv)", [tl, "records", "-q", "-o", "/dev/null", trace]),
        ("pandas: read_csv, units, groupby quantile", [nb, os.path.join(HERE, "peers", "nextflow_pandas.py"), trace]),
    ]
    group("Per-process quantiles of a trace, one core", tools, runs, {"lines": lines, "MB": size / 1e6})


def bench_telegraf(tl, runs, tel, tmp):
    """Telegraf reads about 10 k lines/s here: it gets the 1x file, beside
    tasklens on the same file, interleaved."""
    f = wq_mix(1)
    lines, size = count_lines(f), os.path.getsize(f)
    cat(f)
    res = {"tasklens summary": [], "telegraf": []}
    written = 0
    for k in range(runs):
        res["tasklens summary"].append(timed([tl, "summary", "--format", "json", "-q", f]))
        fout = os.path.join(tmp, "telegraf-out.lp")
        conf = telegraf_conf(tmp, f, "file", '  files = ["%s"]\n' % fout)
        res["telegraf"].append(run_telegraf(tel, conf, lines, f))
        written = count_lines(fout)
        os.unlink(fout)
        say("  run %d: tasklens %.2f s, telegraf %.2f s" % (k + 1, res["tasklens summary"][-1][0],
                                                          res["telegraf"][-1][0]))
    md("#### Telegraf %s on the 1x file (`%s`, %.1f MB, %d lines)" % (telegraf_version(tel), shorten(f),
                                                                      size / 1e6, lines))
    md()
    md("inputs.tail from the beginning + grok on the DONE lines + aggregators.quantile (t-digest) -> "
       "outputs.file (config: `bench/peers/telegraf.conf.in`); Telegraf never exits, so its time ends when "
       "it has read the file and its CPU stopped moving (0.6 s subtracted). It wrote %d lines." % written)
    md()
    md("| tool | s, median (min-max) | CPU s | lines/s | MB/s | peak RSS MB |")
    md("|---|---|---|---|---|---|")
    for label, v in res.items():
        t = sorted(x[0] for x in v)
        m = statistics.median(t)
        md("| %s | %.3f (%.3f-%.3f) | %.2f | %s | %.1f | %.0f |" % (
            label, m, t[0], t[-1], statistics.median(x[1] for x in v), rate(lines / m), size / 1e6 / m,
            max(x[2] for x in v) / 1024))
    md()


def rate(v):
    return "%.2f M" % (v / 1e6) if v >= 1e6 else "%.0f k" % (v / 1e3) if v >= 1e4 else "%.0f" % v


def telegraf_version(tel):
    r = subprocess.run([tel, "--version"], stdout=subprocess.PIPE, text=True)
    v = r.stdout.strip()
    return os.environ.get("TELEGRAF_VERSION", v) if v.endswith("unknown") else v


def cat(path):
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL)


def bench_pandas_append(tl, runs, src):
    small = head_lines(src, 100000)
    size = os.path.getsize(small)
    lines = count_lines(small)
    md("### The notebook recipe on a 100,000-line slice")
    md()
    tools = [
        ("tasklens summary", [tl, "summary", "--format", "json", "-q", small]),
        ("python: df.loc[len(df)] = row", [PY, os.path.join(HERE, "peers", "wq_pandas.py"), "append", small]),
        ("python: list, one DataFrame", [PY, os.path.join(HERE, "peers", "wq_pandas.py"), "list", small]),
    ]
    med = group("`%s` (%.1f MB, %d lines)" % (shorten(small), size / 1e6, lines), tools, min(runs, 3),
                {"lines": lines, "MB": size / 1e6})
    md("The append loop is **%.0fx** slower than tasklens on the same input (process start included)."
       % (med["python: df.loc[len(df)] = row"] / med["tasklens summary"]))
    md()
    append_floor(tl, small, med["python: df.loc[len(df)] = row"])


def perf_elapsed_ms(cmd, n=30):
    """Mean elapsed ms of cmd over n runs by `perf stat -r`, or None."""
    try:
        r = subprocess.run(["perf", "stat", "-r", str(n)] + cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    except OSError:
        return None
    m = re.search(r"([0-9.]+) \+- [0-9.]+ seconds time elapsed", r.stderr)
    return float(m.group(1)) * 1e3 if m else None


def append_floor(tl, small, append_s):
    """What 1000x the append loop would take, against a floor no parser of
    this input gets under: start-up, the read, the line ends and simdjson's
    parse of the JSON alone (bench/simdjson_floor, built where Debian's
    libsimdjson-dev is installed). Step 11 of the performance work."""
    floor_bin = os.path.join(os.path.dirname(tl), "..", "bench", "simdjson_floor")
    if not os.path.exists(floor_bin):
        md("(No floor: `bench/simdjson_floor` was not built; it needs libsimdjson-dev.)")
        md()
        return
    out = subprocess.run([floor_bin, small, "30"], capture_output=True, text=True, check=True).stdout
    lines_ms = float(re.search(r"line ends \(memchr\) ([0-9.]+) ms", out).group(1))
    od_ms = float(re.search(r"On-Demand iterate_many ([0-9.]+) ms", out).group(1))
    start = perf_elapsed_ms([tl, "summary", "--format", "json", "-q", "/dev/null"])
    cat_file = perf_elapsed_ms(["cat", small])
    cat_none = perf_elapsed_ms(["cat", "/dev/null"])
    md("A floor for any parser of this input (`bench/simdjson_floor`, %s):" % out.splitlines()[1])
    md()
    md("| what | ms |")
    md("|---|---|")
    md("| 1/1000 of the append loop | %.2f |" % (append_s * 1e3 / 1000))  # seconds -> ms, then /1000
    if None in (start, cat_file, cat_none):
        md("| (start-up and read not measured: `perf stat` does not work here) | |")
        total = lines_ms + od_ms
    else:
        md("| tasklens start-up and exit, no input (`perf stat -r 30`) | %.2f |" % start)
        md("| reading the file (`cat` of it less `cat /dev/null`, `perf stat -r 30`) | %.2f |"
           % (cat_file - cat_none))
        total = start + cat_file - cat_none + lines_ms + od_ms
    md("| the line ends, in memory (memchr, best of 30) | %.2f |" % lines_ms)
    md("| the JSON alone, simdjson On-Demand, in memory (best of 30) | %.2f |" % od_ms)
    md("| **floor** | **%.2f** |" % total)
    md()
    md("The best ratio any one-core program could reach here is about %.0fx." % (append_s * 1e3 / total))
    md()


def bench_chrome(tl, runs):
    hta, big = chrome_inputs()
    md("### Chrome trace events")
    md()
    for f in (hta, big):
        size = os.path.getsize(f)
        cat(f)
        tools = [
            ("tasklens summary --approx", [tl, "summary", "--approx", "--format-in", "chrome", "-q", f]),
            ("tasklens summary (exact)", [tl, "summary", "--format-in", "chrome", "-q", f]),
            ("python: json.load + pandas", [PY, os.path.join(HERE, "peers", "chrome_pandas.py"), f]),
            ("cat > /dev/null", ["cat", f]),
        ]
        group("`%s` (%.1f MB)" % (shorten(f), size / 1e6), tools, runs, {"MB": size / 1e6})


def bench_lsst(tl, runs, n):
    root = lsst_tree(n)
    files, size = tree_size(root)
    md("### LSST task metadata: a generated datastore tree")
    md()
    subprocess.run([tl, "summary", "--lsst-summary", "-q", root], stdout=subprocess.DEVNULL)
    tools = [
        ("tasklens summary --lsst-summary", [tl, "summary", "--lsst-summary", "--format", "csv", "-q", root]),
        ("python: json/yaml (C loader) + numpy", [PY, os.path.join(HERE, "peers", "lsst_python.py"), root]),
    ]
    group("`%s`: %d files, %.0f MB" % (shorten(root), files, size / 1e6), tools, runs,
          {"files": files, "MB": size / 1e6})


def bench_influx(tl, tel, tmp, copies):
    from influxd_harness import Influxd
    log = wq_mix(copies)
    md("### End to end into one local influxd (Debian's InfluxDB %s)" % influxd_version())
    md()
    md("Input `%s`; each tool writes into its own fresh database of the same influxd; "
       "CPU seconds from /proc." % shorten(log))
    md()
    md("| tool | wall s | points arrived | points/s | tool CPU s | influxd CPU s | tool/influxd |")
    md("|---|---|---|---|---|---|---|")
    with Influxd() as db:
        db.query("CREATE DATABASE tl")
        c0 = proc_cpu(db.proc.pid)
        t0 = time.time()
        _, cpu, _ = timed([tl, "lines", "-q", "--window", "0", "--influx-url", db.url, "--influx-db", "tl",
                           "--spool-dir", os.path.join(tmp, "spool"), log])
        wall = time.time() - t0
        time.sleep(1)
        c1 = proc_cpu(db.proc.pid)
        n = sum(r["count"] for r in db.rows("SELECT count(attempt) FROM task", "tl")) if True else 0
        md("| tasklens lines --window 0 | %.2f | %d task | %.0f | %.2f | %.2f | %.0f %% |"
           % (wall, n, n / wall, cpu, c1 - c0, 100 * cpu / (c1 - c0)))
        if tel:
            db.query("CREATE DATABASE telegraf")
            conf = telegraf_conf(tmp, log, "influxdb",
                                 '  urls = ["%s"]\n  database = "telegraf"\n  skip_database_creation = true\n'
                                 % db.url)
            c0 = proc_cpu(db.proc.pid)
            wall, cpu, _ = run_telegraf(tel, conf, 0, log)
            time.sleep(1)
            c1 = proc_cpu(db.proc.pid)
            rows = db.rows("SELECT count(task_id) FROM wq_done", "telegraf")
            n = rows[0]["count"] if rows else 0
            md("| Telegraf (tail + grok -> influxdb) | %.2f | %d DONE | %.0f | %.2f | %.2f | %.0f %% |"
               % (wall, n, n / wall, cpu, c1 - c0, 100 * cpu / max(c1 - c0, 1e-9)))
    md()


def influxd_version():
    r = subprocess.run(["influxd", "version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = re.search(r"v?(\d+\.\d+\.\d+)", r.stdout)
    return m.group(1) if m else "?"


def bench_rss(tl, tmp, sizes):
    md("### Peak RSS against input size (1x, 10x, 100x the samples)")
    md()
    md("| input | MB | lines | summary s | summary MB | summary --approx MB | run (file sink) MB |")
    md("|---|---|---|---|---|---|---|")
    for c in sizes:
        f = wq_mix(c)
        cat(f)
        w, _, m1 = timed([tl, "summary", "--format", "json", "-q", f])
        _, _, m2 = timed([tl, "summary", "--approx", "--format", "json", "-q", f])
        _, m3 = run_follow_rss(tl, f, tmp)
        md("| %dx | %.0f | %d | %.2f | %.0f | %.0f | %.0f |" % (c, os.path.getsize(f) / 1e6, count_lines(f), w,
                                                             m1 / 1024, m2 / 1024, m3 / 1024))
    md()


def follow_at_rate(cmd, lines, log, rate, tmp, terminal):
    """Appends lines to log at `rate` lines/s (chunks every 0.1 s) while cmd
    follows it; the follower's CPU seconds and peak RSS once it has read
    everything, and the bytes it wrote to its terminal (tmux, 200 x 50)."""
    open(log, "w").close()
    sock = "tl-bench-%d" % os.getpid()
    out = os.path.join(tmp, "pane.out")
    if terminal:
        subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-s", "b", "-x", "200", "-y", "50",
                        "exec " + " ".join(cmd)], check=True)
        subprocess.run(["tmux", "-L", sock, "pipe-pane", "-t", "b", "-o", "cat > " + out], check=True)
        pid = int(subprocess.run(["tmux", "-L", sock, "display", "-p", "-t", "b", "#{pane_pid}"],
                                 capture_output=True, text=True).stdout)
    else:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pid = p.pid
    chunk = rate // 10
    t0 = time.time()
    with open(log, "a") as f:
        for i in range(0, len(lines), chunk):
            f.writelines(lines[i:i + chunk])
            f.flush()
            time.sleep(max(0, t0 + (i + chunk) / rate - time.time()))
    size = os.path.getsize(log)
    while int(dict(l.split(": ") for l in open("/proc/%d/io" % pid).read().splitlines())["rchar"]) < size:
        time.sleep(0.1)
    time.sleep(1.5)
    cpu = proc_cpu(pid)
    rss = int(re.search(r"VmHWM:\s+(\d+)", open("/proc/%d/status" % pid).read()).group(1))
    if terminal:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
    else:
        p.send_signal(signal.SIGTERM)
        p.wait(30)
    written = os.path.getsize(out) if terminal and os.path.exists(out) else 0
    return cpu, rss, written, time.time() - t0


def bench_top(tl, tmp):
    """`tasklens top --follow` in a terminal beside `tasklens run --follow`
    (file sink) on a Work Queue log written at 100,000 lines/s; and top's
    memory on a log of a million tasks."""
    gen = os.path.join(os.path.dirname(os.path.dirname(tl)), "bench", "gen_wq")
    src = os.path.join(tmp, "gen.log")
    with open(src, "w") as f:
        subprocess.run([gen, "400000", "8", "3", "1000"], stdout=f, check=True)
    lines = open(src).read().splitlines(True)
    log = os.path.join(tmp, "follow.log")
    md("### `tasklens top` following a log written at 100,000 lines/s")
    md()
    md("%s lines of a synthetic Work Queue log (gen_wq 400000 8 3 1000: 400,000 tasks in 8 "
       "categories, 64 in flight), appended at 100,000 lines/s in chunks every 0.1 s; each "
       "follower alone, CPU seconds (user + system) once it has read the whole file." % f"{len(lines):,}")
    md()
    md("| follower | CPU s | CPU per 1M lines | peak RSS | terminal output |")
    md("|---|---:|---:|---:|---:|")
    ck = tempfile.mkdtemp(dir=tmp)
    rows = [("`tasklens run --follow LOG --lines-out /dev/null`",
             [tl, "run", "--follow", log, "--lines-out", "/dev/null", "--checkpoint-dir", ck, "-q"], False),
            ("`tasklens top --follow LOG` (tmux, 200 x 50)", [tl, "top", "--follow", log], True)]
    for name, cmd, term in rows:
        cpu, rss, written, wall = follow_at_rate(cmd, lines, log, 100000, tmp, term)
        md("| %s | %.2f | %.2f | %d MB | %s |" % (name, cpu, cpu / len(lines) * 1e6, rss // 1024,
                                                "%d KB in %.0f s (%.1f KB/s)" % (written // 1024, wall, written / 1024 / wall) if term else "-"))
    md()
    big = os.path.join(tmp, "million.log")
    with open(big, "w") as f:
        subprocess.run([gen, "1000000", "8", "5"], stdout=f, check=True)
    md("Memory on a million tasks (gen_wq 1000000 8 5, %d MB): peak RSS" % (os.path.getsize(big) >> 20))
    md()
    md("| command | wall s | peak RSS |")
    md("|---|---:|---:|")
    for name, cmd in (("`tasklens summary`", [tl, "summary", "-q", big]),
                      ("`tasklens top --once`", [tl, "top", "--once", big])):
        wall, _cpu, rss = timed(cmd)
        md("| %s | %.2f | %d MB |" % (name, wall, rss // 1024))
    md()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--copies", type=int, default=50, help="copies of the samples in the big WQ log")
    ap.add_argument("--lsst-files", type=int, default=100000)
    ap.add_argument("--only", default="wq,append,chrome,lsst,influx,rss")
    a = ap.parse_args()
    tl = os.path.abspath(os.path.join(a.build, "cli", "tasklens"))
    os.makedirs(OUT, exist_ok=True)
    tel = telegraf_bin()
    only = a.only.split(",")
    cpu = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read()).group(1)
    git = subprocess.run(["git", "-C", REPO, "log", "-1", "--format=%h %s"], stdout=subprocess.PIPE,
                         text=True).stdout.strip()
    md("Machine: %s, %d cores, %s; tasklens at `%s`; %s; %d runs per tool, interleaved, warm cache."
       % (cpu, os.cpu_count(), platform.platform(), git[:70], time.strftime("%Y-%m-%d"), a.runs))
    md("Command: `bench/run.sh %s`." % " ".join(sys.argv[2:]) if len(sys.argv) > 2 else "Command: `bench/run.sh`.")
    md()
    if not tel:
        md("Telegraf: not installed (`go install` failed or was not run; see bench/run.sh).")
        md()
    with tempfile.TemporaryDirectory(prefix="tl-bench-") as tmp:
        if "wq" in only:
            bench_wq(tl, a.runs, tel, tmp, a.copies)
        if "append" in only:
            # the mix's first 100,000 lines: all of copy 1 (89,376) and the
            # start of copy 2, as in every larger mix
            bench_pandas_append(tl, a.runs, wq_mix(2))
        if "chrome" in only:
            bench_chrome(tl, a.runs)
        if "lsst" in only:
            bench_lsst(tl, a.runs, a.lsst_files)
        if "influx" in only:
            bench_influx(tl, tel, tmp, 10)
        if "rss" in only:
            bench_rss(tl, tmp, (1, 10, 100))
        if "records" in only:
            bench_records(tl, a.runs)
        if "field" in only:
            bench_field(tl, a.runs)
        if "top" in only:
            bench_top(tl, tmp)
    text = "\n".join(report) + "\n"
    with open(os.path.join(OUT, "run-results.md"), "w") as f:
        f.write(text)
    res = os.path.join(HERE, "RESULTS.md")
    cur = open(res).read()
    begin, end = "<!-- bench/run.sh: begin -->\n", "<!-- bench/run.sh: end -->\n"
    if begin in cur and end in cur and a.only == ap.get_default("only"):
        cur = cur[:cur.index(begin) + len(begin)] + text + cur[cur.index(end):]
        with open(res, "w") as f:
            f.write(cur)
        say("bench/RESULTS.md updated")


if __name__ == "__main__":
    main()
