#!/usr/bin/env python3
"""`advise --emit` and `--requests` (issue 33, points 1-2): recommendations
written in the files the workflow systems read, each read back by a parser
of that system, and BPS requests read as the allocation of LSST quanta.

1. --emit bps: PyYAML reads it; `pipetask: LABEL: requestMemory/requestCpus`
   equal `advise --format json`'s recommendation in MB (MiB) and whole cores,
   rounded up; a label with nothing measured is left out.
2. --emit wq: JSON that cctools' own parser (jx2json) reads back unchanged;
   the categories' cores/memory/disk (MB) equal the recommendations.
3. --emit makeflow: cctools' makeflow_analyze says "Syntax OK" for the
   blocks with a rule after each, and makeflow runs that workflow locally.
4. --requests BPS.yaml on LSST metadata: each label's quanta are allocated
   its request (MB = MiB, CPUs), a label missing from the file its default
   (said, with its name); the memory waste equals Python's sum over the
   task points of `lines`. `requests:` in a run configuration puts the same
   allocation on the task points.
5. A request that is not a number is refused with file:line.

usage: advise_emit.py TASKLENS REPO_DIR
"""
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

MIB = 1048576.0


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def advise_json(tasklens, inputs, extra=()):
    return {c["category"]: c for c in
            json.loads(run([tasklens, "advise", "-q", "--format", "json"] + list(extra) + inputs,
                           check=True).stdout)["categories"]}


def mb(v):
    return math.ceil(v / MIB - 1e-9)


def settings(tasklens, inputs, system):
    """What `advise --replay SYSTEM` says the file holds, per category
    (its own figures are checked against the manual in advise_replay.py)."""
    return {c["category"]: c for c in
            json.loads(run([tasklens, "advise", "-q", "--replay", system, "--format", "json"] + inputs,
                           check=True).stdout)["categories"]}


def emit_checks(tasklens, demo, tmp):
    adv = advise_json(tasklens, [demo])
    st = settings(tasklens, [demo], "bps")
    out = run([tasklens, "advise", "--emit", "bps", demo], check=True).stdout
    doc = yaml.safe_load(out)
    check(out.startswith("# made by tasklens advise --emit bps") and demo in out.splitlines()[0]
          and "# rule: cores = cores used p95" in out and "memoryMultiplier" in out,
          "bps: a header with the command, the inputs and the rule")
    bad = []
    for cat, a in st.items():
        got = doc["pipetask"].get(cat)
        if a["memory"] is None and a["cores"] is None:
            if got is not None:
                bad.append((cat, "should be left out"))
            continue
        want = {}
        if a["memory"] is not None:
            want["requestMemory"] = mb(a["memory"]["first"])
            if a["memory"]["retries"]:
                want.update(memoryMultiplier=2, numberOfRetries=a["memory"]["retries"])
        if a["cores"] is not None:
            want["requestCpus"] = a["cores"]
        if got != want:
            bad.append((cat, got, want))
    check(not bad, "bps: PyYAML reads pipetask: LABEL: requestMemory/requestCpus (and memoryMultiplier/"
          "numberOfRetries where a retry grows) = advise's settings (%d labels; differ: %s)"
          % (len(doc["pipetask"]), bad[:3]))

    st = settings(tasklens, [demo], "wq")
    out = run([tasklens, "advise", "--emit", "wq", demo], check=True).stdout
    doc = json.loads(out)
    path = os.path.join(tmp, "wq.json")
    with open(path, "w") as f:
        f.write(out)
    jx = run(["jx2json", path])
    check(jx.returncode == 0 and json.loads(jx.stdout) == doc,
          "wq: cctools' jx2json reads the JSON back unchanged (%s)" % jx.stderr.strip()[-200:])
    bad = []
    for cat, a in st.items():
        want = {"first": {}, "max": {}}
        if a["cores"] is not None:
            want["first"]["cores"] = want["max"]["cores"] = a["cores"]
        for res in ("memory", "disk"):
            if a[res] is not None:
                want["first"][res] = mb(a[res]["first"])
                want["max"][res] = mb(a[res]["cover"] if a[res]["retries"] else a[res]["first"])
        if not want["first"]:
            want = {}  # nothing measured: left to the manager
        got = dict(doc["categories"].get(cat, {}))
        rp = got.pop("replay", None)
        if got != want or (rp and (rp["tasks"] != a["tasks"] or rp["successes_killed_for_good"] != 0)):
            bad.append((cat, got, want))
    check(not bad and "rule: cores" in doc["tasklens"] and "first_allocation_guess" in doc["tasklens"],
          "wq: each category's first allocation and maximum (cores, MB) = advise's settings, with how "
          "to apply them (differ: %s)" % bad[:3])

    out = run([tasklens, "advise", "--emit", "makeflow", demo], check=True).stdout
    blocks, rules, k = [], [], 0
    for block in out.split("\n\n"):
        blocks.append(block)
        if re.search(r"^CATEGORY=", block, re.M):
            blocks.append("out%d.txt:\n\techo %d > out%d.txt" % (k, k, k))
            k += 1
    mf = os.path.join(tmp, "Makeflow")
    with open(mf, "w") as f:
        f.write("\n\n".join(blocks) + "\n")
    r = run(["makeflow_analyze", "-k", mf])
    check(r.returncode == 0 and "Syntax OK" in r.stdout + r.stderr,
          "makeflow: makeflow_analyze -k: %s" % (r.stdout + r.stderr).strip()[-200:])
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = run(["makeflow", "-T", "local", "Makeflow"], cwd=tmp, env=env, timeout=120)
    made = sum(os.path.exists(os.path.join(tmp, "out%d.txt" % i)) for i in range(k))
    check(r.returncode == 0 and made == k, "makeflow: the workflow with the %d categories runs "
          "locally (exit %d, %d outputs; %s)" % (k, r.returncode, made, r.stderr.strip()[-200:]))
    st = settings(tasklens, [demo], "makeflow")
    vals = {m[0]: (m[1], m[2], m[3]) for m in
            re.findall(r'^CATEGORY=(.*)\n(?:MODE=MIN_WASTE\n)?CORES=(\d+)\n(?:MEMORY=(\d+)\n)?(?:DISK=(\d+))?', out, re.M)}
    want = {c: (str(a["cores"]), str(mb(a["memory"]["cover"])) if a["memory"] else "",
                str(mb(a["disk"]["cover"])) if a["disk"] else "")
            for c, a in st.items() if a["cores"] is not None}
    check(vals == want, "makeflow: CORES, MEMORY and DISK (the maximum) per category = advise's (%s)" % vals)


BPS = """\
# a BPS submit file as people write them: other keys, ${VARS}, {placeholders}
pipelineYaml: "${DRP_PIPE_DIR}/pipelines/HSC/DRP-RC2.yaml"
payload:
  payloadName: "{operator}_drp"
requestMemory: 3000
pipetask:
  isr:
    requestMemory: 4096
    requestCpus: 2
  calibrate:
    clusterTemplate: "{visit}"
"""


def requests_checks(tasklens, repo, tmp):
    lsst = os.path.join(repo, "tests", "data", "lsst")
    bps = os.path.join(tmp, "submit.yaml")
    with open(bps, "w") as f:
        f.write(BPS)
    r = run([tasklens, "advise", "-q", "--requests", bps, "--format", "json", lsst])
    check(r.returncode == 0, "advise --requests exits 0 (%s)" % r.stderr[-200:])
    adv = {c["category"]: c for c in json.loads(r.stdout)["categories"]}
    isr, other = adv["isr"]["resources"], adv["assembleCoadd"]["resources"]
    check(isr["memory"]["allocated_p50"] == 4096 * MIB and isr["cores"]["allocated_p50"] == 2,
          "a label in the file: allocated its requestMemory (MiB) and requestCpus")
    check(other["memory"]["allocated_p50"] == 3000 * MIB and other["cores"]["allocated_p50"] == 1,
          "a label not in the file: the file's default requestMemory, BPS's default 1 CPU")
    check("assembleCoadd" in r.stderr and "default" in r.stderr,
          "the defaulted label is named on stderr (%r)" % r.stderr.strip()[-200:])
    pts = [l for l in run([tasklens, "lines", "-q", lsst], check=True).stdout.splitlines()
           if l.startswith("task,") and "category=isr" in l]
    waste = 0.0
    for l in pts:
        f = dict(kv.split("=", 1) for kv in l.split(" ")[1].split(","))
        wall, rss = float(f["wall_time_s"]), float(f["max_rss_bytes"])
        waste += max(0.0, 4096 * MIB - rss) * wall / 3600 / (1024 * MIB)
    check(pts and abs(isr["memory"]["waste"] - waste) <= 1e-12 * max(1, waste),
          "isr's memory waste = Python's sum over its task points (%.6g GiB-h, %d quanta)"
          % (waste, len(pts)))

    cfg = os.path.join(tmp, "run.yaml")
    out = os.path.join(tmp, "run.lp")
    with open(cfg, "w") as f:
        f.write("sources:\n  - type: dir\n    path: %s\nsinks:\n  - type: file\n    path: %s\n"
                "requests: %s\nflush_interval: 100\n" % (lsst, out, bps))
    p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline and not (os.path.exists(out) and "category=isr" in open(out).read()):
        time.sleep(0.1)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    with open(out) as f:
        tasks = [l for l in f if l.startswith("task,")]
    isr_pts = [l for l in tasks if "category=isr" in l]
    check(isr_pts and all("alloc_memory_bytes=4294967296" in l and "alloc_cores=2" in l
                          for l in isr_pts),
          "run with `requests:`: isr's task points carry alloc_memory_bytes and alloc_cores")

    with open(bps, "w") as f:
        f.write("pipetask:\n  isr:\n    requestMemory: lots\n")
    r = run([tasklens, "advise", "--requests", bps, lsst])
    check(r.returncode == 2 and re.search(r"submit\.yaml:3: pipetask\.isr\.requestMemory", r.stderr),
          "a request that is not a number: exit 2 with file:line (%r)" % r.stderr.strip()[-200:])


def makeflow_modes(tasklens, repo, tmp):
    """MODE=MIN_WASTE where a retry pays (openproblems' run_method): Makeflow
    parses the blocks and its maximum is advise's cover."""
    op = os.path.join(os.path.dirname(os.path.abspath(repo)), "shared", "nextflow", "samples",
                      "openproblems_2022-05-13_execution_trace.txt")
    if not os.path.exists(op):
        print("SKIP part: ../shared has no openproblems trace (Makeflow's MODE)")
        return
    out = run([tasklens, "advise", "-q", "--emit", "makeflow", op], check=True).stdout
    mf = os.path.join(tmp, "ModeMakeflow")
    with open(mf, "w") as f:
        f.write(out + "\nout.txt:\n\techo > out.txt\n")
    r = run(["makeflow_analyze", "-k", mf])
    st = settings(tasklens, [op], "makeflow")
    block = re.search(r"^CATEGORY=run_method\n((?:[A-Z_]+=.*\n)+)", out, re.M)
    lines = block.group(1).split("\n") if block else []
    check(r.returncode == 0 and "Syntax OK" in r.stdout + r.stderr and "MODE=MIN_WASTE" in lines
          and "MEMORY=%d" % mb(st["run_method"]["memory"]["cover"]) in lines,
          "makeflow: run_method's block has MODE=MIN_WASTE and MEMORY = the maximum, and makeflow_analyze "
          "-k accepts it (%s)" % lines)


def main():
    tasklens, repo = sys.argv[1:3]
    demo = os.path.join(repo, "tests", "data", "wq", "demo-cctools-9.9.log")
    missing = [t for t in ("jx2json", "makeflow_analyze", "makeflow") if not shutil.which(t)]
    if missing:
        print("SKIP: %s not installed (coop-computing-tools)" % ", ".join(missing))
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        emit_checks(tasklens, demo, tmp)
        makeflow_modes(tasklens, repo, tmp)
        requests_checks(tasklens, repo, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
