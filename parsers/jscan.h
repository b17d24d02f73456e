/* Scanning helpers the hand-written JSON readers share. */
#ifndef TL_JSCAN_H
#define TL_JSCAN_H

#include <stdint.h>
#include <string.h>

/* Position of the first '"' or '\\' in [p, end), or end. Keys and short
 * values are the common strings, so eight bytes per step (SWAR) beat both
 * a byte loop and two memchr calls; the lowest byte the zero-byte test
 * flags is exact (false positives lie only above a true one). */
static inline const char *tl_find_quote_or_backslash(const char *p, const char *end)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        uint64_t hit = ((q - ones) & ~q & highs) | ((b - ones) & ~b & highs);
        if (hit) return p + (__builtin_ctzll(hit) >> 3);
        p += 8;
    }
#endif
    while (p < end && *p != '"' && *p != '\\') p++;
    return p;
}

#endif
