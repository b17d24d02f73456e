/* The report's views of a summary and the cells its tables share
 * (view.h): a summary's groups in `summary`'s order, indexed by name (and
 * by normalized name, for a baseline whose names carry per-run hashes), so
 * a lookup is a hash and a page of many categories is not quadratic. */
#include "report/view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/aggregate.h"
#include "core/buf.h"
#include "core/intern.h"
#include "core/sketch.h"

const char *const tl_report_dist_label[TL_REPORT_NDIST] = {"wall time", "CPU time", "peak memory (RSS)",
                                                           "queue time"};

/* indexed: by category (the run's and the baseline's groups) */
bool tl_view_open(struct view *v, struct tl_summary *s, bool indexed)
{
    *v = (struct view){.s = s};
    v->n = tl_summary_groups(s, &v->g);
    if (!v->g) return false;
    if (!indexed) return true;
    v->names = tl_intern_new(SIZE_MAX);
    struct tl_buf scratch = {0};
    bool ok = v->names != NULL;
    for (size_t i = 0; ok && i < v->n; i++) {
        const char *c = tl_summary_group_tag(v->s, v->g[i], "category", &scratch);
        if (!c) c = "(none)";
        ok = tl_intern(v->names, c, strlen(c)) >= 0 && /* ids in the order of g: one per group */
             tl_map64_put(&v->place, (uint64_t)(uintptr_t)v->g[i], i);
    }
    tl_buf_free(&scratch);
    return ok && tl_intern_count(v->names) == v->n;
}

void tl_view_close(struct view *v)
{
    free(v->g);
    tl_intern_free(v->names);
    tl_map64_free(&v->place);
    tl_intern_free(v->normalized);
    free(v->norm_at);
}

const char *tl_view_name(const struct view *v, const struct tl_agg_group *g)
{
    const uint64_t *i = tl_map64_get(&v->place, (uint64_t)(uintptr_t)g);
    return i ? tl_intern_str(v->names, (int32_t)*i) : "(none)";
}

struct tl_agg_group *tl_view_find(const struct view *v, const char *name)
{
    int32_t id = tl_intern_find(v->names, name, strlen(name));
    return id >= 0 ? v->g[id] : NULL;
}

/* A category name as runs share it: every run of 8 or more hexadecimal
 * digits (with its 0x) becomes '#', so "subgraph_callable-3f2a...9c",
 * "<function f at 0x7f3a2b1c4d50>" and a Dask key's token match the same
 * category of another run. */
static void normalized(const char *name, struct tl_buf *out)
{
    out->len = 0;
    for (const char *p = name; *p;) {
        const char *q = p + (p[0] == '0' && p[1] == 'x' ? 2 : 0);
        size_t h = strspn(q, "0123456789abcdefABCDEF");
        if (h >= 8) {
            tl_buf_putc(out, '#');
            p = q + h;
        } else {
            tl_buf_putc(out, *p++);
        }
    }
    tl_buf_cstr(out);
}

/* The normalized index of a view, made when first asked for. */
static bool normalized_index(struct view *v)
{
    if (v->normalized) return true;
    struct tl_buf n = {0};
    v->normalized = tl_intern_new(SIZE_MAX);
    v->norm_at = malloc((v->n + 1) * sizeof *v->norm_at);
    bool ok = v->normalized && v->norm_at;
    for (size_t i = 0; ok && i < v->n; i++) {
        normalized(tl_intern_str(v->names, (int32_t)i), &n);
        int32_t id = tl_intern(v->normalized, n.data, n.len);
        if (id < 0) ok = false;
        else if ((size_t)id + 1 == tl_intern_count(v->normalized)) v->norm_at[id] = i; /* first seen */
    }
    tl_buf_free(&n);
    return ok && !n.oom;
}

/* The baseline's group for a category of the run: the same name, or with
 * --exact-names off (the default) the same normalized name. */
struct tl_agg_group *tl_view_baseline_group(const struct tl_report_page *pg, struct view *base,
                                           const char *name)
{
    struct tl_agg_group *g = tl_view_find(base, name);
    if (g || pg->exact_names || !normalized_index(base)) return g;
    struct tl_buf want = {0};
    normalized(name, &want);
    int32_t id = want.oom ? -1 : tl_intern_find(base->normalized, want.data, want.len);
    tl_buf_free(&want);
    return id >= 0 ? base->g[base->norm_at[id]] : NULL;
}

const struct tl_report_group *tl_view_baseline_dists(const struct tl_report_page *pg, struct view *base,
                                                    const char *name)
{
    const struct tl_agg_group *b = tl_view_baseline_group(pg, base, name);
    if (!b || !pg->base_group_names) return NULL;
    const char *bn = tl_view_name(base, b);
    int32_t id = tl_intern_find(pg->base_group_names, bn, strlen(bn));
    return id >= 0 && (size_t)id < pg->nbase_groups ? &pg->base_groups[id] : NULL;
}

struct tl_sketch *tl_view_metric(const struct view *v, const struct tl_agg_group *g,
                                   enum tl_metric m)
{
    return g ? tl_summary_sketch(v->s, g, m) : NULL;
}

/* A quantile of a group's metric, as the summary prints it. */
double tl_view_quantile(struct tl_sketch *k, double q)
{
    return k ? tl_sketch_quantile(k, q) : NAN;
}

bool tl_view_approx(const struct tl_sketch *k)
{
    return k && !tl_sketch_is_exact(k);
}

/* ---------------------------------------------------------------- cells */

/* A table cell with its exact value (data-v, tooltip) and human text. */
void tl_cell_num(FILE *o, double v, enum tl_unit unit, bool approx, const char *attrs)
{
    char h[48], exact[48];
    tl_plot_fmt(h, sizeof h, v, unit);
    if (isfinite(v)) snprintf(exact, sizeof exact, "%.17g", v);
    else snprintf(exact, sizeof exact, "null");
    fprintf(o, "<td %s data-v=\"%s\" title=\"%s%s\"%s>%s%s</td>", attrs ? attrs : "", exact,
            approx ? "within alpha: " : "", exact, approx ? " class=\"approx\"" : "",
            approx && isfinite(v) ? "≈" : "", h);
}

void tl_cell_count(FILE *o, uint64_t n, const char *what)
{
    fprintf(o, "<td data-k=\"%s\" data-v=\"%llu\">%llu</td>", what, (unsigned long long)n,
            (unsigned long long)n);
}

/* A table row for a summary group, opened with its name. */
void tl_cell_group_row(FILE *o, const struct view *v, const struct tl_agg_group *g)
{
    const char *name = tl_view_name(v, g);
    fputs("<tr data-g=\"", o);
    tl_html_esc(o, name);
    fputs("\">", o);
    tl_html_name_cell(o, name);
}

/* A summary group's tasks, attempts, open tasks, wall-hours and core-hours, as cells. */
void tl_cell_group_counts(FILE *o, const struct tl_agg_group *g)
{
    tl_cell_count(o, g->tasks, "tasks");
    tl_cell_count(o, g->attempts, "attempts");
    tl_cell_count(o, g->open, "open");
    tl_cell_num(o, tl_summary_runtime_hours(g), TL_UNIT_COUNT, false, "data-k=\"wall_hours\"");
    tl_cell_num(o, g->core_s > 0 ? tl_summary_core_hours(g) : NAN, TL_UNIT_COUNT, false,
             "data-k=\"core_hours\"");
}

/* The heads of tl_cell_group_counts' cells, each linked to its glossary entry. */
void tl_cell_counts_head(FILE *o)
{
    static const char *const terms[][2] = {{"task", "tasks"}, {"attempt", "attempts"}, {"open", "open"},
                                           {"wall-hours", "wall-hours"}, {"core-hours", "core-hours"}};
    for (size_t i = 0; i < sizeof terms / sizeof *terms; i++) {
        fputs("<th class=\"wrap\">", o); /* "wall-hours" may break at its hyphen: the tables fit 1400 px */
        tl_report_term(o, terms[i][0], terms[i][1]);
        fputs("</th>", o);
    }
}
