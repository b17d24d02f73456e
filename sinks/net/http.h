/* The network engine's HTTP client (libcurl), one keep-alive connection
 * per client, speaking the wire format it is given (wire.h): InfluxDB 1.x
 * and 2.x (sinks/influx/wire.c), Prometheus remote write
 * (sinks/prom/remote_write.c). The wire says the URL, headers, body and
 * what a reply means; the client does the rest alike for every store.
 *
 * Bodies are gzip-compressed by default where the wire takes it. TLS options (CA file/path,
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

struct tl_wire;

/* The settings of a client: the URL and TLS every store has; db ... token
 * and measurements are the wires' own (each reads its ones). */
struct tl_http_cfg {
    const char *url;
    const struct tl_wire *wire; /* the sink's: what the store speaks */
    const char *measurements; /* remote write: the measurements sent */
    const char *db, *rp, *user, *password; /* v1 */
    const char *org, *bucket, *token;      /* v2 */
    const char *ca_file, *ca_path;
    bool insecure;
    bool gzip;
    long timeout_ms;
};

void tl_http_cfg_default(struct tl_http_cfg *c);

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

struct tl_http;

enum tl_err tl_http_new(const struct tl_http_cfg *cfg, struct tl_http **out, char *err,
                          size_t errlen);
void tl_http_free(struct tl_http *c);
enum tl_http_result tl_http_write(struct tl_http *c, const char *body, size_t len,
                                    struct tl_http_reply *reply);
/* CREATE DATABASE, where the wire can (wire->create_db: 1.x). */
enum tl_http_result tl_http_create_db(struct tl_http *c, struct tl_http_reply *reply);
/* Whether it is there: GET the wire's ping path, else an empty write. */
enum tl_http_result tl_http_ping(struct tl_http *c, struct tl_http_reply *reply);
/* The endpoint without credentials, for messages. */
const char *tl_http_where(const struct tl_http *c);

#endif
