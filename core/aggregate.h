/* The aggregator: per-group counts and per-(group, metric) sketches.
 *
 * Records are grouped by tags (category by default; workflow, host, ... on
 * request). For each group it keeps task / attempt / open counts, results
 * and exit codes, integrated runtime, and for each metric a cumulative
 * sketch and -- when a window is set -- a tumbling-window sketch over record
 * time. Window boundaries are epoch-aligned multiples of the window length;
 * when a record opens a newer window, every group's closing window is
 * emitted through on_window. Records older than the open window (a log
 * read out of order, two sources at different times) go into late parts of
 * their own window, emitted by tl_agg_flush_late (counted in
 * `late_records`): histogram sums over a range hold every record.
 *
 * Memory is bounded twice: at most max_keys groups (later keys go to the
 * group whose tags are all "_other", counted in overflow_records), and at
 * most exact_budget values kept verbatim across all sketches (a sketch that
 * would pass it gives up its exact values and answers from buckets).
 *
 * The whole state serializes to one zstd-compressed blob and restores from
 * it; checkpoints store it. */
#ifndef TL_AGGREGATE_H
#define TL_AGGREGATE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/glossary.h"
#include "core/record.h"
#include "core/sketch.h"

#define TL_AGG_MAX_KEYS 8
#define TL_AGG_OTHER "_other"
#define TL_AGG_MAX_COARSE 3

struct tl_agg_opts {
    const char *by[TL_AGG_MAX_KEYS]; /* tag names; borrowed */
    int nby;
    int metrics[TL_M_COUNT];
    int nmetrics;
    int64_t window_ns; /* 0: cumulative only */
    /* Coarser windows, each a multiple of window_ns (ascending): every
     * closed window's sketches are merged into the coarse window it falls
     * in, emitted (level 1..ncoarse) when that one closes. What histogram
     * panels over a day or a week read instead of 1,440 or 10,080 windows. */
    int64_t coarse_ns[TL_AGG_MAX_COARSE];
    int ncoarse;
    struct tl_sketch_opts sketch;
    /* How late a record may come and still land in its window's quantiles:
     * the windows of the last allowed_lateness_ns are kept after they are
     * emitted, a late record goes into its kept window, and the window is
     * emitted again whole (requote: the same time, so InfluxDB keeps the
     * new point). Older records are too late for window quantiles (counted;
     * cumulative and histogram sums still hold them). Default 900 s. */
    int64_t allowed_lateness_ns;
    uint32_t max_keys;     /* default 10000 */
    uint64_t exact_budget; /* default 12M values (96 MB) */
};

void tl_agg_opts_default(struct tl_agg_opts *o);

struct tl_count {
    char *name;
    uint64_t n;
};

struct tl_agg_group {
    const char *key; /* tag values, escaped and joined (tl_agg_key_part reads them) */
    uint64_t tasks, attempts, open;
    uint64_t samples; /* resource samples (counters, instants): the group is a series */
    double runtime_s, runtime_c; /* Kahan-compensated sum of wall_time_s */
    double core_s, core_c;       /* the same of allocated cores x wall_time_s (core-hours x 3600) */
    double cpu_s, cpu_c;         /* the same of cpu_time_s (CPU-hours x 3600) */
    /* (the three sums are over this run's tasks: a cached task is an earlier run's) */
    uint64_t failed;             /* tasks whose last attempt failed (tl_attempt_failed) */
    uint64_t failed_attempts;    /* attempts that failed, retries included */
    uint64_t causes[TL_CAUSE_COUNT]; /* failed attempts by tl_failure_cause */
    struct tl_count *results;
    size_t nresults;
    struct tl_count *exits;
    size_t nexits;
    struct tl_sketch *cum; /* [nmetrics] */
    struct tl_sketch *win; /* [nmetrics], NULL without a window */
    bool win_dirty;
    uint64_t late_seq; /* late parts emitted: numbers the next one */
    /* the windows emitted within the allowed lateness, by window index
     * modulo their number: each its index, sketches and whether a late
     * record changed it since */
    struct tl_agg_kept {
        int64_t window;
        struct tl_sketch *s; /* [nmetrics], NULL until first used */
        bool dirty;
    } *kept;
    struct tl_sketch *coarse[TL_AGG_MAX_COARSE]; /* [nmetrics] each, buckets only */
    bool coarse_dirty[TL_AGG_MAX_COARSE];
};

/* One summary of one (group, metric): a closed window, or the cumulative
 * state at a flush (cumulative = true, start_ns = 0, end_ns = the latest
 * record time seen). */
struct tl_agg_window {
    const struct tl_agg_group *group;
    int metric;
    int64_t start_ns, end_ns;
    bool cumulative;
    struct tl_sketch *sketch; /* may be queried (quantile sorts exact values) */
    /* 0: the window itself. k > 0: a late part -- records that came after
     * their window had closed, emitted at the next flush; its buckets add to
     * the window's (histogram points stamped k ns after the window's end:
     * the parts of one window never overwrite each other in InfluxDB, and
     * fall in the window's millisecond for stores that keep milliseconds). */
    uint32_t part;
    /* 0: the window (window_ns); k: the coarse window coarse_ns[k-1] */
    int level;
    /* the window emitted again, whole, with late records in it: for
     * quantile points (the same time replaces the first); histogram sums
     * take the late records from the late parts instead */
    bool requote;
};

typedef void (*tl_agg_window_cb)(void *ctx, const struct tl_agg_window *w);

struct tl_agg;

struct tl_agg *tl_agg_new(const struct tl_agg_opts *o, tl_agg_window_cb on_window, void *ctx);
void tl_agg_free(struct tl_agg *a);
/* Takes TL_REC_TASK (every attempt; metrics from final ones),
 * TL_REC_TASK_OPEN and TL_REC_SAMPLE records (a sample's series is its
 * category, its value the `value` metric); ignores the rest. */
enum tl_err tl_agg_add(struct tl_agg *a, const struct tl_record *r);
/* The record kinds tl_agg_add uses (others are ignored): a command that only
 * aggregates asks its parsers for these alone (struct tl_emit.kinds). */
#define TL_AGG_KINDS (TL_KIND(TL_REC_TASK) | TL_KIND(TL_REC_TASK_OPEN) | TL_KIND(TL_REC_SAMPLE))
/* Emits the open window of every group (end of input, or shutdown). */
void tl_agg_close_window(struct tl_agg *a);
/* Emits the late parts gathered since the last call (at most
 * TL_AGG_LATE_PARTS are held; more emit them early). */
#define TL_AGG_LATE_PARTS 256
/* Windows kept per group for late records, at most (allowed_lateness /
 * window beyond it: the oldest fall out). */
#define TL_AGG_MAX_KEPT 60
void tl_agg_flush_late(struct tl_agg *a);
/* Emits the cumulative summary of every (group, metric) that has values. */
void tl_agg_flush(struct tl_agg *a);

size_t tl_agg_ngroups(const struct tl_agg *a);
struct tl_agg_group *tl_agg_group(struct tl_agg *a, size_t i); /* by insertion */
/* g's tasks the glossary counts apart from this run's (by their last
 * attempt's result): cached, cancelled, library instances. */
struct tl_agg_apart {
    uint64_t cached, cancelled, libraries;
};
struct tl_agg_apart tl_agg_group_apart(const struct tl_agg_group *g);
const struct tl_agg_opts *tl_agg_options(const struct tl_agg *a);
/* The i-th tag value of a group key, whole: the key itself when it is the
 * one value and holds no escape, else decoded into out; NULL when absent. */
const char *tl_agg_key_part(const char *key, int i, struct tl_buf *out);

struct tl_agg_counters {
    uint64_t records, overflow_records, late_records, rejected_values, exact_values;
    uint64_t late_parts; /* late parts emitted */
    uint64_t too_late_records; /* later than the allowed lateness: in no window's quantiles */
    uint64_t requotes;         /* windows emitted again with late records */
};
struct tl_agg_counters tl_agg_counters(const struct tl_agg *a);

enum tl_err tl_agg_serialize(const struct tl_agg *a, struct tl_buf *out);
/* Restores state saved by tl_agg_serialize into a, replacing its groups.
 * TL_ERR_USAGE (a left empty) when the state is intact but was made with
 * other grouping keys, metrics, window or alpha; TL_ERR_CORRUPT when damaged. */
enum tl_err tl_agg_restore(struct tl_agg *a, const uint8_t *p, size_t len);

/* dst += src: groups matched by key (new ones created, within max_keys),
 * counts added, cumulative sketches merged, the newest record time kept.
 * Both need the same grouping keys, metrics and sketch accuracy
 * (else TL_ERR_USAGE). Windows are not merged. Merging the states of
 * disjoint inputs gives what one aggregator fed all of them would hold
 * (sums up to rounding; quantiles exactly, the sketches being mergeable). */
enum tl_err tl_agg_merge(struct tl_agg *dst, const struct tl_agg *src);

#endif
