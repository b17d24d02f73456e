/* Categories side by side, the view Nextflow's report gives per process:
 * for each drawn metric one chart with a row per category (those that
 * hold the most wall-hours first, as the summary table), its p5-p95 as a
 * whisker, p32-p68 as a box, p50 as a tick, and for memory what was
 * allocated (median, as `advise` says) as a diamond. The quantiles are
 * the summary's own (`summary --format json` prints the same), each with
 * its exact value in a data attribute and a tooltip.
 *
 * Also the cost order itself (tl_report_by_cost), which the summary table
 * uses too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/aggregate.h"
#include "core/intern.h"
#include "core/sketch.h"
#include "report/report.h"
#include "report/svg.h"

#define STRIPS_TOP 20
#define ROW_H 18
#define NAME_W 240

/* Groups by what they hold: wall-hours, then tasks, then name. */
static int by_cost(const void *a, const void *b)
{
    const struct tl_agg_group *x = *(const struct tl_agg_group *const *)a,
                              *y = *(const struct tl_agg_group *const *)b;
    double hx = tl_summary_runtime_hours(x), hy = tl_summary_runtime_hours(y);
    if (hx != hy) return hx < hy ? 1 : -1;
    if (x->tasks != y->tasks) return x->tasks < y->tasks ? 1 : -1;
    return strcmp(x->key, y->key);
}

size_t tl_report_by_cost(struct tl_summary *s, struct tl_agg_group ***out)
{
    struct tl_agg_group **all = NULL;
    size_t n = tl_summary_groups(s, &all), k = 0;
    for (size_t i = 0; all && i < n; i++) /* sample series are not tasks */
        if (all[i]->tasks || all[i]->attempts || all[i]->open || !all[i]->samples) all[k++] = all[i];
    if (all) qsort(all, k, sizeof *all, by_cost);
    *out = all;
    return all ? k : 0;
}

/* g's category, whole, in buf (a copy: the caller keeps several). */
static void category_of(const struct tl_report_page *pg, const struct tl_agg_group *g, struct tl_buf *buf)
{
    struct tl_buf scratch = {0};
    const char *c = tl_summary_group_tag(pg->summary, g, "category", &scratch);
    buf->len = 0;
    tl_buf_puts(buf, c ? c : "(none)");
    tl_buf_cstr(buf);
    tl_buf_free(&scratch);
}

static double allocated_memory(const struct tl_report_page *pg, const char *name)
{
    int32_t id = pg->group_names ? tl_intern_find(pg->group_names, name, strlen(name)) : -1;
    if (id < 0 || (size_t)id >= pg->ngroups) return NAN;
    const struct tl_report_group *g = &pg->groups[id];
    return g->has_ca && g->ca.a[TL_RES_MEM].n_used ? g->ca.a[TL_RES_MEM].alloc : NAN;
}

static const double Q[5] = {0.05, 0.32, 0.5, 0.68, 0.95};

/* data-KEY="exact value", "null" when absent */
static void exact_attr(FILE *o, const char *key, double v)
{
    if (isfinite(v)) fprintf(o, " data-%s=\"%.17g\"", key, v);
    else fprintf(o, " data-%s=\"null\"", key);
}

/* One category's row: whisker, box, tick, and the allocation. */
static void strip_row(FILE *o, const struct tl_plot *p, int row, const char *name, const double q[5],
                      double alloc, enum tl_metric m)
{
    double y = p->mt + ROW_H * (row + 0.5);
    char h[5][40];
    for (int k = 0; k < 5; k++) tl_plot_fmt(h[k], sizeof h[k], q[k], tl_metric_info[m].unit);
    fprintf(o, "<g data-g=\"");
    tl_html_esc(o, name);
    fprintf(o, "\" data-m=\"%s\"", tl_metric_info[m].name);
    static const char *const keys[5] = {"q05", "q32", "q50", "q68", "q95"};
    for (int k = 0; k < 5; k++) exact_attr(o, keys[k], q[k]);
    exact_attr(o, "alloc", alloc);
    fputs("><title>", o);
    tl_html_esc(o, name);
    fprintf(o, ": p5 %s, p32 %s, p50 %s, p68 %s, p95 %s</title>", h[0], h[1], h[2], h[3], h[4]);
    fprintf(o, "<text class=\"tl\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", p->ml - 6, y + 3);
    char shown[48];
    snprintf(shown, sizeof shown, "%.38s%s", name, strlen(name) > 38 ? "…" : "");
    tl_html_esc(o, shown);
    fputs("</text>", o);
    if (isfinite(q[0]) && isfinite(q[4]))
        fprintf(o, "<line class=\"whisk\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                tl_plot_x(p, q[0]), y, tl_plot_x(p, q[4]), y);
    if (isfinite(q[1]) && isfinite(q[3]))
        fprintf(o, "<rect class=\"box\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"/>",
                tl_plot_x(p, q[1]), y - 5, fmax(1, tl_plot_x(p, q[3]) - tl_plot_x(p, q[1])), 10);
    if (isfinite(q[2]))
        fprintf(o, "<line class=\"med\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                tl_plot_x(p, q[2]), y - 6, tl_plot_x(p, q[2]), y + 6);
    if (q[0] <= 0) /* no place on a log axis: at its left edge, said */
        fprintf(o, "<text class=\"ql zero\" x=\"%d\" y=\"%.1f\" data-zero=\"1\">0 &#8592;</text>", p->ml + 2,
                y - 6);
    if (isfinite(alloc)) {
        double x = tl_plot_x(p, alloc);
        fprintf(o, "<path class=\"alloc\" d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\"/>", x, y - 5);
    }
    fputs("</g>", o);
}

static void strips_of(FILE *o, const struct tl_report_page *pg, struct tl_agg_group **g, size_t n,
                      enum tl_metric m)
{
    double q[STRIPS_TOP][5], alloc[STRIPS_TOP], lo = INFINITY, hi = 0;
    struct tl_buf names[STRIPS_TOP] = {{0}};
    size_t rows = 0;
    for (size_t i = 0; i < n && rows < STRIPS_TOP; i++) {
        struct tl_sketch *k = tl_summary_sketch(pg->summary, g[i], m);
        if (!k || !k->count) continue;
        category_of(pg, g[i], &names[rows]);
        for (int j = 0; j < 5; j++) {
            q[rows][j] = tl_sketch_quantile(k, Q[j]);
            if (q[rows][j] > 0) lo = fmin(lo, q[rows][j]);
            hi = fmax(hi, q[rows][j]);
        }
        alloc[rows] = m == TL_M_MAX_RSS_BYTES ? allocated_memory(pg, names[rows].data) : NAN;
        if (alloc[rows] > 0) lo = fmin(lo, alloc[rows]), hi = fmax(hi, alloc[rows]);
        rows++;
    }
    if (!rows || !(hi > 0)) {
        for (size_t r = 0; r < STRIPS_TOP; r++) tl_buf_free(&names[r]);
        return;
    }
    if (!isfinite(lo)) lo = hi / 10;
    char plot[64], label[160];
    snprintf(plot, sizeof plot, "strips %s", tl_metric_info[m].name);
    snprintf(label, sizeof label, "%s per category: p5-p95, p32-p68, p50%s", tl_metric_info[m].name,
             m == TL_M_MAX_RSS_BYTES ? ", allocated" : "");
    struct tl_plot p = {o, 1100, (int)(ROW_H * rows) + 44, NAME_W, 20, 8, 36,
                        lo / 1.2, hi * 1.2, 0, (double)rows, true, false, tl_metric_info[m].unit,
                        TL_UNIT_COUNT, false};
    p.no_yticks = true;
    tl_plot_begin(&p, plot, label, tl_metric_info[m].name, "");
    for (size_t r = 0; r < rows; r++) strip_row(o, &p, (int)r, names[r].oom ? "" : names[r].data, q[r], alloc[r], m);
    tl_plot_end(&p);
    for (size_t r = 0; r < STRIPS_TOP; r++) tl_buf_free(&names[r]);
}

void tl_report_strips(FILE *o, const struct tl_report_page *pg)
{
    struct tl_agg_group **g;
    size_t n = tl_report_by_cost(pg->summary, &g);
    if (!n) {
        free(g);
        return;
    }
    fprintf(o, "<h2 id=\"strips\">Categories side by side</h2><p class=\"note\">Per metric (I/O and "
               "virtual memory where the inputs measure them), the %s "
               "categories that hold the most wall-hours: a line from p5 to p95, a box from p32 to "
               "p68, a tick at p50 (the summary's quantiles over each task's last attempt), and for "
               "memory a diamond at what was allocated (median, as <code>advise</code> says). "
               "Log axes: a quantile of 0 has no place on them and is marked \"0 &#8592;\" at the left edge.</p>\n",
            n > STRIPS_TOP ? "twenty" : "");
    for (int d = 0; d < TL_REPORT_NDIST; d++) strips_of(o, pg, g, n, tl_report_dist_metric[d]);
    /* I/O and virtual memory where measured, and what --metrics asked for */
    int more[TL_M_COUNT + 3], nmore = 0;
    static const enum tl_metric io[] = {TL_M_BYTES_READ, TL_M_BYTES_WRITTEN, TL_M_VIRTUAL_MEMORY_BYTES};
    for (size_t i = 0; i < 3; i++) more[nmore++] = io[i];
    for (size_t i = 0; i < pg->nextra; i++) more[nmore++] = pg->extra[i];
    for (int i = 0; i < nmore; i++) {
        bool seen = false;
        for (int d = 0; d < TL_REPORT_NDIST; d++) seen |= (int)tl_report_dist_metric[d] == more[i];
        for (int j = 0; j < i; j++) seen |= more[j] == more[i];
        if (!seen) strips_of(o, pg, g, n, (enum tl_metric)more[i]);
    }
    free(g);
}
