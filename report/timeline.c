/* The report's "Over time" section (report.h): tasks running and cores
 * held against cores connected, tasks waiting and finished, from the
 * page's series (model.c binned them), one clock per run where the inputs
 * hold several. Inline SVG with the page's plot helpers (svg.h). */
#include <math.h>
#include <string.h>

#include "core/numfmt.h"
#include "report/report.h"
#include "report/svg.h"

/* A line over the bins (NAN bins skipped). */
static void series_line(FILE *o, const struct tl_plot *p, const struct tl_report_series *s,
                        const double *v, const char *cls, double shift)
{
    fprintf(o, "<polyline class=\"%s\" data-line=\"%s\" points=\"", cls, cls);
    for (size_t i = 0; i < s->nbins; i++)
        if (isfinite(v[i]))
            fprintf(o, "%.1f,%.1f ", tl_plot_x(p, s->dt * ((double)i + shift)), tl_plot_y(p, v[i]));
    fputs("\"/>", o);
}

/* One hover target per bin with every value at once. */
static void series_bins(FILE *o, const struct tl_plot *p, const struct tl_report_series *s,
                        bool conn)
{
    double bw = (p->w - p->ml - p->mr) / (double)s->nbins;
    for (size_t i = 0; i < s->nbins; i++) {
        char from[32], to[32], w[32], r[32], c[32];
        tl_summary_human(from, sizeof from, s->dt * (double)i, TL_UNIT_SECONDS);
        tl_summary_human(to, sizeof to, s->dt * (double)(i + 1), TL_UNIT_SECONDS);
        tl_fmt_count(w, sizeof w, s->waiting[i]);
        tl_fmt_count(r, sizeof r, s->running[i]);
        tl_fmt_count(c, sizeof c, s->cores[i]);
        fprintf(o, "<rect class=\"bin\" x=\"%.1f\" y=\"%d\" width=\"%.2f\" height=\"%d\"><title>"
                   "+%s to +%s: on average %s tasks waiting, %s running, %s cores held",
                tl_plot_x(p, s->dt * (double)i), p->mt, bw, p->h - p->mt - p->mb, from, to, w, r, c);
        if (conn && isfinite(s->cores_connected[i])) {
            tl_fmt_count(c, sizeof c, s->cores_connected[i]);
            fprintf(o, ", %s cores connected", c);
        }
        fprintf(o, "; %.0f tasks finished by its end</title></rect>", s->done[i]);
    }
}

/* Tasks running and cores held against cores connected; tasks waiting
 * and finished, with the times 50/90/99 % were: one series (a run's, or
 * every task's) on its own clock. */
static void time_plots(FILE *o, const struct tl_report_series *s)
{
    double ymax = 1, wmax = 1;
    bool conn = false;
    for (size_t i = 0; i < s->nbins; i++) {
        ymax = fmax(ymax, fmax(s->running[i], s->cores[i]));
        wmax = fmax(wmax, s->waiting[i]);
        if (isfinite(s->cores_connected[i])) {
            conn = true;
            ymax = fmax(ymax, s->cores_connected[i]);
        }
    }
    double span = s->dt * (double)s->nbins;
    char bin[32];
    tl_summary_human(bin, sizeof bin, s->dt, TL_UNIT_SECONDS);
    fprintf(o, "<p class=\"note\">%zu bins of %s from the first submission; each bin shows "
               "the average over the bin. A task waits from its submission (end - wall - queue "
               "time) to its start (end - wall), and runs from there to its end; the cores it "
               "holds are its allocated cores, else its used cores (CPU / wall), else 1.</p>",
            s->nbins, bin);
    fprintf(o, "<p class=\"note\"><span class=\"key\" style=\"border-top:2px solid #3b6ea8\">"
               "</span>tasks running <span class=\"key\" style=\"border-top:1px solid #000\">"
               "</span>cores held (allocated, else used)%s</p>",
            conn ? " <span class=\"key\" style=\"border-top:2px dotted #d9822b\"></span>cores "
                   "connected (the log's workers, summed over workflows)"
                 : "");
    struct tl_plot p = {o, 900, 240, 60, 20, 10, 34, 0, span, 0, ymax * 1.05, false, false,
                        TL_UNIT_SECONDS, TL_UNIT_COUNT, true};
    tl_plot_begin(&p, "concurrency", "tasks running and cores held, against cores connected",
                  "time since the first submission", "tasks / cores");
    series_line(o, &p, s, s->running, "running", 0.5);
    series_line(o, &p, s, s->cores, "cores", 0.5);
    if (conn) series_line(o, &p, s, s->cores_connected, "conn", 0.5);
    series_bins(o, &p, s, conn);
    tl_plot_end(&p);
    fputs("<p class=\"note\"><span class=\"key\" style=\"border-top:2px dashed #999\"></span>"
          "tasks waiting <span class=\"key\" style=\"border-top:2px solid #111\">"
          "</span>tasks finished (their last attempt), on the same axis</p>",
          o);
    struct tl_plot d = {o, 900, 240, 60, 20, 10, 34, 0, span, 0, fmax(wmax, s->total_tasks) * 1.05,
                        false, false, TL_UNIT_SECONDS, TL_UNIT_COUNT, true};
    tl_plot_begin(&d, "progress", "tasks waiting and tasks finished over time, with the times "
                  "50, 90 and 99 % of the tasks had finished",
                  "time since the first submission", "tasks");
    series_line(o, &d, s, s->waiting, "waiting", 0.5);
    series_line(o, &d, s, s->done, "done", 1);
    static const char *const pcts[] = {"50", "90", "99"}, *const qcls[] = {"q50", "q95", "q99"};
    for (int k = 0; k < 3; k++) {
        if (!isfinite(s->t_done[k])) continue;
        double x = tl_plot_x(&d, s->t_done[k]);
        char h[32];
        tl_summary_human(h, sizeof h, s->t_done[k], TL_UNIT_SECONDS);
        /* left of its line, unless that runs over the y axis's labels: then right of it
         * (a 10 px label is under 6 px a character) */
        bool right = x - 2 - 6.0 * (double)(strlen(h) + 5) < d.ml;
        fprintf(o, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                   "data-done=\"%s\" data-v=\"%.17g\"><title>%s %% of the tasks finished +%.17g s "
                   "after the first submission</title></line>"
                   "<text class=\"ql\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s%% +%s</text>",
                qcls[k], x, d.mt, x, d.h - d.mb, pcts[k], s->t_done[k], pcts[k], s->t_done[k],
                right ? x + 2 : x - 2, d.mt + 10 + 11 * k, right ? "start" : "end", pcts[k], h);
    }
    series_bins(o, &d, s, conn);
    tl_plot_end(&d);
    char t[3][32], n[32];
    for (int k = 0; k < 3; k++) tl_summary_human(t[k], sizeof t[k], s->t_done[k], TL_UNIT_SECONDS);
    tl_fmt_count(n, sizeof n, s->total_tasks);
    fprintf(o, "<p>Time to 50 %% of the tasks done: <b data-v=\"%.17g\">+%s</b>, 90 %%: "
               "<b data-v=\"%.17g\">+%s</b>, 99 %%: <b data-v=\"%.17g\">+%s</b> (of %s tasks).</p>\n",
            s->t_done[0], t[0], s->t_done[1], t[1], s->t_done[2], t[2], n);
}

/* Over time: every task on one clock, or, when the inputs hold several
 * runs (a log with manager runs appended, inputs weeks apart), each run on
 * its own clock from its first submission, most tasks first -- never
 * squashed into one span where a run is a spike. */
void tl_report_time_section(FILE *o, const struct tl_report_page *pg)
{
    fputs("<h2 id=\"time\">Over time</h2>", o);
    if (pg->untimed) {
        char n[32];
        tl_fmt_grouped(n, pg->untimed);
        fprintf(o, "<p class=\"note\" data-untimed=\"%zu\">%s task attempts carry no time: their input "
                   "records none (a Snakemake benchmark file holds durations only), and a file's "
                   "modification time is not when a task ran. They are in every table, not on this "
                   "timeline nor in the makespan.</p>\n", pg->untimed, n);
    }
    if (!pg->series.nbins) {
        fputs("<p>No task has a time: nothing to draw.</p>\n", o);
        return;
    }
    if (pg->nruns < 2) return time_plots(o, &pg->series);
    char all[32], drawn[32];
    tl_fmt_grouped(all, pg->nruns + pg->runs_more);
    tl_fmt_grouped(drawn, pg->nruns);
    fprintf(o, "<p class=\"note\" data-runs=\"%zu\">%s runs, each on its own clock (time since "
               "its first submission)%s%s%s.</p>\n",
            pg->nruns, all, pg->runs_more ? "; the " : "", pg->runs_more ? drawn : "",
            pg->runs_more ? " with most tasks are drawn apart" : "");
    for (size_t i = 0; i < pg->nruns; i++) {
        char n[32];
        tl_fmt_count(n, sizeof n, (double)pg->run_tasks[i]);
        fputs("<section class=\"run\" data-run=\"", o);
        tl_html_esc(o, pg->run_names[i]);
        fputs("\"><h3>run ", o);
        tl_html_esc(o, pg->run_names[i]);
        fprintf(o, " <small>(%s task%s)</small></h3>", n, pg->run_tasks[i] == 1 ? "" : "s");
        time_plots(o, &pg->runs[i]);
        fputs("</section>\n", o);
    }
}
