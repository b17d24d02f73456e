/* The point: what tasklens emits for a store, whatever the store.
 *
 * A point is a measurement, tags (name -> string), fields (name -> float,
 * integer, boolean or string) and a time in ns: the shape of the schema in
 * shared/DESIGN.md. The pipeline (pipeline/output.c) and the insight
 * commands build points; each sink's encoder (sinks/codec.h) turns them into
 * its own format -- line protocol for the file and InfluxDB sinks,
 * remote-write series for the prometheus sink -- so no sink reads another's
 * output and no output knows a store.
 *
 * The builders here hold the schema: which tags and fields a task, a
 * workflow event, a window's quantiles, its histogram buckets and the
 * self-metrics carry, in which order. A point borrows its strings (from the
 * record, the aggregator, or the scratch it is given); an empty or NULL tag
 * value means "no such tag" and every encoder leaves it out, as it leaves
 * out a float that is not finite.
 *
 * Tag keys and values may come from an input (an LSST data id's keys, a
 * category): every encoder quotes them its destination's way. Field keys
 * and measurements are always tasklens's own names (the metrics' and the
 * builders' literals), never from an input, and are written as they are. */
#ifndef TL_CORE_POINT_H
#define TL_CORE_POINT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/aggregate.h"
#include "core/buf.h"
#include "core/glossary.h"
#include "core/record.h"

enum tl_field_type { TL_FIELD_FLOAT, TL_FIELD_INT, TL_FIELD_BOOL, TL_FIELD_STRING };

struct tl_point_tag {
    const char *key, *value;
};

struct tl_point_field {
    const char *key;
    enum tl_field_type type;
    union {
        double f;
        int64_t i;
        bool b;
        const char *s;
    } v;
};

/* A task point's tags: five of its own, the record's extra ones, retried,
 * cause and failed; its fields: every metric, four integers, a key, final. */
#define TL_POINT_MAX_TAGS (TL_MAX_EXTRA_TAGS + 12)
#define TL_POINT_MAX_FIELDS (TL_M_COUNT + 8)

struct tl_point {
    const char *measurement;
    int ntags, nfields;
    int64_t time_ns;
    struct tl_point_tag tags[TL_POINT_MAX_TAGS];
    struct tl_point_field fields[TL_POINT_MAX_FIELDS];
};

/* Building any point: start, then tags and fields in order (past the
 * limits they are dropped: the builders here never reach them). */
void tl_point_start(struct tl_point *p, const char *measurement, int64_t time_ns);
void tl_point_tag(struct tl_point *p, const char *key, const char *value);
void tl_point_float(struct tl_point *p, const char *key, double v);
void tl_point_int(struct tl_point *p, const char *key, int64_t v);
void tl_point_bool(struct tl_point *p, const char *key, bool v);
void tl_point_string(struct tl_point *p, const char *key, const char *v);

/* The measurements the pipeline writes, as a mask (a sink that takes only
 * some says which: tl_point_measurement_mask). */
enum tl_measurement {
    TL_MEAS_TASK,
    TL_MEAS_WORKFLOW,
    TL_MEAS_QUANTILES,
    TL_MEAS_HISTOGRAM,
    TL_MEAS_SELF,
    TL_MEAS_COUNT
};
extern const char *const tl_measurement_name[TL_MEAS_COUNT];
/* The mask of a comma-separated list of measurement names ("task_histogram,
 * tasklens"); names that are none of the pipeline's are left out. */
unsigned tl_point_measurement_mask(const char *list);

/* A task attempt's point (TL_REC_TASK): tags category, host, result,
 * source, workflow, its extra tags, retried=true on an attempt that was
 * not the task's last, cause and failed=true on a failed one (vm: the
 * caller's memo of the last result's verdict); fields: every metric
 * present, task_id, attempt, exit_code, task_key (a string, left out when
 * it holds a newline), final; time tl_point_task_time. */
void tl_point_task(struct tl_point *p, const struct tl_record *r, struct tl_verdict_memo *vm);
/* Its time: the task's end in ns, the last three digits spread by task
 * id and attempt, so two tasks ending in the same microsecond never share
 * a point and a replay lands on the same one. */
static inline int64_t tl_point_task_time(const struct tl_record *r)
{
    uint64_t id = (uint64_t)(r->task_id < 0 ? 0 : r->task_id);
    int64_t off = (int64_t)((id * 31 + (uint64_t)r->attempt) % 1000);
    return r->time_ns - r->time_ns % 1000 + off;
}

/* A workflow event's point (TL_REC_WORKFLOW): tags source, workflow;
 * integer fields tasks_waiting, tasks_running, tasks_done, tasks_failed,
 * workers, float cores. False when r has none of them (no point). */
bool tl_point_workflow(struct tl_point *p, const struct tl_record *r);

/* A window's `task_quantiles` point: the group's tags (by[i] = its i-th key
 * part), metric, scope (when not NULL), window; fields q0 q01 q05 q25 q32
 * q50 q68 q75 q95 q99 q100, count, sum, mean, alpha; time the window's
 * end. parts: scratch for the group's decoded names (nby of them). False
 * for an empty window. */
bool tl_point_quantiles(struct tl_point *p, const struct tl_agg_window *w, const char *const *by,
                        int nby, const char *window_label, const char *scope,
                        struct tl_buf parts[TL_AGG_MAX_KEYS]);

/* A closed window's `task_histogram` points, each handed to each(): one per
 * bucket the window touched (the group's tags, instance, metric, then
 * vmrange "<lo>...<hi>" with bounds fixed by alpha alone, lo and hi the
 * same bounds as numbers, window; float field bucket = its count) and one
 * with the window's count, sum, min and max (no bucket tags). Time: the
 * window's end, + part ns for a late part. A bucket whose bounds no label
 * holds is not handed on: *refused counts it. Returns the points handed on. */
int tl_point_histogram(const struct tl_agg_window *w, const char *const *by, int nby,
                       const char *window_label, const char *instance,
                       struct tl_buf parts[TL_AGG_MAX_KEYS],
                       void (*each)(void *ctx, const struct tl_point *p), void *ctx,
                       uint64_t *refused);

/* The `tasklens` self-metrics point: tags input, instance, source; the
 * counters as integer fields. */
void tl_point_self(struct tl_point *p, const char *instance, const char *source, const char *input,
                   const char *const *names, const uint64_t *values, int n, int64_t time_ns);

#endif
