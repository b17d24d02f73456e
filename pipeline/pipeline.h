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

#include "pipeline/run_config.h"

struct tl_pipeline_opts {
    const char *config_path; /* reloaded on SIGHUP (NULL: the run came from flags) */
    const char *stats_path;  /* the sinks' counters as JSON at exit (NULL: none) */
};

/* Runs cfg (validated; the pipeline takes it over and frees it) until the
 * inputs are over or SIGINT/SIGTERM. Returns 0, or 1 when the run could
 * not start or output was lost. */
int tl_pipeline_run(struct run_config *cfg, const struct tl_pipeline_opts *opts);

#endif
