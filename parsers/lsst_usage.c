/* LSST's own table: the ResourceUsageSummary of analysis_tools, as
 * GatherResourceUsageTask (per quantum) and ConsolidateResourceUsageTask
 * (per task label) compute it, from the quanta this parser reads (see
 * lsst_usage.h). Format knowledge, kept with the format: the cli prints
 * the rows. */
#include "parsers/lsst_usage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantile.h"

static const double QS[TL_LSST_NQ] = TL_DEFAULT_QUANTILES;
const char *const tl_lsst_usage_qnames[TL_LSST_NQ] = {"p000", "p001", "p005", "p032", "p050",
                                                      "p068", "p095", "p099", "p100"};

struct dvec {
    double *v;
    size_t n, cap;
};

static void dvec_push(struct dvec *d, double x)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        double *v = realloc(d->v, cap * sizeof *v);
        if (!v) return;
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = x;
}

struct label_rows {
    char *label;
    uint64_t quanta;
    struct dvec mem, run, wall; /* GiB, CPU s, wall s */
};

struct tl_lsst_usage {
    struct label_rows *rows;
    size_t n, cap;
    uint64_t records;
};

static struct label_rows *rows_for(struct tl_lsst_usage *c, const char *label)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->rows[i].label, label)) return &c->rows[i];
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 32;
        struct label_rows *r = realloc(c->rows, cap * sizeof *r);
        if (!r) return NULL;
        c->rows = r;
        c->cap = cap;
    }
    struct label_rows *r = &c->rows[c->n];
    memset(r, 0, sizeof *r);
    if (!(r->label = strdup(label))) return NULL;
    c->n++;
    return r;
}

void tl_lsst_usage_add(void *ctx, const struct tl_record *r)
{
    struct tl_lsst_usage *c = ctx;
    if (r->kind != TL_REC_TASK || !r->final) return; /* one row per quantum */
    struct label_rows *row = rows_for(c, r->category ? r->category : "(unknown)");
    if (!row) return;
    c->records++;
    row->quanta++;
    if (tl_record_has(r, TL_M_MAX_RSS_BYTES))
        dvec_push(&row->mem, r->v[TL_M_MAX_RSS_BYTES] / 1024 / 1024 / 1024);
    if (tl_record_has(r, TL_M_CPU_TIME_S)) dvec_push(&row->run, r->v[TL_M_CPU_TIME_S]);
    if (tl_record_has(r, TL_M_WALL_TIME_S)) dvec_push(&row->wall, r->v[TL_M_WALL_TIME_S]);
}

/* numpy's pairwise summation (umath loops: blocks of 128, 8 accumulators),
 * so the total matches numpy.sum / pandas' sum bit for bit. */
static double pairwise_sum(const double *a, size_t n)
{
    if (n < 8) {
        double s = -0.0;
        for (size_t i = 0; i < n; i++) s += a[i];
        return s;
    }
    if (n <= 128) {
        double r[8];
        for (int k = 0; k < 8; k++) r[k] = a[k];
        size_t i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int k = 0; k < 8; k++) r[k] += a[i + k];
        double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) s += a[i];
        return s;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

static int cmp_rows(const void *a, const void *b)
{
    return strcmp(((const struct label_rows *)a)->label, ((const struct label_rows *)b)->label);
}

struct tl_lsst_usage *tl_lsst_usage_new(void)
{
    return calloc(1, sizeof(struct tl_lsst_usage));
}

uint64_t tl_lsst_usage_quanta(const struct tl_lsst_usage *u)
{
    return u->records;
}

size_t tl_lsst_usage_rows(struct tl_lsst_usage *u, struct tl_lsst_usage_row **out)
{
    qsort(u->rows, u->n, sizeof *u->rows, cmp_rows);
    struct tl_lsst_usage_row *rows = calloc(u->n + 1, sizeof *rows);
    if (!rows) return 0;
    for (size_t i = 0; i < u->n; i++) {
        struct label_rows *r = &u->rows[i];
        rows[i].label = r->label;
        rows[i].quanta = r->quanta;
        rows[i].integrated_runtime_hrs = pairwise_sum(r->run.v, r->run.n) / 3600.0;
        struct dvec *vs[3] = {&r->mem, &r->run, &r->wall};
        double *dst[3] = {rows[i].mem_gb, rows[i].runtime_s, rows[i].walltime_s};
        for (int g = 0; g < 3; g++) {
            tl_sort_doubles(vs[g]->v, vs[g]->n);
            for (int q = 0; q < TL_LSST_NQ; q++)
                dst[g][q] = vs[g]->n ? tl_quantile_sorted(vs[g]->v, vs[g]->n, QS[q]) : NAN;
        }
    }
    *out = rows;
    return u->n;
}

void tl_lsst_usage_free(struct tl_lsst_usage *u)
{
    if (!u) return;
    for (size_t i = 0; i < u->n; i++) {
        free(u->rows[i].label);
        free(u->rows[i].mem.v);
        free(u->rows[i].run.v);
        free(u->rows[i].wall.v);
    }
    free(u->rows);
    free(u);
}
