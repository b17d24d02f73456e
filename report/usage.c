/* "Use as % of the request": per category, what attempts used as a percent
 * of what they asked for -- CPU (CPU time / wall time / cpus), memory (peak
 * RSS / memory) and time (wall time / time limit) -- the view Nextflow's
 * execution report opens with (its cpuUsage, memUsage and timeUsage, "%
 * allocated" tabs). Computed as Nextflow's ReportSummary does: an attempt
 * counts where it recorded the use and the request (no cpus: 1; a CPU use of
 * 0 is left out, as there), the quartiles by linear interpolation between
 * closest ranks (R's summary). Cached and library attempts are apart, as
 * everywhere on the page (Nextflow counts its cached tasks in; the note
 * says so). The tests compare these with Nextflow's own report of the same
 * run (tests/integration/nextflow_report.py). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantile.h"
#include "report/report.h"
#include "report/svg.h"

#define USAGE_TOP 40 /* rows drawn: a page of 30,000 categories stays a few MB */

static const char *const usage_key[TL_USAGE_COUNT] = {"cpu_usage", "mem_usage", "time_usage"};
static const char *const usage_head[TL_USAGE_COUNT] = {"CPU (of cpus)", "memory (of memory)", "time (of time)"};

/* One attempt's use of kind as a percent of its request; NAN: not both. */
static double usage_pct(const struct tl_task_row *r, int kind)
{
    double wall = r->v[TL_V_WALL];
    if (kind == TL_USAGE_CPU) {
        if (!isfinite(r->v[TL_V_CPU]) || !(wall > 0) || !(r->v[TL_V_CPU] > 0)) return NAN;
        double cpus = isfinite(r->v[TL_V_REQ_CORES]) && r->v[TL_V_REQ_CORES] > 0 ? r->v[TL_V_REQ_CORES] : 1;
        return r->v[TL_V_CPU] / wall * 100 / cpus;
    }
    if (kind == TL_USAGE_MEM)
        return r->v[TL_V_MEM] > 0 && r->v[TL_V_REQ_MEM] > 0 ? r->v[TL_V_MEM] / r->v[TL_V_REQ_MEM] * 100 : NAN;
    return wall > 0 && r->v[TL_V_REQ_TIME] > 0 ? wall / r->v[TL_V_REQ_TIME] * 100 : NAN;
}

/* The category's rows read once, each kind's percentages into a column of
 * tmp (kind k at tmp + k * m), then each column sorted: a pass per kind
 * over rows scattered through memory cost three times the reading. */
void tl_report_usage_of(const struct tl_task_rows *rows, size_t k, double *tmp,
                        struct tl_report_usage u[TL_USAGE_COUNT])
{
    size_t m = rows->at[k + 1] - rows->at[k], n[TL_USAGE_COUNT] = {0};
    double sum[TL_USAGE_COUNT] = {0};
    for (size_t j = rows->at[k]; j < rows->at[k + 1]; j++) {
        const struct tl_task_row *r = &rows->r[rows->by_cat[j]];
        if (r->cached || r->library) continue;
        for (int kind = 0; kind < TL_USAGE_COUNT; kind++) {
            double p = usage_pct(r, kind);
            if (isfinite(p)) tmp[kind * m + n[kind]++] = p, sum[kind] += p;
        }
    }
    for (int kind = 0; kind < TL_USAGE_COUNT; kind++) {
        double *v = tmp + kind * m;
        size_t c = n[kind];
        tl_sort_doubles(v, c);
        u[kind] = c ? (struct tl_report_usage){c, v[0], tl_quantile_sorted(v, c, 0.25), tl_quantile_sorted(v, c, 0.5),
                                               tl_quantile_sorted(v, c, 0.75), v[c - 1], sum[kind] / (double)c}
                    : (struct tl_report_usage){0};
    }
}

static void pct(char *buf, size_t cap, double v)
{
    snprintf(buf, cap, v >= 99.5 || v == 0 ? "%.0f" : v >= 9.95 ? "%.0f" : "%.1f", v);
}

/* A cell: median (q1-q3), max, each exact in a data attribute. */
static void usage_cell(FILE *o, const char *key, const struct tl_report_usage *u)
{
    if (!u->n) {
        fprintf(o, "<td data-k=\"%s\" data-v=\"null\">-</td>", key);
        return;
    }
    char q1[16], q2[16], q3[16], mx[16];
    pct(q1, sizeof q1, u->q1);
    pct(q2, sizeof q2, u->q2);
    pct(q3, sizeof q3, u->q3);
    pct(mx, sizeof mx, u->max);
    fprintf(o, "<td data-k=\"%s\" data-v=\"%.17g\" data-min=\"%.17g\" data-q1=\"%.17g\" data-q3=\"%.17g\" "
               "data-max=\"%.17g\" data-mean=\"%.17g\" data-n=\"%zu\" title=\"%zu attempt(s); min %.4g %%, mean "
               "%.4g %%\"%s>%s %% <small>(%s-%s)</small> \xc2\xb7 max %s %%</td>",
            key, u->q2, u->min, u->q1, u->q3, u->max, u->mean, u->n, u->n, u->min, u->mean,
            u->max > 100 ? " class=\"bad\"" : "", q2, q1, q3, mx);
}

static bool any_usage(const struct tl_report_group *g)
{
    for (int k = 0; k < TL_USAGE_COUNT; k++)
        if (g->usage[k].n) return true;
    return false;
}

/* Most tasks first, then by name: the page's names as they are (no key to map back). */
static int by_tasks(const void *a, const void *b)
{
    const struct tl_report_group *x = *(const struct tl_report_group *const *)a,
                                 *y = *(const struct tl_report_group *const *)b;
    if (x->finals != y->finals) return x->finals < y->finals ? 1 : -1;
    return strcmp(x->name, y->name);
}

void tl_report_usage(FILE *o, const struct tl_report_page *pg)
{
    const struct tl_report_group **v = malloc((pg->ngroups + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v && i < pg->ngroups; i++)
        if (any_usage(&pg->groups[i])) v[n++] = &pg->groups[i];
    if (!n) {
        free(v);
        return;
    }
    qsort(v, n, sizeof *v, by_tasks);
    fputs("<h2 id=\"usage\">Use as ", o);
    tl_report_term(o, "% of request", "% of the request");
    fputs("</h2><p class=\"note\">Per category (most tasks first), what "
          "attempts used as a percent of what they asked for: CPU time / wall time / cpus, peak memory / memory, "
          "wall time / time limit (Nextflow's cpuUsage, memUsage, timeUsage): the median, the middle half "
          "(q1-q3) and the largest, over this run's attempts that recorded both (cached ones apart; Nextflow's "
          "report counts them in). Over 100 % in red: memory or time over the request is what a limit "
          "kills.</p><div class=\"wide\"><table data-table=\"usage\"><tr><th class=\"n\">category</th>",
          o);
    for (int k = 0; k < TL_USAGE_COUNT; k++) fprintf(o, "<th>%s</th>", usage_head[k]);
    fputs("</tr>\n", o);
    for (size_t i = 0; i < n && i < USAGE_TOP; i++) {
        fputs("<tr data-g=\"", o);
        tl_html_esc(o, v[i]->name);
        fputs("\">", o);
        tl_html_name_cell(o, v[i]->name);
        for (int k = 0; k < TL_USAGE_COUNT; k++) usage_cell(o, usage_key[k], &v[i]->usage[k]);
        fputs("</tr>\n", o);
    }
    fputs("</table></div>\n", o);
    if (n > USAGE_TOP)
        fprintf(o, "<p class=\"note\" data-more=\"%zu\">%zu more categor%s, with fewer tasks, not drawn here.</p>\n",
                n - USAGE_TOP, n - USAGE_TOP, n - USAGE_TOP == 1 ? "y" : "ies");
    free(v);
}
