/* The report's comparison with a baseline run (view.h): per category and
 * metric, the baseline's p50 and p95 beside this run's and the shift
 * between them, highlighted past --threshold; the categories that cost most
 * first, the rest collapsed, and how many shifted counted over all. */
#include "report/view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/aggregate.h"
#include "core/numfmt.h"

/* A shift of now from was (this run / baseline - 1); NAN when there is
 * none to tell. */
static double shift_of(double now, double was)
{
    return was > 0 && isfinite(now) ? now / was - 1 : NAN;
}

static const double baseline_q[] = {0.5, 0.95};

/* Whether any metric of g moved past the threshold from b at p50 or p95. */
static bool baseline_shifted(const struct tl_report_page *pg, const struct view *v, const struct view *base,
                             const struct tl_agg_group *g, const struct tl_agg_group *b)
{
    for (int d = 0; d < TL_REPORT_NDIST; d++)
        for (int k = 0; k < 2; k++) {
            enum tl_metric metric = tl_report_dist_metric[d];
            double shift = shift_of(tl_view_quantile(tl_view_metric(v, g, metric), baseline_q[k]),
                                    tl_view_quantile(tl_view_metric(base, b, metric), baseline_q[k]));
            if (isfinite(shift) && fabs(shift) > pg->threshold) return true;
        }
    return false;
}

static void baseline_head(FILE *o)
{
    fputs("<div class=\"wide\"><table data-table=\"baseline\"><tr><th class=\"n\">category</th>"
          "<th>tasks</th><th>baseline</th><th class=\"n\">metric</th><th>p50 baseline</th>"
          "<th>p50 now</th><th>shift</th><th>p95 baseline</th><th>p95 now</th><th>shift</th></tr>\n",
          o);
}

/* One metric's p50 and p95, baseline, now and shift: six cells. */
static void baseline_cells(FILE *o, const struct tl_report_page *pg, const struct view *v, const struct view *base,
                           const struct tl_agg_group *g, const struct tl_agg_group *b, enum tl_metric metric)
{
    static const char *const qs[] = {"0.5", "0.95"};
    for (int k = 0; k < 2; k++) {
        double now = tl_view_quantile(tl_view_metric(v, g, metric), baseline_q[k]);
        double was = tl_view_quantile(tl_view_metric(base, b, metric), baseline_q[k]);
        double shift = shift_of(now, was);
        bool hl = isfinite(shift) && fabs(shift) > pg->threshold;
        char was_h[32], now_h[32], sv[32] = "null";
        tl_plot_fmt(was_h, sizeof was_h, was, tl_metric_info[metric].unit);
        tl_plot_fmt(now_h, sizeof now_h, now, tl_metric_info[metric].unit);
        if (isfinite(shift)) snprintf(sv, sizeof sv, "%.17g", shift);
        fprintf(o, "<td data-was=\"%.17g\">%s</td><td data-now=\"%.17g\">%s</td>", was, was_h, now, now_h);
        fprintf(o, "<td data-m=\"%s\" data-q=\"%s\" data-v=\"%s\" data-hl=\"%d\"%s>", tl_metric_info[metric].name,
                qs[k], sv, hl, !hl ? "" : shift > 0 ? " class=\"shift worse\"" : " class=\"shift better\"");
        if (isfinite(shift)) /* every metric here costs more as it grows: up is worse */
            fprintf(o, "%s%+.1f %%", !hl ? "" : shift > 0 ? "&#9650; " : "&#9660; ", shift * 100);
        else fputs("-", o);
        fputs("</td>", o);
    }
}

/* A category's rows: one per metric against its baseline group b, or one
 * saying it has none. */
static void baseline_rows(FILE *o, const struct tl_report_page *pg, const struct view *v, const struct view *base,
                          const struct tl_agg_group *g, const struct tl_agg_group *b)
{
    if (!b) {
        tl_cell_group_row(o, v, g);
        tl_cell_count(o, g->tasks, "tasks");
        fputs("<td colspan=\"8\" class=\"n\">not in the baseline</td></tr>\n", o);
        return;
    }
    for (int d = 0; d < TL_REPORT_NDIST; d++) {
        fputs("<tr data-g=\"", o);
        tl_html_esc(o, tl_view_name(v, g));
        fputs("\">", o);
        if (d == 0) { /* the category and its counts, once for its four rows */
            fprintf(o, "<td class=\"n\" rowspan=\"%d\">", TL_REPORT_NDIST);
            tl_html_esc(o, tl_view_name(v, g));
            fprintf(o, "</td><td rowspan=\"%d\" data-k=\"tasks\" data-v=\"%llu\">%llu</td>"
                       "<td rowspan=\"%d\" data-k=\"baseline_tasks\" data-v=\"%llu\">%llu</td>",
                    TL_REPORT_NDIST, (unsigned long long)g->tasks, (unsigned long long)g->tasks, TL_REPORT_NDIST,
                    (unsigned long long)b->tasks, (unsigned long long)b->tasks);
        }
        fprintf(o, "<td class=\"n\">%s</td>", tl_report_dist_label[d]);
        baseline_cells(o, pg, v, base, g, b, tl_report_dist_metric[d]);
        fputs("</tr>\n", o);
    }
}

/* The categories past `top` reordered in one pass, those that shifted
 * first (sh[i]), each part still in cost order; false for no memory. */
static bool shifted_first(struct tl_agg_group **g, const struct tl_agg_group **b, const bool *sh, size_t top,
                          size_t n)
{
    struct tl_agg_group **g2 = malloc((n + 1) * sizeof *g2);
    const struct tl_agg_group **b2 = malloc((n + 1) * sizeof *b2);
    if (!g2 || !b2) {
        free(g2);
        free(b2);
        return false;
    }
    size_t k = top;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = top; i < n; i++)
            if (sh[i] == !pass) g2[k] = g[i], b2[k++] = b[i];
    memcpy(g + top, g2 + top, (n - top) * sizeof *g);
    memcpy(b + top, b2 + top, (n - top) * sizeof *b);
    free(g2);
    free(b2);
    return true;
}

/* Per category and metric, p50 and p95 against the baseline's; a shift
 * beyond the threshold is highlighted. The categories that cost most
 * first, as the summary (TL_REPORT_TOP, then the next collapsed, those
 * that shifted first): every category's four rows made a page of 20,000
 * categories 40 MB. How many shifted is counted over all of them. */
bool tl_report_baseline_section(FILE *o, const struct tl_report_page *pg, const struct view *v,
                             struct view *base)
{
    struct tl_agg_group **g;
    size_t n = tl_report_by_cost(pg->summary, &g), shifted = 0, missing = 0;
    size_t top = n > TL_REPORT_TOP + 1 ? TL_REPORT_TOP : n;
    const struct tl_agg_group **b = g ? malloc((n + 1) * sizeof *b) : NULL;
    bool *sh = b ? malloc(n + 1) : NULL;
    for (size_t i = 0; sh && i < n; i++) {
        b[i] = tl_view_baseline_group(pg, base, tl_view_name(v, g[i]));
        sh[i] = b[i] && baseline_shifted(pg, v, base, g[i], b[i]);
        missing += !b[i];
        shifted += sh[i];
    }
    bool ok = sh && shifted_first(g, b, sh, top, n);
    free(sh);
    if (!ok) { /* out of memory: no page without the comparison asked for */
        free(b);
        free(g);
        return false;
    }
    fprintf(o, "<h2 id=\"baseline\">Against the baseline</h2><p class=\"note\">Baseline: ");
    tl_html_esc(o, pg->baseline_label);
    char ns[32], ss[32], ms[32];
    tl_fmt_grouped(ns, n);
    tl_fmt_grouped(ss, shifted);
    tl_fmt_grouped(ms, missing);
    fprintf(o, ". Per category and metric, the baseline's p50 and p95 beside this run's; shift = "
               "this run / baseline - 1, beyond ±%.3g %% highlighted: <span class=\"shift worse\">&#9650; more</span> "
               "(worse: every metric here costs more as it grows), <span class=\"shift better\">&#9660; less</span>. "
               "%s The categories that hold the most wall-hours first.</p>"
               "<p data-shifted=\"%zu\" data-missing=\"%zu\"><b>%s of %s</b> %s shifted beyond ±%.3g %% at p50 or "
               "p95%s%s%s.</p>",
            pg->threshold * 100,
            pg->exact_names ? "Categories match by exact name."
                            : "Categories match by name, a run of 8 or more hex digits (a hash, an "
                              "address) matching any other (<code>--exact-names</code>: exact).",
            shifted, missing, ss, ns, n == 1 ? "category" : "categories", pg->threshold * 100,
            missing ? "; " : "", missing ? ms : "", missing ? " not in the baseline" : "");
    baseline_head(o);
    for (size_t i = 0; i < top; i++) baseline_rows(o, pg, v, base, g[i], b[i]);
    fputs("</table></div>\n", o);
    if (top < n) {
        size_t shown = tl_report_collapsed_open(o, n - top, "categories", ", those that shifted first");
        baseline_head(o);
        for (size_t i = top; i < top + shown; i++) baseline_rows(o, pg, v, base, g[i], b[i]);
        fputs("</table></div>", o);
        tl_report_collapsed_close(o, n - top, "categories", "tasklens summary --format csv",
                                  " of this run and of the baseline");
    }
    free(b);
    free(g);
    return true;
}
