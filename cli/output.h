/* Where points go, for `lines` and `run`: records become `task` and
 * `workflow` points, the aggregator's windows and cumulative summaries
 * become `task_quantiles` points, and the text goes to every destination:
 * files (or stdout) and InfluxDB sinks. Points are handed on when 1 MiB has
 * gathered or a second has passed, so a slow stream does not sit in
 * memory. */
#ifndef TL_CLI_OUTPUT_H
#define TL_CLI_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "aggregate.h"
#include "lineproto.h"
#include "sink.h"
#include "summary.h"

#define TL_OUTPUT_MAX_DESTS 8

struct tl_output_dest {
    FILE *out;                   /* a file destination (owned unless stdout) */
    struct tl_influx_sink *sink; /* or an InfluxDB one (owned) */
    const char *name;            /* file path or spool directory, for messages */
    bool failed;                 /* sink: an add failed; file: a write failed */
};

struct tl_output {
    struct tl_output_dest dests[TL_OUTPUT_MAX_DESTS];
    int ndests;
    struct tl_buf buf;
    uint32_t buf_lines;
    struct tl_lp_stats st;
    struct tl_agg *agg;
    struct tl_agg_opts ao;
    char window_label[32];
    uint32_t since_clock;
    int64_t last_pass_ms;
    enum tl_err agg_rc;
    bool no_wait; /* the run is ending or reloading: a full spool is not waited on */
    /* The categories whose task points carry their name, up to ao.max_keys
     * (this process): later ones are written as `_other`, so the series in
     * InfluxDB stay bounded when names change every run (TaskVine's
     * `<function f at 0x7f...>`). */
    struct tl_intern *categories;
    char last_category[128]; /* the last admitted ("": none) */
    uint64_t other_points;
};

/* window_s: tumbling window length (0: none). Then add destinations. */
enum tl_err tl_output_init(struct tl_output *o, const struct tl_agg_opts *ao, long window_s);
/* out is closed by tl_output_close unless it is stdout. */
enum tl_err tl_output_add_file(struct tl_output *o, FILE *out, const char *name);
/* Takes ownership of sink; spool_dir names it in messages. */
enum tl_err tl_output_add_sink(struct tl_output *o, struct tl_influx_sink *sink,
                               const char *spool_dir);
/* Makes everything produced so far durable: handed on, sent or spooled,
 * spools and files fsync'ed. true when every destination acknowledged --
 * only then may a checkpoint say these points are safe. */
bool tl_output_sync(struct tl_output *o);
/* A record callback for parsers (ctx = struct tl_output *). */
void tl_output_record(void *ctx, const struct tl_record *r);
/* A `tasklens` self-metrics point for one input. */
void tl_output_self(struct tl_output *o, const char *instance, const struct tl_summary_input *in,
                    uint64_t lag);
/* Hands buffered points on (force: whatever the size and age). */
void tl_output_pass(struct tl_output *o, bool force);
/* Cumulative task_quantiles points of every group and metric, now. */
void tl_output_cumulative(struct tl_output *o);
/* An aggregator callback (ctx = struct tl_output *) writing cumulative
 * task_quantiles points tagged scope=global. */
void tl_output_on_global(void *ctx, const struct tl_agg_window *w);
/* Writes the open window and the cumulative points (end of input). */
void tl_output_finish(struct tl_output *o);
/* Drains the sinks up to drain_timeout_ms, writes stats_path (the sinks'
 * counters, if any), reports, closes the destinations, frees. Returns 0,
 * or flags: TL_OUTPUT_SPOOLED when batches remain in a spool (safe on disk,
 * sent on the next run), TL_OUTPUT_HELD when points could be neither sent
 * nor spooled (only a checkpoint that does not cover them saves them),
 * TL_OUTPUT_FAILED when an output failed. */
#define TL_OUTPUT_SPOOLED 1
#define TL_OUTPUT_FAILED 2
#define TL_OUTPUT_HELD 4
int tl_output_close(struct tl_output *o, const char *cmd, long drain_timeout_ms,
                    const char *stats_path);
/* Summed counters of the InfluxDB sinks. */
struct tl_influx_sink_stats tl_output_sink_stats(const struct tl_output *o);

int64_t tl_mono_ms(void);

/* The InfluxDB and spool options `lines` and `run` share: put
 * TL_INFLUX_LONGOPTS in a getopt_long table, hand each option to
 * tl_influx_option (1: applied, 0: not one of these, -1: bad value, printed),
 * then tl_influx_sink_open (no sink when no InfluxDB was configured; the
 * password and token come only from INFLUX_PASSWORD / INFLUX_TOKEN). */
#define TL_INFLUX_LONGOPTS                                                                         \
    {"influx-url", required_argument, NULL, 1001}, {"influx-db", required_argument, NULL, 1002},   \
        {"influx-rp", required_argument, NULL, 1003},                                              \
        {"influx-user", required_argument, NULL, 1004},                                            \
        {"influx-org", required_argument, NULL, 1005},                                             \
        {"influx-bucket", required_argument, NULL, 1006},                                          \
        {"influx-create-db", no_argument, NULL, 1007},                                             \
        {"influx-ca-file", required_argument, NULL, 1008},                                         \
        {"influx-insecure", no_argument, NULL, 1009}, {"no-gzip", no_argument, NULL, 1010},        \
        {"spool-dir", required_argument, NULL, 1011},                                              \
        {"spool-max", required_argument, NULL, 1012},                                              \
        {"spool-drop-oldest", no_argument, NULL, 1013},                                            \
        {"influx-timeout", required_argument, NULL, 1016}

#define TL_INFLUX_HELP                                                                             \
    "  --influx-url URL        e.g. http://127.0.0.1:8086\n"                                       \
    "  --influx-db NAME        1.x database (--influx-rp RP for a retention policy)\n"             \
    "  --influx-user NAME      1.x user; the password comes from $INFLUX_PASSWORD\n"               \
    "  --influx-org ORG --influx-bucket B   2.x; the token comes from $INFLUX_TOKEN\n"             \
    "  --influx-create-db      create the 1.x database if it does not exist\n"                     \
    "  --influx-ca-file F, --influx-insecure   TLS options passed to libcurl\n"                    \
    "  --no-gzip               send uncompressed bodies\n"                                         \
    "  --influx-timeout MS     per-request timeout (default 10000)\n"                              \
    "  --spool-dir DIR         where batches wait while InfluxDB is unavailable\n"                 \
    "                          (default ./tasklens-spool)\n"                                       \
    "  --spool-max SIZE        spool cap (default 1G); when full, reading pauses\n"                \
    "  --spool-drop-oldest     when full, drop the oldest batches (counted) instead\n"

int tl_influx_option(int c, const char *arg, struct tl_influx_sink_cfg *sc, const char *cmd);
/* TL_OK with *sink NULL when sc names no database/bucket/org. */
enum tl_err tl_influx_sink_open(struct tl_influx_sink_cfg *sc, bool quiet,
                                struct tl_influx_sink **sink, const char *cmd);

#endif
