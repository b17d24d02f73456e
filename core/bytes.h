/* Little helpers for compact, endian-independent binary formats: varints,
 * IEEE doubles written byte by byte (little-endian), length-prefixed
 * strings. Readers never read past `end` and report failure instead. */
#ifndef TL_BYTES_H
#define TL_BYTES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/buf.h"

static inline void tl_put_u8(struct tl_buf *b, uint8_t x)
{
    tl_buf_putc(b, (char)x);
}

static inline void tl_put_varint(struct tl_buf *b, uint64_t x)
{
    while (x >= 0x80) {
        tl_put_u8(b, (uint8_t)(x | 0x80));
        x >>= 7;
    }
    tl_put_u8(b, (uint8_t)x);
}

static inline void tl_put_f64(struct tl_buf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    for (int i = 0; i < 8; i++) tl_put_u8(b, (uint8_t)(u >> (8 * i)));
}

static inline void tl_put_str(struct tl_buf *b, const char *s)
{
    size_t n = strlen(s);
    tl_put_varint(b, n);
    tl_buf_append(b, s, n);
}

static inline uint64_t tl_zigzag(int64_t x)
{
    return ((uint64_t)x << 1) ^ (uint64_t)(x >> 63);
}

static inline int64_t tl_unzigzag(uint64_t x)
{
    return (int64_t)(x >> 1) ^ -(int64_t)(x & 1);
}

static inline bool tl_get_u8(const uint8_t **p, const uint8_t *end, uint8_t *x)
{
    if (*p >= end) return false;
    *x = *(*p)++;
    return true;
}

static inline bool tl_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *x)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t c;
        if (!tl_get_u8(p, end, &c)) return false;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *x = v;
            return true;
        }
    }
    return false;
}

static inline bool tl_get_f64(const uint8_t **p, const uint8_t *end, double *d)
{
    if (end - *p < 8) return false;
    uint64_t u = 0;
    for (int i = 0; i < 8; i++) u |= (uint64_t)(*p)[i] << (8 * i);
    *p += 8;
    memcpy(d, &u, sizeof *d);
    return true;
}

/* A string of at most max bytes: points into the input, not copied. */
static inline bool tl_get_str(const uint8_t **p, const uint8_t *end, size_t max, const char **s,
                              size_t *n)
{
    uint64_t len;
    if (!tl_get_varint(p, end, &len) || len > max || (uint64_t)(end - *p) < len) return false;
    *s = (const char *)*p;
    *n = (size_t)len;
    *p += len;
    return true;
}

#endif
