/* The network engine's sender: see sender.h. */
#include "core/clock.h"
#include "sinks/net/sender.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "sinks/net/wire.h"

#define MAX_REASONS 16

struct tl_sender {
    struct tl_sender_cfg cfg;
    struct tl_http *http;
    struct tl_spool *spool;
    struct tl_buf batch;
    uint32_t batch_n;
    int64_t batch_started_ms;
    struct tl_buf frame; /* a spooled batch being delivered */
    int64_t next_try_ms; /* no delivery attempt before this (backoff) */
    long backoff_ms;
    int64_t last_sync_ms;
    uint64_t rng;
    char reasons[MAX_REASONS][64]; /* partial-write reasons already logged */
    int nreasons;
    char fatal[1200];
    bool spool_failing; /* the spool's disk refused a write: said once until it mends */
    bool refusal_said;  /* a refusal that needs the operator (fatal[]) was said: once per episode */
    bool spool_full;    /* the spool reached its cap: said once until it takes a batch */
    struct tl_sender_stats st;
};

/* (http.h) here rather than in http.c, which a build without libcurl leaves out */
void tl_http_cfg_default(struct tl_http_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->url = "http://127.0.0.1:8086"; /* the wire: the sink's to set */
    c->gzip = true;
    c->timeout_ms = 10000;
}

void tl_sender_cfg_default(struct tl_sender_cfg *c)
{
    memset(c, 0, sizeof *c);
    tl_http_cfg_default(&c->http);
    c->spool.max_bytes = 1ULL << 30;
    c->spool.segment_bytes = 64ULL << 20;
    c->batch_lines = 5000;
    c->batch_bytes = 1u << 20;
    c->flush_interval_ms = 1000;
    c->backoff_min_ms = 200;
    c->backoff_max_ms = 30000;
}

enum tl_err tl_sender_new(const struct tl_sender_cfg *cfg, struct tl_sender **out,
                               char *err, size_t errlen)
{
    struct tl_sender *s = calloc(1, sizeof *s);
    if (!s) return TL_ERR_NOMEM;
    s->cfg = *cfg;
    enum tl_err rc = tl_http_new(&cfg->http, &s->http, err, errlen);
    struct tl_spool_cfg spool = cfg->spool;
    if (!spool.log) spool.log = cfg->log;
    if (!rc) rc = tl_spool_open(&spool, &s->spool, err, errlen);
    if (rc) {
        tl_sender_free(s);
        return rc;
    }
    s->backoff_ms = cfg->backoff_min_ms;
    s->rng = (uint64_t)tl_mono_ms() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)getpid();
    *out = s;
    return TL_OK;
}

void tl_sender_free(struct tl_sender *s)
{
    if (!s) return;
    tl_http_free(s->http);
    tl_spool_close(s->spool);
    tl_buf_free(&s->batch);
    tl_buf_free(&s->frame);
    free(s);
}

static void backoff(struct tl_sender *s, long retry_after_ms)
{
    /* full jitter: uniform in [backoff/2, backoff], then double */
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    long wait = s->backoff_ms / 2 + (long)(s->rng % (uint64_t)(s->backoff_ms / 2 + 1));
    if (retry_after_ms > wait) wait = retry_after_ms;
    s->next_try_ms = tl_mono_ms() + wait;
    s->backoff_ms *= 2;
    if (s->backoff_ms > s->cfg.backoff_max_ms) s->backoff_ms = s->cfg.backoff_max_ms;
    s->st.retries++;
}

/* The points of a batch, as its wire's codec counts them. */
static uint32_t count_points(const struct tl_sender *s, const char *body, size_t len)
{
    return s->cfg.http.wire->codec->count(body, len);
}

/* What the messages call the server. */
static const char *store(const struct tl_sender *s)
{
    return s->cfg.http.wire->store;
}

/* Logs a partial-write reason the first time it is seen. */
static void note_partial(struct tl_sender *s, const struct tl_http_reply *r)
{
    char key[64];
    snprintf(key, sizeof key, "%.40s", r->message);
    for (int i = 0; i < s->nreasons; i++)
        if (!strcmp(s->reasons[i], key)) return;
    if (s->nreasons < MAX_REASONS) snprintf(s->reasons[s->nreasons++], sizeof key, "%s", key);
    if (s->cfg.quiet) return;
    if (r->dropped)
        tl_log(s->cfg.log, TL_LOG_WARN, "%s refused points (%llu dropped in this batch): %s",
               store(s), (unsigned long long)r->dropped, r->message);
    else /* remote write does not say how many */
        tl_log(s->cfg.log, TL_LOG_WARN, "%s refused some points of a batch: %s", store(s),
               r->message);
}

enum send_outcome { SENT, RETRY_LATER, NEEDS_OPERATOR };

static enum send_outcome send_batch(struct tl_sender *s, const char *body, size_t len,
                                    int depth);

/* A batch InfluxDB took in part: the refused points are counted, the rest acknowledged. */
static enum send_outcome count_partial(struct tl_sender *s, const struct tl_http_reply *r,
                                       uint32_t n)
{
    uint64_t dropped = r->dropped && r->dropped <= n ? r->dropped : 1;
    s->st.batches_sent++;
    s->st.points_dropped += dropped;
    s->st.points_acked += n - dropped;
    note_partial(s, r);
    return SENT;
}

/* Sends a batch as two halves split at the point boundary nearest the
 * middle (the caller has checked it holds at least two points). */
static enum send_outcome send_halves(struct tl_sender *s, const char *body, size_t len,
                                     int depth)
{
    size_t first = s->cfg.http.wire->codec->split(body, len);
    s->st.batches_split++;
    enum send_outcome a = send_batch(s, body, first, depth + 1);
    if (a != SENT) return a; /* the caller keeps the whole batch: points are idempotent */
    return send_batch(s, body + first, len - first, depth + 1);
}

/* A reply only the operator can mend: the wire's message for it (a
 * database or bucket not found, credentials refused), else the plain one;
 * the batch waits in the spool. */
static enum send_outcome needs_operator(struct tl_sender *s, enum tl_http_result res,
                                        const struct tl_http_reply *r)
{
    const struct tl_wire *w = s->cfg.http.wire;
    if (!w->explain || !w->explain(&s->cfg.http, tl_http_where(s->http), res, r, s->fatal, sizeof s->fatal))
        snprintf(s->fatal, sizeof s->fatal, "%s at %s answered HTTP %ld: %s", store(s),
                 tl_http_where(s->http), r->status, r->message);
    backoff(s, 0);
    return NEEDS_OPERATOR;
}

/* One delivery attempt of a whole batch, splitting on 413 and on a batch
 * refused whole for one line (TL_HTTP_REJECTED: InfluxDB 2.x writes nothing
 * of a batch with a line it cannot parse), halves sent until the refused
 * line is alone; only it is dropped. */
static enum send_outcome send_batch(struct tl_sender *s, const char *body, size_t len,
                                    int depth)
{
    struct tl_http_reply r;
    enum tl_http_result res = tl_http_write(s->http, body, len, &r);
    if (res == TL_HTTP_NOT_FOUND && s->cfg.create_db && s->cfg.http.wire->create_db) {
        struct tl_http_reply cr;
        if (tl_http_create_db(s->http, &cr) == TL_HTTP_OK) res = tl_http_write(s->http, body, len, &r);
    }
    if (res != TL_HTTP_OK) s->st.http_errors++;
    uint32_t n = res == TL_HTTP_OK ? 0 : count_points(s, body, len);
    switch (res) {
    case TL_HTTP_OK:
        s->st.batches_sent++;
        s->st.points_acked += count_points(s, body, len);
        return SENT;
    case TL_HTTP_REJECTED:
        if (n >= 2 && depth <= 40) return send_halves(s, body, len, depth);
        r.dropped = n; /* the refused line alone: dropped and counted */
        return count_partial(s, &r, n);
    case TL_HTTP_PARTIAL:
        return count_partial(s, &r, n);
    case TL_HTTP_BAD_REQUEST:
        return needs_operator(s, res, &r);
    case TL_HTTP_TOO_LARGE:
        if (n < 2 || depth > 20) {
            snprintf(s->fatal, sizeof s->fatal,
                     "%s at %s refuses a single point as too large (413)", store(s),
                     tl_http_where(s->http));
            return NEEDS_OPERATOR;
        }
        return send_halves(s, body, len, depth);
    case TL_HTTP_RETRY:
        if (!s->cfg.quiet && s->st.retries % 10 == 0) {
            if (r.status)
                tl_log(s->cfg.log, TL_LOG_WARN, "%s unavailable (HTTP %ld: %s), spooling; will retry",
                       store(s), r.status, r.message);
            else
                tl_log(s->cfg.log, TL_LOG_WARN, "%s unavailable (%s), spooling; will retry", store(s),
                       r.message);
        }
        backoff(s, r.retry_after_ms);
        return RETRY_LATER;
    case TL_HTTP_NOT_FOUND:
    case TL_HTTP_FATAL:
    default:
        return needs_operator(s, res, &r);
    }
}

/* The spool's disk refused a write (full, EIO): said once per episode; the
 * batch stays with the caller, who pauses reading (nothing is dropped and
 * nothing piles up in memory). */
static enum tl_err spool_refused(struct tl_sender *s)
{
    s->st.spool_write_errors++;
    if (!s->spool_failing) /* said even when quiet: it stops the input */
        tl_log(s->cfg.log, TL_LOG_WARN, "spool cannot take a batch (%s); reading pauses until it "
                                        "can or InfluxDB takes it, nothing is dropped",
                tl_spool_error(s->spool));
    s->spool_failing = true;
    return TL_ERR_LIMIT;
}

static enum tl_err spool_batch(struct tl_sender *s, const char *body, size_t len)
{
    enum tl_err rc = tl_spool_append(s->spool, body, len);
    if (rc == TL_ERR_IO) return spool_refused(s);
    if (rc == TL_ERR_LIMIT) {
        if (!s->spool_full) /* said even when quiet: it stops the input */
            tl_log(s->cfg.log, TL_LOG_WARN, "spool %s is full (%llu bytes held, the next batch %zu "
                   "more, cap %llu); reading pauses until InfluxDB takes some, nothing is dropped",
                    s->cfg.spool.dir, (unsigned long long)tl_spool_stats(s->spool).bytes, len,
                    (unsigned long long)s->cfg.spool.max_bytes);
        s->spool_full = true;
        return rc;
    }
    s->spool_full = false;
    if (!rc && s->spool_failing) {
        s->spool_failing = false;
        tl_log(s->cfg.log, TL_LOG_INFO, "spool writable again");
    }
    if (!rc) s->st.batches_spooled++;
    int64_t t = tl_mono_ms();
    if (!rc && t - s->last_sync_ms >= 1000) { /* fsync at most every second */
        rc = tl_spool_sync(s->spool);
        s->last_sync_ms = t;
        if (rc == TL_ERR_IO) {
            /* appended but not durable: the caller may not count on it, and
             * a checkpoint must not; it is delivered from the spool anyway */
            spool_refused(s);
            rc = TL_OK;
        }
    }
    return rc;
}

/* A refusal that waiting does not mend (the token, the bucket, the org):
 * said when it starts, while `run` goes on spooling, not only at its exit;
 * once per episode. */
static void say_refusal(struct tl_sender *s, enum send_outcome o)
{
    if (o != NEEDS_OPERATOR || s->refusal_said || !s->fatal[0]) return;
    s->refusal_said = true;
    if (!s->cfg.quiet)
        tl_log(s->cfg.log, TL_LOG_ERROR, "%s; the points are kept (spooled) and sent once it is fixed",
               s->fatal);
}

/* A batch went through: a refusal, if one was said, is over (said once). */
static void delivered(struct tl_sender *s)
{
    s->backoff_ms = s->cfg.backoff_min_ms;
    s->fatal[0] = '\0';
    if (!s->refusal_said) return;
    s->refusal_said = false;
    if (!s->cfg.quiet)
        tl_log(s->cfg.log, TL_LOG_INFO, "%s at %s takes the points again; the spooled ones follow",
               store(s), tl_http_where(s->http));
}

/* Delivers spooled frames in order while InfluxDB takes them. */
static void drain_once(struct tl_sender *s)
{
    while (tl_spool_stats(s->spool).frames && tl_mono_ms() >= s->next_try_ms) {
        if (tl_spool_peek(s->spool, &s->frame) != TL_OK) return;
        enum send_outcome o = send_batch(s, s->frame.data, s->frame.len, 0);
        say_refusal(s, o);
        if (o != SENT) return;
        delivered(s);
        tl_spool_pop(s->spool);
    }
}

enum tl_err tl_sender_flush(struct tl_sender *s)
{
    if (!s->batch.len) {
        drain_once(s);
        return TL_OK;
    }
    enum tl_err rc = TL_OK;
    drain_once(s);
    if (tl_spool_stats(s->spool).frames || tl_mono_ms() < s->next_try_ms) {
        rc = spool_batch(s, s->batch.data, s->batch.len); /* keep the order */
    } else {
        enum send_outcome o = send_batch(s, s->batch.data, s->batch.len, 0);
        say_refusal(s, o);
        if (o == SENT) {
            delivered(s);
        } else {
            rc = spool_batch(s, s->batch.data, s->batch.len);
        }
    }
    if (rc == TL_OK) {
        s->batch.len = 0;
        s->batch_n = 0;
    }
    return rc; /* TL_ERR_LIMIT: spool full, the batch is still held here */
}

enum tl_err tl_sender_add(struct tl_sender *s, const char *points, size_t len, uint32_t n)
{
    int64_t t = tl_mono_ms();
    if (!s->batch.len) s->batch_started_ms = t;
    tl_buf_append(&s->batch, points, len);
    if (s->batch.oom) return TL_ERR_NOMEM;
    s->batch_n += n;
    if (s->batch_n >= s->cfg.batch_lines || s->batch.len >= s->cfg.batch_bytes ||
        t - s->batch_started_ms >= s->cfg.flush_interval_ms)
        return tl_sender_flush(s);
    return TL_OK;
}

enum tl_err tl_sender_drain(struct tl_sender *s, long timeout_ms)
{
    int64_t deadline = tl_mono_ms() + timeout_ms;
    int retried_fatal = 0;
    for (;;) {
        if (s->batch.len) tl_sender_flush(s);
        drain_once(s);
        if (!tl_spool_stats(s->spool).frames && !s->batch.len) return TL_OK;
        int64_t t = tl_mono_ms();
        if (t >= deadline) return TL_ERR_LIMIT;
        /* a bad token or a missing bucket does not mend by waiting: one more
         * try after the backoff (so a caller's loop never spins), then return */
        if (s->fatal[0] && retried_fatal++) return TL_ERR_LIMIT;
        int64_t wait = s->next_try_ms - t;
        if (wait > deadline - t) wait = deadline - t;
        if (wait < 10) wait = 10;
        usleep((useconds_t)(wait * 1000));
    }
}

enum tl_err tl_sender_sync(struct tl_sender *s)
{
    s->last_sync_ms = tl_mono_ms();
    return tl_spool_sync(s->spool);
}

struct tl_sender_stats tl_sender_stats(const struct tl_sender *s)
{
    struct tl_sender_stats st = s->st;
    st.spool = tl_spool_stats(s->spool);
    return st;
}

uint32_t tl_sender_held(const struct tl_sender *s)
{
    return s->batch.len ? s->batch_n : 0;
}

const char *tl_sender_fatal(const struct tl_sender *s)
{
    return s->fatal[0] ? s->fatal : NULL;
}
