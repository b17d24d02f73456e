/* The `prometheus` sink: Prometheus remote write, to VictoriaMetrics
 * (/api/v1/write), a Prometheus started with --web.enable-remote-write-receiver
 * (/api/v1/write), Mimir, Thanos Receive and the other stores that take it.
 *
 * It runs on the network engine (sinks/net/) with another wire:
 * the same batches, spool, retries with backoff, backpressure and status,
 * so an outage pauses or spools and never drops. What it sends are the
 * histogram series (task_histogram), the workflow gauges and tasklens's
 * self-metrics, named as VictoriaMetrics names them at its InfluxDB /write
 * (remote_write.h): the PromQL dashboards read either door.
 *
 * Secrets: the bearer token and the password come from the configuration
 * (as ${VAR}) or else from $PROM_TOKEN / $PROM_PASSWORD, never from a flag,
 * and never reach a message. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/path.h"
#include "sinks/net/http.h"
#include "sinks/net/netsink.h"
#include "sinks/net/sender.h"
#include "sinks/prom/remote_write.h"
#include "sinks/sink.h"

struct prom_config {
    const char *url, *measurements;
    struct tl_net_settings net; /* what every network sink has */
};

#define PC(f) offsetof(struct prom_config, f)
static const struct tl_option prom_options[] = {
    {"url", TL_OPT_STRING, NULL,
     "remote-write URL, e.g. http://127.0.0.1:8428/api/v1/write (VictoriaMetrics) or "
     "http://127.0.0.1:9090/api/v1/write (Prometheus)",
     PC(url), "prom-url"},
    {"measurements", TL_OPT_STRING, TL_RW_DEFAULT_MEASUREMENTS,
     "the measurements sent (comma-separated); per-task points do not belong in a Prometheus store",
     PC(measurements)},
    TL_NET_OPTIONS(struct prom_config, "prom-", "prom-", "PROM", "", ", sent as a Bearer token"),
    {0},
};

static enum tl_err prom_validate(const void *config, const char **key, char *err, size_t errlen)
{
    const struct prom_config *c = config;
    if (!c->url || strncmp(c->url, "http", 4)) {
        *key = "url";
        snprintf(err, errlen, "a remote-write URL starting with http:// or https://");
        return TL_ERR_USAGE;
    }
    if (!c->measurements || !*c->measurements || strlen(c->measurements) > 900) {
        *key = "measurements";
        snprintf(err, errlen, "one or more measurements, comma-separated");
        return TL_ERR_USAGE;
    }
    /* each one a measurement the pipeline writes */
    for (const char *p = c->measurements; *p;) {
        size_t n = strcspn(p, ",");
        char one[64];
        snprintf(one, sizeof one, "%.*s", (int)(n < sizeof one ? n : sizeof one - 1), p);
        if (!tl_point_measurement_mask(one)) {
            *key = "measurements";
            snprintf(err, errlen, "'%s' is none of the measurements tasklens writes (task, workflow, "
                     "task_quantiles, task_histogram, tasklens)", one);
            return TL_ERR_USAGE;
        }
        p += n + (p[n] == ',');
    }
    return tl_netsink_validate(&c->net, key, err, errlen);
}

static bool prom_configured(const void *config)
{
    return ((const struct prom_config *)config)->url != NULL;
}

static void sink_cfg(const struct prom_config *k, const struct tl_sink_env *env,
                     struct tl_sender_cfg *sc, const char *spool_dir)
{
    tl_netsink_settings(&k->net, "PROM", env, spool_dir, sc);
    sc->http.url = k->url;
#if TL_WITH_HTTP_SINKS
    sc->http.wire = &tl_wire_remote_write;
#else
    sc->http.wire = NULL; /* no client in this build: opening says so (net/http_off.c) */
#endif
    sc->http.measurements = k->measurements;
}

static enum tl_err prom_open(void **state, const void *config, const struct tl_sink_env *env,
                             char *err, size_t errlen)
{
    const struct prom_config *c = config;
    char dir[4096];
    const char *spool = tl_netsink_spool_dir(c->net.spool_dir, dir, sizeof dir);
    struct tl_sender_cfg sc;
    sink_cfg(c, env, &sc, spool);
    enum tl_err rc = tl_netsink_open(state, &sc, spool, !c->net.spool_dir, env, err, errlen);
    if (!rc) ((struct tl_netsink *)*state)->measurements = tl_point_measurement_mask(c->measurements);
    return rc;
}

/* Reachable and writable: an empty WriteRequest is accepted (and stores
 * nothing); the spool directory writable. */
static void prom_check(const void *config, int i, tl_check_say *say, void *ctx)
{
    const struct prom_config *k = config;
    struct tl_sender_cfg sc;
    char buf[4096];
    const char *spool = tl_netsink_spool_dir(k->net.spool_dir, buf, sizeof buf);
    sink_cfg(k, NULL, &sc, spool);
    sc.http.timeout_ms = (long)(k->net.timeout < 5000 ? k->net.timeout : 5000);
    char err[512];
    struct tl_http *h;
    if (tl_http_new(&sc.http, &h, err, sizeof err)) {
        say(ctx, TL_CHECK_FAIL, "sinks[%d] prometheus: %s", i, err);
        return;
    }
    say(ctx, TL_CHECK_NOTE, "sinks[%d] prometheus %s, %s", i, tl_http_where(h),
        sc.http.token ? "bearer token set" : sc.http.user ? "basic auth" : "no credentials");
    struct tl_http_reply r;
    enum tl_http_result res = tl_http_ping(h, &r);
    if (res == TL_HTTP_OK)
        say(ctx, TL_CHECK_OK, "sinks[%d] prometheus: reachable, a remote write is accepted", i);
    else if (r.status)
        say(ctx, TL_CHECK_FAIL, "sinks[%d] prometheus: a remote write is refused (HTTP %ld): %s", i,
            r.status, r.message[0] ? r.message : "no reason given");
    else
        say(ctx, TL_CHECK_FAIL, "sinks[%d] prometheus: not reachable: %s", i,
            r.message[0] ? r.message : "no answer");
    tl_http_free(h);
    char why[512];
    bool w = tl_dir_writable(spool, true, why, sizeof why);
    say(ctx, w, "sinks[%d] spool_dir %s: %s", i, spool, w ? "writable" : why);
}

const struct tl_sink_type tl_sink_prometheus = {
    .name = "prometheus",
    .help = "Prometheus remote write (VictoriaMetrics, Prometheus, Mimir, ...): the histogram "
            "series, with a disk spool while the store is away",
    .config_size = sizeof(struct prom_config),
    .options = prom_options,
    .validate = prom_validate,
    .configured = prom_configured,
    .open = prom_open,
    .codec = &tl_codec_remote_write,
    .points = tl_netsink_points,
    .measurements = tl_netsink_measurements,
    .flush = tl_netsink_flush,
    .sync = tl_netsink_sync,
    .drain = tl_netsink_drain,
    .held = tl_netsink_held,
    .counters = tl_netsink_counters,
    .finish = tl_netsink_finish,
    .close = tl_netsink_close,
    .check = prom_check,
};
