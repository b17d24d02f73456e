/* "Where the time went": the report's section of `tasklens path`
 * (insights/path.h) -- the critical path drawn along the makespan, its
 * split into compute and waits, per category, and the what-ifs.
 *
 * The rows are kept as the records pass (tl_report_where_add); the
 * analysis runs on a thread of its own from the model's finish, beside the
 * rest of the page, and the section joins it. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "insights/path.h"
#include "report/report.h"
#include "report/svg.h"

#define MAX_CATS_SHOWN 12 /* categories along a path in the section's table */
#define MAX_RUNS_SHOWN 3
#define BAR_W 1000.0

struct tl_report_where {
    struct tl_path_input in;
    struct tl_path_opts o;
    struct tl_path_result res;
    pthread_t thread;
    bool started, ok;
};

struct tl_report_where *tl_report_where_new(void)
{
    struct tl_report_where *w = calloc(1, sizeof *w);
    if (w) w->o = (struct tl_path_opts){2, 5, 10, false};
    return w;
}

void tl_report_where_add(struct tl_report_where *w, const struct tl_record *r)
{
    if (w) tl_path_add(&w->in, r);
}

bool tl_report_where_oom(const struct tl_report_where *w)
{
    return w && w->in.oom;
}

static void *analyze_main(void *arg)
{
    struct tl_report_where *w = arg;
    w->ok = tl_path_done(&w->in) && tl_path_analyze(&w->in, &w->o, &w->res);
    return NULL;
}

void tl_report_where_start(struct tl_report_where *w)
{
    if (!w || !w->in.na || w->started) return;
    if (!pthread_create(&w->thread, NULL, analyze_main, w)) {
        w->started = true;
        return;
    }
    analyze_main(w); /* no thread: here */
}

static bool where_join(struct tl_report_where *w)
{
    if (w->started) {
        pthread_join(w->thread, NULL);
        w->started = false;
    }
    return w->ok;
}

void tl_report_where_free(struct tl_report_where *w)
{
    if (!w) return;
    where_join(w);
    tl_path_result_free(&w->res);
    tl_path_input_free(&w->in);
    free(w);
}

/* ------------------------------------------------------------ drawing */

static const char *const part_word[TL_NPARTS] = {"deps", "retries", "queue", "compute"};
static const char *const part_help[TL_NPARTS] = {
    "not yet submitted: dependencies, or the workflow not yet asking",
    "earlier attempts of the task", "submitted, waiting for a worker or slot", "running (in its category's colour)"};
static const char *const part_fill[TL_NPARTS] = {"#e4e4e4", "#e0a060", "#b8b8b8", NULL};

static int hue(int32_t cat)
{
    return (int)fmod((double)cat * 137.508 + 210, 360);
}

/* A segment of the bar: a tile, or tiles too narrow to draw apart (drawn
 * as the kind that holds most of it). */
struct seg {
    double x0, x1, most;
    int part;
    int32_t cat;
};

static void seg_draw(FILE *o, const struct seg *s, double scale, const char *const *cats)
{
    double x = s->x0 * scale, wd = (s->x1 - s->x0) * scale;
    if (wd <= 0) return;
    if (s->part == TL_PART_COMPUTE)
        fprintf(o, "<rect class=\"w-compute\" x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"26\" fill=\"hsl(%d,55%%,42%%)\">",
                x, wd, hue(s->cat));
    else
        fprintf(o, "<rect class=\"w-%s\" x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"26\" fill=\"%s\">", part_word[s->part],
                x, wd, part_fill[s->part]);
    char t[32];
    tl_plot_fmt(t, sizeof t, s->x1 - s->x0, TL_UNIT_SECONDS);
    fputs("<title>", o);
    tl_html_esc(o, cats[s->cat]);
    fprintf(o, ": %s %s</title></rect>", part_word[s->part], t);
}

/* Tile (part, cat) of [x0, x1) into the segment being drawn. */
static void seg_add(FILE *o, struct seg *s, double scale, const char *const *cats, int part, int32_t cat, double x0,
                    double x1)
{
    if (x1 <= x0) return;
    bool same = s->part == part && (part != TL_PART_COMPUTE || s->cat == cat);
    if (s->part >= 0 && !same && (s->x1 - s->x0) * scale >= 1) {
        seg_draw(o, s, scale, cats);
        s->part = -1;
    }
    if (s->part < 0) {
        *s = (struct seg){x0, x1, x1 - x0, part, cat};
        return;
    }
    s->x1 = x1;
    if (!same && x1 - x0 > s->most) s->part = part, s->cat = cat, s->most = x1 - x0;
}

static void path_bar(FILE *o, const struct tl_report_where *w, const struct tl_path_run *r)
{
    double scale = r->makespan > 0 ? BAR_W / r->makespan : 0;
    fprintf(o, "<svg class=\"pathbar\" viewBox=\"0 0 %.0f 44\" style=\"width:100%%;max-width:%.0fpx\" role=\"img\" "
               "aria-label=\"the critical path along the makespan\"><g>", BAR_W + 30, BAR_W + 30);
    struct seg s = {.part = -1};
    double at = 0;
    for (size_t i = 0; i < r->nsteps; i++) {
        int32_t cat = w->in.t[r->steps[i].task].cat;
        for (int p = 0; p < TL_NPARTS; p++) {
            seg_add(o, &s, scale, w->in.cats.s, p, cat, at, at + r->steps[i].part[p]);
            at += r->steps[i].part[p];
        }
    }
    if (s.part >= 0) seg_draw(o, &s, scale, w->in.cats.s);
    fputs("</g>", o);
    for (int k = 0; k <= 4; k++) { /* five ticks: 0, a quarter, ..., the makespan */
        char t[32];
        tl_plot_fmt(t, sizeof t, r->makespan * k / 4, TL_UNIT_SECONDS);
        fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"26\" y2=\"30\" stroke=\"#555\"/><text x=\"%.1f\" y=\"41\" "
                   "font-size=\"11\" text-anchor=\"%s\">%s</text>",
                BAR_W * k / 4, BAR_W * k / 4, BAR_W * k / 4, k == 0 ? "start" : k == 4 ? "end" : "middle", t);
    }
    fputs("</svg>", o);
}

static void num_cell(FILE *o, double v, enum tl_unit u)
{
    char t[32];
    tl_plot_fmt(t, sizeof t, v, u);
    fprintf(o, "<td data-v=\"%.17g\">%s</td>", v, isfinite(v) ? t : "-");
}

static void split_table(FILE *o, const struct tl_path_run *r)
{
    fputs("<table data-table=\"where-split\"><tr><th class=\"n\">along the path</th><th>time</th>"
          "<th>% of the makespan</th><th class=\"n\">what it is</th></tr>", o);
    static const int order[TL_NPARTS] = {TL_PART_COMPUTE, TL_PART_QUEUE, TL_PART_RETRIES, TL_PART_DEPS};
    for (int j = 0; j < TL_NPARTS; j++) {
        int p = order[j];
        fprintf(o, "<tr data-part=\"%s\"><td class=\"n\">", part_word[p]);
        if (part_fill[p]) fprintf(o, "<span class=\"swatch\" style=\"background:%s\"></span>", part_fill[p]);
        tl_report_term(o, part_word[p], part_word[p]);
        fputs("</td>", o);
        num_cell(o, r->part[p], TL_UNIT_SECONDS);
        double pct = r->makespan > 0 ? 100 * r->part[p] / r->makespan : 0;
        fprintf(o, "<td data-v=\"%.17g\">%.1f %%</td><td class=\"n\">%s</td></tr>", pct, pct, part_help[p]);
    }
    fputs("<tr data-part=\"makespan\"><td class=\"n\">", o);
    tl_report_term(o, "makespan", "makespan");
    fputs("</td>", o);
    num_cell(o, r->makespan, TL_UNIT_SECONDS);
    fputs("<td>100 %</td><td class=\"n\">first submission to last end</td></tr></table>", o);
}

static void category_table(FILE *o, const struct tl_report_where *w, const struct tl_path_run *r)
{
    fputs("<table data-table=\"where-categories\"><tr><th class=\"n\">category along the path</th><th>steps</th>", o);
    for (int p = TL_NPARTS; p-- > 0;) {
        fputs("<th>", o);
        tl_report_term(o, part_word[p], part_word[p]);
        fputs("</th>", o);
    }
    fputs("</tr>", o);
    size_t shown = r->ncats < MAX_CATS_SHOWN ? r->ncats : MAX_CATS_SHOWN;
    for (size_t i = 0; i < shown; i++) {
        const struct tl_path_cat *c = &r->cats[i];
        fprintf(o, "<tr><td class=\"n\"><span class=\"swatch\" style=\"background:hsl(%d,55%%,42%%)\"></span>",
                hue(c->cat));
        tl_html_esc(o, w->in.cats.s[c->cat]);
        fprintf(o, "</td><td data-v=\"%zu\">%zu</td>", c->steps, c->steps);
        for (int p = TL_NPARTS; p-- > 0;) num_cell(o, c->part[p], TL_UNIT_SECONDS);
        fputs("</tr>", o);
    }
    if (shown < r->ncats)
        fprintf(o, "<tr><td class=\"n\" colspan=\"%d\">%zu more categories, less time each: <code>tasklens "
                   "path</code> lists them</td></tr>", TL_NPARTS + 2, r->ncats - shown);
    fputs("</table>", o);
}

static void whatif_table(FILE *o, const struct tl_report_where *w, const struct tl_path_run *r)
{
    char a[32], b[32], c[32];
    tl_plot_fmt(a, sizeof a, r->cpm_s, TL_UNIT_SECONDS);
    tl_plot_fmt(b, sizeof b, r->replay_s, TL_UNIT_SECONDS);
    tl_plot_fmt(c, sizeof c, r->makespan, TL_UNIT_SECONDS);
    fprintf(o, "<p class=\"note\" data-k=\"bound\" data-v=\"%.17g\">With unlimited workers the run could end in "
               "<b>%s</b> (the critical path method over %s). A replay of the observed schedule on %zu slots takes "
               "%s (observed: %s); the what-ifs replay it changed:</p>",
            r->cpm_s, a, r->edges ? "its dependencies" : "the tasks' submissions: no dependencies recorded",
            r->slots, b, c);
    if (r->replay_s < 0.8 * r->makespan)
        fputs("<p class=\"note\">The replay ends well before the run did: the run waited for something its input "
              "does not record as a dependency (a driver submitting its jobs one after another, workers that came "
              "late), so the what-ifs below start from the replay, not from the run.</p>", o);
    if (!r->edges)
        fputs("<p class=\"note\">Without dependencies, the replay releases each task at its recorded submission: a "
              "workflow that submits a task when its inputs are ready (Nextflow, Makeflow) cannot submit earlier "
              "here, so the what-ifs understate what a faster category would save.</p>", o);
    fputs("<table data-table=\"where-whatif\"><tr><th class=\"n\">what if</th><th>", o);
    tl_report_term(o, "replay", "replayed makespan");
    fputs("</th><th>change</th><th>", o);
    tl_report_term(o, "bound", "bound");
    fputs("</th></tr>", o);
    for (size_t i = 0; i < r->nwhatifs; i++) {
        const struct tl_path_whatif *x = &r->whatifs[i];
        fputs("<tr><td class=\"n\">", o);
        if (x->cat < 0) {
            fprintf(o, "one more slot (%zu)", r->slots + 1);
        } else {
            tl_html_esc(o, w->in.cats.s[x->cat]);
            fprintf(o, " %gx faster", w->o.faster);
        }
        fputs("</td>", o);
        num_cell(o, x->replay_s, TL_UNIT_SECONDS);
        double d = r->replay_s > 0 ? 100 * (x->replay_s - r->replay_s) / r->replay_s : 0;
        if (fabs(d) < 0.05) d = 0; /* no "-0.0 %" */
        fprintf(o, "<td data-v=\"%.17g\">%+.1f %%</td>", d, d);
        num_cell(o, x->cpm_s, TL_UNIT_SECONDS);
        fputs("</tr>", o);
    }
    fputs("</table>", o);
}

static void run_part(FILE *o, const struct tl_report_where *w, const struct tl_path_run *r, bool named)
{
    fprintf(o, "<div class=\"where-run\" data-run=\"");
    tl_html_esc(o, w->in.wfs.s[r->wf]);
    fprintf(o, "\" data-steps=\"%zu\">", r->nsteps);
    if (named) {
        fputs("<h3>", o);
        tl_html_esc(o, w->in.wfs.s[r->wf]);
        fputs("</h3>", o);
    }
    fputs("<p class=\"note\">The ", o);
    tl_report_term(o, "critical path", "critical path");
    if (r->nsteps == 1)
        fputs(": one step, the task that ended last -- nothing it waited for ended before it began. ", o);
    else
        fprintf(o, ": %zu steps back from the task that ended last, each through %s. ", r->nsteps,
                r->edges ? "the dependency that ended last"
                         : "the task that freed its worker (the input records no dependencies)");
    fputs("Its steps tile the makespan: compute in the category's colour, the waits grey.</p>", o);
    if (r->nsteps == 1 && r->tasks > 1 && r->steps[0].part[TL_PART_COMPUTE] >= 0.99 * r->makespan)
        fputs("<p class=\"note\" data-k=\"one-step\">One task spans the run (in a trace: a slice that holds the "
              "others, such as a profiler step or the profiler's own span). The tasks inside it count as running "
              "beside it, so the bound and the what-ifs cannot shorten it; the summary per category shows what "
              "they took.</p>", o);
    path_bar(o, w, r);
    fputs("<div class=\"row\" style=\"align-items:flex-start\">", o);
    split_table(o, r);
    category_table(o, w, r);
    fputs("</div>", o);
    whatif_table(o, w, r);
    fputs("</div>", o);
}

static int cmp_run_tasks(const void *a, const void *b)
{
    const struct tl_path_run *x = *(const struct tl_path_run *const *)a, *y = *(const struct tl_path_run *const *)b;
    return x->tasks > y->tasks ? -1 : x->tasks < y->tasks ? 1 : x->wf - y->wf;
}

bool tl_report_where_section(FILE *o, const struct tl_report_page *pg)
{
    struct tl_report_where *w = pg->where;
    if (!w || !w->in.na) return true; /* no attempt: nothing was analyzed */
    if (!where_join(w)) return false;  /* the analysis ran out of memory */
    if (!w->res.nruns) return true;
    const struct tl_path_run **by = malloc(w->res.nruns * sizeof *by);
    if (!by) return false;
    for (size_t i = 0; i < w->res.nruns; i++) by[i] = &w->res.runs[i];
    qsort(by, w->res.nruns, sizeof *by, cmp_run_tasks);
    size_t shown = w->res.nruns < MAX_RUNS_SHOWN ? w->res.nruns : MAX_RUNS_SHOWN;
    fprintf(o, "<section id=\"where\" data-runs=\"%zu\"><h2>Where the time went</h2>", w->res.nruns);
    for (size_t i = 0; i < shown; i++) run_part(o, w, by[i], w->res.nruns > 1);
    if (shown < w->res.nruns)
        fprintf(o, "<p class=\"note\">%zu more runs: <code>tasklens path</code> shows every run.</p>",
                w->res.nruns - shown);
    fputs("<p class=\"note\"><code>tasklens path</code> lists every step, the slack, waves and stragglers.</p>"
          "</section>\n", o);
    free(by);
    return true;
}
