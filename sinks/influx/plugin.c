/* The `influxdb` sink as a plugin (sink.h): its settings, declared once
 * (YAML keys, the --influx-* flags of `lines` and `run`, --help-config and
 * the manual all come from this table), its checks, and what it says when
 * it closes. The work itself -- batches, HTTP, the spool, the status
 * policy -- is the network engine every network sink runs on (sinks/net/).
 *
 * Secrets: the password and token come from the configuration file (as
 * ${VAR}) or else from $INFLUX_PASSWORD / $INFLUX_TOKEN, never from a flag,
 * and never reach a message. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/path.h"
#include "sinks/influx/wire.h"
#include "sinks/lineproto.h"
#include "sinks/net/http.h"
#include "sinks/net/netsink.h"
#include "sinks/net/sender.h"
#include "sinks/sink.h"

struct influx_config {
    const char *url, *db, *rp, *org, *bucket, *dialect;
    bool gzip, create_db;
    struct tl_net_settings net; /* what every network sink has */
};

#define IC(f) offsetof(struct influx_config, f)
static const struct tl_option influx_options[] = {
    {"url", TL_OPT_STRING, "http://127.0.0.1:8086", "InfluxDB base URL (http or https)", IC(url),
     "influx-url"},
    {"db", TL_OPT_STRING, NULL, "1.x database", IC(db), "influx-db"},
    {"rp", TL_OPT_STRING, NULL, "1.x retention policy", IC(rp), "influx-rp"},
    {"org", TL_OPT_STRING, NULL, "2.x organization", IC(org), "influx-org"},
    {"bucket", TL_OPT_STRING, NULL, "2.x bucket", IC(bucket), "influx-bucket"},
    {"gzip", TL_OPT_BOOL, "true", "gzip request bodies", IC(gzip), "no-gzip"},
    {"dialect", TL_OPT_STRING, "influxdb",
     "influxdb, or victoriametrics for its /write (it reads a doubled backslash in a name as one)",
     IC(dialect), "influx-dialect"},
    {"create_db", TL_OPT_BOOL, "false", "create the 1.x database when missing", IC(create_db),
     "influx-create-db"},
    TL_NET_OPTIONS(struct influx_config, "influx-", "", "INFLUX", " (InfluxDB 1.x)", " (InfluxDB 2.x)"),
    {0},
};


static enum tl_err influx_validate(const void *config, const char **key, char *err, size_t errlen)
{
    const struct influx_config *c = config;
    /* "" is what an unset ${INFLUX_ORG:-} gives: InfluxDB 2.x refuses every
     * request then, so it is refused here, named */
    const char *empty = c->db && !*c->db ? "db" : c->org && !*c->org ? "org"
                        : c->bucket && !*c->bucket ? "bucket" : NULL;
    if (empty) {
        *key = empty;
        snprintf(err, errlen, "`%s` is empty (an unset ${VAR:-} gives that): name the %s", empty,
                 empty[0] == 'd' ? "database" : empty[0] == 'o' ? "organization" : "bucket");
        return TL_ERR_USAGE;
    }
    if (strcmp(c->dialect, "influxdb") && strcmp(c->dialect, "victoriametrics")) {
        *key = "dialect";
        snprintf(err, errlen, "is influxdb or victoriametrics, not '%s'", c->dialect);
        return TL_ERR_USAGE;
    }
    if (!c->db && !(c->org && c->bucket)) {
        *key = NULL;
        snprintf(err, errlen, "name a database (`db`, InfluxDB 1.x) or `org` and `bucket` (2.x)");
        return TL_ERR_USAGE;
    }
    return tl_netsink_validate(&c->net, key, err, errlen);
}

static bool influx_configured(const void *config)
{
    const struct influx_config *c = config;
    return c->db || c->bucket || c->org;
}

/* The settings as the sink takes them. */
static void sink_cfg(const struct influx_config *k, const struct tl_sink_env *env,
                     struct tl_sender_cfg *sc, const char *spool_dir)
{
    tl_netsink_settings(&k->net, "INFLUX", env, spool_dir, sc);
    sc->http.url = k->url;
    sc->http.db = k->db;
    sc->http.rp = k->rp;
    sc->http.org = k->org;
    sc->http.bucket = k->bucket;
    sc->http.wire = k->db ? &tl_wire_influx1 : &tl_wire_influx2; /* a database: 1.x */
    sc->http.gzip = k->gzip;
    sc->create_db = k->create_db;
}

/* A batch with a backslash somewhere: only a name can hold one. */
static bool has_backslash(const char *data, size_t len)
{
    return memchr(data, '\\', len) != NULL;
}

static enum tl_err influx_open(void **state, const void *config, const struct tl_sink_env *env,
                               char *err, size_t errlen)
{
    const struct influx_config *c = config;
    char dir[4096];
    const char *spool = tl_netsink_spool_dir(c->net.spool_dir, dir, sizeof dir);
    struct tl_sender_cfg sc;
    sink_cfg(c, env, &sc, spool);
    enum tl_err rc = tl_netsink_open(state, &sc, spool, !c->net.spool_dir, env, err, errlen);
    if (!rc && !strcmp(c->dialect, "victoriametrics")) {
        ((struct tl_netsink *)*state)->rewrite = tl_lp_victoriametrics;
        ((struct tl_netsink *)*state)->needs_rewrite = has_backslash;
    }
    return rc;
}

/* Reachable, credentials taken (an empty write stores nothing), the spool
 * directory writable. */
static void influx_check(const void *config, int i, tl_check_say *say, void *ctx)
{
    const struct influx_config *k = config;
    struct tl_sender_cfg sc;
    char buf[4096];
    const char *spool = tl_netsink_spool_dir(k->net.spool_dir, buf, sizeof buf);
    sink_cfg(k, NULL, &sc, spool);
    struct tl_http_cfg c = sc.http;
    c.gzip = false;
    c.timeout_ms = (long)(k->net.timeout < 5000 ? k->net.timeout : 5000);
    char err[512];
    struct tl_http *h;
    if (tl_http_new(&c, &h, err, sizeof err)) {
        say(ctx, TL_CHECK_FAIL, "sinks[%d] influxdb: %s", i, err);
        return;
    }
    bool v1 = c.wire == &tl_wire_influx1;
    say(ctx, TL_CHECK_NOTE, "sinks[%d] influxdb %s, %s%s", i, tl_http_where(h),
        v1 ? (c.user ? "user set, password " : "no user") : "token ",
        v1 ? (c.user ? (c.password ? "set" : "NOT set") : "") : (c.token ? "set" : "NOT set"));
    struct tl_http_reply r;
    enum tl_http_result res = tl_http_ping(h, &r);
    if (res != TL_HTTP_OK) {
        say(ctx, TL_CHECK_FAIL, "sinks[%d] influxdb: not reachable: %s", i,
            r.message[0] ? r.message : "no answer");
        tl_http_free(h);
        return;
    }
    say(ctx, TL_CHECK_OK, "sinks[%d] influxdb: reachable", i);
    if (!r.influxdb && !strcmp(k->dialect, "influxdb"))
        say(ctx, TL_CHECK_FAIL, "sinks[%d] influxdb: the server does not say it is InfluxDB (no "
                                "X-Influxdb-Version): for VictoriaMetrics set dialect: victoriametrics, "
                                "or names holding a backslash are dropped there", i);
    else if (r.influxdb && !strcmp(k->dialect, "victoriametrics"))
        say(ctx, TL_CHECK_FAIL, "sinks[%d] influxdb: the server is InfluxDB, not VictoriaMetrics: set "
                                "dialect: influxdb, or names holding a backslash are stored with it doubled", i);
    res = tl_http_write(h, "", 0, &r);
    if (res == TL_HTTP_OK)
        say(ctx, TL_CHECK_OK, "sinks[%d] influxdb: %s %s accepts writes", i,
            v1 ? "database" : "bucket", v1 ? c.db : c.bucket);
    else if (res == TL_HTTP_NOT_FOUND && k->create_db)
        say(ctx, TL_CHECK_OK, "sinks[%d] influxdb: database %s does not exist; create_db makes it",
            i, c.db);
    else
        say(ctx, TL_CHECK_FAIL, "sinks[%d] influxdb: a write is refused (HTTP %ld): %s", i,
            r.status, r.message[0] ? r.message : "no reason given");
    tl_http_free(h);
    char why[512];
    bool w = tl_dir_writable(spool, true, why, sizeof why);
    say(ctx, w, "sinks[%d] spool_dir %s: %s", i, spool, w ? "writable" : why);
}

const struct tl_sink_type tl_sink_influxdb = {
    .name = "influxdb",
    .help = "InfluxDB 1.x or 2.x over HTTP, with a disk spool while it is away",
    .config_size = sizeof(struct influx_config),
    .options = influx_options,
    .validate = influx_validate,
    .configured = influx_configured,
    .open = influx_open,
    .codec = &tl_codec_lineproto,
    .points = tl_netsink_points,
    .flush = tl_netsink_flush,
    .sync = tl_netsink_sync,
    .drain = tl_netsink_drain,
    .held = tl_netsink_held,
    .counters = tl_netsink_counters,
    .finish = tl_netsink_finish,
    .close = tl_netsink_close,
    .check = influx_check,
};
