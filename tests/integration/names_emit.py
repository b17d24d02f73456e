#!/usr/bin/env python3
"""Names are data in what `advise --emit` writes (issue 55 point 1): every
file is read back by its real consumer over hostile and fuzzed names, and
the keys and values the consumer sees are exactly the intended ones.

Input: resource_monitor summaries (the JSON cctools writes), one category
each, whose names hold quotes, backslashes, line breaks of every kind
(\\n, \\r, U+0085, U+2028, U+2029), ESC sequences, comment markers, `$`,
a literal `\\u000a`, YAML and Groovy syntax -- a fixed set of attacks plus
seeded random ones -- and one name that is not UTF-8. The input paths
themselves hold a line break (they go into each file's header comment).

1. bps: PyYAML reads one top-level key, `pipetask`, whose labels are
   exactly the names (every one is valid UTF-8 and has a measurement), each
   with advise's requestMemory and requestCpus; the non-UTF-8 name is left
   out and said.
2. wq: json.loads (strict UTF-8) and cctools' jx2json read the same
   categories, exactly the UTF-8 names, each with advise's numbers.
3. makeflow: every line outside comments is CATEGORY=/CORES=/MEMORY=/DISK=,
   the categories exactly the names Makeflow can hold; makeflow_analyze
   says Syntax OK with a rule after each block.
4. nextflow: Nextflow's own ConfigParser sees only `process`, its withName
   selectors exactly the names that are process names, nothing printed by
   the config (a name that ran code would print); the rest left out, said.
5. snakemake: PyYAML sees only set-threads/set-resources, rules exactly
   the names that are rule names.
6. The message on stderr names the first name left out in visible escapes:
   no ESC, no line break from a name.

usage: names_emit.py TASKLENS REPO_DIR
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402
import nextflow_jars  # noqa: E402

TL, REPO = sys.argv[1], sys.argv[2]
MIB = 1048576.0

ATTACKS = [
    "ok_proc", "WF:SUB:PROC", "evil'\nprintln 'PWNED-1'\n//",
    "x' { cpus = 99 }\nwithName: 'y", "a\u2028requestMemory: 1", "c\u0085d: {requestCpus: 64}",
    "e\x1b]52;c;cm0gLXJmIH4=\x07f", "g\\u000aprintln 'PWNED-2'", "bidi\u202eabc", 'x"y: z',
    "k\npipetask:\n  x:\n    requestMemory: 1", "$HOME", "${x}", "#comment", "a b\tc", "\r\x1b[2J",
    "*/ println 'PWNED-3' /*", "p\u2029q", "\ufeffbom", "del\x7f", "\x1b[31mred", "q'''", 'q"""',
    "CATEGORY=other\nMEMORY=1", "unicodé_ñame", "x.y-z+1@host,a:b", "odd name", " lead", "trail ",
]
PIECES = ["'", '"', "\\", "\n", "\r", "\t", "\x1b", "\x07", "\x85", "\u2028", "\u2029", "\ufeff", "$",
          "{", "}", "#", ":", " ", "//", "/*", "*/", "\\u000a", "\\n", "a", "B", "_", "-", ".", "é", "\x7f",
          "&", "*", "!", "|", ">", "%", "@", "`", "${x}", "[", "]", ",", "=", "requestMemory: 9"]


def names():
    rng = random.Random(55)
    out = list(ATTACKS)
    while len(out) < len(ATTACKS) + 60:
        n = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8)))
        if n not in out and n.strip():
            out.append(n)
    return out


def run(args, **kw):
    return subprocess.run(args, capture_output=True, **kw)


def write_inputs(tmp, all_names):
    """One summary file per name (through a directory whose name holds a
    line break) and one with a category that is not UTF-8."""
    d = os.path.join(tmp, "in\nput // x")
    os.makedirs(d)
    for i, n in enumerate(all_names):
        s = {"command": "x", "category": n, "exit_status": 0, "exit_type": "normal",
             "start": [1700000000 + i, "s"], "end": [1700000010 + i, "s"], "wall_time": [10 + i, "s"],
             "cpu_time": [15 + i, "s"], "memory": [100 + i, "MB"], "cores": [1.5, "cores"],
             "disk": [5, "MB"]}
        with open(os.path.join(d, "t%03d.summary" % i), "w") as f:
            json.dump(s, f)
    # JSON must be UTF-8, a Nextflow trace is bytes: the name that is not
    # UTF-8 comes in a trace
    trace = (b"task_id\thash\tnative_id\tname\tstatus\texit\tsubmit\tduration\trealtime\t%cpu\t"
             b"peak_rss\tcpus\tmemory\tprocess\n"
             b"1\taa/0001\t1\tbad (1)\tCOMPLETED\t0\t2020-03-26 13:32:23.000\t30s\t30s\t95.0%\t"
             b"300 MB\t1\t2 GB\tbad\xff\xfe\n")
    with open(os.path.join(d, "zz_trace.txt"), "wb") as f:
        f.write(trace)
    return d


def settings(d, system):
    """What `advise --replay SYSTEM` says the file holds, per category."""
    return {c["category"]: c for c in json.loads(run(
        [TL, "advise", "-q", "--replay", system, "--format", "json", d], check=True).stdout)["categories"]}


def advise(d):
    adv = {}
    for c in json.loads(run([TL, "advise", "-q", "--format", "json", d], check=True).stdout)["categories"]:
        adv[c["category"]] = c["resources"]
    return adv


def mb(v):
    return int(-(-v // MIB)) if v % MIB else int(v / MIB)


def emit(system, d, tmp):
    out = os.path.join(tmp, "emitted." + system)
    r = run([TL, "advise", "--emit", system, "-o", out, d])
    text = open(out, "rb").read() if os.path.exists(out) else b""
    return r, text


def stderr_clean(system, r):
    err = r.stderr
    check(b"\x1b" not in err and b"\x07" not in err and err.count(b"\n") <= 2,
          "%s: stderr holds no control character from a name (%r)" % (system, err[-200:]))


def bps(d, tmp, want, adv):
    r, text = emit("bps", d, tmp)
    doc = yaml.safe_load(text.decode("utf-8"))
    check(set(doc) == {"pipetask"}, "bps: PyYAML sees one top-level key, pipetask (%s)" % sorted(doc)[:5])
    got = doc.get("pipetask") or {}
    check(set(got) == set(want), "bps: the labels are exactly the %d UTF-8 names (extra %r, missing %r)"
          % (len(want), sorted(set(got) - set(want))[:3], sorted(set(want) - set(got))[:3]))
    st = settings(d, "bps")
    bad = [(n, got.get(n)) for n in want if n in got and got[n] != {
        "requestMemory": mb(st[n]["memory"]["first"]), "requestCpus": st[n]["cores"]}]
    check(not bad, "bps: each label's requestMemory and requestCpus are advise's (%r)" % bad[:2])
    check(r.returncode == 0 and b"left out" in r.stderr and b"bad\\xff\\xfe" in r.stderr,
          "bps: the name that is not UTF-8 is left out and said, in visible escapes (%r)" % r.stderr[-200:])
    stderr_clean("bps", r)


def wq(d, tmp, want, adv):
    r, text = emit("wq", d, tmp)
    doc = json.loads(text.decode("utf-8", "strict"))
    got = doc["categories"]
    check(set(got) == set(want), "wq: json reads exactly the %d UTF-8 names (extra %r, missing %r)"
          % (len(want), sorted(set(got) - set(want))[:3], sorted(set(want) - set(got))[:3]))
    st = settings(d, "wq")
    bad = [n for n in want if n in got and got[n]["first"]["memory"] != mb(st[n]["memory"]["first"])]
    check(not bad, "wq: each category's memory is advise's (%r)" % bad[:2])
    jx = shutil.which("jx2json")
    if jx:
        p = os.path.join(tmp, "wq.json")
        with open(p, "wb") as f:
            f.write(text)
        back = run([jx, p])
        # jx (cctools 9.9) prints non-ASCII bytes as \uffffffXX and ' as \': compare the
        # ASCII names
        ascii = {k: v for k, v in got.items() if k.isascii()}
        jxt = re.sub(r"\\uffffff[0-9a-f]{2}", "?", back.stdout.decode("utf-8")).replace("\\'", "'")
        jxd = json.loads(jxt) if back.returncode == 0 else {"categories": {}}
        check({k: v for k, v in jxd["categories"].items() if k in ascii} == ascii,
              "wq: cctools' jx2json reads the file, the same ASCII categories (%r)" % back.stderr[-200:])
    else:
        print("SKIP part: jx2json (Debian coop-computing-tools) is absent")
    stderr_clean("wq", r)


def makeflow(d, tmp, want):
    r, text = emit("makeflow", d, tmp)
    lines = text.decode("utf-8").split("\n")
    cats, stray = [], []
    for ln in lines:
        if not ln or ln.startswith("#"):
            continue
        m = re.fullmatch(r"(CATEGORY|CORES|MEMORY|DISK)=(.*)", ln)
        if not m:
            stray.append(ln)
        elif m.group(1) == "CATEGORY":
            cats.append(m.group(2))
    safe = {n for n in want if re.fullmatch(r"[A-Za-z0-9_.+@%,:-]([A-Za-z0-9_.+@%,: -]*[A-Za-z0-9_.+@%,:-])?", n)}
    check(not stray, "makeflow: every line outside comments is CATEGORY/CORES/MEMORY/DISK (%r)" % stray[:3])
    check(set(cats) == safe and len(cats) == len(safe),
          "makeflow: the categories are exactly the %d names Makeflow holds as written (%r)"
          % (len(safe), sorted(set(cats) ^ safe)[:3]))
    mf = shutil.which("makeflow_analyze")
    if mf:
        p = os.path.join(tmp, "w.makeflow")
        body = []
        for i, ln in enumerate(lines):
            body.append(ln)
            if ln.startswith("DISK=") or (ln.startswith(("CATEGORY=", "CORES=", "MEMORY=")) and
                                          (i + 1 >= len(lines) or not re.match(r"(CORES|MEMORY|DISK)=", lines[i + 1]))):
                body.append("out%d.txt:\n\ttouch out%d.txt\n" % (i, i))
        with open(p, "w") as f:
            f.write("\n".join(body))
        a = run([mf, "-k", p])
        check(a.returncode == 0 and b"Syntax OK" in a.stdout + a.stderr,
              "makeflow: makeflow_analyze says Syntax OK (%r)" % (a.stdout + a.stderr)[-300:])
    else:
        print("SKIP part: makeflow_analyze (Debian coop-computing-tools) is absent")
    stderr_clean("makeflow", r)


def nextflow(d, tmp, want):
    r, text = emit("nextflow", d, tmp)
    procs = {n for n in want if re.fullmatch(r"[A-Za-z_]\w*(:[A-Za-z_]\w*)*", n, re.ASCII)}
    jdir = nextflow_jars.jars(REPO)
    if jdir is None:
        return
    cfg = os.path.join(tmp, "emitted.nextflow")
    rc, parsed, out = nextflow_jars.read_config(jdir, tmp, cfg)
    if not check(rc == 0 and parsed, "nextflow: Nextflow's ConfigParser reads the config (%s)" % out[-300:]):
        return
    check("PWNED" not in out, "nextflow: nothing in the config ran (%s)" % out[-200:])
    check(parsed["other"] == [], "nextflow: only `process` with withName selectors (%r)" % parsed["other"][:3])
    got = parsed["selectors"]
    check(set(got) == procs, "nextflow: the selectors are exactly the %d process names (%r)"
          % (len(procs), sorted(set(got) ^ procs)[:3]))
    check(r.returncode == 0 and b"left out" in r.stderr, "nextflow: the other names are left out and said")
    stderr_clean("nextflow", r)


def snakemake(d, tmp, want):
    r, text = emit("snakemake", d, tmp)
    doc = yaml.safe_load(text.decode("utf-8")) or {}
    rules = {n for n in want if re.fullmatch(r"[A-Za-z_]\w*", n, re.ASCII)}
    check(set(doc) <= {"set-threads", "set-resources"}, "snakemake: only set-threads and set-resources (%r)"
          % sorted(doc)[:4])
    got = set(doc.get("set-threads", {})) | set(doc.get("set-resources", {}))
    check(got == rules, "snakemake: the rules are exactly the %d rule names (%r)" % (len(rules), sorted(got ^ rules)[:3]))
    stderr_clean("snakemake", r)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        all_names = names()
        d = write_inputs(tmp, all_names)
        adv = advise(d)
        want = set(all_names)
        check(want <= set(adv), "advise reads every hostile name as one category (%d of %d)"
              % (len(want & set(adv)), len(want)))
        bps(d, tmp, want, adv)
        wq(d, tmp, want, adv)
        makeflow(d, tmp, want)
        nextflow(d, tmp, want)
        snakemake(d, tmp, want)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
