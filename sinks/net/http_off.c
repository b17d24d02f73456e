/* The HTTP client in a build without it (cmake -DTL_HTTP_SINKS=OFF, for
 * machines without libcurl's headers): the same interface (http.h), where
 * making a client fails saying why, so an `influxdb` or `prometheus` sink
 * is refused when `run` or `check` starts, by name. */
#include "sinks/net/http.h"

#include <stdio.h>

enum tl_err tl_http_new(const struct tl_http_cfg *cfg, struct tl_http **out, char *err,
                          size_t errlen)
{
    *out = NULL;
    snprintf(err, errlen, "this tasklens was built without HTTP sinks (rebuild with cmake "
                          "-DTL_HTTP_SINKS=ON and libcurl's and snappy's headers: libcurl4-openssl-dev "
                          "libsnappy-dev, or libcurl-devel snappy-devel)");
    return TL_ERR_USAGE;
}

/* Unreachable without a client; defined so the sinks link. */
void tl_http_free(struct tl_http *c) {}
enum tl_http_result tl_http_write(struct tl_http *c, const char *body, size_t len,
                                    struct tl_http_reply *reply)
{
    return TL_HTTP_FATAL;
}
enum tl_http_result tl_http_create_db(struct tl_http *c, struct tl_http_reply *reply)
{
    return TL_HTTP_FATAL;
}
enum tl_http_result tl_http_ping(struct tl_http *c, struct tl_http_reply *reply)
{
    return TL_HTTP_FATAL;
}
const char *tl_http_where(const struct tl_http *c) { return ""; }
