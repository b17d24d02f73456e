/* The engine every network sink runs on (netsink.h): a sink's state
 * around the batching, HTTP and spool machinery of sender.c, its spool
 * directory, the settings every network sink checks alike, its counters and
 * what it says when it closes. The `influxdb` and `prometheus` plugins
 * (sinks/influx/, sinks/prom/) differ in their settings and wire. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/log.h"
#include "sinks/net/netsink.h"

/* The spool's directory: the one configured, else the user's state
 * directory (XDG), never the working directory a command happened to run
 * in. */
const char *tl_netsink_spool_dir(const char *configured, char *buf, size_t cap)
{
    if (configured) return configured;
    const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (state && *state) snprintf(buf, cap, "%s/tasklens/spool", state);
    else snprintf(buf, cap, "%s/.local/state/tasklens/spool", home && *home ? home : "/tmp");
    return buf;
}

/* mkdir -p of the default spool's parents (the spool makes its own). */
static void make_parents(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        mkdir(path, 0750);
        *p = '/';
    }
}

enum tl_err tl_netsink_open(void **state, const struct tl_sender_cfg *sc, const char *spool_dir,
                            bool default_dir, const struct tl_sink_env *env, char *err, size_t errlen)
{
    struct tl_netsink *p = calloc(1, sizeof *p);
    if (!p) return TL_ERR_NOMEM;
    snprintf(p->spool_dir, sizeof p->spool_dir, "%s", spool_dir);
    if (default_dir) make_parents(p->spool_dir);
    struct tl_sender_cfg c = *sc;
    c.spool.dir = p->spool_dir;
    enum tl_err rc = tl_sender_new(&c, &p->sink, err, errlen);
    if (rc) {
        free(p);
        return rc;
    }
    p->log = env->log;
    *state = p;
    return TL_OK;
}

void tl_netsink_settings(const struct tl_net_settings *n, const char *env_prefix, const struct tl_sink_env *env,
                         const char *spool_dir, struct tl_sender_cfg *sc)
{
    char var[64];
    tl_sender_cfg_default(sc);
    sc->http.user = n->user;
    snprintf(var, sizeof var, "%s_PASSWORD", env_prefix);
    sc->http.password = n->password ? n->password : getenv(var);
    snprintf(var, sizeof var, "%s_TOKEN", env_prefix);
    sc->http.token = n->token ? n->token : getenv(var);
    sc->http.ca_file = n->ca_file;
    sc->http.insecure = n->insecure;
    sc->http.timeout_ms = (long)n->timeout;
    sc->batch_lines = (uint32_t)n->batch_lines;
    sc->batch_bytes = (uint32_t)n->batch_bytes;
    sc->spool.dir = spool_dir;
    sc->spool.max_bytes = n->spool_max;
    sc->spool.drop_oldest = n->spool_drop_oldest;
    if (env) {
        sc->flush_interval_ms = env->flush_interval_ms;
        sc->quiet = env->quiet;
        sc->log = env->log;
    }
}

enum tl_err tl_netsink_validate(const struct tl_net_settings *n, const char **key, char *err, size_t errlen)
{
    const char *spool_dir = n->spool_dir;
    long long timeout = n->timeout, batch_lines = n->batch_lines;
    size_t batch_bytes = n->batch_bytes, spool_max = n->spool_max;
    if (spool_dir && !*spool_dir) {
        *key = "spool_dir";
        snprintf(err, errlen, "empty");
        return TL_ERR_USAGE;
    }
    const struct {
        const char *name;
        long long v, min, max;
    } ranges[] = {
        /* a request never waits for ever, and a spool holds at least a batch */
        {"timeout", timeout, 100, 600000},
        {"batch_lines", batch_lines, 1, 1000000},
        {"batch_bytes", (long long)batch_bytes, 1024, 256LL << 20},
        {"spool_max", (long long)spool_max, 64 << 10, 1LL << 50},
    };
    for (size_t j = 0; j < sizeof ranges / sizeof *ranges; j++)
        if (ranges[j].v < ranges[j].min || ranges[j].v > ranges[j].max) {
            *key = ranges[j].name;
            snprintf(err, errlen, "%lld is outside %lld..%lld", ranges[j].v, ranges[j].min,
                     ranges[j].max);
            return TL_ERR_USAGE;
        }
    return TL_OK;
}

unsigned tl_netsink_measurements(const void *state)
{
    unsigned m = ((const struct tl_netsink *)state)->measurements;
    return m ? m : (1u << TL_MEAS_COUNT) - 1;
}

enum tl_err tl_netsink_points(void *state, const char *data, size_t len, uint32_t n)
{
    struct tl_netsink *p = state;
    if (p->rewrite && p->needs_rewrite(data, len)) {
        p->rewritten.len = 0;
        p->rewrite(&p->rewritten, data, len);
        if (p->rewritten.oom) return TL_ERR_NOMEM;
        return tl_sender_add(p->sink, p->rewritten.data, p->rewritten.len, n);
    }
    return tl_sender_add(p->sink, data, len, n);
}

enum tl_err tl_netsink_flush(void *state)
{
    return tl_sender_flush(((struct tl_netsink *)state)->sink);
}

enum tl_err tl_netsink_sync(void *state)
{
    return tl_sender_sync(((struct tl_netsink *)state)->sink);
}

enum tl_err tl_netsink_drain(void *state, long timeout_ms)
{
    return tl_sender_drain(((struct tl_netsink *)state)->sink, timeout_ms);
}

uint32_t tl_netsink_held(const void *state)
{
    return tl_sender_held(((const struct tl_netsink *)state)->sink);
}

size_t tl_netsink_counters(const void *state, struct tl_counter *out, size_t max)
{
    struct tl_sender_stats ss = tl_sender_stats(((const struct tl_netsink *)state)->sink);
    const struct tl_counter all[] = {
        /* the self-metrics fields, in the order the `tasklens` point had them */
        {"spool_bytes", ss.spool.bytes, true},
        {"spool_frames", ss.spool.frames, true},
        {"points_acked", ss.points_acked, true},
        {"points_dropped", ss.points_dropped, true},
        {"http_errors", ss.http_errors, true},
        {"retries", ss.retries, true},
        {"spool_dropped_frames", ss.spool.dropped_frames, true},
        {"spool_corrupt_frames", ss.spool.corrupt_frames, true},
        {"spool_corrupt_bytes", ss.spool.corrupt_bytes, true},
        {"spool_write_errors", ss.spool_write_errors, true},
        {"batches_sent", ss.batches_sent, false},
        {"batches_spooled", ss.batches_spooled, false},
        {"batches_split", ss.batches_split, false},
    };
    size_t n = sizeof all / sizeof *all < max ? sizeof all / sizeof *all : max;
    memcpy(out, all, n * sizeof *out);
    return n;
}

int tl_netsink_finish(void *state, long drain_ms)
{
    struct tl_netsink *p = state;
    int status = 0;
    enum tl_err drc = tl_sender_drain(p->sink, drain_ms);
    tl_sender_sync(p->sink);
    struct tl_sender_stats ss = tl_sender_stats(p->sink);
    uint32_t held = tl_sender_held(p->sink);
    if (held) {
        tl_log(p->log, TL_LOG_ERROR, "%u points were neither sent nor spooled (the spool could not "
                                     "take them); a run with checkpoint_dir reads them again at "
                                     "its next start", held);
        status |= TL_SINK_HELD;
    }
    if (drc) {
        const char *why = tl_sender_fatal(p->sink);
        tl_log(p->log, TL_LOG_WARN, "%llu batches (%llu bytes) remain in the spool %s; they are "
                                    "sent on the next run%s%s",
               (unsigned long long)ss.spool.frames, (unsigned long long)ss.spool.bytes,
               p->spool_dir, why ? ": " : "", why ? why : "");
        status |= TL_SINK_SPOOLED;
    }
    return status;
}

void tl_netsink_close(void *state)
{
    struct tl_netsink *p = state;
    if (!p) return;
    tl_sender_free(p->sink);
    tl_buf_free(&p->rewritten);
    free(p);
}
