/* The live picture of a run, for `tasklens top`: per category what runs,
 * waits, finished and failed, how fast, what it costs (wall time and peak
 * memory p50/p95, waste against the allocation), over the whole run or a
 * recent window; the tasks running longest against their category's p95;
 * the last failures; the workflow's workers and cores; a time to done.
 *
 * Whole-run figures come from the run's aggregator (core/aggregate.h, the
 * same one `summary` uses on the same records), so they are summary's.
 * Recent windows come from per-minute sketches kept here: a window of W
 * minutes is the merge of the last W minute sketches (never a quantile of
 * quantiles), exact while each minute holds at most TL_LIVE_EXACT values of
 * a category, within the sketch's alpha beyond. Memory: 60 minutes of two
 * sketches per category, at most TL_LIVE_MAX_CATEGORIES categories (later
 * ones count as `_other`), a fixed ring of failures.
 *
 * Time is the log's: "now" is the latest record time seen (a replayed log
 * reads as it was then), or the wall clock when following a log whose
 * clock is within TL_LIVE_LIVE_S of it. The model prints nothing; cli/
 * draws it. */
#ifndef TL_INSIGHTS_LIVE_H
#define TL_INSIGHTS_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/aggregate.h"
#include "core/record.h"
#include "core/glossary.h"

#define TL_LIVE_MINUTES 60
#define TL_LIVE_EXACT 4096
#define TL_LIVE_MAX_CATEGORIES 1000
#define TL_LIVE_FAILURES 64
#define TL_LIVE_STRAGGLERS 5
#define TL_LIVE_LIVE_S 600

/* The windows a view shows: 5 minutes, 1 hour, the whole run. */
enum tl_live_window { TL_LIVE_5MIN, TL_LIVE_1H, TL_LIVE_RUN, TL_LIVE_NWINDOWS };
const char *tl_live_window_name(enum tl_live_window w);

struct tl_live_row {
    const char *category;
    int64_t running, waiting; /* open now; -1 when the input's format cannot say */
    uint64_t done, failed;    /* attempts that ended in the window: ok / failed (tl_attempt_failed) */
    double per_min;           /* attempts ended per minute in the window; NAN: no time span */
    double wall_p50, wall_p95, rss_p50, rss_p95; /* NAN: no value */
    double mem_waste;  /* 1 - sum(peak memory) / sum(memory allocated), over attempts with both */
    double core_waste; /* 1 - sum(cpu time) / sum(cores allocated x wall time) */
};

struct tl_live_straggler {
    char category[64], host[64];
    int64_t task_id;
    double elapsed_s, p95_s; /* running for; its category's wall p95 over the run */
};

struct tl_live_failure {
    int64_t time_ns, task_id;
    int32_t attempt, exit_code;
    bool has_exit, final; /* final: the task's last attempt (else it was retried) */
    enum tl_cause cause;  /* why it failed, where the input says (docs/glossary.md) */
    char category[64], result[32], host[64];
};

struct tl_live_workflow {
    bool known;          /* a workflow record was seen (workers, cores) */
    int64_t workers;     /* connected, summed over the live workflows */
    double cores_total;  /* of the connected workers; NAN when no record says */
    double cores_in_use; /* allocated to running tasks; NAN when none say */
    double cores_used;   /* the glossary's used cores: CPU time of the tasks that ended in the
                            window / its length; NAN when none measured it */
    int64_t running, waiting; /* open tasks now; -1 unknown */
    double per_min;      /* attempts ended per minute in the window */
    double eta_s;        /* (running + waiting) / per_min; NAN when it cannot be said */
    /* the critical path left: the longest an open task still needs at its
     * category's wall p50 / p95 (run-wide, from the sketches); NAN: none known */
    double path_left_p50_s, path_left_p95_s;
    /* the ETA: max(eta_s, the path left), at p50 and p95 */
    double eta_p50_s, eta_p95_s;
};

struct tl_live;

struct tl_live *tl_live_new(void);
void tl_live_free(struct tl_live *L);
/* Every record of the run (tasks, workflow states; the rest is ignored). */
void tl_live_record(struct tl_live *L, const struct tl_record *r);
/* The wall clock, when the input is followed (0: replaying, log time only). */
void tl_live_set_wall(struct tl_live *L, int64_t wall_ns);
int64_t tl_live_now(const struct tl_live *L);
/* The tasks open now: begin (agg: the run's aggregator, for the categories'
 * wall p95), one call per task (a TL_REC_TASK_OPEN record), end. Between
 * two snapshots the previous one stands. */
void tl_live_open_begin(struct tl_live *L, struct tl_agg *agg);
void tl_live_open_task(void *L, const struct tl_record *r);
/* Before the snapshot, a first pass over the same tasks: their last state
 * changes move the log's clock (a RUNNING line is later than the last task
 * that ended), so every running time is taken against the same now. */
void tl_live_open_clock(void *L, const struct tl_record *r);
void tl_live_open_end(struct tl_live *L, bool source_can_say);

/* The rows (one per category, in first-seen order) for window w; agg is the
 * run's aggregator (whole-run quantiles and counts). Returns the number of
 * rows (at most max); *rows points into L, valid until the next call. */
size_t tl_live_rows(struct tl_live *L, struct tl_agg *agg, enum tl_live_window w,
                    struct tl_live_row **rows);
/* After tl_live_rows: the workflow line and the stragglers (longest running
 * against their category's wall p95; at most TL_LIVE_STRAGGLERS). */
void tl_live_workflow(const struct tl_live *L, enum tl_live_window w, struct tl_live_workflow *out);
size_t tl_live_stragglers(const struct tl_live *L, const struct tl_live_straggler **out);
/* The failures, newest first (at most TL_LIVE_FAILURES), and how many in all. */
/* The run's failed attempts by cause (tl_failure_cause), [TL_CAUSE_COUNT]. */
const uint64_t *tl_live_causes(const struct tl_live *L);
/* The same for the i-th category seen (its name in *name); NULL past the last. */
const uint64_t *tl_live_category_causes(const struct tl_live *L, size_t i, const char **name);
size_t tl_live_failures(struct tl_live *L, const struct tl_live_failure **out, size_t max,
                        uint64_t *total);

#endif
