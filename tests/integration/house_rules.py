#!/usr/bin/env python3
"""The house rules of ARCHITECTURE.md that a reader checks by eye, checked
here so they hold (issue 41 points 3-5):

1. Includes name their room: every quoted include in the rooms is
   "room/file.h" (a same-named header in two rooms cannot collide), or a
   header beside the test or benchmark that includes it.
2. No include cycle between project headers.
3. No .c file of a room over 1,000 lines (issue 60; it was 1,200) (split by layer with a private
   header, as parsers/wq/ is).
4. No function over 100 lines, but the hot loops named below (one pass over
   the bytes each: splitting them costs the speed they exist for).
5. Library rooms never print (issue 60): core, ingest, parsers, sinks and
   insights call no printf, puts, perror, tl_eprintf nor write to stdout or
   stderr; they hand the text to their caller (a parser's open fills err, a
   directory listing keeps what it could not read) or speak through a
   handle whose default core/log.c decides (tl_log, tl_say_line). core/term.c
   and core/log.c are those writers.
6. No build output is tracked (CTest's Testing/, objects, shared libraries,
   a build directory), and .gitignore keeps it so.
7. A sink's folder is its own (issue 60): nothing outside sinks/influx/ or
   sinks/prom/ includes their headers, and the network engine (sinks/net/)
   names no store: the wire formats are const structs in their sinks'
   folders (sinks/net/wire.h), not a version the engine branches on; the
   settings every network sink has are declared once (TL_NET_OPTIONS in
   sinks/net/netsink.h), not restated in a sink's option table.
8. The engine reads no format (issue 60 point 2): sinks/net/ counts and
   cuts batches through the wire's codec (sinks/codec.h), and neither
   includes the line-protocol encoder nor calls it; a sink's own rewrite of
   its bytes (the influxdb sink's VictoriaMetrics dialect) is its hook.
9. Each source's settings are its own (issue 60 point 3): struct
   src_settings (pipeline/run_config.h) holds the type, the type's own
   config and where it was declared, nothing of any one type (Kafka's
   brokers, a file's rotation), as a sink's entry holds its type's config.
10. Counters come in one form (issue 60 point 3): parsers, sources and
   sinks each hand theirs on through a `counters` callback filling struct
   tl_counter (core/counter.h). (A parser's `stats` -- lines, records,
   rejects by reason -- is the fixed struct every parser keeps for the
   drive, checkpoints and reject reports, read by field, not a list.)

(The layering itself -- which room may include which -- is the compiler's:
each room compiles against a view of the tree holding only the rooms it may
include, CMakeLists.txt's TL_ROOMS_*.)

usage: house_rules.py REPO_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

ROOMS = ["core", "ingest", "parsers", "sinks", "pipeline", "insights", "report", "cli"]
MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 100
HOT_LOOPS = {
    "chrome_feed": "the Chrome container scanner: every byte of a trace",
    "tl_lp_task": "the task point encoder: every record `run` and `lines` write",
    "scan_resources": "the Work Queue resources scanner: every task line",
}
LIBRARY_ROOMS = ["core", "ingest", "parsers", "sinks", "insights"]
WRITERS = {"core/term.c", "core/log.c"}
PRINTS = re.compile(r"\b(printf|tl_eprintf|perror|puts|vprintf)\s*\(|"
                    r"\b(fprintf|fputs|fputc|fwrite|vfprintf)\s*\([^;]*\bstd(err|out)\b|\bwrite\s*\(\s*[12]\s*,")
BUILD_OUTPUT = re.compile(r"(^|/)(Testing|build[^/]*|CMakeFiles|__pycache__)/|\.(o|a|so|pyc)$|\.so\.|"
                          r"(^|/)compile_commands\.json$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
FUNCTION = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:__attribute__\(\([^)]*\)\)\s*)?"
                      r"(?:const\s+)?(?:struct\s+|enum\s+)?\w+[\s*]+(\w+)\s*\([^;]*$")


def sources(repo):
    out = subprocess.run(["git", "-C", repo, "ls-files", "--cached", "--others", "--exclude-standard",
                          "*.c", "*.h"], capture_output=True, text=True).stdout.split()
    return [f for f in out if os.path.exists(os.path.join(repo, f))]


def functions(text):
    """(name, lines) of each function defined at the top level."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FUNCTION.match(lines[i])
        if m and not lines[i].startswith((" ", "\t", "#", "/", "}")) and "=" not in lines[i]:
            j = i
            while j < len(lines) and not lines[j].startswith("{") and not lines[j].rstrip().endswith(";"):
                j += 1
            if j < len(lines) and lines[j].startswith("{"):
                k = j + 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                yield m.group(1), k - i + 1
                i = k
        i += 1


def main():
    repo = sys.argv[1]
    files = sources(repo)
    check(len(files) > 100, "%d C files read" % len(files))
    unnamed, graph = [], {}
    for f in files:
        text = open(os.path.join(repo, f), encoding="utf-8", errors="replace").read()
        top = f.split("/")[0]
        deps = []
        for inc in INCLUDE.findall(text):
            if inc.split("/")[0] in ROOMS and os.path.exists(os.path.join(repo, inc)):
                deps.append(inc)
            elif top not in ROOMS and os.path.exists(os.path.join(repo, os.path.dirname(f), inc)):
                pass  # a test's or benchmark's own helper header
            else:
                unnamed.append("%s: %s" % (f, inc))
        if f.endswith(".h"):
            graph[f] = deps
    check(not unnamed, "includes name their room (%s)" % unnamed[:5])

    cycles = []
    state = {}

    def visit(h, path):
        state[h] = 1
        for d in graph.get(h, []):
            if state.get(d) == 1:
                cycles.append(" -> ".join(path[path.index(d):] + [d]) if d in path else d)
            elif not state.get(d):
                visit(d, path + [d])
        state[h] = 2

    for h in graph:
        if not state.get(h):
            visit(h, [h])
    check(not cycles, "no include cycle between headers (%s)" % cycles[:3])

    big, long_fns = [], []
    for f in files:
        if f.split("/")[0] not in ROOMS or not f.endswith(".c"):
            continue
        text = open(os.path.join(repo, f), encoding="utf-8", errors="replace").read()
        n = text.count("\n")
        if n > MAX_FILE_LINES:
            big.append("%s (%d)" % (f, n))
        for name, n in functions(text):
            if n > MAX_FUNCTION_LINES and name not in HOT_LOOPS:
                long_fns.append("%s:%s (%d)" % (f, name, n))
    check(not big, "no .c file over %d lines (%s)" % (MAX_FILE_LINES, big))
    prints = []
    for f in files:
        if f.split("/")[0] not in LIBRARY_ROOMS or not f.endswith(".c") or f in WRITERS:
            continue
        for n, line in enumerate(open(os.path.join(repo, f), encoding="utf-8", errors="replace"), 1):
            code = line.split("//")[0]
            if PRINTS.search(code) and not code.lstrip().startswith(("*", "/*")):
                prints.append("%s:%d" % (f, n))
    check(not prints, "library rooms (%s) never print: they hand text to their caller (%s)"
          % (", ".join(LIBRARY_ROOMS), prints[:5]))
    sink_dirs = sorted(d for d in os.listdir(os.path.join(repo, "sinks"))
                       if os.path.isdir(os.path.join(repo, "sinks", d)) and d != "net")
    crossing, named, reads = [], [], []
    for f in files:
        text = open(os.path.join(repo, f), encoding="utf-8", errors="replace").read()
        for inc in INCLUDE.findall(text):
            parts = inc.split("/")
            if len(parts) == 3 and parts[0] == "sinks" and parts[1] in sink_dirs and \
                    not f.startswith("sinks/%s/" % parts[1]):
                crossing.append("%s: %s" % (f, inc))
        if f.startswith("sinks/") and f.split("/")[1] in sink_dirs and \
                re.search(r'\{"(spool_dir|spool_max|batch_lines|timeout|ca_file|insecure)",', text):
            named.append(f + " (restates a network setting)")
        if f.startswith("sinks/net/") and f.endswith(".c"):
            code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
            if re.search(r"\bversion\b|influx[12]|remote_write|TL_WIRE_", code):
                named.append(f)
        if f.startswith("sinks/net/") and ("sinks/lineproto.h" in INCLUDE.findall(text) or
                                          re.search(r"\btl_lp_\w+\s*\(", re.sub(r"/\*.*?\*/", "", text, flags=re.S))):
            reads.append(f)
    check(not crossing, "nothing outside a sink's folder includes its headers (%s)" % crossing[:5])
    check(not named, "the network engine names no store nor version; sinks restate none of its settings (%s)"
          % named)
    check(not reads, "the network engine reads no format: it neither includes nor calls the line-protocol "
          "encoder (%s)" % reads)
    text = open(os.path.join(repo, "pipeline", "run_config.h"), encoding="utf-8").read()
    body = re.search(r"struct src_settings \{(.*?)\};", text, re.S)
    members = re.findall(r"(\w+)\s*;", re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S)) if body else []
    check(body and sorted(members) == ["config", "line", "type"],
          "a source entry holds its type, its type's own config and its line, no type's settings (%s)" % members)
    forms = {}
    for h in ("parsers/parser.h", "pipeline/source.h", "sinks/sink.h"):
        code = re.sub(r"/\*.*?\*/", "", open(os.path.join(repo, h), encoding="utf-8").read(), flags=re.S)
        forms[h] = (re.findall(r"\(\*counters\)\(([^)]*)\)", code),
                    [f for f in re.findall(r"\(\*(stats|totals)\)\(([^)]*)\)", code)
                     if "tl_parse_stats" not in code.split("(*%s)" % f[0])[0].rsplit(";", 1)[-1]])
    one_form = all(len(c) == 1 and "struct tl_counter *out" in c[0] and not other for c, other in forms.values())
    check(one_form, "parsers, sources and sinks hand their counters on in one form, struct tl_counter (%s)" % forms)
    tracked = subprocess.run(["git", "-C", repo, "ls-files"], capture_output=True, text=True).stdout.split("\n")
    built = [t for t in tracked if t and BUILD_OUTPUT.search(t)]
    check(not built, "no build output is tracked (%s)" % built[:5])
    check(not long_fns, "no function over %d lines but the hot loops %s (%s)"
          % (MAX_FUNCTION_LINES, sorted(HOT_LOOPS), long_fns))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
