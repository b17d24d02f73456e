/* What the aggregator's files share (private to core/): the state of a
 * tl_agg, and the group helpers aggregate.c defines and aggregate_state.c
 * (its checkpoint form) uses. */
#ifndef TL_CORE_AGGREGATE_IMPL_H
#define TL_CORE_AGGREGATE_IMPL_H

#include "core/aggregate.h"
#include "core/buf.h"
#include "core/intern.h"

#define AGG_MAGIC "TLAG"
#define AGG_VERSION 6 /* 2: samples per group; 3: newest record time; 4: late parts per group;
                         5: coarse windows; 6: failed, causes and core-seconds per group */

struct tl_agg {
    struct tl_agg_opts o;
    tl_agg_window_cb on_window;
    void *ctx;
    struct tl_intern *keys;
    struct tl_agg_group *groups;
    size_t ngroups, cap;
    int64_t window; /* index of the open window, INT64_MIN = none yet */
    int64_t cwindow[TL_AGG_MAX_COARSE]; /* index of each open coarse window, INT64_MIN = none */
    int64_t latest_ns; /* newest record time seen */
    struct tl_verdict_memo verdict; /* the last result's verdict (glossary.h) */
    struct tl_buf keybuf;
    struct tl_agg_counters c;
    uint64_t nomem_values; /* values no sketch had memory for (not kept: said by the caller) */
    /* late parts: records of windows already closed, per (group, window),
     * until tl_agg_flush_late emits them */
    struct late_part {
        size_t group;
        int64_t window;
        struct tl_sketch *s; /* [nmetrics] */
    } late[TL_AGG_LATE_PARTS];
    size_t nlate;
    /* resolved once from o: the field each `by` tag names; for each metric
     * its place in o.metrics (ascending places in place_mask order), the
     * metrics as a presence mask; dup_metrics when one is listed twice */
    enum tl_tag_field by_field[TL_AGG_MAX_KEYS];
    int8_t place[TL_M_COUNT];
    uint64_t metric_mask[TL_MASK_WORDS];
    bool dup_metrics;
    int saved_nmetrics; /* while restoring: the saved state's metrics, a prefix of ours */
    int nkept;          /* windows kept per group for late records: allowed lateness / window */
};

void agg_group_free(struct tl_agg_group *g, int nmetrics, int nkept);
void agg_groups_free(struct tl_agg *a);
struct tl_agg_group *agg_group_new(struct tl_agg *a, int32_t id);
bool agg_count_add(struct tl_count **arr, size_t *n, const char *name, uint64_t by);

#endif
