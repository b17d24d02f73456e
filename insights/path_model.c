/* The model side of `tasklens path` (path.h): the dependency graph, the
 * bound with unlimited workers (CPM) and slack, the replay of the observed
 * schedule behind the what-ifs, and waves and stragglers per category. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantile.h"
#include "insights/path_impl.h"

static uint32_t dep_of(const struct path_ctx *c, const struct tl_path_task *k, uint32_t e)
{
    return (uint32_t)c->in->dep[k->dep_at + e];
}

/* A resolved dependency that is not the task itself. */
static bool real_dep(uint32_t d, uint32_t i)
{
    return d != TL_PATH_NONE && d != i;
}

static bool successors(struct path_ctx *c)
{
    size_t n = c->in->n;
    c->succ_at = calloc(n + 2, sizeof *c->succ_at);
    c->indeg = calloc(n + 1, sizeof *c->indeg);
    c->succ = malloc((c->in->ndep + 1) * sizeof *c->succ);
    if (!c->succ_at || !c->indeg || !c->succ) return false;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t e = 0; e < c->in->t[i].ndeps; e++) {
            uint32_t d = dep_of(c, &c->in->t[i], e);
            if (real_dep(d, i)) c->succ_at[d + 2]++, c->indeg[i]++;
        }
    for (size_t i = 2; i < n + 2; i++) c->succ_at[i] += c->succ_at[i - 1];
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t e = 0; e < c->in->t[i].ndeps; e++) {
            uint32_t d = dep_of(c, &c->in->t[i], e);
            if (real_dep(d, i)) c->succ[c->succ_at[d + 1]++] = i;
        }
    return true;
}

/* Kahn's order of each run's tasks; what a cycle holds is left out (and
 * counted). */
static void topological(struct path_ctx *c)
{
    size_t out = 0;
    memcpy(c->scratch, c->indeg, c->in->n * sizeof *c->scratch);
    for (size_t w = 0; w < c->in->wfs.n; w++) {
        c->topo_at[w] = out;
        size_t head = out;
        for (size_t j = c->at[w]; j < c->at[w + 1]; j++)
            if (!c->scratch[c->order[j]]) c->topo[out++] = c->order[j];
        while (head < out) {
            uint32_t i = c->topo[head++];
            for (uint32_t s = c->succ_at[i]; s < c->succ_at[i + 1]; s++)
                if (!--c->scratch[c->succ[s]]) c->topo[out++] = c->succ[s];
        }
        c->run_unordered[w] = (c->at[w + 1] - c->at[w]) - (out - c->topo_at[w]);
    }
    c->topo_at[c->in->wfs.n] = out;
}

/* Earliest finish of task i in topological order: its submission, or its
 * dependencies' latest finish, plus what it held (times f for category
 * cat, cat < 0: none). */
static double earliest_finish(const struct path_ctx *c, const double *ef, uint32_t i, int32_t cat, double f)
{
    const struct tl_path_task *k = &c->in->t[i];
    double es = -INFINITY;
    for (uint32_t e = 0; e < k->ndeps; e++) {
        uint32_t d = dep_of(c, k, e);
        if (real_dep(d, i) && ef[d] > es) es = ef[d];
    }
    if (es == -INFINITY) es = k->submit;
    return es + (k->cat == cat ? k->held / f : k->held);
}

/* The bound's last finish of run w with category cat f times faster. */
static double bound_end(const struct path_ctx *c, size_t w, int32_t cat, double f, double *ef)
{
    double end = -INFINITY;
    for (size_t j = c->topo_at[w]; j < c->topo_at[w + 1]; j++) {
        uint32_t i = c->topo[j];
        ef[i] = earliest_finish(c, ef, i, cat, f);
        if (ef[i] > end) end = ef[i];
    }
    return end;
}

/* Every task's slack: latest start (the earliest of its successors'
 * latest starts, or the run's end, less what it held) minus earliest. */
static void slack(struct path_ctx *c, size_t w, double *ls)
{
    for (size_t j = c->at[w]; j < c->at[w + 1]; j++) c->slack[c->order[j]] = NAN; /* in a cycle */
    for (size_t j = c->topo_at[w + 1]; j-- > c->topo_at[w];) {
        uint32_t i = c->topo[j];
        const struct tl_path_task *k = &c->in->t[i];
        double lf = c->run_end[w];
        for (uint32_t s = c->succ_at[i]; s < c->succ_at[i + 1]; s++)
            if (ls[c->succ[s]] < lf) lf = ls[c->succ[s]];
        ls[i] = lf - k->held;
        double sl = ls[i] - (c->ef[i] - k->held);
        c->slack[i] = sl > 1e-9 * fmax(1, fabs(lf)) ? sl : 0;
    }
}

bool tl_path_graph(struct path_ctx *c)
{
    size_t n = c->in->n, nw = c->in->wfs.n;
    c->topo = malloc((n + 1) * sizeof *c->topo);
    c->topo_at = malloc((nw + 1) * sizeof *c->topo_at);
    c->ef = malloc((n + 1) * sizeof *c->ef);
    c->run_end = malloc((nw + 1) * sizeof *c->run_end);
    c->run_unordered = malloc((nw + 1) * sizeof *c->run_unordered);
    c->scratch = malloc((n + 1) * sizeof *c->scratch);
    double *ls = malloc((n + 1) * sizeof *ls);
    bool ok = c->topo && c->topo_at && c->ef && c->run_end && c->run_unordered && c->scratch && ls && successors(c);
    if (ok) {
        topological(c);
        for (size_t w = 0; w < nw; w++) {
            c->run_end[w] = bound_end(c, w, -1, 1, c->ef);
            slack(c, w, ls);
        }
    }
    free(ls);
    return ok;
}

void tl_path_graph_free(struct path_ctx *c)
{
    free(c->succ_at);
    free(c->succ);
    free(c->indeg);
    free(c->topo);
    free(c->topo_at);
    free(c->ef);
    free(c->run_end);
    free(c->run_unordered);
    free(c->scratch);
}

bool tl_path_bound(const struct path_ctx *c, const uint32_t *rows, size_t m, struct tl_path_run *r)
{
    (void)rows;
    r->cpm_s = c->run_end[r->wf] - r->t0;
    r->unordered = c->run_unordered[r->wf];
    r->zero_slack = 0;
    for (size_t j = 0; j < m; j++) r->zero_slack += c->slack[rows[j]] == 0;
    return true;
}

/* ------------------------------------------------------------ sorting */

/* A double's bits as an unsigned key that sorts as the doubles do. */
static uint64_t order_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

bool tl_path_radix(struct tl_path_kv *k, size_t n)
{
    struct tl_path_kv *tmp = malloc((n + 1) * sizeof *tmp);
    if (!tmp) return false;
    for (int shift = 0; shift < 64 && n; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++) count[((k[i].key >> shift) & 0xff) + 1]++;
        if (count[((k[0].key >> shift) & 0xff) + 1] == n) continue; /* one byte value: nothing moves */
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) tmp[count[(k[i].key >> shift) & 0xff]++] = k[i];
        memcpy(k, tmp, n * sizeof *k);
    }
    free(tmp);
    return true;
}

bool tl_path_sort_rows(const struct tl_path_task *t, uint32_t *rows, size_t n, size_t at)
{
    struct tl_path_kv *k = malloc((n + 1) * sizeof *k);
    if (!k) return false;
    for (size_t i = 0; i < n; i++) {
        double d;
        memcpy(&d, (const char *)&t[rows[i]] + at, sizeof d);
        k[i] = (struct tl_path_kv){order_bits(d), rows[i]};
    }
    bool ok = tl_path_radix(k, n);
    for (size_t i = 0; ok && i < n; i++) rows[i] = k[i].v;
    free(k);
    return ok;
}

bool tl_path_sort_doubles(double *v, size_t n)
{
    struct tl_path_kv *k = malloc((n + 1) * sizeof *k);
    if (!k) return false;
    for (size_t i = 0; i < n; i++) k[i] = (struct tl_path_kv){order_bits(v[i]), 0};
    bool ok = tl_path_radix(k, n);
    for (size_t i = 0; ok && i < n; i++) {
        uint64_t u = k[i].key >> 63 ? k[i].key & ~(UINT64_C(1) << 63) : ~k[i].key;
        memcpy(&v[i], &u, sizeof u);
    }
    free(k);
    return ok;
}

/* ------------------------------------------------------------ waves */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The most of tasks rows[0..m) that ran at once. starts, ends: room for
 * m; after, starts[k] is when k + 1 first ran at once (when the slot
 * arrived: a worker that connects late is a slot that comes late). */
static size_t slots_used(const struct tl_path_task *t, const uint32_t *rows, size_t m, double *starts, double *ends)
{
    for (size_t j = 0; j < m; j++) starts[j] = t[rows[j]].start, ends[j] = t[rows[j]].end;
    if (!tl_path_sort_doubles(starts, m) || !tl_path_sort_doubles(ends, m)) { /* no memory: the slow way */
        qsort(starts, m, sizeof *starts, cmp_double);
        qsort(ends, m, sizeof *ends, cmp_double);
    }
    size_t best = 0, e = 0;
    for (size_t s = 0; s < m; s++) {
        while (e < m && ends[e] <= starts[s]) e++; /* one ending as another starts: one slot */
        if (s + 1 > e + best) starts[best++] = starts[s]; /* s >= best: written behind the reading; e may pass s + 1 at zero-length tasks */
    }
    if (!best) starts[best++] = m ? t[rows[0]].start : 0;
    return best;
}

static int cmp_by_cat(const void *pa, const void *pb, void *ctx)
{
    const struct tl_path_task *t = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return t[a].cat != t[b].cat ? (t[a].cat < t[b].cat ? -1 : 1) : (a > b) - (a < b);
}

struct straggler {
    uint32_t task;
    double ratio;
};

static int cmp_straggler(const void *a, const void *b)
{
    const struct straggler *x = a, *y = b;
    return x->ratio > y->ratio ? -1 : x->ratio < y->ratio ? 1 : (x->task > y->task) - (x->task < y->task);
}

/* One category's wave: rows[0..m) are its tasks. */
static void category_wave(const struct tl_path_task *t, const uint32_t *rows, size_t m, double *a, double *b,
                          struct tl_path_wave *wv, struct straggler *st, size_t *nst)
{
    wv->cat = t[rows[0]].cat;
    wv->tasks = m;
    wv->slots = slots_used(t, rows, m, a, b);
    wv->waves = (double)m / (double)wv->slots;
    wv->last_wave = m % wv->slots ? (double)(m % wv->slots) / (double)wv->slots : 1;
    for (size_t j = 0; j < m; j++) a[j] = t[rows[j]].end - t[rows[j]].start;
    qsort(a, m, sizeof *a, cmp_double);
    wv->median_s = tl_quantile_sorted(a, m, 0.5);
    wv->fence_s = NAN;
    wv->stragglers = 0;
    if (m < 4) return;
    double q1 = tl_quantile_sorted(a, m, 0.25), q3 = tl_quantile_sorted(a, m, 0.75);
    wv->fence_s = q3 + 1.5 * (q3 - q1);
    for (size_t j = 0; j < m; j++) {
        double run = t[rows[j]].end - t[rows[j]].start;
        if (run <= wv->fence_s) continue;
        wv->stragglers++;
        st[(*nst)++] = (struct straggler){rows[j], wv->median_s > 0 ? run / wv->median_s : INFINITY};
    }
}

bool tl_path_waves(const struct path_ctx *c, const uint32_t *rows, size_t m, struct tl_path_run *r)
{
    if (!c->o->waves) return true;
    const struct tl_path_task *t = c->in->t;
    uint32_t *by = malloc(m * sizeof *by);
    double *a = malloc(m * sizeof *a), *b = malloc(m * sizeof *b);
    struct straggler *st = malloc(m * sizeof *st);
    r->waves = calloc(m, sizeof *r->waves);
    bool ok = by && a && b && st && r->waves;
    size_t nst = 0;
    if (ok) {
        memcpy(by, rows, m * sizeof *by);
        qsort_r(by, m, sizeof *by, cmp_by_cat, (void *)t);
        for (size_t j = 0, k; j < m; j = k) {
            for (k = j; k < m && t[by[k]].cat == t[by[j]].cat; k++) continue;
            category_wave(t, by + j, k - j, a, b, &r->waves[r->nwaves++], st, &nst);
        }
        qsort(st, nst, sizeof *st, cmp_straggler);
        r->nstragglers = nst < c->o->stragglers ? nst : c->o->stragglers;
        r->stragglers = malloc((r->nstragglers + 1) * sizeof *r->stragglers);
        ok = r->stragglers;
        for (size_t j = 0; ok && j < r->nstragglers; j++) r->stragglers[j] = st[j].task;
    }
    free(by);
    free(a);
    free(b);
    free(st);
    return ok;
}

/* ------------------------------------------------------------ replay */

struct hnode {
    double key;
    uint32_t i;
};
struct heap {
    struct hnode *a;
    size_t n;
};

static bool hless(struct hnode x, struct hnode y)
{
    return x.key < y.key || (x.key == y.key && x.i < y.i);
}

static void hpush(struct heap *h, double key, uint32_t i)
{
    size_t j = h->n++;
    struct hnode x = {key, i};
    while (j && hless(x, h->a[(j - 1) / 2])) {
        h->a[j] = h->a[(j - 1) / 2];
        j = (j - 1) / 2;
    }
    h->a[j] = x;
}

static struct hnode hpop(struct heap *h)
{
    struct hnode top = h->a[0], x = h->a[--h->n];
    size_t j = 0;
    for (;;) {
        size_t k = 2 * j + 1;
        if (k >= h->n) break;
        if (k + 1 < h->n && hless(h->a[k + 1], h->a[k])) k++;
        if (!hless(h->a[k], x)) break;
        h->a[j] = h->a[k];
        j = k;
    }
    if (h->n) h->a[j] = x;
    return top;
}

struct replay {
    struct heap ready, running; /* by observed start, by finish */
    uint32_t *roots;            /* the tasks without dependencies, by submission: sorted once */
    size_t nroots;
};

/* Task i is released: it waits for a slot, in its observed start order. */
static void release(struct replay *rp, const struct tl_path_task *t, uint32_t i)
{
    hpush(&rp->ready, t[i].start, i);
}

/* The run rows[0..m) replayed on `slots` slots arriving at arrive[k]
 * (the last arrival again for a slot more than observed), category cat f
 * times faster: tasks without dependencies are released at their
 * submission, the others when their last dependency ends; a free slot
 * takes the released task that started first in the run. The replay's
 * makespan. */
static double replay(const struct path_ctx *c, struct replay *rp, const uint32_t *rows, size_t m,
                     const double *arrive, size_t observed, size_t slots, int32_t cat, double f, double t0)
{
    const struct tl_path_task *t = c->in->t;
    rp->ready.n = rp->running.n = 0;
    for (size_t j = 0; j < m; j++) c->scratch[rows[j]] = c->indeg[rows[j]];
    for (size_t k = 0; k < slots; k++) hpush(&rp->running, arrive[k < observed ? k : observed - 1], TL_PATH_NONE);
    double now = t0, last = t0;
    size_t free_slots = 0, next_root = 0;
    for (;;) {
        while (next_root < rp->nroots && t[rp->roots[next_root]].submit <= now) release(rp, t, rp->roots[next_root++]);
        while (free_slots && rp->ready.n) {
            uint32_t i = hpop(&rp->ready).i;
            hpush(&rp->running, now + (t[i].cat == cat ? t[i].held / f : t[i].held), i);
            free_slots--;
        }
        if (!rp->running.n && next_root == rp->nroots) break;
        double next_run = rp->running.n ? rp->running.a[0].key : INFINITY;
        double next_rel = next_root < rp->nroots ? t[rp->roots[next_root]].submit : INFINITY;
        now = next_run < next_rel ? next_run : next_rel;
        while (rp->running.n && rp->running.a[0].key <= now) {
            uint32_t i = hpop(&rp->running).i;
            free_slots++;
            if (i == TL_PATH_NONE) continue; /* a slot arrives */
            last = now > last ? now : last;
            for (uint32_t s = c->succ_at[i]; s < c->succ_at[i + 1]; s++)
                if (!--c->scratch[c->succ[s]]) release(rp, t, c->succ[s]);
        }
    }
    return last - t0;
}

/* The run's tasks without dependencies, by submission (the replay releases
 * them in this order). */
static size_t roots_by_submit(const struct path_ctx *c, const uint32_t *rows, size_t m, uint32_t *roots, bool *ok)
{
    size_t n = 0;
    for (size_t j = 0; j < m; j++)
        if (!c->indeg[rows[j]]) roots[n++] = rows[j];
    *ok = tl_path_sort_rows(c->in->t, roots, n, offsetof(struct tl_path_task, submit));
    return n;
}

bool tl_path_whatifs(const struct path_ctx *c, const uint32_t *rows, size_t m, struct tl_path_run *r)
{
    double *a = malloc(m * sizeof *a), *b = malloc(m * sizeof *b);
    struct replay rp = {{malloc(m * sizeof(struct hnode)), 0}, {malloc((2 * m + 2) * sizeof(struct hnode)), 0},
                        malloc(m * sizeof(uint32_t)), 0};
    size_t ncand = r->ncats < c->o->whatifs ? r->ncats : c->o->whatifs;
    r->whatifs = malloc((ncand + 1) * sizeof *r->whatifs);
    bool ok = a && b && rp.ready.a && rp.running.a && rp.roots && r->whatifs;
    if (ok) rp.nroots = roots_by_submit(c, rows, m, rp.roots, &ok);
    if (ok) {
        size_t w = r->slots = slots_used(c->in->t, rows, m, a, b);
        r->replay_s = replay(c, &rp, rows, m, a, w, w, -1, 1, r->t0);
        r->whatifs[r->nwhatifs++] = (struct tl_path_whatif){-1, r->cpm_s, replay(c, &rp, rows, m, a, w, w + 1, -1, 1, r->t0)};
        for (size_t k = 0; k < ncand; k++) {
            int32_t cat = r->cats[k].cat;
            double end = bound_end(c, (size_t)r->wf, cat, c->o->faster, c->ef);
            r->whatifs[r->nwhatifs++] = (struct tl_path_whatif){
                cat, end - r->t0, replay(c, &rp, rows, m, a, w, w, cat, c->o->faster, r->t0)};
        }
    }
    free(a);
    free(b);
    free(rp.ready.a);
    free(rp.running.a);
    free(rp.roots);
    return ok;
}
