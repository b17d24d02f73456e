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

#include "aggregate.h"
#include "cli.h"
#include "influx_flags.h"
#include "input.h"
#include "output.h"

#define MAX_SETTINGS 32

static void lines_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens lines [OPTIONS] INPUT...\n"
            "\n"
            "Writes InfluxDB line protocol: a `task` point per finished attempt, and\n"
            "`task_quantiles` points per group and metric for each window and cumulatively.\n"
            "\n"
            "  -o, --output FILE   write to FILE instead of stdout (`-`: stdout)\n"
            "  --by KEYS           group quantiles by these tags (default: source,category)\n"
            "  --window SECONDS    tumbling window over record time (default 60; 0: none)\n"
            "  --instance NAME     `instance` tag of the tasklens self-metrics (default: host)\n"
            "  --format-in NAME    input format instead of auto-detection\n"
            "  -O PARSER.KEY=VAL   parser option\n"
            "  --max-errors N      rejected lines to print per input (default 10)\n"
            "  --strict            exit 1 if any line was rejected\n"
            "  -q, --quiet         do not print rejected lines\n"
            "\n"
            "InfluxDB (instead of stdout):\n"
            TL_INFLUX_HELP
            "  --drain-timeout SEC     at the end, wait this long for the spool to drain\n"
            "                          (default 300; what is left stays for the next run)\n"
            "  --stats FILE            write the sink's counters as JSON at the end\n");
}

int tl_cmd_lines(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"by", required_argument, NULL, 'b'},
        {"window", required_argument, NULL, 'w'},
        {"format-in", required_argument, NULL, 'i'},
        {"max-errors", required_argument, NULL, 'e'},
        {"strict", no_argument, NULL, 's'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        TL_INFLUX_LONGOPTS,
        {"drain-timeout", required_argument, NULL, 1014},
        {"stats", required_argument, NULL, 1015},
        {"instance", required_argument, NULL, 1017},
        {0},
    };
    struct tl_influx_sink_cfg sc;
    tl_influx_sink_cfg_default(&sc);
    sc.spool.dir = "tasklens-spool";
    const char *stats_path = NULL;
    char host[256] = "tasklens";
    gethostname(host, sizeof host - 1);
    const char *instance = host;
    long drain_timeout_s = 300;
    struct tl_agg_opts ao;
    tl_agg_opts_default(&ao);
    ao.by[0] = "source";
    ao.by[1] = "category";
    ao.nby = 2;
    struct tl_input_opts io = {.max_reports = 10};
    struct tl_parser_setting settings[MAX_SETTINGS];
    const char *outpath = NULL;
    bool strict = false;
    long window_s = 60;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:O:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': outpath = optarg; break;
        case 'b':
            ao.nby = tl_parse_key_list(optarg, ao.by, TL_AGG_MAX_KEYS);
            if (!ao.nby) {
                fprintf(stderr, "tasklens lines: bad --by list\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 'w': {
            char *end;
            window_s = strtol(optarg, &end, 10);
            if (*end || window_s < 0 || window_s > 366L * 86400) {
                fprintf(stderr, "tasklens lines: --window wants seconds\n");
                return TL_EXIT_USAGE;
            }
            break;
        }
        case 's': strict = true; break;
        case 'h': lines_usage(stdout); return TL_EXIT_OK;
        case 1014: drain_timeout_s = atol(optarg); break;
        case 1015: stats_path = optarg; break;
        case 1017: instance = optarg; break;
        default: {
            int r = tl_influx_option(c, optarg, &sc, "tasklens lines");
            if (r == 0) r = tl_input_option(c, optarg, &io, settings, MAX_SETTINGS, "tasklens lines");
            if (r < 0) return TL_EXIT_USAGE;
            if (r == 0) {
                lines_usage(stderr);
                return TL_EXIT_USAGE;
            }
        }
        }
    }
    io.settings = settings;
    if (optind >= argc) {
        lines_usage(stderr);
        return TL_EXIT_USAGE;
    }
    struct tl_influx_sink *sink;
    if (tl_influx_sink_open(&sc, io.quiet, &sink, "tasklens lines")) return TL_EXIT_USAGE;
    FILE *out = stdout;
    if (outpath && !strcmp(outpath, "-")) outpath = "stdout"; /* `-o -`: stdout, beside a sink too */
    else if (outpath && !(out = fopen(outpath, "w"))) {
        fprintf(stderr, "tasklens lines: %s: %s\n", outpath, strerror(errno));
        tl_influx_sink_free(sink);
        return TL_EXIT_INPUT;
    }
    struct tl_output o;
    if (tl_output_init(&o, &ao, window_s)) {
        fprintf(stderr, "tasklens lines: bad aggregation options\n");
        tl_influx_sink_free(sink);
        if (out != stdout) fclose(out);
        return TL_EXIT_USAGE;
    }
    /* InfluxDB, a file, or both; stdout when neither */
    if (sink) tl_output_add_sink(&o, sink, sc.spool.dir);
    if (!sink || outpath) tl_output_add_file(&o, out, outpath ? outpath : "stdout");
    int status = TL_EXIT_OK;
    for (int i = optind; i < argc; i++) {
        struct tl_summary_input info;
        enum tl_err rc = tl_read_input(argv[i], &io, tl_output_record, &o, &info);
        if (rc == TL_ERR_USAGE) status = TL_EXIT_USAGE;
        else if (rc && status == TL_EXIT_OK) status = TL_EXIT_INPUT;
        if (strict && info.rejected && status == TL_EXIT_OK) status = TL_EXIT_INPUT;
        tl_output_self(&o, instance, &info, 0); /* the `tasklens` measurement */
        tl_input_info_free(&info);
    }
    tl_output_finish(&o);
    if (tl_output_close(&o, "tasklens lines", drain_timeout_s * 1000, stats_path) &&
        status == TL_EXIT_OK)
        status = TL_EXIT_INPUT;
    return status;
}
