/* Line protocol encoder: see lineproto.h.
 *
 * Points are built into the caller's buffer; a point that turns out to be
 * unwritable (a newline somewhere) is rolled back by truncating the buffer
 * to where it started, so a batch never holds half a line. */
#include "lineproto.h"

#include <math.h>
#include <string.h>

#include "numfmt.h"

/* 1: measurement (comma, space); 2: tag key/value, field key (+ equals).
 * False when the text cannot be written: a newline, or a backslash as the
 * last character (line protocol reads it as escaping the separator after
 * it, and has no escape for a backslash itself). */
bool tl_lp_put_escaped(struct tl_buf *b, const char *s, int kind)
{
    /* bit 1: special for a measurement, bit 2: for keys and tag values,
     * bit 4: never writable */
    static const unsigned char special[256] = {
        ['\n'] = 7, ['\r'] = 7, [','] = 3, [' '] = 3, ['='] = 2, ['\\'] = 0, [0] = 7,
    };
    const unsigned char mask = (unsigned char)(kind == 2 ? 2 : 1) | 4;
    const char *start = s;
    for (;;) {
        const char *run = s;
        while (!(special[(unsigned char)*s] & mask)) s++;
        tl_buf_append(b, run, (size_t)(s - run));
        char c = *s;
        if (c == '\0') break;
        if (c == '\n' || c == '\r') return false;
        tl_buf_putc(b, '\\');
        tl_buf_putc(b, c);
        s++;
    }
    return !(s > start && s[-1] == '\\');
}

static bool put_key(struct tl_buf *b, const char *k, struct tl_lp_stats *st)
{
    if (!strcmp(k, "time")) {
        st->renamed_time++;
        tl_buf_puts(b, "time_");
        return true;
    }
    return tl_lp_put_escaped(b, k, 2);
}

static bool put_tag(struct tl_buf *b, const char *k, const char *v, struct tl_lp_stats *st)
{
    if (!v || !*v) return true; /* empty tag values are omitted */
    tl_buf_putc(b, ',');
    return put_key(b, k, st) && (tl_buf_putc(b, '='), tl_lp_put_escaped(b, v, 2));
}

/* k: one of our own names (nothing to escape). No 'i' after the number:
 * InfluxDB reads it as a float. */
static void put_float_field_n(struct tl_buf *b, bool *first, const char *k, size_t klen, double v)
{
    if (!tl_buf_room(b, klen + 2 + 40)) return;
    char *p = b->data + b->len;
    *p++ = *first ? ' ' : ',';
    *first = false;
    memcpy(p, k, klen);
    p += klen;
    *p++ = '=';
    p += tl_fmt_double(p, 40, v);
    b->len = (size_t)(p - b->data);
}

static void put_float_field(struct tl_buf *b, bool *first, const char *k, double v)
{
    put_float_field_n(b, first, k, strlen(k), v);
}

static void put_int_field(struct tl_buf *b, bool *first, const char *k, int64_t v)
{
    tl_buf_putc(b, *first ? ' ' : ',');
    *first = false;
    tl_buf_puts(b, k);
    tl_buf_putc(b, '=');
    tl_buf_put_i64(b, v);
    tl_buf_putc(b, 'i');
}

int64_t tl_lp_task_time(const struct tl_record *r)
{
    /* Times from µs sources leave the last three ns digits free: spread
     * tasks over them by id and attempt, so two tasks ending in the same
     * µs never share a timestamp, and a replay lands on the same point. */
    uint64_t id = (uint64_t)(r->task_id < 0 ? 0 : r->task_id);
    int64_t off = (int64_t)((id * 31 + (uint64_t)r->attempt) % 1000);
    return r->time_ns - r->time_ns % 1000 + off;
}

int tl_lp_task(struct tl_buf *b, const struct tl_record *r, struct tl_lp_stats *st)
{
    if (r->kind != TL_REC_TASK) return 0;
    size_t start = b->len;
    bool ok = true;
    tl_buf_puts(b, "task");
    ok = ok && put_tag(b, "category", r->category, st);
    ok = ok && put_tag(b, "host", r->host, st);
    ok = ok && put_tag(b, "result", r->result, st);
    ok = ok && put_tag(b, "source", r->source, st);
    ok = ok && put_tag(b, "workflow", r->workflow, st);
    for (int i = 0; ok && i < r->n_tags; i++) ok = put_tag(b, r->tags[i].key, r->tags[i].value, st);
    if (!ok) {
        b->len = start;
        st->rejected_unwritable++;
        return 0;
    }
    bool first = true;
    for (int m = 0; m < TL_M_COUNT; m++)
        if (tl_record_has(r, (enum tl_metric)m) && isfinite(r->v[m]))
            put_float_field_n(b, &first, tl_metric_info[m].name, tl_metric_info[m].name_len,
                              r->v[m]);
    if (r->task_id >= 0) put_int_field(b, &first, "task_id", r->task_id);
    put_int_field(b, &first, "attempt", r->attempt);
    if (r->has_exit_code) put_int_field(b, &first, "exit_code", r->exit_code);
    tl_buf_puts(b, r->final ? ",final=true" : ",final=false");
    tl_buf_putc(b, ' ');
    tl_buf_put_i64(b, tl_lp_task_time(r));
    tl_buf_putc(b, '\n');
    st->points++;
    return 1;
}

/* q0 q01 q05 q25 q32 q50 q68 q75 q95 q99 q100: the schema's fixed set */
static const struct {
    const char *name;
    double q;
} quantile_fields[] = {
    {"q0", 0},     {"q01", 0.01}, {"q05", 0.05}, {"q25", 0.25}, {"q32", 0.32}, {"q50", 0.5},
    {"q68", 0.68}, {"q75", 0.75}, {"q95", 0.95}, {"q99", 0.99}, {"q100", 1},
};

int tl_lp_quantiles(struct tl_buf *b, const struct tl_agg_window *w, const char *const *by,
                    int nby, const char *window_label, const char *scope,
                    struct tl_lp_stats *st)
{
    struct tl_sketch *s = w->sketch;
    if (!s->count) return 0;
    size_t start = b->len;
    bool ok = true;
    char part[4096];
    tl_buf_puts(b, "task_quantiles");
    /* tag keys sorted as InfluxDB prefers: the group's tags, then metric,
     * source, window (InfluxDB sorts them anyway; order only costs it work) */
    for (int i = 0; ok && i < nby; i++)
        ok = put_tag(b, by[i], tl_agg_key_part(w->group->key, i, part, sizeof part), st);
    ok = ok && put_tag(b, "metric", tl_metric_info[w->metric].name, st);
    if (scope) ok = ok && put_tag(b, "scope", scope, st);
    ok = ok && put_tag(b, "window", window_label, st);
    if (!ok) {
        b->len = start;
        st->rejected_unwritable++;
        return 0;
    }
    bool first = true;
    for (size_t i = 0; i < sizeof quantile_fields / sizeof *quantile_fields; i++)
        put_float_field(b, &first, quantile_fields[i].name,
                        tl_sketch_quantile(s, quantile_fields[i].q));
    put_int_field(b, &first, "count", (int64_t)s->count);
    put_float_field(b, &first, "sum", tl_sketch_sum(s));
    put_float_field(b, &first, "mean", tl_sketch_sum(s) / (double)s->count);
    put_float_field(b, &first, "alpha", tl_sketch_alpha(s));
    tl_buf_printf(b, " %lld\n", (long long)w->end_ns);
    st->points++;
    return 1;
}

int tl_lp_workflow(struct tl_buf *b, const struct tl_record *r, struct tl_lp_stats *st)
{
    if (r->kind != TL_REC_WORKFLOW) return 0;
    size_t start = b->len;
    tl_buf_puts(b, "workflow");
    if (!put_tag(b, "source", r->source, st) || !put_tag(b, "workflow", r->workflow, st)) {
        b->len = start;
        st->rejected_unwritable++;
        return 0;
    }
    static const struct {
        enum tl_metric m;
        const char *field;
        bool integer;
    } fields[] = {
        {TL_M_TASKS_WAITING, "tasks_waiting", true}, {TL_M_TASKS_RUNNING, "tasks_running", true},
        {TL_M_TASKS_DONE, "tasks_done", true},       {TL_M_TASKS_FAILED, "tasks_failed", true},
        {TL_M_WORKERS, "workers", true},             {TL_M_WORKER_CORES, "cores", false},
    };
    bool first = true;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        if (!tl_record_has(r, fields[i].m)) continue;
        if (fields[i].integer) put_int_field(b, &first, fields[i].field, (int64_t)r->v[fields[i].m]);
        else put_float_field(b, &first, fields[i].field, r->v[fields[i].m]);
    }
    if (first) { /* no field: not a point */
        b->len = start;
        return 0;
    }
    tl_buf_putc(b, ' ');
    tl_buf_put_i64(b, r->time_ns);
    tl_buf_putc(b, '\n');
    st->points++;
    return 1;
}

int tl_lp_self(struct tl_buf *b, const char *instance, const char *source, const char *input,
               const char *const *names, const uint64_t *values, int n, int64_t time_ns,
               struct tl_lp_stats *st)
{
    size_t start = b->len;
    tl_buf_puts(b, "tasklens");
    if (!put_tag(b, "input", input, st) || !put_tag(b, "instance", instance, st) ||
        !put_tag(b, "source", source, st) || n < 1) {
        b->len = start;
        st->rejected_unwritable++;
        return 0;
    }
    bool first = true;
    for (int i = 0; i < n; i++) {
        tl_buf_putc(b, first ? ' ' : ',');
        first = false;
        if (!put_key(b, names[i], st)) {
            b->len = start;
            st->rejected_unwritable++;
            return 0;
        }
        tl_buf_putc(b, '=');
        tl_buf_put_i64(b, (int64_t)values[i]);
        tl_buf_putc(b, 'i');
    }
    tl_buf_putc(b, ' ');
    tl_buf_put_i64(b, time_ns);
    tl_buf_putc(b, '\n');
    st->points++;
    return 1;
}
