/* One zstd frame around a blob (sketch packs, aggregator state): append the
 * compressed bytes to a buffer, and decode a frame whose content size is
 * declared and bounded (corrupt or hostile input cannot make us allocate
 * more than max). */
#ifndef TL_ZFRAME_H
#define TL_ZFRAME_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"

enum tl_err tl_zframe_append(struct tl_buf *out, const void *raw, size_t len);
/* *raw is malloc'ed (free it); TL_ERR_CORRUPT when not a valid frame. */
enum tl_err tl_zframe_decode(const uint8_t *p, size_t len, uint64_t max, uint8_t **raw,
                             size_t *rawlen);

#endif
