/* tasklens run: follow a live log and push what it says, continuously.
 *
 *   tasklens run --follow PATH [--from end] (--lines-out FILE | --influx-url URL ...)
 *
 * The loop: read what the followed file has (large reads), feed the parser,
 * and at every flush interval hand the points on (file or InfluxDB, with
 * the disk spool behind it) together with a `tasklens` self-metrics point;
 * every cumulative interval, write the cumulative task_quantiles. Signals
 * arrive through a signalfd, so there is no global flag: SIGINT and SIGTERM
 * stop reading, write the cumulative points, flush, drain (bounded) and exit
 * 0; SIGHUP reopens the file. Open tasks stay open: a followed log is not
 * over when we stop.
 *
 * Not yet: a configuration file, checkpoints (restart resumes from the
 * beginning, or --from end), directories and Kafka. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli.h"
#include "follow.h"
#include "input.h"
#include "output.h"

#define MAX_SETTINGS 32
#define CHUNK (256 * 1024)

static void run_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens run --follow PATH [OPTIONS]\n"
            "\n"
            "Follows PATH like `tail -F` (rotation, truncation, a file that appears later)\n"
            "and pushes task, task_quantiles, workflow and tasklens points as they happen.\n"
            "\n"
            "  --follow PATH          the log to follow\n"
            "  --from WHERE           beginning (default) or end\n"
            "  --lines-out FILE       write line protocol to FILE ('-': stdout)\n"
            TL_INFLUX_HELP
            "  --flush-interval MS    hand points on at least this often (default 1000)\n"
            "  --cumulative-interval S  write cumulative quantiles this often (default 10)\n"
            "  --window SECONDS       tumbling window over record time (default 60)\n"
            "  --by KEYS              group quantiles by these tags (default: source,category)\n"
            "  --format-in NAME       input format (default: detected from the first bytes)\n"
            "  --instance NAME        `instance` tag of the self-metrics (default: host)\n"
            "  --stats FILE           write the sink's counters as JSON at exit\n"
            "  -q, --quiet            no status line, no rejected-line reports\n"
            "\n"
            "SIGINT/SIGTERM: flush, drain and exit 0. SIGHUP: reopen the file.\n");
}

struct reject_ctx {
    const char *path;
    bool quiet;
    int reported;
};

static void report_reject(void *ctx, uint64_t line, enum tl_reject why, const char *detail)
{
    struct reject_ctx *r = ctx;
    if (r->quiet || r->reported++ >= 10) return;
    fprintf(stderr, "%s:%llu: %s%s%s%s\n", r->path, (unsigned long long)line, tl_reject_str(why),
            detail ? " (" : "", detail ? detail : "", detail ? ")" : "");
}

struct feed_ctx { /* the parser's emit: records to the output, rejects to stderr */
    struct tl_output *out;
    struct reject_ctx rej;
};

static void on_record(void *ctx, const struct tl_record *r)
{
    tl_output_record(((struct feed_ctx *)ctx)->out, r);
}

static void on_reject(void *ctx, uint64_t line, enum tl_reject why, const char *detail)
{
    report_reject(&((struct feed_ctx *)ctx)->rej, line, why, detail);
}

int tl_cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"follow", required_argument, NULL, 'f'},
        {"from", required_argument, NULL, 'F'},
        {"lines-out", required_argument, NULL, 'o'},
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
    struct tl_influx_sink_cfg sc;
    tl_influx_sink_cfg_default(&sc);
    sc.spool.dir = "tasklens-spool";
    struct tl_agg_opts ao;
    tl_agg_opts_default(&ao);
    ao.by[0] = "source";
    ao.by[1] = "category";
    ao.nby = 2;
    struct tl_input_opts io = {.max_reports = 10};
    struct tl_parser_setting settings[MAX_SETTINGS];
    const char *path = NULL, *lines_out = NULL, *stats_path = NULL;
    bool from_end = false;
    long flush_ms = 1000, cumulative_s = 10, window_s = 60;
    char host[256] = "tasklens";
    gethostname(host, sizeof host - 1);
    const char *instance = host;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': path = optarg; break;
        case 'F':
            if (!strcmp(optarg, "end")) from_end = true;
            else if (strcmp(optarg, "beginning")) {
                fprintf(stderr, "tasklens run: --from is beginning or end\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 'o': lines_out = optarg; break;
        case 'I': flush_ms = atol(optarg); break;
        case 'C': cumulative_s = atol(optarg); break;
        case 'w': window_s = atol(optarg); break;
        case 'b':
            ao.nby = tl_parse_key_list(optarg, ao.by, TL_AGG_MAX_KEYS);
            if (!ao.nby) {
                fprintf(stderr, "tasklens run: bad --by list\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 'n': instance = optarg; break;
        case 'S': stats_path = optarg; break;
        case 'h': run_usage(stdout); return TL_EXIT_OK;
        default: {
            int r = tl_influx_option(c, optarg, &sc, "tasklens run");
            if (r == 0) r = tl_input_option(c, optarg, &io, settings, MAX_SETTINGS, "tasklens run");
            if (r <= 0) {
                if (r == 0) run_usage(stderr);
                return TL_EXIT_USAGE;
            }
        }
        }
    }
    bool to_influx = sc.http.db || sc.http.bucket || sc.http.org;
    if (!path || optind != argc || (!to_influx && !lines_out) || flush_ms < 10 ||
        cumulative_s < 1 || window_s < 0) {
        run_usage(stderr);
        return TL_EXIT_USAGE;
    }
    char err[512];
    sc.flush_interval_ms = flush_ms;
    struct tl_influx_sink *sink;
    if (tl_influx_sink_open(&sc, io.quiet, &sink, "tasklens run")) return TL_EXIT_USAGE;
    FILE *out = NULL;
    if (!sink) {
        out = strcmp(lines_out, "-") ? fopen(lines_out, "a") : stdout;
        if (!out) {
            fprintf(stderr, "tasklens run: %s: %s\n", lines_out, strerror(errno));
            return TL_EXIT_INPUT;
        }
    }
    struct tl_follow *fl;
    if (tl_follow_open(path, from_end, NULL, &fl, err, sizeof err)) {
        fprintf(stderr, "tasklens run: %s\n", err);
        tl_influx_sink_free(sink);
        return TL_EXIT_INPUT;
    }
    /* signals as events on a descriptor: no global flag, no async handler */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);

    struct tl_output o;
    if (tl_output_init(&o, &ao, window_s, out, sink)) {
        fprintf(stderr, "tasklens run: bad aggregation options\n");
        tl_follow_close(fl);
        tl_influx_sink_free(sink);
        return TL_EXIT_USAGE;
    }
    struct feed_ctx fc = {&o, {path, io.quiet, 0}};
    struct tl_emit emit = {on_record, on_reject, &fc};
    struct tl_parser_inst inst = {0};
    char *buf = malloc(CHUNK);
    bool tty = isatty(2) && !io.quiet;
    int64_t last_flush = tl_mono_ms(), last_cum = last_flush, last_status = last_flush;
    int status = TL_EXIT_OK;
    bool stop = false;
    while (!stop && buf) {
        size_t got;
        if (tl_follow_read(fl, buf, CHUNK, &got)) {
            fprintf(stderr, "tasklens run: reading %s failed\n", path);
            status = TL_EXIT_INPUT;
            break;
        }
        if (got) {
            if (!inst.p) { /* the first bytes decide the format */
                const struct tl_parser *p = io.forced ? io.forced : tl_parser_detect(buf, got, NULL);
                if (!p) p = tl_parser_find("wq");
                if (tl_parser_inst_init(&inst, p) || tl_parser_inst_open(&inst, &emit)) {
                    status = TL_EXIT_INPUT;
                    break;
                }
            }
            inst.p->feed(inst.state, buf, got);
        } else {
            int64_t wait = flush_ms - (tl_mono_ms() - last_flush);
            tl_follow_wait(fl, wait < 10 ? 10 : wait > 200 ? 200 : (int)wait);
        }
        int64_t now = tl_mono_ms();
        if (now - last_cum >= cumulative_s * 1000) {
            tl_output_cumulative(&o);
            last_cum = now;
        }
        if (now - last_flush >= flush_ms) {
            if (inst.p) {
                const struct tl_parse_stats *ps = inst.p->stats(inst.state);
                struct tl_summary_input in = {.path = path, .format = inst.p->name,
                                              .lines = ps->lines, .records = ps->records,
                                              .rejected = ps->rejected};
                memcpy(in.rejected_by, ps->rejected_by, sizeof in.rejected_by);
                tl_output_self(&o, instance, &in, tl_follow_stats(fl).lag);
            }
            tl_output_pass(&o, true);
            last_flush = now;
        }
        if (tty && now - last_status >= 10000) {
            const struct tl_parse_stats *ps = inst.p ? inst.p->stats(inst.state) : NULL;
            fprintf(stderr, "tasklens: %llu lines, %llu records, %llu rejected, lag %llu bytes\n",
                    ps ? (unsigned long long)ps->lines : 0ULL,
                    ps ? (unsigned long long)ps->records : 0ULL,
                    ps ? (unsigned long long)ps->rejected : 0ULL,
                    (unsigned long long)tl_follow_stats(fl).lag);
            last_status = now;
        }
        struct signalfd_siginfo si;
        while (sfd >= 0 && read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
            if (si.ssi_signo == SIGHUP) {
                struct tl_follow_pos pos = tl_follow_position(fl);
                tl_follow_close(fl);
                if (tl_follow_open(path, false, &pos, &fl, err, sizeof err)) {
                    fprintf(stderr, "tasklens run: %s\n", err);
                    status = TL_EXIT_INPUT;
                    stop = true;
                    fl = NULL;
                }
            } else {
                stop = true;
            }
        }
    }
    if (o.sink == NULL && o.out) fflush(o.out);
    if (tl_output_close(&o, "tasklens run", sc.spool.dir, 30000, stats_path) && !status)
        status = TL_EXIT_INPUT;
    if (out && out != stdout) fclose(out);
    tl_parser_inst_free(&inst);
    tl_follow_close(fl);
    free(buf);
    if (sfd >= 0) close(sfd);
    return status;
}
