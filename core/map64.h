/* Open-addressing hash map from uint64 keys to uint64 values.
 *
 * Linear probing with backward-shift deletion, so there are no tombstones and
 * a table that sees millions of inserts and deletes (the open-task table of a
 * long run) never degrades. The key UINT64_MAX is reserved as "empty". */
#ifndef TL_MAP64_H
#define TL_MAP64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TL_MAP64_EMPTY UINT64_MAX

struct tl_map64_slot {
    uint64_t key;
    uint64_t val;
};

/* Key and value share a slot: a lookup in a table too big for the cache
 * costs one miss, not two. */
struct tl_map64 {
    struct tl_map64_slot *slots;
    size_t cap; /* power of two, or 0 */
    size_t n;
};

void tl_map64_free(struct tl_map64 *m);
/* Pointer to the value for key, or NULL. */
uint64_t *tl_map64_get(const struct tl_map64 *m, uint64_t key);
/* Inserts or overwrites; false on allocation failure. */
bool tl_map64_put(struct tl_map64 *m, uint64_t key, uint64_t val);
bool tl_map64_del(struct tl_map64 *m, uint64_t key);

static inline uint64_t tl_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

#endif
