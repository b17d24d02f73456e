"""docs/glossary.md's words, written once in Python from the table (not from
core/glossary.c), for the tests that compute each surface's figures on their
own: which attempts failed, which are counted apart, and why one failed."""

OK = frozenset({"SUCCESS", "Success", "NO_WORK", "exec_done", "memo_done", "COMPLETED", "CACHED"})
CANCELLED = frozenset({"CANCELED", "CANCELLED", "ABORTED", "TaskKilled"})
LIBRARY = "LIBRARY_EXIT"


def apart(result):
    """A library instance or a cancelled attempt: neither failed nor succeeded."""
    return result == LIBRARY or result in CANCELLED


def failed(result, exit_code):
    """The glossary's failed: a failure result, or a non-zero exit; never apart."""
    if apart(result):
        return False
    return (result is not None and result != "(none)" and result not in OK) or \
        (exit_code is not None and exit_code != 0)


def succeeded(result, exit_code):
    """Did its work: neither failed nor apart."""
    return not apart(result) and not failed(result, exit_code)


NAMED_CAUSES = {"MAX_WALL_TIME": "time_limit", "MAX_END_TIME": "time_limit", "FORSAKEN": "lost_worker",
                "REQUEUED": "lost_worker", "ExecutorLostFailure": "lost_worker",
                "INPUT_MISSING": "missing_input", "dep_fail": "missing_input",
                "ExceptionFailure": "task_error", "OUTPUT_MISSING": "task_error"}


def cause(r):
    """The cause of a failed attempt (a records row), None when it did not fail."""
    res, code = r.get("result"), r.get("exit_code")
    if not failed(res, code):
        return None
    if res == "RESOURCE_EXHAUSTION":
        for field, c in (("limit_memory_bytes", "memory"), ("limit_wall_time_s", "time_limit"),
                         ("limit_disk_bytes", "disk")):
            if r.get(field) is not None:
                return c
        return "unknown"
    if res in NAMED_CAUSES:
        return NAMED_CAUSES[res]
    if code == 137:
        return "memory"
    if code == 140:
        return "time_limit"
    if code == 143:
        limit = r.get("limit_wall_time_s") or r.get("req_wall_time_s")
        return "time_limit" if limit and (r.get("wall_time_s") or 0) >= 0.9 * limit else "task_error"
    return "task_error" if code is not None and code > 0 else "unknown"
