/* Capacity planning per category and node type (`tasklens plan`), the way
 * the DESC DRP study sized Rubin processing: jobs per node = min(node cores
 * / cores per task, node memory / memory quantile); node-hours = tasks x
 * time quantile / 3600 / jobs per node. See insights.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantile.h"
#include "insights/insights.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Each attempt's slot time, max(wall, CPU / cores) with what it measured,
 * sorted into tmp; the count. */
static size_t slot_times(const struct tl_task_rows *rs, int32_t cat, double cores, double *tmp)
{
    size_t n = 0;
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        double w = r->v[TL_V_WALL], c = r->v[TL_V_CPU] / cores;
        double t = isfinite(w) ? (isfinite(c) ? fmax(w, c) : w) : c;
        if (isfinite(t)) tmp[n++] = t;
    }
    if (n) qsort(tmp, n, sizeof *tmp, cmp_double);
    return n;
}

void tl_plan_category(const struct tl_task_rows *rs, int32_t cat, const struct tl_plan_opts *o,
                      double *tmp, struct tl_cat_plan *p)
{
    size_t attempts = 0, finals = 0;
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        attempts++;
        finals += r->final;
    }
    p->tasks = (double)(finals ? finals : attempts) * o->scale;
    size_t n;
    p->cpt = o->cores_per_task;
    if (!p->cpt) {
        n = tl_task_rows_column(rs, cat, TL_V_ALLOC_CORES, tmp);
        if (!n) n = tl_task_rows_column(rs, cat, TL_V_REQ_CORES, tmp);
        p->cpt = n ? tl_quantile_sorted(tmp, n, 0.5) : 1;
        if (!(p->cpt > 0)) p->cpt = 1;
    }
    p->time_is = o->time;
    if (o->time == TL_PLAN_SLOT) n = slot_times(rs, cat, p->cpt, tmp);
    else n = o->time == TL_PLAN_CPU ? tl_task_rows_column(rs, cat, TL_V_CPU, tmp) : 0;
    if (!n) { /* nothing measured for it: wall time */
        n = tl_task_rows_column(rs, cat, TL_V_WALL, tmp);
        p->time_is = TL_PLAN_WALL;
    }
    p->t_q = tl_quantile_or_nan(tmp, n, o->quantile);
    n = tl_task_rows_column(rs, cat, TL_V_MEM, tmp);
    p->m_q = tl_quantile_or_nan(tmp, n, o->quantile);
}

void tl_plan_fit(const struct tl_node *nd, const struct tl_cat_plan *p, struct tl_plan_fit *f)
{
    f->by_cores = floor(nd->cores / p->cpt + 1e-9);
    f->by_mem = p->m_q > 0 ? floor(nd->mem / p->m_q + 1e-9) : INFINITY;
    f->jobs = fmin(f->by_cores, f->by_mem);
    f->binds = f->by_cores < f->by_mem ? "cores" : f->by_mem < f->by_cores ? "memory" : "both";
    f->hours = f->jobs >= 1 && isfinite(p->t_q) ? p->tasks * p->t_q / 3600 / f->jobs : NAN;
}
