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

#include "cli/cli.h"
#include "core/term.h"
#include "cli/sink_flags.h"
#include "pipeline/pipeline.h"
#include "pipeline/source.h"

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
            "  --lines-out FILE       write line protocol to FILE ('-': stdout)\n");
    tl_sink_flags_help(out);
    fprintf(out,
            "  (InfluxDB's password and token come from $INFLUX_PASSWORD / $INFLUX_TOKEN)\n"
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

/* A sink from flags: a copy of config (the flags' own), or defaults with
 * one option set. */
static enum tl_err add_sink(struct run_config *cfg, const struct tl_sink_type *type,
                            const void *config, const char *key, const char *value)
{
    struct tl_sink_conf *k = run_config_add_sink(cfg, type);
    if (!k) return TL_ERR_LIMIT;
    if (config) memcpy(k->config, config, type->config_size);
    char err[256];
    if (key && tl_options_set(type->options, k->config, key, value, err, sizeof err)) {
        tl_eprintf("tasklens run: %s\n", err);
        return TL_ERR_USAGE;
    }
    return TL_OK;
}

/* The flags: a configuration file, or what stands for one. */
struct run_flags {
    struct tl_pipeline_opts po;
    struct tl_sink_flags sf; /* quick flags of the sinks that have them (InfluxDB) */
    const char *from, *format, *lines_out, *by;
    const char *follows[RUN_MAX_SOURCES];
    int nfollow;
    struct run_settings run; /* the values of the run flags given */
    bool set_ckdir, set_ckint, set_flush, set_cum, set_window, set_by, set_quiet;
    long long window;
};

/* One flag of run's own; -1 to go on, else the exit status (said). */
static int run_flag(int c, const char *arg, struct run_flags *f)
{
    switch (c) {
    case 'c': f->po.config_path = arg; break;
    case 'H': run_config_help(stdout); return TL_EXIT_OK;
    case 'f':
        if (f->nfollow == RUN_MAX_SOURCES) return TL_EXIT_USAGE;
        f->follows[f->nfollow++] = arg;
        break;
    case 'F':
        if (strcmp(arg, "end") && strcmp(arg, "beginning")) {
            tl_eprintf("tasklens run: --from is beginning or end\n");
            return TL_EXIT_USAGE;
        }
        f->from = arg;
        break;
    case 'o': f->lines_out = arg; break;
    case 'D': f->run.checkpoint_dir = arg; f->set_ckdir = true; break;
    case 'K': f->run.checkpoint_interval = atoll(arg); f->set_ckint = true; break;
    case 'I': f->run.flush_interval = atoll(arg); f->set_flush = true; break;
    case 'C': f->run.cumulative_interval = atoll(arg); f->set_cum = true; break;
    case 'w': f->window = atoll(arg); f->set_window = true; break;
    case 'b': f->by = arg; f->set_by = true; break;
    case 'i':
        if (!tl_parser_find(arg)) {
            tl_eprintf("tasklens run: unknown format '%s' (see `tasklens formats`)\n", arg);
            return TL_EXIT_USAGE;
        }
        f->format = arg;
        break;
    case 'n': f->run.instance = arg; break;
    case 'S': f->po.stats_path = arg; break;
    case 'q': f->set_quiet = true; break;
    case 'h': run_usage(stdout); return TL_EXIT_OK;
    default: {
        int r = tl_sink_flag(&f->sf, c, arg, "tasklens run");
        if (r == 0) run_usage(stderr);
        if (r <= 0) return TL_EXIT_USAGE;
    }
    }
    return -1;
}

/* The quick flags add to (or override) the file's configuration. */
static enum tl_err apply_flags(struct run_config *cfg, const struct run_flags *f)
{
    for (int i = 0; i < f->nfollow; i++) {
        struct src_settings *s = run_config_add_source(cfg, tl_source_find("file"));
        if (!s) return TL_ERR_LIMIT;
        tl_src_base(s)->path = f->follows[i];
        if (f->format) tl_src_base(s)->parser = f->format;
        if (f->from && run_config_source_set(s, "from", f->from)) return TL_ERR_USAGE;
    }
    if (f->lines_out && add_sink(cfg, tl_sink_find("file"), NULL, "path", f->lines_out))
        return TL_ERR_USAGE;
    const struct tl_sink_conf *named[8];
    for (int i = 0, n = tl_sink_flags_configured(&f->sf, named, 8); i < n; i++)
        if (add_sink(cfg, named[i]->type, named[i]->config, NULL, NULL)) return TL_ERR_USAGE;
    if (f->set_ckdir) cfg->run.checkpoint_dir = f->run.checkpoint_dir;
    if (f->set_ckint) cfg->run.checkpoint_interval = f->run.checkpoint_interval;
    if (f->set_flush) cfg->run.flush_interval = f->run.flush_interval;
    if (f->set_cum) cfg->run.cumulative_interval = f->run.cumulative_interval;
    if (f->run.instance) cfg->run.instance = f->run.instance;
    if (f->set_quiet) cfg->run.quiet = true;
    if (f->set_window) cfg->agg.window = f->window;
    if (f->set_by) cfg->agg.by = f->by;
    return TL_OK;
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
        {0},
    };
    struct run_flags f = {0};
    if (tl_sink_flags_init(&f.sf, longopts)) return TL_EXIT_USAGE;
    int status = -1, c;
    optind = 1;
    while (status < 0 && (c = getopt_long(argc, argv, "c:qh", f.sf.longopts, NULL)) != -1)
        status = run_flag(c, optarg, &f);
    if (status < 0 && optind != argc) {
        run_usage(stderr);
        status = TL_EXIT_USAGE;
    }
    if (status >= 0) {
        tl_sink_flags_free(&f.sf);
        return status;
    }
    struct run_config cfg;
    char err[1024] = "";
    enum tl_err rc = TL_OK;
    if (f.po.config_path) rc = run_config_load(&cfg, f.po.config_path, err, sizeof err);
    else run_config_init(&cfg);
    if (rc) {
        tl_eprintf("tasklens run: %s\n", err);
    } else if ((rc = apply_flags(&cfg, &f)) || (rc = run_config_validate(&cfg, err, sizeof err))) {
        if (rc != TL_ERR_LIMIT && err[0]) tl_eprintf("tasklens run: %s\n", err);
        run_usage(stderr);
    }
    tl_sink_flags_free(&f.sf); /* the configuration holds copies */
    if (rc) {
        run_config_free(&cfg);
        return TL_EXIT_USAGE;
    }
    return tl_pipeline_run(&cfg, &f.po) ? TL_EXIT_INPUT : TL_EXIT_OK;
}
