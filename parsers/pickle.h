/* A restricted reader of Python pickles (protocols 2-5), for files that are
 * a pickle of plain data: line_profiler's `.lprof` (a LineStats object
 * whose state is a dict of tuples, lists, strings, ints and floats).
 *
 * It runs the pickle machine's data opcodes only: strings, numbers, None
 * and booleans, tuples, lists, dicts, the memo, marks. GLOBAL / STACK_GLOBAL
 * name a class and NEWOBJ / REDUCE / BUILD make an opaque object holding
 * that name and its state: nothing is imported or called, so a hostile
 * file cannot run code. Any other opcode stops the read with a reason.
 * Memory is bounded by the input: every opcode makes at most one value. */
#ifndef TL_PARSERS_PICKLE_H
#define TL_PARSERS_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tl_pk_type {
    TL_PK_NONE, TL_PK_BOOL, TL_PK_INT, TL_PK_FLOAT, TL_PK_STR, TL_PK_TUPLE, TL_PK_LIST,
    TL_PK_DICT, TL_PK_GLOBAL, TL_PK_OBJECT
};

struct tl_pk_value {
    uint8_t type;
    int64_t i;       /* INT, BOOL */
    double f;        /* FLOAT */
    uint32_t off, len; /* STR: bytes in the input; GLOBAL: "module.name" in names */
    uint32_t head, tail, n; /* containers: chunks of items (dict: key, value, ...) */
    uint32_t cls, state;    /* OBJECT: its GLOBAL, and what BUILD gave it (0: none) */
};

struct tl_pickle {
    const char *data; /* the input */
    size_t len;
    struct tl_pk_value *v; /* v[0] is unused: 0 means none */
    uint32_t nv, capv;
    uint32_t *cells; /* container items, by chunk */
    uint32_t ncells, capcells;
    struct { uint32_t first, n, next; } *chunks;
    uint32_t nchunks, capchunks;
    char *names; /* GLOBAL names */
    uint32_t nnames, capnames;
    uint32_t root;
    size_t used, max_bytes; /* bytes of the arrays above, and their cap */
    bool over_budget;
    char error[128];
};

/* Reads a whole pickle, its values, stack and memo taking at most
 * max_bytes; false with p->error set. The values point into data, which
 * must stay until tl_pickle_free. */
bool tl_pickle_read(struct tl_pickle *p, const char *data, size_t len, size_t max_bytes);
void tl_pickle_free(struct tl_pickle *p);

/* Items of a container, in order: *it starts at 0; returns the next value
 * id, 0 at the end. */
uint32_t tl_pickle_next(const struct tl_pickle *p, const struct tl_pk_value *c, uint32_t *chunk,
                        uint32_t *i);
/* The item at index k of a tuple (0 when short). */
uint32_t tl_pickle_item(const struct tl_pickle *p, uint32_t tuple, uint32_t k);
/* A dict's value for a str key (0 when absent). */
uint32_t tl_pickle_get(const struct tl_pickle *p, uint32_t dict, const char *key);
/* A GLOBAL's "module.name". */
static inline const char *tl_pickle_global(const struct tl_pickle *p, uint32_t g)
{
    return p->names + p->v[g].off;
}
/* An INT or FLOAT as a double; false otherwise. */
bool tl_pickle_number(const struct tl_pickle *p, uint32_t id, double *out);

#endif
