#!/usr/bin/env python3
"""LSST task metadata: the parser and `summary --lsst-summary`.

1. A generated datastore tree (>= 10,000 metadata files, 24 labels) in every
   shape the format note lists: JSON TaskMetadata (compact, bare NaN and
   Infinity, `+00:00` times), the provenance wrapper with several attempts
   (the last one counts), YAML PropertySet with nested PropertyList
   (4-element entries) or PropertySet (3-element), `!!python/tuple`
   entries, repeated values (the last counts), `__version__` 0 (KiB) and
   1 (bytes), NoWorkFound quanta (prep and end only), plain YAML mappings;
   plus broken files. The ResourceUsageSummary columns must equal an
   independent numpy computation from the generator's own numbers, bit for
   bit; broken files are reported with their path.
2. The real DM-54057 provenance file (../shared/lsst/samples) and the
   analysis_tools test document: values computed here from the files.

usage: lsst_summary.py TASKLENS [SHARED_DIR] [N_FILES]
"""
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

QS = [0.0, 0.01, 0.05, 0.32, 0.50, 0.68, 0.95, 0.99, 1.0]
QN = ["p000", "p001", "p005", "p032", "p050", "p068", "p095", "p099", "p100"]
FIELDS = ["CpuTime", "UserTime", "SystemTime", "MaxResidentSetSize", "MinorPageFaults",
          "MajorPageFaults", "BlockInputs", "BlockOutputs", "VoluntaryContextSwitches",
          "InvoluntaryContextSwitches"]


def utc(us, tz):
    s = "%s.%06d" % (__import__("time").strftime("%Y-%m-%dT%H:%M:%S", __import__("time").gmtime(us // 10**6)),
                     us % 10**6)
    return s + "+00:00" if tz else s


def make_quantum(rnd, label, no_work, version):
    """Per-phase values and what the summary should take from them."""
    t0 = 1_700_000_000_000_000 + rnd.randrange(10**12)
    cpu0 = rnd.uniform(1, 200)
    prep = {"Utc": t0, "CpuTime": cpu0}
    init = {"Utc": t0 + rnd.randrange(10**3, 10**6), "CpuTime": cpu0 + rnd.uniform(0, 2)}
    start = {"Utc": init["Utc"] + rnd.randrange(10**3, 10**7), "CpuTime": init["CpuTime"] + rnd.uniform(0, 5)}
    base = (hash(label) % 7 + 1) * 2.0
    run_cpu = rnd.lognormvariate(math.log(base), 0.7)
    end = {"Utc": start["Utc"] + int(run_cpu * 1.3e6) + rnd.randrange(10**5),
           "CpuTime": start["CpuTime"] + run_cpu}
    rss = int(rnd.lognormvariate(math.log(2e9), 0.5))
    for f in FIELDS[1:]:  # cumulative counters, as getrusage gives them
        total = 0
        for ph in (prep, init, start, end):
            total += rnd.randrange(10**6)
            ph[f] = total
    end["MaxResidentSetSize"] = rss // 1024 if version == 0 else rss
    phases = {"prep": prep, "end": end} if no_work else {"prep": prep, "init": init, "start": start, "end": end}
    mem = (end["MaxResidentSetSize"] * (1024 if version == 0 else 1)) / 1024 / 1024 / 1024
    run = 0.0 if no_work else end["CpuTime"] - start["CpuTime"]
    wall = float((end["Utc"] - prep["Utc"]) * 1000) * 1e-9
    return phases, (mem, run, wall)


def quantum_keys(phases, tz):
    out = []
    for ph, vals in phases.items():
        for k, v in vals.items():
            out.append((ph + k, utc(v, tz) if k == "Utc" else v))
    return out


def yaml_scalar(v):
    if isinstance(v, str):
        return "'%s'" % v
    return repr(v)


def write_json(path, label, phases, version, node, tz, provenance, rnd):
    def tm(phases, version):
        arrays = {k: [rnd.uniform(0, 1), v] if rnd.random() < 0.1 and not isinstance(v, str) else [v]
                  for k, v in quantum_keys(phases, tz)}  # sometimes repeated: the last counts
        return {"scalars": {}, "arrays": {}, "metadata": {
            label: {"scalars": {"__version__": version, "nodeName": node, "odd": float("nan"),
                                "big": float("inf")}, "arrays": {}, "metadata": {}},
            label + ":sub": {"scalars": {"numStars": 12}, "arrays": {}, "metadata": {}},
            "quantum": {"scalars": {"__version__": version, "nodeName": node, "caveats": 0},
                        "arrays": arrays,
                        "metadata": {"butler_metrics": {"scalars": {"n_get": 3}, "arrays": {}, "metadata": {}}}},
            "job": {"scalars": {"qg_read_time": 4.2}, "arrays": {}, "metadata": {}}}}
    doc = tm(phases, version)
    if provenance:  # an earlier attempt that does not count
        other, _ = make_quantum(rnd, label, False, version)
        doc = {"attempts": [tm(other, version), doc]}
    text = json.dumps(doc, separators=(",", ":"))  # json writes NaN / Infinity bare
    with open(path, "w") as f:
        f.write(text)


def write_yaml(path, label, phases, version, node, tz, style, rnd):
    keys = quantum_keys(phases, tz)
    if version is not None:
        keys.append(("__version__", version))
    keys.append(("nodeName", node))
    if style == "plain":
        lines = ["%s:" % label, "  nodeName: %s" % node, "quantum:"]
        lines += ["  %s: %s" % (k, yaml_scalar(v)) for k, v in keys]
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return
    inner_tag = "PropertyList" if style in ("list", "tuple") else "PropertySet"
    four = inner_tag == "PropertyList"

    def entry(k, v):
        typ = "String" if isinstance(v, str) else ("Double" if isinstance(v, float) else "LongLong")
        val = yaml_scalar(v)
        if rnd.random() < 0.1 and not isinstance(v, str):
            val = "[%s, %s]" % (repr(rnd.uniform(0, 1)) if typ == "Double" else rnd.randrange(9), val)
        items = [k, typ, val] + (["''"] if four else [])
        if style == "tuple":
            return "    - !!python/tuple [%s]" % ", ".join(items)
        return "    - [%s]" % ", ".join(items)

    sections = [("quantum", keys), (label, [("nodeName", node)]), (label + ":sub", [("numStars", 5)])]
    rnd.shuffle(sections)  # key order is not guaranteed
    lines = ["!<lsst.daf.base.PropertySet>"]
    for name, ks in sections:
        lines += ["- - %s" % name, "  - PropertySet", "  - !<lsst.daf.base.%s>" % inner_tag]
        lines += [entry(k, v).replace("    - ", "    - ", 1) for k, v in ks]
    lines.append("- [__version__, LongLong, 1]")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


RUN = "u/someone/DM-54057/20260122T000000Z"


def butler_path(root, label, i, ext):
    """The butler's default file template (daf_butler fileDatastore.yaml)
    for one of four kinds of quantum dimensions, chosen by the label: the
    path, and the data-id tags tasklens should read from it."""
    kind, j = int(label[-2:]) % 4, i // 24
    band = "ugrizy"[i % 6]
    tract, patch = str(9000 + j // 80), str(j % 80)
    ids = {"band": band, "workflow": RUN}
    visit, day_obs, pf = str(2026012200000 + i), "20260122", "%s_%d" % (band, 10 + i % 50)
    det = "R%d%d_S%d%d" % (i % 5, (i // 5) % 5, (i // 25) % 3, (i // 75) % 3)
    if kind == 0:  # a coadd: tract, patch, band, skymap
        dirs, name = [tract, patch, band], [tract, patch, band, "lsst_cells_v1"]
        ids.update(tract=tract, patch=patch, skymap="lsst_cells_v1")
    elif kind == 1:  # a visit: instrument, visit, detector
        dirs, name = [day_obs, band, pf, visit], ["LSSTCam", band, pf, visit, det]
        ids.update(instrument="LSSTCam", physical_filter=pf, visit=visit, detector=det)
    elif kind == 2:  # an exposure: its obs_id, no visit
        obs = "MC_O_20260122_%06d" % i
        dirs, name = [day_obs, band, pf, obs], ["LSSTCam", band, pf, obs, det]
        ids.update(instrument="LSSTCam", physical_filter=pf, detector=det)
    else:  # a warp: tract, patch and visit, skymap
        dirs, name = [tract, patch, day_obs, band, pf, visit], ["LSSTCam", tract, patch, band, pf, visit,
                                                                 "lsst_cells_v1"]
        ids.update(instrument="LSSTCam", tract=tract, patch=patch, physical_filter=pf, visit=visit,
                   skymap="lsst_cells_v1")
    dtype = "%s_metadata" % label
    d = os.path.join(root, RUN, dtype, *dirs)
    return os.path.join(d, "_".join([dtype] + name + [RUN.replace("/", "_")]) + ext), ids


def generate(root, n, rnd, ids_by_path=None):
    labels = ["task%02d" % i for i in range(24)]
    expect = {}
    bad = []
    for i in range(n):
        label = labels[i % len(labels)]
        kind = i % 8
        ext = ".json" if kind in (0, 1, 2) else ".yaml"
        path, ids = butler_path(root, label, i, ext)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if ids_by_path is not None:
            ids_by_path[path] = ids
        no_work = rnd.random() < 0.05
        version = 0 if kind == 7 else 1
        tz = i % 2 == 0
        node = "node%03d" % rnd.randrange(50)
        phases, vals = make_quantum(rnd, label, no_work, version)
        if kind in (0, 1):
            write_json(path, label, phases, version, node, tz, False, rnd)
        elif kind == 2:
            write_json(path, label, phases, version, node, tz, True, rnd)
        else:
            style = {3: "list", 4: "set", 5: "tuple", 6: "plain", 7: "list"}[kind]
            write_yaml(path, label, phases, None if version == 0 else version, node, tz, style, rnd)
        expect.setdefault(label, []).append((path, vals))
    for j, text in enumerate(["{\"metadata\": {\"quantum\": ", "!<lsst.daf.base.PropertySet>\n- [a, b\n",
                              "{\"metadata\": {\"task\": {}}, \"scalars\": {}}"]):
        d = os.path.join(root, RUN, "broken_metadata")
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, "broken_metadata_%d.%s" % (j, "yaml" if j == 1 else "json"))
        with open(p, "w") as f:
            f.write(text)
        bad.append(p)
    return expect, bad


def expected_rows(expect):
    rows = {}
    for label, items in expect.items():
        items.sort(key=lambda x: x[0].encode())  # tasklens reads in path order
        mem = np.array([v[0] for _, v in items])
        run = np.array([v[1] for _, v in items])
        wall = np.array([v[2] for _, v in items])
        row = {"quanta": len(items), "integrated_runtime_hrs": np.sum(run) / 3600.0}
        for name, arr in (("mem_GB_", mem), ("runtime_s_", run), ("walltime_s_", wall)):
            for q, qn in zip(QS, QN):
                row[name + qn] = float(np.quantile(arr, q))
        rows[label] = row
    return rows


def read_csv(text):
    lines = text.strip().splitlines()
    head = lines[0].split(",")
    return head, {ln.split(",")[0]: dict(zip(head, ln.split(","))) for ln in lines[1:]}


def tree(tasklens, tmp, n):
    rnd = random.Random(54057)
    root = os.path.join(tmp, "repo")
    ids_by_path = {}
    expect, bad = generate(root, n, rnd, ids_by_path)
    r = subprocess.run([tasklens, "summary", "--lsst-summary", "--format", "csv", root],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    check(r.returncode == 0, "summary --lsst-summary exit 0 (%d)" % r.returncode)
    head, got = read_csv(r.stdout)
    want_head = ["task", "quanta", "integrated_runtime_hrs"] + \
        ["%s%s" % (g, q) for g in ("mem_GB_", "runtime_s_", "walltime_s_") for q in QN]
    check(head == want_head, "the 30 ResourceUsageSummary columns, in order")
    want = expected_rows(expect)
    check(sorted(got) == sorted(want), "one row per label: %d rows, want %d" % (len(got), len(want)))
    diffs = []
    for label, row in want.items():
        g = got.get(label, {})
        for k, v in row.items():
            gv = g.get(k)
            if gv is None or (float(gv) != v if k != "quanta" else int(gv) != v):
                diffs.append((label, k, gv, v))
    check(not diffs, "every number equals numpy's, bit for bit (%d files; first differences: %s)"
          % (n, diffs[:4]))
    for p in bad:
        check(p in r.stderr, "broken file reported with its path: %s" % os.path.basename(p))
    m = re.search(r"(\d+) metadata files, (\d+) quanta, (\d+) rejected", r.stderr)
    check(m and int(m.group(1)) == n + len(bad) and int(m.group(2)) == n and int(m.group(3)) == len(bad),
          "counts on stderr: %s" % (m.group(0) if m else r.stderr[-300:]))
    # data-id tags from the path, in line protocol: per label, the multiset
    # of every file's tags equals what the template was filled with
    with open(os.path.join(root, RUN, "calexp.fits"), "wb") as f:  # a datastore holds images too
        f.write(b"SIMPLE  =                    T" + bytes(range(256)) * 8)
    r = subprocess.run([tasklens, "lines", "--window", "0", root], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    lp = r.stdout
    check("1 of %d files of no known format, skipped" % (n + len(bad) + 1) in r.stderr,
          "a directory input skips (and counts) the files of no known format: %s"
          % r.stderr.strip().splitlines()[-1:])
    got_ids, want_ids = {}, {}
    for ln in lp.splitlines():
        if not ln.startswith("task,") or ",final=true " not in ln:
            continue  # a provenance file has a record per attempt; the last is final
        tags = dict(kv.split("=", 1) for kv in ln.split(" ", 1)[0].split(",")[1:])
        label = tags.pop("category")
        for k in ("host", "result", "source"):
            tags.pop(k, None)
        got_ids.setdefault(label, Counter())[frozenset(tags.items())] += 1
    for path, ids in ids_by_path.items():
        label = os.path.basename(path[:path.index("_metadata/")])
        want_ids.setdefault(label, Counter())[frozenset(ids.items())] += 1
    diff = [(lb, list((want_ids[lb] - got_ids.get(lb, Counter())).items())[:1],
             list((got_ids.get(lb, Counter()) - want_ids[lb]).items())[:1])
            for lb in want_ids if got_ids.get(lb) != want_ids[lb]]
    check(not diff and sum(sum(c.values()) for c in got_ids.values()) == n,
          "data-id tags from the butler file template: every file's equal what it was written "
          "with, 4 kinds of dimensions (first differences: %s)" % diff[:2])
    # the hand scanners take (nearly) every file, and what they give equals
    # what Jansson / libyaml give for the same files
    slow = subprocess.run([tasklens, "lines", "--window", "0", "-O", "lsst.fast_scan=false", root],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rec = [ln for ln in lp.splitlines() if ln.startswith("task,")]
    rec_slow = [ln for ln in slow.stdout.splitlines() if ln.startswith("task,")]
    check(slow.returncode == 0 and rec == rec_slow and len(rec) >= n,
          "fast scanners and libraries give the same %d task points (%d without the fast path)"
          % (len(rec), len(rec_slow)))
    r = subprocess.run([tasklens, "summary", "--format", "json", "-q", root], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    kinds = json.loads(r.stdout)["inputs"][0].get("line_kinds", {})
    check(kinds.get("documents_fast_scan", 0) == n + 1 and kinds.get("documents_library") == len(bad) - 1,
          "every generated file but the 2 unparsable ones took the fast path: %s" % kinds)


def real_samples(tasklens, shared):
    d = os.path.join(shared, "lsst", "samples")
    prov = os.path.join(d, "lsst_pipe_base__tests_data__DM-54057.calibrateImage_metadata.provenance.json")
    if not os.path.exists(prov):
        print("SKIP: %s not found; the real LSST samples are not checked" % d)
        return
    doc = json.load(open(prov))
    q = doc["attempts"][-1]["metadata"]["quantum"]["arrays"]

    def ns(s):
        import datetime
        t = datetime.datetime.fromisoformat(s)
        return int(t.timestamp()) * 10**9 + t.microsecond * 1000

    want = {"runtime_s_p050": q["endCpuTime"][-1] - q["startCpuTime"][-1],
            "mem_GB_p050": q["endMaxResidentSetSize"][-1] / 1024 / 1024 / 1024,
            "walltime_s_p050": float(ns(q["endUtc"][-1]) - ns(q["prepUtc"][-1])) * 1e-9,
            "quanta": 1}
    r = subprocess.run([tasklens, "summary", "--lsst-summary", "--format", "csv", "-q", prov],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, got = read_csv(r.stdout)
    g = got.get("calibrateImage", {})
    ok = all(float(g.get(k, "nan")) == v for k, v in want.items())
    check(r.returncode == 0 and ok, "DM-54057 (real DP2 provenance): %s == %s"
          % ({k: g.get(k) for k in want}, want))
    lp = subprocess.run([tasklens, "lines", "--window", "0", prov], stdout=subprocess.PIPE, text=True).stdout
    check("host=sdfmilan185" in lp and "init_time_s=" in lp,
          "DM-54057: host from nodeName, init time present")
    syn = os.path.join(d, "SYNTHETIC_lsst_analysis_tools__tests_test_gatherResourceUsage__test_metadata_json.txt")
    if os.path.exists(syn):
        text = open(syn).read()
        body = text[text.index('"""') + 3:text.rindex('"""')]
        with tempfile.NamedTemporaryFile("w", suffix="_metadata.json", delete=False) as f:
            f.write(body)
        r = subprocess.run([tasklens, "summary", "--lsst-summary", "--format", "csv", "-q", f.name],
                           stdout=subprocess.PIPE, text=True)
        os.unlink(f.name)
        _, got = read_csv(r.stdout)
        g = next(iter(got.values()), {})
        check(float(g.get("runtime_s_p050", "nan")) == 25.0 and float(g.get("walltime_s_p050", "nan")) == 45.0
              and float(g.get("mem_GB_p050", "nan")) == 1234567890 / 1024**3,
              "analysis_tools' test document: run 25 s, wall 45 s, 1234567890 B (%s)" % g)


def fixtures(tasklens):
    """The hand-written fixtures in tests/data/lsst (values in its README)."""
    d = os.path.join(os.path.dirname(__file__), "..", "data", "lsst")
    r = subprocess.run([tasklens, "summary", "--lsst-summary", "--format", "csv", "-q", d],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, got = read_csv(r.stdout)
    isr, coadd = got.get("isr", {}), got.get("assembleCoadd", {})
    check(r.returncode == 0 and isr.get("quanta") == "2" and coadd.get("quanta") == "1",
          "fixtures: 2 isr quanta (PropertyList 4-element; python/tuple 3-element), 1 NoWorkFound")
    check(float(isr.get("runtime_s_p000", "nan")) == 41.25 and float(isr.get("runtime_s_p100", "nan")) == 59.0,
          "fixtures: run CPU 41.25 s and 59 s (end - start CpuTime; the last of a repeated value)")
    check(float(isr.get("mem_GB_p000", "nan")) == 1.0 and float(isr.get("mem_GB_p100", "nan")) == 1.0,
          "fixtures: 1 GiB from bytes (__version__ 1) and from KiB (no __version__)")
    check(float(coadd.get("runtime_s_p050", "nan")) == 0.0 and
          float(coadd.get("walltime_s_p050", "nan")) == float(22000 * 1000) * 1e-9,
          "fixtures: NoWorkFound: run 0 s, wall prep->end 0.022 s")
    lp = subprocess.run([tasklens, "lines", "--window", "0", "--format-in", "lsst"] +
                        sorted(os.path.join(dp, f) for dp, _, fs in os.walk(d) for f in fs if "_metadata_" in f),
                        stdout=subprocess.PIPE, text=True).stdout
    check("result=NO_WORK" in lp and "host=old-node" in lp and "init_time_s=1.5" in lp,
          "fixtures: NO_WORK result, host from the task section, init time")


def nested_flow(tasklens):
    """200 KB of nested flow collections is refused in milliseconds (libyaml
    is quadratic in that nesting: ~24-35 s of one core, the daemon stalled)."""
    import time
    with tempfile.TemporaryDirectory(prefix="tl-lsst-flow-") as tmp:
        path = os.path.join(tmp, "calib_metadata_1.yaml")
        with open(path, "w") as f:
            f.write("a: " + "[" * 100000 + "]" * 100000 + "\n")
        t0 = time.time()
        r = subprocess.run([tasklens, "summary", "--format", "json", "--format-in", "lsst", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        took = time.time() - t0
        rej = json.loads(r.stdout)["inputs"][0]["rejected_by"] if r.stdout.strip() else {}
    check(took < 2 and rej == {"too_large": 1} and "nested deeper than 64" in r.stderr,
          "200 KB of nested flow YAML refused in %.3f s: %s %s" % (took, rej, r.stderr.strip()[:120]))


def impossible_values(tasklens):
    """A CPU time that runs backwards (end before start) and a YAML .inf
    memory: the document is rejected with its file for each, the quantum
    kept without those values; nothing negative or infinite is written."""
    src = os.path.join(os.path.dirname(__file__), "..", "data", "lsst", "u", "demo", "run1",
                       "isr_metadata", "20240101", "i")
    name = sorted(f for f in os.listdir(src) if f.endswith(".yaml"))[0]
    text = open(os.path.join(src, name)).read()
    assert "[endCpuTime, Double, 50.75" in text and "1073741824]" in text
    text = text.replace("[endCpuTime, Double, 50.75", "[endCpuTime, Double, 5.75")
    text = text.replace("[900000000, 1073741824]", "[900000000, .inf]")
    with tempfile.TemporaryDirectory(prefix="tl-lsst-bad-") as tmp:
        path = os.path.join(tmp, name)
        open(path, "w").write(text)
        r = subprocess.run([tasklens, "summary", "--format", "json", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lp = subprocess.run([tasklens, "lines", "--window", "0", path],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True).stdout
    d = json.loads(r.stdout)
    g = d["groups"][0]
    task = [l for l in lp.splitlines() if l.startswith("task,")]
    check(d["inputs"][0]["rejected_by"] == {"bad_value": 1} and g["tasks"] == 1 and
          all(g["metrics"].get(m, {}).get("count", 0) == 0 for m in ("cpu_time_s", "max_rss_bytes")) and
          "%s:1: impossible resource value (cpu_time_s=-3.75 max_rss_bytes=inf)" % path in r.stderr and
          len(task) == 1 and "cpu_time_s" not in task[0] and "inf" not in task[0],
          "impossible values rejected with their file, the quantum kept: %s %s" %
          (d["inputs"][0]["rejected_by"], r.stderr.strip()[:200]))


def process_wide_rss(tasklens, shared):
    """A quantum that ends with the max RSS its process had before it began
    (quanta run in one process share ru_maxrss) is counted, and summary and
    advise say its memory is an upper bound: a copy of the isr fixture whose
    prep value is raised to its end value, next to the unchanged one; and
    the real DM-54057 provenance, 3.16 GB at prep and at end."""
    src = os.path.join(os.path.dirname(__file__), "..", "data", "lsst", "u", "demo", "run1",
                       "isr_metadata", "20240101", "i")
    names = sorted(f for f in os.listdir(src) if f.endswith(".yaml"))
    with tempfile.TemporaryDirectory(prefix="tl-lsst-rss-") as tmp:
        for i, name in enumerate(names[:2]):
            text = open(os.path.join(src, name)).read()
            if i == 0:
                assert "[prepMaxResidentSetSize, LongLong, 524288000" in text
                text = text.replace("[prepMaxResidentSetSize, LongLong, 524288000",
                                    "[prepMaxResidentSetSize, LongLong, 1073741824")
            open(os.path.join(tmp, name), "w").write(text)
        r = subprocess.run([tasklens, "summary", "--format", "json", tmp], capture_output=True, text=True)
        t = subprocess.run([tasklens, "summary", tmp], capture_output=True, text=True)
        a = subprocess.run([tasklens, "advise", tmp], capture_output=True, text=True)
    n = json.loads(r.stdout).get("process_wide_rss_quanta")
    check(n == 1 and "note: 1 quanta ended with the max RSS their process had" in t.stdout and
          "upper bound" in a.stderr,
          "process-wide max RSS: 1 of 2 quanta counted (%s), said by summary and advise" % n)
    real = os.path.join(shared, "lsst", "samples", "lsst_pipe_base__tests_data__DM-54057.calibrateImage_metadata.provenance.json")
    if not os.path.exists(real):
        print("SKIP process_wide_rss on DM-54057: %s absent" % real)
        return
    r = subprocess.run([tasklens, "summary", "--format", "json", real], capture_output=True, text=True)
    check(json.loads(r.stdout).get("process_wide_rss_quanta") == 1,
          "DM-54057's calibrateImage (3.16 GB at prep and end): counted as process-wide")


def main():
    tasklens = sys.argv[1]
    shared = sys.argv[2] if len(sys.argv) > 2 else "../shared"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    with tempfile.TemporaryDirectory(prefix="tl-lsst-") as tmp:
        fixtures(tasklens)
        nested_flow(tasklens)
        impossible_values(tasklens)
        process_wide_rss(tasklens, shared)
        tree(tasklens, tmp, n)
        real_samples(tasklens, shared)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
