#include "core/intern.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE 65536

struct entry {
    const char *s;
    uint32_t len;
    uint32_t hash32;
};

struct chunk {
    struct chunk *next;
    size_t used, cap;
    char data[];
};

struct tl_intern {
    struct entry *entries; /* by id */
    size_t n, cap_entries;
    int32_t *slots; /* open addressing, -1 empty */
    size_t nslots;  /* power of two */
    struct chunk *chunks;
    size_t bytes, max_bytes;
};

struct tl_intern *tl_intern_new(size_t max_bytes)
{
    struct tl_intern *in = calloc(1, sizeof *in);
    if (!in) return NULL;
    in->nslots = 64;
    in->slots = malloc(in->nslots * sizeof *in->slots);
    if (!in->slots) {
        free(in);
        return NULL;
    }
    memset(in->slots, 0xff, in->nslots * sizeof *in->slots);
    in->max_bytes = max_bytes;
    return in;
}

void tl_intern_free(struct tl_intern *in)
{
    if (!in) return;
    for (struct chunk *c = in->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(in->entries);
    free(in->slots);
    free(in);
}

static size_t slot_of(const struct tl_intern *in, const char *s, size_t len, uint32_t h)
{
    size_t mask = in->nslots - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        int32_t id = in->slots[i];
        if (id < 0) return i;
        const struct entry *e = &in->entries[id];
        if (e->hash32 == h && e->len == len && memcmp(e->s, s, len) == 0) return i;
    }
}

int32_t tl_intern_find(const struct tl_intern *in, const char *s, size_t len)
{
    uint32_t h = (uint32_t)tl_hash_bytes(s, len);
    return in->slots[slot_of(in, s, len, h)];
}

static bool grow_slots(struct tl_intern *in)
{
    size_t n = in->nslots * 2;
    int32_t *slots = malloc(n * sizeof *slots);
    if (!slots) return false;
    memset(slots, 0xff, n * sizeof *slots);
    for (size_t id = 0; id < in->n; id++) {
        size_t i = in->entries[id].hash32 & (n - 1);
        while (slots[i] >= 0) i = (i + 1) & (n - 1);
        slots[i] = (int32_t)id;
    }
    free(in->slots);
    in->slots = slots;
    in->nslots = n;
    return true;
}

static char *store(struct tl_intern *in, const char *s, size_t len)
{
    struct chunk *c = in->chunks;
    if (!c || c->cap - c->used < len + 1) {
        size_t cap = len + 1 > CHUNK_SIZE ? len + 1 : CHUNK_SIZE;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = in->chunks;
        in->chunks = c;
    }
    char *p = c->data + c->used;
    memcpy(p, s, len);
    p[len] = '\0';
    c->used += len + 1;
    return p;
}

bool tl_intern_full(const struct tl_intern *in, size_t len)
{
    return in->bytes + len + 1 > in->max_bytes || in->n >= INT32_MAX - 1;
}

int32_t tl_intern(struct tl_intern *in, const char *s, size_t len)
{
    uint32_t h = (uint32_t)tl_hash_bytes(s, len);
    size_t slot = slot_of(in, s, len, h);
    if (in->slots[slot] >= 0) return in->slots[slot];
    if (tl_intern_full(in, len)) return -1;
    if ((in->n + 1) * 2 > in->nslots) {
        if (!grow_slots(in)) return -1;
        slot = slot_of(in, s, len, h);
    }
    if (in->n == in->cap_entries) {
        size_t cap = in->cap_entries ? in->cap_entries * 2 : 32;
        struct entry *e = realloc(in->entries, cap * sizeof *e);
        if (!e) return -1;
        in->entries = e;
        in->cap_entries = cap;
    }
    char *copy = store(in, s, len);
    if (!copy) return -1;
    int32_t id = (int32_t)in->n++;
    in->entries[id] = (struct entry){copy, (uint32_t)len, h};
    in->slots[slot] = id;
    in->bytes += len + 1;
    return id;
}

const char *tl_intern_str(const struct tl_intern *in, int32_t id)
{
    return id >= 0 && (size_t)id < in->n ? in->entries[id].s : NULL;
}

size_t tl_intern_len(const struct tl_intern *in, int32_t id)
{
    return id >= 0 && (size_t)id < in->n ? in->entries[id].len : 0;
}

size_t tl_intern_count(const struct tl_intern *in)
{
    return in->n;
}
