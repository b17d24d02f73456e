/* The report's first screen: what people open it for, before any plot.
 * (Succeeded: the tasks whose last attempt did not fail for good, as the
 * failures table counts them: a success result and exit code 0.)
 *
 * A run card (inputs, span, makespan, tasks, attempts, success rate,
 * CPU-hours, and what the allocations wasted) and the categories ranked
 * by what right-sizing saves, each with `advise`'s recommendation for
 * cores, memory and disk. Every number is the one `summary --format json`
 * or `advise --format json` prints for the same inputs (the card's sums
 * are of those), and carries its exact value in data-v and a tooltip.
 *
 * Here too, the "Inputs" table: what was read, one row per input (format,
 * lines, records, rejects by reason).
 *
 * Ranked by share, not by a price: a category's score is its largest
 * share of the run's savings in any one resource, so a category that
 * holds most of the wasted disk comes first without converting GiB-hours
 * into core-hours at a rate the page would have to invent. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/aggregate.h"
#include "core/sketch.h"
#include "report/report.h"
#include "report/svg.h"

#define GLANCE_TOP 10

/* ---------------------------------------------------------------- the card */

struct card {
    size_t tasks, attempts, with_result, with_cpu, finals, failed, cancelled, cached, libraries, open;
    double cpu_hours, core_hours;
    double waste[TL_NRES], saves[TL_NRES];
};

static void add_summary(struct card *c, const struct tl_report_page *pg)
{
    struct tl_agg_group **g = NULL;
    size_t n = tl_summary_groups(pg->summary, &g);
    for (size_t i = 0; g && i < n; i++) {
        c->tasks += g[i]->tasks;
        c->attempts += g[i]->attempts;
        c->open += g[i]->open;
        for (size_t j = 0; j < g[i]->nresults; j++) /* "(none)": the summary's word for none */
            if (strcmp(g[i]->results[j].name, "(none)")) c->with_result += g[i]->results[j].n;
        if (g[i]->nexits) c->with_result += g[i]->tasks; /* an exit code says how it went too */
        c->core_hours += tl_summary_core_hours(g[i]); /* allocated: what the run held */
    }
    free(g);
}

static void add_advice(struct card *c, const struct tl_report_page *pg)
{
    for (size_t i = 0; i < pg->ngroups; i++) {
        const struct tl_report_group *g = &pg->groups[i];
        c->finals += g->finals;
        c->failed += g->failed;
        c->cancelled += g->cancelled;
        c->cached += g->cached;
        c->libraries += g->libraries;
        c->cpu_hours += g->cpu_s / 3600; /* this run's tasks: cached ones are an earlier run's */
        c->with_cpu += g->with_cpu;
        for (int r = 0; g->has_ca && r < TL_NRES; r++) {
            const struct tl_advice *a = &g->ca.a[r];
            if (!a->n_waste) continue;
            c->waste[r] += a->waste;
            c->saves[r] += tl_advice_saves(a);
        }
    }
}

/* The glossary term a card figure is, by its key; NULL: none. */
static const char *card_term(const char *key)
{
    static const char *const terms[][2] = {
        {"tasks", "task"}, {"attempts", "attempt"}, {"open", "open"}, {"cached", "cached"},
        {"cancelled", "cancelled"}, {"libraries", "library instance"}, {"makespan", "makespan"},
        {"success_rate", "succeeded"}, {"succeeded", "succeeded"}, {"failed", "failed"},
        {"retried", "retried"}, {"core_hours", "core-hours"}, {"cpu_hours", "CPU-hours"},
        {"waste_core_hours", "waste"}, {"waste_mem_gib_hours", "waste"}, {"waste_disk_gib_hours", "waste"},
    };
    for (size_t i = 0; i < sizeof terms / sizeof *terms; i++)
        if (!strcmp(terms[i][0], key)) return terms[i][1];
    return NULL;
}

/* One figure of the card: its label (linked to its glossary entry), its
 * human text, its exact value. */
static void stat(FILE *o, const char *key, const char *label, const char *text, double exact)
{
    fprintf(o, "<div class=\"stat\" data-k=\"%s\" data-v=\"%.17g\" title=\"%.17g\"><b>", key, exact,
            exact);
    tl_html_esc(o, text);
    fputs("</b><span>", o);
    const char *term = card_term(key);
    if (term) tl_report_term(o, term, label);
    else tl_html_esc(o, label);
    fputs("</span></div>", o);
}

static void time_stat(FILE *o, const char *key, const char *label, double t)
{
    char iso[40] = "-";
    time_t s = (time_t)floor(t);
    struct tm tm;
    if (isfinite(t) && gmtime_r(&s, &tm)) strftime(iso, sizeof iso, "%Y-%m-%d %H:%M UTC", &tm);
    stat(o, key, label, iso, t);
}

/* succeeded, failed and retried: Nextflow's status line (its ignored tasks
 * are among the failed: a trace does not tell them apart). */
static void status_stats(FILE *o, const struct card *c)
{
    char t[64];
    size_t ok = c->finals - c->failed - c->cancelled;
    tl_fmt_count(t, sizeof t, (double)ok);
    stat(o, "succeeded", "succeeded", t, (double)ok);
    tl_fmt_count(t, sizeof t, (double)c->failed);
    stat(o, "failed", "failed (ignored ones included)", t, (double)c->failed);
    if (c->attempts > c->tasks) {
        tl_fmt_count(t, sizeof t, (double)(c->attempts - c->tasks));
        stat(o, "retried", "retried: attempts that were not their task's last", t, (double)(c->attempts - c->tasks));
    }
}

static void card(FILE *o, const struct tl_report_page *pg, const struct card *c)
{
    char t[64];
    const struct tl_report_series *s = &pg->series;
    fputs("<div class=\"card\" data-card=\"run\">", o);
    snprintf(t, sizeof t, "%zu", pg->ninputs);
    stat(o, "inputs", pg->ninputs == 1 ? "input" : "inputs", t, (double)pg->ninputs);
    if (s->nbins) {
        time_stat(o, "start", "first submission", s->t0);
        time_stat(o, "end", "last end", s->t0 + s->dt * (double)s->nbins);
        tl_plot_fmt(t, sizeof t, s->dt * (double)s->nbins, TL_UNIT_SECONDS);
        stat(o, "makespan", "makespan", t, s->dt * (double)s->nbins);
    }
    tl_fmt_count(t, sizeof t, (double)c->tasks);
    stat(o, "tasks", "tasks", t, (double)c->tasks);
    tl_fmt_count(t, sizeof t, (double)c->attempts);
    stat(o, "attempts", "attempts", t, (double)c->attempts);
    if (c->open) { /* an unfinished run must not look finished */
        tl_fmt_count(t, sizeof t, (double)c->open);
        stat(o, "open", "still open when the input ends (not in the figures)", t, (double)c->open);
    }
    if (c->cached) {
        tl_fmt_count(t, sizeof t, (double)c->cached);
        stat(o, "cached", "cached: an earlier run's, apart from this one's", t, (double)c->cached);
    }
    if (c->cancelled) {
        tl_fmt_count(t, sizeof t, (double)c->cancelled);
        stat(o, "cancelled", "cancelled: neither failed nor succeeded", t, (double)c->cancelled);
    }
    if (c->libraries) {
        tl_fmt_count(t, sizeof t, (double)c->libraries);
        stat(o, "libraries", "TaskVine library instances, apart from the tasks", t, (double)c->libraries);
    }
    if (c->with_result && c->finals) /* the run's status, as Nextflow's report counts it */
        status_stats(o, c);
    if (c->with_result && c->finals) { /* a trace's slices have no result: no rate to show */
        double rate = (double)(c->finals - c->failed - c->cancelled) / (double)c->finals;
        snprintf(t, sizeof t, "%.1f %%", rate * 100);
        stat(o, "success_rate", c->cached || c->libraries ? "of this run's tasks succeeded (result and exit code)"
                                                          : "of tasks succeeded (result and exit code)", t, rate);
    }
    if (c->core_hours > 0) {
        tl_fmt_amount(t, sizeof t, c->core_hours, "core");
        stat(o, "core_hours", "allocated to this run's tasks (cores x wall)", t, c->core_hours);
    }
    if (c->with_cpu) {
        tl_fmt_amount(t, sizeof t, c->cpu_hours, "CPU");
        stat(o, "cpu_hours", "CPU time of this run's tasks", t, c->cpu_hours);
    }
    static const char *const waste_key[TL_NRES] = {"waste_core_hours", "waste_mem_gib_hours",
                                                   "waste_disk_gib_hours"};
    static const char *const waste_label[TL_NRES] = {"of cores allocated, unused",
                                                     "of memory allocated, unused",
                                                     "of disk allocated, unused"};
    for (int r = 0; r < TL_NRES; r++) {
        if (!(c->waste[r] > 0)) continue;
        tl_fmt_amount(t, sizeof t, c->waste[r], r == TL_RES_CORES ? "core" : "GiB");
        stat(o, waste_key[r], waste_label[r], t, c->waste[r]);
    }
    fputs("</div>\n", o);
}

/* Times read from inputs that write no zone (Nextflow, codecarbon, Parsl
 * write local clock times): said under the card, with how to shift them,
 * rather than shown as UTC without a word. */
static void zone_note(FILE *o, const struct tl_report_page *pg)
{
    const char *format = NULL;
    for (size_t i = 0; i < pg->ninputs && !format; i++)
        if (pg->inputs[i].zoneless) format = pg->inputs[i].format;
    if (!format || !pg->series.nbins) return;
    fputs("<p class=\"note\" data-zone=\"", o);
    tl_html_esc(o, format);
    fputs("\">Times are read as UTC: ", o);
    tl_html_esc(o, format);
    fputs(" writes its times without a zone (the clock of the machine that ran it). Shift them with "
          "<code>-O ", o);
    tl_html_esc(o, format);
    fputs(".utc_offset=HOURS</code>.</p>\n", o);
}

/* ---------------------------------------------------------------- the ranking */

struct ranked {
    const struct tl_report_group *g;
    double score; /* the largest share of the run's savings in one resource */
};

static int by_score(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    double cx = x->g->with_cpu ? x->g->cpu_s : -1, cy = y->g->with_cpu ? y->g->cpu_s : -1;
    if (cx != cy) return cx < cy ? 1 : -1; /* no savings to rank by: the CPU-hours */
    return strcmp(x->g->name, y->g->name);
}

/* A cell with its key and exact value ("null" when absent, shown "-"). */
static void value_cell(FILE *o, const char *key, int r, double v)
{
    char h[48];
    if (!isfinite(v)) {
        fprintf(o, "<td data-k=\"%s_%s\" data-v=\"null\">-</td>", key, tl_res_name[r]);
        return;
    }
    if (r == TL_RES_CORES) tl_fmt_count(h, sizeof h, v);
    else tl_plot_fmt(h, sizeof h, v, TL_UNIT_BYTES);
    fprintf(o, "<td data-k=\"%s_%s\" data-v=\"%.17g\" title=\"%.17g\">%s</td>", key, tl_res_name[r], v,
            v, h);
}

/* allocated -> recommended, and what it saves, for one resource */
static void resource_cells(FILE *o, const struct tl_advice *a, int r)
{
    value_cell(o, "allocated", r, a->n_used ? a->alloc : NAN);
    value_cell(o, "recommend", r, a->n_used ? a->rec : NAN);
    double saves = tl_advice_saves(a), costs = tl_advice_costs(a); /* never below zero: a cost */
    char h[48];
    tl_fmt_amount(h, sizeof h, costs > 0 ? costs : saves, r == TL_RES_CORES ? "core" : "GiB");
    if (!isfinite(saves)) fprintf(o, "<td data-k=\"saves_%s\" data-v=\"null\">-</td>", tl_res_name[r]);
    else if (costs > 0)
        fprintf(o, "<td data-k=\"saves_%s\" data-v=\"0\" data-costs=\"%.17g\" title=\"costs %.17g %s: it asks "
                   "for more than was allocated, for the attempts that used more\">costs %s</td>",
                tl_res_name[r], costs, costs, tl_res_waste_unit[r], h);
    else fprintf(o, "<td data-k=\"saves_%s\" data-v=\"%.17g\" title=\"%.17g %s\">%s</td>", tl_res_name[r],
                 saves, saves, tl_res_waste_unit[r], h);
}

static void ranking(FILE *o, const struct tl_report_page *pg, const struct card *c)
{
    struct ranked *v = calloc(pg->ngroups + 1, sizeof *v);
    if (!v) return;
    size_t n = 0;
    for (size_t i = 0; i < pg->ngroups; i++) {
        const struct tl_report_group *g = &pg->groups[i];
        bool any = false;
        for (int r = 0; g->has_ca && r < TL_NRES; r++) any |= g->ca.a[r].n_used > 0;
        if (!any) continue; /* nothing measured against an allocation */
        double score = 0;
        for (int r = 0; r < TL_NRES; r++) {
            const struct tl_advice *a = &g->ca.a[r];
            if (a->n_waste && c->saves[r] > 0) score = fmax(score, tl_advice_saves(a) / c->saves[r]);
        }
        v[n++] = (struct ranked){g, score};
    }
    qsort(v, n, sizeof *v, by_score);
    if (!n && (pg->nlines || pg->nenergy)) { /* a profile or an energy run: those come first */
        free(v);
        return;
    }
    fputs("<h2 id=\"rightsizing\">What right-sizing saves</h2>", o);
    if (!n) {
        fputs("<p class=\"note\" data-none=\"rightsizing\">Nothing to right-size: these inputs "
              "record no cores, memory or disk used by their tasks.</p>\n", o);
        free(v);
        return;
    }
    fputs("<p class=\"note\">Per category, "
          "what was allocated (median of the attempts) and what <code>tasklens advise</code> "
          "recommends (the used p95, x 1.2 for memory and disk, rounded up), and the hours of "
          "unused allocation that recommendation saves. Ranked by the largest share a category "
          "holds of the run's savings in any one resource, then by CPU-hours.</p>",
          o);
    if (pg->nextflow_without_requests) /* static text: no name from the input */
        fputs("<p class=\"note\" data-hint=\"trace-fields\">This Nextflow trace records no requests, so what was "
              "allocated and what right-sizing saves are blank: add <code>cpus,memory,time</code> to "
              "<code>trace.fields</code> and run again, e.g. <code>trace { fields = 'task_id,hash,name,process,tag,"
              "status,exit,submit,start,complete,realtime,%cpu,peak_rss,rchar,wchar,cpus,memory,time' }</code>"
              ".</p>",
              o);
    fputs("<div class=\"wide\">"
          "<table data-table=\"rightsizing\"><tr><th class=\"n\" rowspan=\"2\">category</th>"
          "<th rowspan=\"2\">tasks</th><th colspan=\"3\">cores</th><th colspan=\"3\">memory</th>"
          "<th colspan=\"3\">disk</th></tr><tr>",
          o);
    for (int r = 0; r < TL_NRES; r++)
        fputs("<th>allocated</th><th>recommend</th><th>saves</th>", o);
    fputs("</tr>\n", o);
    for (size_t i = 0; i < n && i < GLANCE_TOP; i++) {
        fputs("<tr data-g=\"", o);
        tl_html_esc(o, v[i].g->name);
        fputs("\">", o);
        tl_html_name_cell(o, v[i].g->name);
        fprintf(o, "<td data-v=\"%zu\">%zu</td>", v[i].g->ca.tasks, v[i].g->ca.tasks);
        for (int r = 0; r < TL_NRES; r++) resource_cells(o, &v[i].g->ca.a[r], r);
        fputs("</tr>\n", o);
    }
    fputs("</table></div>\n", o);
    if (n > GLANCE_TOP)
        fprintf(o, "<p class=\"note\" data-more=\"%zu\">%zu more categor%s, ranked the same way: "
                   "<code>tasklens advise</code> lists every one; the <a href=\"#summary\">summary per "
                   "category</a> below has the largest.</p>\n",
                n - GLANCE_TOP, n - GLANCE_TOP, n - GLANCE_TOP == 1 ? "y" : "ies");
    free(v);
}

void tl_report_glance(FILE *o, const struct tl_report_page *pg)
{
    struct card c = {0};
    add_summary(&c, pg);
    add_advice(&c, pg);
    fputs("<section id=\"glance\">", o);
    card(o, pg, &c);
    zone_note(o, pg);
    ranking(o, pg, &c);
    fputs("</section>\n", o);
}

/* ---------------------------------------------------------------- the inputs */

/* One row per input; a baseline's marked so. */
static void input_rows(FILE *o, const struct tl_summary_input *inputs, size_t n, bool baseline)
{
    for (size_t i = 0; i < n; i++) {
        const struct tl_summary_input *in = &inputs[i];
        if (baseline) {
            fputs("<tr data-baseline=\"1\"><td class=\"n\"><i>baseline</i> ", o);
            tl_html_esc(o, in->path);
            fputs("</td>", o);
        } else {
            fputs("<tr>", o);
            tl_html_name_cell(o, in->path);
        }
        fputs("<td class=\"n\">", o);
        tl_html_esc(o, in->format ? in->format : in->error ? in->error : "-");
        fprintf(o, "</td><td data-v=\"%llu\">%llu</td><td data-v=\"%llu\">%llu</td>"
                   "<td data-v=\"%llu\">%llu</td><td class=\"n\">",
                (unsigned long long)in->lines, (unsigned long long)in->lines,
                (unsigned long long)in->records, (unsigned long long)in->records,
                (unsigned long long)in->rejected, (unsigned long long)in->rejected);
        for (int r = 0; r < TL_REJ_COUNT; r++)
            if (in->rejected_by[r])
                fprintf(o, "<span data-reason=\"%s\" data-v=\"%llu\" title=\"%s\">%s %llu</span> ",
                        tl_reject_key((enum tl_reject)r), (unsigned long long)in->rejected_by[r],
                        tl_reject_str((enum tl_reject)r), tl_reject_key((enum tl_reject)r),
                        (unsigned long long)in->rejected_by[r]);
        fputs("</td></tr>\n", o);
    }
}

void tl_report_inputs_section(FILE *o, const struct tl_report_page *pg)
{
    fputs("<h2 id=\"inputs\">Inputs</h2><table data-table=\"inputs\"><tr><th class=\"n\">input"
          "</th><th class=\"n\">format</th><th>lines</th><th>records</th><th>rejected</th>"
          "<th class=\"n\">rejected, by reason</th></tr>\n",
          o);
    input_rows(o, pg->inputs, pg->ninputs, false);
    input_rows(o, pg->baseline_inputs, pg->nbaseline_inputs, true);
    fputs("</table>\n", o);
}
