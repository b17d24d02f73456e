/* One parser alone, in memory, no I/O: lines/s and MB/s, best of N.
 *   parse_bench PARSER FILE [ROUNDS]      (ROUNDS=1 for callgrind)
 * The file is read once; each round feeds it in 256 KiB pieces, as the
 * reader does, to a fresh parser instance whose records are only counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser.h"

#include "bench.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: parse_bench wq|chrome|lsst FILE [ROUNDS]\n");
        return 2;
    }
    const struct tl_parser *p = tl_parser_find(argv[1]);
    FILE *f = fopen(argv[2], "rb");
    if (!p || !f) return 1;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) return 1;
    fclose(f);
    size_t lines = 0;
    for (const char *q = buf, *end = buf + n; (q = memchr(q, '\n', (size_t)(end - q))); q++) lines++;

    double best = 1e9;
    size_t records = 0;
    for (int round = 0; round < rounds; round++) {
        struct tl_parser_inst inst;
        double t0 = bench_now();
        records = 0;
        tl_parser_inst_init(&inst, p);
        struct tl_emit emit = {bench_count_record, NULL, &records};
        tl_parser_inst_open(&inst, &emit);
        for (long off = 0; off < n; off += 256 * 1024)
            p->feed(inst.state, buf + off, (size_t)(n - off < 256 * 1024 ? n - off : 256 * 1024));
        p->finish(inst.state);
        tl_parser_inst_free(&inst);
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    printf("%s: %zu lines, %.1f MB, %zu records; best of %d: %.3f s, %.2f M lines/s, %.0f MB/s\n",
           argv[1], lines, n / 1e6, records, rounds, best, lines / best / 1e6, n / best / 1e6);
    free(buf);
    return 0;
}
