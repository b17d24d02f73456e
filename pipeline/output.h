/* Where points go, for `lines` and the pipeline (`run`): records become `task` and
 * `workflow` points, the aggregator's windows and cumulative summaries
 * become `task_quantiles` points, and the text goes to every destination:
 * files (or stdout) and InfluxDB sinks. Points are handed on when 1 MiB has
 * gathered or a second has passed, so a slow stream does not sit in
 * memory. */
#ifndef TL_PIPELINE_OUTPUT_H
#define TL_PIPELINE_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "aggregate.h"
#include "lineproto.h"
#include "requests.h"
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
    /* LSST quanta's allocations from a BPS submit YAML (`requests:`, owned;
     * NULL: none) */
    struct tl_requests *requests;
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

#endif
