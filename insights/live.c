/* The live picture of a run: see live.h. */
#include "insights/live.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/glossary.h"
#include "core/intern.h"
#include "core/sketch.h"

/* What ended in one minute of log time, for one category. */
struct minute {
    int64_t index; /* minutes since the epoch; INT64_MIN: empty */
    uint64_t done, failed;
    struct tl_sketch wall, rss;
    bool sketches; /* wall and rss initialized */
    double rss_sum, mem_alloc_sum, cpu_sum, core_alloc_sum;
    double cpu_used; /* CPU time of every task that ended (used cores x the minute) */
};

struct cat {
    struct minute ring[TL_LIVE_MINUTES];
    double rss_sum, mem_alloc_sum, cpu_sum, core_alloc_sum; /* the whole run */
    double cpu_used; /* the whole run's CPU time, every task that measured it */
    uint64_t causes[TL_CAUSE_COUNT]; /* the whole run's failed attempts by cause */
    int64_t running, waiting, snap_running, snap_waiting;
};

struct workflow_state {
    int32_t name;
    int64_t workers;
    double cores; /* NAN until a record says (a manager may never count its workers' cores) */
};

struct tl_live {
    struct tl_intern *names; /* categories, then workflows: ids index cats where a category */
    struct cat **cats;       /* by category id (NULL: a workflow name) */
    int32_t *order;          /* category ids, first seen first */
    size_t ncats, cap;
    int32_t other; /* the `_other` category, -1 until needed */
    struct workflow_state *wf;
    size_t nwf, capwf;
    int64_t data_now, wall_now;
    int64_t data_first; /* the earliest record time: where the whole run starts */
    /* the open-task snapshot */
    bool open_known, snap_known;
    double cores_in_use, snap_cores;
    bool cores_known, snap_cores_known;
    struct tl_live_straggler strag[TL_LIVE_STRAGGLERS], snap_strag[TL_LIVE_STRAGGLERS];
    double path_left[2], snap_path_left[2]; /* the longest an open task still needs, at its category's p50, p95 */
    size_t nstrag, snap_nstrag;
    struct tl_agg *agg_for_p95; /* the aggregator of the last tl_live_rows */
    uint64_t causes[TL_CAUSE_COUNT]; /* the run's failed attempts by cause */
    struct tl_live_failure fail[TL_LIVE_FAILURES], newest[TL_LIVE_FAILURES];
    uint64_t nfail;
    struct tl_sketch scratch_wall, scratch_rss;
    struct tl_live_row *rows;
    size_t rows_cap;
};

static const struct tl_sketch_opts minute_opts = {0.005, 1e-9, 4096, TL_LIVE_EXACT};

const char *tl_live_window_name(enum tl_live_window w)
{
    static const char *const names[] = {"5 min", "1 h", "run"};
    return w < TL_LIVE_NWINDOWS ? names[w] : "?";
}

struct tl_live *tl_live_new(void)
{
    struct tl_live *L = calloc(1, sizeof *L);
    if (!L) return NULL;
    struct tl_sketch_opts wide = minute_opts;
    wide.exact_limit = TL_LIVE_EXACT * TL_LIVE_MINUTES;
    if (!(L->names = tl_intern_new(16u << 20)) || tl_sketch_init(&L->scratch_wall, &wide) ||
        tl_sketch_init(&L->scratch_rss, &wide)) {
        tl_live_free(L);
        return NULL;
    }
    L->other = -1;
    return L;
}

void tl_live_free(struct tl_live *L)
{
    if (!L) return;
    for (size_t i = 0; i < L->cap; i++) {
        struct cat *c = L->cats[i];
        for (int k = 0; c && k < TL_LIVE_MINUTES; k++)
            if (c->ring[k].sketches) {
                tl_sketch_free(&c->ring[k].wall);
                tl_sketch_free(&c->ring[k].rss);
            }
        free(c);
    }
    free(L->cats);
    free(L->order);
    free(L->wf);
    free(L->rows);
    tl_sketch_free(&L->scratch_wall);
    tl_sketch_free(&L->scratch_rss);
    tl_intern_free(L->names);
    free(L);
}

/* ---------------------------------------------------------------- categories */

static struct cat *cat_new(struct tl_live *L, int32_t id)
{
    if ((size_t)id >= L->cap) {
        size_t cap = L->cap ? L->cap * 2 : 64;
        while (cap <= (size_t)id) cap *= 2;
        struct cat **v = realloc(L->cats, cap * sizeof *v);
        int32_t *o = v ? realloc(L->order, cap * sizeof *o) : NULL;
        if (v) L->cats = v;
        if (!o) return NULL;
        L->order = o;
        memset(L->cats + L->cap, 0, (cap - L->cap) * sizeof *v);
        L->cap = cap;
    }
    struct cat *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    for (int k = 0; k < TL_LIVE_MINUTES; k++) c->ring[k].index = INT64_MIN;
    c->running = c->waiting = c->snap_running = c->snap_waiting = 0;
    L->cats[id] = c;
    L->order[L->ncats++] = id;
    return c;
}

/* The category's state, made on first sight; past TL_LIVE_MAX_CATEGORIES,
 * `_other`'s. */
static struct cat *cat_of(struct tl_live *L, const char *name)
{
    if (!name) name = TL_ABSENT_NAME;
    int32_t id = tl_intern_find(L->names, name, strlen(name));
    if (id >= 0 && (size_t)id < L->cap && L->cats[id]) return L->cats[id];
    if (id < 0 && L->ncats < TL_LIVE_MAX_CATEGORIES) id = tl_intern(L->names, name, strlen(name));
    if (id < 0 || L->ncats >= TL_LIVE_MAX_CATEGORIES) {
        if (L->other < 0) {
            L->other = tl_intern(L->names, TL_AGG_OTHER, strlen(TL_AGG_OTHER));
            if (L->other < 0 || !cat_new(L, L->other)) return NULL;
        }
        return L->cats[L->other];
    }
    return cat_new(L, id);
}

/* ---------------------------------------------------------------- records */

static void copy_str(char *dst, size_t cap, const char *s)
{
    snprintf(dst, cap, "%s", s ? s : "");
}


static void note_failure(struct tl_live *L, const struct tl_record *r)
{
    struct tl_live_failure *f = &L->fail[L->nfail++ % TL_LIVE_FAILURES];
    f->time_ns = r->time_ns;
    f->task_id = r->task_id;
    f->attempt = r->attempt;
    f->exit_code = r->exit_code;
    f->has_exit = r->has_exit_code;
    f->final = r->final;
    f->cause = tl_failure_cause(r);
    L->causes[f->cause]++;
    struct cat *c = cat_of(L, r->category);
    if (c) c->causes[f->cause]++;
    copy_str(f->category, sizeof f->category, r->category && *r->category ? r->category : TL_ABSENT_NAME);
    copy_str(f->result, sizeof f->result, r->result);
    copy_str(f->host, sizeof f->host, r->host);
}

static struct minute *minute_of(struct cat *c, int64_t time_ns)
{
    int64_t index = time_ns / 60000000000LL;
    struct minute *m = &c->ring[(uint64_t)index % TL_LIVE_MINUTES];
    if (m->index == index) return m;
    if (m->index > index) return NULL; /* older than the ring holds */
    m->index = index;
    m->done = m->failed = 0;
    m->rss_sum = m->mem_alloc_sum = m->cpu_sum = m->core_alloc_sum = 0;
    if (m->sketches) {
        tl_sketch_reset(&m->wall);
        tl_sketch_reset(&m->rss);
    } else if (!tl_sketch_init(&m->wall, &minute_opts)) {
        if (tl_sketch_init(&m->rss, &minute_opts)) tl_sketch_free(&m->wall);
        else m->sketches = true;
    }
    return m->sketches ? m : NULL;
}

/* The sums behind the waste columns, over the attempts that say both. */
static void waste_sums(const struct tl_record *r, double *rss, double *mem_alloc, double *cpu,
                       double *core_alloc)
{
    if (tl_record_has(r, TL_M_MAX_RSS_BYTES) && tl_record_has(r, TL_M_ALLOC_MEMORY_BYTES) &&
        r->v[TL_M_ALLOC_MEMORY_BYTES] > 0) {
        *rss += r->v[TL_M_MAX_RSS_BYTES];
        *mem_alloc += r->v[TL_M_ALLOC_MEMORY_BYTES];
    }
    if (tl_record_has(r, TL_M_CPU_TIME_S) && tl_record_has(r, TL_M_ALLOC_CORES) &&
        tl_record_has(r, TL_M_WALL_TIME_S) && r->v[TL_M_ALLOC_CORES] > 0) {
        *cpu += r->v[TL_M_CPU_TIME_S];
        *core_alloc += r->v[TL_M_ALLOC_CORES] * r->v[TL_M_WALL_TIME_S];
    }
}

static void task_ended(struct tl_live *L, const struct tl_record *r)
{
    enum tl_verdict v = tl_attempt_verdict(r->result, r->has_exit_code, r->exit_code);
    bool failed = v == TL_VERDICT_FAILED;
    if (failed) note_failure(L, r);
    if (!r->final) return; /* as the aggregator: a task's figures are its last attempt's */
    if (v == TL_VERDICT_APART || tl_result_cached(r->result))
        return; /* neither done nor failed in this run (the glossary) */
    struct cat *c = cat_of(L, r->category);
    if (!c) return;
    waste_sums(r, &c->rss_sum, &c->mem_alloc_sum, &c->cpu_sum, &c->core_alloc_sum);
    double cpu = tl_record_has(r, TL_M_CPU_TIME_S) ? r->v[TL_M_CPU_TIME_S] : 0;
    c->cpu_used += cpu;
    if (r->time_ns <= 0) return;
    struct minute *m = minute_of(c, r->time_ns);
    if (!m) return;
    if (failed) m->failed++;
    else m->done++;
    if (tl_record_has(r, TL_M_WALL_TIME_S)) tl_sketch_add(&m->wall, r->v[TL_M_WALL_TIME_S]);
    if (tl_record_has(r, TL_M_MAX_RSS_BYTES)) tl_sketch_add(&m->rss, r->v[TL_M_MAX_RSS_BYTES]);
    waste_sums(r, &m->rss_sum, &m->mem_alloc_sum, &m->cpu_sum, &m->core_alloc_sum);
    m->cpu_used += cpu;
}

static void workflow_seen(struct tl_live *L, const struct tl_record *r)
{
    const char *name = r->workflow ? r->workflow : "";
    int32_t id = tl_intern(L->names, name, strlen(name));
    if (id < 0) return;
    struct workflow_state *w = NULL;
    for (size_t i = 0; i < L->nwf && !w; i++)
        if (L->wf[i].name == id) w = &L->wf[i];
    if (!w) {
        if (L->nwf == L->capwf) {
            size_t cap = L->capwf ? L->capwf * 2 : 8;
            struct workflow_state *v = realloc(L->wf, cap * sizeof *v);
            if (!v) return;
            L->wf = v;
            L->capwf = cap;
        }
        w = &L->wf[L->nwf++];
        *w = (struct workflow_state){.name = id, .cores = NAN};
    }
    if (tl_record_has(r, TL_M_WORKERS)) w->workers = (int64_t)r->v[TL_M_WORKERS];
    if (tl_record_has(r, TL_M_WORKER_CORES)) w->cores = r->v[TL_M_WORKER_CORES];
}

void tl_live_record(struct tl_live *L, const struct tl_record *r)
{
    if (r->time_ns > L->data_now && (r->kind == TL_REC_TASK || r->kind == TL_REC_WORKFLOW ||
                                     r->kind == TL_REC_WORKER || r->kind == TL_REC_MANAGER))
        L->data_now = r->time_ns;
    if (r->time_ns > 0 && (!L->data_first || r->time_ns < L->data_first) &&
        (r->kind == TL_REC_TASK || r->kind == TL_REC_WORKFLOW || r->kind == TL_REC_WORKER ||
         r->kind == TL_REC_MANAGER))
        L->data_first = r->time_ns;
    if (r->kind == TL_REC_TASK) task_ended(L, r);
    else if (r->kind == TL_REC_WORKFLOW) workflow_seen(L, r);
}

void tl_live_set_wall(struct tl_live *L, int64_t wall_ns)
{
    L->wall_now = wall_ns;
}

int64_t tl_live_now(const struct tl_live *L)
{
    if (L->wall_now && L->data_now && L->wall_now > L->data_now &&
        L->wall_now - L->data_now < TL_LIVE_LIVE_S * 1000000000LL)
        return L->wall_now; /* a live log: its clock is the wall clock */
    return L->data_now;
}

/* ---------------------------------------------------------------- open tasks */

void tl_live_open_begin(struct tl_live *L, struct tl_agg *agg)
{
    L->agg_for_p95 = agg;
    for (size_t i = 0; i < L->ncats; i++) {
        struct cat *c = L->cats[L->order[i]];
        c->snap_running = c->snap_waiting = 0;
    }
    L->snap_known = false;
    L->snap_cores = 0;
    L->snap_cores_known = false;
    L->snap_nstrag = 0;
    L->snap_path_left[0] = L->snap_path_left[1] = NAN;
}

/* The run-wide wall p95 of a category, from the aggregator (NAN: none). */
static double category_p95(struct tl_agg *agg, const char *category);
static double category_wall_q(struct tl_agg *agg, const char *category, double q);

/* What open task r still needs at its category's wall p50 and p95 (all of
 * it while it waits; what it has not run yet while it runs): the longest of
 * these is the critical path left, with unlimited workers. */
static void consider_path_left(struct tl_live *L, const struct tl_record *r, double elapsed_s)
{
    if (!L->agg_for_p95) return;
    static const double q[2] = {0.50, 0.95};
    for (int i = 0; i < 2; i++) {
        double need = category_wall_q(L->agg_for_p95, r->category, q[i]);
        if (!(need >= 0)) continue;
        double left = need > elapsed_s ? need - elapsed_s : 0;
        if (!(left <= L->snap_path_left[i])) L->snap_path_left[i] = left;
    }
}

static void consider_straggler(struct tl_live *L, const struct tl_record *r, double elapsed_s)
{
    if (!L->agg_for_p95) return;
    double p95 = category_p95(L->agg_for_p95, r->category);
    if (!(p95 > 0)) return;
    double ratio = elapsed_s / p95;
    size_t n = L->snap_nstrag;
    if (n == TL_LIVE_STRAGGLERS &&
        ratio <= L->snap_strag[n - 1].elapsed_s / L->snap_strag[n - 1].p95_s)
        return;
    size_t at = n < TL_LIVE_STRAGGLERS ? n++ : n - 1;
    while (at > 0 && L->snap_strag[at - 1].elapsed_s / L->snap_strag[at - 1].p95_s < ratio) {
        L->snap_strag[at] = L->snap_strag[at - 1];
        at--;
    }
    struct tl_live_straggler *s = &L->snap_strag[at];
    copy_str(s->category, sizeof s->category, r->category);
    copy_str(s->host, sizeof s->host, r->host);
    s->task_id = r->task_id;
    s->elapsed_s = elapsed_s;
    s->p95_s = p95;
    L->snap_nstrag = n;
}

void tl_live_open_clock(void *ctx, const struct tl_record *r)
{
    struct tl_live *L = ctx;
    if (r->time_ns > L->data_now) L->data_now = r->time_ns;
}

/* An open task's state as the view counts it: waiting (not started, or a
 * state that says so), running, or neither (its results are being taken:
 * Work Queue's RETRIEVED, before DONE). */
enum open_kind { OPEN_WAITING, OPEN_RUNNING, OPEN_ENDING };
static enum open_kind open_kind(const struct tl_record *r)
{
    static const char *const waiting[] = {"WAITING", "READY", "SUBMITTED", "NEW", "PENDING", NULL};
    static const char *const ending[] = {"RETRIEVED", "DONE", NULL};
    const char *s = r->state ? r->state : "";
    for (int i = 0; ending[i]; i++)
        if (!strcmp(s, ending[i])) return OPEN_ENDING;
    for (int i = 0; waiting[i]; i++)
        if (!strcmp(s, waiting[i])) return OPEN_WAITING;
    return r->start_ns != TL_NO_TIME && r->start_ns > 0 ? OPEN_RUNNING : OPEN_WAITING;
}

void tl_live_open_task(void *ctx, const struct tl_record *r)
{
    struct tl_live *L = ctx;
    struct cat *c = cat_of(L, r->category);
    if (!c) return;
    L->snap_known = true;
    enum open_kind kind = open_kind(r);
    if (kind == OPEN_ENDING) return;
    if (kind == OPEN_WAITING) {
        c->snap_waiting++;
        consider_path_left(L, r, 0);
        return;
    }
    c->snap_running++;
    double cores = tl_record_has(r, TL_M_ALLOC_CORES) ? r->v[TL_M_ALLOC_CORES]
                   : tl_record_has(r, TL_M_REQ_CORES) ? r->v[TL_M_REQ_CORES]
                                                      : NAN;
    if (!isnan(cores)) {
        L->snap_cores += cores;
        L->snap_cores_known = true;
    }
    int64_t now = tl_live_now(L);
    if (now > r->start_ns) consider_straggler(L, r, (double)(now - r->start_ns) / 1e9);
    consider_path_left(L, r, now > r->start_ns ? (double)(now - r->start_ns) / 1e9 : 0);
}

void tl_live_open_end(struct tl_live *L, bool source_can_say)
{
    for (size_t i = 0; i < L->ncats; i++) {
        struct cat *c = L->cats[L->order[i]];
        c->running = c->snap_running;
        c->waiting = c->snap_waiting;
    }
    L->open_known = source_can_say;
    L->cores_in_use = L->snap_cores;
    L->cores_known = L->snap_cores_known;
    memcpy(L->strag, L->snap_strag, sizeof L->strag);
    L->nstrag = L->snap_nstrag;
    memcpy(L->path_left, L->snap_path_left, sizeof L->path_left);
}

/* ---------------------------------------------------------------- rows */

static int metric_slot(const struct tl_agg *agg, enum tl_metric m)
{
    const struct tl_agg_opts *o = tl_agg_options(agg);
    for (int i = 0; i < o->nmetrics; i++)
        if (o->metrics[i] == (int)m) return i;
    return -1;
}

static struct tl_agg_group *group_of(struct tl_agg *agg, const char *category)
{
    struct tl_buf part = {0};
    struct tl_agg_group *found = NULL;
    for (size_t i = 0, n = tl_agg_ngroups(agg); !found && i < n; i++) {
        struct tl_agg_group *g = tl_agg_group(agg, i);
        const char *name = tl_agg_key_part(g->key, 0, &part);
        if (!strcmp(name ? name : TL_ABSENT_NAME, category)) found = g;
    }
    tl_buf_free(&part);
    return found;
}

static double sketch_q(struct tl_sketch *s, double q)
{
    return s && s->count ? tl_sketch_quantile(s, q) : NAN;
}

static double category_wall_q(struct tl_agg *agg, const char *category, double q)
{
    struct tl_agg_group *g = group_of(agg, category ? category : TL_ABSENT_NAME);
    int w = metric_slot(agg, TL_M_WALL_TIME_S);
    return g && w >= 0 ? sketch_q(&g->cum[w], q) : NAN;
}

static double category_p95(struct tl_agg *agg, const char *category)
{
    return category_wall_q(agg, category, 0.95);
}

static double waste(double used, double allocated)
{
    return allocated > 0 ? 1.0 - used / allocated : NAN;
}

/* Minutes from the run's first record to now. */
static double run_minutes(const struct tl_live *L)
{
    int64_t now = tl_live_now(L);
    return L->data_first && now > L->data_first ? (double)(now - L->data_first) / 60e9 : 0;
}

/* The minutes a window's rate divides by: the window, or the run's age
 * when the run is younger (a 20-minute-old run's 1-hour rate divided by 60
 * made its ETA six times too long). */
static double rate_minutes(const struct tl_live *L, int window)
{
    double age = run_minutes(L);
    return age > 0 && age < window ? age : window;
}

static void row_whole_run(const struct tl_live *L, struct tl_live_row *row, struct cat *c,
                          struct tl_agg *agg)
{
    struct tl_agg_group *g = group_of(agg, row->category);
    if (!g) return;
    /* the glossary's: a library instance, a cached or a cancelled task is
     * neither done nor failed in this run */
    struct tl_agg_apart ap = tl_agg_group_apart(g);
    uint64_t apart = ap.cached + ap.cancelled + ap.libraries;
    row->failed = g->failed;
    row->done = g->tasks - g->failed > apart ? g->tasks - g->failed - apart : 0;
    int w = metric_slot(agg, TL_M_WALL_TIME_S), m = metric_slot(agg, TL_M_MAX_RSS_BYTES);
    if (w >= 0) row->wall_p50 = sketch_q(&g->cum[w], 0.50), row->wall_p95 = sketch_q(&g->cum[w], 0.95);
    if (m >= 0) row->rss_p50 = sketch_q(&g->cum[m], 0.50), row->rss_p95 = sketch_q(&g->cum[m], 0.95);
    double span_min = run_minutes(L);
    row->per_min = span_min > 0 ? (double)(row->done + row->failed) / span_min : NAN;
    row->mem_waste = waste(c->rss_sum, c->mem_alloc_sum);
    row->core_waste = waste(c->cpu_sum, c->core_alloc_sum);
}

/* The minutes [now's minute - minutes + 1, now's minute]: merged. */
static void row_window(struct tl_live *L, struct tl_live_row *row, struct cat *c, int minutes)
{
    int64_t last = tl_live_now(L) / 60000000000LL, first = last - minutes + 1;
    tl_sketch_reset(&L->scratch_wall);
    tl_sketch_reset(&L->scratch_rss);
    double rss = 0, mem = 0, cpu = 0, cores = 0;
    for (int k = 0; k < TL_LIVE_MINUTES; k++) {
        struct minute *m = &c->ring[k];
        if (!m->sketches || m->index < first || m->index > last) continue;
        row->done += m->done;
        row->failed += m->failed;
        tl_sketch_merge(&L->scratch_wall, &m->wall);
        tl_sketch_merge(&L->scratch_rss, &m->rss);
        rss += m->rss_sum, mem += m->mem_alloc_sum, cpu += m->cpu_sum, cores += m->core_alloc_sum;
    }
    row->per_min = (double)(row->done + row->failed) / rate_minutes(L, minutes);
    row->wall_p50 = sketch_q(&L->scratch_wall, 0.50), row->wall_p95 = sketch_q(&L->scratch_wall, 0.95);
    row->rss_p50 = sketch_q(&L->scratch_rss, 0.50), row->rss_p95 = sketch_q(&L->scratch_rss, 0.95);
    row->mem_waste = waste(rss, mem);
    row->core_waste = waste(cpu, cores);
}

/* Every category the aggregator knows is one of ours too (the rows follow
 * the aggregator's groups, first seen first, then what only runs or waits). */
static void adopt_groups(struct tl_live *L, struct tl_agg *agg)
{
    struct tl_buf part = {0};
    for (size_t i = 0, n = tl_agg_ngroups(agg); i < n; i++) {
        const char *name = tl_agg_key_part(tl_agg_group(agg, i)->key, 0, &part);
        if (name && !tl_agg_group(agg, i)->samples) cat_of(L, name);
    }
    tl_buf_free(&part);
}

size_t tl_live_rows(struct tl_live *L, struct tl_agg *agg, enum tl_live_window w,
                    struct tl_live_row **rows)
{
    L->agg_for_p95 = agg;
    adopt_groups(L, agg);
    if (L->ncats > L->rows_cap) {
        struct tl_live_row *v = realloc(L->rows, L->ncats * sizeof *v);
        if (!v) return 0;
        L->rows = v;
        L->rows_cap = L->ncats;
    }
    for (size_t i = 0; i < L->ncats; i++) {
        struct cat *c = L->cats[L->order[i]];
        struct tl_live_row *row = &L->rows[i];
        *row = (struct tl_live_row){.category = tl_intern_str(L->names, L->order[i]),
                                    .running = L->open_known ? c->running : -1,
                                    .waiting = L->open_known ? c->waiting : -1,
                                    .per_min = NAN, .wall_p50 = NAN, .wall_p95 = NAN,
                                    .rss_p50 = NAN, .rss_p95 = NAN, .mem_waste = NAN,
                                    .core_waste = NAN};
        if (w == TL_LIVE_RUN) row_whole_run(L, row, c, agg);
        else row_window(L, row, c, w == TL_LIVE_5MIN ? 5 : 60);
    }
    *rows = L->rows;
    return L->ncats;
}

/* The glossary's used cores over the window: the CPU time of the tasks
 * that ended in it over its length (each task's CPU counted where it ended);
 * NAN when none measured CPU time. */
static double cores_used(const struct tl_live *L, enum tl_live_window w)
{
    int minutes = w == TL_LIVE_5MIN ? 5 : 60;
    int64_t last = tl_live_now(L) / 60000000000LL, first = last - minutes + 1;
    double cpu = 0;
    for (size_t i = 0; i < L->ncats; i++) {
        const struct cat *c = L->cats[L->order[i]];
        if (w == TL_LIVE_RUN) {
            cpu += c->cpu_used;
            continue;
        }
        for (int k = 0; k < TL_LIVE_MINUTES; k++)
            if (c->ring[k].sketches && c->ring[k].index >= first && c->ring[k].index <= last)
                cpu += c->ring[k].cpu_used;
    }
    double span_s = 60 * (w == TL_LIVE_RUN ? run_minutes(L) : rate_minutes(L, minutes));
    return cpu > 0 && span_s > 0 ? cpu / span_s : NAN;
}

void tl_live_workflow(const struct tl_live *L, enum tl_live_window w, struct tl_live_workflow *out)
{
    *out = (struct tl_live_workflow){.known = L->nwf > 0, .cores_in_use = NAN, .running = -1,
                                     .waiting = -1, .per_min = 0, .eta_s = NAN};
    out->cores_total = NAN; /* unknown unless some workflow says */
    for (size_t i = 0; i < L->nwf; i++) {
        out->workers += L->wf[i].workers;
        if (!isnan(L->wf[i].cores))
            out->cores_total = (isnan(out->cores_total) ? 0 : out->cores_total) + L->wf[i].cores;
    }
    if (L->cores_known) out->cores_in_use = L->cores_in_use;
    out->cores_used = cores_used(L, w);
    uint64_t ended = 0;
    for (size_t i = 0; i < L->ncats; i++) ended += L->rows[i].done + L->rows[i].failed;
    if (w == TL_LIVE_RUN) {
        double span = run_minutes(L);
        out->per_min = span > 0 ? (double)ended / span : 0;
    } else {
        out->per_min = (double)ended / rate_minutes(L, w == TL_LIVE_5MIN ? 5 : 60);
    }
    if (!L->open_known) return;
    out->running = out->waiting = 0;
    for (size_t i = 0; i < L->ncats; i++) {
        out->running += L->rows[i].running;
        out->waiting += L->rows[i].waiting;
    }
    int64_t open = out->running + out->waiting;
    if (open == 0) out->eta_s = 0;
    else if (out->per_min > 0) out->eta_s = (double)open / out->per_min * 60;
    out->path_left_p50_s = open ? L->path_left[0] : NAN;
    out->path_left_p95_s = open ? L->path_left[1] : NAN;
    out->eta_p50_s = fmax(out->eta_s, out->path_left_p50_s); /* fmax: a NAN side is left out */
    out->eta_p95_s = fmax(out->eta_s, out->path_left_p95_s);
    if (open == 0) out->eta_p50_s = out->eta_p95_s = 0;
}

const uint64_t *tl_live_causes(const struct tl_live *L)
{
    return L->causes;
}

const uint64_t *tl_live_category_causes(const struct tl_live *L, size_t i, const char **name)
{
    if (i >= L->ncats) return NULL;
    *name = tl_intern_str(L->names, L->order[i]);
    return L->cats[L->order[i]]->causes;
}

size_t tl_live_stragglers(const struct tl_live *L, const struct tl_live_straggler **out)
{
    *out = L->strag;
    return L->nstrag;
}

size_t tl_live_failures(struct tl_live *L, const struct tl_live_failure **out, size_t max,
                        uint64_t *total)
{
    /* newest first: out of the ring into their own order */
    size_t n = L->nfail < TL_LIVE_FAILURES ? (size_t)L->nfail : TL_LIVE_FAILURES;
    if (n > max) n = max;
    for (size_t i = 0; i < n; i++) L->newest[i] = L->fail[(L->nfail - 1 - i) % TL_LIVE_FAILURES];
    *out = L->newest;
    *total = L->nfail;
    return n;
}
