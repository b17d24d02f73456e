"""Shared by the Python integration tests: named checks that are all
reported (a failure does not hide the ones after it), and the closing line
CI reads ("N passed, N failed")."""
import json
import os
import subprocess
import sys

_failures = []
_passed = [0]


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if cond:
        _passed[0] += 1
    else:
        _failures.append(what)
    return cond


def fail(what):
    """A check that failed where it was found (the reason is the message)."""
    return check(False, what)


def ran():
    """How many checks ran (0: every part skipped -- the caller exits 77)."""
    return _passed[0] + len(_failures)


def resource_monitor(out, cmd, opts=(), tries=3):
    """Runs cctools' resource_monitor on cmd, writing out + ".summary"; the
    summary's text, or b"" when it wrote none that parses. Its run is
    bounded and tried again: resource_monitor (cctools 7.x) now and then
    misses the SIGCHLD of a child that ends at once (`true`, `exit 3`,
    `kill -9 $$`) and polls for ever beside a zombie (seen here, and a CI
    run lost 240 s to it), and under a loaded machine it may leave no
    summary. Its helper library goes to a private directory, not the
    caller's (it writes one into its working directory)."""
    path = out + ".summary"
    for _ in range(tries):
        try:
            subprocess.run(["resource_monitor"] + list(opts) + ["-O", out, "--"] + list(cmd),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60,
                           cwd=os.path.dirname(out) or ".")
        except subprocess.TimeoutExpired:
            print("note: resource_monitor hung on %s; trying again" % " ".join(cmd), flush=True)
            continue
        body = open(path, "rb").read() if os.path.exists(path) else b""
        try:
            json.loads(body.decode().replace("\\'", "'"))
            return body
        except ValueError:
            continue
    return b""


# A small process forks the command and reads its peak RSS (wait4): a child
# forked from the test itself would count what the test holds (inputs it
# made), since the peak survives exec.
_MEASURE = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
sys.stderr.write("\\nPEAK-KB %d\\n" % ru.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def peak_rss(args, env=None, timeout=300):
    """(exit status, stderr, peak RSS in bytes) of one run of args."""
    r = subprocess.run([sys.executable, "-c", _MEASURE] + list(args), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, errors="replace", timeout=timeout, env=env)
    err, _, peak = r.stderr.rpartition("\nPEAK-KB ")
    return r.returncode, err, int(peak.split()[0]) * 1024


def finish():
    print("%d checks passed, %d failed" % (_passed[0], len(_failures)))
    for f in _failures:
        print("  failed: " + f)
    return 1 if _failures else 0


if __name__ == "__main__":
    sys.exit("a helper module, not a test")
