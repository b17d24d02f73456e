/* Helpers the benchmark programs share. */
#ifndef TL_BENCH_H
#define TL_BENCH_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "parsers/parser.h"

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

/* The whole file in memory (exits on failure); *n its size. */
static inline char *bench_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(len > 0 ? (size_t)len : 1);
    if (!buf || len < 0 || fread(buf, 1, (size_t)len, f) != (size_t)len) exit(1);
    fclose(f);
    *n = (size_t)len;
    return buf;
}

/* One pass of parser p over buf, fed in 256 KiB pieces as the reader does,
 * through a fresh instance; returns the records delivered. kinds: the
 * record kinds asked for (struct tl_emit), 0 = all. */
static inline size_t bench_parse(const struct tl_parser *p, const char *buf, size_t n,
                                 void (*on_reject)(void *, uint64_t, enum tl_reject, const char *),
                                 uint32_t kinds)
{
    struct tl_parser_inst inst;
    size_t records = 0;
    struct tl_emit emit = {bench_count_record, on_reject, &records, kinds};
    if (tl_parser_inst_init(&inst, p) || tl_parser_inst_open(&inst, &emit, NULL, 0)) exit(1);
    for (size_t off = 0; off < n; off += 256 * 1024)
        p->feed(inst.state, buf + off, n - off < 256 * 1024 ? n - off : 256 * 1024);
    p->finish(inst.state);
    tl_parser_inst_free(&inst);
    return records;
}

#endif
