/* String interning: each distinct name is stored once and gets a small id.
 *
 * Parsers intern categories, workers and hosts so that records carry stable
 * `const char *` without a per-line allocation, and so that per-task state
 * holds 4-byte ids instead of strings. Storage grows in chunks that never
 * move, so returned pointers stay valid until tl_intern_free.
 *
 * Memory is bounded: past max_bytes of names, tl_intern returns -1 and the
 * caller decides what the overflow means (usually: reject and count). */
#ifndef TL_INTERN_H
#define TL_INTERN_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

struct tl_intern;

struct tl_intern *tl_intern_new(size_t max_bytes);
void tl_intern_free(struct tl_intern *in);
/* Id of the string [s, s+len), inserting it if new; -1 when over the limit
 * or out of memory. */
int32_t tl_intern(struct tl_intern *in, const char *s, size_t len);
/* Whether a new name of len bytes is past the bound (tl_intern's -1 for
 * it then means the bound, not a lack of memory). */
bool tl_intern_full(const struct tl_intern *in, size_t len);
/* Id if present, else -1; never inserts. */
int32_t tl_intern_find(const struct tl_intern *in, const char *s, size_t len);
const char *tl_intern_str(const struct tl_intern *in, int32_t id);
size_t tl_intern_len(const struct tl_intern *in, int32_t id);
size_t tl_intern_count(const struct tl_intern *in);

/* Hash of a short string, 8 bytes per step; stable across runs and
 * machines of one endianness' worth of meaning (only used in memory). */
static inline uint64_t tl_hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    const bool whole = n >= 8;
    while (n >= 8) {
        uint64_t w;
        __builtin_memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
        s += 8;
        n -= 8;
    }
    /* the last n < 8 bytes as one little-endian word, s[0] lowest, read
     * in at most two loads that stay within the string */
    uint64_t w = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n && whole) { /* the 8 bytes that end the string, the part already hashed shifted out */
        __builtin_memcpy(&w, s + n - 8, 8);
        w >>= 8 * (8 - n);
    } else if (n >= 4) { /* two 4-byte loads that overlap: a shared byte lands in one place */
        uint32_t lo, hi;
        __builtin_memcpy(&lo, s, 4);
        __builtin_memcpy(&hi, s + n - 4, 4);
        w = lo | (uint64_t)hi << (8 * (n - 4));
    } else if (n >= 2) {
        uint16_t lo, hi;
        __builtin_memcpy(&lo, s, 2);
        __builtin_memcpy(&hi, s + n - 2, 2);
        w = lo | (uint64_t)hi << (8 * (n - 2));
    } else if (n) {
        w = s[0];
    }
#else
    (void)whole;
    for (size_t i = 0; i < n; i++) w |= (uint64_t)s[i] << (8 * i);
#endif
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return h;
}

#endif
