/* Summary tables: per-group task counts, results and metric distributions.
 *
 * A summary consumes records (finished attempts and open tasks), groups them
 * by tags (category by default), and writes one of three views:
 *   table  aligned for a 100-column terminal, human units;
 *   csv    one row per group, LSST-style quantile columns (wall_time_s_p095);
 *   json   the stable contract documented in docs/summary.md.
 *
 * Metric values come from each task's final attempt. Counting and
 * distributions are the aggregator's (core/aggregate.h): quantiles are exact
 * (linear interpolation, as numpy/pandas) while a group holds at most
 * exact_limit values of a metric, and within the sketch's reported alpha
 * beyond; JSON says which ("approx", "alpha"). */
#ifndef TL_SUMMARY_H
#define TL_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/buf.h"
#include "core/counter.h"
#include "core/error.h"
#include "core/record.h"
#include "core/reject.h"

#define TL_SUMMARY_MAX_KEYS 8
#define TL_SUMMARY_MAX_QUANTILES 32

struct tl_summary_opts {
    const char *by[TL_SUMMARY_MAX_KEYS]; /* tag names */
    int nby;
    double q[TL_SUMMARY_MAX_QUANTILES];
    int nq;
    int metrics[TL_M_COUNT];
    int nmetrics;
    uint32_t exact_limit; /* values kept verbatim per group and metric */
    bool approx;          /* sketches everywhere */
    double alpha;         /* sketch accuracy */
    uint32_t max_groups;  /* later keys go to the group `_other`, counted (default 1,000,000) */
};

/* Defaults: by category; the LSST quantiles; wall, cpu, rss, disk, cores,
 * queue, exec, allocated cores and memory. */
void tl_summary_opts_default(struct tl_summary_opts *o);
bool tl_summary_opts_set_metrics(struct tl_summary_opts *o, const char *list, char *err,
                                 size_t errlen);

/* What the summary says about each input. */
struct tl_summary_input {
    const char *path;
    const char *format; /* parser name */
    bool zoneless;      /* its times carry no zone: read as UTC (+ utc_offset) */
    const char *codec;  /* plain, gzip, zstd */
    uint64_t lines, records, rejected;
    uint64_t rejected_by[TL_REJ_COUNT];
    uint64_t bytes; /* read (decoded), when the caller counts them */
    uint64_t open_errors; /* run: failed tries to open a followed file (rotated into one it cannot read) */
    uint64_t gaps, gap_bytes; /* run: rotated content not found or not decodable, bytes known lost */
    const struct tl_counter *counters; /* the parser's own (core/counter.h) */
    size_t ncounters;
    const char *error; /* set when the input could not be opened or decoded */
};

/* The sum over inputs of the parser counter `name` (0 when none has it). */
uint64_t tl_summary_counter(const struct tl_summary_input *in, size_t n, const char *name);
/* What `n` LSST quanta with a process-wide max RSS mean, for a note. */
#define TL_NOTE_PROCESS_RSS                                                                        \
    "%llu quanta ended with the max RSS their process had before they began (ru_maxrss is per "  \
    "process; quanta run in one process share it): for them max_rss_bytes is earlier work's "    \
    "peak, an upper bound of their own"


struct tl_summary;

struct tl_summary *tl_summary_new(const struct tl_summary_opts *opts);
void tl_summary_free(struct tl_summary *s);
/* dst += src (tl_agg_merge): src read apart, as if dst had read it next. */
enum tl_err tl_summary_merge(struct tl_summary *dst, const struct tl_summary *src);
/* Takes TL_REC_TASK and TL_REC_TASK_OPEN records; ignores the rest. */
enum tl_err tl_summary_add(struct tl_summary *s, const struct tl_record *r);

enum tl_summary_format { TL_SUMMARY_TABLE, TL_SUMMARY_CSV, TL_SUMMARY_JSON };

/* v in human units, at most 7 characters: 6.01s 12.3min 1.5h 243ms 1.1GiB;
 * '-' when not finite. */
void tl_summary_human(char *out, size_t cap, double v, enum tl_unit unit);

enum tl_err tl_summary_write(struct tl_summary *s, enum tl_summary_format fmt,
                             const struct tl_summary_input *inputs, size_t ninputs, FILE *out);

/* ---- the summary as data, for readers that draw it (the report): the
 * same groups, counts and sketches tl_summary_write prints. */
struct tl_agg_group;
struct tl_sketch;
/* The groups in the order tl_summary_write prints them, their results and
 * exit codes sorted as it prints them; *out is malloc'ed (free it), the
 * groups borrowed until the next add or free. 0 when empty or out of memory. */
size_t tl_summary_groups(struct tl_summary *s, struct tl_agg_group ***out);
/* The value of a grouping tag ("category") of g, whole (in scratch when it
 * must be decoded): NULL when absent, or when the summary is not grouped by
 * it. */
const char *tl_summary_group_tag(const struct tl_summary *s, const struct tl_agg_group *g,
                                 const char *tag, struct tl_buf *scratch);
/* g's sketch of metric m (its count, sum, quantiles); NULL when m is not
 * one of the summary's metrics. */
struct tl_sketch *tl_summary_sketch(const struct tl_summary *s, const struct tl_agg_group *g,
                                    enum tl_metric m);
/* The glossary's wall-hours: the sum of g's wall times, in hours. */
double tl_summary_runtime_hours(const struct tl_agg_group *g);
/* The glossary's core-hours: allocated cores x wall time, summed, in hours
 * (tasks that record both). */
double tl_summary_core_hours(const struct tl_agg_group *g);

#endif
