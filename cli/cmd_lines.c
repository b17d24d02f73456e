/* tasklens lines: InfluxDB line protocol to stdout or a file.
 *
 *   tasklens lines [-o FILE] [--by KEYS] [--window SECONDS] INPUT...
 *
 * Writes one `task` point per finished attempt as records arrive, a
 * `task_quantiles` point per (group, metric) for each tumbling window as it
 * closes (window=60s), and at the end the cumulative ones (window=cumulative).
 * The output can be piped to `influx -import` or curl; it is also the
 * embedded default sink when no InfluxDB is configured. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/term.h"
#include "core/path.h"
#include "cli/sink_flags.h"
#include "cli/input.h"
#include "core/aggregate.h"
#include "pipeline/output.h"

#define MAX_SETTINGS 32

static void lines_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens lines [OPTIONS] INPUT...\n"
            "\n"
            "Writes InfluxDB line protocol: a `task` point per finished attempt, and\n"
            "`task_quantiles` points per group and metric for each window and cumulatively,\n"
            "and each closed window's `task_histogram` buckets (summed over any range by\n"
            "the dashboards: a quantile within alpha at the cost of the windows).\n"
            "\n"
            "  -o, --output FILE   write to FILE instead of stdout (`-`: stdout)\n"
            "  --by KEYS           group quantiles by these tags (default: source,category)\n"
            "  --window SECONDS    tumbling window over record time (default 60; 0: none)\n"
            "  --instance NAME     `instance` tag of the self-metrics and task_histogram\n"
            "                      points (default: host)\n"
            "  --no-histograms     no task_histogram points\n"
            "  --histogram-windows LIST  coarser windows also written as task_histogram\n"
            "                      buckets, in s (default " TL_HISTOGRAM_WINDOWS ")\n"
            "  --allowed-lateness S  a record up to S s after its window was written still\n"
            "                      lands in its quantiles (written again; default 900)\n"
            "  --format-in NAME    input format instead of auto-detection\n"
            "  -O PARSER.KEY=VAL   parser option\n"
            "  --max-errors N      rejected lines to print in the run (default 10)\n"
            "  --strict            exit 1 if any line was rejected\n"
            "  -q, --quiet         do not print rejected lines\n" TL_THREADS_HELP
            "\n"
            "InfluxDB (instead of stdout):\n");
    tl_sink_flags_help(out);
    fprintf(out,
            "  (InfluxDB's password and token come from $INFLUX_PASSWORD / $INFLUX_TOKEN)\n"
            "  --drain-timeout SEC     at the end, wait this long for the spool to drain\n"
            "                          (default 300; what is left stays for the next run)\n"
            "  --stats FILE            write the sink's counters as JSON at the end\n");
}

/* The sinks the flags name, checked and opened, then -o's file (truncated;
 * `-`: stdout); stdout alone when there is neither. */
static enum tl_err open_sinks(struct tl_output *o, const struct tl_sink_flags *sf,
                              const char *outpath, bool quiet)
{
    struct tl_sink_env env = {.quiet = quiet, .flush_interval_ms = 1000};
    const struct tl_sink_conf *named[8];
    int n = tl_sink_flags_configured(sf, named, 8);
    char err[512];
    const char *key = NULL;
    for (int i = 0; i < n; i++) {
        const struct tl_sink_type *t = named[i]->type;
        enum tl_err rc = t->validate ? t->validate(named[i]->config, &key, err, sizeof err) : TL_OK;
        if (!rc) rc = tl_output_open_sink(o, named[i], &env, err, sizeof err);
        if (rc) {
            tl_eprintf("tasklens lines: %s%s%s\n", key ? key : "", key ? ": " : "", err);
            return rc;
        }
    }
    if (n && !outpath) return TL_OK;
    struct tl_sink_conf file;
    if (tl_sink_conf_init(&file, tl_sink_find("file"))) return TL_ERR_NOMEM;
    enum tl_err rc = tl_options_set(file.type->options, file.config, "path",
                                    outpath ? outpath : "-", err, sizeof err);
    if (!rc) rc = tl_options_set(file.type->options, file.config, "append", "false", err, sizeof err);
    if (!rc) rc = tl_output_open_sink(o, &file, &env, err, sizeof err);
    if (rc) tl_eprintf("tasklens lines: %s\n", err);
    tl_sink_conf_free(&file);
    return rc ? TL_ERR_OPEN : TL_OK;
}

/* After each input: its `tasklens` point, the exit status. */
struct inputs_read {
    struct tl_output *o;
    const char *instance;
    bool strict;
    int status;
};

static void input_read(void *ctx, int i, enum tl_err rc, struct tl_summary_input *info)
{
    (void)i;
    struct inputs_read *ir = ctx;
    ir->status = tl_input_status(ir->status, rc, info, ir->strict);
    tl_output_self(ir->o, ir->instance, info, 0); /* the `tasklens` measurement */
    tl_input_info_free(info);
}

/* What the flags ask for. */
struct lines_cmd {
    struct tl_sink_flags sf;
    struct tl_agg_opts ao;
    struct tl_input_opts io;
    struct tl_parser_setting settings[MAX_SETTINGS];
    const char *outpath, *stats_path, *instance, *histogram_windows;
    long drain_timeout_s, window_s;
    bool strict, no_histograms;
    char host[256];
};

/* Every input into the sinks the flags name. */
static int write_lines(struct lines_cmd *k, int argc, char **argv)
{
    int status;
    k->io.settings = k->settings;
    if (optind >= argc) {
        lines_usage(stderr);
        return TL_EXIT_USAGE;
    }
    struct tl_output o;
    char err[256];
    const char *hw = k->no_histograms ? NULL : k->histogram_windows ? k->histogram_windows
                                                                      : TL_HISTOGRAM_WINDOWS;
    k->ao.window_ns = k->window_s * 1000000000LL;
    if (tl_output_coarse(&k->ao, k->window_s, hw, k->histogram_windows != NULL, err, sizeof err)) {
        tl_eprintf("tasklens lines: --histogram-windows: %s\n", err);
        return TL_EXIT_USAGE;
    }
    if (tl_output_init(&o, &k->ao, k->window_s, NULL)) {
        tl_eprintf("tasklens lines: bad aggregation options\n");
        return TL_EXIT_USAGE;
    }
    o.histograms = !k->no_histograms;
    o.instance = k->instance;
    /* InfluxDB, a file, or both; stdout when neither. -o FILE is written
     * beside it and renamed over it at the end: the previous file stays
     * if anything fails */
    struct tl_out_file of = {0};
    if (k->outpath && strcmp(k->outpath, "-")) {
        if (!tl_out_open(&of, k->outpath, err, sizeof err)) {
            tl_eprintf("tasklens lines: %s\n", err);
            tl_output_close(&o, 0, NULL);
            return TL_EXIT_INPUT;
        }
        fclose(of.f); /* the file sink writes it by its path */
        of.f = NULL;
        if (!of.tmp) { /* a device or a FIFO: written directly */
            free(of.path);
            of = (struct tl_out_file){0};
        }
    }
    enum tl_err orc = open_sinks(&o, &k->sf, of.tmp ? of.tmp : k->outpath, k->io.quiet);
    if (orc) {
        tl_output_close(&o, 0, NULL);
        if (of.tmp) tl_out_commit(&of, EIO, err, sizeof err);
        return orc == TL_ERR_OPEN ? TL_EXIT_INPUT : TL_EXIT_USAGE; /* -o FILE: not writable */
    }
    status = TL_EXIT_OK;
    argc = optind + tl_inputs_once(argv + optind, argc - optind, "tasklens lines");
    struct tl_reject_budget budget;
    tl_input_budget(&k->io, &budget);
    struct inputs_read ir = {.o = &o, .instance = k->instance, .strict = k->strict, .status = status};
    tl_read_inputs(argv + optind, argc - optind, &k->io, tl_output_record, &o, input_read, &ir);
    status = ir.status;
    tl_reject_budget_end(&budget, "tasklens lines");
    tl_output_finish(&o);
    bool output_ok = !tl_output_close(&o, k->drain_timeout_s * 1000, k->stats_path);
    if (!output_ok && status == TL_EXIT_OK) status = TL_EXIT_INPUT;
    if (of.tmp && !tl_out_commit(&of, output_ok ? 0 : ECANCELED, err, sizeof err)) {
        if (output_ok) tl_eprintf("tasklens lines: writing %s\n", err);
        else tl_eprintf("tasklens lines: %s not replaced: the output failed (said above); it is as it was\n",
                        k->outpath);
        status = TL_EXIT_INPUT;
    }
    return status;
}

/* One flag; -1 to go on, else the exit status (said). */
static int lines_flag(int c, char *arg, struct lines_cmd *k)
{
    char *end;
    switch (c) {
    case 'o': k->outpath = arg; break;
    case 'b':
        if (!(k->ao.nby = tl_parse_key_list(arg, k->ao.by, TL_AGG_MAX_KEYS))) {
            tl_eprintf("tasklens lines: bad --by list\n");
            return TL_EXIT_USAGE;
        }
        break;
    case 'w':
        k->window_s = strtol(arg, &end, 10);
        if (*end || k->window_s < 0 || k->window_s > 366L * 86400) {
            tl_eprintf("tasklens lines: --window wants seconds\n");
            return TL_EXIT_USAGE;
        }
        break;
    case 's': k->strict = true; break;
    case 'h': lines_usage(stdout); return TL_EXIT_OK;
    case 1014: k->drain_timeout_s = atol(arg); break;
    case 1015: k->stats_path = arg; break;
    case 1017: k->instance = arg; break;
    case 1018: k->no_histograms = true; break;
    case 1019: k->histogram_windows = arg; break;
    case 1020: {
        long l = strtol(arg, &end, 10);
        if (*end || l < 0 || l > 86400) {
            tl_eprintf("tasklens lines: --allowed-lateness wants seconds, 0..86400\n");
            return TL_EXIT_USAGE;
        }
        k->ao.allowed_lateness_ns = l * 1000000000LL;
        break;
    }
    default: {
        int r = tl_sink_flag(&k->sf, c, arg, "tasklens lines");
        if (r == 0) r = tl_input_option(c, arg, &k->io, k->settings, MAX_SETTINGS, "tasklens lines");
        if (r == 0) lines_usage(stderr);
        if (r <= 0) return TL_EXIT_USAGE;
    }
    }
    return -1;
}

int tl_cmd_lines(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"by", required_argument, NULL, 'b'},
        {"window", required_argument, NULL, 'w'},
        {"strict", no_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        TL_INPUT_LONGOPTS,
        {"drain-timeout", required_argument, NULL, 1014},
        {"stats", required_argument, NULL, 1015},
        {"instance", required_argument, NULL, 1017},
        {"no-histograms", no_argument, NULL, 1018},
        {"histogram-windows", required_argument, NULL, 1019},
        {"allowed-lateness", required_argument, NULL, 1020},
        {0},
    };
    struct lines_cmd k = {.io = {.max_reports = 10}, .drain_timeout_s = 300, .window_s = 60,
                          .host = "tasklens"};
    if (tl_sink_flags_init(&k.sf, longopts)) return TL_EXIT_USAGE;
    gethostname(k.host, sizeof k.host - 1);
    k.instance = k.host;
    tl_agg_opts_default(&k.ao);
    k.ao.by[0] = "source";
    k.ao.by[1] = "category";
    k.ao.nby = 2;
    int c, status = -1;
    optind = 1;
    while (status < 0 && (c = getopt_long(argc, argv, "o:O:qh", k.sf.longopts, NULL)) != -1)
        status = lines_flag(c, optarg, &k);
    if (status < 0) status = write_lines(&k, argc, argv);
    tl_sink_flags_free(&k.sf);
    return status;
}
