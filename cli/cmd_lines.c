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
#include "input.h"
#include "lineproto.h"
#include "sink.h"

#define MAX_SETTINGS 32
#define FLUSH_BYTES (1 << 20)

struct lines_ctx {
    FILE *out;
    struct tl_influx_sink *sink; /* set: points go to InfluxDB instead of out */
    uint32_t buf_lines;
    bool sink_failed;
    uint32_t since_clock;   /* records since the clock was last read */
    int64_t last_pass_ms;   /* when buf last went to the sink */
    struct tl_buf buf;
    struct tl_lp_stats st;
    struct tl_agg *agg;
    const struct tl_agg_opts *ao;
    char window_label[32];
    bool write_error;
    enum tl_err agg_rc;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void flush_buf(struct lines_ctx *c, bool force)
{
    if (!force && c->buf.len < FLUSH_BYTES) {
        /* a slow stream (stdin from a live log) must not sit in memory:
         * hand it on at least every second; the clock is read every 64 calls */
        if (!c->sink || ++c->since_clock < 64) return;
        c->since_clock = 0;
        if (mono_ms() - c->last_pass_ms < 1000) return;
    }
    c->last_pass_ms = mono_ms();
    if (c->sink) {
        if (c->buf.len) {
            enum tl_err rc = tl_influx_sink_add(c->sink, c->buf.data, c->buf.len, c->buf_lines);
            /* spool full: stop reading until InfluxDB takes some (backpressure) */
            while (rc == TL_ERR_LIMIT) rc = tl_influx_sink_drain(c->sink, 5000);
            if (rc && rc != TL_ERR_LIMIT) c->sink_failed = true;
        }
    } else if (c->buf.len && fwrite(c->buf.data, 1, c->buf.len, c->out) != c->buf.len) {
        c->write_error = true;
    }
    c->buf.len = 0;
    c->buf_lines = 0;
}

static void on_summary(void *ctx, const struct tl_agg_window *w)
{
    struct lines_ctx *c = ctx;
    c->buf_lines += (uint32_t)tl_lp_quantiles(&c->buf, w, c->ao->by, c->ao->nby,
                                              w->cumulative ? "cumulative" : c->window_label, &c->st);
    flush_buf(c, false);
}

static void on_record(void *ctx, const struct tl_record *r)
{
    struct lines_ctx *c = ctx;
    c->buf_lines += (uint32_t)tl_lp_task(&c->buf, r, &c->st);
    c->buf_lines += (uint32_t)tl_lp_workflow(&c->buf, r, &c->st);
    enum tl_err rc = tl_agg_add(c->agg, r);
    if (rc && !c->agg_rc) c->agg_rc = rc;
    flush_buf(c, false);
}

static void lines_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens lines [OPTIONS] INPUT...\n"
            "\n"
            "Writes InfluxDB line protocol: a `task` point per finished attempt, and\n"
            "`task_quantiles` points per group and metric for each window and cumulatively.\n"
            "\n"
            "  -o, --output FILE   write to FILE instead of stdout\n"
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
            "  --influx-url URL        e.g. http://127.0.0.1:8086\n"
            "  --influx-db NAME        1.x database (--influx-rp RP for a retention policy)\n"
            "  --influx-user NAME      1.x user; the password comes from $INFLUX_PASSWORD\n"
            "  --influx-org ORG --influx-bucket B   2.x; the token comes from $INFLUX_TOKEN\n"
            "  --influx-create-db      create the 1.x database if it does not exist\n"
            "  --influx-ca-file F, --influx-insecure   TLS options passed to libcurl\n"
            "  --no-gzip               send uncompressed bodies\n"
            "  --influx-timeout MS     per-request timeout (default 10000)\n"
            "  --spool-dir DIR         where batches wait while InfluxDB is unavailable\n"
            "                          (default ./tasklens-spool)\n"
            "  --spool-max SIZE        spool cap (default 1G); when full, reading pauses\n"
            "  --spool-drop-oldest     when full, drop the oldest batches (counted) instead\n"
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
        {"influx-url", required_argument, NULL, 1001},
        {"influx-db", required_argument, NULL, 1002},
        {"influx-rp", required_argument, NULL, 1003},
        {"influx-user", required_argument, NULL, 1004},
        {"influx-org", required_argument, NULL, 1005},
        {"influx-bucket", required_argument, NULL, 1006},
        {"influx-create-db", no_argument, NULL, 1007},
        {"influx-ca-file", required_argument, NULL, 1008},
        {"influx-insecure", no_argument, NULL, 1009},
        {"no-gzip", no_argument, NULL, 1010},
        {"spool-dir", required_argument, NULL, 1011},
        {"spool-max", required_argument, NULL, 1012},
        {"spool-drop-oldest", no_argument, NULL, 1013},
        {"drain-timeout", required_argument, NULL, 1014},
        {"stats", required_argument, NULL, 1015},
        {"influx-timeout", required_argument, NULL, 1016},
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
        case 1001: sc.http.url = optarg; break;
        case 1002: sc.http.db = optarg; break;
        case 1003: sc.http.rp = optarg; break;
        case 1004: sc.http.user = optarg; break;
        case 1005: sc.http.org = optarg; sc.http.version = 2; break;
        case 1006: sc.http.bucket = optarg; sc.http.version = 2; break;
        case 1007: sc.create_db = true; break;
        case 1008: sc.http.ca_file = optarg; break;
        case 1009: sc.http.insecure = true; break;
        case 1010: sc.http.gzip = false; break;
        case 1011: sc.spool.dir = optarg; break;
        case 1012: {
            struct tl_option o[] = {{"spool-max", TL_OPT_SIZE, NULL, "", 0}, {0}};
            char err[128];
            size_t v;
            if (tl_options_set(o, &v, "spool-max", optarg, err, sizeof err)) {
                fprintf(stderr, "tasklens lines: %s\n", err);
                return TL_EXIT_USAGE;
            }
            sc.spool.max_bytes = v;
            break;
        }
        case 1013: sc.spool.drop_oldest = true; break;
        case 1014: drain_timeout_s = atol(optarg); break;
        case 1015: stats_path = optarg; break;
        case 1016: sc.http.timeout_ms = atol(optarg); break;
        case 1017: instance = optarg; break;
        default: {
            int r = tl_input_option(c, optarg, &io, settings, MAX_SETTINGS, "tasklens lines");
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
    ao.window_ns = window_s * 1000000000LL;
    struct lines_ctx ctx = {.out = stdout, .ao = &ao};
    snprintf(ctx.window_label, sizeof ctx.window_label, "%lds", window_s);
    bool to_influx = sc.http.db || sc.http.bucket || sc.http.org;
    if (to_influx) {
        /* secrets only from the environment: never on a command line or in a log */
        sc.http.password = getenv("INFLUX_PASSWORD");
        sc.http.token = getenv("INFLUX_TOKEN");
        sc.quiet = io.quiet;
        char err[256];
        if (tl_influx_sink_new(&sc, &ctx.sink, err, sizeof err)) {
            fprintf(stderr, "tasklens lines: %s\n", err);
            return TL_EXIT_USAGE;
        }
    }
    if (outpath && !(ctx.out = fopen(outpath, "w"))) {
        fprintf(stderr, "tasklens lines: %s: %s\n", outpath, strerror(errno));
        return TL_EXIT_INPUT;
    }
    ctx.agg = tl_agg_new(&ao, on_summary, &ctx);
    if (!ctx.agg) {
        fprintf(stderr, "tasklens lines: bad aggregation options\n");
        return TL_EXIT_USAGE;
    }
    ao = *tl_agg_options(ctx.agg);
    int status = TL_EXIT_OK;
    for (int i = optind; i < argc; i++) {
        struct tl_summary_input info;
        enum tl_err rc = tl_read_input(argv[i], &io, on_record, &ctx, &info);
        if (rc == TL_ERR_USAGE) status = TL_EXIT_USAGE;
        else if (rc && status == TL_EXIT_OK) status = TL_EXIT_INPUT;
        if (strict && info.rejected && status == TL_EXIT_OK) status = TL_EXIT_INPUT;
        /* the `tasklens` measurement: what this input cost and yielded */
        const char *names[3 + TL_REJ_COUNT] = {"lines", "records", "parse_errors"};
        uint64_t values[3 + TL_REJ_COUNT] = {info.lines, info.records, info.rejected};
        char keys[TL_REJ_COUNT][48];
        int n = 3;
        for (int rj = 0; rj < TL_REJ_COUNT; rj++) {
            if (!info.rejected_by[rj]) continue;
            snprintf(keys[rj], sizeof keys[rj], "rejected_%s", tl_reject_key((enum tl_reject)rj));
            names[n] = keys[rj];
            values[n++] = info.rejected_by[rj];
        }
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        ctx.buf_lines += (uint32_t)tl_lp_self(&ctx.buf, instance, info.format, names, values, n,
                                              (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec,
                                              &ctx.st);
        tl_input_info_free(&info);
    }
    tl_agg_close_window(ctx.agg);
    tl_agg_flush(ctx.agg);
    flush_buf(&ctx, true);
    if (ctx.sink) {
        enum tl_err drc = tl_influx_sink_drain(ctx.sink, drain_timeout_s * 1000);
        tl_influx_sink_sync(ctx.sink);
        struct tl_influx_sink_stats ss = tl_influx_sink_stats(ctx.sink);
        if (drc || ctx.sink_failed) {
            const char *why = tl_influx_sink_fatal(ctx.sink);
            fprintf(stderr,
                    "tasklens lines: %llu batches (%llu bytes) remain in the spool %s; they are "
                    "sent on the next run%s%s\n",
                    (unsigned long long)ss.spool.frames, (unsigned long long)ss.spool.bytes,
                    sc.spool.dir, why ? ": " : "", why ? why : "");
            status = TL_EXIT_INPUT;
        }
        if (stats_path) {
            FILE *f = fopen(stats_path, "w");
            if (f) {
                fprintf(f,
                        "{\"points_acked\":%llu,\"points_dropped\":%llu,\"batches_sent\":%llu,"
                        "\"batches_spooled\":%llu,\"batches_split\":%llu,\"retries\":%llu,"
                        "\"http_errors\":%llu,\"spool_bytes\":%llu,\"spool_frames\":%llu,"
                        "\"spool_dropped_frames\":%llu,\"spool_corrupt_frames\":%llu,"
                        "\"spool_corrupt_bytes\":%llu,\"points_unwritable\":%llu}\n",
                        (unsigned long long)ss.points_acked, (unsigned long long)ss.points_dropped,
                        (unsigned long long)ss.batches_sent, (unsigned long long)ss.batches_spooled,
                        (unsigned long long)ss.batches_split, (unsigned long long)ss.retries,
                        (unsigned long long)ss.http_errors, (unsigned long long)ss.spool.bytes,
                        (unsigned long long)ss.spool.frames,
                        (unsigned long long)ss.spool.dropped_frames,
                        (unsigned long long)ss.spool.corrupt_frames,
                        (unsigned long long)ss.spool.corrupt_bytes,
                        (unsigned long long)ctx.st.rejected_unwritable);
                fclose(f);
            }
        }
        tl_influx_sink_free(ctx.sink);
    }
    if (ctx.st.rejected_unwritable)
        fprintf(stderr,
                "tasklens lines: %llu points refused: a name or value with a newline or a "
                "trailing backslash cannot be written in line protocol\n",
                (unsigned long long)ctx.st.rejected_unwritable);
    if (ctx.agg_rc) {
        fprintf(stderr, "tasklens lines: %s\n", tl_strerror(ctx.agg_rc));
        status = TL_EXIT_INPUT;
    }
    if (fflush(ctx.out) || ctx.write_error || ctx.buf.oom) {
        fprintf(stderr, "tasklens lines: writing the output failed\n");
        status = TL_EXIT_INPUT;
    }
    if (outpath) fclose(ctx.out);
    tl_agg_free(ctx.agg);
    tl_buf_free(&ctx.buf);
    return status;
}
