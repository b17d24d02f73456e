/* The report page (report.h): HTML with inline SVG and CSS -- no font, no
 * fetch, and one small inline script, the task table's (tasks.c), which the
 * rest of the page does not need -- so it opens offline in any browser, can
 * be attached to a ticket, and renders at once.
 *
 * The tables' numbers and the quantile marks are read from the summary's
 * own groups and sketches (core/summary.h), so they are the numbers
 * `summary --format json` prints; each carries its exact value in data-v
 * and a tooltip, and an approximate one is marked "≈" with its alpha.
 * Colors are told apart by lightness and dash, not hue alone, so the page
 * survives grayscale. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/aggregate.h"
#include "core/glossary.h"
#include "core/intern.h"
#include "core/numfmt.h"
#include "report/report.h"
#include "report/svg.h"
#include "report/view.h"

const enum tl_metric tl_report_dist_metric[TL_REPORT_NDIST] = {
    TL_M_WALL_TIME_S, TL_M_CPU_TIME_S, TL_M_MAX_RSS_BYTES, TL_M_QUEUE_TIME_S};
static const char *const rank_title[TL_RANK_COUNT] = {"longest wall time", "most memory",
                                                      "most attempts"};
static const char *const res_title[TL_REPORT_NRES] = {"cores", "memory"};

/* A plot's label and id hold a name shortened to this (its table row and
 * its hover text have it whole). */
#define NAME_CAP 1024

/* "1st", "2nd", "3rd", "4th", "11th", "22nd": an ordinal in English. */
static const char *ordinal(size_t n, char *out, size_t cap)
{
    const char *sfx = n % 100 >= 11 && n % 100 <= 13 ? "th"
                      : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
    snprintf(out, cap, "%zu%s", n, sfx);
    return out;
}

/* ---------------------------------------------------------------- sections */

static void head(FILE *o, const struct tl_report_page *pg)
{
    fputs("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width\"><title>",
          o);
    tl_html_esc(o, pg->title);
    fprintf(o, "</title><style>%s</style></head><body>\n<h1>", tl_report_css);
    tl_html_esc(o, pg->title);
    fputs("</h1>\n<p class=\"note\">tasklens report", o);
    if (pg->generated) fprintf(o, ", made %s", pg->generated);
    fputs(". One file, no network: every plot is inline SVG. Hover a mark or a number for its "
          "exact value. Quantiles are exact (linear interpolation, as numpy) unless marked "
          "<span class=\"approx\">≈</span>, which are within the sketch's relative error "
          "alpha.</p>\n",
          o);
    if (pg->profile_only) { /* a line profile: its own sections only */
        fputs("<nav><a href=\"#lines\">line profile</a><a href=\"#inputs\">inputs</a></nav>\n", o);
        return;
    }
    fputs("<nav><a href=\"#rightsizing\">right-sizing</a><a href=\"#inputs\">inputs</a><a href=\"#summary\">summary</a>"
          "<a href=\"#workflows\">workflows</a><a href=\"#time\">over time</a><a href=\"#outliers\">outliers</a>"
          "<a href=\"#failures\">failures</a><a href=\"#strips\">side by side</a>",
          o);
    if (pg->baseline) fputs("<a href=\"#baseline\">against the baseline</a>", o);
    fputs("<a href=\"#groups\">per category</a></nav>\n", o);
}

/* One metric's p50, p95 and p99 in one cell (a table of four metrics
 * then fits the window), each with its exact value in data-v. */
static void quantiles_cell(FILE *o, struct tl_sketch *m, enum tl_metric metric)
{
    static const char *const qs[] = {"0.5", "0.95", "0.99"};
    static const double qv[] = {0.5, 0.95, 0.99};
    bool approx = tl_view_approx(m);
    fputs("<td class=\"qs\">", o); /* wraps between its numbers when the page is narrow, never inside one */
    for (int k = 0; k < 3; k++) {
        double v = tl_view_quantile(m, qv[k]);
        char h[48], exact[48];
        tl_plot_fmt(h, sizeof h, v, tl_metric_info[metric].unit);
        if (isfinite(v)) snprintf(exact, sizeof exact, "%.17g", v);
        else snprintf(exact, sizeof exact, "null");
        fprintf(o, "%s<span data-m=\"%s\" data-q=\"%s\" data-v=\"%s\" title=\"p%s %s%s\"%s>%s%s</span>",
                k ? " · " : "", tl_metric_info[metric].name, qs[k], exact, k ? (k == 1 ? "95" : "99") : "50",
                approx ? "within alpha: " : "", exact, approx ? " class=\"approx\"" : "",
                approx && isfinite(v) ? "≈" : "", h);
    }
    fputs("</td>", o);
}

size_t tl_report_collapsed_open(FILE *o, size_t rest, const char *what, const char *order)
{
    size_t shown = rest < TL_REPORT_DETAILS_MAX ? rest : TL_REPORT_DETAILS_MAX;
    char n[32];
    tl_fmt_grouped(n, rest);
    fprintf(o, "<details><summary>the %s other %s%s%s</summary>", n, what, order,
            shown < rest ? " (the first 1,000 of them)" : "");
    return shown;
}

void tl_report_collapsed_close(FILE *o, size_t rest, const char *what, const char *cmd, const char *of)
{
    if (rest > TL_REPORT_DETAILS_MAX) {
        char n[32];
        tl_fmt_grouped(n, rest - TL_REPORT_DETAILS_MAX);
        fprintf(o, "<p class=\"note\" data-left-out=\"%zu\">%s more %s are left off this page (it lists 1,000 "
                   "of them): <code>%s</code>%s has them all.</p>", rest - TL_REPORT_DETAILS_MAX, n, what, cmd, of);
    }
    fputs("</details>\n", o);
}

/* One of the four metrics the page always shows. */
static bool drawn_metric(int m)
{
    for (int d = 0; d < TL_REPORT_NDIST; d++)
        if ((int)tl_report_dist_metric[d] == m) return true;
    return false;
}

static void summary_head(FILE *o, const struct tl_report_page *pg)
{
    fputs("<div class=\"wide\"><table data-table=\"summary\"><tr><th class=\"n\">category</th>", o);
    tl_cell_counts_head(o);
    for (int d = 0; d < TL_REPORT_NDIST; d++)
        fprintf(o, "<th>%s<br><small>p50 · p95 · p99</small></th>", tl_report_dist_label[d]);
    for (size_t k = 0; k < pg->nextra; k++)
        if (!drawn_metric(pg->extra[k]))
            fprintf(o, "<th>%s<br><small>p50 · p95 · p99</small></th>", tl_metric_info[pg->extra[k]].name);
    fputs("</tr>\n", o);
}

static void summary_rows(FILE *o, const struct tl_report_page *pg, const struct view *v,
                         struct tl_agg_group *const *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tl_cell_group_row(o, v, g[i]);
        tl_cell_group_counts(o, g[i]);
        for (int d = 0; d < TL_REPORT_NDIST; d++)
            quantiles_cell(o, tl_view_metric(v, g[i], tl_report_dist_metric[d]), tl_report_dist_metric[d]);
        for (size_t k = 0; k < pg->nextra; k++)
            if (!drawn_metric(pg->extra[k]))
                quantiles_cell(o, tl_view_metric(v, g[i], (enum tl_metric)pg->extra[k]), (enum tl_metric)pg->extra[k]);
        fputs("</tr>\n", o);
    }
}

/* The categories that cost most first; past TL_REPORT_TOP, one "others" row
 * with their sums, and their own rows in a collapsed section (no script:
 * <details>). */
static void summary_section(FILE *o, const struct tl_report_page *pg, const struct view *v)
{
    fputs("<h2 id=\"summary\">Summary per category</h2><p class=\"note\">The numbers of "
          "<code>tasklens summary --format json</code>: tasks (last attempts), attempts, open "
          "(unfinished at the end of the input), and per metric its p50 · p95 · p99 over the "
          "tasks' last attempts; the categories that hold the most wall-hours first.</p>",
          o);
    struct tl_agg_group **g;
    size_t n = tl_report_by_cost(pg->summary, &g), series = v->n - n;
    if (!g) return;
    size_t top = n > TL_REPORT_TOP + 1 ? TL_REPORT_TOP : n;
    summary_head(o, pg);
    summary_rows(o, pg, v, g, top);
    if (top < n) {
        uint64_t t = 0, a = 0, op = 0;
        double h = 0, ch = 0;
        for (size_t i = top; i < n; i++) {
            t += g[i]->tasks, a += g[i]->attempts, op += g[i]->open;
            h += tl_summary_runtime_hours(g[i]);
            ch += tl_summary_core_hours(g[i]);
        }
        char hs[32], chs[32];
        tl_fmt_count(hs, sizeof hs, h);
        tl_fmt_count(chs, sizeof chs, ch);
        fprintf(o, "<tr data-others=\"%zu\"><td class=\"n\"><i>%zu others</i></td><td>%llu</td><td>%llu</td>"
                   "<td>%llu</td><td data-v=\"%.17g\">%s</td><td data-v=\"%.17g\">%s</td>"
                   "<td colspan=\"%zu\"></td></tr>\n",
                n - top, n - top, (unsigned long long)t, (unsigned long long)a, (unsigned long long)op, h,
                hs, ch, ch > 0 ? chs : "-", (size_t)TL_REPORT_NDIST + pg->nextra);
    }
    fputs("</table></div>\n", o);
    if (series)
        fprintf(o, "<p class=\"note\" data-series=\"%zu\">%zu sample series (resource counters, "
                   "not tasks) are left out of this table; <code>tasklens summary --format json</code> "
                   "has their values.</p>\n", series, series);
    if (top < n) {
        size_t shown = tl_report_collapsed_open(o, n - top, "categories", "");
        summary_head(o, pg);
        summary_rows(o, pg, v, g + top, shown);
        fputs("</table></div>", o);
        tl_report_collapsed_close(o, n - top, "categories", "tasklens summary --format csv", "");
    }
    free(g);
}

/* The outliers: the tasks with the longest wall time, most memory, most
 * attempts, each with its category and value. */
static void outliers_section(FILE *o, const struct tl_report_page *pg)
{
    fputs("<h2 id=\"outliers\">Outliers</h2><div class=\"row\">", o);
    for (int r = 0; r < TL_RANK_COUNT; r++) {
        fprintf(o, "<table data-table=\"top-%d\"><tr><th colspan=\"3\">%s</th></tr>"
                   "<tr><th class=\"n\">task</th><th class=\"n\">category</th><th>%s</th></tr>",
                r, rank_title[r], r == TL_RANK_RETRIES ? "attempts" : "value");
        for (size_t i = 0; i < pg->ntop[r]; i++) {
            const struct tl_report_outlier *t = &pg->top[r][i];
            fputs("<tr>", o);
            tl_html_name_cell(o, t->id);
            tl_html_name_cell(o, t->group);
            tl_cell_num(o, t->value, r == TL_RANK_WALL ? TL_UNIT_SECONDS
                                  : r == TL_RANK_MEM ? TL_UNIT_BYTES
                                                     : TL_UNIT_COUNT,
                     false, NULL);
            fputs("</tr>", o);
        }
        if (!pg->ntop[r])
            fprintf(o, "<tr><td colspan=\"3\">%s</td></tr>",
                    r == TL_RANK_RETRIES               ? "no task needed a second attempt"
                    : r == TL_RANK_MEM && pg->nsamples ? "not per task: measured as <a href=\"#samples\">"
                                                         "resource samples</a>"
                                                       : "none measured");
        fputs("</table>", o);
    }
    fputs("</div>\n", o);
}

static void workflows_head(FILE *o)
{
    fputs("<div class=\"wide\"><table data-table=\"workflows\"><tr><th class=\"n\">source</th>"
          "<th class=\"n\">workflow</th>", o);
    tl_cell_counts_head(o);
    fputs("<th>wall time p50</th><th>p95</th><th class=\"n\">results</th></tr>\n", o);
}

static void workflow_rows(FILE *o, const struct view *wf, struct tl_agg_group *const *g, size_t n)
{
    struct tl_buf sb = {0}, nb = {0};
    for (size_t i = 0; i < n; i++) {
        const char *src = tl_summary_group_tag(wf->s, g[i], "source", &sb);
        const char *name = tl_summary_group_tag(wf->s, g[i], "workflow", &nb);
        fputs("<tr data-wf=\"", o);
        tl_html_esc(o, src ? src : "");
        fputc('|', o);
        tl_html_esc(o, name ? name : "");
        fputs("\">", o);
        tl_html_name_cell(o, src ? src : "-");
        tl_html_name_cell(o, name ? name : "-");
        tl_cell_group_counts(o, g[i]);
        struct tl_sketch *m = tl_view_metric(wf, g[i], TL_M_WALL_TIME_S);
        tl_cell_num(o, tl_view_quantile(m, 0.5), TL_UNIT_SECONDS, tl_view_approx(m), "data-m=\"wall_time_s\" data-q=\"0.5\"");
        tl_cell_num(o, tl_view_quantile(m, 0.95), TL_UNIT_SECONDS, tl_view_approx(m), "data-m=\"wall_time_s\" data-q=\"0.95\"");
        fputs("<td class=\"n\">", o);
        for (size_t r = 0; r < g[i]->nresults; r++) {
            tl_html_esc(o, g[i]->results[r].name);
            fprintf(o, " %llu ", (unsigned long long)g[i]->results[r].n);
        }
        fputs("</td></tr>\n", o);
    }
    tl_buf_free(&sb);
    tl_buf_free(&nb);
}

/* Per source and workflow (a manager run, an LSST run, a trace file): the
 * ones that hold the most wall-hours first, TL_REPORT_TOP, then the next
 * collapsed (a directory of a million trace files is a million workflows). */
static bool workflows_section(FILE *o, struct tl_summary *workflows, const struct view *wf)
{
    struct tl_agg_group **g;
    size_t n = tl_report_by_cost(workflows, &g);
    if (!g) return false;
    fputs("<h2 id=\"workflows\">Per source and workflow</h2><p class=\"note\">The numbers of "
          "<code>tasklens summary --by source,workflow --format json</code>; the workflows that hold the most "
          "wall-hours first.</p>", o);
    size_t top = n > TL_REPORT_TOP + 1 ? TL_REPORT_TOP : n;
    workflows_head(o);
    workflow_rows(o, wf, g, top);
    fputs("</table></div>\n", o);
    if (top < n) {
        size_t shown = tl_report_collapsed_open(o, n - top, "workflows", "");
        workflows_head(o);
        workflow_rows(o, wf, g + top, shown);
        fputs("</table></div>", o);
        tl_report_collapsed_close(o, n - top, "workflows", "tasklens summary --by source,workflow --format json", "");
    }
    free(g);
    return true;
}

/* "SUCCESS 1,000 · SIGNAL 3": a group's results or exit codes, each with
 * its count, failures set off. */
static void count_list(FILE *o, const struct tl_count *c, size_t n, bool exits)
{
    for (size_t j = 0; j < n; j++) {
        const char *k = c[j].name;
        bool bad = exits ? strcmp(k, "0") != 0 : tl_attempt_verdict(k, false, 0) == TL_VERDICT_FAILED;
        char h[32];
        tl_fmt_count(h, sizeof h, (double)c[j].n);
        fprintf(o, "%s<span data-%s=\"", j ? " · " : "", exits ? "exit" : "result");
        tl_html_esc(o, k);
        fprintf(o, "\" data-v=\"%llu\"%s>%s", (unsigned long long)c[j].n, bad ? " class=\"bad\"" : "",
                exits ? "exit " : "");
        tl_html_esc(o, k);
        fprintf(o, " &times;%s</span>", h);
    }
}

/* Per category: tasks, how many failed for good (their last attempt's
 * result is not a success) and the rate, the attempts that were retries,
 * the failed attempts' causes, then the results and exit codes. */
static const struct tl_report_group *report_group(const struct tl_report_page *pg, const char *name)
{
    int32_t id = pg->group_names ? tl_intern_find(pg->group_names, name, strlen(name)) : -1;
    return id >= 0 && (size_t)id < pg->ngroups ? &pg->groups[id] : NULL;
}

struct failing {
    const struct tl_agg_group *g;
    uint64_t failed, known; /* failed for good; tasks whose result or exit code is known */
    size_t cost_rank;       /* its place in the cost order */
};

static int by_failed(const void *a, const void *b)
{
    const struct failing *x = a, *y = b;
    if (x->failed != y->failed) return x->failed < y->failed ? 1 : -1;
    return (x->cost_rank > y->cost_rank) - (x->cost_rank < y->cost_rank);
}

static void failures_head(FILE *o)
{
    fputs("<div class=\"wide\"><table data-table=\"failures\"><tr><th class=\"n\">category</th><th>", o);
    tl_report_term(o, "task", "tasks");
    fputs("</th><th>", o);
    tl_report_term(o, "failed", "failed");
    fputs("</th><th>failure rate</th><th>", o);
    tl_report_term(o, "retried", "retried");
    fputs("</th><th class=\"n\">", o);
    tl_report_term(o, "cause", "causes");
    fputs(" (failed attempts)</th><th class=\"n\">results (last attempts)</th><th class=\"n\">"
          "exit codes</th></tr>\n", o);
}

static void failure_row(FILE *o, const struct view *v, const struct failing *f)
{
    const struct tl_agg_group *g = f->g;
    fputs("<tr data-g=\"", o);
    tl_html_esc(o, tl_view_name(v, g));
    fputs("\">", o);
    tl_html_name_cell(o, tl_view_name(v, g));
    tl_cell_count(o, g->tasks, "tasks");
    if (f->known) {
        tl_cell_count(o, f->failed, "failed");
        fprintf(o, "<td data-k=\"failure_rate\" data-v=\"%.17g\"%s>%.1f %%</td>",
                (double)f->failed / (double)f->known, f->failed ? " class=\"bad\"" : "",
                100.0 * (double)f->failed / (double)f->known);
    } else {
        fputs("<td data-k=\"failed\" data-v=\"null\">-</td><td data-k=\"failure_rate\" "
              "data-v=\"null\">-</td>", o);
    }
    tl_cell_count(o, g->attempts - g->tasks, "retried");
    fputs("<td class=\"n\" data-k=\"causes\">", o);
    tl_report_causes(o, g);
    fputs("</td><td class=\"n\">", o);
    count_list(o, g->results, g->nresults, false);
    fputs("</td><td class=\"n\">", o);
    count_list(o, g->exits, g->nexits, true);
    fputs("</td></tr>\n", o);
}

/* Per category: tasks, how many failed for good and the rate, the retried
 * attempts, the results and exit codes. The categories with most failures
 * first (then by cost); past twenty, one "others" row and the rest
 * collapsed. */
static void failures_section(FILE *o, const struct tl_report_page *pg, const struct view *v)
{
    fputs("<h2 id=\"failures\">Results and exit codes</h2><p class=\"note\">Per category, over "
          "each task's last attempt: how many failed for good (a result that is not SUCCESS, "
          "Spark's Success, LSST's NO_WORK or Parsl's exec_done, or an exit code other than 0) and "
          "their share; retried = attempts that were not a task's last; causes = why the failed "
          "attempts failed, where the input says (exit 137 is a kill, usually for memory). Most "
          "failures first.</p>",
          o);
    struct tl_agg_group **g;
    size_t n = tl_report_by_cost(pg->summary, &g), k = 0;
    struct failing *f = g ? calloc(n + 1, sizeof *f) : NULL;
    for (size_t i = 0; f && i < n; i++) {
        if (!g[i]->tasks) continue; /* a sample series */
        const struct tl_report_group *rg = report_group(pg, tl_view_name(v, g[i]));
        uint64_t known = 0;
        for (size_t j = 0; j < g[i]->nresults; j++)
            known += strcmp(g[i]->results[j].name, "(none)") ? g[i]->results[j].n : 0;
        struct tl_agg_apart ap = tl_agg_group_apart(g[i]); /* this run's tasks: not the apart ones */
        known -= ap.cached + ap.cancelled + ap.libraries;
        if (!known) known = g[i]->nexits ? g[i]->tasks : 0; /* an exit code without a result */
        f[k] = (struct failing){g[i], rg ? rg->failed : 0, known, k};
        k++;
    }
    if (f) qsort(f, k, sizeof *f, by_failed);
    size_t top = k > TL_REPORT_TOP + 1 ? TL_REPORT_TOP : k;
    failures_head(o);
    for (size_t i = 0; i < top; i++) failure_row(o, v, &f[i]);
    if (top < k) {
        uint64_t t = 0, fl = 0, r = 0;
        for (size_t i = top; i < k; i++) t += f[i].g->tasks, fl += f[i].failed, r += f[i].g->attempts - f[i].g->tasks;
        fprintf(o, "<tr data-others=\"%zu\"><td class=\"n\"><i>%zu others</i></td><td>%llu</td><td>%llu"
                   "</td><td></td><td>%llu</td><td colspan=\"3\"></td></tr>\n",
                k - top, k - top, (unsigned long long)t, (unsigned long long)fl, (unsigned long long)r);
    }
    fputs("</table></div>\n", o);
    if (top < k) {
        size_t shown = tl_report_collapsed_open(o, k - top, "categories", "");
        failures_head(o);
        for (size_t i = top; i < top + shown; i++) failure_row(o, v, &f[i]);
        fputs("</table></div>", o);
        tl_report_collapsed_close(o, k - top, "categories", "tasklens summary --format json", "");
    }
    free(f);
    free(g);
}


/* ---------------------------------------------------------------- per category */

/* Histogram on a log axis (positive values; zeros counted in the caption). */
static void histogram(FILE *o, const char *gname, int d, const struct tl_report_dist *ds)
{
    size_t zeros = 0;
    while (zeros < ds->n && !(ds->v[zeros] > 0)) zeros++;
    enum tl_unit unit = tl_metric_info[tl_report_dist_metric[d]].unit;
    char label[NAME_CAP + 160], plot[NAME_CAP + 64];
    snprintf(label, sizeof label, "%s of %s: histogram, log axis (%zu tasks%s)", tl_report_dist_label[d],
             gname, ds->n, zeros ? ", those at 0 left out" : "");
    snprintf(plot, sizeof plot, "hist %s %s", tl_metric_info[tl_report_dist_metric[d]].name, gname);
    size_t n = ds->n - zeros;
    const double *v = ds->v + zeros;
    double lo = n ? v[0] : 1, hi = n ? v[n - 1] : 10;
    if (hi <= lo) {
        lo /= 1.5;
        hi *= 1.5;
    }
    enum { NB = 30 };
    size_t cnt[NB] = {0}, top = 1;
    double llo = log10(lo), lhi = log10(hi);
    for (size_t i = 0; i < n; i++) {
        int b = (int)((log10(v[i]) - llo) / (lhi - llo) * NB);
        cnt[b < 0 ? 0 : b >= NB ? NB - 1 : b]++;
    }
    for (int b = 0; b < NB; b++) top = cnt[b] > top ? cnt[b] : top;
    struct tl_plot p = {o, 300, 170, 46, 22, 8, 32, lo, hi, 0, (double)top, true, false, unit,
                        TL_UNIT_COUNT, false};
    tl_plot_begin(&p, plot, label, tl_report_dist_label[d], "tasks");
    for (int b = 0; b < NB; b++) {
        if (!cnt[b]) continue;
        double a = pow(10, llo + (lhi - llo) * b / NB), z = pow(10, llo + (lhi - llo) * (b + 1) / NB);
        double x = tl_plot_x(&p, a), y = tl_plot_y(&p, (double)cnt[b]);
        char ha[32], hz[32];
        tl_plot_fmt(ha, sizeof ha, a, unit);
        tl_plot_fmt(hz, sizeof hz, z, unit);
        fprintf(o, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
                   "<title>%s to %s: %zu tasks</title></rect>",
                x, y, fmax(1, tl_plot_x(&p, z) - x - 0.5), p.h - p.mb - y, ha, hz, cnt[b]);
    }
    tl_plot_end(&p);
}

/* The CDF with p50/p95/p99 marked (the summary's numbers). */
/* A CDF's polyline over the sorted positive values (every k-th past 400). */
static void cdf_line(FILE *o, const struct tl_plot *p, const struct tl_report_dist *ds, const char *cls)
{
    size_t zeros = 0;
    while (zeros < ds->n && !(ds->v[zeros] > 0)) zeros++;
    fprintf(o, "<polyline class=\"%s\" points=\"", cls);
    size_t step = ds->n > 400 ? ds->n / 400 : 1;
    for (size_t i = zeros; i < ds->n; i += step) {
        tl_svg_num(o, tl_plot_x(p, ds->v[i]));
        putc(',', o);
        tl_svg_num(o, tl_plot_y(p, (double)(i + 1) / (double)ds->n));
        putc(' ', o);
    }
    if (ds->n > zeros) {
        tl_svg_num(o, tl_plot_x(p, ds->v[ds->n - 1]));
        putc(',', o);
        tl_svg_num(o, tl_plot_y(p, 1));
    }
    fputs("\"/>", o);
}

static void cdf(FILE *o, const char *gname, int d, const struct tl_report_dist *ds,
                struct tl_sketch *m, const struct tl_report_dist *base)
{
    enum tl_unit unit = tl_metric_info[tl_report_dist_metric[d]].unit;
    size_t zeros = 0;
    while (zeros < ds->n && !(ds->v[zeros] > 0)) zeros++;
    double lo = zeros < ds->n ? ds->v[zeros] : 1, hi = ds->n ? ds->v[ds->n - 1] : 10;
    char label[NAME_CAP + 160], plot[NAME_CAP + 64];
    snprintf(label, sizeof label, "%s of %s: cumulative distribution, log axis, p50 p95 p99 "
             "marked", tl_report_dist_label[d], gname);
    snprintf(plot, sizeof plot, "cdf %s %s", tl_metric_info[tl_report_dist_metric[d]].name, gname);
    struct tl_plot p = {o, 300, 170, 46, 22, 8, 32, lo, hi > lo ? hi : lo * 2, 0, 1, true, false,
                        unit, TL_UNIT_COUNT, false};
    tl_plot_begin(&p, plot, label, tl_report_dist_label[d], "fraction of tasks");
    if (base && base->n) cdf_line(o, &p, base, "cdf base"); /* under the run's, gray */
    cdf_line(o, &p, ds, "cdf");
    static const char *const qs[] = {"0.5", "0.95", "0.99"}, *const qn[] = {"p50", "p95", "p99"},
                             *const qcls[] = {"q50", "q95", "q99"};
    static const double qv[] = {0.5, 0.95, 0.99};
    bool approx = tl_view_approx(m);
    for (int k = 0; m && k < 3; k++) {
        double q = tl_view_quantile(m, qv[k]);
        if (!(q > 0)) continue;
        double x = tl_plot_x(&p, q);
        char h[32];
        tl_plot_fmt(h, sizeof h, q, unit);
        /* the labels stacked in the top-left corner, each after a swatch of its line: above a CDF
         * there is nothing to hide, and three labels next to their lines collided */
        int y = p.mt + 11 + 12 * k;
        fprintf(o, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" data-q=\"%s\" "
                   "data-v=\"%.17g\"><title>%s %s%.17g%s</title></line>"
                   "<line class=\"%s\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
                   "<text class=\"ql\" x=\"%d\" y=\"%d\">%s %s%s</text>",
                qcls[k], x, p.mt, x, p.h - p.mb, qs[k], q, qn[k], approx ? "≈ " : "= ", q,
                approx ? " (within alpha)" : "", qcls[k], p.ml + 4, y - 3, p.ml + 18, y - 3, p.ml + 21, y, qn[k],
                approx ? "≈" : "", h);
    }
    tl_plot_end(&p);
}

static void scatter(FILE *o, const struct tl_report_page *pg, const struct tl_report_group *g,
                    int r)
{
    const struct tl_report_scatter *sc = &g->scatter[r];
    const struct tl_report_advice *a = &g->advice[r];
    enum tl_unit unit = r == TL_REPORT_MEM ? TL_UNIT_BYTES : TL_UNIT_COUNT;
    if (!sc->total) return;
    size_t placed = 0;
    for (size_t i = 0; i < sc->n; i++) placed += sc->p[i].x > 0 && sc->p[i].y > 0;
    if (!placed) { /* nothing for a log axis */
        fprintf(o, "<p class=\"note\" data-zero=\"%zu\">%s: no attempt has both %s and used above 0; a log "
                   "axis has no place for them.</p>", sc->n, res_title[r], sc->requested ? "requested" : "allocated");
        return;
    }
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < sc->n; i++) {
        double x = sc->p[i].x, y = sc->p[i].y;
        if (x > 0) lo = fmin(lo, x), hi = fmax(hi, x);
        if (y > 0) lo = fmin(lo, y), hi = fmax(hi, y);
    }
    if (a->has && a->rec > 0) lo = fmin(lo, a->rec), hi = fmax(hi, a->rec);
    if (!isfinite(lo)) lo = hi > 0 ? hi / 10 : 1;
    lo /= 1.2;
    hi *= 1.2;
    char label[NAME_CAP + 160], plot[NAME_CAP + 64], xl[64], yl[64];
    snprintf(label, sizeof label, "%s of %s: %s against used, per attempt%s", res_title[r],
             g->name, sc->requested ? "requested" : "allocated",
             sc->n < sc->total ? " (sampled)" : "");
    snprintf(plot, sizeof plot, "scatter %s %s", res_title[r], g->name);
    snprintf(xl, sizeof xl, "%s %s", sc->requested ? "requested" : "allocated", res_title[r]);
    snprintf(yl, sizeof yl, "used %s (peak)", res_title[r]);
    /* bytes tick labels ("256MiB") need more room than the axis title leaves at 52 */
    int ml = unit == TL_UNIT_BYTES ? 62 : 52;
    struct tl_plot p = {o, 300 + ml - 52, 220, ml, 22, 8, 32, lo, hi, lo, hi, true, true, unit, unit, false};
    tl_plot_begin(&p, plot, label, xl, yl);
    fprintf(o, "<line class=\"diag\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>used "
               "= %s</title></line>",
            tl_plot_x(&p, lo), tl_plot_y(&p, lo), tl_plot_x(&p, hi), tl_plot_y(&p, hi),
            sc->requested ? "requested" : "allocated");
    if (a->has && a->rec > 0) {
        char h[32];
        tl_plot_fmt(h, sizeof h, a->rec, unit);
        fprintf(o, "<line class=\"rec\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" data-v=\"%.17g\">"
                   "<title>recommended %.17g</title></line><text class=\"ql\" x=\"%d\" y=\"%.1f\">"
                   "recommended %s</text>",
                p.ml, tl_plot_y(&p, a->rec), p.w - p.mr, tl_plot_y(&p, a->rec), a->rec, a->rec,
                p.ml + 3, tl_plot_y(&p, a->rec) - 3, h);
    }
    size_t at_zero = 0;
    for (size_t i = 0; i < sc->n; i++) {
        char hx[32], hy[32];
        if (!(sc->p[i].x > 0 && sc->p[i].y > 0)) { /* no place on a log axis: counted under the plot */
            at_zero++;
            continue;
        }
        tl_plot_fmt(hx, sizeof hx, sc->p[i].x, unit);
        tl_plot_fmt(hy, sizeof hy, sc->p[i].y, unit);
        fputs("<circle class=\"pt\" cx=\"", o);
        tl_svg_num(o, tl_plot_x(&p, sc->p[i].x));
        fputs("\" cy=\"", o);
        tl_svg_num(o, tl_plot_y(&p, sc->p[i].y));
        fprintf(o, "\" r=\"2.5\"><title>%s %s, used %s</title></circle>", sc->requested ? "requested" : "allocated",
                hx, hy);
    }
    tl_plot_end(&p);
    char nth[32];
    char total[32];
    tl_fmt_grouped(total, sc->total);
    if (sc->n < sc->total)
        fprintf(o, "<p class=\"note\">%zu of %s attempts drawn (every %s).</p>", sc->n, total,
                ordinal((sc->total + sc->n - 1) / sc->n, nth, sizeof nth));
    if (at_zero)
        fprintf(o, "<p class=\"note\" data-zero=\"%zu\">%zu drawn attempt%s at 0, which a log axis has no "
                   "place for, left out.</p>", at_zero, at_zero, at_zero == 1 ? "" : "s");
    (void)pg;
}

/* The share of attempts over the recommendation as `advise` prints it
 * ("2.8%"), the fraction itself in data-v (advise's exceed_fraction). */
static void exceed_cell(FILE *o, double f)
{
    if (!isfinite(f)) {
        tl_cell_num(o, f, TL_UNIT_COUNT, false, "data-k=\"exceed_fraction\"");
        return;
    }
    fprintf(o, "<td data-k=\"exceed_fraction\" data-v=\"%.17g\" title=\"%.17g\">%.1f%%</td>", f, f, 100.0 * f);
}

static void advice_table(FILE *o, const struct tl_report_page *pg, const struct tl_report_group *g)
{
    fprintf(o, "<table data-table=\"advice\" data-g=\"");
    tl_html_esc(o, g->name);
    fprintf(o, "\"><tr><th class=\"n\">resource</th><th>allocated p50</th><th>used p%02.0f</th>"
               "<th>recommend</th><th>exceed</th><th>waste</th><th>saves</th></tr>",
            pg->advise_quantile * 100);
    for (int r = 0; r < TL_REPORT_NRES; r++) {
        const struct tl_report_advice *a = &g->advice[r];
        if (!a->has) continue;
        enum tl_unit unit = r == TL_REPORT_MEM ? TL_UNIT_BYTES : TL_UNIT_COUNT;
        fprintf(o, "<tr data-res=\"%s\"><td class=\"n\">%s</td>", res_title[r], res_title[r]);
        tl_cell_num(o, a->alloc, unit, false, "data-k=\"allocated_p50\"");
        tl_cell_num(o, a->used_q, unit, false, "data-k=\"used_q\"");
        tl_cell_num(o, a->rec, unit, false, "data-k=\"recommend\"");
        exceed_cell(o, a->exceed_fraction);
        tl_cell_num(o, a->n_waste ? a->waste : NAN, TL_UNIT_COUNT, false, "data-k=\"waste\"");
        tl_cell_num(o, a->n_waste ? a->waste - a->waste_rec : NAN, TL_UNIT_COUNT, false,
                 "data-k=\"saves\"");
        fputs("</tr>", o);
    }
    fprintf(o, "</table><p class=\"note\">As <code>tasklens advise</code>: recommend = used "
               "p%02.0f (x 1.2 for memory), rounded up; waste and saves in %s-hours of "
               "allocation beyond use.</p>",
            pg->advise_quantile * 100, "core (cores) or GiB (memory)");
}

static int cmp_by_tasks(const void *a, const void *b)
{
    const struct tl_report_group *x = *(const struct tl_report_group *const *)a;
    const struct tl_report_group *y = *(const struct tl_report_group *const *)b;
    if (x->dist[0].n != y->dist[0].n) return x->dist[0].n < y->dist[0].n ? 1 : -1;
    return strcmp(x->name, y->name);
}

static void groups_section(FILE *o, const struct tl_report_page *pg, const struct view *sum,
                           struct view *base)
{
    fputs("<h2 id=\"groups\">Per category</h2>", o);
    const struct tl_report_group **v = malloc((pg->ngroups + 1) * sizeof *v);
    if (!v) return;
    /* the tables' order (most wall-hours first), then any group they lack */
    struct tl_agg_group **cg;
    size_t nc = tl_report_by_cost(pg->summary, &cg), k = 0;
    bool *taken = calloc(pg->ngroups + 1, sizeof *taken);
    for (size_t i = 0; taken && cg && i < nc; i++) {
        const struct tl_report_group *rg = report_group(pg, tl_view_name(sum, cg[i]));
        if (rg && !taken[rg - pg->groups]) {
            taken[rg - pg->groups] = true;
            v[k++] = rg;
        }
    }
    size_t rest = k;
    for (size_t i = 0; i < pg->ngroups; i++)
        if (!taken || !taken[i]) v[k++] = &pg->groups[i];
    qsort(v + rest, k - rest, sizeof *v, cmp_by_tasks);
    free(taken);
    free(cg);
    size_t shown = k < pg->groups_drawn_cap ? k : pg->groups_drawn_cap;
    if (shown < k)
        fprintf(o, "<p class=\"note\">Plots for the %zu categories that hold the most wall-hours; the "
                   "other %zu are in the tables above.</p>", shown, k - shown);
    for (size_t i = 0; i < shown; i++) {
        const struct tl_report_group *g = v[i];
        const struct tl_agg_group *sg = tl_view_find(sum, g->name);
        fputs("<section class=\"group\" data-g=\"", o);
        tl_html_esc(o, g->name);
        fputs("\"><h3>", o);
        tl_html_esc(o, g->name);
        fputs("</h3><div class=\"row\">", o);
        for (int d = 0; d < TL_REPORT_NDIST; d++) {
            const struct tl_report_dist *ds = &g->dist[d];
            if (!ds->n) continue;
            if (!(ds->v[ds->n - 1] > 0)) { /* nothing for a log axis */
                fprintf(o, ds->n == 1 ? "<p class=\"note\">%s: its one task measured 0.</p>"
                                       : "<p class=\"note\">%s: all %zu tasks measured 0.</p>",
                        tl_report_dist_label[d],
                        ds->n);
                continue;
            }
            histogram(o, g->name, d, ds);
            const struct tl_report_group *bg = base->s ? tl_view_baseline_dists(pg, base, g->name) : NULL;
            cdf(o, g->name, d, &g->dist[d], tl_view_metric(sum, sg, tl_report_dist_metric[d]),
                bg ? &bg->dist[d] : NULL);
        }
        fputs("</div><div class=\"row\">", o);
        for (int r = 0; r < TL_REPORT_NRES; r++) scatter(o, pg, g, r);
        fputs("</div>", o);
        if (g->advice[0].has || g->advice[1].has) advice_table(o, pg, g);
        fputs("</section>\n", o);
    }
    free(v);
}

enum tl_err tl_report_write_html(const struct tl_report_page *pg, FILE *o)
{
    struct view doc, base = {0}, wf = {0};
    bool ok = tl_view_open(&doc, pg->summary, true) && (!pg->baseline || tl_view_open(&base, pg->baseline, true)) &&
              (!pg->workflows || tl_view_open(&wf, pg->workflows, false));
    if (ok) head(o, pg);
    if (ok && pg->profile_only) { /* lines, not tasks: nothing task-shaped */
        tl_report_profile_card(o, pg);
        tl_report_line_profile(o, pg);
        tl_report_inputs_section(o, pg);
    } else if (ok) {
        tl_report_glance(o, pg);
        tl_report_line_profile(o, pg); /* what a profile is read for: first */
        tl_report_energy(o, pg);
        tl_report_inputs_section(o, pg);
        summary_section(o, pg, &doc);
        tl_report_stages(o, pg);
        if (pg->workflows) ok = workflows_section(o, pg->workflows, &wf) && ok;
        tl_report_time_section(o, pg);
        ok = tl_report_where_section(o, pg); /* else out of memory: no page without where the time went */
        tl_report_samples_section(o, pg);
        outliers_section(o, pg);
        failures_section(o, pg, &doc);
        if (pg->baseline) ok = tl_report_baseline_section(o, pg, &doc, &base) && ok;
        tl_report_strips(o, pg);
        tl_report_usage(o, pg);
        ok = ok && tl_report_tasks_section(o, pg); /* else out of memory: no page with its rows cut */
        groups_section(o, pg, &doc, &base);
    }
    if (ok) {
        if (!pg->profile_only) tl_report_words(o); /* a profile's page links no term of a run's */
        fputs("</body></html>\n", o);
    }
    tl_view_close(&doc);
    tl_view_close(&base);
    tl_view_close(&wf);
    if (ferror(o)) return TL_ERR_IO; /* a full disk, said as such, before a section that stopped for it */
    return ok ? TL_OK : TL_ERR_NOMEM;
}
