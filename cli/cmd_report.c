/* tasklens report: one self-contained HTML page of a run (report/report.h).
 *
 *   tasklens report [OPTIONS] INPUT... -o run.html [--baseline OTHER ...]
 *
 * Each input is read once, its records going to the summary (the tables'
 * numbers, as `summary --format json` prints them) and to the report's model
 * (report/model.c: the plots). Baseline inputs go to a second
 * summary, compared per category. */
#include <getopt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/term.h"
#include "core/path.h"
#include "cli/input.h"
#include "core/aggregate.h"
#include "core/requests.h"
#include "insights/insights.h"
#include "report/report.h"
#include "core/summary.h"

#define MAX_SETTINGS 32
#define MAX_BASELINE 256

static void report_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens report [OPTIONS] INPUT... -o FILE\n"
            "\n"
            "Writes one HTML file that opens offline in any browser: the summary table,\n"
            "distributions (histogram on a log axis, CDF with p50/p95/p99), requested vs\n"
            "used, concurrency over time, outliers, failures and rejected input. Reads every\n"
            "format `summary` reads, and mixes of them.\n"
            "\n"
            "  -o, --output FILE   the page ('-': stdout)\n"
            "  --baseline INPUT    a second run to compare with (repeatable): per category\n"
            "                      the shift of p50 and p95 of each drawn metric\n"
            "  --threshold PCT     shifts beyond PCT %% are highlighted (default 10)\n"
            "  --exact-names       match baseline categories by exact name (default: a run of\n"
            "                      8+ hex digits, a hash or an address, matches any other)\n"
            "  --title TEXT        the page's title (default: the first input's name)\n"
            "  --max-plots N       categories drawn, most wall-hours first\n"
            "                      (default 40)\n"
            "  --scatter-max N     points per requested-vs-used plot, sampled evenly\n"
            "                      beyond (default 400)\n"
            "  --bins N            time bins of the concurrency plots (default 300)\n"
            "  --quantile Q        of use, for the recommendations, as `advise` (default 0.95)\n"
            "  --requests BPS.yaml LSST quanta were allocated what this BPS submit YAML requests\n"
            "                      (as `advise --requests`): their waste and savings are shown\n"
            "  --metrics LIST      more metrics in the summary table (p50 · p95 · p99), e.g.\n"
            "                      bytes_read,virtual_memory_bytes\n"
            "  --format-in NAME    input format instead of auto-detection\n"
            "  -O PARSER.KEY=VAL   parser option\n"
            "  -q, --quiet         do not print rejected lines\n" TL_THREADS_HELP);
}

struct fan {
    struct tl_requests *requests; /* --requests: LSST quanta's allocations, or NULL */
    struct tl_summary *sum;
    struct tl_summary *by_workflow; /* NULL for the baseline */
    struct tl_report_model *model; /* NULL for the baseline */
    enum tl_err rc;
};

static void fan_record(void *ctx, const struct tl_record *r)
{
    struct fan *f = ctx;
    enum tl_err e = tl_summary_add(f->sum, r);
    if (!e && f->by_workflow) e = tl_summary_add(f->by_workflow, r);
    if (e && !f->rc) f->rc = e;
    if (!f->model) return;
    if (f->requests && r->kind == TL_REC_TASK && r->source && !strcmp(r->source, "lsst")) {
        struct tl_record copy = *r; /* allocated what the BPS file requests */
        tl_requests_apply(f->requests, &copy);
        tl_report_model_add(f->model, &copy);
        return;
    }
    tl_report_model_add(f->model, r);
}

/* What reading the inputs gave: their infos, kept, and the exit status. */
struct inputs_read {
    struct tl_summary_input *infos;
    int status;
};

static void input_read(void *ctx, int i, enum tl_err rc, struct tl_summary_input *info)
{
    struct inputs_read *ir = ctx;
    ir->infos[i] = *info;
    ir->status = tl_input_status(ir->status, rc, info, false);
}

/* Reads the inputs into f; their infos into *infos (n of them). */
static int read_inputs(char **paths, int n, struct tl_input_opts *io, struct fan *f,
                       struct tl_summary_input *infos)
{
    int status = TL_EXIT_OK;
    struct tl_reject_budget budget;
    tl_input_budget(io, &budget);
    io->progress = !io->quiet && isatty(2);
    struct inputs_read ir = {.infos = infos, .status = status};
    tl_read_inputs(paths, n, io, fan_record, f, input_read, &ir);
    status = ir.status;
    tl_reject_budget_end(&budget, "tasklens report");
    io->budget = NULL;
    if (f->rc) {
        tl_eprintf("tasklens report: %s\n", tl_strerror(f->rc));
        status = TL_EXIT_INPUT;
    }
    return status;
}

static bool parse_count(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || end == s || v < lo || v > hi) return false;
    *out = v;
    return true;
}

struct report_opts {
    const char *out_path, *title;
    char *baseline[MAX_BASELINE];
    int nbaseline;
    double threshold, quantile;
    long max_plots, scatter_max, bins;
    const char *requests_path;
    int extra[TL_M_COUNT], nextra; /* --metrics */
    bool exact_names;
};

/* 1 parsed, 0 not ours, -1 bad value (said). */
static int report_option(int c, char *arg, struct report_opts *ro)
{
    char *end;
    long v;
    switch (c) {
    case 'o': ro->out_path = arg; return 1;
    case 'B':
        if (ro->nbaseline == MAX_BASELINE) return -1;
        ro->baseline[ro->nbaseline++] = arg;
        return 1;
    case 'T': ro->title = arg; return 1;
    case 'r': ro->requests_path = arg; return 1;
    case 'x': ro->exact_names = true; return 1;
    case 'm': {
        char err[2048];
        if ((ro->nextra = tl_metric_list(arg, ro->extra, err, sizeof err))) return 1;
        tl_eprintf("tasklens report: --metrics: %s\n", err);
        return -1;
    }
    case 't':
        ro->threshold = strtod(arg, &end) / 100;
        if (*end || !(ro->threshold >= 0)) {
            tl_eprintf("tasklens report: --threshold wants a percentage >= 0\n");
            return -1;
        }
        return 1;
    case 'Q':
        ro->quantile = strtod(arg, &end);
        if (*end || !(ro->quantile >= 0 && ro->quantile <= 1)) {
            tl_eprintf("tasklens report: --quantile wants a number in [0,1]\n");
            return -1;
        }
        return 1;
    case 'M':
    case 'S':
    case 'N':
        if (!parse_count(arg, 1, 1000000, &v)) {
            tl_eprintf("tasklens report: a count in 1..1000000 is expected, not '%s'\n", arg);
            return -1;
        }
        *(c == 'M' ? &ro->max_plots : c == 'S' ? &ro->scatter_max : &ro->bins) = v;
        return 1;
    default: return 0;
    }
}

/* The page, written whole or not at all (a failure leaves the previous
 * page as it was). */
static int write_page(const struct report_opts *ro, struct tl_report_page *pg)
{
    struct tl_out_file of;
    char err[512];
    if (!tl_out_open(&of, ro->out_path, err, sizeof err)) {
        tl_eprintf("tasklens report: %s\n", err);
        return TL_EXIT_INPUT;
    }
    enum tl_err rc = tl_report_write_html(pg, of.f);
    int e = rc == TL_ERR_NOMEM ? ENOMEM : rc ? (errno ? errno : EIO) : 0;
    if (!tl_out_commit(&of, e, err, sizeof err)) {
        tl_eprintf("tasklens report: writing %s\n", err);
        return TL_EXIT_INPUT;
    }
    return TL_EXIT_OK;
}

/* The flags into ro and io; -1 to go on, else the exit status. */
static int report_flags(int argc, char **argv, struct report_opts *ro, struct tl_input_opts *io,
                        struct tl_parser_setting *settings)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},     {"baseline", required_argument, NULL, 'B'},
        {"threshold", required_argument, NULL, 't'},  {"title", required_argument, NULL, 'T'},
        {"max-plots", required_argument, NULL, 'M'},  {"scatter-max", required_argument, NULL, 'S'},
        {"bins", required_argument, NULL, 'N'},       {"quantile", required_argument, NULL, 'Q'},
        {"help", no_argument, NULL, 'h'},             TL_INPUT_LONGOPTS,
        {"requests", required_argument, NULL, 'r'},   {"metrics", required_argument, NULL, 'm'},
        {"exact-names", no_argument, NULL, 'x'},
        {0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:O:qh", longopts, NULL)) != -1) {
        if (c == 'h') {
            report_usage(stdout);
            return TL_EXIT_OK;
        }
        int r = report_option(c, optarg, ro);
        if (!r) r = tl_input_option(c, optarg, io, settings, MAX_SETTINGS, "tasklens report");
        if (r < 0) return TL_EXIT_USAGE;
        if (r == 0) {
            report_usage(stderr);
            return TL_EXIT_USAGE;
        }
    }
    io->settings = settings;
    io->kinds = TL_AGG_KINDS | TL_KIND(TL_REC_WORKFLOW) | TL_KIND(TL_REC_EDGE); /* edges: the where-section */
    return -1;
}

/* The summaries' options: the default metrics plus --metrics; per source
 * and workflow, counts and wall time. */
static void summary_options(const struct report_opts *ro, struct tl_summary_opts *so,
                            struct tl_summary_opts *wo)
{
    tl_summary_opts_default(so);
    /* I/O and virtual memory: drawn side by side where measured */
    static const enum tl_metric io[] = {TL_M_BYTES_READ, TL_M_BYTES_WRITTEN, TL_M_VIRTUAL_MEMORY_BYTES};
    for (size_t i = 0; i < 3; i++) {
        bool have = false;
        for (int k = 0; k < so->nmetrics; k++) have |= so->metrics[k] == (int)io[i];
        if (!have && so->nmetrics < TL_M_COUNT) so->metrics[so->nmetrics++] = io[i];
    }
    for (int i = 0; i < ro->nextra; i++) {
        bool have = false;
        for (int k = 0; k < so->nmetrics; k++) have |= so->metrics[k] == ro->extra[i];
        if (!have && so->nmetrics < TL_M_COUNT) so->metrics[so->nmetrics++] = ro->extra[i];
    }
    *wo = *so;
    wo->by[0] = "source";
    wo->by[1] = "workflow";
    wo->nby = 2;
    wo->metrics[0] = TL_M_WALL_TIME_S;
    wo->nmetrics = 1;
}

/* The page from what was read, written; the exit status. */
static int make_page(const struct report_opts *ro, const char *first, int n, struct fan *main_fan,
                     struct fan *base_fan, const struct tl_summary_input *infos,
                     const struct tl_summary_input *binfos)
{
    struct tl_advise_opts ao;
    tl_advise_opts_default(&ao);
    ao.quantile = ro->quantile;
    char when[32], title[512];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    const char *base = strrchr(first, '/'); /* the input's name, not where it sits on this machine */
    base = base && base[1] ? base + 1 : first;
    snprintf(title, sizeof title, "tasklens report: %s%s", base, n > 1 ? " and more" : "");
    struct tl_report_page pg = {.title = ro->title ? ro->title : title, .generated = when,
                                .inputs = infos, .ninputs = (size_t)n,
                                .baseline_label = ro->nbaseline ? ro->baseline[0] : NULL,
                                .threshold = ro->threshold, .groups_drawn_cap = (size_t)ro->max_plots,
                                .scatter_cap = (size_t)ro->scatter_max,
                                .extra = ro->extra, .nextra = (size_t)ro->nextra,
                                .summary = main_fan->sum, .baseline = base_fan->sum,
                                .workflows = main_fan->by_workflow, .baseline_inputs = binfos,
                                .nbaseline_inputs = (size_t)ro->nbaseline,
                                .exact_names = ro->exact_names};
    struct tl_report_page bpg = {0}; /* the baseline's distributions, drawn under the run's */
    if ((base_fan->model && !tl_report_model_finish(base_fan->model, &ao, &bpg)) ||
        !tl_report_model_finish(main_fan->model, &ao, &pg)) {
        tl_eprintf("tasklens report: out of memory\n");
        return TL_EXIT_INPUT;
    }
    pg.base_groups = bpg.groups;
    pg.nbase_groups = bpg.ngroups;
    pg.base_group_names = bpg.group_names;
    return write_page(ro, &pg);
}

int tl_cmd_report(int argc, char **argv)
{
    struct report_opts ro = {.threshold = 0.10, .quantile = 0.95, .max_plots = 40,
                             .scatter_max = 400, .bins = 300};
    struct tl_input_opts io = {.max_reports = 10};
    struct tl_parser_setting settings[MAX_SETTINGS];
    int status = report_flags(argc, argv, &ro, &io, settings);
    if (status >= 0) return status;
    int n = tl_inputs_once(argv + optind, argc - optind, "tasklens report");
    if (n <= 0 || !ro.out_path) {
        if (!ro.out_path) tl_eprintf("tasklens report: name the page with -o FILE\n");
        report_usage(stderr);
        return TL_EXIT_USAGE;
    }
    struct tl_summary_opts so, wo;
    summary_options(&ro, &so, &wo);
    struct fan main_fan = {.sum = tl_summary_new(&so), .by_workflow = tl_summary_new(&wo),
                           .model = tl_report_model_new((size_t)ro.scatter_max, (size_t)ro.bins, true)};
    struct fan base_fan = {.sum = ro.nbaseline ? tl_summary_new(&so) : NULL,
                           .model = ro.nbaseline ? tl_report_model_new((size_t)ro.scatter_max, 1, false) : NULL};
    struct tl_summary_input *infos = calloc((size_t)n + 1, sizeof *infos);
    struct tl_summary_input *binfos = calloc((size_t)ro.nbaseline + 1, sizeof *binfos);
    status = TL_EXIT_INPUT;
    char rerr[512];
    if (ro.requests_path && tl_requests_load(ro.requests_path, &main_fan.requests, rerr, sizeof rerr)) {
        tl_eprintf("tasklens report: --requests: %s\n", rerr);
        status = TL_EXIT_USAGE;
    } else if (!main_fan.sum || !main_fan.by_workflow || !main_fan.model ||
               (ro.nbaseline && (!base_fan.sum || !base_fan.model)) || !infos || !binfos) {
        tl_eprintf("tasklens report: out of memory\n");
    } else {
        io.idle = tl_report_model_idle; /* a parsing thread waiting for this one encodes the task table */
        io.idle_ctx = main_fan.model;
        status = read_inputs(argv + optind, n, &io, &main_fan, infos);
        if (status == TL_EXIT_OK && ro.nbaseline) {
            struct tl_input_opts bio = io;
            bio.kinds = TL_AGG_KINDS;
            bio.idle = NULL;
            status = read_inputs(ro.baseline, ro.nbaseline, &bio, &base_fan, binfos);
        }
        if (status == TL_EXIT_OK)
            status = make_page(&ro, argv[optind], n, &main_fan, &base_fan, infos, binfos);
    }
    for (int i = 0; infos && i < n; i++) tl_input_info_free(&infos[i]);
    for (int i = 0; binfos && i < ro.nbaseline; i++) tl_input_info_free(&binfos[i]);
    free(infos);
    free(binfos);
    tl_summary_free(main_fan.sum);
    tl_summary_free(main_fan.by_workflow);
    tl_summary_free(base_fan.sum);
    tl_report_model_free(main_fan.model);
    tl_report_model_free(base_fan.model);
    tl_requests_free(main_fan.requests);
    return status;
}
