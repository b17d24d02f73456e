#!/usr/bin/env python3
"""An independent computation of `tasklens path` (docs/path.md) from the
task attempts `tasklens records -f ndjson` writes and, where the input
records them, the dependencies (task id -> ids it waited for): plain
Python, written from the manual, not from the C.

usage (library): runs = path_ref.analyze(records, deps_by_run, faster=2, whatifs=5, stragglers=10)
"""
import bisect
import collections
import heapq
import math


class Task:
    __slots__ = ("idx", "id", "wf", "cat", "worker", "submit", "launch", "start", "end", "held", "attempts",
                 "final_seen", "deps", "submitted")


def times(r, base):
    """Seconds after base (the epoch times are read as Decimals: a
    difference keeps every digit the record has)."""
    end = float(r["end_epoch_s"] - base)
    start = r.get("start_epoch_s")
    start = float(start - base) if start is not None else None
    if start is None:
        start = end - float(r["wall_time_s"]) if r.get("wall_time_s") is not None else end
    q = r.get("queue_time_s")
    return (start - float(q) if q is not None else start), start, end


def tasks_of(records, untimed_end=None):
    """One Task per (workflow, task id), attempts folded: the counted
    attempt is the final one, else the one that ended last. A record whose
    end is untimed_end (the file's modification time, which `records`
    writes for an attempt whose input records no time) has no time."""
    tasks, by_key, base = [], {}, None
    for r in records:
        if r.get("end_epoch_s") is None or r.get("result") == "CACHED":
            continue
        if r.get("start_epoch_s") is None and untimed_end is not None and r["end_epoch_s"] == untimed_end:
            continue
        base = r["end_epoch_s"] if base is None else base
        key = (r.get("workflow"), r.get("task_id"))
        t = by_key.get(key) if r.get("task_id") is not None else None
        if t is None:
            t = Task()
            t.idx, t.id, t.wf, t.cat, t.worker = len(tasks), r.get("task_id"), r.get("workflow") or "", None, None
            t.submit, t.end, t.held, t.attempts, t.final_seen, t.deps = math.inf, -math.inf, 0.0, 0, False, []
            t.submitted = False
            tasks.append(t)
            if r.get("task_id") is not None:
                by_key[key] = t
        submit, start, end = times(r, base)
        t.submitted |= r.get("queue_time_s") is not None
        t.attempts += 1
        t.held += end - start
        t.submit = min(t.submit, submit)
        if r.get("final") or (not t.final_seen and end >= t.end):
            t.launch, t.start, t.end = submit, start, end
            t.final_seen |= bool(r.get("final"))
            t.cat = r.get("category") or "(none)"
            if r.get("worker"):
                t.worker = r["worker"]
        if t.cat is None:
            t.cat = r.get("category") or "(none)"
        if t.worker is None and r.get("worker"):
            t.worker = r["worker"]
    return tasks


def before(a, b):
    return (a.end, a.idx) < (b.end, b.idx)


class Ends:
    """The run's tasks by (end, idx), all and per worker, to find the one
    that ended last by a time (bisect: a trace has 10^5 tasks)."""

    def __init__(self, run):
        self.lists = {}
        for u in sorted(run, key=lambda u: (u.end, u.idx)):
            for k in (None, ("w", u.worker)):
                self.lists.setdefault(k, []).append(u)
        self.keys = {k: [(u.end, u.idx) for u in v] for k, v in self.lists.items()}

    def last(self, t):
        """The task u ended last with u.end <= t.start and (u.end, u.idx) <
        (t.end, t.idx), on t's worker when it has one."""
        k = None if t.worker is None else ("w", t.worker)
        keys = self.keys.get(k, [])
        limit = (t.start, math.inf) if t.start < t.end else (t.end, t.idx - 0.5)
        i = bisect.bisect_right(keys, limit) - 1
        return self.lists[k][i] if i >= 0 else None


def predecessor(t, ends, by_id):
    deps = [by_id[d] for d in t.deps if d in by_id and by_id[d] is not t]
    ok = [d for d in deps if before(d, t)]
    if ok:
        return max(ok, key=lambda d: (d.end, d.idx))
    return ends.last(t)


def tiles(t, p):
    def bound(x, b):
        return b if not (x > b) else min(x, t.end)
    b0 = min(p, t.end)
    b1 = bound(t.submit, b0)
    b2 = bound(t.launch, b1)
    b3 = bound(t.start, b2)
    return {"deps_s": b1 - b0, "retries_s": b2 - b1, "queue_s": b3 - b2, "compute_s": t.end - b3}


def topo(run, by_id):
    indeg = {t.idx: 0 for t in run}
    succ = {t.idx: [] for t in run}
    for t in run:
        for d in t.deps:
            u = by_id.get(d)
            if u is not None and u is not t:
                indeg[t.idx] += 1
                succ[u.idx].append(t)
    order, queue = [], collections.deque(t for t in run if indeg[t.idx] == 0)
    left = dict(indeg)
    while queue:
        t = queue.popleft()
        order.append(t)
        for s in succ[t.idx]:
            left[s.idx] -= 1
            if left[s.idx] == 0:
                queue.append(s)
    return order, indeg, succ


def bound(order, by_id, cat=None, f=1.0):
    ef = {}
    for t in order:
        deps = [ef[by_id[d].idx] for d in t.deps if d in by_id and by_id[d] is not t]
        es = max(deps) if deps else t.submit
        ef[t.idx] = es + (t.held / f if t.cat == cat else t.held)
    return ef


def slacks(order, succ, ef, end):
    ls, slack = {}, {}
    for t in reversed(order):
        lf = min([ls[s.idx] for s in succ[t.idx]] + [end])
        ls[t.idx] = lf - t.held
        s = ls[t.idx] - (ef[t.idx] - t.held)
        slack[t.idx] = s if s > 1e-9 * max(1, abs(lf)) else 0.0
    return slack


def slot_arrivals(run):
    starts, ends = sorted(t.start for t in run), sorted(t.end for t in run)
    arrive, e = [], 0
    for s_i, s in enumerate(starts):
        while e < len(ends) and ends[e] <= s:
            e += 1
        if s_i + 1 - e > len(arrive):
            arrive.append(s)
    return arrive or [starts[0]]


def replay(run, indeg, succ, arrive, slots, t0, cat=None, f=1.0):
    left = dict(indeg)
    pending = [(t.submit, t.idx, t) for t in run if indeg[t.idx] == 0]
    heapq.heapify(pending)
    running = [(arrive[min(k, len(arrive) - 1)], -1, None) for k in range(slots)]
    heapq.heapify(running)
    ready, now, last, free = [], t0, t0, 0
    while True:
        while pending and pending[0][0] <= now:
            _, i, t = heapq.heappop(pending)
            heapq.heappush(ready, (t.start, t.idx, t))
        while free and ready:
            _, i, t = heapq.heappop(ready)
            heapq.heappush(running, (now + (t.held / f if t.cat == cat else t.held), t.idx, t))
            free -= 1
        if not running and not pending:
            return last - t0
        now = min(running[0][0] if running else math.inf, pending[0][0] if pending else math.inf)
        while running and running[0][0] <= now:
            _, i, t = heapq.heappop(running)
            free += 1
            if t is None:
                continue
            last = max(last, now)
            for s in succ[t.idx]:
                left[s.idx] -= 1
                if left[s.idx] == 0:
                    heapq.heappush(ready, (s.start, s.idx, s))


def quantile(v, q):
    """Linear interpolation (pandas' default), from the nearer of the two
    values (numpy's lerp)."""
    h = (len(v) - 1) * q
    lo = math.floor(h)
    if lo >= len(v) - 1:
        return v[-1]
    t, a, b = h - lo, v[lo], v[lo + 1]
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


def max_at_once(run):
    return len(slot_arrivals(run))


def waves(run, nstrag):
    out, strag, by_cat = [], [], {}
    for t in run:
        by_cat.setdefault(t.cat, []).append(t)
    for cat in sorted(by_cat, key=lambda s: s.encode()):
        ts = by_cat[cat]
        slots = max_at_once(ts)
        run_s = sorted(t.end - t.start for t in ts)
        w = {"category": cat, "tasks": len(ts), "slots": slots, "waves": len(ts) / slots,
             "last_wave": (len(ts) % slots) / slots if len(ts) % slots else 1.0,
             "median_running_s": quantile(run_s, 0.5), "straggler_above_s": None, "stragglers": 0}
        if len(ts) >= 4:
            fence = quantile(run_s, 0.75) + 1.5 * (quantile(run_s, 0.75) - quantile(run_s, 0.25))
            w["straggler_above_s"] = fence
            for t in ts:
                if t.end - t.start > fence:
                    w["stragglers"] += 1
                    med = w["median_running_s"]
                    strag.append((-(t.end - t.start) / med if med > 0 else -math.inf, t.idx, t))
        out.append(w)
    strag.sort(key=lambda x: (x[0], x[1]))
    return out, [t for _, _, t in strag[:nstrag]]


def analyze_run(run, faster, nwhatifs, nstrag):
    by_id = {t.id: t for t in run if t.id is not None}
    t0 = min(min(t.submit, t.start) for t in run)
    t1 = max(t.end for t in run)
    cur, steps, ends = max(run, key=lambda t: (t.end, t.idx)), [], Ends(run)
    while cur is not None and len(steps) < len(run):
        steps.append(cur)
        cur = predecessor(cur, ends, by_id)
    steps.reverse()
    order, indeg, succ = topo(run, by_id)
    ef = bound(order, by_id)
    end = max(ef.values())
    slack = slacks(order, succ, ef, end)
    path = []
    for i, t in enumerate(steps):
        p = tiles(t, steps[i - 1].end if i else t0)
        p.update(task_id=t.id, category=t.cat, slack_s=slack.get(t.idx))
        path.append(p)
    cats = {}
    for p in path:
        c = cats.setdefault(p["category"], {"category": p["category"], "steps": 0, "deps_s": 0.0, "retries_s": 0.0,
                                            "queue_s": 0.0, "compute_s": 0.0})
        c["steps"] += 1
        for k in ("deps_s", "retries_s", "queue_s", "compute_s"):
            c[k] += p[k]
    arrive = slot_arrivals(run)
    slots = len(arrive)
    whatif = [{"slots": slots + 1, "replay_s": replay(run, indeg, succ, arrive, slots + 1, t0), "cpm_s": end - t0}]
    ranked = sorted(cats.values(), key=lambda c: (-(c["deps_s"] + c["retries_s"] + c["queue_s"] + c["compute_s"]),
                                                  c["category"].encode()))
    for c in ranked[:nwhatifs]:
        ef2 = bound(order, by_id, c["category"], faster)
        whatif.append({"category": c["category"], "faster": faster, "cpm_s": max(ef2.values()) - t0,
                       "replay_s": replay(run, indeg, succ, arrive, slots, t0, c["category"], faster)})
    wv, strag = waves(run, nstrag)
    return {"workflow": run[0].wf, "makespan_s": t1 - t0, "tasks": len(run), "path": path,
            "by_category": ranked, "bound": {"cpm_s": end - t0, "zero_slack_tasks": sum(s == 0 for s in slack.values()),
                                             "tasks_in_cycles": len(run) - len(order)},
            "replay": {"slots": slots, "makespan_s": replay(run, indeg, succ, arrive, slots, t0)},
            "what_if": whatif, "waves": wv, "stragglers": [{"task_id": t.id, "category": t.cat} for t in strag]}


def analyze(records, deps_by_run=None, faster=2.0, whatifs=5, stragglers=10, untimed_end=None, flows=False):
    """flows: the dependencies are Chrome flows (each submitted its dependent)."""
    tasks = tasks_of(records, untimed_end)
    for t in tasks:
        t.deps = (deps_by_run or {}).get(t.wf, {}).get(t.id, [])
    by_run = {}
    for t in tasks:
        if t.id is not None:
            by_run.setdefault(t.wf, {})[t.id] = t
    for t in tasks:  # flows submitted it: without a recorded submission, when the last flow source ended
        ends = [by_run[t.wf][d].end for d in t.deps if d in by_run.get(t.wf, {}) and by_run[t.wf][d] is not t]
        if flows and t.deps and not t.submitted and ends and max(ends) < t.submit:
            t.submit = max(ends)
            if t.attempts == 1:
                t.launch = t.submit
    runs = {}
    for t in tasks:
        runs.setdefault(t.wf, []).append(t)
    return [analyze_run(runs[w], faster, whatifs, stragglers) for w in sorted(runs, key=lambda s: s.encode())]
