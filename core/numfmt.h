/* Number formatting and parsing that never loses information.
 *
 * tl_fmt_double writes the shortest decimal that reads back as the same
 * double (what Python's repr and JavaScript print), so JSON and CSV output
 * carries every bit and no `%.6g` rounding. Non-finite values print as
 * "nan", "inf", "-inf"; JSON writers check isfinite() and write null. */
#ifndef TL_NUMFMT_H
#define TL_NUMFMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

/* Returns the length written (excluding NUL); cap must be >= 32 (the
 * longest is 24 characters). */
size_t tl_fmt_double(char *buf, size_t cap, double v);
/* Writes v in decimal and a NUL: at most 21 bytes. Returns the length. */
size_t tl_fmt_i64(char *buf, int64_t v);

/* Exactly snprintf(buf, cap, "%.*g", sig, v), for 1 <= sig <= 15, at a
 * tenth of the cost: the shortest round-trip digits (tl_fmt_double) rounded
 * to sig digits, which is the exact value's rounding unless those digits
 * end on a tie (then, and for zeros, subnormals, non-finite values and
 * cap < 32, snprintf itself; with fewer digits than sig, any 15 digits of
 * a normal double read back as it: DBL_DIG). The summary tables print thousands of cells per
 * category with %.3g. Returns the length. */
size_t tl_fmt_sig(char *buf, size_t cap, double v, int sig);

/* Exactly snprintf(buf, 32, "%.1f", v) -- a drawing's coordinates -- at a
 * fraction of its cost (a page's SVG writes tens of thousands): v * 10
 * rounded to the nearest integer as the exact product lies (its rounding
 * error from fma), exact ties to even as glibc rounds. Past 2^48 and for
 * non-finite values, snprintf itself (cap bytes; a value below 2^48 needs
 * at most 19). Returns the length, as snprintf. */
size_t tl_fmt_fixed1(char *buf, size_t cap, double v);

/* A count for people, "1,234,567": thousands separated by commas; buf has
 * room for 27 bytes. Its length. */
size_t tl_fmt_grouped(char *buf, uint64_t v);

/* The same into a buffer with TL_FMT_WIDE bytes of room, of which the
 * bytes after the NUL may be overwritten: the writers copy in fixed-size
 * blocks. For encoders that reserve the room once per record. */
#define TL_FMT_WIDE 64
size_t tl_fmt_double_wide(char *buf, double v);
size_t tl_fmt_i64_wide(char *buf, int64_t v);

/* Parses a decimal integer (optional '-') of exactly [p, end). */
bool tl_parse_i64(const char *p, const char *end, int64_t *out);

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* w: eight ASCII bytes as one little-endian word (the first in the low
 * byte), as the digit scanners here and in parsers/ read them. Nonzero in
 * each byte that is no ASCII digit: a digit's high nibble is 3, and adding
 * 6 keeps it 3. The two tests stand each on its own (or-ing the nibbles
 * first lets '.', '+', '-' and 0x1A-0x1F through). A carry out of a byte
 * (0xFA and up) changes only bytes above one that already fails, so the
 * lowest flagged byte is always right. */
static inline uint64_t tl_swar_nondigits(uint64_t w)
{
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ULL, threes = 0x3030303030303030ULL;
    return ((w & hi) ^ threes) | (((w + 0x0606060606060606ULL) & hi) ^ threes);
}

/* The value of eight decimal digits, v holding each digit's value (its
 * byte less '0'), the first in the low byte: three multiplies. */
static inline uint64_t tl_swar_value8(uint64_t v)
{
    v = (v * 10) + (v >> 8);
    return (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
            (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
           32;
}
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The run of ASCII digits at p: where it ends, and in *v the digits read
 * before it (acc) followed by the run, acc * 10^len + run. Eight digits a
 * word while eight bytes remain (the last k < 8 of a run from the word
 * they end in, shifted to its top), then byte by byte; nothing at or past
 * end is read. The value wraps past 19 digits: callers bound the length. */
static inline __attribute__((always_inline)) const char *tl_digits_value_from(const char *p,
                                                                               const char *end,
                                                                               uint64_t acc, uint64_t *v)
{
    static const uint64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
    const uint64_t zeros = 0x3030303030303030ULL;
    while (end - p >= 8) {
        uint64_t w;
        __builtin_memcpy(&w, p, 8);
        uint64_t bad = tl_swar_nondigits(w);
        if (!bad) {
            acc = acc * 100000000ULL + tl_swar_value8(w - zeros);
            p += 8;
            continue;
        }
        unsigned k = (unsigned)__builtin_ctzll(bad) >> 3; /* digits before the first other byte */
        if (k) {
            acc = acc * pow10[k] + tl_swar_value8((w - zeros) << (64 - 8 * k));
            p += k;
        }
        *v = acc;
        return p;
    }
    for (unsigned d; p < end && (d = (unsigned)(*p - '0')) <= 9; p++) acc = acc * 10 + d;
    *v = acc;
    return p;
}

/* The run's value alone. */
static inline __attribute__((always_inline)) const char *tl_digits_value(const char *p, const char *end,
                                                                          uint64_t *v)
{
    return tl_digits_value_from(p, end, 0, v);
}
#endif

/* 10^0 .. 10^22, the powers of ten a double holds exactly. */
extern const double tl_pow10_exact[23];

/* Reads the run of ASCII digits at p, m = m * 10^len + run, and returns
 * where the run ends; nothing at or past end is read. A byte at a time:
 * the runs in JSON values average under five digits, and the word-at-a-time
 * loop measured slower on them (bench/RESULTS.md, steps 3, 5, 6 and 8).
 * m wraps past 19 digits: callers count the digits (the distance covered)
 * first. */
static inline const char *tl_digit_run(const char *p, const char *end, uint64_t *m)
{
    uint64_t acc = *m;
    unsigned d;
    while (p < end && (d = (unsigned)(*p - '0')) <= 9) {
        acc = acc * 10 + d;
        p++;
    }
    *m = acc;
    return p;
}

/* The exponent at q ('e' or 'E') of the number m * 10^e10 that
 * tl_scan_decimal read, the same way; NULL when the exponent takes the
 * power of ten past 10^+-22. */
const char *tl_scan_decimal_exp(const char *q, const char *end, uint64_t m, long e10, bool neg,
                                double *out);

/* Parses a JSON-style number occupying exactly [p, end); also accepts
 * "nan", "inf", "-inf". Same result as strtod, bit for bit. */
bool tl_parse_double(const char *p, const char *end, double *out);
/* Parses the number that starts at p; returns where it ends, or NULL. */
const char *tl_scan_double(const char *p, const char *end, double *out);

/* The common number at p -- [-]digits[.digits][e[+-]digits], 19 digits
 * at most, the digits as an integer m at most 2^53 and the power of ten
 * within 10^+-22 -- converted with one correctly rounded multiply or
 * divide of exact operands (Clinger's fast path: the double strtod
 * gives). Returns where it ends, or NULL for anything else, which
 * tl_scan_double then takes (it also rejects what is no number). */
static inline __attribute__((always_inline)) const char *tl_scan_decimal(const char *p, const char *end,
                                                                          double *out)
{
    const char *s = p + (p < end && *p == '-');
    if (s >= end || (unsigned)(*s - '0') > 9) return NULL;
    if (*s == '0' && s + 1 < end && (unsigned)(s[1] - '0') <= 9) return NULL; /* 007 */
    uint64_t m = 0;
    const char *q = tl_digit_run(s, end, &m);
    long nd = q - s, frac = 0;
    if (q < end && *q == '.') {
        const char *f = q + 1;
        q = tl_digit_run(f, end, &m);
        frac = q - f;
        if (!frac) return NULL; /* "1." */
        nd += frac;
    }
    if (nd > 19) { /* 0.0001234...: zeros before the first other digit cannot wrap m */
        if (*s != '0' || !frac) return NULL;
        const char *z = q - frac;
        while (z < q && *z == '0') z++;
        nd -= 1 + (z - (q - frac));
        if (nd > 19 || frac > 22) return NULL;
    }
    if (m > (1ULL << 53)) return NULL;
    if (q < end && (*q | 0x20) == 'e') return tl_scan_decimal_exp(q, end, m, -frac, s != p, out);
    double v = frac ? (double)m / tl_pow10_exact[frac] : (double)m;
    *out = s != p ? -v : v;
    return q;
}

#endif
