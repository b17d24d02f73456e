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

/* A record of a kind the consumer does not use: counted, not built. */
static inline bool skip_kind(struct wq_state *st, enum tl_record_kind k)
{
    if (tl_emit_wants(&st->emit, k)) return false;
    st->stats.records++;
    return true;
}

/* A line holding values no measurement has (negative, past the double
 * range): rejected, naming the first; what else it says is used. */
static void reject_bad_values(struct wq_state *st, const struct bad_value *bad)
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

static void emit(struct wq_state *st, struct tl_record *r)
{
    r->line = st->stats.lines;
    r->source = "wq";
    st->stats.records++;
    st->emit.record(st->emit.ctx, r);
}

static int32_t intern_span(struct wq_state *st, struct span s)
{
    return tl_intern(st->names, s.p, s.n);
}

static const char *name_of(const struct wq_state *st, int32_t id)
{
    return id >= 0 ? tl_intern_str(st->names, id) : NULL;
}

static struct run *run_new(struct wq_state *st, int64_t pid, int64_t start_us)
{
    if (st->nruns == st->cap_runs) {
        size_t cap = st->cap_runs ? st->cap_runs * 2 : 4;
        struct run *r = realloc(st->runs, cap * sizeof *r);
        if (!r) return NULL;
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
    if (wf < 0) return NULL;
    struct run *r = &st->runs[st->nruns];
    memset(r, 0, sizeof *r);
    r->pid = pid;
    r->start_us = start_us;
    r->workflow = wf;
    if (!tl_map64_put(&st->pid_to_run, (uint64_t)pid, st->nruns)) return NULL;
    st->nruns++;
    st->last_pid = pid;
    st->last_run = st->nruns;
    st->line_run = (uint32_t)st->nruns;
    st->line_ts = start_us;
    return r;
}

/* The run a line belongs to: the latest run of its pid, or a new one when
 * the log did not show this manager start (input joined mid-run). */
static struct run *run_for(struct wq_state *st, int64_t pid, int64_t ts)
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
static int32_t host_of_addr(struct wq_state *st, int32_t addr)
{
    uint64_t *h = tl_map64_get(&st->host_of, (uint64_t)addr);
    if (h) return (int32_t)*h;
    const char *s = tl_intern_str(st->names, addr);
    const char *colon = strrchr(s, ':');
    int32_t host = tl_intern(st->names, s, colon ? (size_t)(colon - s) : strlen(s));
    if (host >= 0) tl_map64_put(&st->host_of, (uint64_t)addr, (uint64_t)host);
    return host;
}

static int32_t intern_result(struct wq_state *st, struct span r)
{
    if (st->last_result >= 0 && tl_intern_len(st->names, st->last_result) == r.n &&
        !memcmp(tl_intern_str(st->names, st->last_result), r.p, r.n))
        return st->last_result;
    return st->last_result = tl_intern(st->names, r.p, r.n);
}

static uint32_t run_index(const struct wq_state *st, const struct run *r)
{
    return (uint32_t)(r - st->runs);
}

static inline uint64_t task_key(uint32_t run, int64_t id)
{
    return ((uint64_t)run << 32) | (uint32_t)id;
}

static struct task *task_find(struct wq_state *st, uint32_t run, int64_t id)
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
    if (!tl_map64_put(&st->open, task_key(run, id), ix)) return NULL;
    struct task *t = &st->tasks[ix];
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

static void box_to_record(struct tl_record *r, const struct box *b, enum tl_metric cores,
                          enum tl_metric mem, enum tl_metric disk, enum tl_metric gpus)
{
    if (b->present & (1u << BOX_CORES)) tl_record_set(r, cores, b->v[BOX_CORES]);
    if (b->present & (1u << BOX_MEMORY)) tl_record_set(r, mem, b->v[BOX_MEMORY]);
    if (b->present & (1u << BOX_DISK)) tl_record_set(r, disk, b->v[BOX_DISK]);
    if (b->present & (1u << BOX_GPUS)) tl_record_set(r, gpus, b->v[BOX_GPUS]);
}

/* Fills the scratch record with everything known about task t's current
 * attempt. `end_us` is the time of the line that closes the attempt. */
struct tl_record *wq_task_record(struct wq_state *st, struct task *t, enum tl_record_kind kind,
                                 int64_t end_us)
{
    struct tl_record *r = &st->rec;
    tl_record_init(r, kind);
    const struct run *run = &st->runs[t->run];
    r->workflow = name_of(st, run->workflow);
    r->category = name_of(st, t->category);
    r->worker = name_of(st, t->worker);
    r->host = name_of(st, t->host);
    r->result = name_of(st, t->result);
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
        box_to_record(r, l, TL_M_LIMIT_CORES, TL_M_LIMIT_MEMORY_BYTES, TL_M_LIMIT_DISK_BYTES,
                      TL_M_LIMIT_CORES);
        if (l->present & (1u << BOX_WALL)) tl_record_set(r, TL_M_LIMIT_WALL_TIME_S, l->v[BOX_WALL]);
    }
    box_to_record(r, &t->req, TL_M_REQ_CORES, TL_M_REQ_MEMORY_BYTES, TL_M_REQ_DISK_BYTES,
                  TL_M_REQ_GPUS);
    box_to_record(r, &t->alloc, TL_M_ALLOC_CORES, TL_M_ALLOC_MEMORY_BYTES, TL_M_ALLOC_DISK_BYTES,
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
    int32_t id = intern_span(st, w);
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
        int32_t h = host_of_addr(st, addr);
        if (h >= 0) t->host = h;
    }
}

/* A `workflow` record: the run's state after this line, at most once per
 * second of log time (and at MANAGER END), so a dashboard gets a steady
 * series whatever the line rate, and a replay produces the same points. */
static void emit_workflow(struct wq_state *st, struct run *run, int64_t ts)
{
    run->last_emit_sec = ts / 1000000;
    if (skip_kind(st, TL_REC_WORKFLOW)) return;
    struct tl_record *r = &st->rec;
    tl_record_init(r, TL_REC_WORKFLOW);
    r->workflow = name_of(st, run->workflow);
    r->time_ns = ts * 1000;
    tl_record_set(r, TL_M_TASKS_WAITING, (double)run->by_state[ST_WAITING]);
    tl_record_set(r, TL_M_TASKS_RUNNING,
                  (double)(run->by_state[ST_RUNNING] + run->by_state[ST_WAITING_RETRIEVAL]));
    tl_record_set(r, TL_M_TASKS_DONE, (double)run->done);
    tl_record_set(r, TL_M_TASKS_FAILED, (double)run->failed);
    tl_record_set(r, TL_M_WORKERS, (double)run->workers);
    tl_record_set(r, TL_M_WORKER_CORES, run->cores);
    emit(st, r);
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
    uint32_t ri = run ? run_index(st, run) : 0;
    for (size_t i = 0; i < st->open.cap; i++) {
        uint64_t key = st->open.slots[i].key;
        if (key != TL_MAP64_EMPTY && (!run || key >> 32 == ri)) keys[k++] = key;
    }
    if (k > 1) qsort(keys, k, sizeof *keys, cmp_u64);
    for (size_t i = 0; i < k; i++) {
        struct task *t = &st->tasks[*tl_map64_get(&st->open, keys[i])];
        emit(st, wq_task_record(st, t, TL_REC_TASK_OPEN, wq_task_last_us(t)));
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
            if (end_run(st, old)) return wq_reject(st, TL_REJ_LIMIT, "out of memory");
        }
        run = run_new(st, pid, ts);
    } else {
        st->counters[WQC_MANAGER_END]++;
        run = run_for(st, pid, ts);
    }
    if (!run) return wq_reject(st, TL_REJ_LIMIT, "too many runs or names");
    if (!skip_kind(st, TL_REC_MANAGER)) {
        struct tl_record *r = &st->rec;
        tl_record_init(r, TL_REC_MANAGER);
        r->workflow = name_of(st, run->workflow);
        r->state = start ? "START" : "END";
        r->time_ns = ts * 1000;
        emit(st, r);
    }
    if (!start) {
        emit_workflow(st, run, ts); /* the final state, whatever the second */
        st->line_run = 0;
        if (end_run(st, run)) return wq_reject(st, TL_REJ_LIMIT, "out of memory");
    }
}

enum worker_event { EV_CONNECTION, EV_DISCONNECTION, EV_RESOURCES, EV_TRANSFER, EV_CACHE_UPDATE, EV_NONE };

static enum worker_event worker_event(struct span w)
{
    switch (w.n) {
    case 8: return SPAN_IS(w, "TRANSFER") ? EV_TRANSFER : EV_NONE;
    case 9: return SPAN_IS(w, "RESOURCES") ? EV_RESOURCES : EV_NONE;
    case 10: return SPAN_IS(w, "CONNECTION") ? EV_CONNECTION : EV_NONE;
    case 12:
        return SPAN_IS(w, "CACHE_UPDATE") || SPAN_IS(w, "CACHE-UPDATE") ? EV_CACHE_UPDATE : EV_NONE;
    case 13: return SPAN_IS(w, "DISCONNECTION") ? EV_DISCONNECTION : EV_NONE;
    }
    return EV_NONE;
}

/* Whether a size or time as a transfer line writes it is one a transfer can
 * have: not negative, and below 2^960 (about 1e289), so that every unit
 * conversion (MiB, µs) keeps it finite. Judged as read, the same whether the
 * number is converted or only validated. */
static inline bool transfer_number_possible(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u < UINT64_C(0x7bf0000000000000); /* 2^960 */
}

/* Whether tl_parse_double takes exactly [p, end), without converting: the
 * plain form (0|[1-9]digits)[.digits] of up to 280 integer digits, which it
 * always takes, is checked here; anything else (a sign, exponents, nan,
 * longer) it is asked. *impossible: see transfer_number_possible. For
 * numbers that are validated, not used. */
static bool number_ok(const char *p, const char *end, bool *impossible)
{
    const char *q = tl_skip_digits(p, end);
    *impossible = false;
    if (q > p && !(*p == '0' && q - p > 1) && q - p <= 280) {
        if (q < end && *q == '.') {
            const char *f = q + 1;
            q = tl_skip_digits(f, end);
            if (q == f || end - p > 400) q = NULL; /* "1." */
        }
        if (q == end) return true;
    }
    double v;
    if (!tl_parse_double(p, end, &v)) return false;
    *impossible = !transfer_number_possible(v);
    return true;
}

/* The tail of a worker TRANSFER / CACHE_UPDATE line: a name (which may hold
 * spaces), then 2 or 3 numbers, taken from the right: [start] time size.
 * 7.5.1+ writes integer bytes and µs; 7.5.0 and earlier builds write %f MiB
 * and seconds. Each number is converted once. NULL, or the reject detail.
 * bytes NULL: the numbers are only validated (a consumer that does not use
 * the transfer), with the same verdicts: *impossible says whether the size
 * or the time is one no transfer has (negative, past the double range). */
static const char *transfer_numbers(const char *p, const char *end, double *bytes, double *secs,
                                    bool *impossible)
{
    struct span nums[3];
    double vals[3];
    bool imp[3];
    int n = 0;
    const char *e = end;
    struct span x;
    for (const char *before = e; n < 3 && last_word(p, &e, &x); before = e) {
        if (bytes ? !tl_parse_double(x.p, x.p + x.n, &vals[n]) : !number_ok(x.p, x.p + x.n, &imp[n])) {
            e = before; /* that word is the name: leave it */
            break;
        }
        nums[n++] = x;
    }
    if (n < 2) return "transfer size/time";
    if (skip_spaces(p, e) >= e) { /* the last number was the name after all */
        if (n == 2) return "transfer file name";
        n--;
    }
    if (!bytes) {
        *impossible = imp[n - 1] || imp[n - 2];
        return NULL;
    }
    double sz = vals[n - 1], tm = vals[n - 2];
    *impossible = !transfer_number_possible(sz) || !transfer_number_possible(tm);
    if (memchr(nums[n - 1].p, '.', nums[n - 1].n)) sz = mib_bytes(sz);
    else tm /= 1e6;
    *bytes = sz;
    *secs = tm;
    return NULL;
}

/* A worker left: its cores leave the run's count. */
static void worker_gone(struct wq_state *st, struct run *run, int32_t wid, struct tl_record *r,
                        const char *p, const char *end)
{
    st->counters[WQC_WORKER_DISCONNECTION]++;
    struct span reason;
    r->state = "DISCONNECTION";
    if (next_word(&p, end, &reason)) r->result = name_of(st, intern_span(st, reason));
    uint64_t *c = wid >= 0 ? tl_map64_get(&run->worker_cores, (uint64_t)wid) : NULL;
    if (c) {
        double cores;
        memcpy(&cores, c, sizeof cores);
        run->cores -= cores;
        run->workers--;
        tl_map64_del(&run->worker_cores, (uint64_t)wid);
    }
}

/* A worker's resources: its capacity (alloc_* of the worker record), its
 * cores in the run's count. false when the line was rejected. */
static bool worker_resources(struct wq_state *st, struct run *run, int32_t wid,
                             struct tl_record *r, const char *p, const char *end)
{
    st->counters[WQC_WORKER_RESOURCES]++;
    const char *j = skip_spaces(p, end);
    struct box b = {0};
    struct bad_value bad = {0};
    if (!scan_resources(j, end, J_BOX, NULL, &b, &bad)) {
        wq_reject(st, TL_REJ_BAD_JSON, "WORKER RESOURCES");
        return false;
    }
    if (bad.n) reject_bad_values(st, &bad);
    r->state = "RESOURCES";
    uint64_t *c = wid >= 0 ? tl_map64_get(&run->worker_cores, (uint64_t)wid) : NULL;
    if (c && (b.present & (1u << BOX_CORES))) {
        double old;
        memcpy(&old, c, sizeof old);
        run->cores += b.v[BOX_CORES] - old;
        memcpy(c, &b.v[BOX_CORES], sizeof *c);
    }
    /* For worker records, alloc_* is the worker's total capacity. */
    box_to_record(r, &b, TL_M_ALLOC_CORES, TL_M_ALLOC_MEMORY_BYTES, TL_M_ALLOC_DISK_BYTES,
                  TL_M_ALLOC_GPUS);
    return true;
}

/* The record's host: from the address on the line (remembered for the
 * worker), else the worker's last address. false when out of names. */
static bool worker_host(struct wq_state *st, struct run *run, int32_t wid, struct span addr,
                        struct tl_record *r)
{
    if (addr.p) {
        int32_t aid = intern_span(st, addr);
        if (aid < 0) {
            wq_reject(st, TL_REJ_LIMIT, "too many names");
            return false;
        }
        r->host = name_of(st, host_of_addr(st, aid));
        if (wid >= 0) {
            tl_map64_put(&run->addr_to_worker, (uint64_t)aid, (uint64_t)wid);
            tl_map64_put(&run->worker_to_addr, (uint64_t)wid, (uint64_t)aid);
        }
    } else if (wid >= 0) {
        uint64_t *a = tl_map64_get(&run->worker_to_addr, (uint64_t)wid);
        if (a) r->host = name_of(st, host_of_addr(st, (int32_t)*a));
    }
    return true;
}

static void parse_worker(struct wq_state *st, int64_t ts, int64_t pid, const char *p,
                         const char *end)
{
    struct span id, w;
    if (!next_word(&p, end, &id) || !next_word(&p, end, &w))
        return wq_reject(st, TL_REJ_BAD_FIELDS, "WORKER line too short");
    struct run *run = run_for(st, pid, ts);
    if (!run) return wq_reject(st, TL_REJ_LIMIT, "too many runs or names");
    bool null_id = SPAN_IS(id, "(null)");
    struct span addr = {NULL, 0};
    /* WQ layout: WORKER id host:port  CONNECTION|DISCONNECTION [reason] */
    enum worker_event ev = worker_event(w);
    if (ev == EV_NONE) {
        addr = w;
        if (!next_word(&p, end, &w)) return wq_reject(st, TL_REJ_BAD_FIELDS, "WORKER event missing");
        ev = worker_event(w);
        if (ev == EV_NONE) return wq_reject(st, TL_REJ_UNKNOWN, "WORKER event");
    }
    /* Transfers and cache updates: a third of a TaskVine log. Without an
     * address they change no state, so a consumer that does not use
     * transfer records gets them validated and counted only. */
    struct span dir = {"CACHE_UPDATE", 12};
    double xfer_bytes = 0, xfer_secs = 0;
    bool impossible = false; /* the transfer's size or time */
    if (ev == EV_TRANSFER || ev == EV_CACHE_UPDATE) {
        st->counters[ev == EV_TRANSFER ? WQC_WORKER_TRANSFER : WQC_WORKER_CACHE_UPDATE]++;
        if (ev == EV_TRANSFER && !next_word(&p, end, &dir))
            return wq_reject(st, TL_REJ_BAD_FIELDS, "TRANSFER direction");
        bool used = addr.p || tl_emit_wants(&st->emit, TL_REC_TRANSFER);
        const char *bad = transfer_numbers(p, end, used ? &xfer_bytes : NULL, &xfer_secs, &impossible);
        if (bad) return wq_reject(st, TL_REJ_BAD_FIELDS, bad);
        if (impossible) wq_reject(st, TL_REJ_BAD_VALUE, "transfer size or time");
        if (!used && skip_kind(st, TL_REC_TRANSFER)) return;
    }
    struct tl_record *r = &st->rec;
    tl_record_init(r, TL_REC_WORKER);
    r->workflow = name_of(st, run->workflow);
    r->time_ns = ts * 1000;
    int32_t wid = null_id ? -1 : intern_span(st, id);
    r->worker = name_of(st, wid);

    switch (ev) {
    case EV_CONNECTION:
        st->counters[WQC_WORKER_CONNECTION]++;
        if (!addr.p && !next_word(&p, end, &addr)) /* TaskVine: CONNECTION host:port */
            return wq_reject(st, TL_REJ_BAD_FIELDS, "CONNECTION without address");
        r->state = "CONNECTION";
        if (wid >= 0 && !tl_map64_get(&run->worker_cores, (uint64_t)wid)) {
            run->workers++;
            tl_map64_put(&run->worker_cores, (uint64_t)wid, 0); /* 0.0's bits */
        }
        break;
    case EV_DISCONNECTION:
        worker_gone(st, run, wid, r, p, end);
        break;
    case EV_RESOURCES:
        if (!worker_resources(st, run, wid, r, p, end)) return;
        break;
    case EV_TRANSFER:
    case EV_CACHE_UPDATE: {
        bool input = !SPAN_IS(dir, "OUTPUT");
        r->kind = TL_REC_TRANSFER;
        r->state = ev == EV_TRANSFER ? (input ? "INPUT" : "OUTPUT") : "CACHE_UPDATE";
        if (!impossible) {
            tl_record_set(r, input ? TL_M_INPUT_BYTES : TL_M_OUTPUT_BYTES, xfer_bytes);
            tl_record_set(r, input ? TL_M_INPUT_TIME_S : TL_M_OUTPUT_TIME_S, xfer_secs);
        }
        break;
    }
    case EV_NONE:
        break; /* not reached: rejected above */
    }
    if (!worker_host(st, run, wid, addr, r)) return;
    if (!r->worker && addr.p && !null_id) r->worker = name_of(st, intern_span(st, addr));
    if (skip_kind(st, r->kind)) return;
    emit(st, r);
}

/* WQ top-level: TRANSFER INPUT|OUTPUT taskid cache_flag MiB seconds name... */
static void parse_transfer(struct wq_state *st, int64_t ts, int64_t pid, const char *p,
                           const char *end)
{
    struct span dir, id, flag, size, secs;
    if (!next_word(&p, end, &dir) || !next_word(&p, end, &id) || !next_word(&p, end, &flag) ||
        !next_word(&p, end, &size) || !next_word(&p, end, &secs))
        return wq_reject(st, TL_REJ_BAD_FIELDS, "TRANSFER line too short");
    bool input = SPAN_IS(dir, "INPUT");
    if (!input && !SPAN_IS(dir, "OUTPUT")) return wq_reject(st, TL_REJ_BAD_FIELDS, "TRANSFER direction");
    int64_t task_id;
    double mib = 0, s = 0;
    bool used = tl_emit_wants(&st->emit, TL_REC_TRANSFER), imp_size = false, imp_secs = false;
    if (!span_i64(id, &task_id) ||
        !(used ? tl_parse_double(size.p, size.p + size.n, &mib) : number_ok(size.p, size.p + size.n, &imp_size)) ||
        !(used ? tl_parse_double(secs.p, secs.p + secs.n, &s) : number_ok(secs.p, secs.p + secs.n, &imp_secs)))
        return wq_reject(st, TL_REJ_BAD_FIELDS, "TRANSFER numbers");
    st->counters[input ? WQC_TRANSFER_INPUT : WQC_TRANSFER_OUTPUT]++;
    struct run *run = run_for(st, pid, ts);
    if (!run) return wq_reject(st, TL_REJ_LIMIT, "too many runs or names");
    if (used && (!transfer_number_possible(mib) || !transfer_number_possible(s))) imp_size = true;
    if (imp_size || imp_secs) wq_reject(st, TL_REJ_BAD_VALUE, "transfer size or time");
    if (skip_kind(st, TL_REC_TRANSFER)) return;
    struct tl_record *r = &st->rec;
    tl_record_init(r, TL_REC_TRANSFER);
    r->workflow = name_of(st, run->workflow);
    r->task_id = task_id;
    r->state = input ? "INPUT" : "OUTPUT";
    r->time_ns = ts * 1000;
    if (!imp_size) {
        tl_record_set(r, input ? TL_M_INPUT_BYTES : TL_M_OUTPUT_BYTES, mib_bytes(mib));
        tl_record_set(r, input ? TL_M_INPUT_TIME_S : TL_M_OUTPUT_TIME_S, s);
    }
    struct task *t = task_find(st, run_index(st, run), task_id);
    if (t) r->category = name_of(st, t->category);
    emit(st, r);
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
        if (bad.n) reject_bad_values(st, &bad);
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
        if (bad.n) reject_bad_values(st, &bad);
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

    uint32_t ri = run_index(st, run);
    struct task *t = task_find(st, ri, id);
    if (t) {
        /* Back in the queue: the previous attempt is over. */
        if (t->state == ST_RETRIEVED) {
            emit(st, wq_task_record(st, t, TL_REC_TASK, t->t_retrieved));
        } else if (t->state == ST_RUNNING || t->state == ST_WAITING_RETRIEVAL) {
            struct tl_record *r = wq_task_record(st, t, TL_REC_TASK, ts);
            r->result = "REQUEUED";
            r->has_exit_code = false;
            emit(st, r);
        }
        attempt_reset(st, t);
        t->attempt = attempt > 0 ? (int32_t)attempt : t->attempt + (t->state != ST_WAITING);
    } else {
        t = wq_task_new(st, ri, id);
        if (!t) return wq_reject(st, TL_REJ_LIMIT, "open task table full (max_open_tasks)");
        t->attempt = attempt > 0 ? (int32_t)attempt : 1;
    }
    t->category = tl_intern(st->names, cb, (size_t)(e - cb));
    t->req = req;
    set_state(st, t, ST_WAITING);
    t->t_waiting = ts;
}

static struct task *task_for_state(struct wq_state *st, struct run *run, int64_t id)
{
    uint32_t ri = run_index(st, run);
    struct task *t = task_find(st, ri, id);
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
    if (bad.n) reject_bad_values(st, &bad);

    st->counters[done ? WQC_TASK_DONE : WQC_TASK_RETRIEVED]++;
    struct task *t = task_for_state(st, run, id);
    if (!t) return wq_reject(st, TL_REJ_LIMIT, "open task table full (max_open_tasks)");
    /* TaskVine's DONE carries no JSON: the RETRIEVED measurement stands. */
    if (!(done && t->state == ST_RETRIEVED && njson == 0)) {
        struct box prev_limits = {0};
        if (t->measured) prev_limits = st->meas[t->measured - 1].limits;
        struct measured *dst = wq_measured_get(st, t);
        if (!dst) return wq_reject(st, TL_REJ_LIMIT, "out of memory");
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
    emit(st, r);
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
    struct run *run = run_for(st, pid, ts);
    if (!run) return wq_reject(st, TL_REJ_LIMIT, "too many runs or names");

    switch (state.p[0]) {
    case 'W':
        if (SPAN_IS(state, "WAITING")) return task_waiting(st, run, ts, id, p, end, false);
        if (SPAN_IS(state, "WAITING_RETRIEVAL")) {
            st->counters[WQC_TASK_WAITING_RETRIEVAL]++;
            struct task *t = task_for_state(st, run, id);
            if (!t) return wq_reject(st, TL_REJ_LIMIT, "open task table full (max_open_tasks)");
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
                if (bad.n) reject_bad_values(st, &bad);
            }
            st->counters[WQC_TASK_RUNNING]++;
            struct task *t = task_for_state(st, run, id);
            if (!t) return wq_reject(st, TL_REJ_LIMIT, "open task table full (max_open_tasks)");
            if (t->state == ST_RUNNING || t->state == ST_WAITING_RETRIEVAL) {
                /* RUNNING again without going back to the queue: treat the
                 * earlier attempt as lost. */
                struct tl_record *r = wq_task_record(st, t, TL_REC_TASK, ts);
                r->result = "REQUEUED";
                emit(st, r);
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
            if (!task_find(st, run_index(st, run), id) && recently_closed(st, run_index(st, run), id))
                return; /* the repeated line of one cancel */
            struct task *t = task_for_state(st, run, id);
            if (!t) return wq_reject(st, TL_REJ_LIMIT, "open task table full (max_open_tasks)");
            struct tl_record *r = wq_task_record(st, t, TL_REC_TASK, ts);
            r->result = "CANCELED";
            r->has_exit_code = false;
            r->final = true;
            r->state = "CANCELED"; /* the glossary's cancelled: neither done nor failed */
            emit(st, r);
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
        if (SPAN_IS(kind, "TRANSFER")) return parse_transfer(st, ts, pid, p, end);
        break;
    case 'W':
        if (SPAN_IS(kind, "WORKER")) return parse_worker(st, ts, pid, p, end);
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
    return close_open_tasks(st, NULL);
}
