/* Where points go, for `lines` and `run`: records become `task` and
 * `workflow` points, the aggregator's windows and cumulative summaries
 * become `task_quantiles` points, and the text goes to a file (or stdout)
 * or to the InfluxDB sink. Points are handed on when 1 MiB has gathered or
 * a second has passed, so a slow stream does not sit in memory. */
#ifndef TL_CLI_OUTPUT_H
#define TL_CLI_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "aggregate.h"
#include "lineproto.h"
#include "sink.h"
#include "summary.h"

struct tl_output {
    FILE *out;                   /* when no sink */
    struct tl_influx_sink *sink; /* owned */
    struct tl_buf buf;
    uint32_t buf_lines;
    struct tl_lp_stats st;
    struct tl_agg *agg;
    struct tl_agg_opts ao;
    char window_label[32];
    uint32_t since_clock;
    int64_t last_pass_ms;
    bool sink_failed, write_error;
    enum tl_err agg_rc;
};

/* window_s: tumbling window length (0: none). sink may be NULL (then out). */
enum tl_err tl_output_init(struct tl_output *o, const struct tl_agg_opts *ao, long window_s,
                           FILE *out, struct tl_influx_sink *sink);
/* A record callback for parsers (ctx = struct tl_output *). */
void tl_output_record(void *ctx, const struct tl_record *r);
/* A `tasklens` self-metrics point for one input. */
void tl_output_self(struct tl_output *o, const char *instance, const struct tl_summary_input *in,
                    uint64_t lag);
/* Hands buffered points on (force: whatever the size and age). */
void tl_output_pass(struct tl_output *o, bool force);
/* Cumulative task_quantiles points of every group and metric, now. */
void tl_output_cumulative(struct tl_output *o);
/* End: closes the window, writes the cumulative points, flushes, drains the
 * sink up to drain_timeout_ms, writes stats_path (if any), reports, frees.
 * Returns 0, or 1 when points remain spooled or the output failed. */
int tl_output_close(struct tl_output *o, const char *cmd, const char *spool_dir,
                    long drain_timeout_ms, const char *stats_path);

int64_t tl_mono_ms(void);

#endif
