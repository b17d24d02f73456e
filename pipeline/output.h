/* Where records go, for `lines` and the pipeline (`run`): records become
 * `task` and `workflow` points (core/point.h), the aggregator's windows and
 * cumulative summaries become `task_quantiles` points, its closed windows
 * (60 s, the coarser ones, late parts) `task_histogram` points, and each
 * sink (sinks/sink.h) gets what it declared it takes: the points in its
 * codec (encoded once here per codec and set of measurements in use), the
 * records, the window summaries. Points are
 * handed on when 1 MiB has gathered or a second has passed, so a slow
 * stream does not sit in memory. */
#ifndef TL_PIPELINE_OUTPUT_H
#define TL_PIPELINE_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "core/aggregate.h"
#include "core/clock.h"
#include "core/requests.h"
#include "core/point.h"
#include "sinks/codec.h"
#include "sinks/sink.h"
#include "core/summary.h"

#define TL_OUTPUT_MAX_DESTS 8

/* One encoding of the points: a codec in use, the measurements the sinks
 * that share it take, its memory, and the points encoded since the last
 * pass. */
struct tl_output_stream {
    const struct tl_codec *codec;
    unsigned measurements; /* a mask of enum tl_measurement */
    void *state;
    struct tl_buf buf;
    uint32_t n;
};

struct tl_output {
    struct tl_sink sinks[TL_OUTPUT_MAX_DESTS];
    int nsinks;
    struct tl_output_stream streams[TL_OUTPUT_MAX_DESTS];
    int nstreams;
    int stream_of[TL_OUTPUT_MAX_DESTS]; /* a sink's stream (sinks that take points) */
    unsigned encode;     /* the measurements some stream takes */
    bool pass_records;   /* a sink takes records */
    bool pass_windows;   /* a sink takes window summaries */
    const struct tl_log *log;
    struct tl_point point;                  /* the one being emitted */
    struct tl_buf parts[TL_AGG_MAX_KEYS];   /* a group's names, decoded for it */
    struct tl_verdict_memo verdict;         /* the last result's verdict (task points) */
    uint64_t refused;                       /* points no codec could write (closed streams' too) */
    const char *refused_why;
    bool out_of_memory;                     /* a stream could not grow */
    struct tl_agg *agg;
    struct tl_agg_opts ao;
    char window_label[32];
    uint32_t since_clock;
    int64_t last_pass_ms;
    enum tl_err agg_rc;
    bool no_wait; /* the run is ending or reloading: a full spool is not waited on */
    /* Closed windows are also written as `task_histogram` buckets (set
     * after init; on by default), tagged with instance when set: the
     * instances of a Kafka consumer group write one histogram each, which
     * queries sum. */
    bool histograms;
    const char *instance;
    char coarse_label[TL_AGG_MAX_COARSE][32]; /* "600s": the coarse windows' `window` tag */
    /* The categories whose task points carry their name, up to ao.max_keys
     * (this process): later ones are written as `_other`, so the series in
     * InfluxDB stay bounded when names change every run (TaskVine's
     * `<function f at 0x7f...>`). */
    struct tl_intern *categories;
    char last_category[128]; /* the last admitted ("": none) */
    uint64_t other_points;
    bool too_late_said; /* records past the allowed lateness were said */
    /* LSST quanta's allocations from a BPS submit YAML (`requests:`, owned;
     * NULL: none) */
    struct tl_requests *requests;
    /* a live view's record hook (pipeline.h, struct tl_view), NULL: none */
    void (*view_record)(void *ctx, const struct tl_record *r);
    void *view_ctx;
};

/* window_s: tumbling window length (0: none); log: where the output
 * speaks (NULL: stderr). Then add sinks. */
enum tl_err tl_output_init(struct tl_output *o, const struct tl_agg_opts *ao, long window_s,
                           const struct tl_log *log);
/* The coarse histogram windows of a comma-separated list of seconds
 * ("600,3600") into ao (before tl_output_init): each a multiple of the
 * window, ascending. strict: a level that is not is an error (err says
 * which); else it is left out (the defaults under a --window they do not
 * fit). An empty list or no window: none. */
enum tl_err tl_output_coarse(struct tl_agg_opts *ao, long window_s, const char *list, bool strict,
                             char *err, size_t errlen);
#define TL_HISTOGRAM_WINDOWS "600,3600"
/* Opens a sink of conf and adds it; err says why not. */
enum tl_err tl_output_open_sink(struct tl_output *o, const struct tl_sink_conf *conf,
                                const struct tl_sink_env *env, char *err, size_t errlen);
/* Closes every sink (after a hand-over: SIGHUP replaces them). */
void tl_output_close_sinks(struct tl_output *o);
/* Every sink flushed and synced: true when all of them hold nothing that
 * is neither sent nor durable. */
bool tl_output_hand_over(struct tl_output *o);
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
 * counters, if any), reports, closes the sinks, frees. Returns 0, or
 * flags: TL_OUTPUT_SPOOLED when batches remain in a spool (safe on disk,
 * sent on the next run), TL_OUTPUT_HELD when points could be neither sent
 * nor spooled (only a checkpoint that does not cover them saves them),
 * TL_OUTPUT_FAILED when an output failed. */
#define TL_OUTPUT_SPOOLED TL_SINK_SPOOLED
#define TL_OUTPUT_FAILED TL_SINK_FAILED
#define TL_OUTPUT_HELD TL_SINK_HELD
int tl_output_close(struct tl_output *o, long drain_timeout_ms, const char *stats_path);
/* The sinks' counters summed by name (in the order first seen), at most max. */
size_t tl_output_sink_counters(const struct tl_output *o, struct tl_counter *out, size_t max);
/* One summed counter (0 when no sink has it). */
uint64_t tl_output_sink_counter(const struct tl_output *o, const char *name);

#endif
