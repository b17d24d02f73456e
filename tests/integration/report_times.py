#!/usr/bin/env python3
"""No time is invented (issue 56 point 4): Snakemake's benchmark files hold
durations and no times, so the report of the real benchmarks in ../shared
draws no timeline, no makespan and no first submission from the files'
modification times, and says how many attempts carry no time; a Work Queue
log, whose times are recorded, keeps its timeline and makespan. A Nextflow
trace's times carry no zone: the page says they are read as UTC and how to
shift them, and the option shifts them. A resumed Nextflow run's CACHED
tasks are counted apart, never in this run's makespan or success rate; so
are TaskVine's library instances (LIBRARY_EXIT), and the tasks still open
at the end of an input are on the card.

usage: report_times.py TASKLENS DEMO_WQ_LOG
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
import glossary_ref  # noqa: E402

TL, DEMO = sys.argv[1], sys.argv[2]
SHARED = os.environ.get("TL_SHARED_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                         "..", "shared")


def page(inputs, tmp, name):
    out = os.path.join(tmp, name + ".html")
    r = subprocess.run([TL, "report", "-q", "-o", out] + inputs, capture_output=True, text=True)
    return r, open(out, encoding="utf-8").read() if os.path.exists(out) else ""


def libraries_apart(log, tmp):
    """TaskVine's lnni run ends with tasks open and library instances that
    ended LIBRARY_EXIT: the card says the open tasks, counts the libraries
    apart, and the success rate is over the function calls and tasks only
    (counted here from the records)."""
    recs = [json.loads(x) for x in subprocess.run([TL, "records", "-q", "-f", "ndjson", log], capture_output=True,
                                                   text=True).stdout.splitlines()]
    finals = [r for r in recs if r["final"]]
    libs = [r for r in finals if r.get("result") == "LIBRARY_EXIT"]
    tasks = [r for r in finals if r.get("result") != "LIBRARY_EXIT"]
    ok = [r for r in tasks if r.get("result") == "SUCCESS" and r.get("exit_code", 0) == 0]
    summary = json.loads(subprocess.run([TL, "summary", "-q", "--format", "json", log], capture_output=True,
                                        text=True).stdout)
    n_open = sum(g["open"] for g in summary["groups"])
    r, html = page([log], tmp, "lnni")
    val = lambda k: re.search(r'data-k="%s" data-v="([^"]+)"' % k, html)  # noqa: E731
    check(val("libraries") and int(float(val("libraries").group(1))) == len(libs) and len(libs) > 100,
          "TaskVine lnni: %d library instances counted apart" % len(libs))
    check(val("open") and int(float(val("open").group(1))) == n_open and n_open > 1000,
          "TaskVine lnni: the %d tasks open at the end are on the card" % n_open)
    rate = val("success_rate")
    check(rate and abs(float(rate.group(1)) - len(ok) / len(tasks)) < 1e-12,
          "TaskVine lnni: the success rate is over the %d tasks, not the libraries" % len(tasks))


def cached_apart(trace, tmp):
    """A resumed Nextflow run (54 CACHED, 1 COMPLETED): the cached tasks are
    counted apart, and this run's makespan, CPU time and success rate are
    its own task's, as read here from the trace."""
    import csv
    rows = list(csv.DictReader(open(trace), delimiter="\t"))
    ran = [r for r in rows if r["status"] != "CACHED"]
    r, html = page([trace], tmp, "resumed")
    val = lambda k: re.search(r'data-k="%s" data-v="([^"]+)"' % k, html)  # noqa: E731
    cached, rate, span = val("cached"), val("success_rate"), val("makespan")
    check(cached and int(float(cached.group(1))) == len(rows) - len(ran),
          "resumed Nextflow run: %d cached tasks counted apart" % (len(rows) - len(ran)))
    check(rate and float(rate.group(1)) == sum(r["status"] == "COMPLETED" for r in ran) / len(ran),
          "resumed Nextflow run: the success rate is this run's tasks'")

    def secs(d):  # Nextflow's human durations: "1m 2s", "4.5s", "300ms"
        total = 0.0
        for n, u in re.findall(r"([\d.]+)\s*(ms|s|m|h|d)", d):
            total += float(n) * {"ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}[u]
        return total
    want = sum(secs(r["duration"]) for r in ran)  # one task: its duration is the span
    check(span and len(ran) == 1 and abs(float(span.group(1)) - want) < 1.0,
          "resumed Nextflow run: the makespan is this run's (%s s, the trace's %.1f s), not the cached "
          "tasks' 42.7 min" % (span.group(1) if span else None, want))


def run_status(path, tmp, name):
    """Issue 58: the card's succeeded, failed and retried, as Nextflow's
    status line counts them, against the records (glossary_ref's words)."""
    r, html = page([path], tmp, name)
    card = dict(re.findall(r'class="stat" data-k="(succeeded|failed|retried)" data-v="([0-9.e+]+)"', html))
    rows = [json.loads(l) for l in subprocess.run([TL, "records", "-q", "-f", "ndjson", path], capture_output=True,
                                                  text=True, check=True).stdout.splitlines()]
    rows = [x for x in rows if x.get("result") != "CACHED" and x.get("result") != "LIBRARY_EXIT"]
    finals = [x for x in rows if x.get("final")]
    want = {"succeeded": sum(1 for x in finals if glossary_ref.succeeded(x.get("result"), x.get("exit_code"))),
            "failed": sum(1 for x in finals if glossary_ref.failed(x.get("result"), x.get("exit_code"))),
            "retried": sum(1 for x in rows if not x.get("final"))}
    got = {k: int(float(v)) for k, v in card.items()}
    if not want["retried"]:
        del want["retried"]
    check(got == want, "%s: the card's succeeded, failed and retried (%s) = the records' (%s)" % (name, got, want))


def trace_fields(trace, html, tmp):
    """Issue 58: a trace without cpus, memory or time says which trace.fields
    to add, and the first screen ranks by CPU-hours (from records: an
    independent sum), not by name; a trace with requests says nothing."""
    check('data-hint="trace-fields"' in html and "cpus,memory,time" in html,
          "a Nextflow trace without requests: one line says to add cpus,memory,time to trace.fields")
    cpu = {}
    for line in subprocess.run([TL, "records", "-q", "-f", "ndjson", trace], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        r = json.loads(line)
        if r.get("final") and r.get("cpu_time_s") is not None and r.get("result") != "CACHED":
            cpu[r["category"]] = cpu.get(r["category"], 0) + r["cpu_time_s"]
    table = html.split('data-table="rightsizing"')[1].split("</table>")[0]
    order = re.findall(r'<tr data-g="([^"]*)"', table)
    want = sorted(cpu, key=lambda c: (-cpu[c], c))[:len(order)]
    check(order and order == want, "the first screen ranks a trace without requests by CPU-hours (%s)" % order[:4])
    with_req = os.path.join(tmp, "with_requests.txt")
    with open(trace) as f, open(with_req, "w") as g:
        lines = f.read().splitlines()
        g.write(lines[0] + "\tcpus\n" + "".join(l + "\t2\n" for l in lines[1:]))
    r, html2 = page([with_req], tmp, "nextflow_req")
    check('data-hint="trace-fields"' not in html2, "a trace with cpus says nothing about trace.fields")


def main():
    bench = os.path.join(SHARED, "snakemake", "samples", "generated", "runA")
    with tempfile.TemporaryDirectory() as tmp:
        if os.path.isdir(bench):
            n = sum(len([ln for ln in open(os.path.join(d, f)) if ln.strip()]) - 1
                    for d, _, fs in os.walk(bench) for f in fs if f.endswith(".tsv"))
            r, html = page([bench], tmp, "snakemake")
            card = html[html.find('data-card="run"'):html.find("</div></div>", html.find('data-card="run"'))]
            untimed = re.search(r'data-untimed="(\d+)"', html)
            check(r.returncode == 0 and 'data-k="makespan"' not in card and 'data-k="start"' not in card,
                  "Snakemake benchmarks: no makespan and no first submission on the run card")
            check(untimed and int(untimed.group(1)) == n and "No task has a time" in html,
                  "Snakemake benchmarks: no timeline; the %d attempts without a time are said (%s)"
                  % (n, untimed.group(1) if untimed else None))
        else:
            print("SKIP Snakemake: %s absent" % bench)
        r, html = page([DEMO], tmp, "wq")
        check('data-k="makespan"' in html and "data-untimed" not in html and "No task has a time" not in html,
              "a Work Queue log keeps its timeline and makespan")
        check("data-zone" not in html, "a Work Queue log's times (epoch) are not said to lack a zone")
        trace = os.path.join(SHARED, "nextflow", "samples", "openproblems_2022-05-13_execution_trace.txt")
        if os.path.exists(trace):
            r, html = page([trace], tmp, "nextflow")
            check('data-zone="nextflow"' in html and "nextflow.utc_offset=HOURS" in html,
                  "a Nextflow trace's times, written without a zone, are said to be read as UTC, with the option")
            shifted = os.path.join(tmp, "shifted.html")
            subprocess.run([TL, "report", "-q", "-O", "nextflow.utc_offset=2", "-o", shifted, trace], check=True)
            t0 = re.search(r'data-k="start" data-v="([0-9.e+]+)"', html)
            t1 = re.search(r'data-k="start" data-v="([0-9.e+]+)"', open(shifted).read())
            check(t0 and t1 and abs(float(t0.group(1)) - float(t1.group(1)) - 7200) < 1e-3,
                  "-O nextflow.utc_offset=2 moves the first submission 2 h earlier in UTC")
            trace_fields(trace, html, tmp)
            run_status(trace, tmp, "openproblems")
        blast = os.path.join(SHARED, "wq", "samples", "ccl_taskvine-logs__blast_caching_700_workers_run_1_tr.log")
        if os.path.exists(blast):
            run_status(blast, tmp, "blast")
        lnni = os.path.join(SHARED, "wq", "samples", "ccl_taskvine-example-logs__lnni_transactions")
        if os.path.exists(lnni):
            libraries_apart(lnni, tmp)
        resumed = os.path.join(SHARED, "nextflow", "samples", "PaintorPipe_b4a6de9_trace_cached.txt")
        if os.path.exists(resumed):
            cached_apart(resumed, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
