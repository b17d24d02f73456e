/* The network engine (sinks/net/): sender.h batches encoded points, http.h
 * sends them with retries and backoff, the disk spool keeps what cannot be
 * sent, status rules decide; these are the callbacks every network sink
 * plugin shares (netsink.c). The `influxdb` plugin (sinks/influx/) and the
 * `prometheus` remote-write plugin (sinks/prom/) differ only in their
 * settings, their wire format (wire.h: a const struct of callbacks in
 * their folders) and `check`. */
#ifndef TL_NET_NETSINK_H
#define TL_NET_NETSINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/options.h"
#include "sinks/net/sender.h"
#include "sinks/sink.h"

/* The settings every network sink has, a member `net` of its config,
 * declared once: TL_NET_OPTIONS(CONFIG, FLAG, SPOOL_FLAG, ENV, BASIC, TOKEN)
 * gives their option table entries -- FLAG prefixes the command-line flags
 * of the connection ("influx-", "prom-"), SPOOL_FLAG those of the spool,
 * ENV the variables the secrets default to ($INFLUX_PASSWORD,
 * $INFLUX_TOKEN), BASIC and TOKEN what the sink's help adds to the user and
 * password, and to the token (" (InfluxDB 1.x)"). */
struct tl_net_settings {
    const char *user, *password, *token, *ca_file, *spool_dir;
    bool insecure, spool_drop_oldest;
    long long timeout, batch_lines;
    size_t spool_max, batch_bytes;
};

#define TL_NET_OPTIONS(C, FLAG, SPOOL_FLAG, ENV, BASIC, TOKEN)                                                    \
    {"user", TL_OPT_STRING, NULL, "user, for basic auth" BASIC, offsetof(C, net.user), FLAG "user"},               \
    {"password", TL_OPT_STRING, NULL, "password, for basic auth" BASIC " (use ${VAR}; default $" ENV "_PASSWORD)", \
     offsetof(C, net.password)},                                                                                  \
    {"token", TL_OPT_STRING, NULL, "API token" TOKEN " (use ${VAR}; default $" ENV "_TOKEN)",                     \
     offsetof(C, net.token)},                                                                                     \
    {"ca_file", TL_OPT_STRING, NULL, "CA bundle for https", offsetof(C, net.ca_file), FLAG "ca-file"},           \
    {"insecure", TL_OPT_BOOL, "false", "skip TLS certificate verification", offsetof(C, net.insecure),           \
     FLAG "insecure"},                                                                                            \
    {"timeout", TL_OPT_INT, "10000", "ms per request", offsetof(C, net.timeout), FLAG "timeout"},                 \
    {"batch_lines", TL_OPT_INT, "5000", "points per request at most", offsetof(C, net.batch_lines)},             \
    {"batch_bytes", TL_OPT_SIZE, "1M", "line-protocol bytes per request at most", offsetof(C, net.batch_bytes)},  \
    {"spool_dir", TL_OPT_STRING, NULL,                                                                            \
     "where batches wait while the store is unavailable (none: $XDG_STATE_HOME/tasklens/spool, else "            \
     "~/.local/state/tasklens/spool; never the working directory)",                                               \
     offsetof(C, net.spool_dir), SPOOL_FLAG "spool-dir"},                                                         \
    {"spool_max", TL_OPT_SIZE, "1G", "spool cap; when full, reading pauses", offsetof(C, net.spool_max),         \
     SPOOL_FLAG "spool-max"},                                                                                     \
    {"spool_drop_oldest", TL_OPT_BOOL, "false",                                                                   \
     "when the spool is full, drop the oldest batches (counted) instead of pausing",                             \
     offsetof(C, net.spool_drop_oldest), SPOOL_FLAG "spool-drop-oldest"}

/* The engine's settings from n (the secrets from $ENV_PASSWORD and
 * $ENV_TOKEN when unset), the spool in spool_dir and, with env, what the
 * run says (flush interval, -q, its logger); the wire and the sink's own
 * settings are the caller's to add. */
void tl_netsink_settings(const struct tl_net_settings *n, const char *env_prefix, const struct tl_sink_env *env,
                         const char *spool_dir, struct tl_sender_cfg *sc);

struct tl_netsink {
    struct tl_sender *sink;
    const struct tl_log *log;
    char spool_dir[4096];
    /* The sink's rewrite of a batch before it is sent, when set (the
     * influxdb sink's dialect victoriametrics: names escaped as
     * VictoriaMetrics' /write reads them); needed: whether this batch needs it. */
    void (*rewrite)(struct tl_buf *out, const char *data, size_t len);
    bool (*needs_rewrite)(const char *data, size_t len);
    unsigned measurements; /* the ones it takes (core/point.h's mask); 0: all */
    struct tl_buf rewritten;
};

/* The spool directory: configured, else $XDG_STATE_HOME/tasklens/spool or
 * ~/.local/state/tasklens/spool. */
const char *tl_netsink_spool_dir(const char *configured, char *buf, size_t cap);
/* Opens the sink of sc with its spool in spool_dir (its parents made when
 * it is the default one). */
enum tl_err tl_netsink_open(void **state, const struct tl_sender_cfg *sc, const char *spool_dir,
                            bool default_dir, const struct tl_sink_env *env, char *err,
                            size_t errlen);
/* The settings every network sink has, checked alike: spool_dir not empty,
 * timeout, batch and spool sizes within their ranges (key names the one). */
enum tl_err tl_netsink_validate(const struct tl_net_settings *n, const char **key, char *err, size_t errlen);
enum tl_err tl_netsink_points(void *state, const char *data, size_t len, uint32_t n);
unsigned tl_netsink_measurements(const void *state);
enum tl_err tl_netsink_flush(void *state);
enum tl_err tl_netsink_sync(void *state);
enum tl_err tl_netsink_drain(void *state, long timeout_ms);
uint32_t tl_netsink_held(const void *state);
size_t tl_netsink_counters(const void *state, struct tl_counter *out, size_t max);
int tl_netsink_finish(void *state, long drain_ms);
void tl_netsink_close(void *state);

#endif
