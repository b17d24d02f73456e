/* What wire formats share (wire.h): a query value escaped for a URL, and
 * the reply meanings most stores agree on. Plain C, no libcurl: a build
 * without HTTP sinks keeps it. */
#include "sinks/net/wire.h"

#include <string.h>

void tl_wire_put_escaped(struct tl_buf *url, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr("-._~", *p)) {
            tl_buf_putc(url, (char)*p);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            tl_buf_append(url, e, 3);
        }
    }
}

enum tl_http_result tl_wire_classify_common(long status)
{
    if (status == 400 || status == 422) return TL_HTTP_PARTIAL;
    if (status == 404) return TL_HTTP_NOT_FOUND;
    if (status == 413) return TL_HTTP_TOO_LARGE;
    if (status == 429 || status >= 500) return TL_HTTP_RETRY;
    return TL_HTTP_FATAL;
}
