/* Scanning helpers the hand-written JSON readers share. */
#ifndef TL_JSCAN_H
#define TL_JSCAN_H

#include <stdint.h>
#include <string.h>

#include "core/numfmt.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Position of the first byte equal to a or b in [p, end), or end. Sixteen
 * bytes per step where SSE2 is there (every x86-64), eight (SWAR)
 * elsewhere and for the tail; nothing is read at or past end. In the SWAR
 * step the lowest byte the zero-byte test flags is exact (false positives
 * lie only above a true one). With a == b the compiler folds the second
 * test away. */
static inline __attribute__((always_inline)) const char *tl_find2(const char *p, const char *end,
                                                                  char a, char b)
{
#ifdef __SSE2__
    const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b);
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(x, va), _mm_cmpeq_epi8(x, vb)));
        if (m) return p + __builtin_ctz(m);
        p += 16;
    }
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t x = w ^ (ones * (unsigned char)a), y = w ^ (ones * (unsigned char)b);
        uint64_t hit = ((x - ones) & ~x & highs) | ((y - ones) & ~y & highs);
        if (hit) return p + (__builtin_ctzll(hit) >> 3);
        p += 8;
    }
#endif
    while (p < end && *p != a && *p != b) p++;
    return p;
}

/* The end of a JSON string's raw text: its closing quote or an escape. */
static inline const char *tl_find_quote_or_backslash(const char *p, const char *end)
{
    return tl_find2(p, end, '"', '\\');
}

/* The end of a space-separated word of a log line (most are shorter than
 * 16 bytes: one vector compare instead of a call into libc's memchr). */
static inline const char *tl_find_space(const char *p, const char *end)
{
    return tl_find2(p, end, ' ', ' ');
}

/* Position of the first byte in [p, end) that is not an ASCII digit, or
 * end: eight bytes per step. */
static inline const char *tl_skip_digits(const char *p, const char *end)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t bad = tl_swar_nondigits(w);
        if (bad) return p + (__builtin_ctzll(bad) >> 3);
        p += 8;
    }
#endif
    while (p < end && (unsigned)(*p - '0') <= 9) p++;
    return p;
}

/* At most how many values the first JSON value of [p, p+n) holds, counted
 * before a library builds them (Jansson takes 40-70 bytes a value: 16 MB of
 * "[0,0,...]", 3 KB compressed, took 900 MB); stops past max. Every value
 * but the first follows a '[', ',' or ':' outside strings, so this is an
 * upper bound that errs only by empty containers. */
static inline long long tl_json_values_upper(const char *p, size_t n, long long max)
{
    long long v = 1;
    int depth = 0;
    const char *end = p + n;
    while (p < end && v <= max) {
        char c = *p++;
        if (c == '"') { /* a string: to its closing quote */
            while (p < end && *p != '"') p += *p == '\\' ? 2 : 1;
            p++;
        } else {
            v += c == '[' || c == ',' || c == ':';
            depth += (c == '[' || c == '{') - (c == ']' || c == '}');
            if (depth == 0 && (c == ']' || c == '}')) break; /* the first value ends there */
        }
    }
    return v;
}

#endif
