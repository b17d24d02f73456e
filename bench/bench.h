/* Helpers the benchmark programs share. */
#ifndef TL_BENCH_H
#define TL_BENCH_H

#include <stddef.h>
#include <time.h>

#include "parser.h"

/* Monotonic seconds. */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An emit callback that only counts records (ctx: size_t *). */
static inline void bench_count_record(void *ctx, const struct tl_record *r)
{
    (void)r;
    ++*(size_t *)ctx;
}

#endif
