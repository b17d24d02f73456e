/* One parser alone, in memory, no I/O: lines/s and MB/s, best of N.
 *   parse_bench PARSER FILE [ROUNDS [all|agg]]      (ROUNDS=1 for callgrind)
 * The file is read once; each round feeds it in 256 KiB pieces, as the
 * reader does, to a fresh parser instance whose records are only counted.
 * all (default): every record kind, as `lines` and `run` ask; agg: only the
 * kinds the aggregator uses, as `summary` asks (TL_AGG_KINDS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/aggregate.h"
#include "parsers/parser.h"

#include "bench.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: parse_bench wq|chrome|lsst FILE [ROUNDS [all|agg]]\n");
        return 2;
    }
    const struct tl_parser *p = tl_parser_find(argv[1]);
    if (!p) return 2;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    uint32_t kinds = argc > 4 && !strcmp(argv[4], "agg") ? TL_AGG_KINDS : 0;
    size_t n;
    char *buf = bench_slurp(argv[2], &n);
    size_t lines = 0;
    for (const char *q = buf, *end = buf + n; (q = memchr(q, '\n', (size_t)(end - q))); q++) lines++;

    double best = 1e9;
    size_t records = 0;
    for (int round = 0; round < rounds; round++) {
        double t0 = bench_now();
        records = bench_parse(p, buf, n, NULL, kinds);
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    printf("%s%s: %zu lines, %.1f MB, %zu records; best of %d: %.3f s, %.2f M lines/s, %.0f MB/s\n",
           argv[1], kinds ? " (agg kinds)" : "", lines, n / 1e6, records, rounds, best, lines / best / 1e6, n / best / 1e6);
    free(buf);
    return 0;
}
