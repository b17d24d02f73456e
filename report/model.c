/* The report's model (insights.h, sinks/report.h): what the page draws,
 * computed from the records in one pass plus a little work at the end.
 *
 * Concurrency over time is exact per bin: a task's interval adds its time
 * inside each bin, so a bin shows the average number of tasks (or cores)
 * over the bin, and a task shorter than a bin still counts for its share.
 * That costs O(1) per task: partial bins at the two ends, and a difference
 * array for the full bins between. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/glossary.h"
#include "core/quantile.h"
#include "insights/insights.h"
#include "report/report.h"

struct darr {
    double *v;
    size_t n, cap;
};

struct parr {
    struct tl_report_point *v;
    size_t n, cap;
};

struct mgroup {
    struct tl_report_stage stage;
    struct darr dist[TL_REPORT_NDIST];
    struct parr pts[TL_REPORT_NRES];
    bool pts_requested[TL_REPORT_NRES]; /* a point's x was a request */
};

struct sseries { /* a sample series: every value's time and value */
    char *name;
    double *t, *v;
    size_t n, cap;
    double min, max;
    struct tl_report_point *pts; /* drawn, once finished */
};

#define MAX_SAMPLE_SERIES 256 /* told apart; more are counted, not kept */

struct span { /* one attempt on the clock */
    double submit, start, end, cores;
    int run; /* index into the model's runs; -1 beyond them */
};

struct fend { /* a task's last attempt's end, and its run */
    double end;
    int run;
};

#define MAX_RUN_NAMES 4096 /* runs told apart; more are counted, not drawn */

struct tl_report_model {
    size_t scatter_cap, nbins;
    struct tl_intern *names;
    struct mgroup *g;
    size_t ng, capg;
    const char *last_group; /* the category group_of found last (interned), and its id */
    int32_t last_group_id;
    struct tl_task_rows rows; /* for advise */
    struct tl_report_tasks *tasks; /* the task table's rows, or NULL (a baseline's) */
    struct tl_report_where *where; /* the critical path's rows, or NULL (a baseline's) */
    struct span *spans;
    size_t nspans, capspans;
    size_t times_from_files; /* records whose time is their file's: no span */
    size_t nextflow_tasks, nextflow_requests; /* Nextflow task records; those with a request */
    struct fend *final_ends;    /* end times of the tasks' last attempts */
    size_t nends, capends;
    char *run_names[MAX_RUN_NAMES]; /* "source workflow", first seen first */
    size_t run_tasks[MAX_RUN_NAMES];
    int nruns;
    bool runs_overflow;
    int last_run; /* run_of's last answer */
    struct sseries ss[MAX_SAMPLE_SERIES];
    size_t nss, ss_more;
    struct conn { /* the log's cores connected: (time, workflow, cores) */
        double t, v;
        int wf;
    } *conn;
    size_t nconn, capconn;
    char *wf_names[64]; /* workflows that said how many cores they had */
    int nwf;
    double *series_mem[TL_REPORT_MAX_RUNS + 1];
    int nseries;
    struct tl_report_group *out;
    struct tl_report_outlier top[TL_RANK_COUNT][TL_REPORT_NOUTLIERS];
    size_t ntop[TL_RANK_COUNT];
    struct tl_report_line *lines;
    size_t nlines, caplines, lines_more;
    struct tl_intern *line_names; /* apart from names: its ids are the groups' */
    struct tl_report_energy *energy;
    struct tl_report_energy_point *epts;
    size_t nepts, capepts, epts_more;
    bool oom;
};

static bool grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return true;
    size_t c = *cap ? *cap * 2 : 64;
    void *p = realloc(*v, c * size);
    if (!p) return false;
    *v = p;
    *cap = c;
    return true;
}

static void dpush(struct tl_report_model *m, struct darr *a, double x)
{
    if (!grow((void **)&a->v, &a->cap, a->n, sizeof *a->v)) {
        m->oom = true;
        return;
    }
    a->v[a->n++] = x;
}

/* An attempt that measured its energy (codecarbon), kept whole for the
 * energy section's outliers and power over time. */
static void keep_energy_point(struct tl_report_model *m, const struct tl_record *r)
{
    if (!tl_record_has(r, TL_M_ENERGY_J)) return;
    if (m->nepts >= TL_REPORT_MAX_ENERGY_POINTS) {
        m->epts_more++;
        return;
    }
    if (!grow((void **)&m->epts, &m->capepts, m->nepts, sizeof *m->epts)) {
        m->oom = true;
        return;
    }
    struct tl_report_energy_point *p = &m->epts[m->nepts++];
    *p = (struct tl_report_energy_point){
        .end = r->time_ns ? (double)r->time_ns / 1e9 : NAN, .wall = tl_record_value(r, TL_M_WALL_TIME_S),
        .energy_j = r->v[TL_M_ENERGY_J], .kg = tl_record_value(r, TL_M_EMISSIONS_KG),
        .cpu_w = tl_record_value(r, TL_M_CPU_POWER_W), .gpu_w = tl_record_value(r, TL_M_GPU_POWER_W),
        .ram_w = tl_record_value(r, TL_M_RAM_POWER_W), .category = r->category};
    if (r->name || r->task_key) snprintf(p->id, sizeof p->id, "%s", r->name ? r->name : r->task_key);
    else if (r->task_id >= 0) snprintf(p->id, sizeof p->id, "%lld", (long long)r->task_id);
    if (p->category) { /* the record's strings are borrowed: keep the interned name */
        int32_t id = tl_intern(m->names, p->category, strlen(p->category));
        p->category = id >= 0 ? tl_intern_str(m->names, id) : "";
    }
}

/* A sum that stays NAN until a value comes. */
static void add_to(double *sum, const struct tl_record *r, enum tl_metric m)
{
    if (tl_record_has(r, m)) *sum = (isfinite(*sum) ? *sum : 0) + r->v[m];
}

/* Spark's stage figures: a task's last attempt that recorded JVM GC time. */
static void add_stage(struct tl_report_stage *s, const struct tl_record *r)
{
    if (!tl_record_has(r, TL_M_JVM_GC_TIME_S)) return;
    if (!s->has)
        *s = (struct tl_report_stage){true, NAN, NAN, NAN, NAN, NAN, NAN};
    add_to(&s->run_s, r, TL_M_WALL_TIME_S);
    add_to(&s->gc_s, r, TL_M_JVM_GC_TIME_S);
    add_to(&s->shuffle_read, r, TL_M_BYTES_RECEIVED);
    add_to(&s->shuffle_write, r, TL_M_BYTES_SENT);
    add_to(&s->input, r, TL_M_BYTES_READ);
    add_to(&s->output, r, TL_M_BYTES_WRITTEN);
}

/* A profiled line (a record with hits), names interned. */
static void keep_line(struct tl_report_model *m, const struct tl_record *r)
{
    if (m->nlines >= TL_REPORT_MAX_LINES) {
        m->lines_more++;
        return;
    }
    if (!grow((void **)&m->lines, &m->caplines, m->nlines, sizeof *m->lines)) {
        m->oom = true;
        return;
    }
    if (!m->line_names && !(m->line_names = tl_intern_new((size_t)256 << 20))) {
        m->oom = true;
        return;
    }
    const char *fn = r->category ? r->category : "(none)";
    int32_t f = tl_intern(m->line_names, fn, strlen(fn));
    int32_t c = r->task_key ? tl_intern(m->line_names, r->task_key, strlen(r->task_key)) : -1;
    if (f < 0) {
        m->oom = true;
        return;
    }
    m->lines[m->nlines++] = (struct tl_report_line){
        .function = tl_intern_str(m->line_names, f), .code = c >= 0 ? tl_intern_str(m->line_names, c) : NULL,
        .lineno = (long)r->task_id, .hits = r->v[TL_M_HITS],
        .seconds = tl_record_has(r, TL_M_WALL_TIME_S) ? r->v[TL_M_WALL_TIME_S] : 0};
}

static int cmp_line(const void *a, const void *b)
{
    const struct tl_report_line *x = a, *y = b;
    if (x->function_s != y->function_s) return x->function_s > y->function_s ? -1 : 1;
    int c = strcmp(x->function, y->function);
    if (c) return c;
    return (x->lineno > y->lineno) - (x->lineno < y->lineno);
}

/* Each function's total (its lines' sum), then the functions by total. */
static void finish_lines(struct tl_report_model *m, struct tl_report_page *pg)
{
    size_t i = 0;
    if (!m->nlines) return; /* qsort takes no NULL, even for 0 items */
    qsort(m->lines, m->nlines, sizeof *m->lines, cmp_line); /* groups each function's lines */
    while (i < m->nlines) {
        size_t j = i;
        double total = 0;
        while (j < m->nlines && m->lines[j].function == m->lines[i].function) total += m->lines[j++].seconds;
        for (size_t k = i; k < j; k++) m->lines[k].function_s = total;
        i = j;
    }
    qsort(m->lines, m->nlines, sizeof *m->lines, cmp_line);
    tl_report_line_sources(m->lines, m->nlines, pg, m->line_names, &pg->sources);
    pg->lines = m->lines;
    pg->nlines = m->nlines;
    pg->profile_only = !m->rows.n && !m->nss; /* lines only: nothing task-shaped to show */
    pg->lines_more = m->lines_more;
}

/* Per category, the estimate and the measurement, when something measured. */
static bool finish_energy(struct tl_report_model *m, struct tl_report_page *pg)
{
    bool measured = false;
    for (size_t i = 0; i < m->rows.n && !measured; i++) measured = isfinite(m->rows.r[i].v[TL_V_ENERGY]);
    tl_power_default(&pg->power);
    if (!measured) return true;
    if (!(m->energy = calloc(m->rows.cats.n + 1, sizeof *m->energy))) return false;
    for (size_t k = 0; k < m->rows.cats.n; k++) m->energy[k].name = m->rows.cats.s[k];
    for (size_t i = 0; i < m->rows.n; i++)
        tl_energy_add(&m->energy[m->rows.r[i].cat].e, &m->rows.r[i], &pg->power);
    pg->energy = m->energy;
    pg->nenergy = m->rows.cats.n;
    pg->energy_points = m->epts;
    pg->nenergy_points = m->nepts;
    pg->energy_points_more = m->epts_more;
    return true;
}

struct tl_report_model *tl_report_model_new(size_t scatter_cap, size_t nbins, bool task_list)
{
    struct tl_report_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->scatter_cap = scatter_cap;
    m->nbins = nbins;
    if (!(m->names = tl_intern_new((size_t)64 << 20)) || (task_list && !((m->tasks = tl_report_tasks_new()) && (m->where = tl_report_where_new())))) {
        tl_report_model_free(m);
        return NULL;
    }
    return m;
}

static struct mgroup *group_of(struct tl_report_model *m, const char *category)
{
    const char *name = category ? category : "(none)";
    int32_t id = m->last_group && !strcmp(name, m->last_group) ? m->last_group_id /* most records repeat it */
                                                                : tl_intern(m->names, name, strlen(name));
    if (id < 0) return NULL;
    m->last_group = tl_intern_str(m->names, id);
    m->last_group_id = id;
    if ((size_t)id >= m->ng) {
        if (!grow((void **)&m->g, &m->capg, (size_t)id, sizeof *m->g)) return NULL;
        memset(&m->g[m->ng], 0, ((size_t)id + 1 - m->ng) * sizeof *m->g);
        m->ng = (size_t)id + 1;
    }
    return &m->g[id];
}

/* How a task is named in the outlier tables: its own key or id, its data
 * id (LSST), and where it ran (Chrome: pid/tid). */
static void describe(const struct tl_record *r, char *out, size_t cap)
{
    int n = 0;
    if (r->task_key) n = snprintf(out, cap, "%s", r->task_key);
    else if (r->task_id >= 0) n = snprintf(out, cap, "task %lld", (long long)r->task_id);
    for (int i = 0; i < r->n_tags && n >= 0 && (size_t)n < cap; i++)
        n += snprintf(out + n, cap - (size_t)n, "%s%s=%s", n ? " " : "", r->tags[i].key,
                      r->tags[i].value);
    if (n >= 0 && (size_t)n < cap && (r->host || r->worker))
        n += snprintf(out + n, cap - (size_t)n, "%s%s%s%s", n ? " on " : "on ",
                      r->host ? r->host : "", r->host && r->worker ? "/" : "",
                      r->worker ? r->worker : "");
    if (n >= 0 && (size_t)n < cap && r->attempt > 1)
        snprintf(out + n, cap - (size_t)n, " (attempt %d)", (int)r->attempt);
    if (!n) snprintf(out, cap, "line %llu", (unsigned long long)r->line);
}

/* Keeps the TL_REPORT_NOUTLIERS largest values, largest first. */
static void rank(struct tl_report_model *m, int k, const struct tl_record *r, double v)
{
    size_t n = m->ntop[k];
    struct tl_report_outlier *t = m->top[k];
    if (!(v > 0) || (n == TL_REPORT_NOUTLIERS && v <= t[n - 1].value)) return;
    size_t at = n < TL_REPORT_NOUTLIERS ? n : n - 1;
    while (at > 0 && t[at - 1].value < v) {
        if (at < TL_REPORT_NOUTLIERS) t[at] = t[at - 1];
        at--;
    }
    describe(r, t[at].id, sizeof t[at].id);
    const char *name = r->category ? r->category : "(none)";
    int32_t id = tl_intern_find(m->names, name, strlen(name)); /* group_of interned it */
    t[at].group = id >= 0 ? tl_intern_str(m->names, id) : "(none)";
    t[at].value = v;
    if (n < TL_REPORT_NOUTLIERS) m->ntop[k] = n + 1;
}

static void add_point(struct tl_report_model *m, struct mgroup *g, int res,
                      const struct tl_record *r, enum tl_metric alloc, enum tl_metric req,
                      double used)
{
    if (!(used >= 0)) return;
    bool requested = !tl_record_has(r, alloc);
    if (requested && !tl_record_has(r, req)) return;
    struct parr *a = &g->pts[res];
    if (!grow((void **)&a->v, &a->cap, a->n, sizeof *a->v)) {
        m->oom = true;
        return;
    }
    a->v[a->n++] = (struct tl_report_point){(float)r->v[requested ? req : alloc], (float)used};
    g->pts_requested[res] |= requested;
}

/* The run of r: its source and workflow, interned in first-seen order. */
static int find_run(struct tl_report_model *m, const struct tl_record *r)
{
    char key[512];
    snprintf(key, sizeof key, "%s %s", r->source ? r->source : "-", r->workflow ? r->workflow : "-");
    for (int i = m->nruns - 1; i >= 0; i--) /* the last one first: runs come in bursts */
        if (!strcmp(m->run_names[i], key)) return i;
    if (m->nruns == MAX_RUN_NAMES) {
        m->runs_overflow = true;
        return -1;
    }
    if (!(m->run_names[m->nruns] = strdup(key))) return -1;
    return m->nruns++;
}

/* Whether run name ("source workflow") is r's, without building it. */
static bool is_run_of(const char *name, const struct tl_record *r)
{
    const char *src = r->source ? r->source : "-", *wf = r->workflow ? r->workflow : "-";
    size_t n = strlen(src);
    return !strncmp(name, src, n) && name[n] == ' ' && !strcmp(name + n + 1, wf);
}

/* find_run, the record before's run tried first: a whole log is one run,
 * so most tasks cost one compare here, not a snprintf and a search. */
static int run_of(struct tl_report_model *m, const struct tl_record *r)
{
    if (m->last_run >= 0 && m->last_run < m->nruns && is_run_of(m->run_names[m->last_run], r))
        return m->last_run;
    m->last_run = find_run(m, r);
    return m->last_run;
}

static void add_span(struct tl_report_model *m, const struct tl_record *r)
{
    if (!r->time_ns) return;
    if (r->time_from_file) { /* a file's time is not when the task ran: no span from it */
        m->times_from_files++;
        return;
    }
    if (tl_result_cached(r->result)) return; /* an earlier run's: not in this run's makespan */
    if (tl_result_library(r->result)) return; /* a library instance runs beside the tasks */
    int run = run_of(m, r);
    double end = (double)r->time_ns / 1e9;
    double wall = tl_record_has(r, TL_M_WALL_TIME_S) ? r->v[TL_M_WALL_TIME_S] : 0;
    double queue = tl_record_has(r, TL_M_QUEUE_TIME_S) ? r->v[TL_M_QUEUE_TIME_S] : 0;
    double cores = tl_record_has(r, TL_M_ALLOC_CORES) ? r->v[TL_M_ALLOC_CORES]
                   : tl_record_has(r, TL_M_CORES)     ? r->v[TL_M_CORES]
                                                      : 1;
    if (!grow((void **)&m->spans, &m->capspans, m->nspans, sizeof *m->spans)) {
        m->oom = true;
        return;
    }
    m->spans[m->nspans++] = (struct span){end - wall - queue, end - wall, end, cores, run};
    if (!r->final) return;
    if (!grow((void **)&m->final_ends, &m->capends, m->nends, sizeof *m->final_ends)) {
        m->oom = true;
        return;
    }
    m->final_ends[m->nends++] = (struct fend){end, run};
    if (run >= 0) m->run_tasks[run]++;
}

/* The cores a workflow's workers had, when its log says. */
static void add_connected(struct tl_report_model *m, const struct tl_record *r)
{
    if (!r->time_ns || !tl_record_has(r, TL_M_WORKER_CORES)) return;
    const char *wf = r->workflow ? r->workflow : "";
    int w = 0;
    while (w < m->nwf && strcmp(m->wf_names[w], wf)) w++;
    if (w == m->nwf) {
        if (m->nwf == 64 || !(m->wf_names[w] = strdup(wf))) return; /* beyond: not drawn */
        m->nwf++;
    }
    if (!grow((void **)&m->conn, &m->capconn, m->nconn, sizeof *m->conn)) {
        m->oom = true;
        return;
    }
    m->conn[m->nconn++] = (struct conn){(double)r->time_ns / 1e9, r->v[TL_M_WORKER_CORES], w};
}

/* A resource sample: kept in its series (the first MAX_SAMPLE_SERIES). */
static void add_sample(struct tl_report_model *m, const struct tl_record *r)
{
    if (!r->time_ns || !tl_record_has(r, TL_M_SAMPLE_VALUE) || !r->category) return;
    size_t i = 0;
    while (i < m->nss && strcmp(m->ss[i].name, r->category)) i++;
    if (i == m->nss) {
        if (m->nss == MAX_SAMPLE_SERIES) {
            m->ss_more++;
            return;
        }
        if (!(m->ss[i].name = strdup(r->category))) return;
        m->ss[i].min = INFINITY;
        m->ss[i].max = -INFINITY;
        m->nss++;
    }
    struct sseries *s = &m->ss[i];
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        double *t = realloc(s->t, cap * sizeof *t);
        if (t) s->t = t;
        double *v = t ? realloc(s->v, cap * sizeof *v) : NULL;
        if (!v) {
            m->oom = true;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    double x = r->v[TL_M_SAMPLE_VALUE];
    s->t[s->n] = (double)r->time_ns / 1e9;
    s->v[s->n++] = x;
    s->min = fmin(s->min, x);
    s->max = fmax(s->max, x);
}

void tl_report_model_add(void *ctx, const struct tl_record *r)
{
    struct tl_report_model *m = ctx;
    if (m->oom) return;
    if (r->kind == TL_REC_SAMPLE) {
        add_sample(m, r);
        return;
    }
    if (r->kind == TL_REC_WORKFLOW) {
        add_connected(m, r);
        return;
    }
    if (r->kind == TL_REC_EDGE) tl_report_where_add(m->where, r); /* Chrome flows */
    if (r->kind != TL_REC_TASK) return;
    if (tl_record_has(r, TL_M_HITS)) { /* a profiled line: not a task on the clock */
        keep_line(m, r);
        return;
    }
    struct mgroup *g = group_of(m, r->category);
    if (!g) {
        m->oom = true;
        return;
    }
    tl_task_rows_add(&m->rows, r);
    if (m->tasks) tl_report_tasks_add(m->tasks, r);
    tl_report_where_add(m->where, r);
    keep_energy_point(m, r);
    if (r->source && !strcmp(r->source, "nextflow")) { /* a trace without cpus, memory, time? */
        m->nextflow_tasks++;
        m->nextflow_requests += tl_record_has(r, TL_M_REQ_CORES) || tl_record_has(r, TL_M_REQ_MEMORY_BYTES) ||
                                tl_record_has(r, TL_M_REQ_WALL_TIME_S);
    }
    if (r->final) add_stage(&g->stage, r);
    if (r->final)
        for (int d = 0; d < TL_REPORT_NDIST; d++)
            if (tl_record_has(r, tl_report_dist_metric[d]))
                dpush(m, &g->dist[d], r->v[tl_report_dist_metric[d]]);
    double cores_used = tl_record_has(r, TL_M_CORES) ? r->v[TL_M_CORES]
                        : tl_record_has(r, TL_M_CPU_TIME_S) && r->v[TL_M_WALL_TIME_S] > 0
                            ? r->v[TL_M_CPU_TIME_S] / r->v[TL_M_WALL_TIME_S]
                            : NAN;
    add_point(m, g, TL_REPORT_CORES, r, TL_M_ALLOC_CORES, TL_M_REQ_CORES, cores_used);
    add_point(m, g, TL_REPORT_MEM, r, TL_M_ALLOC_MEMORY_BYTES, TL_M_REQ_MEMORY_BYTES,
              tl_record_has(r, TL_M_MAX_RSS_BYTES) ? r->v[TL_M_MAX_RSS_BYTES] : NAN);
    add_span(m, r);
    if (tl_record_has(r, TL_M_WALL_TIME_S)) rank(m, TL_RANK_WALL, r, r->v[TL_M_WALL_TIME_S]);
    if (tl_record_has(r, TL_M_MAX_RSS_BYTES)) rank(m, TL_RANK_MEM, r, r->v[TL_M_MAX_RSS_BYTES]);
    if (r->final && r->attempt > 1) rank(m, TL_RANK_RETRIES, r, r->attempt);
}

/* ---------------------------------------------------------------- over time */

/* Adds weight over [a, b) to the per-bin averages (acc: partial bins, diff:
 * the full bins between, as a difference array). */
static void spread(double *acc, double *diff, const struct tl_report_series *s, double a,
                   double b, double w)
{
    if (!(b > a)) return;
    double fa = (a - s->t0) / s->dt, fb = (b - s->t0) / s->dt;
    size_t n = s->nbins;
    size_t ba = fa < 0 ? 0 : (size_t)fa, bb = fb < 0 ? 0 : (size_t)fb;
    if (ba >= n) ba = n - 1;
    if (bb >= n) bb = n - 1;
    if (ba == bb) {
        acc[ba] += (fb - fa) * w;
        return;
    }
    acc[ba] += ((double)(ba + 1) - fa) * w;
    acc[bb] += (fb - (double)bb) * w;
    diff[ba + 1] += w;
    diff[bb] -= w;
}

static void finish_prefix(double *acc, double *diff, size_t n)
{
    double run = 0;
    for (size_t i = 0; i < n; i++) {
        run += diff[i];
        acc[i] += run;
    }
}

static int cmp_conn(const void *a, const void *b)
{
    double x = ((const struct conn *)a)->t, y = ((const struct conn *)b)->t;
    return x < y ? -1 : x > y;
}

/* Cores connected at each bin's middle: the sum over workflows (or the
 * one of `only`) of the last value each had said by then (NAN before any
 * said). */
static void connected(struct tl_report_model *m, struct tl_report_series *s, const char *only)
{
    double last[64], sum = 0;
    bool any = false;
    for (int w = 0; w < 64; w++) last[w] = 0;
    if (m->nconn) qsort(m->conn, m->nconn, sizeof *m->conn, cmp_conn);
    size_t c = 0;
    for (size_t i = 0; i < s->nbins; i++) {
        double mid = s->t0 + s->dt * ((double)i + 0.5);
        for (; c < m->nconn && m->conn[c].t <= mid; c++) {
            if (only && strcmp(m->wf_names[m->conn[c].wf], only)) continue;
            sum += m->conn[c].v - last[m->conn[c].wf];
            last[m->conn[c].wf] = m->conn[c].v;
            any = true;
        }
        s->cores_connected[i] = any ? sum : NAN;
    }
}

static int cmp_fend(const void *a, const void *b)
{
    double x = ((const struct fend *)a)->end, y = ((const struct fend *)b)->end;
    return x < y ? -1 : x > y;
}

/* The series of one run (run < 0: of every task), on its own clock. */
static bool series(struct tl_report_model *m, struct tl_report_series *s, int run)
{
    memset(s, 0, sizeof *s);
    double t0 = INFINITY, t1 = -INFINITY;
    for (size_t i = 0; i < m->nspans; i++) {
        if (run >= 0 && m->spans[i].run != run) continue;
        t0 = fmin(t0, fmin(m->spans[i].submit, m->spans[i].end));
        t1 = fmax(t1, m->spans[i].end);
    }
    if (!(t1 >= t0) || m->nseries > TL_REPORT_MAX_RUNS) return true;
    s->nbins = m->nbins;
    s->t0 = t0;
    s->dt = t1 > t0 ? (t1 - t0) / (double)s->nbins : 1;
    size_t n = s->nbins;
    double *all = m->series_mem[m->nseries++] = calloc(8 * n + 1, sizeof *all);
    if (!all) return false;
    s->waiting = all;
    s->running = all + n;
    s->cores = all + 2 * n;
    s->done = all + 3 * n;
    s->cores_connected = all + 4 * n;
    double *dw = all + 5 * n, *dr = all + 6 * n, *dc = all + 7 * n;
    for (size_t i = 0; i < m->nspans; i++) {
        const struct span *sp = &m->spans[i];
        if (run >= 0 && sp->run != run) continue;
        spread(s->waiting, dw, s, sp->submit, sp->start, 1);
        spread(s->running, dr, s, sp->start, sp->end, 1);
        spread(s->cores, dc, s, sp->start, sp->end, sp->cores);
    }
    finish_prefix(s->waiting, dw, n);
    finish_prefix(s->running, dr, n);
    finish_prefix(s->cores, dc, n);
    /* the run's final ends, in order (sorted once, all runs together) */
    double *ends = malloc((m->nends + 1) * sizeof *ends);
    if (!ends) return false;
    size_t ne = 0;
    for (size_t i = 0; i < m->nends; i++)
        if (run < 0 || m->final_ends[i].run == run) ends[ne++] = m->final_ends[i].end;
    s->total_tasks = (double)ne;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) { /* finished by the end of bin i */
        double edge = t0 + s->dt * (double)(i + 1);
        while (k < ne && ends[k] <= edge) k++;
        s->done[i] = (double)(i + 1 == n ? ne : k);
    }
    static const double pct[3] = {0.5, 0.9, 0.99};
    for (int j = 0; j < 3; j++) { /* the ceil(p n)-th task to finish */
        size_t idx = ne ? (size_t)ceil(pct[j] * (double)ne - 1e-9) : 0;
        s->t_done[j] = ne ? ends[(idx ? idx : 1) - 1] - t0 : NAN;
    }
    free(ends);
    /* a run's cores connected: its workflow's (the run key is "source workflow") */
    const char *wf = run >= 0 ? strchr(m->run_names[run], ' ') + 1 : NULL;
    connected(m, s, wf);
    return true;
}

static int cmp_run_tasks(const void *a, const void *b, void *ctx)
{
    const size_t *t = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    return t[x] != t[y] ? (t[x] < t[y] ? 1 : -1) : x - y;
}

/* Every task's series, and each run's when there are several: the runs
 * with most tasks, on their own clocks. */
static bool all_series(struct tl_report_model *m, struct tl_report_page *pg)
{
    if (m->nends) qsort(m->final_ends, m->nends, sizeof *m->final_ends, cmp_fend);
    if (!series(m, &pg->series, -1)) return false;
    if (m->nruns < 2) return true;
    int order[MAX_RUN_NAMES];
    for (int i = 0; i < m->nruns; i++) order[i] = i;
    qsort_r(order, (size_t)m->nruns, sizeof *order, cmp_run_tasks, m->run_tasks);
    for (int i = 0; i < m->nruns && pg->nruns < TL_REPORT_MAX_RUNS; i++) {
        if (!m->run_tasks[order[i]]) continue;
        if (!series(m, &pg->runs[pg->nruns], order[i])) return false;
        pg->run_names[pg->nruns] = m->run_names[order[i]];
        pg->run_tasks[pg->nruns++] = m->run_tasks[order[i]];
    }
    for (int i = 0; i < m->nruns; i++) pg->runs_more += m->run_tasks[i] > 0;
    pg->runs_more -= pg->nruns;
    if (m->runs_overflow) pg->runs_more++;
    return true;
}

bool tl_report_model_idle(void *ctx)
{
    struct tl_report_model *m = ctx;
    return m->tasks && tl_report_tasks_idle(m->tasks);
}

/* ---------------------------------------------------------------- the page */

/* Every k-th point, so the drawing keeps the shape of all of them. */
static void sample(struct parr *a, size_t cap)
{
    if (a->n <= cap) return;
    size_t k = (a->n + cap - 1) / cap, j = 0;
    for (size_t i = 0; i < a->n; i += k) a->v[j++] = a->v[i];
    a->n = j;
}

static void advice_of(const struct tl_report_model *m, const char *name,
                      const struct tl_advise_opts *ao, double *tmp, struct tl_report_group *out)
{
    int32_t found = tl_task_rows_category(&m->rows, name);
    if (found >= 0) {
        size_t k = (size_t)found;
        struct tl_cat_advice ca;
        tl_advise_category(&m->rows, (int32_t)k, ao, tmp, &ca);
        out->ca = ca;
        out->has_ca = true;
        for (size_t j = m->rows.at[k]; j < m->rows.at[k + 1]; j++) {
            const struct tl_task_row *row = &m->rows.r[m->rows.by_cat[j]];
            if (row->cached) { /* an earlier run's work: counted apart */
                out->cached += row->final;
                continue;
            }
            if (row->library) { /* a library instance serves tasks, it is not one */
                out->libraries += row->final;
                continue;
            }
            out->finals += row->final;
            out->failed += row->final && row->failed;
            out->cancelled += row->final && row->cancelled;
            if (row->final && isfinite(row->v[TL_V_CPU])) { /* CPU-hours: the tasks', as summary */
                out->cpu_s += row->v[TL_V_CPU];
                out->with_cpu++;
            }
        }
        tl_report_usage_of(&m->rows, k, tmp, out->usage);
        static const int res[TL_REPORT_NRES] = {TL_RES_CORES, TL_RES_MEM};
        for (int r = 0; r < TL_REPORT_NRES; r++) {
            const struct tl_advice *a = &ca.a[res[r]];
            out->advice[r] = (struct tl_report_advice){
                a->n_used > 0, a->used_q, a->rec, a->alloc, a->waste, a->waste_rec,
                a->n_used ? (double)a->exceed / (double)a->n_used : NAN, a->n_used, a->n_waste};
        }
        return;
    }
}

static int cmp_ss(const void *a, const void *b)
{
    const struct sseries *x = *(const struct sseries *const *)a, *y = *(const struct sseries *const *)b;
    return x->n != y->n ? (x->n < y->n ? 1 : -1) : strcmp(x->name, y->name);
}

struct tv {
    double t, v;
};

static int cmp_tv(const void *a, const void *b)
{
    double x = ((const struct tv *)a)->t, y = ((const struct tv *)b)->t;
    return x < y ? -1 : x > y;
}

/* One series' points in time order, every k-th past TL_REPORT_SERIES_POINTS
 * (the first and the last kept), in s after its first sample. */
static bool series_points(struct sseries *s, size_t *npts)
{
    struct tv *a = malloc(s->n * sizeof *a);
    size_t k = (s->n + TL_REPORT_SERIES_POINTS - 1) / TL_REPORT_SERIES_POINTS, n = 0;
    s->pts = malloc((s->n / k + 2) * sizeof *s->pts);
    if (!a || !s->pts) {
        free(a);
        return false;
    }
    for (size_t j = 0; j < s->n; j++) a[j] = (struct tv){s->t[j], s->v[j]};
    qsort(a, s->n, sizeof *a, cmp_tv);
    for (size_t j = 0; j < s->n; j += k)
        s->pts[n++] = (struct tl_report_point){(float)(a[j].t - a[0].t), (float)a[j].v};
    if ((s->n - 1) % k)
        s->pts[n++] = (struct tl_report_point){(float)(a[s->n - 1].t - a[0].t), (float)a[s->n - 1].v};
    free(a);
    *npts = n;
    return true;
}

/* The sample series with most samples, as points over time. */
static bool sample_series(struct tl_report_model *m, struct tl_report_page *pg)
{
    struct sseries *order[MAX_SAMPLE_SERIES];
    for (size_t i = 0; i < m->nss; i++) order[i] = &m->ss[i];
    qsort(order, m->nss, sizeof *order, cmp_ss);
    for (size_t i = 0; i < m->nss && pg->nsamples < TL_REPORT_MAX_SAMPLE_SERIES; i++) {
        struct sseries *s = order[i];
        size_t n;
        if (!s->n || s->min == s->max) { /* constant: said, not drawn */
            pg->samples_constant += s->n > 0;
            continue;
        }
        if (!series_points(s, &n)) return false;
        double scale = 1;
        enum tl_unit unit = tl_report_sample_unit(s->name, &scale);
        pg->samples[pg->nsamples++] = (struct tl_report_samples){s->name, unit, scale, s->pts, n, s->n, s->min, s->max};
    }
    pg->samples_more = m->nss - pg->nsamples - pg->samples_constant + m->ss_more;
    return true;
}

bool tl_report_model_finish(struct tl_report_model *m, const struct tl_advise_opts *ao,
                            struct tl_report_page *pg)
{
    if (m->oom || (m->tasks && tl_report_tasks_oom(m->tasks)) || tl_report_where_oom(m->where)) return false;
    tl_report_tasks_start(m->tasks); /* on the second core while the rest is made (bench/RESULTS.md) */
    tl_report_where_start(m->where);
    pg->where = m->where;
    if (!tl_task_rows_done(&m->rows)) return false;
    pg->tasks = m->tasks;
    m->out = calloc(m->ng + 1, sizeof *m->out);
    double *tmp = malloc(tl_advise_tmp_len(&m->rows) * sizeof *tmp); /* advice_of's columns */
    if (!m->out || !tmp) {
        free(tmp);
        return false;
    }
    for (size_t i = 0; i < m->ng; i++) {
        struct mgroup *g = &m->g[i];
        struct tl_report_group *o = &m->out[i];
        o->name = tl_intern_str(m->names, (int32_t)i);
        o->stage = g->stage;
        for (int d = 0; d < TL_REPORT_NDIST; d++) {
            tl_sort_doubles(g->dist[d].v, g->dist[d].n);
            o->dist[d] = (struct tl_report_dist){g->dist[d].v, g->dist[d].n};
        }
        for (int r = 0; r < TL_REPORT_NRES; r++) {
            size_t total = g->pts[r].n;
            sample(&g->pts[r], m->scatter_cap);
            o->scatter[r] = (struct tl_report_scatter){total, g->pts[r].v, g->pts[r].n,
                                                       g->pts_requested[r]};
        }
        advice_of(m, o->name, ao, tmp, o);
    }
    free(tmp);
    pg->groups = m->out;
    pg->ngroups = m->ng;
    pg->group_names = m->names;
    pg->untimed = m->times_from_files;
    pg->nextflow_without_requests = m->nextflow_tasks && !m->nextflow_requests;
    memcpy(pg->top, m->top, sizeof pg->top);
    memcpy(pg->ntop, m->ntop, sizeof pg->ntop);
    pg->advise_quantile = ao->quantile;
    finish_lines(m, pg);
    return finish_energy(m, pg) && all_series(m, pg) && sample_series(m, pg);
}

void tl_report_model_free(struct tl_report_model *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->ng; i++) {
        for (int d = 0; d < TL_REPORT_NDIST; d++) free(m->g[i].dist[d].v);
        for (int r = 0; r < TL_REPORT_NRES; r++) free(m->g[i].pts[r].v);
    }
    free(m->g);
    free(m->out);
    free(m->lines);
    free(m->epts);
    free(m->energy);
    tl_intern_free(m->line_names);
    free(m->spans);
    free(m->final_ends);
    for (int i = 0; i < m->nruns; i++) free(m->run_names[i]);
    free(m->conn);
    for (int w = 0; w < m->nwf; w++) free(m->wf_names[w]);
    for (int i = 0; i < m->nseries; i++) free(m->series_mem[i]);
    tl_task_rows_free(&m->rows);
    tl_report_tasks_free(m->tasks);
    tl_report_where_free(m->where);
    for (size_t i = 0; i < m->nss; i++) {
        free(m->ss[i].name);
        free(m->ss[i].t);
        free(m->ss[i].v);
        free(m->ss[i].pts);
    }
    tl_intern_free(m->names);
    free(m);
}
