/* Sketch costs, beside the exact method on the same data in the same run.
 *
 *   insert: ns per value, median of 5 runs of N inserts (default 1e8) of
 *           lognormal values into a fresh sketch (alpha 0.005, no exact
 *           values kept); vs sorting the same N values (radix sort, as
 *           summary's exact path, and libc qsort), per value.
 *   size:   one sketch holding values over 1 us .. 1e6 s: serialized bytes,
 *           buckets, bytes in memory.
 *   merge:  1000 sketches of 10,000 lognormal values each merged into one;
 *           and two typical sketches merged, repeated.
 *   sketch_bench [N] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/quantile.h"
#include "core/sketch.h"

#include "bench.h"

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static double uniform01(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((rng >> 11) + 0.5) * 0x1p-53;
}
static double lognormal(void)
{
    return exp(1.0 + 1.2 * sqrt(-2 * log(uniform01())) * cos(2 * M_PI * uniform01()));
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_time(const void *a, const void *b)
{
    return cmpd(a, b);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atoll(argv[1]) : 100000000;
    struct tl_sketch_opts o = {0.005, 1e-9, 4096, 0};
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) x[i] = lognormal();

    double t[5];
    volatile double sink = 0;
    for (int r = 0; r < 5; r++) {
        struct tl_sketch s;
        tl_sketch_init(&s, &o);
        double t0 = bench_now();
        for (size_t i = 0; i < n; i++) tl_sketch_add(&s, x[i]);
        t[r] = (bench_now() - t0) / (double)n * 1e9;
        sink += tl_sketch_quantile(&s, 0.99);
        tl_sketch_free(&s);
    }
    qsort(t, 5, sizeof *t, cmp_time);
    printf("insert: %.2f ns/value (median of 5 x %zu; min %.2f, max %.2f)\n", t[2], n, t[0], t[4]);

    memcpy(y, x, n * sizeof *x);
    double t0 = bench_now();
    tl_sort_doubles(y, n);
    double radix = (bench_now() - t0) / (double)n * 1e9;
    size_t nq = n < 10000000 ? n : 10000000; /* qsort on 1e8 takes minutes */
    memcpy(y, x, nq * sizeof *x);
    t0 = bench_now();
    qsort(y, nq, sizeof *y, cmpd);
    double qs = (bench_now() - t0) / (double)nq * 1e9;
    printf("exact method, same data: radix sort %.2f ns/value (n=%zu), qsort %.2f ns/value (n=%zu)\n",
           radix, n, qs, nq);

    struct tl_sketch full;
    tl_sketch_init(&full, &o);
    for (int i = 0; i < 1000000; i++) tl_sketch_add(&full, pow(10, -6 + 12 * uniform01()));
    struct tl_buf b = {0};
    tl_sketch_serialize(&full, &b);
    printf("size, values over 1e-6..1e6: %zu bytes serialized, %u buckets, %zu bytes in memory\n",
           b.len, full.nbuckets, sizeof full + full.nbuckets * sizeof *full.counts);
    tl_buf_free(&b);
    tl_sketch_free(&full);

    enum { K = 1000, PER = 10000 };
    struct tl_sketch *parts = calloc(K, sizeof *parts);
    for (int k = 0; k < K; k++) {
        tl_sketch_init(&parts[k], &o);
        for (int i = 0; i < PER; i++) tl_sketch_add(&parts[k], lognormal());
    }
    struct tl_sketch all;
    tl_sketch_init(&all, &o);
    t0 = bench_now();
    for (int k = 0; k < K; k++) tl_sketch_merge(&all, &parts[k]);
    double merge_all = bench_now() - t0;
    printf("merge: 1000 sketches (10k values each, ~%u buckets) into one: %.3f ms, %.0f ns per merge\n",
           parts[0].nbuckets, merge_all * 1e3, merge_all / K * 1e9);
    /* two typical sketches, repeated: dst is a copy of parts[0] each time */
    int reps = 20000;
    double total = 0;
    for (int r = 0; r < reps; r++) {
        struct tl_sketch d;
        tl_sketch_init(&d, &o);
        tl_sketch_merge(&d, &parts[r % K]); /* d now holds one sketch */
        t0 = bench_now();
        tl_sketch_merge(&d, &parts[(r + 1) % K]);
        total += bench_now() - t0;
        tl_sketch_free(&d);
    }
    printf("merge of two typical sketches: %.0f ns (mean of %d)\n", total / reps * 1e9, reps);
    /* the same question answered exactly: concatenate and sort 1000 x 10k values */
    double *cat = malloc((size_t)K * PER * sizeof *cat);
    for (size_t i = 0; i < (size_t)K * PER; i++) cat[i] = x[i % n];
    t0 = bench_now();
    tl_sort_doubles(cat, (size_t)K * PER);
    printf("exact equivalent (sort the 1e7 values behind those sketches): %.3f ms\n", (bench_now() - t0) * 1e3);
    (void)sink;
    return 0;
}
