"""Shared by the Python integration tests: named checks that are all
reported (a failure does not hide the ones after it), and the closing line
CI reads ("N passed, N failed")."""
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


def finish():
    print("%d checks passed, %d failed" % (_passed[0], len(_failures)))
    for f in _failures:
        print("  failed: " + f)
    return 1 if _failures else 0


if __name__ == "__main__":
    sys.exit("a helper module, not a test")
