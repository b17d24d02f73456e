/* Right-sizing per category (`tasklens advise`): a recommendation from the
 * quantile of use, the waste of the allocation as it was and as it would
 * be, and the RESOURCE_EXHAUSTION attempts the recommendation covers. See
 * insights.h and docs/advise.md. */
#include <math.h>
#include <string.h>

#include "core/quantile.h"
#include "insights/insights.h"

const char *const tl_res_name[TL_NRES] = {"cores", "memory", "disk"};
const char *const tl_res_waste_unit[TL_NRES] = {"core-hours", "GiB-hours", "GiB-hours"};
static const int res_used[TL_NRES] = {TL_V_CORES, TL_V_MEM, TL_V_DISK};
static const int res_req[TL_NRES] = {TL_V_REQ_CORES, TL_V_REQ_MEM, TL_V_REQ_DISK};
static const int res_alloc[TL_NRES] = {TL_V_ALLOC_CORES, TL_V_ALLOC_MEM, TL_V_ALLOC_DISK};
static const int res_lim[TL_NRES] = {TL_V_LIM_CORES, TL_V_LIM_MEM, TL_V_LIM_DISK};

void tl_advise_opts_default(struct tl_advise_opts *o)
{
    *o = (struct tl_advise_opts){0.95, 1.2, {1, 256 * 0x1p20, 256 * 0x1p20}};
}

/* What occupied the allocation: average cores (cpu/wall) for cores, the
 * peak for memory and disk (so memory and disk waste are lower bounds). */
static double used_for_waste(const struct tl_task_row *r, int res)
{
    if (res == TL_RES_CORES && isfinite(r->v[TL_V_CPU]) && r->v[TL_V_WALL] > 0) return r->v[TL_V_CPU] / r->v[TL_V_WALL];
    return r->v[res_used[res]];
}

static double used_value(const struct tl_task_row *r, int res)
{
    double u = r->v[res_used[res]];
    if (res == TL_RES_CORES && !isfinite(u) && isfinite(r->v[TL_V_CPU]) && r->v[TL_V_WALL] > 0)
        u = r->v[TL_V_CPU] / r->v[TL_V_WALL];
    return u;
}

static double unit_scale(int res)
{
    return res == TL_RES_CORES ? 1 : 1 / TL_GIB;
}

/* Memory's censored attempts (issue 57 point 3): an attempt killed for
 * memory used at least the limit it died at (its named limit, else its
 * allocation, else its request), whatever it recorded. The recommendation
 * is never below that limit x the margin; the count of such attempts, and
 * of those that recorded no memory at all, are said. */
static void censored_floor(const struct tl_task_rows *rs, int32_t cat, double margin, double gran,
                           struct tl_advice *a)
{
    a->floor = NAN;
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        if (!r->killed_mem) continue;
        a->killed++;
        a->unmeasured += !isfinite(r->v[TL_V_MEM]);
        double lim = isfinite(r->v[TL_V_LIM_MEM])     ? r->v[TL_V_LIM_MEM]
                     : isfinite(r->v[TL_V_ALLOC_MEM]) ? r->v[TL_V_ALLOC_MEM]
                                                      : r->v[TL_V_REQ_MEM];
        if (isfinite(lim) && !(lim <= a->floor)) a->floor = lim;
    }
    if (!isfinite(a->floor)) return;
    double over = ceil(a->floor * margin / gran - 1e-9) * gran;
    if (!(a->rec >= over)) {
        a->rec = over;
        a->rec_is_floor = true;
    }
}

void tl_advise_category(const struct tl_task_rows *rs, int32_t cat, const struct tl_advise_opts *o,
                        double *tmp, struct tl_cat_advice *ca)
{
    const double *gran = o->round;
    double q = o->quantile, margin = o->margin;
    memset(ca, 0, sizeof *ca);
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        ca->attempts++;
        ca->tasks += r->final;
    }
    for (int res = 0; res < TL_NRES; res++) {
        struct tl_advice *a = &ca->a[res];
        size_t n = tl_task_rows_column(rs, cat, res_req[res], tmp);
        a->req = tl_quantile_or_nan(tmp, n, 0.5);
        n = tl_task_rows_column(rs, cat, res_alloc[res], tmp);
        a->alloc = tl_quantile_or_nan(tmp, n, 0.5);
        n = 0;
        for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
            const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
            double u = used_value(r, res);
            if (isfinite(u)) tmp[n++] = u;
        }
        tl_sort_doubles(tmp, n);
        a->n_used = n;
        a->used_p50 = tl_quantile_or_nan(tmp, n, 0.5);
        a->used_q = tl_quantile_or_nan(tmp, n, q);
        a->used_max = n ? tmp[n - 1] : NAN;
        a->rec = NAN;
        if (n) {
            /* cores: a task over its cores is slowed, not killed -- no margin */
            double want = a->used_q * (res == TL_RES_CORES ? 1 : margin);
            a->rec = ceil(want / gran[res] - 1e-9) * gran[res];
            if (a->rec < gran[res]) a->rec = gran[res];
        }
        if (res == TL_RES_MEM) censored_floor(rs, cat, margin, gran[res], a);
        for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
            const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
            double u = used_value(r, res), uw = used_for_waste(r, res), al = r->v[res_alloc[res]];
            double wall = r->v[TL_V_WALL];
            if (isfinite(u) && u > a->rec) a->exceed++;
            if (!isfinite(u) || !isfinite(uw) || !isfinite(al) || !(wall >= 0)) continue;
            a->n_waste++;
            double h = wall / 3600 * unit_scale(res);
            a->waste += fmax(0, al - uw) * h;
            if (u <= a->rec) a->waste_rec += fmax(0, a->rec - uw) * h; /* as waste: never below 0 */
            else /* killed at the recommendation, then rerun as it ran */
                a->waste_rec += a->rec * h + fmax(0, fmax(al, u) - uw) * h;
        }
    }
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        if (!r->exhausted) continue;
        ca->exhausted++;
        double wall = isfinite(r->v[TL_V_WALL]) ? r->v[TL_V_WALL] : 0;
        ca->ex_wall_h += wall / 3600;
        if (isfinite(r->v[TL_V_ALLOC_CORES])) ca->ex_core_h += r->v[TL_V_ALLOC_CORES] * wall / 3600;
        if (isfinite(r->v[TL_V_ALLOC_MEM])) ca->ex_gib_h += r->v[TL_V_ALLOC_MEM] / TL_GIB * wall / 3600;
        /* avoided: every limit it broke (or, when none is named, every
         * resource it used) fits under the recommendation */
        bool named = false, fits = true;
        for (int res = 0; res < TL_NRES; res++)
            if (isfinite(r->v[res_lim[res]])) {
                named = true;
                double u = used_value(r, res);
                if (!isfinite(u) || u > ca->a[res].rec) fits = false;
            }
        if (!named)
            for (int res = 0; res < TL_NRES; res++) {
                double u = used_value(r, res);
                if (isfinite(u) && u > ca->a[res].rec) fits = false;
            }
        ca->avoided += fits;
    }
}

