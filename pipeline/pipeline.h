/* The streaming runtime behind `tasklens run`: sources -> parsers -> output
 * (task points, the aggregator) -> sinks -> checkpoint, in one thread.
 *
 * The command line (cli/cmd_run.c) turns flags and the YAML file into a
 * struct run_config and calls tl_pipeline_run; everything after that --
 * the loop, signals, flushes, cumulative points, checkpoints, SIGHUP
 * reloads, self-metrics -- is here (runner.c), and what each kind of input
 * does is in its source plugin (source.h). */
#ifndef TL_PIPELINE_PIPELINE_H
#define TL_PIPELINE_PIPELINE_H

#include <signal.h>
#include <stdbool.h>

#include "core/aggregate.h"
#include "core/record.h"
#include "pipeline/run_config.h"

struct tl_runtime;

/* A live view beside (or instead of) the sinks: `tasklens top`. It gets
 * every record as the sinks do, a tick after every round of the loop (it
 * draws when it wants: the loop runs often while input flows, at least
 * every 200 ms when idle), and fd (its keyboard) wakes the loop. */
struct tl_view {
    void *ctx;
    int fd; /* -1: none */
    void (*record)(void *ctx, const struct tl_record *r);
    /* input_over: every input was read to its end (nothing is followed);
     * the loop then goes on ticking while tick returns true. idle: this
     * round read nothing (followed inputs are read to their current end).
     * false ends the run. */
    bool (*tick)(void *ctx, struct tl_runtime *rt, bool input_over, bool idle);
};

struct tl_pipeline_opts {
    const char *config_path; /* reloaded on SIGHUP (NULL: the run came from flags) */
    const char *stats_path;  /* the sinks' counters as JSON at exit (NULL: none) */
    const struct tl_view *view; /* NULL: none */
};

/* For a view's tick: the run's aggregator (per category; what `summary`
 * computes from the same records), and the tasks open now in every
 * source's parsers (those that can say: struct tl_parser.open_tasks);
 * false when none can. */
struct tl_agg *tl_rt_aggregator(struct tl_runtime *rt);
bool tl_rt_each_open_task(struct tl_runtime *rt, void (*each)(void *ctx, const struct tl_record *r),
                          void *ctx);

/* Runs cfg (validated; the pipeline takes it over and frees it) until the
 * inputs are over or SIGINT/SIGTERM. Returns 0, or 1 when the run could
 * not start or output was lost. */
int tl_pipeline_run(struct run_config *cfg, const struct tl_pipeline_opts *opts);

/* Blocks the signals the run loop takes through its signalfd (SIGINT,
 * SIGTERM, SIGHUP) and puts them in *mask: one sent before the loop starts
 * waits for it instead of killing the process. */
void tl_pipeline_block_signals(sigset_t *mask);

#endif
