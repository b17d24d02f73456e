/* Records and window summaries into line protocol, handed to file and
 * InfluxDB destinations. See output.h. */
#include "output.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "intern.h"

#define PASS_BYTES (1 << 20)

int64_t tl_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

void tl_output_pass(struct tl_output *o, bool force)
{
    if (!force && o->buf.len < PASS_BYTES) {
        /* a slow stream must not sit in memory: hand it on at least every
         * second; the clock is read every 64 calls */
        if (++o->since_clock < 64) return;
        o->since_clock = 0;
        if (tl_mono_ms() - o->last_pass_ms < 1000) return;
    }
    o->last_pass_ms = tl_mono_ms();
    for (int i = 0; i < o->ndests; i++) {
        struct tl_output_dest *d = &o->dests[i];
        if (d->sink) {
            if (o->buf.len) {
                enum tl_err rc = tl_influx_sink_add(d->sink, o->buf.data, o->buf.len, o->buf_lines);
                /* spool full or its disk refusing: stop reading until InfluxDB
                 * takes some (backpressure), but never past a stop signal */
                while (rc == TL_ERR_LIMIT && !o->no_wait && !stop_pending())
                    rc = tl_influx_sink_drain(d->sink, 1000);
                if (rc && rc != TL_ERR_LIMIT) d->failed = true;
                /* a forced pass is a flush tick: send now, not one tick later */
                if (force) tl_influx_sink_flush(d->sink);
            } else {
                tl_influx_sink_flush(d->sink); /* age out the open batch */
            }
        } else if (o->buf.len) {
            if (fwrite(o->buf.data, 1, o->buf.len, d->out) != o->buf.len || fflush(d->out))
                d->failed = true;
        }
    }
    o->buf.len = 0;
    o->buf_lines = 0;
}

static void on_summary(void *ctx, const struct tl_agg_window *w)
{
    struct tl_output *o = ctx;
    o->buf_lines += (uint32_t)tl_lp_quantiles(&o->buf, w, o->ao.by, o->ao.nby,
                                              w->cumulative ? "cumulative" : o->window_label,
                                              NULL, &o->st);
    tl_output_pass(o, false);
}

void tl_output_on_global(void *ctx, const struct tl_agg_window *w)
{
    struct tl_output *o = ctx;
    o->buf_lines += (uint32_t)tl_lp_quantiles(&o->buf, w, o->ao.by, o->ao.nby, "cumulative",
                                              "global", &o->st);
    tl_output_pass(o, false);
}

enum tl_err tl_output_init(struct tl_output *o, const struct tl_agg_opts *ao, long window_s)
{
    memset(o, 0, sizeof *o);
    o->ao = *ao;
    o->ao.window_ns = window_s * 1000000000LL;
    snprintf(o->window_label, sizeof o->window_label, "%lds", window_s);
    o->agg = tl_agg_new(&o->ao, on_summary, o);
    if (!o->agg) return TL_ERR_USAGE;
    o->ao = *tl_agg_options(o->agg); /* by[] must outlive the aggregator: its copy */
    o->last_pass_ms = tl_mono_ms();
    return TL_OK;
}

enum tl_err tl_output_add_file(struct tl_output *o, FILE *out, const char *name)
{
    if (o->ndests == TL_OUTPUT_MAX_DESTS) return TL_ERR_LIMIT;
    o->dests[o->ndests++] = (struct tl_output_dest){.out = out, .name = name};
    return TL_OK;
}

enum tl_err tl_output_add_sink(struct tl_output *o, struct tl_influx_sink *sink,
                               const char *spool_dir)
{
    if (o->ndests == TL_OUTPUT_MAX_DESTS) return TL_ERR_LIMIT;
    o->dests[o->ndests++] = (struct tl_output_dest){.sink = sink, .name = spool_dir};
    return TL_OK;
}

bool tl_output_sync(struct tl_output *o)
{
    tl_output_pass(o, true);
    bool ok = !o->buf.oom;
    for (int i = 0; i < o->ndests; i++) {
        struct tl_output_dest *d = &o->dests[i];
        if (d->sink) {
            /* the open batch is sent (2xx) or spooled; the spool reaches disk */
            if (tl_influx_sink_flush(d->sink) || tl_influx_sink_sync(d->sink)) ok = false;
        } else if (fflush(d->out) || (d->out != stdout && fsync(fileno(d->out)))) {
            d->failed = true;
        }
        if (d->failed) ok = false;
    }
    return ok;
}

struct tl_influx_sink_stats tl_output_sink_stats(const struct tl_output *o)
{
    struct tl_influx_sink_stats sum = {0};
    for (int i = 0; i < o->ndests; i++) {
        if (!o->dests[i].sink) continue;
        struct tl_influx_sink_stats s = tl_influx_sink_stats(o->dests[i].sink);
        sum.points_acked += s.points_acked;
        sum.points_dropped += s.points_dropped;
        sum.batches_sent += s.batches_sent;
        sum.batches_spooled += s.batches_spooled;
        sum.batches_split += s.batches_split;
        sum.retries += s.retries;
        sum.http_errors += s.http_errors;
        sum.spool_write_errors += s.spool_write_errors;
        sum.spool.bytes += s.spool.bytes;
        sum.spool.frames += s.spool.frames;
        sum.spool.appended_frames += s.spool.appended_frames;
        sum.spool.drained_frames += s.spool.drained_frames;
        sum.spool.dropped_frames += s.spool.dropped_frames;
        sum.spool.dropped_bytes += s.spool.dropped_bytes;
        sum.spool.corrupt_frames += s.spool.corrupt_frames;
        sum.spool.corrupt_bytes += s.spool.corrupt_bytes;
    }
    return sum;
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
        fprintf(stderr, "tasklens: more than %u categories: the task points of later ones are written "
                        "with category=%s (aggregate.max_keys), so InfluxDB's series stay bounded; "
                        "counted in the self-metric other_points\n",
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

void tl_output_record(void *ctx, const struct tl_record *r)
{
    struct tl_output *o = ctx;
    struct tl_record copy;
    const struct tl_record *req = with_request(o, r, &copy);
    if (req) r = req;
    const char *c = r->kind == TL_REC_TASK && r->category ? series_category(o, r->category) : r->category;
    if (c != r->category) {
        struct tl_record other = *r;
        other.category = c;
        o->buf_lines += (uint32_t)tl_lp_task(&o->buf, &other, &o->st);
    } else {
        o->buf_lines += (uint32_t)tl_lp_task(&o->buf, r, &o->st);
    }
    o->buf_lines += (uint32_t)tl_lp_workflow(&o->buf, r, &o->st);
    enum tl_err rc = tl_agg_add(o->agg, r);
    if (rc && !o->agg_rc) o->agg_rc = rc;
    tl_output_pass(o, false);
}

void tl_output_self(struct tl_output *o, const char *instance, const struct tl_summary_input *in,
                    uint64_t lag)
{
    const char *names[21 + TL_REJ_COUNT] = {"lines",    "records",    "parse_errors",
                                            "lag",      "bytes_read", "queue_bytes"};
    uint64_t values[21 + TL_REJ_COUNT] = {in->lines, in->records, in->rejected,
                                          lag,       in->bytes,   o->buf.len};
    char keys[TL_REJ_COUNT][48];
    int n = 6;
    bool sinks = false;
    for (int i = 0; i < o->ndests; i++) sinks |= o->dests[i].sink != NULL;
    if (sinks) {
        struct tl_influx_sink_stats ss = tl_output_sink_stats(o);
        static const char *const sink_names[] = {"spool_bytes", "spool_frames", "points_acked",
                                                 "points_dropped", "http_errors", "retries",
                                                 "spool_dropped_frames", "spool_corrupt_frames",
                                                 "spool_corrupt_bytes", "spool_write_errors"};
        uint64_t sink_values[] = {ss.spool.bytes, ss.spool.frames, ss.points_acked,
                                  ss.points_dropped, ss.http_errors, ss.retries,
                                  ss.spool.dropped_frames, ss.spool.corrupt_frames,
                                  ss.spool.corrupt_bytes, ss.spool_write_errors};
        _Static_assert(sizeof sink_names / sizeof *sink_names == sizeof sink_values / sizeof *sink_values,
                       "one value per name");
        for (size_t i = 0; i < sizeof sink_names / sizeof *sink_names; i++) {
            names[n] = sink_names[i];
            values[n++] = sink_values[i];
        }
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
    o->buf_lines += (uint32_t)tl_lp_self(&o->buf, instance, in->format, in->path, names, values, n,
                                         (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec, &o->st);
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

static void write_stats(const struct tl_output *o, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    struct tl_influx_sink_stats ss = tl_output_sink_stats(o);
    fprintf(f,
            "{\"points_acked\":%llu,\"points_dropped\":%llu,\"batches_sent\":%llu,"
            "\"batches_spooled\":%llu,\"batches_split\":%llu,\"retries\":%llu,"
            "\"http_errors\":%llu,\"spool_bytes\":%llu,\"spool_frames\":%llu,"
            "\"spool_dropped_frames\":%llu,\"spool_corrupt_frames\":%llu,"
            "\"spool_corrupt_bytes\":%llu,\"spool_write_errors\":%llu,\"points_unwritable\":%llu}\n",
            (unsigned long long)ss.points_acked, (unsigned long long)ss.points_dropped,
            (unsigned long long)ss.batches_sent, (unsigned long long)ss.batches_spooled,
            (unsigned long long)ss.batches_split, (unsigned long long)ss.retries,
            (unsigned long long)ss.http_errors, (unsigned long long)ss.spool.bytes,
            (unsigned long long)ss.spool.frames, (unsigned long long)ss.spool.dropped_frames,
            (unsigned long long)ss.spool.corrupt_frames,
            (unsigned long long)ss.spool.corrupt_bytes, (unsigned long long)ss.spool_write_errors,
            (unsigned long long)o->st.rejected_unwritable);
    fclose(f);
}

int tl_output_close(struct tl_output *o, const char *cmd, long drain_timeout_ms,
                    const char *stats_path)
{
    int status = 0;
    tl_output_pass(o, true);
    for (int i = 0; i < o->ndests; i++) {
        struct tl_output_dest *d = &o->dests[i];
        if (!d->sink) continue;
        enum tl_err drc = tl_influx_sink_drain(d->sink, drain_timeout_ms);
        tl_influx_sink_sync(d->sink);
        struct tl_influx_sink_stats ss = tl_influx_sink_stats(d->sink);
        if (tl_influx_sink_held(d->sink)) {
            fprintf(stderr, "%s: %u points were neither sent nor spooled (the spool could not take "
                            "them); a run with checkpoint_dir reads them again at its next start\n",
                    cmd, tl_influx_sink_held(d->sink));
            status |= TL_OUTPUT_HELD;
        }
        if (drc || d->failed) {
            const char *why = tl_influx_sink_fatal(d->sink);
            fprintf(stderr,
                    "%s: %llu batches (%llu bytes) remain in the spool %s; they are sent on the "
                    "next run%s%s\n",
                    cmd, (unsigned long long)ss.spool.frames, (unsigned long long)ss.spool.bytes,
                    d->name, why ? ": " : "", why ? why : "");
            status |= d->failed ? TL_OUTPUT_FAILED : TL_OUTPUT_SPOOLED;
        }
    }
    if (stats_path) write_stats(o, stats_path);
    for (int i = 0; i < o->ndests; i++) {
        struct tl_output_dest *d = &o->dests[i];
        if (d->sink) {
            tl_influx_sink_free(d->sink);
            continue;
        }
        if (fflush(d->out) || (d->out != stdout && fclose(d->out))) d->failed = true;
        if (d->failed) {
            fprintf(stderr, "%s: writing %s failed\n", cmd, d->name);
            status |= TL_OUTPUT_FAILED;
        }
    }
    if (o->st.rejected_unwritable)
        fprintf(stderr,
                "%s: %llu points refused: a name or value with a newline or a trailing backslash "
                "cannot be written in line protocol\n",
                cmd, (unsigned long long)o->st.rejected_unwritable);
    if (o->agg_rc) {
        fprintf(stderr, "%s: %s\n", cmd, tl_strerror(o->agg_rc));
        status |= TL_OUTPUT_FAILED;
    }
    if (o->buf.oom) {
        fprintf(stderr, "%s: out of memory for the output\n", cmd);
        status |= TL_OUTPUT_FAILED;
    }
    tl_agg_free(o->agg);
    tl_intern_free(o->categories);
    tl_requests_free(o->requests);
    o->requests = NULL;
    tl_buf_free(&o->buf);
    return status;
}
