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
/* Id if present, else -1; never inserts. */
int32_t tl_intern_find(const struct tl_intern *in, const char *s, size_t len);
const char *tl_intern_str(const struct tl_intern *in, int32_t id);
size_t tl_intern_len(const struct tl_intern *in, int32_t id);
size_t tl_intern_count(const struct tl_intern *in);

/* FNV-1a; good enough for names, and stable across runs (checkpoints). */
static inline uint64_t tl_hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

#endif
