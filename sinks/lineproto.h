/* InfluxDB line protocol: the codec (sinks/codec.h) of the file and
 * influxdb sinks. The points are built in core/point.c; in line protocol
 * tasklens's schema (shared/DESIGN.md) reads:
 *
 *   task            tags source, workflow, category, host, result
 *                   fields: every present metric (float), task_id, attempt,
 *                   exit_code (integers), task_key (string, when the task
 *                   has one: DASF's Dask key), final (boolean)
 *                   time: task end in ns + a deterministic per-task offset
 *   task_quantiles  tags: the group's (source, category by default), metric,
 *                   window
 *                   fields q0 q01 q05 q25 q32 q50 q68 q75 q95 q99 q100,
 *                   count, sum, mean; time: window end
 *   task_histogram  tags as task_quantiles', plus instance, vmrange
 *                   ("<lo>...<hi>", bounds fixed by alpha) and lo, hi (the
 *                   same bounds as plain numbers, for Flux); field bucket
 *                   (a count, float), or count, sum, min, max for the
 *                   window; time: window end (+ k ns for a late part)
 *   tasklens        tags instance, source; fields: the pipeline's counters
 *
 * Escaping is InfluxDB's: measurement (comma, space), tag keys, tag values and
 * field keys (comma, equals, space), string field values (double quote,
 * backslash). A newline in any name or value, or a name or tag value ending
 * in a backslash, cannot be written (line protocol has no escape for them):
 * the point is refused and counted, never written half or altered. Empty tag values are omitted.
 * Metric fields are always floats and counters always integers, so a field's
 * type never flips within a run (InfluxDB rejects that). No tag or field is
 * ever named `time` (InfluxDB 1.x drops it silently): such a key gets a
 * trailing underscore. */
#ifndef TL_LINEPROTO_H
#define TL_LINEPROTO_H

#include <stdint.h>

#include "core/aggregate.h"
#include "core/buf.h"
#include "core/point.h"
#include "core/record.h"
#include "sinks/codec.h"

#define TL_LP_MEMO 1024 /* entries of 32 bytes */
#define TL_LP_HIST_MEMO 2048 /* entries of 104 bytes */

struct tl_lp_stats {
    uint64_t points;
    uint64_t rejected_unwritable; /* points refused: a newline in a name or value,
                                     or one ending in a backslash */
    uint64_t renamed_time;     /* keys named `time`, written as `time_` */
    /* The encoder's memory, not a count: the text of recent values, by a
     * hash of their bits. In a real Work Queue stream about 60 % of the
     * values were written shortly before (limits, sizes, cores, zeros);
     * those are copied instead of formatted. Zeroed means empty. */
    struct {
        uint64_t bits;
        char s[23];      /* values of up to 23 characters are remembered */
        unsigned char n; /* 0: nothing remembered */
    } memo[TL_LP_MEMO];
    /* The last value of each of the five task tags (category, host,
     * result, source, workflow) when it was shorter than 64 bytes and
     * needed no escaping; zero-padded. Most points repeat them. */
    struct {
        char s[64];
        size_t n; /* 0: nothing remembered */
    } tag_memo[5];
    struct tl_verdict_memo verdict; /* the last result's verdict (glossary.h) */
    /* The bound tags (vmrange, lo, hi) of recent histogram buckets, by
     * bucket id: the same buckets come back window after window, and a
     * label costs two inversions and two %e conversions (~5,000
     * instructions) to make. One alpha per encoder. */
    struct {
        int64_t id;
        unsigned char n; /* 0: nothing remembered */
        char s[95];
    } hist_memo[TL_LP_HIST_MEMO];
};

/* Appends one `task` point for a TL_REC_TASK record; other kinds are
 * ignored (returns 0). Returns 1 when a point was written. The bytes of
 * tl_lp_point(tl_point_task(r)), written straight from the record with the
 * memos above: with tl_lp_histogram, the codec's fast paths (built points
 * and the generic encoder instead: `lines` on a Work Queue log +48 %
 * instructions, on a Kineto trace +20 %; bench/RESULTS.md). */
int tl_lp_task(struct tl_buf *out, const struct tl_record *r, struct tl_lp_stats *st);

/* Appends the `task_histogram` points of a closed window: one per bucket
 * the window touched (tags as task_quantiles' plus instance when given,
 * vmrange="<lo>...<hi>" with bounds fixed by alpha alone, and the same
 * bounds as numbers in lo and hi; field bucket = its count, a float) and one with the window's count, sum, min and max.
 * Returns the points written. */
int tl_lp_histogram(struct tl_buf *out, const struct tl_agg_window *w, const char *const *by,
                    int nby, const char *window_label, const char *instance,
                    struct tl_lp_stats *st);
/* (The bytes of tl_lp_point of each of tl_point_histogram's points, with
 * the bucket labels remembered: a label costs ~5,000 instructions to make.) */

/* Appends any point (core/point.h): its tags escaped, keys named `time`
 * renamed, floats that are not finite and strings with a newline left out;
 * nothing when it has no field. Returns 1 when a point was written. */
int tl_lp_point(struct tl_buf *out, const struct tl_point *p, struct tl_lp_stats *st);

/* The codec (sinks/codec.h) of the file and InfluxDB sinks: tl_lp_point,
 * with tl_lp_task and tl_lp_histogram as its fast paths. */
extern const struct tl_codec tl_codec_lineproto;

/* Appends s escaped as line protocol wants a tag key or value or a field
 * key (comma, equals, space). False when it cannot be written (a newline,
 * or a trailing backslash). */
bool tl_lp_put_escaped(struct tl_buf *b, const char *s);

/* Line protocol as tasklens writes it (InfluxDB's rules: a backslash is
 * itself, `\,` `\ ` `\=` escape) rewritten for VictoriaMetrics' /write,
 * which reads `\\` as one backslash: in each line's measurement and tags,
 * a backslash that escapes nothing is doubled. Both servers then store
 * every name exactly (a name `a\,b` was dropped by VictoriaMetrics 1.79). */
void tl_lp_victoriametrics(struct tl_buf *out, const char *lp, size_t len);

#endif
