/* The network engine's HTTP client (libcurl), one keep-alive connection
 * per client: InfluxDB writes (versions 1 and 2) and Prometheus remote
 * write (version 3).
 *
 *   v1: POST {url}/write?db=&rp=&precision=ns     (user/password: basic auth)
 *   v2: POST {url}/api/v2/write?org=&bucket=&precision=ns
 *       Authorization: Token <token>
 *
 * Bodies are gzip-compressed by default. TLS options (CA file/path,
 * insecure) go straight to libcurl. Credentials never appear in messages:
 * errors name the URL without its query and user info.
 *
 * The program calls curl_global_init once in main, before any client.
 *
 * Every reply is classified so the sink can act on it:
 *   TL_HTTP_OK         2xx: the batch is durable in InfluxDB
 *   TL_HTTP_PARTIAL    400 from 1.x, 422 from 2.x: InfluxDB kept the valid
 *                      points and refused some (field type conflict,
 *                      unparsable line); `dropped` and `message` say what --
 *                      acknowledged, never retried
 *   TL_HTTP_REJECTED   400 from 2.x: a line it cannot parse, and then 2.x
 *                      writes nothing of the batch: split it to keep the rest
 *   TL_HTTP_NOT_FOUND  404: the database / bucket does not exist
 *   TL_HTTP_TOO_LARGE  413: split the batch and send the halves
 *   TL_HTTP_RETRY      429, 5xx, timeout, connection refused or reset;
 *                      `retry_after_ms` when the server said Retry-After
 *   TL_HTTP_FATAL      401, 403 and anything else: configuration to fix */
#ifndef TL_HTTP_H
#define TL_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* version 3: Prometheus remote write (sinks/prom/remote_write.h) to `url`
 * as given (e.g. http://vm:8428/api/v1/write), token as a Bearer token,
 * user/password as basic auth; the body made from the line protocol of the
 * `measurements` listed. 400 is PARTIAL (samples refused: out of order,
 * duplicate), 404 FATAL (a wrong URL). */
#define TL_WIRE_REMOTE_WRITE 3

struct tl_influx_cfg {
    const char *url;
    int version; /* 1, 2 or TL_WIRE_REMOTE_WRITE */
    const char *measurements; /* remote write: the measurements sent */
    const char *db, *rp, *user, *password; /* v1 */
    const char *org, *bucket, *token;      /* v2 */
    const char *ca_file, *ca_path;
    bool insecure;
    bool gzip;
    long timeout_ms;
};

void tl_influx_cfg_default(struct tl_influx_cfg *c);

enum tl_http_result {
    TL_HTTP_OK,
    TL_HTTP_PARTIAL,
    TL_HTTP_REJECTED,   /* 2.x: a line of the batch cannot be parsed (nothing was written) */
    TL_HTTP_BAD_REQUEST, /* 2.x: 400 about the request, not a line (an empty org): keep the data */
    TL_HTTP_NOT_FOUND,
    TL_HTTP_TOO_LARGE,
    TL_HTTP_RETRY,
    TL_HTTP_FATAL,
};

struct tl_http_reply {
    long status; /* 0 when no HTTP answer */
    uint64_t dropped; /* PARTIAL: points InfluxDB said it dropped, if it said */
    long retry_after_ms;
    bool influxdb; /* the server said it is InfluxDB (X-Influxdb-Version); VictoriaMetrics does not */
    char message[512]; /* safe to log: no credentials */
};

struct tl_influx;

enum tl_err tl_influx_new(const struct tl_influx_cfg *cfg, struct tl_influx **out, char *err,
                          size_t errlen);
void tl_influx_free(struct tl_influx *c);
enum tl_http_result tl_influx_write(struct tl_influx *c, const char *body, size_t len,
                                    struct tl_http_reply *reply);
/* v1 only: CREATE DATABASE (for --influx-create-db). */
enum tl_http_result tl_influx_create_db(struct tl_influx *c, struct tl_http_reply *reply);
/* GET /ping (v1) or /health (v2). */
enum tl_http_result tl_influx_ping(struct tl_influx *c, struct tl_http_reply *reply);
/* The endpoint without credentials, for messages. */
const char *tl_influx_where(const struct tl_influx *c);

#endif
