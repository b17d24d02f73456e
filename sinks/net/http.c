/* The HTTP client of every network sink: see http.h.
 *
 * One CURL easy handle per client keeps the connection alive between
 * batches. The write URL is built once; credentials travel in headers or
 * libcurl's user/password options, never in anything we print. */
#include "sinks/net/curl_api.h"
#include "sinks/net/http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <zlib.h>

#include "core/buf.h"
#include "sinks/net/wire.h"

struct tl_http {
    struct tl_http_cfg cfg;
    CURL *curl;
    struct curl_slist *headers;
    char *write_url;
    char *query_url;
    char *ping_url;
    char where[256];
    char *url_user, *url_password; /* user info written in the URL, given to libcurl apart */
    struct tl_buf gz;   /* the body sent, when it is not the batch as it is */
    struct tl_buf pb;   /* the wire's scratch while encoding */
    struct tl_buf resp; /* response body */
    long retry_after_ms;
    bool influxdb_header; /* the answer carried X-Influxdb-Version */
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
    struct tl_buf *b = ctx;
    if (b->len < 64 * 1024) tl_buf_append(b, p, size * n); /* bounded: errors are short */
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
    struct tl_http *c = ctx;
    size_t len = size * n;
    if (len > 19 && !strncasecmp(p, "X-Influxdb-Version:", 19)) c->influxdb_header = true;
    if (len > 12 && !strncasecmp(p, "Retry-After:", 12)) {
        /* delay-seconds, or an HTTP-date (RFC 9110 10.2.3) */
        char v[128];
        size_t vn = len - 12 < sizeof v - 1 ? len - 12 : sizeof v - 1;
        memcpy(v, p + 12, vn);
        v[vn] = '\0';
        char *end;
        long secs = strtol(v, &end, 10);
        if (end == v || (*end && *end != '\r' && *end != '\n' && *end != ' ')) {
            time_t at = curl_getdate(v, NULL);
            secs = at > 0 ? (long)(at - time(NULL)) : 0;
        }
        if (secs > 0 && secs < 3600) c->retry_after_ms = secs * 1000;
    }
    return len;
}

/* A base URL taken apart. The user info is everything up to the LAST '@'
 * (a password written as it is may hold '/', '?', '#', '@' or ':'); it goes
 * to libcurl's own user and password options, never into a URL tasklens
 * builds or a message it prints. base = scheme://host:port/path. */
struct url_parts {
    const char *scheme_end;  /* the "://" */
    const char *user, *user_end; /* user info, or NULL */
    const char *host, *host_end; /* host[:port] */
    const char *path_end;    /* the end of the path: a '?', a '#' or the end */
};

static bool url_split(const char *url, struct url_parts *u)
{
    memset(u, 0, sizeof *u);
    if (!url || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))) return false;
    u->scheme_end = strstr(url, "://");
    const char *rest = u->scheme_end + 3, *at = strrchr(rest, '@');
    if (at) {
        u->user = rest;
        u->user_end = at;
        rest = at + 1;
    }
    u->host = rest;
    u->host_end = rest + strcspn(rest, "/?#");
    u->path_end = u->host_end + strcspn(u->host_end, "?#");
    return u->host_end > u->host;
}

/* The settings a server needs, before anything is opened. */
static enum tl_err check_cfg(const struct tl_http_cfg *cfg, char *err, size_t errlen)
{
    const struct tl_wire *w = cfg->wire;
    if (!w) {
        snprintf(err, errlen, "net: a client without a wire format");
        return TL_ERR_USAGE;
    }
    struct url_parts u;
    if (!url_split(cfg->url, &u)) {
        snprintf(err, errlen, "%s: the URL must start with http:// or https:// and name a host", w->prefix);
        return TL_ERR_USAGE;
    }
    /* a query would be mangled into the write path (`/?u=..&p=../write?db=`)
     * and printed whole: credentials have settings of their own */
    if (*u.path_end && !w->whole_url) {
        snprintf(err, errlen, "%s: the URL holds a %s (`%c...`, not shown): put credentials in the "
                              "sink's `user` and `password` (or $INFLUX_PASSWORD), or `token` (or "
                              "$INFLUX_TOKEN); the URL is scheme://host:port[/path]",
                 w->prefix, *u.path_end == '?' ? "query" : "fragment", *u.path_end);
        return TL_ERR_USAGE;
    }
    char why[300];
    if (w->check && w->check(cfg, why, sizeof why)) {
        snprintf(err, errlen, "%s: %s", w->prefix, why);
        return TL_ERR_USAGE;
    }
    if (!tl_curl_load(why, sizeof why)) {
        snprintf(err, errlen, "%s: %s", w->prefix, why);
        return TL_ERR_OPEN;
    }
    return TL_OK;
}

/* The write, query and ping URLs (the base without trailing slashes). */
static int hex_value(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
}

/* [s, s+n) with its %XX escapes decoded, malloc'ed. */
static char *percent_decoded(const char *s, size_t n)
{
    char *out = malloc(n + 1), *w = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        int hi = s[i] == '%' && i + 2 < n ? hex_value(s[i + 1]) : -1;
        int lo = hi >= 0 ? hex_value(s[i + 2]) : -1;
        if (lo >= 0) {
            *w++ = (char)(hi << 4 | lo);
            i += 2;
        } else {
            *w++ = s[i];
        }
    }
    *w = '\0';
    return out;
}

/* The user info of the URL, percent-decoded, for libcurl's options. */
static void take_userinfo(struct tl_http *c, const struct url_parts *p)
{
    if (!p->user) return;
    const char *colon = memchr(p->user, ':', (size_t)(p->user_end - p->user));
    const char *ue = colon ? colon : p->user_end;
    c->url_user = percent_decoded(p->user, (size_t)(ue - p->user));
    if (colon) c->url_password = percent_decoded(colon + 1, (size_t)(p->user_end - colon - 1));
}

static void make_urls(struct tl_http *c, const struct tl_http_cfg *cfg)
{
    const struct tl_wire *w = cfg->wire;
    struct url_parts p;
    url_split(cfg->url, &p); /* checked by check_cfg */
    take_userinfo(c, &p);
    struct tl_buf base = {0}; /* scheme://host:port/path, without the user info */
    tl_buf_append(&base, cfg->url, (size_t)(p.scheme_end + 3 - cfg->url));
    tl_buf_append(&base, p.host, (size_t)(p.path_end - p.host));
    if (w->whole_url) tl_buf_puts(&base, p.path_end); /* the URL as given, its query too */
    size_t ulen = base.len;
    while (!w->whole_url && ulen && base.data[ulen - 1] == '/') ulen--;
    struct tl_buf u = {0};
    tl_buf_append(&u, tl_buf_cstr(&base), ulen);
    if (w->write_path) w->write_path(cfg, &u);
    c->write_url = strdup(tl_buf_cstr(&u));
    u.len = 0;
    tl_buf_append(&u, tl_buf_cstr(&base), ulen);
    tl_buf_puts(&u, "/query");
    c->query_url = strdup(tl_buf_cstr(&u));
    u.len = 0;
    tl_buf_append(&u, tl_buf_cstr(&base), ulen);
    if (w->ping_path) tl_buf_puts(&u, w->ping_path);
    c->ping_url = strdup(tl_buf_cstr(&u));
    tl_buf_free(&u);
    tl_buf_free(&base);
}

/* "where" for messages: scheme://host:port, without user info, path or
 * query (see url_split: nothing of a password may show), and what the wire
 * adds (the database). */
static void make_where(struct tl_http *c, const struct tl_http_cfg *cfg)
{
    struct url_parts p;
    url_split(cfg->url, &p);
    int schemelen = (int)(p.scheme_end - cfg->url), hostlen = (int)(p.host_end - p.host);
    struct tl_buf extra = {0};
    if (cfg->wire->where) cfg->wire->where(cfg, &extra);
    snprintf(c->where, sizeof c->where, "%.*s://%.*s%s", schemelen, cfg->url, hostlen, p.host,
             tl_buf_cstr(&extra));
    tl_buf_free(&extra);
}

/* The request's headers, the token among them (never left in freed memory). */
static struct curl_slist *make_headers(const struct tl_http_cfg *cfg)
{
    const struct tl_wire *w = cfg->wire;
    struct curl_slist *h = NULL;
    bool ok = true;
    for (const char *const *x = w->headers; ok && x && *x; x++) ok = (h = curl_slist_append(h, *x)) != NULL;
    if (ok && w->gzip && cfg->gzip) ok = (h = curl_slist_append(h, "Content-Encoding: gzip")) != NULL;
    if (ok && w->auth_scheme && cfg->token) {
        struct tl_buf t = {0};
        tl_buf_printf(&t, "Authorization: %s %s", w->auth_scheme, cfg->token);
        ok = (h = curl_slist_append(h, tl_buf_cstr(&t))) != NULL;
        memset(t.data, 0, t.len);
        tl_buf_free(&t);
    }
    return h;
}

static void set_options(CURL *k, struct tl_http *c, const struct tl_http_cfg *cfg)
{
    curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(k, CURLOPT_TIMEOUT_MS, cfg->timeout_ms);
    curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT_MS, cfg->timeout_ms < 5000 ? cfg->timeout_ms : 5000L);
    curl_easy_setopt(k, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(k, CURLOPT_WRITEDATA, &c->resp);
    curl_easy_setopt(k, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(k, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(k, CURLOPT_USERAGENT, "tasklens/0.1");
    const char *user = cfg->user ? cfg->user : c->url_user;
    const char *password = cfg->password ? cfg->password : c->url_password;
    if (user) curl_easy_setopt(k, CURLOPT_USERNAME, user);
    if (password) curl_easy_setopt(k, CURLOPT_PASSWORD, password);
    if (cfg->ca_file) curl_easy_setopt(k, CURLOPT_CAINFO, cfg->ca_file);
    if (cfg->ca_path) curl_easy_setopt(k, CURLOPT_CAPATH, cfg->ca_path);
    if (cfg->insecure) {
        curl_easy_setopt(k, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(k, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

enum tl_err tl_http_new(const struct tl_http_cfg *cfg, struct tl_http **out, char *err,
                          size_t errlen)
{
    enum tl_err rc = check_cfg(cfg, err, errlen);
    if (rc) return rc;
    struct tl_http *c = calloc(1, sizeof *c);
    if (!c) return TL_ERR_NOMEM;
    c->cfg = *cfg;
    c->curl = curl_easy_init();
    if (!c->curl) {
        free(c);
        return TL_ERR_NOMEM;
    }
    make_urls(c, cfg);
    make_where(c, cfg);
    c->headers = make_headers(cfg);
    if (!c->write_url || !c->query_url || !c->ping_url || !c->headers) {
        tl_http_free(c);
        return TL_ERR_NOMEM;
    }
    set_options(c->curl, c, cfg);
    *out = c;
    return TL_OK;
}

void tl_http_free(struct tl_http *c)
{
    if (!c) return;
    if (c->curl) curl_easy_cleanup(c->curl);
    curl_slist_free_all(c->headers);
    free(c->write_url);
    free(c->query_url);
    free(c->ping_url);
    if (c->url_password) memset(c->url_password, 0, strlen(c->url_password)); /* no secret left in freed memory */
    free(c->url_user);
    free(c->url_password);
    tl_buf_free(&c->gz);
    tl_buf_free(&c->pb);
    tl_buf_free(&c->resp);
    free(c);
}

const char *tl_http_where(const struct tl_http *c)
{
    return c->where;
}

static bool gzip_body(struct tl_buf *out, const char *in, size_t len)
{
    z_stream z = {0};
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
    out->len = 0;
    if (!tl_buf_reserve(out, deflateBound(&z, (uLong)len))) {
        deflateEnd(&z);
        return false;
    }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out->data;
    z.avail_out = (uInt)(out->cap - 1);
    int rc = deflate(&z, Z_FINISH);
    out->len = z.total_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END;
}

/* InfluxDB's error JSON is {"error":"..."} (1.x) or {"code":"...","message":"..."}
 * (2.x): take the text, unescaped enough for a log line, and the "dropped=N"
 * it ends with on partial writes. */
static void parse_error(struct tl_http *c, struct tl_http_reply *r)
{
    const char *body = tl_buf_cstr(&c->resp);
    const char *e = strstr(body, "\"error\":\"");
    const char *m = strstr(body, "\"message\":\"");
    const char *msg = e ? e + 9 : m ? m + 11 : body;
    bool quoted = e || m;
    size_t n = 0;
    for (const char *p = msg; *p && n + 1 < sizeof r->message; p++) {
        if (quoted && *p == '"' && p[-1] != '\\') break;
        if (*p == '\\' && (p[1] == '"' || p[1] == 'n')) continue;
        r->message[n++] = *p == '\n' ? ' ' : *p;
    }
    r->message[n] = '\0';
    const char *d = strstr(body, "dropped=");
    if (d) r->dropped = strtoull(d + 8, NULL, 10);
}

static enum tl_http_result perform(struct tl_http *c, struct tl_http_reply *r)
{
    c->resp.len = 0;
    c->retry_after_ms = 0;
    c->influxdb_header = false;
    CURLcode cc = curl_easy_perform(c->curl);
    if (cc != CURLE_OK) {
        /* curl's message names the host, never our credentials */
        snprintf(r->message, sizeof r->message, "%s: %s", c->where, curl_easy_strerror(cc));
        return TL_HTTP_RETRY;
    }
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &r->status);
    r->retry_after_ms = c->retry_after_ms;
    r->influxdb = c->influxdb_header;
    if (r->status >= 200 && r->status < 300) return TL_HTTP_OK;
    parse_error(c, r);
    return c->cfg.wire->classify ? c->cfg.wire->classify(r->status, r->message) : tl_wire_classify_common(r->status);
}

enum tl_http_result tl_http_write(struct tl_http *c, const char *body, size_t len,
                                    struct tl_http_reply *r)
{
    memset(r, 0, sizeof *r);
    const char *send = body;
    size_t send_len = len;
    const struct tl_wire *w = c->cfg.wire;
    if (w->encode) {
        bool empty = false;
        c->pb.len = 0;
        if (w->encode(&c->cfg, body, len, &c->pb, &c->gz, &empty)) {
            snprintf(r->message, sizeof r->message, "out of memory encoding a request");
            return TL_HTTP_RETRY;
        }
        if (empty && len) return TL_HTTP_OK; /* nothing this store takes */
        send = c->gz.data ? c->gz.data : "";
        send_len = c->gz.len;
    } else if (w->gzip && c->cfg.gzip) {
        if (!gzip_body(&c->gz, body, len)) {
            snprintf(r->message, sizeof r->message, "gzip failed");
            return TL_HTTP_RETRY;
        }
        send = c->gz.data;
        send_len = c->gz.len;
    }
    curl_easy_setopt(c->curl, CURLOPT_URL, c->write_url);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
    curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, send);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)send_len);
    return perform(c, r);
}

enum tl_http_result tl_http_create_db(struct tl_http *c, struct tl_http_reply *r)
{
    memset(r, 0, sizeof *r);
    struct tl_buf db = {0};
    tl_wire_put_escaped(&db, c->cfg.db);
    char q[512];
    snprintf(q, sizeof q, "q=CREATE%%20DATABASE%%20%%22%s%%22", tl_buf_cstr(&db)); /* CREATE DATABASE "db" */
    tl_buf_free(&db);
    curl_easy_setopt(c->curl, CURLOPT_URL, c->query_url);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
    /* the size first: COPYPOSTFIELDS copies as many bytes as the size set
     * last, which would be the previous batch's */
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(q));
    curl_easy_setopt(c->curl, CURLOPT_COPYPOSTFIELDS, q);
    return perform(c, r);
}

enum tl_http_result tl_http_ping(struct tl_http *c, struct tl_http_reply *r)
{
    if (!c->cfg.wire->ping_path) return tl_http_write(c, "", 0, r); /* an empty request */
    memset(r, 0, sizeof *r);
    curl_easy_setopt(c->curl, CURLOPT_URL, c->ping_url);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->cfg.wire->ping_auth ? c->headers : NULL);
    curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
    return perform(c, r);
}
