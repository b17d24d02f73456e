#include "map64.h"

#include <stdlib.h>
#include <string.h>

void tl_map64_free(struct tl_map64 *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

uint64_t *tl_map64_get(const struct tl_map64 *m, uint64_t key)
{
    if (!m->cap) return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = tl_mix64(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) return &m->vals[i];
        if (m->keys[i] == TL_MAP64_EMPTY) return NULL;
    }
}

static bool grow(struct tl_map64 *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint64_t *vals = malloc(cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return false;
    }
    memset(keys, 0xff, cap * sizeof *keys);
    for (size_t j = 0; j < m->cap; j++) {
        if (m->keys[j] == TL_MAP64_EMPTY) continue;
        size_t i = tl_mix64(m->keys[j]) & (cap - 1);
        while (keys[i] != TL_MAP64_EMPTY) i = (i + 1) & (cap - 1);
        keys[i] = m->keys[j];
        vals[i] = m->vals[j];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return true;
}

bool tl_map64_put(struct tl_map64 *m, uint64_t key, uint64_t val)
{
    if ((m->n + 1) * 4 > m->cap * 3 && !grow(m)) return false;
    size_t mask = m->cap - 1;
    size_t i = tl_mix64(key) & mask;
    while (m->keys[i] != TL_MAP64_EMPTY && m->keys[i] != key) i = (i + 1) & mask;
    if (m->keys[i] == TL_MAP64_EMPTY) m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
    return true;
}

bool tl_map64_del(struct tl_map64 *m, uint64_t key)
{
    if (!m->cap) return false;
    size_t mask = m->cap - 1;
    size_t i = tl_mix64(key) & mask;
    while (m->keys[i] != key) {
        if (m->keys[i] == TL_MAP64_EMPTY) return false;
        i = (i + 1) & mask;
    }
    /* Backward shift: pull later members of the probe run into the hole. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->keys[j] != TL_MAP64_EMPTY; j = (j + 1) & mask) {
        size_t home = tl_mix64(m->keys[j]) & mask;
        /* j may move to hole if home is not in (hole, j] cyclically. */
        bool between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!between) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->keys[hole] = TL_MAP64_EMPTY;
    m->n--;
    return true;
}
