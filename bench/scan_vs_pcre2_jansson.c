/* Why the Work Queue parser scans by hand.
 *
 * Same file, same machine, two ways of getting the fields out of every line:
 *   A) what the issue suggested first: a PCRE2 (JIT) match of the line
 *      grammar, then json_loadb (Jansson) on each {...} object and a lookup
 *      of every key -- close to a minimal parser built that way (it does not
 *      even keep task state);
 *   B) tasklens's wq parser (full parse, task state, records emitted).
 * Prints lines/s for each, best of 5.
 *   scan_vs_pcre2_jansson LOG */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <jansson.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parsers/parser.h"

#include "bench.h"

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    size_t n;
    char *buf = bench_slurp(argv[1], &n);
    size_t lines = 0;
    for (size_t i = 0; i < n; i++) lines += buf[i] == '\n';

    int err;
    PCRE2_SIZE erroff;
    pcre2_code *re = pcre2_compile(
        (PCRE2_SPTR) "^(\\d+) +(\\d+) +(TASK|WORKER|MANAGER|MASTER|TRANSFER|CATEGORY|LIBRARY) +(\\S+) *(\\S*)(.*)$",
        PCRE2_ZERO_TERMINATED, 0, &err, &erroff, NULL);
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);

    double best_a = 1e9, best_b = 1e9;
    size_t objects = 0, keys = 0, records = 0;
    for (int round = 0; round < 5; round++) {
        double t0 = bench_now();
        objects = keys = 0;
        for (char *p = buf, *end = buf + n; p < end;) {
            char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl) nl = end;
            if (pcre2_match(re, (PCRE2_SPTR)p, (size_t)(nl - p), 0, 0, md, NULL) > 0) {
                for (char *q = memchr(p, '{', (size_t)(nl - p)); q && q < nl;) {
                    char *e = memchr(q, ' ', (size_t)(nl - q));
                    if (!e) e = nl;
                    json_error_t je;
                    json_t *o = json_loadb(q, (size_t)(e - q), JSON_DECODE_ANY, &je);
                    if (o) {
                        objects++;
                        const char *k;
                        json_t *v;
                        json_object_foreach(o, k, v) {
                            json_t *x = json_array_get(v, 0);
                            if (x && json_number_value(x) >= 0) keys++;
                        }
                        json_decref(o);
                    }
                    q = e < nl ? memchr(e, '{', (size_t)(nl - e)) : NULL;
                }
            }
            p = nl + 1;
        }
        double ta = bench_now() - t0;
        if (ta < best_a) best_a = ta;

        t0 = bench_now();
        records = bench_parse(tl_parser_find("wq"), buf, n, NULL, 0);
        double tb = bench_now() - t0;
        if (tb < best_b) best_b = tb;
    }
    printf("%zu lines, %.1f MB\n", lines, n / 1e6);
    printf("A pcre2-jit + jansson : %6.3f s  %5.2f M lines/s  (%zu JSON objects, %zu keys)\n", best_a,
           lines / best_a / 1e6, objects, keys);
    printf("B tasklens wq parser  : %6.3f s  %5.2f M lines/s  (%zu records)\n", best_b,
           lines / best_b / 1e6, records);
    printf("B is %.1fx faster\n", best_a / best_b);
    return 0;
}
