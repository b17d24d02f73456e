"""Shared by the Python integration tests: named checks that are all
reported (a failure does not hide the ones after it), and the closing line
CI reads ("N passed, N failed")."""
import sys

_failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        _failures.append(what)
    return cond


def finish():
    print("%d passed, %d failed" % (0 if _failures else 1, 1 if _failures else 0))
    return 1 if _failures else 0


if __name__ == "__main__":
    sys.exit("a helper module, not a test")
