#!/usr/bin/env python3
"""`advise --emit nextflow` and `--emit snakemake` (issue 45 point 2), each
read back by the system's own code:

1. nextflow: the config is parsed by Nextflow's own ConfigParser (the
   io.nextflow:nextflow jar from Maven Central, run with its Groovy); each
   `withName:` selector's cpus, memory (MemoryUnit: MB = MiB) and time
   (Duration) equal advise's recommendation, and the time is the longest
   successful attempt's wall time x margin rounded up to a minute (a time
   limit kills: nothing that succeeded may be), computed here from the
   records.
2. snakemake: the profile is given to the real Snakemake (PyPI, a cached
   venv) with a Snakefile of the same rules; each job sees the threads,
   mem_mb (10^6 bytes) and runtime (minutes) the profile sets.
Inputs: the real Nextflow traces and Snakemake benchmarks in ../shared.

usage: advise_field.py TASKLENS REPO_DIR
"""
import glob
import json
import math
import re
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402
import nextflow_jars  # noqa: E402
import allocate_ref  # noqa: E402
import glossary_ref  # noqa: E402

TL = sys.argv[1]
REPO = sys.argv[2]
SHARED = os.environ.get("TL_SHARED_DIR") or os.path.join(os.path.dirname(os.path.abspath(REPO)), "shared")
MIB = 1048576.0
NF_VERSION = nextflow_jars.NF_VERSION
SNAKEMAKE_VERSION = "9.27.1"
CACHE = os.path.expanduser("~/.cache/tasklens")

def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def quantile(vals, q):
    v = sorted(vals)
    if not v:
        return None
    pos = q * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def expected(inputs):
    adv = {c["category"]: c for c in json.loads(run([TL, "advise", "-q", "--format", "json"] + inputs,
                                                        check=True).stdout)["categories"]}
    walls, peaks = {}, {}
    for path in inputs:
        for line in run([TL, "records", "-q", "-f", "ndjson", path], check=True).stdout.splitlines():
            r = json.loads(line)
            ok = glossary_ref.succeeded(r.get("result"), r.get("exit_code"))
            if "wall_time_s" in r and ok:  # the successes a limit must not kill
                walls.setdefault(r["category"], []).append(r["wall_time_s"])
            if "max_rss_bytes" in r and ok:
                peaks[r["category"]] = max(peaks.get(r["category"], 0), r["max_rss_bytes"])
    rows = {}
    for path in inputs:
        for line in run([TL, "records", "-q", "-f", "ndjson", path], check=True).stdout.splitlines():
            r = json.loads(line)
            rows.setdefault(r.get("category") or "(none)", []).append(r)
    out = {}
    for cat, a in adv.items():
        res = a["resources"]
        w = {}
        if res["cores"]["recommend"] is not None:
            w["cores"] = max(1, math.ceil(res["cores"]["recommend"] - 1e-9))
        # the first ask and what the last retry must reach, by the manual's rule in Python
        ch = allocate_ref.choose(allocate_ref.needs(rows.get(cat, []), "max_rss_bytes"), "times_attempt")
        if ch:
            w["memory"], w["cover"] = ch["first"], ch["cover"]
        if walls.get(cat):
            w["minutes"] = max(1, math.ceil(max(walls[cat]) * 1.2 / 60 - 1e-9))
        out[cat] = w
    return out


def nextflow(tmp):
    traces = [f for f in sorted(glob.glob(os.path.join(SHARED, "nextflow/samples/*.t*")))
              if not f.endswith("sha256sums.txt")]
    if not check(traces, "nextflow: real traces in ../shared"):
        return
    jdir = nextflow_jars.jars(REPO)
    if not check(jdir is not None, "nextflow: Nextflow %s from Maven Central" % NF_VERSION):
        return
    want = expected(traces)
    out = run([TL, "advise", "-q", "--emit", "nextflow"] + traces, check=True).stdout
    cfg = os.path.join(tmp, "tasklens.config")
    with open(cfg, "w") as f:
        f.write(out)
    rc, parsed, text = nextflow_jars.read_config(jdir, tmp, cfg)
    if not check(rc == 0 and parsed, "nextflow: Nextflow's ConfigParser reads the config (%s)"
                 % text.strip()[-300:]):
        return
    got = parsed["selectors"]
    bad, escalated = [], 0
    for cat, w in want.items():
        g = got.get(cat)
        if not w:
            if g is not None:
                bad.append((cat, "should be left out"))
            continue
        exp = {}
        if "cores" in w:
            exp["cpus"] = w["cores"]
        if "memory" in w:
            exp["memory"] = math.ceil(w["memory"] / MIB - 1e-9) * 1048576
        if "minutes" in w:
            exp["time"] = w["minutes"] * 60000
        g = dict(g or {})
        by_attempt = g.pop("memory_by_attempt", None)
        by_exit = g.pop("errorStrategy_by_exit", None)
        retries = g.pop("maxRetries", 0)
        g.pop("errorStrategy", None)
        if "memory" in w and w["cover"] > exp["memory"]:
            escalated += 1
            if not (by_attempt and len(by_attempt) == retries + 1 <= 4 and by_attempt[-1] >= w["cover"]
                    and all(b == by_attempt[0] * (i + 1) for i, b in enumerate(by_attempt))
                    and by_exit == {"137": "retry", "1": "terminate"}):
                bad.append((cat, "retries", by_attempt, by_exit, w["cover"]))
        elif by_attempt or by_exit or retries:
            bad.append((cat, "retries where the first ask covers", by_attempt))
        if g != exp:
            bad.append((cat, g, exp))
    check(not bad and len(got) == sum(1 for w in want.values() if w),
          "nextflow: every withName's cpus, memory and time, as Nextflow reads them, are advise's "
          "(%d processes from %d traces; differ: %s)" % (len(got), len(traces), bad[:3]))
    check(escalated and not bad, "nextflow: where a success used more memory than the first ask (%d "
          "processes), memory grows with task.attempt on a resource kill (137, not 1) and the last retry "
          "covers the largest success x 1.2, as Nextflow runs the closures" % escalated)
    check(out.startswith("// made by tasklens advise --emit nextflow") and "time = the longest attempt that succeeded x 1.2" in out,
          "nextflow: a header with the inputs and the rule, time included")


def snakemake_bin():
    venv = os.path.join(CACHE, "snakemake-venv")
    sm = os.path.join(venv, "bin", "snakemake")
    v = run([sm, "--version"]) if os.path.exists(sm) else None
    if v and v.returncode == 0 and v.stdout.strip() == SNAKEMAKE_VERSION:
        return sm
    r = run(["/usr/bin/python3", "-m", "venv", venv])
    if r.returncode == 0:
        r = run([os.path.join(venv, "bin", "pip"), "install", "-q", "snakemake==" + SNAKEMAKE_VERSION])
    if r.returncode != 0:
        print("SKIP part: Snakemake %s could not be installed: %s" % (SNAKEMAKE_VERSION, r.stderr[-300:]))
        return None
    return sm


def snakemake(tmp):
    bench = os.path.join(SHARED, "snakemake/samples/generated/runA/benchmarks")
    if not check(os.path.isdir(bench), "snakemake: real benchmarks in ../shared"):
        return
    sm = snakemake_bin()
    if not check(sm is not None, "snakemake: Snakemake %s from PyPI" % SNAKEMAKE_VERSION):
        return
    want = expected([bench])
    out = run([TL, "advise", "-q", "--emit", "snakemake", bench], check=True).stdout
    prof = os.path.join(tmp, "profile")
    work = os.path.join(tmp, "work")
    os.makedirs(prof)
    os.makedirs(work)
    with open(os.path.join(prof, "config.yaml"), "w") as f:
        f.write(out)
    rules = sorted(want)
    with open(os.path.join(work, "Snakefile"), "w") as f:
        f.write("rule all:\n    input: %s\n\n" % ", ".join('"%s.txt"' % r for r in rules))
        for r in rules:
            f.write('rule %s:\n    output: "%s.txt"\n    run:\n        open(output[0], "w").write('
                    '"%%s %%s %%s" %% (threads, getattr(resources, "mem_mb", "-"), '
                    'getattr(resources, "runtime", "-")))\n\n' % (r, r))
    p = run([sm, "--profile", prof, "--cores", "64", "--quiet"], cwd=work, timeout=600)
    if not check(p.returncode == 0, "snakemake: the real Snakemake runs with the profile (%s)"
                 % (p.stdout + p.stderr).strip()[-300:]):
        return
    bad = []
    for r in rules:
        threads, mem_mb, runtime = open(os.path.join(work, r + ".txt")).read().split()
        w = want[r]
        if "cores" in w and int(threads) != w["cores"]:
            bad.append((r, "threads", threads, w["cores"]))
        if "memory" in w and int(mem_mb) != math.ceil(w["memory"] / 1e6 - 1e-9):
            bad.append((r, "mem_mb", mem_mb, w["memory"] / 1e6))
        if "minutes" in w and int(runtime) != w["minutes"]:
            bad.append((r, "runtime", runtime, w["minutes"]))
    check(not bad, "snakemake: each job gets the threads, mem_mb and runtime advise recommends "
          "(%d rules; differ: %s)" % (len(rules), bad[:3]))


def snakemake_retries(tmp):
    """Issue 57 point 2 for Snakemake: the profile openproblems' trace gives
    run_method (a success used more than the first ask) sets mem_mb to an
    expression of `attempt` and `retries`; the real Snakemake, with a job that
    is killed (exit 137) on its first attempt, reruns it with the larger
    memory -- the last attempt at least the largest success x 1.2."""
    trace = os.path.join(SHARED, "nextflow/samples/openproblems_2022-05-13_execution_trace.txt")
    sm = snakemake_bin()
    if not os.path.exists(trace) or sm is None:
        check(False, "snakemake retries: openproblems' trace and Snakemake")
        return
    prof, work = os.path.join(tmp, "rprofile"), os.path.join(tmp, "rwork")
    os.makedirs(prof)
    os.makedirs(work)
    run([TL, "advise", "-q", "--emit", "snakemake", "-o", os.path.join(prof, "config.yaml"), trace], check=True)
    retries = int(re.search(r"^retries: (\d+)$", open(os.path.join(prof, "config.yaml")).read(), re.M).group(1))
    with open(os.path.join(work, "Snakefile"), "w") as f:  # killed on every attempt but the last
        f.write('import os\n\nrule run_method:\n    output: "out.txt"\n    run:\n'
                '        n = sum(1 for _ in open("attempts.txt")) if os.path.exists("attempts.txt") else 0\n'
                '        open("attempts.txt", "a").write("%%d %%s\\n" %% (n + 1, resources.mem_mb))\n'
                '        if n < %d:\n            shell("exit 137")\n'
                '        open(output[0], "w").write("ok")\n' % retries)
    p = run([sm, "--profile", prof, "--cores", "2", "--quiet"], cwd=work, timeout=600)
    seen = [tuple(int(x) for x in l.split()) for l in open(os.path.join(work, "attempts.txt"))] \
        if os.path.exists(os.path.join(work, "attempts.txt")) else []
    rows = [json.loads(l) for l in run([TL, "records", "-q", "-f", "ndjson", trace], check=True).stdout.splitlines()]
    peak = max(r["max_rss_bytes"] for r in rows if r.get("category") == "run_method" and r.get("result") == "COMPLETED"
               and "max_rss_bytes" in r)
    check(p.returncode == 0 and retries >= 1 and len(seen) == retries + 1
          and all(m == seen[0][1] * k for k, m in seen) and seen[-1][1] * 1e6 >= peak * 1.2,
          "snakemake retries: killed on each of %d attempts, rerun by the real Snakemake with mem_mb %s "
          "(x attempt; the largest success used %.0f MB) %s" % (retries, [m for _, m in seen], peak / 1e6,
                                                              (p.stdout + p.stderr).strip()[-200:] if p.returncode else ""))


def blind(tmp):
    """Issue 57, points 1 and 3, on openproblems' trace: the time limit kills
    no success by default (run_method: 4 of its 147 successes ran 3.5-7.3
    min, which the p95 rule's 3m killed), --quantile says what it kills, and
    the 11 load_dataset attempts killed by exit 137 with no memory recorded
    are named, not silently dropped."""
    trace = os.path.join(SHARED, "nextflow/samples/openproblems_2022-05-13_execution_trace.txt")
    if not check(os.path.exists(trace), "blind: openproblems' trace in ../shared"):
        return
    rows = [json.loads(l) for l in run([TL, "records", "-q", "-f", "ndjson", trace], check=True).stdout.splitlines()]
    walls = [r["wall_time_s"] for r in rows if r.get("category") == "run_method" and r.get("result") == "COMPLETED"]
    minutes = math.ceil(max(walls) * 1.2 / 60 - 1e-9)
    cfg = os.path.join(tmp, "blind.config")
    run([TL, "advise", "-q", "--emit", "nextflow", "-o", cfg, trace], check=True)
    block = open(cfg).read().split("withName: 'run_method'")[1].split("withName:")[0]
    check("time = '%dm'" % minutes in block and minutes * 60 >= max(walls),
          "blind: run_method's time %dm covers its longest success (%.0f s of %d)" % (minutes, max(walls), len(walls)))
    run([TL, "advise", "-q", "--quantile", "0.95", "--emit", "nextflow", "-o", cfg, trace], check=True)
    text = open(cfg).read()
    q = quantile(walls, 0.95)
    qmin = max(1, math.ceil(q * 1.2 / 60 - 1e-9))
    killed = sum(1 for w in walls if w > qmin * 60)
    check("time %dm: %d of %d successful attempts ran longer -- they would be killed" % (qmin, killed, len(walls))
          in text and killed == 4,
          "blind: --quantile 0.95 writes %dm and says it kills %d of %d successes" % (qmin, killed, len(walls)))
    adv = {c["category"]: c for c in json.loads(run([TL, "advise", "-q", "--format", "json", trace],
                                                        check=True).stdout)["categories"]}
    mem = adv["load_dataset"]["resources"]["memory"]
    dead = [r for r in rows if r.get("category") == "load_dataset" and r.get("exit_code") == 137]
    check(mem["killed"] == len(dead) == 11 and mem["killed_unmeasured"] == sum(
              1 for r in dead if r.get("max_rss_bytes") is None) and mem["floor"] is None,
          "blind: load_dataset's %d exit-137 deaths are named killed, unmeasured (%s)" % (len(dead), mem))
    # a death at a recorded limit: the survivors used 120 MB, one attempt died at its 2 GB;
    # the recommendation is above 2 GB x 1.2, rounded up to 256 MiB, and says it is a floor
    small = os.path.join(tmp, "floor.txt")
    with open(small, "w") as f:
        f.write("task_id\thash\tnative_id\tname\tstatus\texit\tsubmit\tduration\trealtime\t%cpu\tpeak_rss\tmemory\n")
        for i, (status, code, rss) in enumerate((("COMPLETED", 0, "100 MB"), ("FAILED", 137, "-"),
                                                 ("COMPLETED", 0, "120 MB"))):
            f.write("%d\taa/%06d\t%d\tbig\t%s\t%d\t2024-01-01 00:00:0%d.000\t10s\t9s\t100.0%%\t%s\t2 GB\n"
                    % (i + 1, i + 1, i + 1, status, code, i, rss))
    mem = json.loads(run([TL, "advise", "-q", "--format", "json", small], check=True).stdout)["categories"][0][
        "resources"]["memory"]
    want = math.ceil(2 * 2**30 * 1.2 / 2**28 - 1e-9) * 2**28
    check(mem["killed"] == 1 and mem["floor"] == 2 * 2**30 and mem["recommend"] == want and mem["recommend_is_floor"],
          "blind: one death at a 2 GB limit lifts the recommendation to %d (survivors' p95 x 1.2 was 150 MB): %s"
          % (want, {k: mem[k] for k in ("killed", "floor", "recommend", "recommend_is_floor")}))


def main():
    if not os.path.isdir(SHARED):
        print("SKIP: ../shared (the real samples) is absent")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        nextflow(tmp)
        snakemake(tmp)
        blind(tmp)
        snakemake_retries(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
