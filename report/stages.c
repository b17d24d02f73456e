/* What a Spark run's page shows beside the common sections (report.h,
 * issue 58 point 4): its stages as Spark's users read them -- per stage
 * (tasklens's category: the stage's name, its call site; stages of one
 * name are one row) the tasks, their Executor Run Time, JVM GC Time and its
 * share of the run time, shuffle read and write, input and output, and the
 * skew: the longest task over the median one, the number Spark tuning
 * guides watch for a straggling partition. Sums over each task's last
 * attempt (model.c); the median and the longest from the same tasks' wall
 * times the page's histograms draw. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantile.h"
#include "report/report.h"
#include "report/svg.h"

#define SKEW_MARK 2.0 /* a longest task past twice the median is marked */

static void cell(FILE *o, const char *key, double v, enum tl_unit unit)
{
    char h[48];
    if (!isfinite(v)) {
        fprintf(o, "<td data-k=\"%s\" data-v=\"null\">-</td>", key);
        return;
    }
    tl_plot_fmt(h, sizeof h, v, unit);
    fprintf(o, "<td data-k=\"%s\" data-v=\"%.17g\" title=\"%.17g\">%s</td>", key, v, v, h);
}

static void stage_row(FILE *o, const struct tl_report_group *g)
{
    const struct tl_report_stage *s = &g->stage;
    const struct tl_report_dist *wall = &g->dist[0]; /* wall time, sorted */
    double median = tl_quantile_or_nan(wall->v, wall->n, 0.5);
    double longest = wall->n ? wall->v[wall->n - 1] : NAN;
    double skew = median > 0 ? longest / median : NAN;
    fputs("<tr>", o);
    tl_html_name_cell(o, g->name);
    fprintf(o, "<td data-k=\"tasks\" data-v=\"%zu\">%zu</td>", g->finals, g->finals);
    cell(o, "run_s", s->run_s, TL_UNIT_SECONDS);
    cell(o, "gc_s", s->gc_s, TL_UNIT_SECONDS);
    char pct[32] = "-";
    double share = s->run_s > 0 && isfinite(s->gc_s) ? s->gc_s / s->run_s : NAN;
    if (isfinite(share)) snprintf(pct, sizeof pct, "%.1f %%", 100 * share);
    fprintf(o, "<td data-k=\"gc_share\" data-v=\"%.17g\">%s</td>", share, pct);
    cell(o, "shuffle_read", s->shuffle_read, TL_UNIT_BYTES);
    cell(o, "shuffle_write", s->shuffle_write, TL_UNIT_BYTES);
    cell(o, "input", s->input, TL_UNIT_BYTES);
    cell(o, "output", s->output, TL_UNIT_BYTES);
    cell(o, "median_s", median, TL_UNIT_SECONDS);
    cell(o, "max_s", longest, TL_UNIT_SECONDS);
    if (isfinite(skew))
        fprintf(o, "<td data-k=\"skew\" data-v=\"%.17g\"%s>%.2f</td>", skew, skew > SKEW_MARK ? " class=\"bad\"" : "",
                skew);
    else fputs("<td data-k=\"skew\" data-v=\"null\">-</td>", o);
    fputs("</tr>\n", o);
}

static void stages_table(FILE *o, const struct tl_report_group *const *v, size_t n)
{
    fputs("<div class=\"wide\"><table data-table=\"stages\"><tr>"
          "<th class=\"n\">stage</th><th>tasks</th><th>run time</th><th>GC time</th><th>GC share</th>"
          "<th>shuffle read</th><th>shuffle write</th><th>input</th><th>output</th><th>median task</th>"
          "<th>longest task</th><th>skew</th></tr>\n",
          o);
    for (size_t i = 0; i < n; i++) stage_row(o, v[i]);
    fputs("</table></div>\n", o);
}

static int by_run_time(const void *a, const void *b)
{
    const struct tl_report_group *x = *(const struct tl_report_group *const *)a,
                                 *y = *(const struct tl_report_group *const *)b;
    double rx = isfinite(x->stage.run_s) ? x->stage.run_s : -1, ry = isfinite(y->stage.run_s) ? y->stage.run_s : -1;
    if (rx != ry) return rx < ry ? 1 : -1;
    return strcmp(x->name, y->name);
}

void tl_report_stages(FILE *o, const struct tl_report_page *pg)
{
    const struct tl_report_group **v = malloc((pg->ngroups + 1) * sizeof *v);
    if (!v) return;
    size_t n = 0;
    for (size_t i = 0; i < pg->ngroups; i++)
        if (pg->groups[i].stage.has) v[n++] = &pg->groups[i];
    if (n) {
        qsort(v, n, sizeof *v, by_run_time);
        fputs("<h2 id=\"stages\">Stages</h2><p class=\"note\">Per stage (named by its call site; stages of one name "
              "are one row), over each task's last attempt: the Executor Run Time and JVM GC Time it took, GC's "
              "share of it, shuffle read and write, input and output, the median and longest task, and the skew "
              "-- longest / median, marked past 2: one partition much larger than the others keeps the stage "
              "waiting. The most run time first.</p>",
              o);
        size_t top = n > TL_REPORT_TOP + 1 ? TL_REPORT_TOP : n;
        stages_table(o, v, top);
        if (top < n) { /* a page of a million stage names stays a few MB */
            size_t shown = tl_report_collapsed_open(o, n - top, "stages", "");
            stages_table(o, v + top, shown);
            tl_report_collapsed_close(o, n - top, "stages", "tasklens summary --format json", "");
        }
    }
    free(v);
}
