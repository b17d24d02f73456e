#!/usr/bin/env python3
"""Memory is bounded by what is decoded, not by the compressed size (issue
55 point 4): for every parser, a kilobyte-sized .gz or .zst that decodes to
32 MB shaped to cost the most (millions of tiny values, one endless line or
event) is read by `summary` within the parser's cap plus a small constant,
refused with a reason and counted, never with gigabytes.

Peak memory is the child's own maximum RSS (wait4). The caps are set low
(-O) so each bomb is well past them; the constant (48 MB) is the binary,
its libraries and its read buffers, measured at 6-20 MB on real inputs.

usage: bombs.py TASKLENS
"""
import gzip
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, peak_rss  # noqa: E402

TL = sys.argv[1]
SANITIZED = os.environ.get("TL_SANITIZED") == "1"
MB = 1 << 20
CONSTANT = 48 * MB
BIG = 32 * MB


def pickle_bomb():
    return b"\x80\x04]" + b"Na" * (BIG // 2) + b"."  # a list of 16 M Nones, one APPEND each


def dasf_bomb():
    n = 8 << 20  # one framed event: a map whose args are an array of n nils
    ev = b"\x81\xa4args\xdd" + struct.pack(">I", n) + b"\xc0" * n
    return struct.pack(">Q", len(ev)) + ev


def bombs():
    """(name, file name, bytes, parser, cap option, cap bytes)."""
    zeros = b"0," * (BIG // 2)
    return [
        ("LSST YAML", "task_metadata.yaml", b"quantum:\n  x: [" + zeros + b"0]\n", "lsst", "lsst.max_doc=16M", 16 * MB),
        ("LSST YAML, within max_doc", "calib_metadata.yaml", b"quantum:\n  x: [" + zeros[:12 * MB] + b"0]\n",
         "lsst", "lsst.max_doc=16M", 16 * MB),
        ("LSST JSON", "task_metadata.json", b'{"quantum": {"x": [' + zeros + b'0]}}', "lsst", "lsst.max_doc=64M", 64 * MB),
        ("line_profiler .lprof", "prof.lprof", pickle_bomb(), "lineprof", "lineprof.max_document=64M", 64 * MB),
        ("resource_monitor", "t.summary", b'{"command":"x","category":"c","memory":[' + zeros + b'0]}',
         "rmonitor", "rmonitor.max_document=64M", 64 * MB),
        ("Chrome trace, one endless event", "trace.json", b'[{"ph":"X","name":"' + b"a" * BIG + b'"}]',
         "chrome", "chrome.max_event=1M", 1 * MB),
        ("Spark, one endless line", "eventlog", b'{"Event":"SparkListenerTaskEnd","x":"' + b"a" * BIG + b'"}\n',
         "spark", "spark.max_line=1M", 1 * MB),
        ("Nextflow, one endless line", "trace.txt", b"task_id\thash\tname\n1\t" + b"a" * BIG + b"\n",
         "nextflow", "nextflow.max_line=1M", 1 * MB),
        ("Snakemake, one endless line", "bench.jsonl", b'{"s": "' + b"a" * BIG + b'"}\n',
         "snakemake", "snakemake.max_line=1M", 1 * MB),
        ("codecarbon, one endless line", "emissions.csv", b"timestamp,project_name\n" + b"a" * BIG + b"\n",
         "codecarbon", "codecarbon.max_line=1M", 1 * MB),
        ("DASF, one event of 8 M msgpack nils", "x-TracePlugin-h.msgpack", dasf_bomb(), "dasf",
         "dasf.max_event=16M", 16 * MB),
        ("Work Queue, one endless line", "tx.log", b"# time manager_pid MANAGER START\n" + b"1 " + b"a" * BIG + b"\n",
         "wq", "wq.max_line=1M", 1 * MB),
    ]


def compress(raw, path, codec):
    if codec == "gz":
        with open(path, "wb") as f:
            f.write(gzip.compress(raw, 9))
    else:
        subprocess.run(["zstd", "-q", "-19", "-f", "-o", path], input=raw, check=True)


def main():
    codecs = ["gz"] + (["zst"] if subprocess.run(["which", "zstd"], capture_output=True).returncode == 0 else [])
    with tempfile.TemporaryDirectory() as tmp:
        base_rc, _, base = peak_rss([TL, "summary", "-q", os.devnull])
        for i, (what, name, raw, parser, opt, cap) in enumerate(bombs()):
            codec = codecs[i % len(codecs)]
            path = os.path.join(tmp, "%d-%s.%s" % (i, name, codec))
            compress(raw, path, codec)
            size = os.path.getsize(path)
            rc, err, rss = peak_rss([TL, "summary", "--format-in", parser, "-O", opt, path])
            if SANITIZED:
                print("SKIP %s: peak RSS under a sanitizer (its shadow memory and quarantine)" % what)
            else:
                check(rss <= cap + CONSTANT, "%s: %.1f KB of .%s decoding to %d MB: peak %d MB, within the %d MB cap + "
                      "%d MB (%s)" % (what, size / 1024, codec, len(raw) // MB, rss // MB, cap // MB, CONSTANT // MB,
                                      err.strip().splitlines()[0][:160] if err.strip() else "no message"))
            within = "within" in what
            if not within:
                check("rejected" in err and rc != 139, "%s: refused with a reason and counted (exit %d)" % (what, rc))
        print("  (an empty input peaks at %d MB)" % (base // MB))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
