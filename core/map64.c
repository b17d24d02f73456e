#include "core/map64.h"

#include <stdlib.h>
#include <string.h>

void tl_map64_free(struct tl_map64 *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

uint64_t *tl_map64_get(const struct tl_map64 *m, uint64_t key)
{
    if (!m->cap) return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = tl_mix64(key) & mask;; i = (i + 1) & mask) {
        if (m->slots[i].key == key) return &m->slots[i].val;
        if (m->slots[i].key == TL_MAP64_EMPTY) return NULL;
    }
}

static bool grow(struct tl_map64 *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    struct tl_map64_slot *slots = malloc(cap * sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < cap; i++) slots[i].key = TL_MAP64_EMPTY;
    for (size_t j = 0; j < m->cap; j++) {
        if (m->slots[j].key == TL_MAP64_EMPTY) continue;
        size_t i = tl_mix64(m->slots[j].key) & (cap - 1);
        while (slots[i].key != TL_MAP64_EMPTY) i = (i + 1) & (cap - 1);
        slots[i] = m->slots[j];
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return true;
}

bool tl_map64_put(struct tl_map64 *m, uint64_t key, uint64_t val)
{
    if ((m->n + 1) * 4 > m->cap * 3 && !grow(m)) return false;
    size_t mask = m->cap - 1;
    size_t i = tl_mix64(key) & mask;
    while (m->slots[i].key != TL_MAP64_EMPTY && m->slots[i].key != key) i = (i + 1) & mask;
    if (m->slots[i].key == TL_MAP64_EMPTY) m->n++;
    m->slots[i].key = key;
    m->slots[i].val = val;
    return true;
}

bool tl_map64_del(struct tl_map64 *m, uint64_t key)
{
    if (!m->cap) return false;
    size_t mask = m->cap - 1;
    size_t i = tl_mix64(key) & mask;
    while (m->slots[i].key != key) {
        if (m->slots[i].key == TL_MAP64_EMPTY) return false;
        i = (i + 1) & mask;
    }
    /* Backward shift: pull later members of the probe run into the hole. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->slots[j].key != TL_MAP64_EMPTY; j = (j + 1) & mask) {
        size_t home = tl_mix64(m->slots[j].key) & mask;
        /* j may move to hole if home is not in (hole, j] cyclically. */
        bool between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!between) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].key = TL_MAP64_EMPTY;
    m->n--;
    return true;
}
