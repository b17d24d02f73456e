/* tasklens run: the streaming daemon's command line.
 *
 *   tasklens run -c tasklens.yaml
 *   tasklens run --follow PATH [--from end] (--lines-out FILE | --influx-url URL ...)
 *
 * Flags and the YAML file become one run configuration (quick flags add to
 * the file, or override it); the pipeline (pipeline/runner.c) runs it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "influx_flags.h"
#include "pipeline.h"
#include "source.h"

static void run_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens run -c FILE\n"
            "       tasklens run --follow PATH [OPTIONS]\n"
            "\n"
            "Follows logs like `tail -F` (rotation, truncation, a file that appears later)\n"
            "and pushes task, task_quantiles, workflow and tasklens points as they happen.\n"
            "\n"
            "  -c, --config FILE      YAML settings (see --help-config); flags below add to it\n"
            "  --help-config          every setting of the configuration file\n"
            "  --follow PATH          a log to follow (repeatable)\n"
            "  --from WHERE           beginning (default) or end, on a first start\n"
            "  --lines-out FILE       write line protocol to FILE ('-': stdout)\n" TL_INFLUX_HELP
            "  --checkpoint-dir DIR   save state there; a restart resumes without loss or\n"
            "                         double counting\n"
            "  --checkpoint-interval S  seconds between checkpoints (default 5)\n"
            "  --flush-interval MS    hand points on at least this often (default 1000)\n"
            "  --cumulative-interval S  write cumulative quantiles this often (default 10)\n"
            "  --window SECONDS       tumbling window over record time (default 60)\n"
            "  --by KEYS              group quantiles by these tags (default: source,category)\n"
            "  --format-in NAME       input format (default: detected from the first bytes)\n"
            "  --instance NAME        `instance` tag of the self-metrics (default: host)\n"
            "  --stats FILE           write the sinks' counters as JSON at exit\n"
            "  -q, --quiet            no status line, no rejected-line reports\n"
            "\n"
            "SIGINT/SIGTERM: flush, checkpoint, drain and exit 0. SIGHUP: reopen the files,\n"
            "reload the configuration file.\n");
}

int tl_cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"help-config", no_argument, NULL, 'H'},
        {"follow", required_argument, NULL, 'f'},
        {"from", required_argument, NULL, 'F'},
        {"lines-out", required_argument, NULL, 'o'},
        {"checkpoint-dir", required_argument, NULL, 'D'},
        {"checkpoint-interval", required_argument, NULL, 'K'},
        {"flush-interval", required_argument, NULL, 'I'},
        {"cumulative-interval", required_argument, NULL, 'C'},
        {"window", required_argument, NULL, 'w'},
        {"by", required_argument, NULL, 'b'},
        {"format-in", required_argument, NULL, 'i'},
        {"instance", required_argument, NULL, 'n'},
        {"stats", required_argument, NULL, 'S'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        TL_INFLUX_LONGOPTS,
        {0},
    };
    struct run_config cfg;
    struct tl_pipeline_opts po = {0};
    bool have_cfg = false;
    char err[1024];
    const char *from = NULL, *format = NULL;
    const char *follows[RUN_MAX_SOURCES];
    int nfollow = 0;
    struct tl_influx_sink_cfg sc; /* quick flags for one InfluxDB sink */
    tl_influx_sink_cfg_default(&sc);
    sc.spool.dir = NULL;
    const char *lines_out = NULL;
    struct run_settings flags_run = {0};
    bool set_ckdir = false, set_ckint = false, set_flush = false, set_cum = false;
    bool set_window = false, set_by = false, set_quiet = false;
    long long window = 0;
    const char *by = NULL;
    int status = TL_EXIT_USAGE;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': po.config_path = optarg; break;
        case 'H': run_config_help(stdout); return TL_EXIT_OK;
        case 'f':
            if (nfollow == RUN_MAX_SOURCES) goto usage;
            follows[nfollow++] = optarg;
            break;
        case 'F':
            if (strcmp(optarg, "end") && strcmp(optarg, "beginning")) {
                fprintf(stderr, "tasklens run: --from is beginning or end\n");
                goto out;
            }
            from = optarg;
            break;
        case 'o': lines_out = optarg; break;
        case 'D': flags_run.checkpoint_dir = optarg; set_ckdir = true; break;
        case 'K': flags_run.checkpoint_interval = atoll(optarg); set_ckint = true; break;
        case 'I': flags_run.flush_interval = atoll(optarg); set_flush = true; break;
        case 'C': flags_run.cumulative_interval = atoll(optarg); set_cum = true; break;
        case 'w': window = atoll(optarg); set_window = true; break;
        case 'b': by = optarg; set_by = true; break;
        case 'i':
            if (!tl_parser_find(optarg)) {
                fprintf(stderr, "tasklens run: unknown format '%s' (see `tasklens formats`)\n",
                        optarg);
                goto out;
            }
            format = optarg;
            break;
        case 'n': flags_run.instance = optarg; break;
        case 'S': po.stats_path = optarg; break;
        case 'q': set_quiet = true; break;
        case 'h': run_usage(stdout); return TL_EXIT_OK;
        default: {
            int r = tl_influx_option(c, optarg, &sc, "tasklens run");
            if (r == 0) goto usage;
            if (r < 0) goto out;
        }
        }
    }
    if (optind != argc) goto usage;
    have_cfg = true;
    if (po.config_path) {
        if (run_config_load(&cfg, po.config_path, err, sizeof err)) {
            fprintf(stderr, "tasklens run: %s\n", err);
            goto out;
        }
    } else {
        run_config_init(&cfg);
    }
    /* quick flags add to (or override) the file */
    for (int i = 0; i < nfollow; i++) {
        struct src_settings *s = run_config_add_source(&cfg, tl_source_find("file"));
        if (!s) goto usage;
        s->path = follows[i];
        if (from) s->from = from;
        if (format) s->parser = format;
    }
    if (lines_out) run_config_add_sink(&cfg, SINK_FILE)->path = lines_out;
    if (sc.http.db || sc.http.bucket || sc.http.org) {
        struct sink_settings *k = run_config_add_sink(&cfg, SINK_INFLUX);
        if (!k) goto usage;
        k->url = sc.http.url;
        k->db = sc.http.db;
        k->rp = sc.http.rp;
        k->user = sc.http.user;
        k->org = sc.http.org;
        k->bucket = sc.http.bucket;
        k->ca_file = sc.http.ca_file;
        k->insecure = sc.http.insecure;
        k->gzip = sc.http.gzip;
        k->timeout = sc.http.timeout_ms;
        k->create_db = sc.create_db;
        if (sc.spool.dir) k->spool_dir = sc.spool.dir;
        k->spool_max = sc.spool.max_bytes;
        k->spool_drop_oldest = sc.spool.drop_oldest;
    }
    if (set_ckdir) cfg.run.checkpoint_dir = flags_run.checkpoint_dir;
    if (set_ckint) cfg.run.checkpoint_interval = flags_run.checkpoint_interval;
    if (set_flush) cfg.run.flush_interval = flags_run.flush_interval;
    if (set_cum) cfg.run.cumulative_interval = flags_run.cumulative_interval;
    if (flags_run.instance) cfg.run.instance = flags_run.instance;
    if (set_quiet) cfg.run.quiet = true;
    if (set_window) cfg.agg.window = window;
    if (set_by) cfg.agg.by = by;
    if (run_config_validate(&cfg, err, sizeof err)) {
        fprintf(stderr, "tasklens run: %s\n", err);
        goto usage;
    }
    have_cfg = false; /* the pipeline takes it over */
    return tl_pipeline_run(&cfg, &po) ? TL_EXIT_INPUT : TL_EXIT_OK;
usage:
    run_usage(stderr);
    status = TL_EXIT_USAGE;
out:
    if (have_cfg) run_config_free(&cfg);
    return status;
}
