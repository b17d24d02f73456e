/* Where a run's makespan went (path.h; docs/path.md says it for people):
 *
 * - the observed critical path: from the task that ended last, step back to
 *   the dependency that ended last, or, without one, to the task whose end
 *   most closely precedes its start on the same worker (any worker when
 *   unknown); each step's part of the makespan, from its predecessor's end
 *   to its own, is tiled into waiting for dependencies (not yet submitted),
 *   retries (earlier attempts), queue (submitted, not running) and compute;
 * - the bound with unlimited workers (CPM over the dependencies, each task
 *   holding what all its attempts ran, a task without dependencies starting
 *   at its submission) and each task's slack;
 * - a list-scheduling replay of the observed schedule (the most attempts
 *   that ran at once as slots, tasks in their observed start order) for
 *   the what-ifs: one more slot, a category k times faster;
 * - waves per category and stragglers (running time above Q3 + 1.5 IQR of
 *   their category).
 *
 * Runs (workflows) are apart: dependencies never cross them. The heavy
 * parts (topological order, replays) are linear in tasks plus edges, up to
 * a log factor for the heaps. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantile.h"
#include "insights/path.h"
#include "insights/path_impl.h"

const char *const tl_path_part_name[TL_NPARTS] = {"deps_s", "retries_s", "queue_s", "compute_s"};

/* Whether task a ended before task b: by end, then by index, so a walk
 * back along "ended before" always ends. */
static bool ended_before(const struct tl_path_task *t, uint32_t a, uint32_t b)
{
    return t[a].end < t[b].end || (t[a].end == t[b].end && a < b);
}

/* by_e's rows by worker (-1 first), each worker's in by_e's order: a
 * stable counting sort. */
static bool by_worker(const struct tl_path_task *t, const uint32_t *by_e, uint32_t *by_w, size_t m, size_t nworkers)
{
    size_t *at = calloc(nworkers + 2, sizeof *at);
    if (!at) return false;
    for (size_t j = 0; j < m; j++) at[t[by_e[j]].worker + 1]++;
    for (size_t w = 0, sum = 0; w < nworkers + 1; w++) {
        size_t n = at[w];
        at[w] = sum;
        sum += n;
    }
    for (size_t j = 0; j < m; j++) by_w[at[t[by_e[j]].worker + 1]++] = by_e[j];
    free(at);
    return true;
}

/* The last position j in sorted[lo, hi) whose task ended by x, or
 * TL_PATH_NONE. */
static uint32_t last_ended_by(const struct tl_path_task *t, const uint32_t *sorted, size_t lo, size_t hi, double x)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[sorted[mid]].end <= x) lo = mid + 1;
        else hi = mid;
    }
    return lo ? (uint32_t)(lo - 1) : TL_PATH_NONE;
}

/* The task a step waited for: the dependency that ended last, else the
 * slot rule. */
static uint32_t predecessor(const struct path_ctx *c, const struct run_sort *s, uint32_t cur)
{
    const struct tl_path_task *t = c->in->t, *k = &t[cur];
    uint32_t best = TL_PATH_NONE;
    for (uint32_t e = 0; e < k->ndeps; e++) {
        uint32_t d = (uint32_t)c->in->dep[k->dep_at + e];
        if (d != TL_PATH_NONE && ended_before(t, d, cur) && (best == TL_PATH_NONE || ended_before(t, best, d)))
            best = d;
    }
    if (best != TL_PATH_NONE) return best;
    uint32_t j;
    if (k->worker >= 0) {
        size_t p = c->pos_w[cur];
        j = last_ended_by(t, s->by_w, s->seg_lo[p], p, k->start);
        return j == TL_PATH_NONE || j < s->seg_lo[p] ? TL_PATH_NONE : s->by_w[j];
    }
    size_t p = c->pos_e[cur];
    j = last_ended_by(t, s->by_e, 0, p, k->start);
    return j == TL_PATH_NONE ? TL_PATH_NONE : s->by_e[j];
}

/* x held inside [*b, end], NAN as *b: the next tile boundary. */
static double boundary(double x, double b, double end)
{
    return !(x > b) ? b : x > end ? end : x;
}

/* Step k's tiles from p (its predecessor's end, or the run's start). */
static void tile(const struct tl_path_task *k, double p, double *part)
{
    double b0 = p < k->end ? p : k->end, b1 = boundary(k->submit, b0, k->end);
    double b2 = boundary(k->launch, b1, k->end), b3 = boundary(k->start, b2, k->end);
    part[TL_PART_DEPS] = b1 - b0;
    part[TL_PART_RETRIES] = b2 - b1;
    part[TL_PART_QUEUE] = b3 - b2;
    part[TL_PART_COMPUTE] = k->end - b3;
}

/* The sorted orders the slot rule searches, for the run's rows[0..m)
 * (their positions in c->pos_e and c->pos_w). */
static bool run_sort_make(const struct path_ctx *c, const uint32_t *rows, size_t m, struct run_sort *s)
{
    memset(s, 0, sizeof *s);
    s->by_e = malloc(m * sizeof *s->by_e);
    s->by_w = malloc(m * sizeof *s->by_w);
    s->seg_lo = malloc(m * sizeof *s->seg_lo);
    if (!s->by_e || !s->by_w || !s->seg_lo) return false;
    memcpy(s->by_e, rows, m * sizeof *rows); /* rows are in index order: ties stay so */
    if (!tl_path_sort_rows(c->in->t, s->by_e, m, offsetof(struct tl_path_task, end))) return false;
    if (!by_worker(c->in->t, s->by_e, s->by_w, m, c->in->workers.n)) return false;
    for (size_t j = 0; j < m; j++) {
        c->pos_e[s->by_e[j]] = (uint32_t)j;
        c->pos_w[s->by_w[j]] = (uint32_t)j;
        bool same = j && c->in->t[s->by_w[j]].worker == c->in->t[s->by_w[j - 1]].worker;
        s->seg_lo[j] = same ? s->seg_lo[j - 1] : (uint32_t)j;
    }
    return true;
}

static void run_sort_free(struct run_sort *s)
{
    free(s->by_e);
    free(s->by_w);
    free(s->seg_lo);
}

static int cmp_cat_time(const void *a, const void *b)
{
    const struct tl_path_cat *x = a, *y = b;
    double tx = x->part[TL_PART_COMPUTE] + x->part[TL_PART_QUEUE] + x->part[TL_PART_RETRIES] + x->part[TL_PART_DEPS];
    double ty = y->part[TL_PART_COMPUTE] + y->part[TL_PART_QUEUE] + y->part[TL_PART_RETRIES] + y->part[TL_PART_DEPS];
    return tx > ty ? -1 : tx < ty ? 1 : x->cat - y->cat;
}

/* The split of the path per category, most time first. */
static bool path_categories(const struct path_ctx *c, struct tl_path_run *r)
{
    size_t nc = c->in->cats.n;
    struct tl_path_cat *by = calloc(nc + 1, sizeof *by);
    if (!by) return false;
    for (size_t i = 0; i < r->nsteps; i++) {
        struct tl_path_cat *pc = &by[c->in->t[r->steps[i].task].cat];
        pc->steps++;
        for (int p = 0; p < TL_NPARTS; p++) pc->part[p] += r->steps[i].part[p];
    }
    r->ncats = 0;
    for (size_t k = 0; k < nc; k++)
        if (by[k].steps) {
            by[k].cat = (int32_t)k;
            by[r->ncats++] = by[k];
        }
    qsort(by, r->ncats, sizeof *by, cmp_cat_time);
    r->cats = by;
    return true;
}

/* The observed critical path of the run whose rows are rows[0..m). */
static bool observed_path(const struct path_ctx *c, const uint32_t *rows, size_t m, struct tl_path_run *r)
{
    struct run_sort s;
    bool ok = run_sort_make(c, rows, m, &s);
    r->steps = ok ? malloc(m * sizeof *r->steps) : NULL;
    if (!r->steps) {
        run_sort_free(&s);
        return false;
    }
    uint32_t cur = s.by_e[m - 1];
    r->nsteps = 0;
    while (cur != TL_PATH_NONE && r->nsteps < m) {
        r->steps[r->nsteps++].task = cur;
        cur = predecessor(c, &s, cur);
    }
    run_sort_free(&s);
    for (size_t i = 0, j = r->nsteps - 1; i < j; i++, j--) {
        struct tl_path_step x = r->steps[i];
        r->steps[i] = r->steps[j];
        r->steps[j] = x;
    }
    memset(r->part, 0, sizeof r->part);
    for (size_t i = 0; i < r->nsteps; i++) {
        struct tl_path_step *st = &r->steps[i];
        tile(&c->in->t[st->task], i ? c->in->t[r->steps[i - 1].task].end : r->t0, st->part);
        st->slack = c->slack[st->task];
        for (int p = 0; p < TL_NPARTS; p++) r->part[p] += st->part[p];
    }
    return path_categories(c, r);
}

/* One run: everything but the bound, which path_model.c computed. */
static bool analyze_run(struct path_ctx *c, const uint32_t *rows, size_t m, struct tl_path_run *r)
{
    const struct tl_path_task *t = c->in->t;
    r->wf = t[rows[0]].wf;
    r->tasks = m;
    r->t0 = INFINITY, r->t1 = -INFINITY;
    for (size_t i = 0; i < m; i++) {
        r->t0 = fmin(r->t0, fmin(t[rows[i]].submit, t[rows[i]].start));
        r->t1 = fmax(r->t1, t[rows[i]].end);
        r->edges += t[rows[i]].ndeps;
    }
    r->makespan = r->t1 - r->t0;
    return observed_path(c, rows, m, r) && tl_path_bound(c, rows, m, r) && tl_path_waves(c, rows, m, r) &&
           tl_path_whatifs(c, rows, m, r);
}

/* Row indices grouped by run (a stable counting sort): run w's rows are
 * order[at[w] .. at[w + 1]). */
static bool group_by_run(struct path_ctx *c)
{
    size_t nw = c->in->wfs.n, n = c->in->n;
    c->at = calloc(nw + 2, sizeof *c->at);
    c->order = malloc((n + 1) * sizeof *c->order);
    if (!c->at || !c->order) return false;
    for (size_t i = 0; i < n; i++) c->at[c->in->t[i].wf + 2]++;
    for (size_t w = 2; w < nw + 2; w++) c->at[w] += c->at[w - 1];
    for (size_t i = 0; i < n; i++) c->order[c->at[c->in->t[i].wf + 1]++] = (uint32_t)i;
    return true;
}

bool tl_path_analyze(const struct tl_path_input *in, const struct tl_path_opts *o, struct tl_path_result *res)
{
    memset(res, 0, sizeof *res);
    struct path_ctx c = {.in = in, .o = o};
    res->slack = malloc((in->n + 1) * sizeof *res->slack);
    c.slack = res->slack;
    c.pos_e = malloc((in->n + 1) * sizeof *c.pos_e);
    c.pos_w = malloc((in->n + 1) * sizeof *c.pos_w);
    bool ok = res->slack && c.pos_e && c.pos_w && group_by_run(&c) && tl_path_graph(&c);
    res->runs = ok ? calloc(in->wfs.n + 1, sizeof *res->runs) : NULL;
    ok = ok && res->runs;
    for (size_t w = 0; ok && w < in->wfs.n; w++) {
        size_t m = c.at[w + 1] - c.at[w];
        if (m) ok = analyze_run(&c, c.order + c.at[w], m, &res->runs[res->nruns++]);
    }
    tl_path_graph_free(&c);
    free(c.at);
    free(c.order);
    free(c.pos_e);
    free(c.pos_w);
    res->oom = !ok;
    return ok;
}

void tl_path_result_free(struct tl_path_result *res)
{
    for (size_t i = 0; i < res->nruns; i++) {
        struct tl_path_run *r = &res->runs[i];
        free(r->steps);
        free(r->cats);
        free(r->whatifs);
        free(r->waves);
        free(r->stragglers);
    }
    free(res->runs);
    free(res->slack);
}
