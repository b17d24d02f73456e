/* tasklens summary: the batch question in one command.
 *
 *   tasklens summary [--by KEYS] [--quantiles LIST] [--format table|csv|json]
 *                    [--metrics LIST] [--format-in NAME] [--strict] INPUT...
 *
 * Every input goes through its own parser instance (runs in different files
 * are independent), and all records feed one summary. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggregate.h"
#include "cli.h"
#include "input.h"
#include "quantile.h"
#include "summary.h"

#define MAX_SETTINGS 32

static void summary_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens summary [OPTIONS] INPUT...\n"
            "\n"
            "Reads task records from each INPUT (a file, '-' for stdin, or a directory: its\n"
            "files in name order; .gz and .zst are decoded by their magic bytes) and prints\n"
            "per-group counts and distributions.\n"
            "\n"
            "  --by KEYS           group by these tags (default: category); any of\n"
            "                      category, host, worker, workflow, result, source\n"
            "  --quantiles LIST    probabilities (default: 0,0.01,0.05,0.32,0.5,0.68,0.95,0.99,1)\n"
            "  --metrics LIST      metrics to summarize (default: wall_time_s,cpu_time_s,\n"
            "                      max_rss_bytes,disk_bytes,cores,queue_time_s,exec_time_s,\n"
            "                      alloc_cores,alloc_memory_bytes,value)\n"
            "  --format FMT        table (default), csv or json\n"
            "  --format-in NAME    input format instead of auto-detection (see `tasklens formats`)\n"
            "  -O PARSER.KEY=VAL   parser option, e.g. -O wq.max_line=4M\n"
            "  --max-errors N      rejected lines to print per input (default 10)\n"
            "  --max-groups N      groups kept (default 1000000); the records of later ones\n"
            "                      go to the group _other, counted and said\n"
            "  --exact-limit N     exact quantiles while a group has at most N values of a\n"
            "                      metric (default 1000000); a sketch beyond\n"
            "  --approx            sketches everywhere (bounded memory, relative error)\n"
            "  --alpha X           sketch relative accuracy (default 0.005)\n"
            "  --strict            exit 1 if any line was rejected\n"
            "  -q, --quiet         do not print rejected lines\n"
            "\n"
            "  --lsst-summary      LSST's ResourceUsageSummary table instead (see its --help)\n"
            "  --dasf-task-balance DASF's task balance table (CSV) of TracePlugin traces\n"
            "\n"
            "exit status: 0 done, 1 an input could not be read (or --strict and a line was\n"
            "rejected), 2 usage error.\n");
}

static void add_record(void *ctx, const struct tl_record *r)
{
    enum tl_err *rc = (enum tl_err *)((void **)ctx)[1];
    enum tl_err e = tl_summary_add(((void **)ctx)[0], r);
    if (e && !*rc) *rc = e;
}

int tl_cmd_summary(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* a different table: its own options */
        if (!strcmp(argv[i], "--lsst-summary")) return tl_cmd_lsst_summary(argc, argv);
        else if (!strcmp(argv[i], "--dasf-task-balance")) return tl_cmd_dasf_balance(argc, argv);
    static const struct option longopts[] = {
        {"by", required_argument, NULL, 'b'},
        {"quantiles", required_argument, NULL, 'Q'},
        {"metrics", required_argument, NULL, 'm'},
        {"format", required_argument, NULL, 'f'},
        {"format-in", required_argument, NULL, 'i'},
        {"max-errors", required_argument, NULL, 'e'},
        {"max-groups", required_argument, NULL, 'G'},
        {"strict", no_argument, NULL, 's'},
        {"exact-limit", required_argument, NULL, 'x'},
        {"approx", no_argument, NULL, 'a'},
        {"alpha", required_argument, NULL, 'A'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    struct tl_summary_opts so;
    tl_summary_opts_default(&so);
    struct tl_input_opts io = {.max_reports = 10};
    struct tl_parser_setting settings[MAX_SETTINGS];
    enum tl_summary_format fmt = TL_SUMMARY_TABLE;
    bool strict = false;
    char err[256];
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "O:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            so.nby = tl_parse_key_list(optarg, so.by, TL_SUMMARY_MAX_KEYS);
            if (!so.nby) {
                fprintf(stderr, "tasklens summary: bad --by list\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 'Q':
            so.nq = tl_parse_quantile_list(optarg, so.q, TL_SUMMARY_MAX_QUANTILES);
            if (so.nq <= 0) {
                fprintf(stderr, "tasklens summary: --quantiles wants numbers in [0,1], "
                                "comma-separated\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 'm':
            if (!tl_summary_opts_set_metrics(&so, optarg, err, sizeof err)) {
                fprintf(stderr, "tasklens summary: --metrics: %s\n", err);
                return TL_EXIT_USAGE;
            }
            break;
        case 'f':
            if (!strcmp(optarg, "table")) fmt = TL_SUMMARY_TABLE;
            else if (!strcmp(optarg, "csv")) fmt = TL_SUMMARY_CSV;
            else if (!strcmp(optarg, "json")) fmt = TL_SUMMARY_JSON;
            else {
                fprintf(stderr, "tasklens summary: --format is table, csv or json\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 's': strict = true; break;
        case 'x':
        case 'G': {
            char *end;
            unsigned long long n = strtoull(optarg, &end, 10);
            if (*end || end == optarg || n > UINT32_MAX || (c == 'G' && n < 1)) {
                fprintf(stderr, "tasklens summary: --%s wants a count\n",
                        c == 'G' ? "max-groups" : "exact-limit");
                return TL_EXIT_USAGE;
            }
            if (c == 'G') so.max_groups = (uint32_t)n;
            else so.exact_limit = (uint32_t)n;
            break;
        }
        case 'a': so.approx = true; break;
        case 'A': {
            char *end;
            so.alpha = strtod(optarg, &end);
            if (*end || !(so.alpha >= 1e-6 && so.alpha <= 0.5)) {
                fprintf(stderr, "tasklens summary: --alpha wants a number in [0.000001, 0.5]\n");
                return TL_EXIT_USAGE;
            }
            break;
        }
        case 'h': summary_usage(stdout); return TL_EXIT_OK;
        default: {
            int r = tl_input_option(c, optarg, &io, settings, MAX_SETTINGS, "tasklens summary");
            if (r < 0) return TL_EXIT_USAGE;
            if (r == 0) {
                summary_usage(stderr);
                return TL_EXIT_USAGE;
            }
        }
        }
    }
    io.settings = settings;
    io.kinds = TL_AGG_KINDS; /* tl_summary_add aggregates, nothing else */
    int ninputs = argc - optind;
    if (ninputs <= 0) {
        summary_usage(stderr);
        return TL_EXIT_USAGE;
    }
    struct tl_summary *s = tl_summary_new(&so);
    struct tl_summary_input *infos = calloc((size_t)ninputs, sizeof *infos);
    if (!s || !infos) {
        fprintf(stderr, "tasklens: out of memory\n");
        return TL_EXIT_INPUT;
    }
    int status = TL_EXIT_OK;
    enum tl_err add_rc = TL_OK;
    void *ctx[2] = {s, &add_rc};
    for (int i = 0; i < ninputs; i++) {
        io.progress = !io.quiet && isatty(2); /* a progress line for big inputs */
        enum tl_err rc = tl_read_input(argv[optind + i], &io, add_record, ctx, &infos[i]);
        if (rc == TL_ERR_USAGE) status = TL_EXIT_USAGE;
        else if (rc && status == TL_EXIT_OK) status = TL_EXIT_INPUT;
        if (strict && infos[i].rejected && status == TL_EXIT_OK) status = TL_EXIT_INPUT;
    }
    if (add_rc) {
        fprintf(stderr, "tasklens: %s\n", tl_strerror(add_rc));
        status = TL_EXIT_INPUT;
    }
    if (status != TL_EXIT_USAGE) {
        enum tl_err rc = tl_summary_write(s, fmt, infos, (size_t)ninputs, stdout);
        if (rc || fflush(stdout)) {
            fprintf(stderr, "tasklens: writing the summary: %s\n", tl_strerror(rc ? rc : TL_ERR_IO));
            status = TL_EXIT_INPUT;
        }
    }
    for (int i = 0; i < ninputs; i++) tl_input_info_free(&infos[i]);
    free(infos);
    tl_summary_free(s);
    return status;
}
