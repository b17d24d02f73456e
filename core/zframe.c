#include "core/zframe.h"

#include <stdlib.h>
#include <zstd.h>

enum tl_err tl_zframe_append(struct tl_buf *out, const void *raw, size_t len)
{
    size_t bound = ZSTD_compressBound(len);
    if (!tl_buf_reserve(out, bound)) return TL_ERR_NOMEM;
    size_t z = ZSTD_compress(out->data + out->len, bound, raw, len, 3);
    if (ZSTD_isError(z)) return TL_ERR_INTERNAL;
    out->len += z;
    return TL_OK;
}

enum tl_err tl_zframe_decode(const uint8_t *p, size_t len, uint64_t max, uint8_t **raw,
                             size_t *rawlen)
{
    *raw = NULL;
    unsigned long long size = ZSTD_getFrameContentSize(p, len);
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > max)
        return TL_ERR_CORRUPT;
    uint8_t *b = malloc(size ? size : 1);
    if (!b) return TL_ERR_NOMEM;
    size_t got = ZSTD_decompress(b, size, p, len);
    if (ZSTD_isError(got) || got != size) {
        free(b);
        return TL_ERR_CORRUPT;
    }
    *raw = b;
    *rawlen = (size_t)size;
    return TL_OK;
}
