/* Remote write as the network engine's wire format (sinks/net/wire.h):
 * a batch's frames unframed into one WriteRequest, snappy-compressed, with
 * the protocol's headers; what its replies mean. Built with the HTTP sinks
 * only (it needs snappy). */
#include <snappy-c.h>
#include <stdio.h>
#include <string.h>

#include "sinks/prom/remote_write.h"

enum tl_err tl_rw_snappy(const char *in, size_t len, struct tl_buf *out)
{
    size_t cap = snappy_max_compressed_length(len);
    out->len = 0;
    if (!tl_buf_reserve(out, cap)) return TL_ERR_NOMEM;
    size_t n = cap;
    if (snappy_compress(in, len, out->data, &n) != SNAPPY_OK) return TL_ERR_NOMEM;
    out->len = n;
    return TL_OK;
}

/* ------------------------------------------------------------ the wire */

static const char *const rw_headers[] = {"Content-Type: application/x-protobuf", "Content-Encoding: snappy",
                                         "X-Prometheus-Remote-Write-Version: 0.1.0", NULL};

static void rw_where(const struct tl_http_cfg *cfg, struct tl_buf *out)
{
    tl_buf_puts(out, " (remote write)");
}

static enum tl_err rw_body(const struct tl_http_cfg *cfg, const char *data, size_t len, struct tl_buf *scratch,
                           struct tl_buf *out, bool *empty)
{
    if (tl_rw_framed(data, len)) tl_rw_unframe(data, len, scratch);
    else tl_rw_legacy_encode(data, len, cfg->measurements, scratch);
    if (scratch->oom) return TL_ERR_NOMEM;
    *empty = !scratch->len;
    return tl_rw_snappy(scratch->data ? scratch->data : "", scratch->len, out);
}

/* 400 is partial (samples refused: out of order, duplicate); a 404 is a
 * wrong URL, not a database to create. */
static enum tl_http_result rw_classify(long status, const char *message)
{
    return status == 404 ? TL_HTTP_FATAL : tl_wire_classify_common(status);
}

static bool rw_explain(const struct tl_http_cfg *cfg, const char *where, enum tl_http_result res,
                       const struct tl_http_reply *r, char *out, size_t cap)
{
    if (r->status != 401 && r->status != 403) return false;
    snprintf(out, cap,
             "the remote-write store at %s refused the credentials (HTTP %ld: %s): fix the sink's `token` (or "
             "$PROM_TOKEN), or `user` and `password` (or $PROM_PASSWORD)",
             where, r->status, r->message);
    return true;
}

/* The URL as given (http://vm:8428/api/v1/write), a token as Bearer,
 * user/password as basic auth; `check` posts an empty request. */
const struct tl_wire tl_wire_remote_write = {
    .prefix = "prometheus",
    .store = "the remote-write store",
    .codec = &tl_codec_remote_write,
    .whole_url = true,
    .where = rw_where,
    .headers = rw_headers,
    .auth_scheme = "Bearer",
    .encode = rw_body,
    .classify = rw_classify,
    .explain = rw_explain,
};
