/* Why the Chrome trace parser scans events by hand.
 *
 * Same decompressed trace, same machine:
 *   A) the approach the issue offered first: a minimal container scan to
 *      each event's '{', then Jansson's json_loadb(JSON_DISABLE_EOF_CHECK)
 *      on the event and lookups of ph, name, ts, dur, pid, tid (no records,
 *      no state: a lower bound on that design's cost);
 *   B) tasklens's chrome parser, fed 256 KiB at a time, records emitted to
 *      a counter.
 * Prints MB/s for each, best of 5.
 *   chrome_bench TRACE.json */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parsers/parser.h"

#include "bench.h"

static void no_reject(void *ctx, uint64_t line, enum tl_reject why, const char *d)
{
    (void)ctx, (void)line, (void)why, (void)d;
}

/* A: events located by a bracket scan, each loaded by Jansson. */
static size_t jansson_pass(const char *p, size_t n)
{
    const char *a = memmem(p, n, "\"traceEvents\"", 13);
    size_t i = a ? (size_t)(a - p) + 13 : 0, events = 0;
    while (i < n && p[i] != '[') i++;
    i++;
    while (i < n) {
        char c = p[i];
        if (c == ']') break;
        if (c != '{') {
            i++;
            continue;
        }
        json_error_t err;
        json_t *ev = json_loadb(p + i, n - i, JSON_DISABLE_EOF_CHECK, &err);
        if (!ev) break;
        i += (size_t)err.position;
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *name = json_string_value(json_object_get(ev, "name"));
        double ts = json_number_value(json_object_get(ev, "ts"));
        double dur = json_number_value(json_object_get(ev, "dur"));
        json_t *pid = json_object_get(ev, "pid"), *tid = json_object_get(ev, "tid");
        if (ph && name && ts >= 0 && dur >= 0 && (pid || tid)) events++;
        json_decref(ev);
    }
    return events;
}

static size_t tasklens_pass(const char *p, size_t n)
{
    return bench_parse(tl_parser_find("chrome"), p, n, no_reject, 0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: chrome_bench TRACE.json\n");
        return 2;
    }
    size_t n;
    char *p = bench_slurp(argv[1], &n);
    double best_a = 1e9, best_b = 1e9;
    size_t ea = 0, rb = 0;
    for (int k = 0; k < 5; k++) {
        double t0 = bench_now();
        ea = jansson_pass(p, (size_t)n);
        double t1 = bench_now();
        rb = tasklens_pass(p, (size_t)n);
        double t2 = bench_now();
        if (t1 - t0 < best_a) best_a = t1 - t0;
        if (t2 - t1 < best_b) best_b = t2 - t1;
    }
    double mb = (double)n / 1e6;
    printf("input %.1f MB\n", mb);
    printf("A jansson per event : %8.1f MB/s  (%zu events with ph/name/ts)\n", mb / best_a, ea);
    printf("B tasklens chrome   : %8.1f MB/s  (%zu records)\n", mb / best_b, rb);
    free(p);
    return 0;
}
