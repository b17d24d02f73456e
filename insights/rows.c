/* The task rows every insight reads: one compact row per finished attempt,
 * with its category and workflow as ids. See insights.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/glossary.h"
#include "core/quantile.h"
#include "insights/insights.h"

static const enum tl_metric row_metric[TL_NV] = {
    TL_M_WALL_TIME_S,     TL_M_CPU_TIME_S,    TL_M_CORES,          TL_M_MAX_RSS_BYTES,
    TL_M_DISK_BYTES,      TL_M_REQ_CORES,     TL_M_REQ_MEMORY_BYTES, TL_M_REQ_DISK_BYTES,
    TL_M_ALLOC_CORES,     TL_M_ALLOC_MEMORY_BYTES, TL_M_ALLOC_DISK_BYTES, TL_M_LIMIT_CORES,
    TL_M_LIMIT_MEMORY_BYTES, TL_M_LIMIT_DISK_BYTES, TL_M_ENERGY_J, TL_M_EMISSIONS_KG, TL_M_BYTES_READ,
    TL_M_REQ_WALL_TIME_S};

int32_t tl_names_id(struct tl_names *nm, const char *s, bool *oom)
{
    if (!s || !*s) s = TL_ABSENT_NAME; /* the glossary's one name for it */
    if (!nm->in && !(nm->in = tl_intern_new((size_t)256 << 20))) {
        *oom = true;
        return 0;
    }
    if (nm->last && !strcmp(s, nm->last)) return nm->last_id; /* a compare, not a hash: the common case */
    int32_t id = tl_intern(nm->in, s, strlen(s));
    if (id < 0) *oom = true;
    if (id >= 0) {
        nm->last = tl_intern_str(nm->in, id);
        nm->last_id = id;
    }
    return id < 0 ? 0 : id;
}

void tl_task_rows_add(void *ctx, const struct tl_record *r)
{
    struct tl_task_rows *rs = ctx;
    if (r->kind != TL_REC_TASK || rs->oom) return;
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 1024;
        struct tl_task_row *p = realloc(rs->r, cap * sizeof *p);
        if (!p) {
            rs->oom = true;
            return;
        }
        rs->r = p;
        rs->cap = cap;
    }
    struct tl_task_row *w = &rs->r[rs->n++];
    for (int i = 0; i < TL_NV; i++)
        w->v[i] = tl_record_has(r, row_metric[i]) ? r->v[row_metric[i]] : NAN;
    w->cat = tl_names_id(&rs->cats, r->category, &rs->oom);
    w->wf = tl_names_id(&rs->wfs, r->workflow, &rs->oom);
    w->exhausted = r->result && !strcmp(r->result, "RESOURCE_EXHAUSTION");
    w->final = r->final;
    enum tl_verdict v = tl_attempt_verdict(r->result, r->has_exit_code, r->exit_code);
    w->failed = v == TL_VERDICT_FAILED;
    w->cached = v == TL_VERDICT_OK && tl_result_cached(r->result);
    w->library = v == TL_VERDICT_APART && tl_result_library(r->result);
    w->cancelled = v == TL_VERDICT_APART && !w->library; /* apart: a library or cancelled */
    enum tl_cause cause = w->failed ? tl_failure_cause(r) : TL_CAUSE_NONE;
    w->killed_mem = cause == TL_CAUSE_MEMORY;
    w->killed_time = cause == TL_CAUSE_TIME;
    if (r->time_ns > rs->newest_ns) rs->newest_ns = r->time_ns;
}

struct name_pos {
    const char *s;
    int32_t id;
};

static int cmp_name_pos(const void *a, const void *b)
{
    return strcmp(((const struct name_pos *)a)->s, ((const struct name_pos *)b)->s);
}

int32_t *tl_names_sort(struct tl_names *nm, bool *oom)
{
    nm->last = NULL; /* ids are renumbered: the cache would lie */
    nm->n = nm->in ? tl_intern_count(nm->in) : 0;
    struct name_pos *pos = malloc((nm->n + 1) * sizeof *pos);
    int32_t *newid = malloc((nm->n + 1) * sizeof *newid);
    nm->s = malloc((nm->n + 1) * sizeof *nm->s);
    if (!pos || !newid || !nm->s) {
        free(pos);
        free(newid);
        *oom = true;
        return NULL;
    }
    for (size_t i = 0; i < nm->n; i++)
        pos[i] = (struct name_pos){tl_intern_str(nm->in, (int32_t)i), (int32_t)i};
    qsort(pos, nm->n, sizeof *pos, cmp_name_pos);
    for (size_t j = 0; j < nm->n; j++) {
        newid[pos[j].id] = (int32_t)j;
        nm->s[j] = pos[j].s;
    }
    free(pos);
    return newid;
}

static bool identity(const int32_t *newid, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (newid[i] != (int32_t)i) return false;
    return true;
}

/* The rows' category and workflow ids renumbered as their names sort (in
 * the same pass that counts each category's rows: a pass over a million
 * 160-byte rows is a fifth of the memory they sit in), then the rows of
 * each category indexed in input order (a stable counting sort). */
static bool renumber_and_index(struct tl_task_rows *rs)
{
    bool oom = false;
    int32_t *cat_id = tl_names_sort(&rs->cats, &oom), *wf_id = cat_id ? tl_names_sort(&rs->wfs, &oom) : NULL;
    size_t nc = rs->cats.n;
    rs->at = calloc(nc + 2, sizeof *rs->at);
    rs->by_cat = malloc((rs->n + 1) * sizeof *rs->by_cat);
    bool ok = wf_id && rs->at && rs->by_cat;
    if (ok) {
        const int32_t *cm = identity(cat_id, nc) ? NULL : cat_id, *wm = identity(wf_id, rs->wfs.n) ? NULL : wf_id;
        for (size_t i = 0; i < rs->n; i++) {
            struct tl_task_row *r = &rs->r[i];
            if (cm) r->cat = cm[r->cat];
            if (wm) r->wf = wm[r->wf];
            rs->at[r->cat + 2]++;
        }
        for (size_t c = 2; c < nc + 2; c++) rs->at[c] += rs->at[c - 1];
        for (size_t i = 0; i < rs->n; i++) rs->by_cat[rs->at[rs->r[i].cat + 1]++] = i;
    }
    free(cat_id);
    free(wf_id);
    return ok;
}

bool tl_task_rows_done(struct tl_task_rows *rs)
{
    if (!rs->oom && !renumber_and_index(rs)) rs->oom = true;
    return !rs->oom;
}

int32_t tl_task_rows_category(const struct tl_task_rows *rs, const char *name)
{
    size_t lo = 0, hi = rs->cats.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(rs->cats.s[mid], name);
        if (!c) return (int32_t)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

void tl_names_free(struct tl_names *nm)
{
    free(nm->s);
    tl_intern_free(nm->in);
}

void tl_task_rows_free(struct tl_task_rows *rs)
{
    free(rs->r);
    free(rs->at);
    free(rs->by_cat);
    tl_names_free(&rs->cats);
    tl_names_free(&rs->wfs);
}

size_t tl_task_rows_column(const struct tl_task_rows *rs, int32_t cat, int c, double *vals)
{
    size_t n = 0;
    if (cat < 0) {
        for (size_t i = 0; i < rs->n; i++)
            if (isfinite(rs->r[i].v[c])) vals[n++] = rs->r[i].v[c];
    } else {
        for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
            const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
            if (isfinite(r->v[c])) vals[n++] = r->v[c];
        }
    }
    tl_sort_doubles(vals, n);
    return n;
}

double tl_quantile_or_nan(const double *v, size_t n, double q)
{
    return n ? tl_quantile_sorted(v, n, q) : NAN;
}
