/* A wire format: how a batch of encoded points (its codec's: sinks/codec.h)
 * becomes an HTTP request and what the replies mean. The engine (http.c, sender.c) calls only these; each
 * network sink's folder holds its own -- sinks/influx/wire.c (InfluxDB 1.x
 * and 2.x), sinks/prom/remote_write.c (Prometheus remote write) -- so no
 * shared code asks which store it talks to. */
#ifndef TL_NET_WIRE_H
#define TL_NET_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/error.h"
#include "sinks/codec.h"
#include "sinks/net/http.h"

struct tl_wire {
    const char *prefix; /* of a settings error: "influx", "prometheus" */
    const char *store;  /* what messages call the server: "InfluxDB", "the remote-write store" */
    /* What its batches hold: the engine counts points and cuts batches by it. */
    const struct tl_codec *codec;
    /* The settings it needs beyond a URL, before anything opens (err
     * without the prefix). NULL: none. */
    enum tl_err (*check)(const struct tl_http_cfg *cfg, char *err, size_t errlen);
    /* The write URL: the URL as given (whole_url: it may hold a query), or
     * the base -- scheme://host:port/path, no user info, no trailing '/' --
     * with write_path appended (query values through tl_wire_put_escaped). */
    bool whole_url;
    void (*write_path)(const struct tl_http_cfg *cfg, struct tl_buf *url);
    /* GET base + ping_path answers whether it is there; NULL: `check` posts
     * an empty write instead. ping_auth: with the headers (a token). */
    const char *ping_path;
    bool ping_auth;
    /* After "scheme://host:port" in messages: " (database d)". */
    void (*where)(const struct tl_http_cfg *cfg, struct tl_buf *out);
    /* The request's fixed headers (NULL-terminated); the token as
     * "Authorization: <auth_scheme> <token>" when one is set; gzip: the
     * body compressed when the sink's gzip is on. */
    const char *const *headers;
    const char *auth_scheme;
    bool gzip;
    /* The body of a batch, when it is not the batch as it is: into out
     * (scratch is the wire's to use); *empty when nothing of the batch is
     * for this store (the engine then sends nothing and acknowledges it). */
    enum tl_err (*encode)(const struct tl_http_cfg *cfg, const char *batch, size_t len, struct tl_buf *scratch,
                          struct tl_buf *out, bool *empty);
    /* What a reply other than 2xx means (message: its text, credentials-free). */
    enum tl_http_result (*classify)(long status, const char *message);
    /* A 404 answered with CREATE DATABASE when the sink asks (1.x). */
    bool create_db;
    /* The operator's message for a reply that needs them (not found, a bad
     * request, credentials refused) into out; false: the engine's plain
     * "answered HTTP N". */
    bool (*explain)(const struct tl_http_cfg *cfg, const char *where, enum tl_http_result res,
                    const struct tl_http_reply *r, char *out, size_t cap);
};

/* s percent-encoded as a URL query value (RFC 3986: all but A-Z a-z 0-9 - . _ ~). */
void tl_wire_put_escaped(struct tl_buf *url, const char *s);
/* The meanings most stores share: 400 partial, 404 not found, 413 too
 * large, 422 partial, 429 and 5xx retry, anything else fatal. */
enum tl_http_result tl_wire_classify_common(long status);

#endif
