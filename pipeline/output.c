/* Records and window summaries to the sinks: points encoded once per codec
 * (and set of measurements) in use, records and windows to those that take
 * them. See output.h. */
#include "pipeline/output.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/intern.h"
#include "core/options.h"

#define PASS_BYTES (1 << 20)
#define SELF_SINK_STATS 32 /* sink counters in a self-metrics point, at most */

/* SIGINT, SIGTERM or SIGHUP waiting: `run` blocks them and reads them from a
 * signalfd, so a wait here must give way to them (the sink keeps the batch;
 * the checkpoint never covers it, so nothing is lost on exit). */
static bool stop_pending(void)
{
    sigset_t set;
    if (sigpending(&set)) return false;
    return sigismember(&set, SIGTERM) == 1 || sigismember(&set, SIGINT) == 1 ||
           sigismember(&set, SIGHUP) == 1;
}

/* Its points to one sink; a full spool pauses reading until the sink
 * takes some (backpressure), but never past a stop signal. */
static void pass_points(struct tl_output *o, struct tl_sink *k, const struct tl_output_stream *s, bool force)
{
    const struct tl_sink_type *t = k->type;
    if (!s->buf.len) {
        t->flush(k->state); /* age out the open batch */
        return;
    }
    enum tl_err rc = t->points(k->state, s->buf.data, s->buf.len, s->n);
    while (rc == TL_ERR_LIMIT && t->drain && !o->no_wait && !stop_pending())
        rc = t->drain(k->state, 1000);
    if (rc && rc != TL_ERR_LIMIT) k->failed = true;
    /* a forced pass is a flush tick: send now, not one tick later */
    if (force) t->flush(k->state);
}

/* Whether the points gathered are due to be handed on: 1 MiB of them, or
 * a second since the last pass (a slow stream must not sit in memory; the
 * clock is read every 64 calls). Inline in the per-record path, so a record
 * that is not due costs a compare, not a call. */
static inline bool pass_due(struct tl_output *o)
{
    for (int i = 0; i < o->nstreams; i++)
        if (o->streams[i].buf.len >= PASS_BYTES) return true;
    if (++o->since_clock < 64) return false;
    o->since_clock = 0;
    return tl_mono_ms() - o->last_pass_ms >= 1000;
}

static void pass_now(struct tl_output *o, bool force)
{
    o->last_pass_ms = tl_mono_ms();
    for (int i = 0; i < o->nsinks; i++) {
        struct tl_sink *k = &o->sinks[i];
        if (k->type->points) pass_points(o, k, &o->streams[o->stream_of[i]], force);
        else if (force && k->type->flush(k->state)) k->failed = true;
    }
    for (int i = 0; i < o->nstreams; i++) {
        o->streams[i].buf.len = 0;
        o->streams[i].n = 0;
    }
}

/* ---------------------------------------------------------------- emitting */

static bool wants(const struct tl_output_stream *s, enum tl_measurement m)
{
    return s->measurements >> m & 1;
}

/* A built point into every stream that takes its measurement. */
static void emit_point(struct tl_output *o, enum tl_measurement m, const struct tl_point *p)
{
    for (int i = 0; i < o->nstreams; i++) {
        struct tl_output_stream *s = &o->streams[i];
        if (wants(s, m)) s->n += (uint32_t)s->codec->point(&s->buf, p, s->state);
    }
}

/* A task point: each codec's fast path where it has one, else the point
 * built once. */
static void emit_task(struct tl_output *o, const struct tl_record *r)
{
    bool built = false;
    for (int i = 0; i < o->nstreams; i++) {
        struct tl_output_stream *s = &o->streams[i];
        if (!wants(s, TL_MEAS_TASK)) continue;
        if (s->codec->task) {
            s->n += (uint32_t)s->codec->task(&s->buf, r, s->state);
            continue;
        }
        if (!built) tl_point_task(&o->point, r, &o->verdict);
        built = true;
        s->n += (uint32_t)s->codec->point(&s->buf, &o->point, s->state);
    }
}

static void histogram_point(void *ctx, const struct tl_point *p)
{
    struct tl_output_stream *s = ctx;
    s->n += (uint32_t)s->codec->point(&s->buf, p, s->state);
}

/* A closed window's buckets into every stream that takes them. */
static void emit_histogram(struct tl_output *o, const struct tl_agg_window *w, const char *label)
{
    for (int i = 0; i < o->nstreams; i++) {
        struct tl_output_stream *s = &o->streams[i];
        if (!wants(s, TL_MEAS_HISTOGRAM)) continue;
        if (s->codec->histogram)
            s->n += (uint32_t)s->codec->histogram(&s->buf, w, o->ao.by, o->ao.nby, label, o->instance,
                                                  s->state);
        else
            tl_point_histogram(w, o->ao.by, o->ao.nby, label, o->instance, o->parts, histogram_point, s,
                               &o->refused);
    }
}

/* Records later than the allowed lateness: said the first time, with how
 * to keep them (the count is in the self-metrics). */
static void say_too_late(struct tl_output *o)
{
    uint64_t n = tl_agg_counters(o->agg).too_late_records;
    if (!n || o->too_late_said) return;
    o->too_late_said = true;
    tl_log(o->log, TL_LOG_WARN, "records came more than %lld s after their window was written: "
           "they count in the cumulative and histogram points, not in their window's quantiles "
           "(self-metric too_late_records; aggregate.allowed_lateness keeps more windows)",
           (long long)(o->ao.allowed_lateness_ns / 1000000000));
}

void tl_output_pass(struct tl_output *o, bool force)
{
    /* a flush tick also writes the late parts: what a checkpoint covers is
     * then written, and the aggregator's saved state holds none */
    if (force && o->agg) {
        tl_agg_flush_late(o->agg);
        say_too_late(o);
    }
    if (force || pass_due(o)) pass_now(o, force);
}

static void window_out(struct tl_output *o, const struct tl_agg_window *w, const char *label,
                       const char *scope)
{
    if (o->encode >> TL_MEAS_QUANTILES & 1 && tl_point_quantiles(&o->point, w, o->ao.by, o->ao.nby, label, scope, o->parts))
        emit_point(o, TL_MEAS_QUANTILES, &o->point);
    /* a requote's late records are in the late parts' buckets already */
    if (o->encode >> TL_MEAS_HISTOGRAM & 1 && o->histograms && !w->cumulative && !w->requote)
        emit_histogram(o, w, label);
    if (o->pass_windows)
        for (int i = 0; i < o->nsinks; i++)
            if (o->sinks[i].type->window)
                o->sinks[i].type->window(o->sinks[i].state, w, &o->ao, label, scope);
    tl_output_pass(o, false);
}

static void on_summary(void *ctx, const struct tl_agg_window *w)
{
    struct tl_output *o = ctx;
    if (w->part || w->level) { /* a late part, a coarse window: only buckets */
        if (o->encode >> TL_MEAS_HISTOGRAM & 1 && o->histograms)
            emit_histogram(o, w, w->level ? o->coarse_label[w->level - 1] : o->window_label);
        tl_output_pass(o, false);
        return;
    }
    window_out(o, w, w->cumulative ? "cumulative" : o->window_label, NULL);
}

enum tl_err tl_output_coarse(struct tl_agg_opts *ao, long window_s, const char *list, bool strict,
                             char *err, size_t errlen)
{
    ao->ncoarse = 0;
    if (!window_s || !list) return TL_OK;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    const char *parts[8];
    int n = *copy ? tl_parse_key_list(copy, parts, 8) : 0;
    long prev = window_s;
    for (int i = 0; i < n; i++) {
        char *end;
        long s = strtol(parts[i], &end, 10);
        bool fits = !*end && s > prev && s % window_s == 0 && ao->ncoarse < TL_AGG_MAX_COARSE;
        if (!fits && strict) {
            snprintf(err, errlen, "histogram window '%s' is not a multiple of the %ld s window larger "
                     "than the one before it (at most %d)", parts[i], window_s, TL_AGG_MAX_COARSE);
            return TL_ERR_USAGE;
        }
        if (!fits) continue;
        ao->coarse_ns[ao->ncoarse++] = s * 1000000000LL;
        prev = s;
    }
    return TL_OK;
}

void tl_output_on_global(void *ctx, const struct tl_agg_window *w)
{
    window_out(ctx, w, "cumulative", "global");
}

enum tl_err tl_output_init(struct tl_output *o, const struct tl_agg_opts *ao, long window_s,
                           const struct tl_log *log)
{
    memset(o, 0, sizeof *o);
    o->log = log;
    o->ao = *ao;
    o->ao.window_ns = window_s * 1000000000LL;
    snprintf(o->window_label, sizeof o->window_label, "%lds", window_s);
    o->agg = tl_agg_new(&o->ao, on_summary, o);
    if (!o->agg) return TL_ERR_USAGE;
    o->ao = *tl_agg_options(o->agg); /* by[] must outlive the aggregator: its copy */
    for (int L = 0; L < o->ao.ncoarse; L++)
        snprintf(o->coarse_label[L], sizeof o->coarse_label[L], "%llds",
                 (long long)(o->ao.coarse_ns[L] / 1000000000LL));
    o->last_pass_ms = tl_mono_ms();
    o->histograms = true;
    return TL_OK;
}

/* The stream of a sink's codec and measurements, made when it is the
 * first such sink. */
static enum tl_err join_stream(struct tl_output *o, const struct tl_sink *k, int *at)
{
    const struct tl_sink_type *t = k->type;
    unsigned m = t->measurements ? t->measurements(k->state) : (1u << TL_MEAS_COUNT) - 1;
    for (int i = 0; i < o->nstreams; i++)
        if (o->streams[i].codec == t->codec && o->streams[i].measurements == m) {
            *at = i;
            return TL_OK;
        }
    struct tl_output_stream *s = &o->streams[o->nstreams];
    *s = (struct tl_output_stream){.codec = t->codec, .measurements = m};
    if (!(s->state = calloc(1, t->codec->state_size))) return TL_ERR_NOMEM;
    *at = o->nstreams++;
    o->encode |= m;
    return TL_OK;
}

/* Points the streams refused, and the last reason. */
static uint64_t refused(const struct tl_output *o, const char **why)
{
    uint64_t n = o->refused;
    *why = o->refused_why;
    for (int i = 0; i < o->nstreams; i++) {
        uint64_t r = o->streams[i].codec->refused(o->streams[i].state);
        if (r) *why = o->streams[i].codec->refused_why;
        n += r;
    }
    return n;
}

enum tl_err tl_output_open_sink(struct tl_output *o, const struct tl_sink_conf *conf,
                                const struct tl_sink_env *env, char *err, size_t errlen)
{
    if (o->nsinks == TL_OUTPUT_MAX_DESTS) {
        snprintf(err, errlen, "more than %d sinks", TL_OUTPUT_MAX_DESTS);
        return TL_ERR_LIMIT;
    }
    struct tl_sink_env e = *env;
    e.window_label = o->window_label;
    struct tl_sink *k = &o->sinks[o->nsinks];
    *k = (struct tl_sink){.type = conf->type};
    enum tl_err rc = conf->type->open(&k->state, conf->config, &e, err, errlen);
    if (rc) return rc;
    if (k->type->points && (rc = join_stream(o, k, &o->stream_of[o->nsinks]))) {
        k->type->close(k->state);
        snprintf(err, errlen, "out of memory for the %s encoder", k->type->codec->name);
        return rc;
    }
    o->nsinks++;
    o->pass_records |= k->type->record != NULL;
    o->pass_windows |= k->type->window != NULL;
    return TL_OK;
}

void tl_output_close_sinks(struct tl_output *o)
{
    for (int i = 0; i < o->nsinks; i++) o->sinks[i].type->close(o->sinks[i].state);
    o->nsinks = 0;
    o->refused = refused(o, &o->refused_why); /* kept past the streams */
    for (int i = 0; i < o->nstreams; i++) {
        o->out_of_memory |= o->streams[i].buf.oom;
        free(o->streams[i].state);
        tl_buf_free(&o->streams[i].buf);
    }
    o->nstreams = 0;
    o->encode = 0;
    o->pass_records = o->pass_windows = false;
}

bool tl_output_hand_over(struct tl_output *o)
{
    tl_output_pass(o, true);
    bool ok = true;
    for (int i = 0; i < o->nsinks; i++) {
        struct tl_sink *k = &o->sinks[i];
        if (k->type->flush(k->state) || k->type->sync(k->state)) ok = false;
    }
    return ok;
}

bool tl_output_sync(struct tl_output *o)
{
    tl_output_pass(o, true);
    bool ok = true;
    for (int i = 0; i < o->nstreams; i++) ok &= !o->streams[i].buf.oom;
    for (int i = 0; i < o->nsinks; i++) {
        struct tl_sink *k = &o->sinks[i];
        /* the open batch is sent (2xx) or spooled; the spool reaches disk */
        if (k->type->flush(k->state) || k->type->sync(k->state)) ok = false;
        if (k->failed) ok = false;
    }
    return ok;
}

size_t tl_output_sink_counters(const struct tl_output *o, struct tl_counter *out, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < o->nsinks; i++) {
        struct tl_counter one[TL_MAX_COUNTERS];
        const struct tl_sink *k = &o->sinks[i];
        size_t m = k->type->counters ? k->type->counters(k->state, one, TL_MAX_COUNTERS) : 0;
        n = tl_counters_merge(out, n, max, one, m);
    }
    return n;
}

uint64_t tl_output_sink_counter(const struct tl_output *o, const char *name)
{
    struct tl_counter c[64];
    return tl_counter_value(c, tl_output_sink_counters(o, c, 64), name);
}

/* The category a task point may carry: its own while fewer than max_keys
 * were seen, else `_other` (said once, counted). */
static const char *series_category(struct tl_output *o, const char *c)
{
    /* tasks of one category come in runs: the last one admitted is compared
     * first (by content: a parser may reuse one buffer for every name) */
    if (o->last_category[0] && !strcmp(c, o->last_category)) return c;
    size_t n = strlen(c);
    if (!o->categories && !(o->categories = tl_intern_new(64u << 20))) return c;
    if (tl_intern_find(o->categories, c, n) >= 0 ||
        (tl_intern_count(o->categories) < o->ao.max_keys && tl_intern(o->categories, c, n) >= 0)) {
        if (n < sizeof o->last_category) memcpy(o->last_category, c, n + 1);
        return c;
    }
    if (!o->other_points++)
        tl_log(o->log, TL_LOG_WARN, "more than %u categories: the task points of later ones are "
                                    "written with category=%s (aggregate.max_keys), so InfluxDB's "
                                    "series stay bounded; counted in the self-metric other_points",
               o->ao.max_keys, TL_AGG_OTHER);
    return TL_AGG_OTHER;
}

/* An LSST quantum's allocation from the BPS requests (requests.h); NULL
 * when r is something else, or there are none. */
static const struct tl_record *with_request(struct tl_output *o, const struct tl_record *r,
                                            struct tl_record *copy)
{
    if (!o->requests || r->kind != TL_REC_TASK || !r->source || strcmp(r->source, "lsst"))
        return NULL;
    *copy = *r;
    tl_requests_apply(o->requests, copy);
    return copy;
}

/* A record's task or workflow point, its category capped. */
static void encode_record(struct tl_output *o, const struct tl_record *r)
{
    if (r->kind == TL_REC_TASK && o->encode & 1u << TL_MEAS_TASK) {
        const char *c = r->category ? series_category(o, r->category) : NULL;
        if (c != r->category) {
            struct tl_record other = *r;
            other.category = c;
            emit_task(o, &other);
        } else {
            emit_task(o, r);
        }
    } else if (r->kind == TL_REC_WORKFLOW && o->encode & 1u << TL_MEAS_WORKFLOW &&
               tl_point_workflow(&o->point, r)) {
        emit_point(o, TL_MEAS_WORKFLOW, &o->point);
    }
}

void tl_output_record(void *ctx, const struct tl_record *r)
{
    struct tl_output *o = ctx;
    struct tl_record copy;
    const struct tl_record *req = with_request(o, r, &copy);
    if (req) r = req;
    if (o->encode) encode_record(o, r);
    if (o->view_record) o->view_record(o->view_ctx, r);
    if (o->pass_records)
        for (int i = 0; i < o->nsinks; i++)
            if (o->sinks[i].type->record) o->sinks[i].type->record(o->sinks[i].state, r);
    enum tl_err rc = tl_agg_add(o->agg, r);
    if (rc && !o->agg_rc) o->agg_rc = rc;
    if (pass_due(o)) pass_now(o, false);
}

void tl_output_self(struct tl_output *o, const char *instance, const struct tl_summary_input *in,
                    uint64_t lag)
{
    const char *names[15 + SELF_SINK_STATS + TL_REJ_COUNT] = {"lines",    "records",    "parse_errors",
                                            "lag",      "bytes_read", "queue_bytes"};
    size_t queued = 0;
    for (int i = 0; i < o->nstreams; i++) queued += o->streams[i].buf.len;
    uint64_t values[15 + SELF_SINK_STATS + TL_REJ_COUNT] = {in->lines, in->records, in->rejected,
                                          lag,       in->bytes,   queued};
    char keys[TL_REJ_COUNT][48];
    int n = 6;
    struct tl_counter ss[SELF_SINK_STATS];
    size_t nss = tl_output_sink_counters(o, ss, SELF_SINK_STATS);
    for (size_t i = 0; i < nss; i++) {
        if (!ss[i].self) continue;
        names[n] = ss[i].name;
        values[n++] = ss[i].value;
    }
    if (in->open_errors) {
        names[n] = "open_errors";
        values[n++] = in->open_errors;
    }
    if (o->other_points) {
        names[n] = "other_points";
        values[n++] = o->other_points;
    }
    struct tl_agg_counters ac = tl_agg_counters(o->agg);
    if (ac.overflow_records) {
        names[n] = "agg_overflow_records";
        values[n++] = ac.overflow_records;
    }
    if (ac.late_records) { /* records after their window closed: written as late parts */
        names[n] = "late_records";
        values[n++] = ac.late_records;
        names[n] = "late_parts";
        values[n++] = ac.late_parts;
        names[n] = "window_requotes"; /* windows written again whole with their late records */
        values[n++] = ac.requotes;
        names[n] = "too_late_records"; /* past the allowed lateness: in no window's quantiles */
        values[n++] = ac.too_late_records;
    }
    if (in->gaps) {
        names[n] = "gaps";
        values[n++] = in->gaps;
        names[n] = "gap_bytes";
        values[n++] = in->gap_bytes;
    }
    for (int rj = 0; rj < TL_REJ_COUNT; rj++) {
        if (!in->rejected_by[rj]) continue;
        snprintf(keys[rj], sizeof keys[rj], "rejected_%s", tl_reject_key((enum tl_reject)rj));
        names[n] = keys[rj];
        values[n++] = in->rejected_by[rj];
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (!(o->encode >> TL_MEAS_SELF & 1)) return;
    tl_point_self(&o->point, instance, in->format, in->path, names, values, n,
                  (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec);
    emit_point(o, TL_MEAS_SELF, &o->point);
}

void tl_output_cumulative(struct tl_output *o)
{
    tl_agg_flush(o->agg);
}

void tl_output_finish(struct tl_output *o)
{
    tl_agg_close_window(o->agg);
    tl_agg_flush(o->agg);
    tl_output_pass(o, true);
}

/* --stats FILE: the sinks' counters summed, as one JSON object. */
static void write_stats(const struct tl_output *o, const char *path)
{
    struct tl_counter st[64];
    size_t n = tl_output_sink_counters(o, st, 64);
    struct tl_buf b = {0};
    tl_buf_putc(&b, '{');
    for (size_t i = 0; i < n; i++)
        tl_buf_printf(&b, "\"%s\":%llu,", st[i].name, (unsigned long long)st[i].value);
    const char *why;
    tl_buf_printf(&b, "\"points_unwritable\":%llu}\n", (unsigned long long)refused(o, &why));
    char err[512];
    if (b.oom || tl_write_atomic(path, b.data, b.len, err, sizeof err))
        tl_log(o->log, TL_LOG_ERROR, "--stats %s", b.oom ? "out of memory" : err);
    tl_buf_free(&b);
}

int tl_output_close(struct tl_output *o, long drain_timeout_ms, const char *stats_path)
{
    int status = 0;
    tl_output_pass(o, true);
    for (int i = 0; i < o->nsinks; i++) {
        struct tl_sink *k = &o->sinks[i];
        status |= k->type->finish(k->state, drain_timeout_ms);
        if (k->failed) status |= TL_OUTPUT_FAILED;
    }
    if (stats_path) write_stats(o, stats_path);
    tl_output_close_sinks(o);
    if (o->refused)
        tl_log(o->log, TL_LOG_WARN, "%llu points refused: %s", (unsigned long long)o->refused,
               o->refused_why ? o->refused_why : "they cannot be written");
    if (o->agg_rc) {
        tl_log(o->log, TL_LOG_ERROR, "%s", tl_strerror(o->agg_rc));
        status |= TL_OUTPUT_FAILED;
    }
    if (o->out_of_memory) {
        tl_log(o->log, TL_LOG_ERROR, "out of memory for the output");
        status |= TL_OUTPUT_FAILED;
    }
    tl_agg_free(o->agg);
    tl_intern_free(o->categories);
    tl_requests_free(o->requests);
    o->requests = NULL;
    for (int i = 0; i < TL_AGG_MAX_KEYS; i++) tl_buf_free(&o->parts[i]);
    return status;
}
