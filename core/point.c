/* The schema's points, built from records, windows and counters: see
 * point.h. Nothing here formats anything: the encoders in sinks/ do. */
#include "core/point.h"

#include <string.h>

#include "core/sketch.h"

const char *const tl_measurement_name[TL_MEAS_COUNT] = {
    [TL_MEAS_TASK] = "task",
    [TL_MEAS_WORKFLOW] = "workflow",
    [TL_MEAS_QUANTILES] = "task_quantiles",
    [TL_MEAS_HISTOGRAM] = "task_histogram",
    [TL_MEAS_SELF] = "tasklens",
};

unsigned tl_point_measurement_mask(const char *list)
{
    unsigned mask = 0;
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",");
        for (int m = 0; m < TL_MEAS_COUNT; m++)
            if (strlen(tl_measurement_name[m]) == n && !memcmp(p, tl_measurement_name[m], n))
                mask |= 1u << m;
        p += n + (p[n] == ',');
    }
    return mask;
}

void tl_point_start(struct tl_point *p, const char *measurement, int64_t time_ns)
{
    p->measurement = measurement;
    p->ntags = p->nfields = 0;
    p->time_ns = time_ns;
}

void tl_point_tag(struct tl_point *p, const char *key, const char *value)
{
    if (!value || !*value || p->ntags == TL_POINT_MAX_TAGS) return;
    p->tags[p->ntags++] = (struct tl_point_tag){key, value};
}

static struct tl_point_field *next_field(struct tl_point *p, const char *key, enum tl_field_type t)
{
    if (p->nfields == TL_POINT_MAX_FIELDS) return NULL;
    struct tl_point_field *f = &p->fields[p->nfields++];
    f->key = key;
    f->type = t;
    return f;
}

void tl_point_float(struct tl_point *p, const char *key, double v)
{
    struct tl_point_field *f = next_field(p, key, TL_FIELD_FLOAT);
    if (f) f->v.f = v;
}

void tl_point_int(struct tl_point *p, const char *key, int64_t v)
{
    struct tl_point_field *f = next_field(p, key, TL_FIELD_INT);
    if (f) f->v.i = v;
}

void tl_point_bool(struct tl_point *p, const char *key, bool v)
{
    struct tl_point_field *f = next_field(p, key, TL_FIELD_BOOL);
    if (f) f->v.b = v;
}

void tl_point_string(struct tl_point *p, const char *key, const char *v)
{
    struct tl_point_field *f = next_field(p, key, TL_FIELD_STRING);
    if (f) f->v.s = v;
}

void tl_point_task(struct tl_point *p, const struct tl_record *r, struct tl_verdict_memo *vm)
{
    tl_point_start(p, tl_measurement_name[TL_MEAS_TASK], tl_point_task_time(r));
    tl_point_tag(p, "category", r->category);
    tl_point_tag(p, "host", r->host);
    tl_point_tag(p, "result", r->result);
    tl_point_tag(p, "source", r->source);
    tl_point_tag(p, "workflow", r->workflow);
    for (int i = 0; i < r->n_tags; i++) tl_point_tag(p, r->tags[i].key, r->tags[i].value);
    /* retried=true on an attempt that was not its task's last: dashboards
     * keep each task's last attempt by series; a failed attempt's cause and
     * failed=true are what the failure panels select and group by */
    if (!r->final) tl_point_tag(p, "retried", "true");
    if (tl_verdict_of(vm, r) == TL_VERDICT_FAILED) {
        tl_point_tag(p, "cause", tl_cause_name(tl_failure_cause(r)));
        tl_point_tag(p, "failed", "true");
    }
    for (int w = 0; w < TL_MASK_WORDS; w++)
        for (uint64_t bits = r->present[w]; bits; bits &= bits - 1) {
            int m = 64 * w + __builtin_ctzll(bits);
            tl_point_float(p, tl_metric_info[m].name, r->v[m]);
        }
    if (r->task_id >= 0) tl_point_int(p, "task_id", r->task_id);
    tl_point_int(p, "attempt", r->attempt);
    if (r->has_exit_code) tl_point_int(p, "exit_code", r->exit_code);
    if (r->task_key && *r->task_key && !strchr(r->task_key, '\n'))
        tl_point_string(p, "task_key", r->task_key);
    tl_point_bool(p, "final", r->final);
}

bool tl_point_workflow(struct tl_point *p, const struct tl_record *r)
{
    static const struct {
        enum tl_metric m;
        const char *field;
        bool integer;
    } fields[] = {
        {TL_M_TASKS_WAITING, "tasks_waiting", true}, {TL_M_TASKS_RUNNING, "tasks_running", true},
        {TL_M_TASKS_DONE, "tasks_done", true},       {TL_M_TASKS_FAILED, "tasks_failed", true},
        {TL_M_WORKERS, "workers", true},             {TL_M_WORKER_CORES, "cores", false},
    };
    tl_point_start(p, tl_measurement_name[TL_MEAS_WORKFLOW], r->time_ns);
    tl_point_tag(p, "source", r->source);
    tl_point_tag(p, "workflow", r->workflow);
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        if (!tl_record_has(r, fields[i].m)) continue;
        if (fields[i].integer) tl_point_int(p, fields[i].field, (int64_t)r->v[fields[i].m]);
        else tl_point_float(p, fields[i].field, r->v[fields[i].m]);
    }
    return p->nfields > 0;
}

/* The group's tags: by[i] = its i-th key part, each decoded into its own
 * scratch buffer (the point holds them all at once). */
static void group_tags(struct tl_point *p, const struct tl_agg_window *w, const char *const *by,
                       int nby, struct tl_buf parts[TL_AGG_MAX_KEYS])
{
    for (int i = 0; i < nby && i < TL_AGG_MAX_KEYS; i++)
        tl_point_tag(p, by[i], tl_agg_key_part(w->group->key, i, &parts[i]));
}

/* q0 q01 q05 q25 q32 q50 q68 q75 q95 q99 q100: the schema's fixed set */
static const struct {
    const char *name;
    double q;
} quantile_fields[] = {
    {"q0", 0},     {"q01", 0.01}, {"q05", 0.05}, {"q25", 0.25}, {"q32", 0.32}, {"q50", 0.5},
    {"q68", 0.68}, {"q75", 0.75}, {"q95", 0.95}, {"q99", 0.99}, {"q100", 1},
};

bool tl_point_quantiles(struct tl_point *p, const struct tl_agg_window *w, const char *const *by,
                        int nby, const char *window_label, const char *scope,
                        struct tl_buf parts[TL_AGG_MAX_KEYS])
{
    struct tl_sketch *s = w->sketch;
    if (!s->count) return false;
    /* tag keys sorted as InfluxDB prefers: the group's tags, then metric,
     * scope, window (a store sorts them anyway; order only costs it work) */
    tl_point_start(p, tl_measurement_name[TL_MEAS_QUANTILES], w->end_ns);
    group_tags(p, w, by, nby, parts);
    tl_point_tag(p, "metric", tl_metric_info[w->metric].name);
    tl_point_tag(p, "scope", scope);
    tl_point_tag(p, "window", window_label);
    for (size_t i = 0; i < sizeof quantile_fields / sizeof *quantile_fields; i++)
        tl_point_float(p, quantile_fields[i].name, tl_sketch_quantile(s, quantile_fields[i].q));
    tl_point_int(p, "count", (int64_t)s->count);
    tl_point_float(p, "sum", tl_sketch_sum(s));
    tl_point_float(p, "mean", tl_sketch_sum(s) / (double)s->count);
    tl_point_float(p, "alpha", tl_sketch_alpha(s));
    return true;
}

struct bucket_walk {
    struct tl_point *p;
    int base;                 /* the tags before the bucket's */
    const char *window_label;
    void (*each)(void *ctx, const struct tl_point *p);
    void *ctx;
    uint64_t *refused;
    int points;
};

/* One bucket: vmrange "<lo>...<hi>", lo and hi as the label writes them. */
static void bucket_point(void *ctx, const struct tl_sketch_bucket *k)
{
    struct bucket_walk *b = ctx;
    double lo, hi;
    char label[64], lo_s[64], hi_s[64];
    tl_sketch_bucket_range(k, &lo, &hi);
    int n = tl_sketch_range_label(k->s, lo, hi, label, sizeof label);
    const char *dots = n > 0 ? strstr(label, "...") : NULL;
    if (!dots) { /* a bound no label can hold: counted, never half-written */
        (*b->refused)++;
        return;
    }
    size_t lo_len = (size_t)(dots - label);
    memcpy(lo_s, label, lo_len);
    lo_s[lo_len] = '\0';
    strcpy(hi_s, dots + 3);
    struct tl_point *p = b->p;
    p->ntags = b->base;
    p->nfields = 0;
    tl_point_tag(p, "vmrange", label);
    tl_point_tag(p, "lo", lo_s);
    tl_point_tag(p, "hi", hi_s);
    tl_point_tag(p, "window", b->window_label);
    tl_point_float(p, "bucket", (double)k->n); /* a float, as histogramQuantile wants */
    b->each(b->ctx, p);
    b->points++;
}

int tl_point_histogram(const struct tl_agg_window *w, const char *const *by, int nby,
                       const char *window_label, const char *instance,
                       struct tl_buf parts[TL_AGG_MAX_KEYS],
                       void (*each)(void *ctx, const struct tl_point *p), void *ctx,
                       uint64_t *refused)
{
    struct tl_sketch *s = w->sketch;
    if (!s->count) return 0;
    struct tl_point p;
    tl_point_start(&p, tl_measurement_name[TL_MEAS_HISTOGRAM], w->end_ns + (int64_t)w->part);
    group_tags(&p, w, by, nby, parts);
    tl_point_tag(&p, "instance", instance);
    tl_point_tag(&p, "metric", tl_metric_info[w->metric].name);
    struct bucket_walk b = {&p, p.ntags, window_label, each, ctx, refused, 0};
    tl_sketch_each_bucket(s, bucket_point, &b);
    /* the window's count, sum, min and max: p0 and p100 exact, means over any range */
    p.ntags = b.base;
    p.nfields = 0;
    tl_point_tag(&p, "window", window_label);
    tl_point_int(&p, "count", (int64_t)s->count);
    tl_point_float(&p, "sum", tl_sketch_sum(s));
    tl_point_float(&p, "min", s->min);
    tl_point_float(&p, "max", s->max);
    each(ctx, &p);
    return b.points + 1;
}

void tl_point_self(struct tl_point *p, const char *instance, const char *source, const char *input,
                   const char *const *names, const uint64_t *values, int n, int64_t time_ns)
{
    tl_point_start(p, tl_measurement_name[TL_MEAS_SELF], time_ns);
    tl_point_tag(p, "input", input);
    tl_point_tag(p, "instance", instance);
    tl_point_tag(p, "source", source);
    for (int i = 0; i < n; i++) tl_point_int(p, names[i], (int64_t)values[i]);
}
