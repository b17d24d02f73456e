/* tasklens path: where each run's makespan went (insights/path.c), as a
 * table or JSON. Names leave through tl_vis (the table) or JSON's own
 * quoting. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/insights_cli.h"
#include "core/term.h"
#include "insights/path.h"
#include "core/summary.h"

static void path_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens path [OPTIONS] INPUT...\n"
            "\n"
            "Where each run's makespan went. The critical path steps back from the task\n"
            "that ended last through the dependency that ended last (Parsl's task_depends,\n"
            "Spark's parent stages, Chrome's flow events);\n"
            "where the input records no dependencies, through the task that ended last\n"
            "before it started on its worker. Each step's part of the makespan is split\n"
            "into compute, queue (submitted, not running), retries (earlier attempts)\n"
            "and deps (not yet submitted: waiting for dependencies); the steps tile the\n"
            "makespan exactly. Then the bound with unlimited workers (the critical path\n"
            "method over the dependencies) and each task's slack, what-ifs from a replay\n"
            "of the observed schedule (one more slot; a category --faster times faster),\n"
            "waves per category and stragglers (running time above Q3 + 1.5 IQR).\n"
            "\n"
            "  --faster K          the what-if speed-up of a category (default 2)\n"
            "  --steps N           the table lists at most N steps, first and last\n"
            "                      (default 20; 0: all); JSON lists every step\n"
            "  --format FMT        table (default) or json\n"
            "  -o, --output FILE   write there instead of stdout\n"
            "  --format-in NAME    input format instead of auto-detection\n"
            "  -O PARSER.KEY=VAL   parser option\n"
            "  -q, --quiet         do not print rejected lines\n" TL_THREADS_HELP);
}

struct path_out {
    struct tl_buf *b;
    const struct tl_path_input *in;
    const struct tl_path_result *res;
    const struct tl_path_opts *o;
    size_t max_steps;
};

static const char *human_s(char *buf, size_t cap, double v)
{
    tl_summary_human(buf, cap, v, TL_UNIT_SECONDS);
    return buf;
}

static const char *vis(const char *s, char *buf, size_t cap)
{
    return tl_vis(s, buf, cap);
}

/* ------------------------------------------------------------ table */

static void table_head(struct path_out *po, const struct tl_path_run *r)
{
    char m[24], name[256];
    tl_buf_printf(po->b, "run %s\n", vis(po->in->wfs.s[r->wf], name, sizeof name));
    tl_buf_printf(po->b, "  makespan %s (first submission to last end), %zu tasks, ", human_s(m, sizeof m, r->makespan),
                  r->tasks);
    if (r->edges)
        tl_buf_printf(po->b, "%zu dependencies\n", r->edges);
    else
        tl_buf_puts(po->b, "no dependencies recorded:\n  each step waited for the task that ended last before "
                           "it started on its worker\n");
}

static void step_row(struct path_out *po, const struct tl_path_run *r, const struct tl_path_step *st)
{
    const struct tl_path_task *k = &po->in->t[st->task];
    char id[24], a[24], b[24], p[TL_NPARTS][24], sl[24], name[256];
    if (k->id >= 0) snprintf(id, sizeof id, "%lld", (long long)k->id);
    else snprintf(id, sizeof id, "-");
    for (int i = 0; i < TL_NPARTS; i++) human_s(p[i], sizeof p[i], st->part[i]);
    tl_buf_printf(po->b, "    %10s  %-24s %9s %9s %8s %8s %8s %8s %8s\n", id,
                  vis(po->in->cats.s[k->cat], name, 25), tl_cli_plain(a, sizeof a, k->start - r->t0),
                  tl_cli_plain(b, sizeof b, k->end - r->t0), p[TL_PART_COMPUTE], p[TL_PART_QUEUE],
                  p[TL_PART_RETRIES], p[TL_PART_DEPS], human_s(sl, sizeof sl, st->slack));
}

static void table_steps(struct path_out *po, const struct tl_path_run *r)
{
    size_t n = r->nsteps, show = po->max_steps && n > po->max_steps ? po->max_steps : n;
    size_t head = show == n ? n : show / 4;
    tl_buf_printf(po->b, "  critical path, %zu %s (start and end in s from the first submission)\n", n,
                  n == 1 ? "step" : "steps");
    tl_buf_printf(po->b, "    %10s  %-24s %9s %9s %8s %8s %8s %8s %8s\n", "task", "category", "start", "end",
                  "compute", "queue", "retries", "deps", "slack");
    for (size_t i = 0; i < head; i++) step_row(po, r, &r->steps[i]);
    if (head == n) return;
    tl_buf_printf(po->b, "    %10s  ... %zu steps (--steps 0 lists all) ...\n", "", n - show);
    for (size_t i = n - (show - head); i < n; i++) step_row(po, r, &r->steps[i]);
}

static void slack_note(struct path_out *po)
{
    tl_buf_puts(po->b, "  (slack: how much later a step could have run without moving the bound below)\n");
}

static void split_line(struct tl_buf *b, const char *lead, const double *part, double total)
{
    static const char *const word[TL_NPARTS] = {"deps", "retries", "queue", "compute"};
    static const int shown_order[TL_NPARTS] = {TL_PART_COMPUTE, TL_PART_QUEUE, TL_PART_RETRIES, TL_PART_DEPS};
    tl_buf_puts(b, lead);
    for (int j = 0; j < TL_NPARTS; j++) {
        int i = shown_order[j];
        char h[24];
        tl_buf_printf(b, "%s%s %s (%.0f %%)", j ? ", " : "", word[i], human_s(h, sizeof h, part[i]),
                      total > 0 ? 100 * part[i] / total : 0);
    }
    tl_buf_putc(b, '\n');
}

static void table_split(struct path_out *po, const struct tl_path_run *r)
{
    split_line(po->b, "  the makespan along the path: ", r->part, r->makespan);
    tl_buf_puts(po->b, "  per category along the path:\n");
    int width = 0;
    for (size_t i = 0; i < r->ncats; i++) {
        int w = (int)strlen(po->in->cats.s[r->cats[i].cat]);
        width = w > width ? w : width;
    }
    width = width < 8 ? 8 : width > TL_NAME_MAX ? TL_NAME_MAX : width;
    tl_cli_name_cell(po->b, "  category", width + 2);
    tl_buf_printf(po->b, " %6s %8s %8s %8s %8s\n", "steps", "compute", "queue", "retries", "deps");
    for (size_t i = 0; i < r->ncats; i++) {
        const struct tl_path_cat *pc = &r->cats[i];
        char p[TL_NPARTS][24];
        for (int k = 0; k < TL_NPARTS; k++) human_s(p[k], sizeof p[k], pc->part[k]);
        tl_buf_puts(po->b, "  ");
        tl_cli_name_cell(po->b, po->in->cats.s[pc->cat], width);
        tl_buf_printf(po->b, " %6zu %8s %8s %8s %8s\n", pc->steps, p[TL_PART_COMPUTE], p[TL_PART_QUEUE],
                      p[TL_PART_RETRIES], p[TL_PART_DEPS]);
    }
}

static void whatif_row(struct path_out *po, const struct tl_path_run *r, const struct tl_path_whatif *w)
{
    char what[320], name[256], a[24], c[24];
    if (w->cat < 0) snprintf(what, sizeof what, "one more slot (%zu)", r->slots + 1);
    else snprintf(what, sizeof what, "%s %gx faster", vis(po->in->cats.s[w->cat], name, 26), po->o->faster);
    double d = r->replay_s > 0 ? 100 * (w->replay_s - r->replay_s) / r->replay_s : 0;
    tl_buf_printf(po->b, "    %-34s %9s %+6.1f %%   bound %s\n", what, human_s(a, sizeof a, w->replay_s), d,
                  human_s(c, sizeof c, w->cpm_s));
}

static void table_model(struct path_out *po, const struct tl_path_run *r)
{
    char a[24], b[24];
    tl_buf_printf(po->b, "  bound with unlimited workers (critical path method): %s; tasks with no slack: %zu of %zu\n",
                  human_s(a, sizeof a, r->cpm_s), r->zero_slack, r->tasks - r->unordered);
    if (r->unordered)
        tl_buf_printf(po->b, "  %zu tasks are in a dependency cycle: left out of the bound\n", r->unordered);
    tl_buf_printf(po->b, "  replay of the observed schedule on %zu slots: %s (observed %s)\n", r->slots,
                  human_s(a, sizeof a, r->replay_s), human_s(b, sizeof b, r->makespan));
    tl_buf_puts(po->b, "  what-if (replayed; change against the replay; bound with unlimited workers):\n");
    for (size_t i = 0; i < r->nwhatifs; i++) whatif_row(po, r, &r->whatifs[i]);
}

static void table_waves(struct path_out *po, const struct tl_path_run *r)
{
    tl_buf_printf(po->b, "  waves per category (tasks / the most that ran at once):\n    %-24s %7s %6s %7s %9s %9s %9s %10s\n",
                  "category", "tasks", "slots", "waves", "last wave", "median", "above", "stragglers");
    for (size_t i = 0; i < r->nwaves; i++) {
        const struct tl_path_wave *w = &r->waves[i];
        char name[256], md[24], f[24];
        tl_buf_printf(po->b, "    %-24s %7zu %6zu %7.2f %8.0f%% %9s %9s %10zu\n",
                      vis(po->in->cats.s[w->cat], name, 25), w->tasks, w->slots, w->waves, 100 * w->last_wave,
                      human_s(md, sizeof md, w->median_s), human_s(f, sizeof f, w->fence_s), w->stragglers);
    }
    if (!r->nstragglers) return;
    tl_buf_puts(po->b, "  stragglers (running time above Q3 + 1.5 IQR of their category), slowest against "
                       "their category first:\n");
    tl_buf_printf(po->b, "    %10s  %-24s %9s %9s\n", "task", "category", "running", "x median");
    for (size_t i = 0; i < r->nstragglers; i++) {
        const struct tl_path_task *k = &po->in->t[r->stragglers[i]];
        double median = NAN;
        for (size_t w = 0; w < r->nwaves; w++)
            if (r->waves[w].cat == k->cat) median = r->waves[w].median_s;
        char name[256], run[24], id[24];
        snprintf(id, sizeof id, k->id >= 0 ? "%lld" : "-", (long long)k->id);
        tl_buf_printf(po->b, "    %10s  %-24s %9s %9.1f\n", id, vis(po->in->cats.s[k->cat], name, 25),
                      human_s(run, sizeof run, k->end - k->start), (k->end - k->start) / median);
    }
}

static void write_table(struct path_out *po)
{
    for (size_t i = 0; i < po->res->nruns; i++) {
        const struct tl_path_run *r = &po->res->runs[i];
        if (i) tl_buf_putc(po->b, '\n');
        table_head(po, r);
        table_steps(po, r);
        slack_note(po);
        table_split(po, r);
        table_model(po, r);
        table_waves(po, r);
    }
}

/* ------------------------------------------------------------ JSON */

static void json_key_num(struct tl_buf *b, const char *key, double v)
{
    tl_buf_printf(b, ",\"%s\":", key);
    tl_cli_json_num(b, v);
}

static void json_parts(struct tl_buf *b, const double *part)
{
    for (int p = 0; p < TL_NPARTS; p++) json_key_num(b, tl_path_part_name[p], part[p]);
}

static void json_task(struct path_out *po, const struct tl_path_run *r, uint32_t i)
{
    const struct tl_path_task *k = &po->in->t[i];
    tl_buf_puts(po->b, "{\"task_id\":");
    if (k->id >= 0) tl_buf_printf(po->b, "%lld", (long long)k->id);
    else tl_buf_puts(po->b, "null");
    tl_buf_puts(po->b, ",\"category\":");
    tl_buf_put_json_string(po->b, po->in->cats.s[k->cat]);
    json_key_num(po->b, "start_s", k->start - r->t0);
    json_key_num(po->b, "end_s", k->end - r->t0);
    json_key_num(po->b, "running_s", k->end - k->start);
    tl_buf_printf(po->b, ",\"attempts\":%u", k->attempts);
}

static void json_steps(struct path_out *po, const struct tl_path_run *r)
{
    tl_buf_puts(po->b, ",\"path\":[");
    for (size_t i = 0; i < r->nsteps; i++) {
        if (i) tl_buf_putc(po->b, ',');
        json_task(po, r, r->steps[i].task);
        json_parts(po->b, r->steps[i].part);
        json_key_num(po->b, "slack_s", r->steps[i].slack);
        tl_buf_putc(po->b, '}');
    }
    tl_buf_puts(po->b, "],\"split\":{\"makespan_s\":");
    tl_cli_json_num(po->b, r->makespan);
    json_parts(po->b, r->part);
    tl_buf_puts(po->b, "},\"by_category\":[");
    for (size_t i = 0; i < r->ncats; i++) {
        tl_buf_puts(po->b, i ? ",{\"category\":" : "{\"category\":");
        tl_buf_put_json_string(po->b, po->in->cats.s[r->cats[i].cat]);
        tl_buf_printf(po->b, ",\"steps\":%zu", r->cats[i].steps);
        json_parts(po->b, r->cats[i].part);
        tl_buf_putc(po->b, '}');
    }
    tl_buf_putc(po->b, ']');
}

static void json_model(struct path_out *po, const struct tl_path_run *r)
{
    struct tl_buf *b = po->b;
    tl_buf_puts(b, ",\"bound\":{\"cpm_s\":");
    tl_cli_json_num(b, r->cpm_s);
    tl_buf_printf(b, ",\"zero_slack_tasks\":%zu,\"tasks_in_cycles\":%zu}", r->zero_slack, r->unordered);
    tl_buf_printf(b, ",\"replay\":{\"slots\":%zu", r->slots);
    json_key_num(b, "makespan_s", r->replay_s);
    tl_buf_puts(b, "},\"what_if\":[");
    for (size_t i = 0; i < r->nwhatifs; i++) {
        const struct tl_path_whatif *w = &r->whatifs[i];
        tl_buf_puts(b, i ? ",{" : "{");
        if (w->cat < 0) {
            tl_buf_printf(b, "\"slots\":%zu", r->slots + 1);
        } else {
            tl_buf_puts(b, "\"category\":");
            tl_buf_put_json_string(b, po->in->cats.s[w->cat]);
            json_key_num(b, "faster", po->o->faster);
        }
        json_key_num(b, "replay_s", w->replay_s);
        json_key_num(b, "cpm_s", w->cpm_s);
        tl_buf_putc(b, '}');
    }
    tl_buf_putc(b, ']');
}

static void json_waves(struct path_out *po, const struct tl_path_run *r)
{
    struct tl_buf *b = po->b;
    tl_buf_puts(b, ",\"waves\":[");
    for (size_t i = 0; i < r->nwaves; i++) {
        const struct tl_path_wave *w = &r->waves[i];
        tl_buf_puts(b, i ? ",{\"category\":" : "{\"category\":");
        tl_buf_put_json_string(b, po->in->cats.s[w->cat]);
        tl_buf_printf(b, ",\"tasks\":%zu,\"slots\":%zu", w->tasks, w->slots);
        json_key_num(b, "waves", w->waves);
        json_key_num(b, "last_wave", w->last_wave);
        json_key_num(b, "median_running_s", w->median_s);
        json_key_num(b, "straggler_above_s", w->fence_s);
        tl_buf_printf(b, ",\"stragglers\":%zu}", w->stragglers);
    }
    tl_buf_puts(b, "],\"stragglers\":[");
    for (size_t i = 0; i < r->nstragglers; i++) {
        if (i) tl_buf_putc(b, ',');
        json_task(po, r, r->stragglers[i]);
        tl_buf_putc(b, '}');
    }
    tl_buf_putc(b, ']');
}

static void write_json(struct path_out *po)
{
    struct tl_buf *b = po->b;
    tl_buf_puts(b, "{\"runs\":[");
    for (size_t i = 0; i < po->res->nruns; i++) {
        const struct tl_path_run *r = &po->res->runs[i];
        tl_buf_puts(b, i ? ",{\"workflow\":" : "{\"workflow\":");
        tl_buf_put_json_string(b, po->in->wfs.s[r->wf]);
        json_key_num(b, "start", (double)po->in->origin_ns / 1e9 + r->t0);
        json_key_num(b, "makespan_s", r->makespan);
        tl_buf_printf(b, ",\"tasks\":%zu,\"dependencies\":%zu", r->tasks, r->edges);
        json_steps(po, r);
        json_model(po, r);
        json_waves(po, r);
        tl_buf_putc(b, '}');
    }
    tl_buf_printf(b, "],\"untimed_attempts\":%zu,\"cached_attempts\":%zu,\"unknown_dependencies\":%zu}\n",
                  po->in->untimed, po->in->cached, po->in->unresolved + po->in->bad_deps);
}

/* ------------------------------------------------------------ command */

struct path_cmd {
    struct common co;
    struct tl_path_opts o;
    size_t max_steps;
};

static int parse_flags(int argc, char **argv, struct path_cmd *k)
{
    static const struct option longopts[] = {
        {"faster", required_argument, NULL, 'K'}, {"steps", required_argument, NULL, 'N'}, COMMON_LONGOPTS, {0}};
    int c;
    double v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "O:qho:", longopts, NULL)) != -1) {
        if (c == 'K') {
            if (!tl_cli_parse_num(optarg, 1.0001, 1e6, &k->o.faster)) {
                tl_eprintf("tasklens path: --faster wants a number > 1\n");
                return TL_EXIT_USAGE;
            }
        } else if (c == 'N') {
            if (!tl_cli_parse_num(optarg, 0, 1e9, &v)) {
                tl_eprintf("tasklens path: --steps wants a count (0: all)\n");
                return TL_EXIT_USAGE;
            }
            k->max_steps = (size_t)v;
        } else if (c == 'h') {
            path_usage(stdout);
            return TL_EXIT_OK;
        } else if (c == 'r') {
            tl_eprintf("tasklens path: --requests is not used here\n");
            return TL_EXIT_USAGE;
        } else {
            int r = tl_cli_common_option(c, optarg, &k->co, "tasklens path");
            if (r == 0) path_usage(stderr);
            if (r <= 0) return TL_EXIT_USAGE;
        }
    }
    if (k->co.fmt == F_LP) {
        tl_eprintf("tasklens path: --format is table or json\n");
        return TL_EXIT_USAGE;
    }
    if (optind >= argc) {
        path_usage(stderr);
        return TL_EXIT_USAGE;
    }
    return -1;
}

int tl_cmd_path(int argc, char **argv)
{
    struct path_cmd k = {.co = {.io = {.max_reports = 10}, .edges = true}, .o = {2, 5, 10, true}, .max_steps = 20};
    int status = parse_flags(argc, argv, &k);
    if (status >= 0) return status;
    struct tl_path_input in = {0};
    status = tl_cli_read_records(&k.co, argc - optind, argv + optind, tl_path_add, &in, "tasklens path");
    struct tl_path_result res = {0};
    if (status == TL_EXIT_OK && !(tl_path_done(&in) && tl_path_analyze(&in, &k.o, &res))) {
        tl_eprintf("tasklens path: out of memory\n");
        status = TL_EXIT_INPUT;
    }
    if (status == TL_EXIT_OK && !res.nruns) tl_eprintf("tasklens path: no timed task attempts in the input\n");
    struct tl_buf b = {0};
    if (status == TL_EXIT_OK) {
        struct path_out po = {&b, &in, &res, &k.o, k.max_steps};
        if (k.co.fmt == F_JSON) write_json(&po);
        else write_table(&po);
        status = tl_cli_write_out(&k.co, &b, "tasklens path");
    }
    tl_buf_free(&b);
    tl_path_result_free(&res);
    tl_path_input_free(&in);
    return status;
}
