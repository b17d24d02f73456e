/* UTF-8 as RFC 3629 defines it, for the modules that write names out (JSON,
 * CSV, YAML, terminals): a name is bytes from an input, and a byte that is
 * not part of a well-formed sequence must be replaced or escaped, never
 * passed on for the reader to guess at. */
#ifndef TL_UTF8_H
#define TL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length of the well-formed sequence at p (no overlong forms, no
 * surrogates, nothing past U+10FFFF) within n bytes, or 0; its code point
 * in *cp when not NULL. */
static inline int tl_utf8_len(const unsigned char *p, size_t n, uint32_t *cp)
{
    unsigned c = p[0];
    if (c < 0x80) {
        if (cp) *cp = c;
        return 1;
    }
    int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (!len || c > 0xf4 || (size_t)len > n) return 0;
    for (int i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && p[1] < 0xa0) return 0; /* overlong */
    if (c == 0xed && p[1] >= 0xa0) return 0; /* surrogate */
    if (c == 0xf0 && p[1] < 0x90) return 0; /* overlong */
    if (c == 0xf4 && p[1] >= 0x90) return 0; /* past U+10FFFF */
    if (cp) {
        uint32_t v = c & (0x7f >> len);
        for (int i = 1; i < len; i++) v = v << 6 | (p[i] & 0x3f);
        *cp = v;
    }
    return len;
}

/* Whether s is all ASCII (then it is UTF-8): the common case, checked
 * before a validation. */
static inline bool tl_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80) return false;
    return true;
}

/* U+FFFD, what an ill-formed byte becomes where the output must be UTF-8. */
#define TL_UTF8_REPLACEMENT "\xef\xbf\xbd"

#endif
