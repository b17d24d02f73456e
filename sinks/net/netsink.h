/* The network engine (sinks/net/): sink.h batches line protocol, http.h
 * sends it with retries and backoff, the disk spool keeps what cannot be
 * sent, status rules decide; these are the callbacks every network sink
 * plugin shares (netsink.c). The `influxdb` plugin (sinks/influx/) and the
 * `prometheus` remote-write plugin (sinks/prom/) differ only in their
 * settings, their wire format (wire.h: a const struct of callbacks in
 * their folders) and `check`. */
#ifndef TL_INFLUX_NETSINK_H
#define TL_INFLUX_NETSINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sinks/net/sink.h"
#include "sinks/sink.h"

struct tl_netsink {
    struct tl_influx_sink *sink;
    const struct tl_log *log;
    char spool_dir[4096];
    bool victoriametrics; /* names escaped as VictoriaMetrics reads them */
    struct tl_buf rewritten;
};

/* The spool directory: configured, else $XDG_STATE_HOME/tasklens/spool or
 * ~/.local/state/tasklens/spool. */
const char *tl_netsink_spool_dir(const char *configured, char *buf, size_t cap);
/* Opens the sink of sc with its spool in spool_dir (its parents made when
 * it is the default one). */
enum tl_err tl_netsink_open(void **state, const struct tl_influx_sink_cfg *sc, const char *spool_dir,
                            bool default_dir, const struct tl_sink_env *env, char *err,
                            size_t errlen);
/* The settings every network sink has, checked alike: spool_dir not empty,
 * timeout, batch and spool sizes within their ranges (key names the one). */
enum tl_err tl_netsink_validate(const char *spool_dir, long long timeout, long long batch_lines,
                                size_t batch_bytes, size_t spool_max, const char **key, char *err,
                                size_t errlen);
enum tl_err tl_netsink_lines(void *state, const char *lp, size_t len, uint32_t nlines);
enum tl_err tl_netsink_flush(void *state);
enum tl_err tl_netsink_sync(void *state);
enum tl_err tl_netsink_drain(void *state, long timeout_ms);
uint32_t tl_netsink_held(const void *state);
size_t tl_netsink_stats(const void *state, struct tl_sink_stat *out, size_t max);
int tl_netsink_finish(void *state, long drain_ms);
void tl_netsink_close(void *state);

#endif
