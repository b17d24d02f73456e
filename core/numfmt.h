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

/* Returns the length written (excluding NUL); cap must be >= 32 (the
 * longest is 24 characters). */
size_t tl_fmt_double(char *buf, size_t cap, double v);
/* Writes v in decimal and a NUL: at most 21 bytes. Returns the length. */
size_t tl_fmt_i64(char *buf, int64_t v);

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
#endif

/* Parses a JSON-style number occupying exactly [p, end); also accepts
 * "nan", "inf", "-inf". Same result as strtod, bit for bit. */
bool tl_parse_double(const char *p, const char *end, double *out);
/* Parses the number that starts at p; returns where it ends, or NULL. */
const char *tl_scan_double(const char *p, const char *end, double *out);

#endif
