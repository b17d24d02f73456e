#!/usr/bin/env python3
"""codecarbon's older emissions files (issue 56 point 8): the CSV writers of
codecarbon 0.1.0 (experiment_id first) and 1.0.0 / 1.2.0 (experiment_id
second, 12 columns), taken from their wheels on PyPI (cached in
~/.cache/tasklens/codecarbon-wheels) and run as they are (their
output.py: EmissionsData and FileOutput, stdlib csv), write
emissions.csv files; tasklens recognizes each without --format-in and reads
every row as codecarbon wrote it: project -> category, experiment_id ->
task key, duration -> wall_time_s, energy_consumed (kWh) x 3.6e6 ->
energy_j, emissions (kg).

usage: codecarbon_versions.py TASKLENS
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import types
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

TL = sys.argv[1]
CACHE = os.path.expanduser("~/.cache/tasklens/codecarbon-wheels")
VERSIONS = ["0.1.0", "1.0.0", "1.2.0"]


def wheel(version):
    os.makedirs(CACHE, exist_ok=True)
    for f in os.listdir(CACHE):
        if f.startswith("codecarbon-%s-" % version) and f.endswith(".whl"):
            return os.path.join(CACHE, f)
    r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "codecarbon==" + version,
                        "-d", CACHE], capture_output=True, text=True)
    if r.returncode:
        print("SKIP codecarbon %s: pip could not fetch it: %s" % (version, r.stderr.strip()[-200:]))
        return None
    return wheel(version)


def output_module(path):
    """codecarbon/output.py of the wheel, as a module (requests stubbed
    where absent: only its HTTP output uses it)."""
    if "requests" not in sys.modules:
        try:
            import requests  # noqa: F401
        except ImportError:
            sys.modules["requests"] = types.ModuleType("requests")
    src = zipfile.ZipFile(path).read("codecarbon/output.py").decode()
    spec = importlib.util.spec_from_loader("cc_output_%d" % abs(hash(path)), loader=None)
    mod = importlib.util.module_from_spec(spec)
    exec(compile(src, path + "/codecarbon/output.py", "exec"), mod.__dict__)
    return mod


def main():
    ran = 0
    with tempfile.TemporaryDirectory() as tmp:
        for v in VERSIONS:
            w = wheel(v)
            if not w:
                continue
            out = output_module(w)
            d = os.path.join(tmp, v)
            os.makedirs(d)
            path = os.path.join(d, "emissions.csv")
            rows = [dict(timestamp="2021-03-0%dT10:00:00" % (i + 1), experiment_id="exp-%s-%d" % (v, i),
                         project_name="proj %d, v%s" % (i, v), duration=120.5 + i, emissions=0.0012 * (i + 1),
                         energy_consumed=0.0035 * (i + 1), country_name="France", country_iso_code="FRA",
                         region="") for i in range(2)]
            for row in rows:
                out.FileOutput(path).out(out.EmissionsData(**row))
            header = open(path).readline().strip()
            r = subprocess.run([TL, "records", "-f", "ndjson", path], capture_output=True, text=True)
            got = [json.loads(x) for x in r.stdout.splitlines() if x]
            ran += 1
            if not check(len(got) == len(rows), "codecarbon %s (%s...): recognized, %d rows (%s)"
                         % (v, header[:40], len(got), r.stderr.strip()[-160:])):
                continue
            bad = []
            for g, w_ in zip(got, rows):
                if g["category"] != w_["project_name"] or g.get("task_key") != w_["experiment_id"] or \
                        abs(g["wall_time_s"] - w_["duration"]) > 1e-9 or \
                        abs(g["energy_j"] - w_["energy_consumed"] * 3.6e6) > 1e-6 or \
                        abs(g["emissions_kg"] - w_["emissions"]) > 1e-12:
                    bad.append((g, w_))
            check(not bad, "codecarbon %s: each row's project, experiment, duration, energy and emissions as "
                  "written (%r)" % (v, bad[:1]))
    if not ran:
        print("SKIP: no codecarbon wheel could be fetched")
        return 77
    return finish()


if __name__ == "__main__":
    sys.exit(main())
