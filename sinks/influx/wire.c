/* InfluxDB's two write APIs as wire formats (sinks/net/wire.h):
 *
 *   1.x: POST {url}/write?db=&rp=&precision=ns     (user/password: basic auth)
 *   2.x: POST {url}/api/v2/write?org=&bucket=&precision=ns
 *        Authorization: Token <token>
 *
 * The body is the line protocol itself, gzip-compressed when the sink's
 * gzip is on. Replies: 400 from 1.x and 422 from 2.x are partial writes
 * (the valid points kept; "dropped=N" says how many were not); 2.x answers
 * 400 both for a line it cannot parse -- and then writes nothing of the
 * batch, which the engine splits to keep the rest -- and for the request
 * itself (an empty org), which only the operator can mend. */
#include <stdio.h>
#include <string.h>

#include "sinks/influx/wire.h"
#include "sinks/lineproto.h"
#include "sinks/net/wire.h"

static const char *const lp_headers[] = {"Content-Type: text/plain; charset=utf-8", NULL};

static enum tl_err v1_check(const struct tl_http_cfg *cfg, char *err, size_t errlen)
{
    if (cfg->db && *cfg->db) return TL_OK;
    snprintf(err, errlen, "InfluxDB 1.x needs a database (--influx-db)");
    return TL_ERR_USAGE;
}

static enum tl_err v2_check(const struct tl_http_cfg *cfg, char *err, size_t errlen)
{
    if (cfg->org && cfg->bucket && cfg->token) return TL_OK;
    snprintf(err, errlen, "InfluxDB 2.x needs org, bucket and a token");
    return TL_ERR_USAGE;
}

static void v1_write_path(const struct tl_http_cfg *cfg, struct tl_buf *u)
{
    tl_buf_puts(u, "/write?db=");
    tl_wire_put_escaped(u, cfg->db);
    tl_buf_puts(u, "&precision=ns");
    if (cfg->rp && *cfg->rp) {
        tl_buf_puts(u, "&rp=");
        tl_wire_put_escaped(u, cfg->rp);
    }
}

static void v2_write_path(const struct tl_http_cfg *cfg, struct tl_buf *u)
{
    tl_buf_puts(u, "/api/v2/write?org=");
    tl_wire_put_escaped(u, cfg->org);
    tl_buf_puts(u, "&bucket=");
    tl_wire_put_escaped(u, cfg->bucket);
    tl_buf_puts(u, "&precision=ns");
}

static void v1_where(const struct tl_http_cfg *cfg, struct tl_buf *out)
{
    tl_buf_printf(out, " (database %s)", cfg->db);
}

static void v2_where(const struct tl_http_cfg *cfg, struct tl_buf *out)
{
    tl_buf_printf(out, " (bucket %s)", cfg->bucket);
}

static enum tl_http_result v2_classify(long status, const char *message)
{
    /* only a line it cannot parse may cost a point; a 400 about the request
     * ("Please provide either orgID or org") keeps the data */
    if (status == 400)
        return strstr(message, "unable to parse") || strstr(message, "failed to parse") ? TL_HTTP_REJECTED
                                                                                         : TL_HTTP_BAD_REQUEST;
    return tl_wire_classify_common(status); /* 422: schema conflicts, retention */
}

static bool refused(const struct tl_http_reply *r)
{
    return r->status == 401 || r->status == 403;
}

static bool v1_explain(const struct tl_http_cfg *cfg, const char *where, enum tl_http_result res,
                       const struct tl_http_reply *r, char *out, size_t cap)
{
    if (res == TL_HTTP_NOT_FOUND)
        snprintf(out, cap, "InfluxDB at %s: database not found (create it, or pass --influx-create-db): %s", where,
                 r->message);
    else if (refused(r))
        snprintf(out, cap,
                 "InfluxDB at %s refused the credentials (HTTP %ld: %s): fix the sink's `user` and `password` "
                 "(or $INFLUX_PASSWORD); the user needs WRITE on database %s",
                 where, r->status, r->message, cfg->db);
    else
        return false;
    return true;
}

static bool v2_explain(const struct tl_http_cfg *cfg, const char *where, enum tl_http_result res,
                       const struct tl_http_reply *r, char *out, size_t cap)
{
    if (res == TL_HTTP_NOT_FOUND)
        snprintf(out, cap,
                 "InfluxDB at %s: bucket not found in org %s (create it: influx bucket create --name %s --org %s): %s",
                 where, cfg->org, cfg->bucket, cfg->org, r->message);
    else if (res == TL_HTTP_BAD_REQUEST)
        snprintf(out, cap,
                 "InfluxDB at %s refused the request (HTTP 400: %s): check the sink's `org` (\"%s\") and `bucket` "
                 "(\"%s\")",
                 where, r->message, cfg->org, cfg->bucket);
    else if (refused(r))
        snprintf(out, cap,
                 "InfluxDB at %s refused the token (HTTP %ld: %s): fix the sink's `token` (or $INFLUX_TOKEN); it "
                 "needs write access to bucket %s in org %s",
                 where, r->status, r->message, cfg->bucket, cfg->org);
    else
        return false;
    return true;
}

const struct tl_wire tl_wire_influx1 = {
    .prefix = "influx",
    .store = "InfluxDB",
    .codec = &tl_codec_lineproto,
    .check = v1_check,
    .write_path = v1_write_path,
    .ping_path = "/ping",
    .where = v1_where,
    .headers = lp_headers,
    .gzip = true,
    .create_db = true,
    .explain = v1_explain,
};

const struct tl_wire tl_wire_influx2 = {
    .prefix = "influx",
    .store = "InfluxDB",
    .codec = &tl_codec_lineproto,
    .check = v2_check,
    .write_path = v2_write_path,
    .ping_path = "/health",
    .ping_auth = true,
    .where = v2_where,
    .headers = lp_headers,
    .auth_scheme = "Token",
    .gzip = true,
    .classify = v2_classify,
    .explain = v2_explain,
};
