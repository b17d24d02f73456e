"""docs/advise.md's first allocation, retries and replay, written once in
Python from the manual (not from insights/allocate.c), over `tasklens records
-f ndjson` rows: the tests compare `advise --replay SYSTEM --format json` and
the emitted files with it."""
import math

import glossary_ref

GIB = 2 ** 30
MAX_RETRIES = 3
MAX_CANDIDATES = 128
KIND = {"wq": "to_max", "makeflow": "to_max", "nextflow": "times_attempt", "snakemake": "times_attempt",
        "bps": "doubling"}


def ok(r):
    """Did its work (cached ones in an earlier run: still evidence of need)."""
    return glossary_ref.succeeded(r.get("result"), r.get("exit_code"))


def this_run(r):
    return r.get("result") != "CACHED" and not glossary_ref.apart(r.get("result"))


def memory_death(r):
    return glossary_ref.cause(r) == "memory"


def need(r, col):
    """A task's need (its final row): a success's peak; a memory death's at
    least a byte over the limit it died at."""
    if ok(r):
        return r.get(col)
    if col != "max_rss_bytes" or not memory_death(r):
        return None
    lim = next((r[k] for k in ("limit_memory_bytes", "alloc_memory_bytes", "req_memory_bytes")
                if r.get(k) is not None), None)
    u = r.get(col)
    if lim is None:
        return u
    return u if u is not None and u > lim + 1 else lim + 1


def needs(rows, col):
    out = []
    for r in rows:
        if r.get("final") and need(r, col) is not None:
            out.append((need(r, col), r.get("wall_time_s") or 0))
    return sorted(out, key=lambda x: x[0])


def ask(kind, first, cover, k):
    if kind == "to_max":
        return first if k == 1 else cover
    if kind == "times_attempt":
        return first * k
    return first * 2 ** (k - 1)


def retries(kind, first, cover):
    if not cover > first * (1 + 1e-12):
        return 0
    if kind == "to_max":
        return 1
    if kind == "times_attempt":
        return math.ceil(cover / first - 1e-9) - 1
    return math.ceil(math.log2(cover / first) - 1e-9)


def cost(nd, kind, first, cover):
    """(GiB-hours, attempts, killed) of a rule over the needs."""
    R = retries(kind, first, cover)
    h = attempts = killed = 0
    for n, t in nd:
        k = 1
        while True:
            a = ask(kind, first, cover, k)
            attempts += 1
            h += a / GIB * t / 3600
            if n <= a:
                break
            killed += 1
            if k > R:
                break
            k += 1
    return h, attempts, killed


def roundup(v, g):
    return math.ceil(v / g - 1e-9) * g


def least_first(kind, cover, g):
    f = {"to_max": g, "times_attempt": cover / (MAX_RETRIES + 1), "doubling": cover / 2 ** MAX_RETRIES}[kind]
    return max(g, roundup(f, g))


def choose(nd, kind, g=256 * 2 ** 20, margin=1.2, by="min_waste", quantile_rec=None):
    """The manual's choice: cover, the first of each mode, the chosen rule."""
    if not nd:
        return None
    cover = max(g, roundup(nd[-1][0] * margin, g))
    lo = least_first(kind, cover, g)
    cands = []
    for n, _ in nd:
        a = min(cover, max(lo, roundup(n, g)))
        if not cands or cands[-1] != a:
            cands.append(a)
    if cands[-1] != cover:
        cands.append(cover)
    if len(cands) > MAX_CANDIDATES:
        m = len(cands)
        cands = [cands[j * (m - 1) // (MAX_CANDIDATES - 1)] for j in range(MAX_CANDIDATES)]
    best, mw, best_t, mt = math.inf, None, -1, None
    for a in cands:
        c = cost(nd, kind, a, cover)[0]
        if c < best * (1 - 1e-12):
            best, mw = c, a
        if kind == "to_max":
            t_all = sum(t for _, t in nd)
            over = [(n, t) for n, t in nd if n > a]
            den = t_all + sum(t for _, t in over)
            tp = ((len(nd) - len(over)) * cover / a + len(over)) / den if den > 0 else 0
            if tp > best_t * (1 + 1e-12):
                best_t, mt = tp, a
    first = mt if by == "max_throughput" and mt is not None else \
        quantile_rec if by == "quantile" and quantile_rec is not None else mw
    first = min(cover, max(lo, first))
    return {"first": first, "cover": cover, "retries": retries(kind, first, cover), "min_waste": mw,
            "max_throughput": mt, "expected": cost(nd, kind, first, cover), "tasks": len(nd)}


def time_limit(rows, margin=1.2):
    walls = sorted(r["wall_time_s"] for r in rows if ok(r) and r.get("wall_time_s") is not None)
    if not walls:
        return None
    return max(1, math.ceil(walls[-1] * margin / 60 - 1e-9)) * 60


GRACE = 0.25  # cctools' rmsummary_check_limits forgives a quarter core


def cores_used(r):
    """The monitor's peak cores, else CPU time / wall time (None: neither)."""
    if r.get("cores") is not None:
        return r["cores"]
    if r.get("cpu_time_s") is not None and (r.get("wall_time_s") or 0) > 0:
        return r["cpu_time_s"] / r["wall_time_s"]
    return None


def cores_max(rows, system, cores, margin=1.2):
    """Where the resource monitor kills above cores + GRACE (Work Queue,
    TaskVine, Makeflow), the maximum a retry asks for: the largest peak of a
    success x margin, less the grace, rounded up; else None."""
    if system not in ("wq", "makeflow") or cores is None:
        return None
    peaks = [cores_used(r) for r in rows if ok(r) and cores_used(r) is not None]
    return max(cores, math.ceil(max(peaks, default=0) * margin - GRACE - 1e-9))


def alloc(r, what):
    for k in ("alloc_" + what, "req_" + what):
        if r.get(k) is not None:
            return r[k]
    return None


def replay(rows, system, cores, mem, disk, time_s, cmax=None):
    """Before and after, as `advise --replay` counts them; mem/disk: the
    choices (None: left to the system)."""
    kind = KIND[system]
    before = {"attempts": 0, "killed": 0, "failed": 0, "allocated_core_hours": 0.0, "allocated_gib_hours": 0.0, "nc": 0, "nm": 0}
    after = dict(before)
    lost = tasks = succeeded = cores_kills = 0

    def charge(s, c, m, held):
        if c is None:
            s["nc"] += 1
        else:
            s["allocated_core_hours"] += c * held / 3600
        if m is None:
            s["nm"] += 1
        else:
            s["allocated_gib_hours"] += m / GIB * held / 3600

    for r in rows:
        if not this_run(r):
            continue
        wall = r.get("wall_time_s") or 0
        before["attempts"] += 1
        before["killed"] += memory_death(r) or glossary_ref.cause(r) == "time_limit" or \
            r.get("result") == "RESOURCE_EXHAUSTION"
        before["failed"] += bool(r.get("final") and glossary_ref.failed(r.get("result"), r.get("exit_code")))
        charge(before, alloc(r, "cores"), alloc(r, "memory_bytes"), wall)
        if not r.get("final"):
            continue
        tasks += 1
        good = ok(r)
        succeeded += good
        nm, nd = need(r, "max_rss_bytes"), need(r, "disk_bytes")
        replayable = good or (memory_death(r) and nm is not None)
        nc = cores_used(r)
        R = max(mem["retries"] if mem else 0, disk["retries"] if disk else 0)
        if cmax is not None and cmax > cores:
            R = max(R, 1)
        k = 1
        while True:
            m = ask(kind, mem["first"], mem["cover"], k) if mem else alloc(r, "memory_bytes")
            d = ask(kind, disk["first"], disk["cover"], k) if disk else alloc(r, "disk_bytes")
            over_time = good and time_s is not None and wall > time_s
            c = alloc(r, "cores") if cores is None else cmax if k > 1 and cmax is not None else cores
            over = (nm is not None and m is not None and nm > m) or (nd is not None and d is not None and nd > d)
            over_cores = cmax is not None and nc is not None and nc > c + GRACE
            cores_kills += bool(over_cores and not over and replayable)
            over = over or over_cores
            after["attempts"] += 1
            charge(after, c, m, time_s if over_time else wall)
            if not replayable:
                after["failed"] += 1
                after["killed"] += memory_death(r) or glossary_ref.cause(r) == "time_limit"
                break
            if not over and not over_time:
                break
            after["killed"] += 1
            if over_time or k > R:
                after["failed"] += 1
                lost += good
                break
            k += 1
    for s in (before, after):
        if s["nc"] == s["attempts"]:
            s["allocated_core_hours"] = None
        if s["nm"] == s["attempts"]:
            s["allocated_gib_hours"] = None
    return {"tasks": tasks, "succeeded": succeeded, "successes_lost": lost, "cores_kills": cores_kills, "observed": before,
            "replayed": after}


def ranks(v):
    """1-based ranks, ties averaged."""
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and v[order[j]] == v[order[i]]:
            j += 1
        for k in range(i, j):
            r[order[k]] = (i + 1 + j) / 2
        i = j
    return r


def input_scaling(rows, col):
    """(tasks, Spearman's rho of the need against bytes read), rho None
    below 10 tasks or when a side is constant."""
    pairs = [(r["bytes_read"], r[col]) for r in rows
             if r.get("final") and ok(r) and r.get(col) is not None and r.get("bytes_read") is not None]
    if len(pairs) < 10:
        return len(pairs), None
    rx, ry = ranks([p[0] for p in pairs]), ranks([p[1] for p in pairs])
    m = (len(pairs) + 1) / 2
    sxy = sum((a - m) * (b - m) for a, b in zip(rx, ry))
    sxx, syy = sum((a - m) ** 2 for a in rx), sum((b - m) ** 2 for b in ry)
    return len(pairs), (sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None)
