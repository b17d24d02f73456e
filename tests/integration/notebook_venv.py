"""The analyst's Python (pandas, polars, msgpack from PyPI in a venv cached
in ~/.cache/tasklens/notebook-venv), for the tests that read what tasklens
writes as a notebook would."""
import os
import subprocess
import sys

VENV = os.path.expanduser("~/.cache/tasklens/notebook-venv")
PINS = ["pandas==2.2.3", "polars==1.17.1", "msgpack==1.1.0"]


def rerun_inside():
    """Re-runs the calling script under the notebook venv (made once): its
    exit status, 77 when the venv cannot be made; None when already in it."""
    py = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return None
    ok = os.path.exists(py) and subprocess.run(
        [py, "-c", "import pandas, polars, msgpack"], capture_output=True).returncode == 0
    if not ok:
        r = subprocess.run(["/usr/bin/python3", "-m", "venv", VENV], capture_output=True, text=True)
        if r.returncode == 0:
            r = subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q", *PINS],
                               capture_output=True, text=True)
        if r.returncode != 0:
            print("SKIP: pandas/polars could not be installed from PyPI into %s: %s"
                  % (VENV, r.stderr.strip()[-300:]))
            return 77
    return subprocess.run([py, *sys.argv]).returncode
