#!/usr/bin/env python3
"""Chrome traces through `tasklens summary`, checked against an independent
count made here with Python's json module from the same bytes.

For each trace: events per phase, durations (X with dur, plus B/E pairs on
a stack per pid+tid), open slices, unmatched ends, resource samples, and per
event name the number of durations with their min and max -- all equal, and
0 rejected. Traces come from:
  - the real files in ../shared/chrome/samples (skipped, saying so, if absent);
  - real producers run here: node --trace-event-categories and cmake
    --profiling-format=google-trace;
  - an array-form sample cut at several byte offsets (the missing-`]` rule:
    complete events kept, a half-written last one dropped and reported).

usage: chrome_trace.py TASKLENS SHARED_DIR
"""
import collections
import decimal
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TASKLENS, SHARED = sys.argv[1], sys.argv[2]
D = decimal.Decimal
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL:", msg)


# The parser's default sample_args, as globs.
SAMPLE_ARGS = ["cpu", "memory", "num_fds", "host_net_io.*", "host_disk_io.*", "host_cpu.*",
               "gpu_*", "gpu-*", "Total Allocated", "Total Reserved", "Bytes"]
NUMERIC = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")


def wanted(key):
    for g in SAMPLE_ARGS:
        if g.endswith("*") and key.startswith(g[:-1]) or key == g:
            return True
    return False


def to_ns(v):
    """µs (number or numeric string) -> int ns, half away from zero; None if not a time."""
    if isinstance(v, bool):
        return None
    if isinstance(v, str):
        if not NUMERIC.match(v):
            return None
        v = D(v)
    if not isinstance(v, D):
        return None
    return int((v * 1000).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def ident(e, key):
    if key not in e or e[key] is None:
        return ("n", "")
    v = e[key]
    return ("s", v) if isinstance(v, str) else ("i", str(v))


def is_number(v):
    return isinstance(v, D)


def expected(events):
    """The independent count over a list of parsed elements."""
    phases = collections.Counter()
    c = collections.Counter()
    per_name = {}
    series = collections.Counter()
    stacks = collections.defaultdict(list)

    def duration(name, ns):
        n, lo, hi = per_name.get(name, (0, None, None))
        s = ns / 1e9
        per_name[name] = (n + 1, s if lo is None else min(lo, s), s if hi is None else max(hi, s))
        c["durations"] += 1

    for e in events:
        if not isinstance(e, dict):
            c["non_object"] += 1
            continue
        if not e:
            c["empty"] += 1
            continue
        ph = e.get("ph")
        if not isinstance(ph, str) or not ph:
            c["rejected"] += 1
            continue
        p = ph[0]
        phases[p] += 1
        name = e.get("name") if isinstance(e.get("name"), str) else "(no name)"
        ts = to_ns(e.get("ts"))
        pid = ident(e, "pid")
        thread = (pid, ident(e, "tid") if "tid" in e else pid)
        if p == "X":
            dur = to_ns(e.get("dur")) if "dur" in e else None
            if ts is not None and "dur" not in e:
                c["open"] += 1
            elif ts is None or dur is None or dur < 0:
                c["rejected"] += 1
            else:
                duration(name, dur)
        elif p == "B":
            if ts is None:
                c["rejected"] += 1
            else:
                stacks[thread].append((name, ts))
        elif p == "E":
            if not stacks[thread]:
                c["unmatched_end"] += 1
            elif ts is None:
                c["rejected"] += 1
            else:
                bname, bts = stacks[thread].pop()
                if ts < bts:
                    c["rejected"] += 1
                else:
                    duration(bname, ts - bts)
        elif p in "iIC":
            if ts is None:
                c["rejected"] += 1
                continue
            args = e.get("args")
            if not isinstance(args, dict):
                continue
            prefix, suffix = name, ""
            if p == "C" and "id" in e and isinstance(e["id"], (str, D)):
                prefix = "%s[%s]" % (name, e["id"])
            if p != "C" and is_number(args.get("Device Type")):
                dt = int(args["Device Type"])
                di = int(args["Device Id"]) if is_number(args.get("Device Id")) else 0
                suffix = " (cpu)" if dt == 0 else " (cuda:%d)" % di if dt == 1 else \
                    " (device %d:%d)" % (dt, di)
            for k, v in args.items():
                if p == "C":
                    ok = (is_number(v) or isinstance(v, str) and NUMERIC.match(v)) and \
                        not isinstance(v, bool)
                else:
                    ok = is_number(v) and wanted(k)
                if ok:
                    series["%s %s%s" % (prefix, k, suffix)] += 1
    c["open"] += sum(len(s) for s in stacks.values())
    return phases, c, per_name, series


def load_elements(text):
    """Every complete element of the events array, even when the array (or
    the object around it) is cut short; and whether a partial one was left."""
    dec = json.JSONDecoder(parse_float=D, parse_int=D)
    i = len(text) - len(text.lstrip())
    if text[i] == "{":
        try:
            d = json.loads(text, parse_float=D, parse_int=D)
            return d["traceEvents"], False
        except json.JSONDecodeError:
            raise SystemExit("object-form cuts are not generated by this test")
    i += 1
    out = []
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text) or text[i] == "]":
            return out, False
        try:
            v, i = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            return out, True
        out.append(v)


def tasklens_summary(path):
    r = subprocess.run([TASKLENS, "summary", "--format", "json", "--format-in", "chrome", "-q", path],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        fail("%s: tasklens exited %d: %s" % (path, r.returncode, r.stderr))
        return None
    return json.loads(r.stdout)


def compare(label, path, text, expect_truncated=False):
    elements, partial = load_elements(text)
    phases, c, per_name, series = expected(elements)
    got = tasklens_summary(path)
    if got is None:
        return
    inp = got["inputs"][0]
    kinds = inp["line_kinds"]
    problems = []
    for p in set(phases) | {k[3:] for k in kinds if k.startswith("ph_")}:
        if kinds.get("ph_" + p, 0) != phases.get(p, 0):
            problems.append("phase %s: tasklens %d, count %d" % (p, kinds.get("ph_" + p, 0), phases[p]))
    for key, mine in (("durations", "durations"), ("open", "open"), ("unmatched_end", "unmatched_end"),
                      ("empty_events", "empty"), ("non_object_elements", "non_object")):
        if kinds.get(key, 0) != c[mine]:
            problems.append("%s: tasklens %d, count %d" % (key, kinds.get(key, 0), c[mine]))
    if kinds.get("samples", 0) != sum(series.values()):
        problems.append("samples: tasklens %d, count %d" % (kinds.get("samples", 0), sum(series.values())))
    rejected_expected = c["rejected"] + (1 if partial else 0)
    if inp["rejected"] != rejected_expected:
        problems.append("rejected: tasklens %d %s, count %d" % (inp["rejected"], inp["rejected_by"],
                                                              rejected_expected))
    if partial != (inp["rejected_by"].get("truncated", 0) == 1):
        problems.append("truncated last event: count says %s, tasklens %s" % (partial, inp["rejected_by"]))
    if expect_truncated and not partial:
        problems.append("the cut was meant to split an event")
    groups = {g["key"]["category"]: g for g in got["groups"]}
    for name, (n, lo, hi) in per_name.items():
        g = groups.get(name)
        if not g or g["tasks"] != n:
            problems.append("category %r: tasklens %s durations, count %d" % (name, g and g["tasks"], n))
            continue
        w = g["metrics"]["wall_time_s"]
        if w["min"] != lo or w["max"] != hi:
            problems.append("category %r wall_time_s min/max %r/%r, count %r/%r" % (name, w["min"], w["max"], lo, hi))
    for s, n in series.items():
        g = groups.get(s)
        if not g or g["samples"] != n:
            problems.append("series %r: tasklens %s samples, count %d" % (s, g and g["samples"], n))
    if problems:
        for p in problems[:10]:
            fail("%s: %s" % (label, p))
    else:
        print("ok   %-62s %7d events %7d durations %6d samples" % (
            label, sum(phases.values()), c["durations"], sum(series.values())))


def read_text(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        return f.read().decode("utf-8")


tmp = tempfile.mkdtemp(prefix="tl-chrome-")
try:
    # 1. real files
    sample_dir = os.path.join(SHARED, "chrome", "samples")
    samples = sorted(glob.glob(os.path.join(sample_dir, "*.json")) +
                     glob.glob(os.path.join(sample_dir, "*.json.gz")))
    if not samples:
        print("SKIP real samples: %s absent" % sample_dir)
    for path in samples:
        compare(os.path.basename(path), path, read_text(path))

    # 2. the truncated-array rule on a real array-form file, cut at several offsets
    xev = os.path.join(sample_dir, "catapult_x_event_trace.json")
    if os.path.exists(xev):
        text = read_text(xev)
        raw = text.encode()
        cuts = [len(raw) * k // 9 for k in range(1, 9)]
        # also: just after a complete event, and just after its comma
        end = raw.index(b"}", len(raw) // 2) + 1
        while raw[end:end + 1] not in (b",",):
            end = raw.index(b"}", end) + 1
        cuts += [end, end + 1, len(raw) - 1]
        for off in cuts:
            cut = raw[:off]
            while cut and (cut[-1] & 0xC0) == 0x80:  # keep whole UTF-8 characters
                cut = cut[:-1]
            p = os.path.join(tmp, "cut.json")
            with open(p, "wb") as f:
                f.write(cut)
            compare("catapult_x_event_trace.json cut at %d" % off, p, cut.decode())
        # the cut that lands mid-event is exercised at least once
        _, partial = load_elements(raw[:cuts[0]].decode(errors="ignore"))
        if not partial:
            fail("the first cut was expected to split an event")
    else:
        print("SKIP truncation cuts: %s absent" % xev)

    # 3. real producers, run here
    node = shutil.which("node") or shutil.which("nodejs")
    if node:
        d = os.path.join(tmp, "node")
        os.mkdir(d)
        subprocess.run([node, "--trace-event-categories", "v8,node,node.async_hooks",
                        "--trace-event-file-pattern", os.path.join(d, "trace-${pid}-${rotation}.json"),
                        "-e", "let s = 0; for (let i = 0; i < 2e6; i++) s += Math.sqrt(i);"
                              "setTimeout(() => require('fs').readFileSync('/etc/hostname'), 20)"],
                       check=True)
        traces = glob.glob(os.path.join(d, "trace-*.json"))
        if len(traces) != 1:
            fail("node wrote %d traces" % len(traces))
        for p in traces:
            compare("node %s" % os.path.basename(p), p, read_text(p))
    else:
        fail("node is not installed (scripts/install-deps.sh installs nodejs)")
    cmake = shutil.which("cmake")
    if cmake:
        src = os.path.join(tmp, "proj")
        os.mkdir(src)
        with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.18)\nproject(p C)\n"
                    "foreach(i RANGE 50)\n  string(REPEAT x ${i} v)\nendforeach()\n"
                    "add_executable(x x.c)\n")
        with open(os.path.join(src, "x.c"), "w") as f:
            f.write("int main(void) { return 0; }\n")
        prof = os.path.join(tmp, "cmake-profile.json")
        subprocess.run([cmake, "--profiling-format=google-trace", "--profiling-output=" + prof,
                        "-S", src, "-B", os.path.join(tmp, "build")], check=True,
                       stdout=subprocess.DEVNULL)
        compare("cmake --profiling-format=google-trace", prof, read_text(prof))
    else:
        fail("cmake is not installed")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d failures" % failures)
sys.exit(1 if failures else 0)
