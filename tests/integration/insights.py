#!/usr/bin/env python3
"""tasklens advise / plan / energy.

1. A Work Queue log written here with known allocations and measurements
   (cctools 9.9 layout): every number advise, plan and energy print is
   recomputed in this file from the values written, with the formulas the
   manual (docs/advise.md, plan.md, energy.md) states.
2. The real bundled cctools log: the hog task was killed for exceeding its
   50 MB memory limit (RESOURCE_EXHAUSTION); advise's recommendation covers
   what it used, so that attempt would have been avoided.
3. The manual's worked `plan` example (docs/plan.md), command and output,
   reproduced byte for byte.

usage: insights.py TASKLENS REPO_DIR
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

from checks import check, finish

TL, REPO = sys.argv[1], sys.argv[2]
MIB, GIB = 1 << 20, 1 << 30


def run(*args):
    r = subprocess.run([TL] + list(args), capture_output=True, text=True)
    check(r.returncode == 0, "tasklens %s exits 0 %s" % (" ".join(args[:2]), r.stderr[-300:]))
    return r.stdout


def quantile(v, q):  # numpy's linear method
    v = sorted(v)
    h = (len(v) - 1) * q
    lo = math.floor(h)
    return v[lo] + (h - lo) * (v[min(lo + 1, len(v) - 1)] - v[lo])


def close(a, b, what, rel=1e-9):
    ok = a is not None and b is not None and abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)
    check(ok, "%s: tasklens %r, expected %r" % (what, a, b))


# ---------------------------------------------------------------- 1. hand-checked
HEADER = """# time manager_pid MANAGER START|END
# time manager_pid TASK taskid WAITING category_name (FIRST_RESOURCES|MAX_RESOURCES) {resources_requested}
# time manager_pid TASK taskid RUNNING worker_address (FIRST_RESOURCES|MAX_RESOURCES) {resources_allocated}
# time manager_pid TASK taskid WAITING_RETRIEVAL worker_address
# time manager_pid TASK taskid (RETRIEVED|DONE) (SUCCESS|SIGNAL|END_TIME|FORSAKEN|MAX_RETRIES|MAX_WALLTIME|UNKNOWN|RESOURCE_EXHAUSTION) exit_code {limits_exceeded} {resources_measured}
"""
T0 = 1_790_000_000_000_000  # µs
tasks = []  # dicts of what was written
# sim: 10 tasks, 2 cores and 2000 MB allocated; memory 100..1000 MB, wall 0.5 h x i
for i in range(1, 11):
    tasks.append(dict(cat="sim", result="SUCCESS", exit=0, req_mem=2000, req_cores=2, alloc_mem=2000,
                      alloc_disk=1000, alloc_cores=2, wall=1800 * i, cpu=2700 * i, mem=100 * i, disk=10,
                      cores=1.8, limits=None))
# big: 500 MB allocated, one attempt killed at 700 MB, three that fit in 1000 MB
tasks.append(dict(cat="big", result="RESOURCE_EXHAUSTION", exit=143, req_mem=500, req_cores=1, alloc_mem=500,
                  alloc_disk=1000, alloc_cores=1, wall=600, cpu=500, mem=700, disk=5, cores=1,
                  limits={"memory": [500, "MB"]}))
for m in (650, 680, 690):
    tasks.append(dict(cat="big", result="SUCCESS", exit=0, req_mem=1000, req_cores=1, alloc_mem=1000,
                      alloc_disk=1000, alloc_cores=1, wall=1200, cpu=1100, mem=m, disk=5, cores=1,
                      limits=None))

lines = [HEADER.rstrip("\n"), "%d 4242 MANAGER START" % T0]
t = T0 + 1000
for k, tk in enumerate(tasks, 1):
    tk["id"] = k
    req = json.dumps({"memory": [tk["req_mem"], "MB"], "cores": [tk["req_cores"], "cores"]},
                     separators=(",", ":"))
    alloc = json.dumps({"memory": [tk["alloc_mem"], "MB"], "disk": [tk["alloc_disk"], "MB"],
                        "gpus": [0, "gpus"], "cores": [tk["alloc_cores"], "cores"]}, separators=(",", ":"))
    meas = json.dumps({"wall_time": [tk["wall"], "s"], "cpu_time": [tk["cpu"], "s"], "memory": [tk["mem"], "MB"],
                       "disk": [tk["disk"], "MB"], "cores": [tk["cores"], "cores"]}, separators=(",", ":"))
    lim = json.dumps(tk["limits"], separators=(",", ":")) if tk["limits"] else "{}"
    start = t
    end = start + tk["wall"] * 1_000_000
    lines += ["%d 4242 TASK %d WAITING %s FIRST_RESOURCES %s" % (start - 500, k, tk["cat"], req),
              "%d 4242 TASK %d RUNNING 127.0.0.1:9000  FIRST_RESOURCES %s" % (start, k, alloc),
              "%d 4242 TASK %d WAITING_RETRIEVAL 127.0.0.1:9000 " % (end, k),
              "%d 4242 TASK %d RETRIEVED %s  %d %s %s" % (end + 10, k, tk["result"], tk["exit"], lim, meas),
              "%d 4242 TASK %d DONE %s  %d %s %s" % (end + 20, k, tk["result"], tk["exit"], lim, meas)]
    t += 1_000_000
lines.append("%d 4242 MANAGER END" % (t + 10**10))

with tempfile.TemporaryDirectory(prefix="tl-insights-") as tmp:
    log = os.path.join(tmp, "hand.log")
    with open(log, "w") as f:
        f.write("\n".join(lines) + "\n")

    # ---- advise
    adv = json.loads(run("advise", "--format", "json", log))
    cats = {c["category"]: c for c in adv["categories"]}
    check(sorted(cats) == ["big", "sim"], "advise: categories big and sim, in name order (%s)" % list(cats))
    q, margin, step = 0.95, 1.2, 256 * MIB
    for cat in ("sim", "big"):
        ts = [x for x in tasks if x["cat"] == cat]
        c = cats[cat]
        check(c["attempts"] == len(ts) and c["tasks"] == len(ts), "advise %s: %d attempts and tasks" % (cat, len(ts)))
        for res, used_of, waste_used_of, alloc_of, scale, stp, mar in (
                ("memory", lambda x: x["mem"] * MIB, lambda x: x["mem"] * MIB, lambda x: x["alloc_mem"] * MIB,
                 1 / GIB, step, margin),
                ("disk", lambda x: x["disk"] * MIB, lambda x: x["disk"] * MIB, lambda x: x["alloc_disk"] * MIB,
                 1 / GIB, step, margin),
                ("cores", lambda x: x["cores"], lambda x: x["cpu"] / x["wall"], lambda x: x["alloc_cores"], 1, 1, 1)):
            a = c["resources"][res]
            used = [used_of(x) for x in ts]
            uq = quantile(used, q)
            rec = max(stp, math.ceil(uq * mar / stp - 1e-9) * stp)
            close(a["used_p95"], uq, "advise %s %s used p95" % (cat, res))
            close(a["used_max"], max(used), "advise %s %s used max" % (cat, res))
            close(a["allocated_p50"], quantile([alloc_of(x) for x in ts], 0.5), "advise %s %s allocated p50" % (cat, res))
            close(a["recommend"], rec, "advise %s %s recommendation = ceil(p95 x %g / step) x step" % (cat, res, mar))
            exceed = sum(1 for u in used if u > rec)
            check(a["exceed"] == exceed, "advise %s %s: %d attempts above the recommendation" % (cat, res, exceed))
            waste = sum(max(0, alloc_of(x) - waste_used_of(x)) * x["wall"] / 3600 * scale for x in ts)
            waste_rec = 0
            for x in ts:
                u, uw, al, h = used_of(x), waste_used_of(x), alloc_of(x), x["wall"] / 3600 * scale
                waste_rec += max(0, rec - uw) * h if u <= rec else rec * h + max(0, max(al, u) - uw) * h
            close(a["waste"], waste, "advise %s %s waste (%s)" % (cat, res, a["waste_unit"]))
            close(a["saves"], max(0.0, waste - waste_rec), "advise %s %s saves (never below zero)" % (cat, res))
            close(a["costs"], max(0.0, waste_rec - waste), "advise %s %s costs (what it asks beyond the "
                  "allocation)" % (cat, res))
    ex = cats["big"]["resource_exhaustion"]
    check(ex["attempts"] == 1, "advise big: 1 RESOURCE_EXHAUSTION attempt")
    close(ex["core_hours"], 1 * 600 / 3600, "advise big: exhausted attempt cost in core-hours")
    close(ex["gib_hours"], 500 * MIB / GIB * 600 / 3600, "advise big: exhausted attempt cost in GiB-hours")
    check(ex["avoided"] == 1, "advise big: the recommendation (%s B) covers the 700 MB the killed attempt used"
          % cats["big"]["resources"]["memory"]["recommend"])
    # a stingier recommendation that would not have covered it
    adv2 = json.loads(run("advise", "--format", "json", "--quantile", "0.5", "--margin", "1",
                          "--round", "memory=1MiB", log))
    big2 = {c["category"]: c for c in adv2["categories"]}["big"]
    check(big2["resources"]["memory"]["recommend"] == 685 * MIB and big2["resource_exhaustion"]["avoided"] == 0,
          "advise big at p50, margin 1, 1 MiB steps: 685 MiB, which the killed attempt exceeded (%r)"
          % big2["resources"]["memory"]["recommend"])
    table = run("advise", log)
    check("RESOURCE_EXHAUSTION: 1 attempt " in table and "category=sim" in table and "recommend" in table,
          "advise table names the categories, the recommendation and the exhausted attempt")
    lp = run("advise", "--format", "lp", log).splitlines()
    check(len(lp) == 6 and all(re.match(r"^task_advice,category=\w+,resource=\w+ \S+ \d+$", x) for x in lp),
          "advise --format lp: 6 task_advice points (2 categories x 3 resources)")

    # ---- plan
    node_cores, node_mem = 8, 4 * GIB
    plan = json.loads(run("plan", "--format", "json", "--node", "cores=8,mem=4GiB", "--scale", "3",
                          "--count", "big=100", log))
    pc = {c["category"]: c for c in plan["nodes"][0]["categories"]}
    total = 0
    for cat in ("big", "sim"):
        ts = [x for x in tasks if x["cat"] == cat]
        n = 100 if cat == "big" else 3 * len(ts)
        cpt = quantile([x["alloc_cores"] for x in ts], 0.5)
        # a slot is held for the longer of the wall time and the CPU time over its cores
        tq = quantile([max(x["wall"], x["cpu"] / cpt) for x in ts], q)
        mq = quantile([x["mem"] * MIB for x in ts], q)
        by_c, by_m = math.floor(node_cores / cpt), math.floor(node_mem / mq)
        jobs = min(by_c, by_m)
        binds = "cores" if by_c < by_m else "memory" if by_m < by_c else "both"
        hours = n * tq / 3600 / jobs
        total += hours
        p = pc[cat]
        check(p["tasks"] == n, "plan %s: %d tasks (%s)" % (cat, n, "--count" if cat == "big" else "--scale 3"))
        close(p["time_s"], tq, "plan %s: p95 slot time, max(wall, CPU / cores)" % cat)
        close(p["memory_bytes"], mq, "plan %s: p95 peak memory" % cat)
        check(p["jobs_by_cores"] == by_c and p["jobs_by_memory"] == by_m and p["jobs_per_node"] == jobs,
              "plan %s: jobs per node min(%d by cores, %d by memory)" % (cat, by_c, by_m))
        check(p["binds"] == binds, "plan %s: %s binds" % (cat, binds))
        close(p["node_hours"], hours, "plan %s: node-hours = tasks x p95 / 3600 / jobs" % cat)
    close(plan["nodes"][0]["node_hours"], total, "plan: total node-hours")
    cpu_plan = json.loads(run("plan", "--format", "json", "--time", "cpu", "--node", "cores=8,mem=4GiB", log))
    for c in cpu_plan["nodes"][0]["categories"]:
        ts = [x for x in tasks if x["cat"] == c["category"]]
        close(c["time_s"], quantile([x["cpu"] for x in ts], q), "plan --time cpu %s: p95 CPU time" % c["category"])
    close(plan["nodes"][0]["node_days"], total / 24, "plan: total node-days")
    r = subprocess.run([TL, "plan", "--node", "cores=8", log], capture_output=True, text=True)
    check(r.returncode == 2 and "--node" in r.stderr, "plan: a node without memory is a usage error")
    r = subprocess.run([TL, "plan", "--node", "cores=8,mem=4GiB", "--count", "nosuch=3", log], capture_output=True,
                       text=True)
    check(r.returncode == 2 and "nosuch" in r.stderr, "plan: --count of an unknown category is named")

    # ---- energy
    en = json.loads(run("energy", "--format", "json", "--w-per-core", "12", "--w-per-gib", "0.5", "--pue", "1.5",
                        "--intensity", "300", log))
    check(en["assumptions"] == {"w_per_core": 12, "w_per_gib": 0.5, "pue": 1.5, "g_co2eq_per_kwh": 300},
          "energy: the assumptions are part of the output")
    ec = {c["category"]: c for c in en["categories"]}
    for cat in ("big", "sim"):
        ts = [x for x in tasks if x["cat"] == cat]
        kcpu = 1.5 * sum(x["cpu"] * 12 for x in ts) / 3.6e6
        kmem = 1.5 * sum(x["mem"] * MIB / GIB * x["wall"] * 0.5 for x in ts) / 3.6e6
        close(ec[cat]["kwh_cpu"], kcpu, "energy %s: kWh CPU = PUE x sum cpu_s x W/core / 3.6e6" % cat)
        close(ec[cat]["kwh_memory"], kmem, "energy %s: kWh memory = PUE x sum GiB x wall_s x W/GiB / 3.6e6" % cat)
        close(ec[cat]["kg_co2eq"], (kcpu + kmem) * 300 / 1000, "energy %s: kgCO2eq = kWh x g/kWh / 1000" % cat)
    all_kwh = sum(c["kwh"] for c in en["categories"])
    close(en["total"]["kwh"], all_kwh, "energy: total = sum of the categories")
    check(len(en["workflows"]) == 1 and abs(en["workflows"][0]["kwh"] - all_kwh) <= 1e-12 * all_kwh,
          "energy: the one workflow carries it all")
    table = run("energy", log)
    check(table.startswith("assumptions: 10 W per busy core, 0.375 W per GiB held, PUE 1, 475 gCO2eq/kWh"),
          "energy table starts with its assumptions")

# ---------------------------------------------------------------- 2. the real log
demo = os.path.join(REPO, "tests", "data", "wq", "demo-cctools-9.9.log")
adv = json.loads(run("advise", "--format", "json", demo))
hog = {c["category"]: c for c in adv["categories"]}.get("hog")
check(hog is not None, "advise on the real cctools log has the hog category")
if hog:
    m = hog["resources"]["memory"]
    check(hog["resource_exhaustion"]["attempts"] == 1, "hog: the one forced RESOURCE_EXHAUSTION attempt")
    check(m["allocated_p50"] == 50 * MIB and m["used_max"] > m["allocated_p50"],
          "hog: allocated 50 MiB, used %.0f MiB before it was killed" % (m["used_max"] / MIB))
    check(m["recommend"] >= m["used_max"] and hog["resource_exhaustion"]["avoided"] == 1,
          "hog: the recommended %.0f MiB would have avoided the exhaustion" % (m["recommend"] / MIB))

# ---------------------------------------------------------------- 3. the manual's example
readme = open(os.path.join(REPO, "docs", "plan.md")).read()
mt = re.search(r"<!-- plan example: begin -->\n```\n\$ (tasklens plan [^\n]*)\n(.*?)```\n<!-- plan example: end -->",
               readme, re.S)
check(mt is not None, "docs/plan.md has the worked plan example")
if mt:
    args = mt.group(1).split()[1:]
    os.chdir(REPO)
    out = run(*args)
    check(out == mt.group(2), "docs/plan.md's plan example reproduced byte for byte")
    if out != mt.group(2):
        print(out)

sys.exit(finish())
