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

/* A category's columns, gathered in one pass over its rows: the passes of
 * each resource then read a few contiguous doubles instead of the whole
 * 160-byte row, scattered one in every few (a million attempts: the
 * report's advice 0.30 -> 0.10 s of CPU, perf). In tmp, column c at
 * tmp + c * m (m the category's rows). */
enum { COL_WALL, COL_USED, COL_UW = COL_USED + TL_NRES, COL_ALLOC = COL_UW + TL_NRES, COL_REQ = COL_ALLOC + TL_NRES,
       COL_SORT = COL_REQ + TL_NRES };

static void gather(const struct tl_task_rows *rs, int32_t cat, double *tmp, size_t m, struct tl_cat_advice *ca,
                   bool *killed_mem, bool *exhausted)
{
    size_t i = 0;
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++, i++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        ca->attempts++;
        ca->tasks += r->final;
        *killed_mem |= r->killed_mem;
        *exhausted |= r->exhausted;
        tmp[COL_WALL * m + i] = r->v[TL_V_WALL];
        for (int res = 0; res < TL_NRES; res++) {
            tmp[(COL_USED + res) * m + i] = used_value(r, res);
            tmp[(COL_UW + res) * m + i] = used_for_waste(r, res);
            tmp[(COL_ALLOC + res) * m + i] = r->v[res_alloc[res]];
            tmp[(COL_REQ + res) * m + i] = r->v[res_req[res]];
        }
    }
}

/* The finite values of col, sorted, in out; their count. */
static size_t sorted_finite(const double *col, size_t m, double *out)
{
    size_t n = 0;
    for (size_t i = 0; i < m; i++)
        if (isfinite(col[i])) out[n++] = col[i];
    tl_sort_doubles(out, n);
    return n;
}

size_t tl_advise_tmp_len(const struct tl_task_rows *rs)
{
    size_t widest = 0;
    for (size_t c = 0; rs->at && c < rs->cats.n; c++)
        if (rs->at[c + 1] - rs->at[c] > widest) widest = rs->at[c + 1] - rs->at[c];
    return (COL_SORT + 1) * widest + 1;
}

void tl_advise_category(const struct tl_task_rows *rs, int32_t cat, const struct tl_advise_opts *o,
                        double *tmp, struct tl_cat_advice *ca)
{
    const double *gran = o->round;
    double q = o->quantile, margin = o->margin;
    memset(ca, 0, sizeof *ca);
    size_t m = rs->at[cat + 1] - rs->at[cat];
    bool killed_mem = false, exhausted = false;
    gather(rs, cat, tmp, m, ca, &killed_mem, &exhausted);
    const double *walls = tmp + COL_WALL * m;
    double *sorted = tmp + COL_SORT * m;
    for (int res = 0; res < TL_NRES; res++) {
        struct tl_advice *a = &ca->a[res];
        const double *used = tmp + (COL_USED + res) * m, *uws = tmp + (COL_UW + res) * m,
                     *alloc = tmp + (COL_ALLOC + res) * m;
        size_t n = sorted_finite(tmp + (COL_REQ + res) * m, m, sorted);
        a->req = tl_quantile_or_nan(sorted, n, 0.5);
        n = sorted_finite(alloc, m, sorted);
        a->alloc = tl_quantile_or_nan(sorted, n, 0.5);
        n = sorted_finite(used, m, sorted);
        a->n_used = n;
        a->used_p50 = tl_quantile_or_nan(sorted, n, 0.5);
        a->used_q = tl_quantile_or_nan(sorted, n, q);
        a->used_max = n ? sorted[n - 1] : NAN;
        a->rec = NAN;
        if (n) {
            /* cores: a task over its cores is slowed, not killed -- no margin */
            double want = a->used_q * (res == TL_RES_CORES ? 1 : margin);
            a->rec = ceil(want / gran[res] - 1e-9) * gran[res];
            if (a->rec < gran[res]) a->rec = gran[res];
        }
        if (res == TL_RES_MEM) {
            a->floor = NAN;
            if (killed_mem) censored_floor(rs, cat, margin, gran[res], a);
        }
        double scale = unit_scale(res);
        for (size_t i = 0; i < m; i++) {
            double u = used[i], uw = uws[i], al = alloc[i];
            if (isfinite(u) && u > a->rec) a->exceed++;
            if (!isfinite(u) || !isfinite(uw) || !isfinite(al) || !(walls[i] >= 0)) continue;
            a->n_waste++;
            double h = walls[i] / 3600 * scale;
            a->waste += fmax(0, al - uw) * h;
            if (u <= a->rec) a->waste_rec += fmax(0, a->rec - uw) * h; /* as waste: never below 0 */
            else /* killed at the recommendation, then rerun as it ran */
                a->waste_rec += a->rec * h + fmax(0, fmax(al, u) - uw) * h;
        }
    }
    if (!exhausted) return;
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

