/* The two clocks the program reads: monotonic milliseconds for intervals
 * (flushes, retries, waits) and the wall clock in nanoseconds since the
 * epoch (what a live log's times are compared with). */
#ifndef TL_CLOCK_H
#define TL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t tl_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t tl_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
