/* Work Queue / TaskVine: the event state machine (see wq.c for the
 * design). One line in, through the cursor helpers and the resources
 * scanner; records out, when a task attempt's fate is known. */
#include "core/glossary.h"
#include "parsers/wq/scan.h"
#include "parsers/wq/wq_internal.h"

static const char *const task_state_names[] = {"WAITING", "RUNNING", "WAITING_RETRIEVAL",
                                               "RETRIEVED"};

/* ---------------------------------------------------------------- helpers */

void wq_reject(struct wq_state *st, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, st->stats.lines, why, detail);
}

void wq_reject_nomem(struct wq_state *st)
{
    st->nomem = true;
    wq_reject(st, TL_REJ_LIMIT, "out of memory");
}

void wq_reject_no_task(struct wq_state *st)
{
    if ((long long)st->open.n >= st->cfg.max_open_tasks)
        wq_reject(st, TL_REJ_LIMIT, "open task table full (max_open_tasks)");
    else wq_reject_nomem(st);
}


/* A line holding values no measurement has (negative, past the double
 * range): rejected, naming the first; what else it says is used. */
void wq_reject_bad_values(struct wq_state *st, const struct bad_value *bad)
{
    char num[TL_FMT_WIDE + 1], detail[128];
    if (isnan(bad->v)) snprintf(num, sizeof num, "not a number");
    else tl_fmt_double_wide(num, bad->v);
    int metric = wq_to_metric[bad->key];
    const char *name = metric >= 0 ? tl_metric_info[metric].name
                       : bad->key == K_WORKER_START ? "time_worker_start" : "time_worker_end";
    if (bad->n > 1) snprintf(detail, sizeof detail, "%s=%s and %u more", name, num, bad->n - 1);
    else snprintf(detail, sizeof detail, "%s=%s", name, num);
    wq_reject(st, TL_REJ_BAD_VALUE, detail);
}

void wq_emit(struct wq_state *st, struct tl_record *r)
{
    r->line = st->stats.lines;
    r->source = "wq";
    st->stats.records++;
    st->emit.record(st->emit.ctx, r);
}

/* A name's id; -1 when it could not be kept: past the names' bound
 * (max_names: the caller rejects the line), or out of memory (the input
 * then fails at its end, as its records lack the name). */
static int32_t intern(struct wq_state *st, const char *s, size_t n)
{
    int32_t id = tl_intern(st->names, s, n);
    if (id < 0 && !tl_intern_full(st->names, n)) st->nomem = true;
    return id;
}

int32_t wq_intern_span(struct wq_state *st, struct span s)
{
    return intern(st, s.p, s.n);
}

const char *wq_name_of(const struct wq_state *st, int32_t id)
{
    return id >= 0 ? tl_intern_str(st->names, id) : NULL;
}

/* No run could be made: past the names' bound (names_full), else out of
 * memory; wq_reject_no_run says which. */
static struct run *run_failed(struct wq_state *st, bool names_full)
{
    st->run_names_full = names_full;
    if (!names_full) st->nomem = true;
    return NULL;
}

void wq_reject_no_run(struct wq_state *st)
{
    if (st->run_names_full) wq_reject(st, TL_REJ_LIMIT, "too many runs or names");
    else wq_reject(st, TL_REJ_LIMIT, "out of memory");
}

static struct run *run_new(struct wq_state *st, int64_t pid, int64_t start_us)
{
    if (st->nruns == st->cap_runs) {
        size_t cap = st->cap_runs ? st->cap_runs * 2 : 4;
        struct run *r = realloc(st->runs, cap * sizeof *r);
        if (!r) return run_failed(st, false);
        st->runs = r;
        st->cap_runs = cap;
    }
    char name[64];
    time_t secs = (time_t)(start_us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    int n = snprintf(name, sizeof name, "%lld@%04d-%02d-%02dT%02d:%02d:%02dZ", (long long)pid,
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec);
    int32_t wf = tl_intern(st->names, name, (size_t)n);
    if (wf < 0) return run_failed(st, tl_intern_full(st->names, (size_t)n));
    struct run *r = &st->runs[st->nruns];
    memset(r, 0, sizeof *r);
    r->pid = pid;
    r->start_us = start_us;
    r->workflow = wf;
    if (!tl_map64_put(&st->pid_to_run, (uint64_t)pid, st->nruns)) return run_failed(st, false);
    st->nruns++;
    st->last_pid = pid;
    st->last_run = st->nruns;
    st->line_run = (uint32_t)st->nruns;
    st->line_ts = start_us;
    return r;
}

/* The run a line belongs to: the latest run of its pid, or a new one when
 * the log did not show this manager start (input joined mid-run). */
struct run *wq_run_for(struct wq_state *st, int64_t pid, int64_t ts)
{
    st->line_ts = ts;
    if (st->last_run && st->last_pid == pid) {
        st->line_run = (uint32_t)st->last_run;
        /* no need to clear `quiet`: it is set only at a START, which makes
         * the new run the last one, so a quiet run's next line comes here
         * through the lookup below */
        return &st->runs[st->last_run - 1];
    }
    uint64_t *idx = tl_map64_get(&st->pid_to_run, (uint64_t)pid);
    /* an index past the runs can only come from a damaged restored state
     * (fuzz_state found one that the restore's checks let through) */
    if (!idx || *idx >= st->nruns) return run_new(st, pid, ts);
    st->last_pid = pid;
    st->last_run = *idx + 1;
    st->line_run = (uint32_t)st->last_run;
    st->runs[*idx].quiet = false;
    return &st->runs[*idx];
}

/* Moves t to a new state, keeping its run's per-state counts. */
static void set_state(struct wq_state *st, struct task *t, enum task_state s)
{
    struct run *r = &st->runs[t->run];
    r->by_state[t->state]--;
    r->by_state[s]++;
    t->state = (uint8_t)s;
}

/* Host part of an interned "host:port" (memoized: RUNNING lines repeat it). */
int32_t wq_host_of_addr(struct wq_state *st, int32_t addr)
{
    uint64_t *h = tl_map64_get(&st->host_of, (uint64_t)addr);
    if (h) return (int32_t)*h;
    const char *s = tl_intern_str(st->names, addr);
    const char *colon = strrchr(s, ':');
    int32_t host = intern(st, s, colon ? (size_t)(colon - s) : strlen(s));
    if (host >= 0) tl_map64_put(&st->host_of, (uint64_t)addr, (uint64_t)host);
    return host;
}

static int32_t intern_result(struct wq_state *st, struct span r)
{
    if (st->last_result >= 0 && tl_intern_len(st->names, st->last_result) == r.n &&
        !memcmp(tl_intern_str(st->names, st->last_result), r.p, r.n))
        return st->last_result;
    return st->last_result = intern(st, r.p, r.n);
}

uint32_t wq_run_index(const struct wq_state *st, const struct run *r)
{
    return (uint32_t)(r - st->runs);
}

static inline uint64_t task_key(uint32_t run, int64_t id)
{
    return ((uint64_t)run << 32) | (uint32_t)id;
}

struct task *wq_task_find(struct wq_state *st, uint32_t run, int64_t id)
{
    uint64_t *ix = tl_map64_get(&st->open, task_key(run, id));
    return ix ? &st->tasks[*ix] : NULL;
}

struct task *wq_task_new(struct wq_state *st, uint32_t run, int64_t id)
{
    if ((long long)st->open.n >= st->cfg.max_open_tasks) return NULL;
    uint32_t ix;
    if (st->task_free) {
        ix = st->task_free - 1;
        st->task_free = st->tasks[ix].next_free;
    } else {
        if (st->ntasks_alloc == st->cap_tasks) {
            size_t cap = st->cap_tasks ? st->cap_tasks * 2 : 256;
            struct task *t = realloc(st->tasks, cap * sizeof *t);
            if (!t) return NULL;
            st->tasks = t;
            st->cap_tasks = cap;
        }
        ix = (uint32_t)st->ntasks_alloc++;
    }
    struct task *t = &st->tasks[ix];
    if (!tl_map64_put(&st->open, task_key(run, id), ix)) { /* the slot back, free */
        t->next_free = st->task_free;
        st->task_free = ix + 1;
        return NULL;
    }
    memset(t, 0, sizeof *t);
    t->run = run;
    t->id = id;
    t->category = t->worker = t->host = t->result = -1;
    st->runs[run].by_state[ST_WAITING]++; /* state 0 */
    return t;
}

static void measured_release(struct wq_state *st, struct task *t)
{
    if (!t->measured) return;
    st->meas[t->measured - 1].next_free = st->meas_free;
    st->meas_free = t->measured;
    t->measured = 0;
}

struct measured *wq_measured_get(struct wq_state *st, struct task *t)
{
    if (!t->measured) {
        uint32_t ix;
        if (st->meas_free) {
            ix = st->meas_free - 1;
            st->meas_free = st->meas[ix].next_free;
        } else {
            if (st->nmeas_alloc == st->cap_meas) {
                size_t cap = st->cap_meas ? st->cap_meas * 2 : 64;
                struct measured *m = realloc(st->meas, cap * sizeof *m);
                if (!m) return NULL;
                st->meas = m;
                st->cap_meas = cap;
            }
            ix = (uint32_t)st->nmeas_alloc++;
        }
        t->measured = ix + 1;
    }
    struct measured *m = &st->meas[t->measured - 1];
    m->present = 0;
    m->worker_start = m->worker_end = 0;
    m->limits.present = 0;
    return m;
}

static bool recently_closed(const struct wq_state *st, uint32_t run, int64_t id)
{
    uint64_t key = task_key(run, id);
    for (size_t i = 0; i < sizeof st->recent_closed / sizeof *st->recent_closed; i++)
        if (st->recent_closed[i] == key + 1) return true;
    return false;
}

static void task_delete(struct wq_state *st, struct task *t)
{
    st->runs[t->run].by_state[t->state]--;
    st->recent_closed[st->recent_next++ % (sizeof st->recent_closed / sizeof *st->recent_closed)] =
        task_key(t->run, t->id) + 1;
    measured_release(st, t);
    uint32_t ix = (uint32_t)(t - st->tasks);
    tl_map64_del(&st->open, task_key(t->run, t->id));
    t->next_free = st->task_free;
    st->task_free = ix + 1;
}

/* Fills the scratch record with everything known about task t's current
 * attempt. `end_us` is the time of the line that closes the attempt. */
struct tl_record *wq_task_record(struct wq_state *st, struct task *t, enum tl_record_kind kind,
                                 int64_t end_us)
{
    struct tl_record *r = &st->rec;
    tl_record_init(r, kind);
    const struct run *run = &st->runs[t->run];
    r->workflow = wq_name_of(st, run->workflow);
    r->category = wq_name_of(st, t->category);
    r->worker = wq_name_of(st, t->worker);
    r->host = wq_name_of(st, t->host);
    r->result = wq_name_of(st, t->result);
    r->task_id = t->id;
    r->attempt = t->attempt;
    r->has_exit_code = t->has_exit;
    r->exit_code = t->exit_code;
    r->time_ns = end_us * 1000;
    if (t->t_running) r->start_ns = t->t_running * 1000; /* the manager's RUNNING line */
    r->state = task_state_names[t->state];

    if (t->measured) {
        const struct measured *m = &st->meas[t->measured - 1];
        r->present[0] = m->present; /* Work Queue's metrics: below WQ_NMETRICS */
        memcpy(r->v, m->v, sizeof m->v);
        if (!tl_record_has(r, TL_M_WALL_TIME_S) && m->worker_start > 0 &&
            m->worker_end >= m->worker_start)
            tl_record_set(r, TL_M_WALL_TIME_S, m->worker_end - m->worker_start);
        const struct box *l = &m->limits;
        wq_box_to_record(r, l, TL_M_LIMIT_CORES, TL_M_LIMIT_MEMORY_BYTES, TL_M_LIMIT_DISK_BYTES,
                         TL_M_LIMIT_CORES);
        if (l->present & (1u << BOX_WALL)) tl_record_set(r, TL_M_LIMIT_WALL_TIME_S, l->v[BOX_WALL]);
    }
    wq_box_to_record(r, &t->req, TL_M_REQ_CORES, TL_M_REQ_MEMORY_BYTES, TL_M_REQ_DISK_BYTES,
                     TL_M_REQ_GPUS);
    wq_box_to_record(r, &t->alloc, TL_M_ALLOC_CORES, TL_M_ALLOC_MEMORY_BYTES, TL_M_ALLOC_DISK_BYTES,
                     TL_M_ALLOC_GPUS);
    if (t->t_waiting && t->t_running >= t->t_waiting)
        tl_record_set(r, TL_M_QUEUE_TIME_S, (double)(t->t_running - t->t_waiting) / 1e6);
    int64_t exec_end = t->t_wret ? t->t_wret : t->t_retrieved;
    if (t->t_running && exec_end >= t->t_running)
        tl_record_set(r, TL_M_EXEC_TIME_S, (double)(exec_end - t->t_running) / 1e6);
    if (t->t_wret && t->t_retrieved >= t->t_wret)
        tl_record_set(r, TL_M_RETRIEVAL_TIME_S, (double)(t->t_retrieved - t->t_wret) / 1e6);
    /* Without a resource monitor, the wall time is the lifecycle's. */
    if (!tl_record_has(r, TL_M_WALL_TIME_S) && tl_record_has(r, TL_M_EXEC_TIME_S))
        tl_record_set(r, TL_M_WALL_TIME_S, r->v[TL_M_EXEC_TIME_S]);
    wq_unmeasured_function_call(r);
    return r;
}

/* A new attempt starts: reset per-attempt fields, keep identity and request. */
static void attempt_reset(struct wq_state *st, struct task *t)
{
    measured_release(st, t);
    t->t_running = t->t_wret = t->t_retrieved = 0;
    t->result = -1;
    t->has_exit = false;
    t->alloc.present = 0;
    t->worker = t->host = -1;
}

/* Resolves a RUNNING / WAITING_RETRIEVAL worker word (host:port in WQ,
 * worker-<hex> in TaskVine) into the task's worker and host. */
static void task_set_worker(struct wq_state *st, struct run *run, struct task *t, struct span w)
{
    int32_t id = wq_intern_span(st, w);
    if (id < 0) return;
    bool is_worker_id = w.n > 7 && !memcmp(w.p, "worker-", 7);
    int32_t addr = -1;
    if (is_worker_id) {
        t->worker = id;
        uint64_t *a = tl_map64_get(&run->worker_to_addr, (uint64_t)id);
        if (a) addr = (int32_t)*a;
    } else {
        addr = id;
        uint64_t *wk = tl_map64_get(&run->addr_to_worker, (uint64_t)id);
        t->worker = wk ? (int32_t)*wk : id;
    }
    if (addr >= 0) {
        int32_t h = wq_host_of_addr(st, addr);
        if (h >= 0) t->host = h;
    }
}

/* A `workflow` record: the run's state after this line, at most once per
 * second of log time (and at MANAGER END), so a dashboard gets a steady
 * series whatever the line rate, and a replay produces the same points. */
static void emit_workflow(struct wq_state *st, struct run *run, int64_t ts)
{
    run->last_emit_sec = ts / 1000000;
    if (wq_skip_kind(st, TL_REC_WORKFLOW)) return;
    struct tl_record *r = &st->rec;
    tl_record_init(r, TL_REC_WORKFLOW);
    r->workflow = wq_name_of(st, run->workflow);
    r->time_ns = ts * 1000;
    tl_record_set(r, TL_M_TASKS_WAITING, (double)run->by_state[ST_WAITING]);
    tl_record_set(r, TL_M_TASKS_RUNNING,
                  (double)(run->by_state[ST_RUNNING] + run->by_state[ST_WAITING_RETRIEVAL]));
    tl_record_set(r, TL_M_TASKS_DONE, (double)run->done);
    tl_record_set(r, TL_M_TASKS_FAILED, (double)run->failed);
    tl_record_set(r, TL_M_WORKERS, (double)run->workers);
    tl_record_set(r, TL_M_WORKER_CORES, run->cores);
    wq_emit(st, r);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Reports the unfinished tasks of one run (or of all, run NULL) as
 * TL_REC_TASK_OPEN, censored at their last state change, in a stable order
 * (run, task id), and forgets them. */
static enum tl_err close_open_tasks(struct wq_state *st, const struct run *run)
{
    size_t n = st->open.n, k = 0;
    if (!n) return TL_OK;
    uint64_t *keys = malloc(n * sizeof *keys);
    if (!keys) return TL_ERR_NOMEM;
    uint32_t ri = run ? wq_run_index(st, run) : 0;
    for (size_t i = 0; i < st->open.cap; i++) {
        uint64_t key = st->open.slots[i].key;
        if (key != TL_MAP64_EMPTY && (!run || key >> 32 == ri)) keys[k++] = key;
    }
    if (k > 1) qsort(keys, k, sizeof *keys, cmp_u64);
    for (size_t i = 0; i < k; i++) {
        struct task *t = &st->tasks[*tl_map64_get(&st->open, keys[i])];
        wq_emit(st, wq_task_record(st, t, TL_REC_TASK_OPEN, wq_task_last_us(t)));
    }
    for (size_t i = 0; i < k; i++) task_delete(st, &st->tasks[*tl_map64_get(&st->open, keys[i])]);
    free(keys);
    return TL_OK;
}

/* The manager is gone: its unfinished tasks never will be. Reports them
 * now, not at the end of input (a followed log has none), and frees them
 * and the run's worker tables, so memory follows the live runs, not every
 * run the input ever had. */
static enum tl_err end_run(struct wq_state *st, struct run *run)
{
    run->ended = true;
    enum tl_err rc = close_open_tasks(st, run);
    tl_map64_free(&run->worker_cores);
    tl_map64_free(&run->addr_to_worker);
    tl_map64_free(&run->worker_to_addr);
    return rc;
}

/* ---------------------------------------------------------------- records */

static void parse_manager(struct wq_state *st, int64_t ts, int64_t pid, const char *p,
                          const char *end)
{
    struct span w;
    if (!next_word(&p, end, &w)) return wq_reject(st, TL_REJ_BAD_FIELDS, "MANAGER without event");
    if (w.n && w.p[0] >= '0' && w.p[0] <= '9') { /* TaskVine: MANAGER <pid> START|END [µs] */
        if (!next_word(&p, end, &w)) return wq_reject(st, TL_REJ_BAD_FIELDS, "MANAGER without event");
    }
    bool start = SPAN_IS(w, "START");
    if (!start && !SPAN_IS(w, "END")) return wq_reject(st, TL_REJ_BAD_FIELDS, "MANAGER event");
    struct run *run;
    if (start) {
        st->counters[WQC_MANAGER_START]++;
        /* A manager that crashed writes no MANAGER END; its restart writes
         * a START. A run still open at a START is marked quiet, and any
         * line of it clears the mark; quiet still at the next START, it is
         * taken for crashed. (Two live managers interleaved in one stream
         * keep writing, so neither is closed.) */
        for (size_t i = 0; st->cfg.close_superseded && i < st->nruns; i++) {
            struct run *old = &st->runs[i];
            if (old->ended) continue;
            if (!old->quiet) {
                old->quiet = true;
                continue;
            }
            st->counters[WQC_RUN_SUPERSEDED]++;
            if (end_run(st, old)) return wq_reject_nomem(st);
        }
        run = run_new(st, pid, ts);
    } else {
        st->counters[WQC_MANAGER_END]++;
        run = wq_run_for(st, pid, ts);
    }
    if (!run) return wq_reject_no_run(st);
    if (!wq_skip_kind(st, TL_REC_MANAGER)) {
        struct tl_record *r = &st->rec;
        tl_record_init(r, TL_REC_MANAGER);
        r->workflow = wq_name_of(st, run->workflow);
        r->state = start ? "START" : "END";
        r->time_ns = ts * 1000;
        wq_emit(st, r);
    }
    if (!start) {
        emit_workflow(st, run, ts); /* the final state, whatever the second */
        st->line_run = 0;
        if (end_run(st, run)) return wq_reject_nomem(st);
    }
}

static void parse_category(struct wq_state *st, const char *p, const char *end)
{
    /* CATEGORY name MAX|MIN {json} | CATEGORY name FIRST mode {json}; the JSON
     * may be missing (NULL summary). Read from the right: names may hold spaces. */
    const char *e = end;
    struct span w;
    if (!last_word(p, &e, &w)) return wq_reject(st, TL_REJ_BAD_FIELDS, "CATEGORY line too short");
    if (w.p[0] == '{') {
        struct box b = {0};
        struct bad_value bad = {0};
        if (scan_resources(w.p, w.p + w.n, J_BOX, NULL, &b, &bad) != w.p + w.n)
            return wq_reject(st, TL_REJ_BAD_JSON, "CATEGORY resources");
        if (bad.n) wq_reject_bad_values(st, &bad);
        if (!last_word(p, &e, &w)) return wq_reject(st, TL_REJ_BAD_FIELDS, "CATEGORY kind");
    }
    if (SPAN_IS(w, "MAX") || SPAN_IS(w, "MIN")) {
        /* "FIRST MAX" is FIRST with mode MAX: look one word further left. */
        const char *e2 = e;
        struct span prev;
        if (SPAN_IS(w, "MAX") && last_word(p, &e2, &prev) && SPAN_IS(prev, "FIRST") &&
            skip_spaces(p, e2) < e2) {
            st->counters[WQC_CATEGORY_FIRST]++;
            return;
        }
        st->counters[SPAN_IS(w, "MAX") ? WQC_CATEGORY_MAX : WQC_CATEGORY_MIN]++;
        return;
    }
    struct span kind;
    if (last_word(p, &e, &kind) && SPAN_IS(kind, "FIRST")) {
        st->counters[WQC_CATEGORY_FIRST]++;
        return;
    }
    wq_reject(st, TL_REJ_BAD_FIELDS, "CATEGORY kind");
}

/* WAITING / READY: category [FIRST_RESOURCES|MAX_RESOURCES] [attempt] {json} */
static void task_waiting(struct wq_state *st, struct run *run, int64_t ts, int64_t id,
                         const char *p, const char *end, bool ready)
{
    const char *e = end;
    struct span w;
    struct box req = {0};
    int64_t attempt = 0;
    if (!last_word(p, &e, &w)) return wq_reject(st, TL_REJ_BAD_FIELDS, "WAITING without category");
    if (w.p[0] == '{') {
        struct bad_value bad = {0};
        if (scan_resources(w.p, w.p + w.n, J_BOX, NULL, &req, &bad) != w.p + w.n)
            return wq_reject(st, TL_REJ_BAD_JSON, "requested resources");
        if (bad.n) wq_reject_bad_values(st, &bad);
        if (!last_word(p, &e, &w)) return wq_reject(st, TL_REJ_BAD_FIELDS, "WAITING without category");
    }
    if (span_i64(w, &attempt)) { /* TaskVine >= 7.5.1: attempt number */
        if (!last_word(p, &e, &w)) return wq_reject(st, TL_REJ_BAD_FIELDS, "WAITING without category");
    }
    if (SPAN_IS(w, "FIRST_RESOURCES") || SPAN_IS(w, "MAX_RESOURCES")) {
        /* allocation mode; what remains is the category */
    } else {
        e = w.p + w.n; /* no mode word: it was part of the name */
    }
    const char *cb = skip_spaces(p, e);
    while (e > cb && e[-1] == ' ') e--;
    if (e <= cb) return wq_reject(st, TL_REJ_BAD_FIELDS, "WAITING without category");
    st->counters[ready ? WQC_TASK_READY : WQC_TASK_WAITING]++;

    uint32_t ri = wq_run_index(st, run);
    struct task *t = wq_task_find(st, ri, id);
    if (t) {
        /* Back in the queue: the previous attempt is over. */
        if (t->state == ST_RETRIEVED) {
            wq_emit(st, wq_task_record(st, t, TL_REC_TASK, t->t_retrieved));
        } else if (t->state == ST_RUNNING || t->state == ST_WAITING_RETRIEVAL) {
            struct tl_record *r = wq_task_record(st, t, TL_REC_TASK, ts);
            r->result = "REQUEUED";
            r->has_exit_code = false;
            wq_emit(st, r);
        }
        attempt_reset(st, t);
        t->attempt = attempt > 0 ? (int32_t)attempt : t->attempt + (t->state != ST_WAITING);
    } else {
        t = wq_task_new(st, ri, id);
        if (!t) return wq_reject_no_task(st);
        t->attempt = attempt > 0 ? (int32_t)attempt : 1;
    }
    t->category = intern(st, cb, (size_t)(e - cb));
    if (t->category < 0 && cb < e && tl_intern_full(st->names, (size_t)(e - cb)))
        wq_reject(st, TL_REJ_LIMIT, "too many names (max_names): the task's category is left out");
    t->req = req;
    set_state(st, t, ST_WAITING);
    t->t_waiting = ts;
}

static struct task *task_for_state(struct wq_state *st, struct run *run, int64_t id)
{
    uint32_t ri = wq_run_index(st, run);
    struct task *t = wq_task_find(st, ri, id);
    if (t) return t;
    /* A task first seen past WAITING (input joined mid-run). */
    t = wq_task_new(st, ri, id);
    if (t) t->attempt = 1;
    return t;
}

/* The JSON just scanned was a limits object: move its values to limits. */
static void measured_to_limits(struct measured *m)
{
    static const struct {
        enum tl_metric metric;
        int box;
    } moves[] = {{TL_M_MAX_RSS_BYTES, BOX_MEMORY}, {TL_M_CORES, BOX_CORES},
                 {TL_M_DISK_BYTES, BOX_DISK},      {TL_M_GPUS, BOX_GPUS},
                 {TL_M_WALL_TIME_S, BOX_WALL}};
    m->limits.present = 0;
    for (size_t i = 0; i < sizeof moves / sizeof *moves; i++) {
        if (!((m->present >> moves[i].metric) & 1)) continue;
        m->limits.v[moves[i].box] = m->v[moves[i].metric];
        m->limits.present |= (uint8_t)(1u << moves[i].box);
    }
    m->present = 0;
    m->worker_start = m->worker_end = 0;
}

/* RETRIEVED / DONE: result [exit] [{limits}] [{measured}] */
static void task_finished(struct wq_state *st, struct run *run, int64_t ts, int64_t id,
                          const char *p, const char *end, bool done)
{
    struct span result;
    if (!next_word(&p, end, &result)) return wq_reject(st, TL_REJ_BAD_FIELDS, "result missing");
    const char *save = p;
    struct span w;
    int64_t exit_code = 0;
    bool has_exit = false;
    if (next_word(&p, end, &w) && w.p[0] != '{') {
        if (!span_i64(w, &exit_code)) return wq_reject(st, TL_REJ_BAD_FIELDS, "exit code");
        has_exit = true;
    } else {
        p = save;
    }
    /* Up to two JSON objects follow: two = limits + measured; one = measured,
     * except on WQ 6.0-7.0.3 RETRIEVED lines, where the only JSON is the
     * limits. Scan into scratch, so a bad line leaves the task untouched. */
    struct measured *m = &st->scratch;
    m->present = 0;
    m->worker_start = m->worker_end = 0;
    m->limits.present = 0;
    int njson = 0;
    struct bad_value bad = {0};
    p = skip_spaces(p, end);
    size_t tn = (size_t)(end - p);
    if (tn && tn == st->memo_len && !memcmp(p, st->memo_text, tn)) {
        *m = st->memo;
        njson = st->memo_njson;
        bad = st->memo_bad;
    } else {
        const char *text = p;
        while (p < end && njson < 2) {
            if (*p != '{') return wq_reject(st, TL_REJ_BAD_FIELDS, "unexpected text after result");
            if (njson == 1) measured_to_limits(m);
            p = scan_resources(p, end, J_MEASURED, m, NULL, &bad);
            if (!p) return wq_reject(st, TL_REJ_BAD_JSON, done ? "DONE resources" : "RETRIEVED resources");
            njson++;
            p = skip_spaces(p, end);
        }
        if (p < end) return wq_reject(st, TL_REJ_BAD_FIELDS, "text after resources");
        st->memo_len = 0;
        if (tn && tn <= sizeof st->memo_text) {
            memcpy(st->memo_text, text, tn);
            st->memo = *m;
            st->memo_njson = njson;
            st->memo_bad = bad;
            st->memo_len = tn;
        }
    }
    if (njson == 1 && !done && st->family_ab && !has_exit) measured_to_limits(m);
    if (bad.n) wq_reject_bad_values(st, &bad);

    st->counters[done ? WQC_TASK_DONE : WQC_TASK_RETRIEVED]++;
    struct task *t = task_for_state(st, run, id);
    if (!t) return wq_reject_no_task(st);
    /* TaskVine's DONE carries no JSON: the RETRIEVED measurement stands. */
    if (!(done && t->state == ST_RETRIEVED && njson == 0)) {
        struct box prev_limits = {0};
        if (t->measured) prev_limits = st->meas[t->measured - 1].limits;
        struct measured *dst = wq_measured_get(st, t);
        if (!dst) return wq_reject_nomem(st);
        uint32_t link = dst->next_free;
        *dst = *m;
        dst->next_free = link;
        /* WQ 6.x: limits were on RETRIEVED, the measurement on DONE. */
        if (done && !dst->limits.present) dst->limits = prev_limits;
    }
    int32_t res = intern_result(st, result);
    if (!done) {
        t->result = res;
        t->exit_code = (int32_t)exit_code;
        t->has_exit = has_exit;
        t->t_retrieved = ts;
        set_state(st, t, ST_RETRIEVED);
        return;
    }
    /* DONE: the final word on this task. */
    t->result = res;
    if (has_exit) {
        t->exit_code = (int32_t)exit_code;
        t->has_exit = true;
    }
    struct tl_record *r = wq_task_record(st, t, TL_REC_TASK, t->t_retrieved ? t->t_retrieved : ts);
    r->final = true;
    r->state = "DONE";
    enum tl_verdict v = tl_attempt_verdict(r->result, r->has_exit_code, r->exit_code);
    run->failed += v == TL_VERDICT_FAILED, run->done += v == TL_VERDICT_OK; /* a library: neither */
    wq_emit(st, r);
    task_delete(st, t);
}

static void parse_task(struct wq_state *st, int64_t ts, int64_t pid, const char *p,
                       const char *end)
{
    struct span idw, state;
    int64_t id;
    const char *q = p < end && *p == ' ' ? lead_int(p + 1, end, &id) : NULL;
    if (q) {
        p = q;
        if (!next_word(&p, end, &state)) return wq_reject(st, TL_REJ_BAD_FIELDS, "TASK line too short");
    } else {
        if (!next_word(&p, end, &idw) || !next_word(&p, end, &state))
            return wq_reject(st, TL_REJ_BAD_FIELDS, "TASK line too short");
        if (!span_i64(idw, &id)) return wq_reject(st, TL_REJ_BAD_FIELDS, "task id");
    }
    struct run *run = wq_run_for(st, pid, ts);
    if (!run) return wq_reject_no_run(st);

    switch (state.p[0]) {
    case 'W':
        if (SPAN_IS(state, "WAITING")) return task_waiting(st, run, ts, id, p, end, false);
        if (SPAN_IS(state, "WAITING_RETRIEVAL")) {
            st->counters[WQC_TASK_WAITING_RETRIEVAL]++;
            struct task *t = task_for_state(st, run, id);
            if (!t) return wq_reject_no_task(st);
            struct span w;
            if (next_word(&p, end, &w) && t->worker < 0) task_set_worker(st, run, t, w);
            t->t_wret = ts;
            set_state(st, t, ST_WAITING_RETRIEVAL);
            return;
        }
        if (SPAN_IS(state, "WAITING_RESUBMISSION")) {
            st->counters[WQC_TASK_OTHER]++;
            return;
        }
        break;
    case 'R':
        if (SPAN_IS(state, "READY")) return task_waiting(st, run, ts, id, p, end, true);
        if (SPAN_IS(state, "RUNNING")) {
            struct span w, mode;
            struct box alloc = {0};
            bool have_worker = next_word(&p, end, &w);
            if (have_worker && next_word(&p, end, &mode)) {
                const char *j = skip_spaces(p, end);
                struct bad_value bad = {0};
                if (j < end && scan_resources(j, end, J_BOX, NULL, &alloc, &bad) == NULL)
                    return wq_reject(st, TL_REJ_BAD_JSON, "allocated resources");
                if (bad.n) wq_reject_bad_values(st, &bad);
            }
            st->counters[WQC_TASK_RUNNING]++;
            struct task *t = task_for_state(st, run, id);
            if (!t) return wq_reject_no_task(st);
            if (t->state == ST_RUNNING || t->state == ST_WAITING_RETRIEVAL) {
                /* RUNNING again without going back to the queue: treat the
                 * earlier attempt as lost. */
                struct tl_record *r = wq_task_record(st, t, TL_REC_TASK, ts);
                r->result = "REQUEUED";
                wq_emit(st, r);
                attempt_reset(st, t);
                t->attempt++;
            }
            t->alloc = alloc;
            if (have_worker) task_set_worker(st, run, t, w);
            t->t_running = ts;
            set_state(st, t, ST_RUNNING);
            return;
        }
        if (SPAN_IS(state, "RETRIEVED")) return task_finished(st, run, ts, id, p, end, false);
        break;
    case 'D':
        if (SPAN_IS(state, "DONE")) return task_finished(st, run, ts, id, p, end, true);
        break;
    case 'C':
        if (SPAN_IS(state, "CANCELED")) {
            st->counters[WQC_TASK_CANCELED]++;
            if (!wq_task_find(st, wq_run_index(st, run), id) && recently_closed(st, wq_run_index(st, run), id))
                return; /* the repeated line of one cancel */
            struct task *t = task_for_state(st, run, id);
            if (!t) return wq_reject_no_task(st);
            struct tl_record *r = wq_task_record(st, t, TL_REC_TASK, ts);
            r->result = "CANCELED";
            r->has_exit_code = false;
            r->final = true;
            r->state = "CANCELED"; /* the glossary's cancelled: neither done nor failed */
            wq_emit(st, r);
            task_delete(st, t);
            return;
        }
        break;
    case 'I':
    case 'U':
        if (SPAN_IS(state, "INITIAL") || SPAN_IS(state, "UNKNOWN")) {
            st->counters[WQC_TASK_OTHER]++;
            return;
        }
        break;
    }
    wq_reject(st, TL_REJ_BAD_FIELDS, "unknown task state");
}

static void parse_header(struct wq_state *st, const char *p, const char *end)
{
    st->counters[WQC_HEADER]++;
    /* WQ 6.0-7.0.3: "... TASK taskid RETRIEVED|DONE task-result ..." (no
     * braces): a lone JSON on RETRIEVED is then the limits, not the measure. */
    static const char marker[] = "RETRIEVED|DONE task-result";
    if ((size_t)(end - p) >= sizeof marker - 1 && memmem(p, (size_t)(end - p), marker, sizeof marker - 1))
        st->family_ab = true;
}

static void parse_line(struct wq_state *st, const char *p, const char *end)
{
    while (end > p && (end[-1] == ' ' || end[-1] == '\r' || end[-1] == '\t')) end--;
    if (p == end) {
        st->counters[WQC_BLANK]++;
        return;
    }
    if (*p == '#') return parse_header(st, p, end);
    struct span tsw, pidw, kind;
    int64_t ts, pid;
    const char *q = lead_ts(st, p, end, &ts);
    if (q && q < end && (q = lead_pid(st, q + 1, end, &pid))) {
        p = q;
    } else if (!next_word(&p, end, &tsw) || !span_i64(tsw, &ts) || !next_word(&p, end, &pidw) ||
               !span_i64(pidw, &pid)) {
        return wq_reject(st, TL_REJ_BAD_PREFIX, NULL);
    }
    /* µs since the epoch; beyond year ~2255 the ns conversion would overflow */
    if (ts < 0 || ts > WQ_MAX_TIMESTAMP_US) return wq_reject(st, TL_REJ_BAD_PREFIX, "timestamp out of range");
    if (!next_word(&p, end, &kind)) return wq_reject(st, TL_REJ_BAD_FIELDS, "no record type");
    switch (kind.p[0]) {
    case 'T':
        if (SPAN_IS(kind, "TASK")) return parse_task(st, ts, pid, p, end);
        if (SPAN_IS(kind, "TRANSFER")) return wq_parse_transfer(st, ts, pid, p, end);
        break;
    case 'W':
        if (SPAN_IS(kind, "WORKER")) return wq_parse_worker(st, ts, pid, p, end);
        break;
    case 'M':
        if (SPAN_IS(kind, "MANAGER") || SPAN_IS(kind, "MASTER"))
            return parse_manager(st, ts, pid, p, end);
        break;
    case 'C':
        if (SPAN_IS(kind, "CATEGORY")) return parse_category(st, p, end);
        break;
    case 'L':
    case 'D':
        if (SPAN_IS(kind, "LIBRARY") || SPAN_IS(kind, "DUTY")) {
            struct span id, what;
            if (!next_word(&p, end, &id) || !next_word(&p, end, &what))
                return wq_reject(st, TL_REJ_BAD_FIELDS, "LIBRARY line too short");
            st->counters[WQC_LIBRARY]++;
            return;
        }
        break;
    case 'A':
        if (SPAN_IS(kind, "APPLICATION")) {
            st->counters[WQC_APPLICATION]++;
            return;
        }
        break;
    }
    wq_reject(st, TL_REJ_UNKNOWN, NULL);
}

static void process_line(struct wq_state *st, const char *p, size_t n)
{
    st->stats.lines++;
    if (st->chunk_has_nul && memchr(p, '\0', n)) {
        /* A run of NUL bytes is where a crash left preallocated blocks: it
         * ends the damaged line, and what follows the last NUL is a line of
         * its own (it was swallowed with the damage). */
        const char *last = memrchr(p, '\0', n);
        wq_reject(st, TL_REJ_NUL_BYTE, NULL);
        size_t rest = n - (size_t)(last + 1 - p);
        if (rest && last[1] >= '0' && last[1] <= '9') process_line(st, last + 1, rest);
        return;
    }
    st->line_run = 0;
    parse_line(st, p, p + n);
    if (st->line_run) {
        struct run *run = &st->runs[st->line_run - 1];
        if (st->line_ts / 1000000 != run->last_emit_sec) emit_workflow(st, run, st->line_ts);
    }
}

/* ---------------------------------------------------------------- lines */

enum tl_err wq_feed(void *state, const char *buf, size_t len)
{
    struct wq_state *st = state;
    const char *p = buf, *end = buf + len;
    st->chunk_has_nul = memchr(buf, '\0', len) != NULL;

    /* Finish a line carried over from the previous chunk. */
    if (st->partial.len || st->skipping) {
        const char *nl = memchr(p, '\n', len);
        size_t take = nl ? (size_t)(nl - p) : len;
        if (!st->skipping) {
            if (st->partial.len + take > st->cfg.max_line) {
                st->skipping = true;
                st->partial.len = 0;
            } else {
                tl_buf_append(&st->partial, p, take);
                if (st->partial.oom) return TL_ERR_NOMEM;
            }
        }
        if (!nl) return TL_OK;
        if (st->skipping) {
            st->stats.lines++;
            wq_reject(st, TL_REJ_LINE_TOO_LONG, NULL);
            st->skipping = false;
        } else {
            bool had_nul = st->chunk_has_nul;
            st->chunk_has_nul = memchr(st->partial.data, '\0', st->partial.len) != NULL;
            process_line(st, st->partial.data, st->partial.len);
            st->chunk_has_nul = had_nul;
        }
        st->partial.len = 0;
        p = nl + 1;
    }
    for (;;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;
        if ((size_t)(nl - p) > st->cfg.max_line) {
            st->stats.lines++;
            wq_reject(st, TL_REJ_LINE_TOO_LONG, NULL);
        } else {
            process_line(st, p, (size_t)(nl - p));
        }
        p = nl + 1;
    }
    if (p < end) {
        if ((size_t)(end - p) > st->cfg.max_line) {
            st->skipping = true;
        } else {
            tl_buf_append(&st->partial, p, (size_t)(end - p));
            if (st->partial.oom) return TL_ERR_NOMEM;
        }
    }
    return TL_OK;
}


enum tl_err wq_finish(void *state)
{
    struct wq_state *st = state;
    if (st->skipping) {
        st->stats.lines++;
        wq_reject(st, TL_REJ_LINE_TOO_LONG, NULL);
        st->skipping = false;
    } else if (st->partial.len) {
        /* A last line without newline: a crashed writer, or a cut file. */
        st->chunk_has_nul = memchr(st->partial.data, '\0', st->partial.len) != NULL;
        process_line(st, st->partial.data, st->partial.len);
    }
    st->partial.len = 0;
    enum tl_err rc = close_open_tasks(st, NULL);
    return rc ? rc : st->nomem ? TL_ERR_NOMEM : TL_OK;
}
