/* DASF's "Task balance" table (dasf_balance.c), from a trace read with
 * dasf.clock=monotonic so the seconds are DASF's. */
#ifndef TL_PARSERS_DASF_BALANCE_H
#define TL_PARSERS_DASF_BALANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/record.h"

struct tl_dasf_balance;

struct tl_dasf_balance *tl_dasf_balance_new(void);
/* A record callback (ctx = the table): Managed Memory samples count. */
void tl_dasf_balance_add(void *ctx, const struct tl_record *r);
/* Out of memory on the way: the table is not whole. */
bool tl_dasf_balance_failed(const struct tl_dasf_balance *b);
void tl_dasf_balance_free(struct tl_dasf_balance *b);

/* The table: workers in name order (borrowed from the balance); rows of
 * (seconds since the first, tasks per worker). */
struct tl_dasf_balance_table {
    const char **workers;
    size_t nworkers;
    int64_t *seconds;
    double *tasks; /* [row * nworkers + worker] */
    size_t nrows;
};
bool tl_dasf_balance_table(const struct tl_dasf_balance *b, struct tl_dasf_balance_table *t);
void tl_dasf_balance_table_free(struct tl_dasf_balance_table *t);

#endif
