/* core/sketch: the relative-error guarantee, merges, collapse, bytes.
 *
 * Property: on lognormal, Pareto(1.1), bimodal, uniform, constant and
 * all-zero data spanning 1e-6 .. 1e9, with n up to 10 million (TL_SKETCH_BIG_N
 * to change), every quantile in Q is within alpha (relative) of the exact
 * value at sorted position floor(q(n-1)) or ceil(q(n-1)). */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantile.h"
#include "core/sketch.h"

static const double Q[] = {0, .001, .01, .05, .25, .32, .5, .68, .75, .95, .99, .999, 1};
#define NQ (sizeof Q / sizeof *Q)

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static double uniform01(void)
{
    return ((next_u64() >> 11) + 0.5) * 0x1p-53; /* (0, 1) */
}
static double normal(void)
{
    return sqrt(-2 * log(uniform01())) * cos(2 * M_PI * uniform01());
}

enum dist { LOGNORMAL, PARETO, BIMODAL, UNIFORM, CONSTANT, ZEROS, WIDE, NDIST };
static const char *const dist_name[] = {"lognormal", "pareto1.1", "bimodal", "uniform",
                                        "constant",  "all-zero",  "1e-6..1e9"};

static double draw(enum dist d)
{
    switch (d) {
    case LOGNORMAL: return exp(2.0 + 1.5 * normal());
    case PARETO: {
        double x = 1e-3 / pow(uniform01(), 1 / 1.1);
        return x > 1e9 ? 1e9 : x;
    }
    case BIMODAL: return uniform01() < 0.7 ? 0.5 + 0.01 * normal() * 0.5 + 0.01 : 3e4 * (1 + 0.1 * uniform01());
    case UNIFORM: return 100 * uniform01();
    case CONSTANT: return 42.125;
    case ZEROS: return 0;
    case WIDE: return pow(10, -6 + 15 * uniform01()); /* 1e-6 .. 1e9 */
    default: return 1;
    }
}

static int within(double est, const double *x, size_t n, double q, double alpha)
{
    double rank = q * (double)(n - 1);
    size_t lo = (size_t)floor(rank), hi = (size_t)ceil(rank);
    double tol = 1e-12; /* rounding in the bucket bounds, far below alpha */
    return fabs(est - x[lo]) <= (alpha + tol) * x[lo] || fabs(est - x[hi]) <= (alpha + tol) * x[hi];
}

static void property(enum dist d, size_t n, const struct tl_sketch_opts *o)
{
    struct tl_sketch s;
    CHECK_EQ_INT(tl_sketch_init(&s, o), TL_OK);
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        x[i] = draw(d);
        tl_sketch_add(&s, x[i]);
    }
    tl_sort_doubles(x, n);
    double alpha = tl_sketch_alpha(&s);
    CHECK(!tl_sketch_is_exact(&s));
    CHECK(alpha >= o->alpha);
    int bad = 0;
    for (size_t i = 0; i < NQ; i++) {
        double est = tl_sketch_quantile(&s, Q[i]);
        if (!within(est, x, n, Q[i], alpha)) {
            if (bad++ < 3)
                fprintf(stderr, "%s n=%zu q=%g: %.17g vs exact %.17g (alpha %g)\n", dist_name[d], n,
                        Q[i], est, x[(size_t)floor(Q[i] * (n - 1))], alpha);
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(s.count, n);
    CHECK(s.min == x[0] && s.max == x[n - 1]);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += x[i];
    CHECK_NEAR(tl_sketch_sum(&s), sum, 1e-9);
    printf("  %-10s n=%-9zu buckets=%-5u collapses=%u alpha=%.4g\n", dist_name[d], n, s.nbuckets,
           s.collapses, alpha);
    free(x);
    tl_sketch_free(&s);
}

/* Bucket contents as a comparable list: (index, count) of non-empty ones. */
static int same_buckets(const struct tl_sketch *a, const struct tl_sketch *b)
{
    if (a->count != b->count || a->zero_count != b->zero_count || a->collapses != b->collapses ||
        a->min != b->min || a->max != b->max)
        return 0;
    uint32_t i = 0, j = 0;
    for (;;) {
        while (i < a->nbuckets && !a->counts[i]) i++;
        while (j < b->nbuckets && !b->counts[j]) j++;
        if (i == a->nbuckets || j == b->nbuckets) return i == a->nbuckets && j == b->nbuckets;
        if (a->offset + i != b->offset + j || a->counts[i] != b->counts[j]) return 0;
        i++;
        j++;
    }
}

static void merges(size_t k, uint32_t max_buckets)
{
    struct tl_sketch_opts o = {0.005, 1e-9, max_buckets, 0};
    size_t n = 200000;
    struct tl_sketch whole, merged, *parts = calloc(k, sizeof *parts);
    tl_sketch_init(&whole, &o);
    tl_sketch_init(&merged, &o);
    for (size_t i = 0; i < k; i++) tl_sketch_init(&parts[i], &o);
    for (size_t i = 0; i < n; i++) {
        double v = draw(i % 3 ? WIDE : LOGNORMAL);
        tl_sketch_add(&whole, v);
        tl_sketch_add(&parts[next_u64() % k], v);
    }
    for (size_t i = 0; i < k; i++) CHECK_EQ_INT(tl_sketch_merge(&merged, &parts[i]), TL_OK);
    CHECK(same_buckets(&merged, &whole));
    CHECK_NEAR(tl_sketch_sum(&merged), tl_sketch_sum(&whole), 1e-12);
    /* commutative and associative on three parts */
    if (k >= 3) {
        struct tl_sketch ab, ba, ab_c, bc, a_bc;
        tl_sketch_init(&ab, &o);
        tl_sketch_init(&ba, &o);
        tl_sketch_init(&bc, &o);
        tl_sketch_merge(&ab, &parts[0]);
        tl_sketch_merge(&ab, &parts[1]);
        tl_sketch_merge(&ba, &parts[1]);
        tl_sketch_merge(&ba, &parts[0]);
        CHECK(same_buckets(&ab, &ba));
        tl_sketch_init(&ab_c, &o);
        tl_sketch_merge(&ab_c, &ab);
        tl_sketch_merge(&ab_c, &parts[2]);
        tl_sketch_merge(&bc, &parts[1]);
        tl_sketch_merge(&bc, &parts[2]);
        tl_sketch_init(&a_bc, &o);
        tl_sketch_merge(&a_bc, &parts[0]);
        tl_sketch_merge(&a_bc, &bc);
        CHECK(same_buckets(&ab_c, &a_bc));
        tl_sketch_free(&ab);
        tl_sketch_free(&ba);
        tl_sketch_free(&bc);
        tl_sketch_free(&ab_c);
        tl_sketch_free(&a_bc);
    }
    printf("  merge k=%-4zu max_buckets=%-5u collapses=%u: %s\n", k, max_buckets, merged.collapses,
           same_buckets(&merged, &whole) ? "same buckets as one sketch" : "DIFFERENT");
    for (size_t i = 0; i < k; i++) tl_sketch_free(&parts[i]);
    free(parts);
    tl_sketch_free(&whole);
    tl_sketch_free(&merged);
}

static void buckets_respect_gamma(void)
{
    struct tl_sketch_opts o = TL_SKETCH_DEFAULT_OPTS;
    struct tl_sketch s;
    tl_sketch_init(&s, &o);
    double gamma = (1 + o.alpha) / (1 - o.alpha);
    double worst = 0;
    int outside = 0;
    for (int i = 0; i < 200000; i++) {
        double v = pow(10, -8 + 17 * uniform01());
        int64_t k = tl_sketch_index(&s, v);
        double lo, hi;
        tl_sketch_bucket_bounds(&s, k, &lo, &hi);
        if (hi / lo > worst) worst = hi / lo;
        if (!(v >= lo * (1 - 1e-14) && v <= hi * (1 + 1e-14))) outside++;
    }
    CHECK(worst <= gamma);
    CHECK_EQ_INT(outside, 0);
    printf("  widest bucket hi/lo = %.9f <= gamma = %.9f\n", worst, gamma);
    /* the full 1 us .. 1e6 s range at alpha 0.005 fits the default cap */
    int64_t span = tl_sketch_index(&s, 1e6) - tl_sketch_index(&s, 1e-6) + 1;
    printf("  1e-6 .. 1e6 spans %lld buckets\n", (long long)span);
    CHECK(span <= 4096);
    tl_sketch_free(&s);
}

static void exact_mode(void)
{
    struct tl_sketch_opts o = {0.005, 1e-9, 4096, 1000};
    struct tl_sketch s;
    tl_sketch_init(&s, &o);
    double x[1000];
    for (int i = 0; i < 1000; i++) {
        x[i] = draw(LOGNORMAL);
        tl_sketch_add(&s, x[i]);
    }
    tl_sort_doubles(x, 1000);
    CHECK(tl_sketch_is_exact(&s));
    CHECK(tl_sketch_alpha(&s) == 0);
    for (size_t i = 0; i < NQ; i++)
        CHECK(tl_sketch_quantile(&s, Q[i]) == tl_quantile_sorted(x, 1000, Q[i]));
    tl_sketch_add(&s, 1.0); /* one past the limit: the sketch answers */
    CHECK(!tl_sketch_is_exact(&s));
    CHECK(tl_sketch_alpha(&s) > 0);
    CHECK(s.exact == NULL);
    /* rejected inputs are counted, not bucketed */
    CHECK_EQ_INT(tl_sketch_add(&s, NAN), TL_ERR_USAGE);
    CHECK_EQ_INT(tl_sketch_add(&s, INFINITY), TL_ERR_USAGE);
    CHECK_EQ_INT(tl_sketch_add(&s, -INFINITY), TL_ERR_USAGE);
    CHECK_EQ_INT(s.rejected, 3);
    CHECK_EQ_INT(s.count, 1001);
    tl_sketch_free(&s);
}

/* How many of the serialized sketch's proper prefixes deserialize: every
 * truncation must be an error, never a crash. */
static int truncations_accepted(const struct tl_buf *buf)
{
    int accepted = 0;
    for (size_t cut = 0; cut < buf->len; cut++) {
        struct tl_sketch t;
        const uint8_t *q = (const uint8_t *)buf->data;
        if (tl_sketch_deserialize(&t, &q, q + cut) == TL_OK) {
            accepted++;
            tl_sketch_free(&t);
        }
    }
    return accepted;
}

/* Values of both signs (a memory counter's allocations and frees): every
 * one kept, exact while few, within alpha of the true rank's value past
 * that, through a merge and through bytes. */
static void signed_values(void)
{
    struct tl_sketch_opts o = {0.005, 1e-9, 4096, 100};
    enum { N = 20000 };
    static double x[N];
    struct tl_sketch a, b, whole;
    tl_sketch_init(&a, &o);
    tl_sketch_init(&b, &o);
    tl_sketch_init(&whole, &o);
    for (int i = 0; i < N; i++) {
        x[i] = (i % 2 ? -1 : 1) * draw(LOGNORMAL) * 4096;
        if (i % 7 == 0) x[i] = 0;
        CHECK_EQ_INT(tl_sketch_add(i < N / 3 ? &a : &b, x[i]), TL_OK);
        tl_sketch_add(&whole, x[i]);
        if (i == 50) { /* still exact: numpy's linear quantiles of what came */
            double y[51];
            memcpy(y, x, sizeof y);
            tl_sort_doubles(y, 51);
            for (size_t k = 0; k < NQ; k++) CHECK(tl_sketch_quantile(&a, Q[k]) == tl_quantile_sorted(y, 51, Q[k]));
        }
    }
    tl_sort_doubles(x, N);
    CHECK_EQ_INT(tl_sketch_merge(&a, &b), TL_OK);
    CHECK_EQ_INT(a.count, N);
    CHECK_EQ_INT(a.rejected, 0);
    CHECK(a.min == x[0] && a.max == x[N - 1]);
    int bad = 0;
    for (size_t k = 0; k < NQ; k++) {
        double r = Q[k] * (N - 1), lo = x[(size_t)floor(r)], hi = x[(size_t)ceil(r)];
        double est = tl_sketch_quantile(&a, Q[k]), tol = tl_sketch_alpha(&a) + 1e-12;
        bad += !(fabs(est - lo) <= tol * fabs(lo) || fabs(est - hi) <= tol * fabs(hi));
        bad += tl_sketch_quantile(&whole, Q[k]) != est; /* merged = one sketch of all */
    }
    CHECK_EQ_INT(bad, 0);
    struct tl_buf buf = {0};
    CHECK_EQ_INT(tl_sketch_serialize(&a, &buf), TL_OK);
    const uint8_t *p = (const uint8_t *)buf.data;
    struct tl_sketch c;
    CHECK_EQ_INT(tl_sketch_deserialize(&c, &p, p + buf.len), TL_OK);
    for (size_t k = 0; k < NQ; k++) CHECK(tl_sketch_quantile(&c, Q[k]) == tl_sketch_quantile(&a, Q[k]));
    CHECK_EQ_INT(truncations_accepted(&buf), 0);
    printf("  signed: %d values, half negative, exact then within alpha %.4g; merge and bytes agree\n",
           N, tl_sketch_alpha(&a));
    tl_buf_free(&buf);
    tl_sketch_free(&a);
    tl_sketch_free(&b);
    tl_sketch_free(&c);
    tl_sketch_free(&whole);
}

static void collapse_bound(void)
{
    struct tl_sketch_opts o = {0.005, 1e-9, 64, 0};
    size_t n = 100000;
    struct tl_sketch s;
    tl_sketch_init(&s, &o);
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        x[i] = draw(WIDE);
        tl_sketch_add(&s, x[i]);
    }
    tl_sort_doubles(x, n);
    CHECK(s.collapses >= 4);
    CHECK(s.nbuckets <= 64);
    double alpha = tl_sketch_alpha(&s);
    int bad = 0;
    for (size_t i = 0; i < NQ; i++) bad += !within(tl_sketch_quantile(&s, Q[i]), x, n, Q[i], alpha);
    CHECK_EQ_INT(bad, 0);
    printf("  collapse: %u collapses, %u buckets, reported alpha %.4g holds\n", s.collapses,
           s.nbuckets, alpha);
    free(x);
    tl_sketch_free(&s);
}

static void bytes(void)
{
    struct tl_sketch_opts o = {0.005, 1e-9, 4096, 50};
    struct tl_sketch a, b, exact, empty;
    tl_sketch_init(&a, &o);
    tl_sketch_init(&exact, &o);
    tl_sketch_init(&empty, &o);
    for (int i = 0; i < 100000; i++) tl_sketch_add(&a, pow(10, -6 + 12 * uniform01()));
    tl_sketch_add(&a, 0);
    for (int i = 0; i < 20; i++) tl_sketch_add(&exact, draw(UNIFORM));
    struct tl_buf buf = {0}, buf2 = {0};
    CHECK_EQ_INT(tl_sketch_serialize(&a, &buf), TL_OK);
    printf("  full 1e-6..1e6 range at alpha 0.005: %zu bytes serialized, %u buckets in memory\n",
           buf.len, a.nbuckets);
    CHECK(buf.len <= 6 * 1024);
    const uint8_t *p = (const uint8_t *)buf.data;
    CHECK_EQ_INT(tl_sketch_deserialize(&b, &p, p + buf.len), TL_OK);
    CHECK(p == (const uint8_t *)buf.data + buf.len);
    tl_sketch_serialize(&b, &buf2);
    CHECK(buf.len == buf2.len && !memcmp(buf.data, buf2.data, buf.len));
    for (size_t i = 0; i < NQ; i++) CHECK(tl_sketch_quantile(&a, Q[i]) == tl_sketch_quantile(&b, Q[i]));
    CHECK(tl_sketch_sum(&a) == tl_sketch_sum(&b));

    /* every truncation is an error, never a crash */
    CHECK_EQ_INT(truncations_accepted(&buf), 0);
    /* flipped bytes: error or a consistent sketch, never a crash (ASan) */
    for (int i = 0; i < 2000; i++) {
        char *copy = malloc(buf.len);
        memcpy(copy, buf.data, buf.len);
        copy[next_u64() % buf.len] ^= (char)(1 + next_u64() % 255);
        struct tl_sketch t;
        const uint8_t *q = (const uint8_t *)copy;
        if (tl_sketch_deserialize(&t, &q, q + buf.len) == TL_OK) {
            tl_sketch_quantile(&t, 0.5);
            tl_sketch_free(&t);
        }
        free(copy);
    }

    /* many at once, in one zstd frame */
    const struct tl_sketch *many[3] = {&a, &exact, &empty};
    struct tl_buf packed = {0};
    CHECK_EQ_INT(tl_sketches_pack(many, 3, &packed), TL_OK);
    struct tl_sketch *v;
    size_t n;
    CHECK_EQ_INT(tl_sketches_unpack((const uint8_t *)packed.data, packed.len, &v, &n), TL_OK);
    CHECK_EQ_INT(n, 3);
    if (n == 3) {
        CHECK(same_buckets(&v[0], &a));
        CHECK(tl_sketch_is_exact(&v[1]));
        CHECK(tl_sketch_quantile(&v[1], 0.5) == tl_sketch_quantile(&exact, 0.5));
        CHECK_EQ_INT(v[2].count, 0);
        CHECK(isnan(tl_sketch_quantile(&v[2], 0.5)));
        for (size_t i = 0; i < n; i++) tl_sketch_free(&v[i]);
        free(v);
    }
    CHECK(tl_sketches_unpack((const uint8_t *)packed.data, packed.len - 1, &v, &n) != TL_OK);
    tl_buf_free(&packed);
    tl_buf_free(&buf);
    tl_buf_free(&buf2);
    tl_sketch_free(&a);
    tl_sketch_free(&b);
    tl_sketch_free(&exact);
    tl_sketch_free(&empty);
}

/* The histogram view: every value lies in the bucket it is counted in,
 * counts add up, and a bucket's label is the same text in two sketches of
 * the same alpha whatever else they hold (the fixed bounds that histogram
 * series sum across windows and instances). */
struct seen {
    double lo[8192], hi[8192];
    uint64_t n[8192];
    int64_t id[8192];
    size_t len;
};

static void collect(void *ctx, const struct tl_sketch_bucket *b)
{
    struct seen *s = ctx;
    if (s->len < 8192) {
        tl_sketch_bucket_range(b, &s->lo[s->len], &s->hi[s->len]);
        s->id[s->len] = b->id;
        s->n[s->len++] = b->n;
    }
}

static uint64_t counted_in(const struct seen *s, double v)
{
    for (size_t i = 0; i < s->len; i++)
        if (v >= s->lo[i] && v < s->hi[i]) return s->n[i];
    return 0;
}

static void fixed_buckets(void)
{
    struct tl_sketch_opts o = {0.005, 1e-9, 4096, 0};
    struct tl_sketch a, b;
    tl_sketch_init(&a, &o);
    tl_sketch_init(&b, &o);
    double va[] = {0, 1e-3, 0.5, 1, 1, 2.5, 1e6, -3, -3e-12};
    for (size_t i = 0; i < sizeof va / sizeof *va; i++) tl_sketch_add(&a, va[i]);
    for (int i = 0; i < 5000; i++) tl_sketch_add(&b, draw(LOGNORMAL));
    tl_sketch_add(&b, 2.5);
    static struct seen sa, sb;
    tl_sketch_each_bucket(&a, collect, &sa);
    tl_sketch_each_bucket(&b, collect, &sb);
    uint64_t total = 0;
    for (size_t i = 0; i < sa.len; i++) {
        total += sa.n[i];
        CHECK(sa.lo[i] < sa.hi[i] && (i == 0 || sa.hi[i - 1] <= sa.lo[i]));
    }
    CHECK(total == a.count);
    for (size_t i = 0; i < sizeof va / sizeof *va; i++) CHECK(counted_in(&sa, va[i]) > 0);
    CHECK(counted_in(&sa, 1) == 2);
    /* 2.5's bucket: the same bounds, the same label, in both */
    char la[80], lb[80];
    int found = 0;
    for (size_t i = 0; i < sa.len; i++)
        for (size_t j = 0; j < sb.len; j++)
            if (sa.lo[i] <= 2.5 && 2.5 < sa.hi[i] && sb.lo[j] <= 2.5 && 2.5 < sb.hi[j]) {
                CHECK(sa.lo[i] == sb.lo[j] && sa.hi[i] == sb.hi[j] && sa.id[i] == sb.id[j]);
                tl_sketch_range_label(&a, sa.lo[i], sa.hi[i], la, sizeof la);
                tl_sketch_range_label(&b, sb.lo[j], sb.hi[j], lb, sizeof lb);
                CHECK(!strcmp(la, lb));
                found++;
            }
    CHECK(found == 1);
    /* neighbours' labels differ, and a label reads back within alpha */
    for (size_t i = 1; i < sb.len; i++) {
        tl_sketch_range_label(&b, sb.lo[i - 1], sb.hi[i - 1], la, sizeof la);
        tl_sketch_range_label(&b, sb.lo[i], sb.hi[i], lb, sizeof lb);
        CHECK(strcmp(la, lb) != 0);
        /* a lower bound is never the previous upper bound's text (VictoriaMetrics pins
         * the lower bound of a bucket only then), but the same number within 1e-4 */
        const char *prev_hi = strstr(la, "...") + 3;
        CHECK(strncmp(lb, prev_hi, strlen(prev_hi)) != 0 || lb[strlen(prev_hi)] != '.');
        CHECK(fabs(strtod(lb, NULL) - strtod(prev_hi, NULL)) <= 1e-4 * strtod(prev_hi, NULL) ||
              sb.hi[i - 1] != sb.lo[i]);
        double lo = strtod(lb, NULL);
        CHECK(fabs(lo - sb.lo[i]) <= 1e-4 * sb.lo[i]);
    }
    printf("  fixed buckets: %zu and %zu buckets, labels like %s\n", sa.len, sb.len, lb);
    tl_sketch_free(&a);
    tl_sketch_free(&b);
}

/* A collapsed sketch still gives level-0 buckets: each within the
 * collapsed bound of its values. */
static void fixed_buckets_collapsed(void)
{
    struct tl_sketch_opts o = {0.005, 1e-9, 64, 0};
    struct tl_sketch s;
    tl_sketch_init(&s, &o);
    for (int i = 0; i < 1000; i++) tl_sketch_add(&s, draw(WIDE));
    CHECK(s.collapses > 0);
    static struct seen sc;
    tl_sketch_each_bucket(&s, collect, &sc);
    uint64_t total = 0;
    double gamma = (1 + 0.005) / (1 - 0.005);
    for (size_t i = 0; i < sc.len; i++) {
        total += sc.n[i];
        CHECK(sc.hi[i] / sc.lo[i] <= gamma * (1 + 1e-6));
    }
    CHECK(total == s.count);
    tl_sketch_free(&s);
}

int main(void)
{
    const char *big = getenv("TL_SKETCH_BIG_N");
    size_t big_n = big ? (size_t)atoll(big) : 10000000;
    struct tl_sketch_opts o = {0.005, 1e-9, 4096, 0};
    printf("property (alpha 0.005, sketch only):\n");
    for (int d = 0; d < NDIST; d++) {
        property((enum dist)d, 1, &o);
        property((enum dist)d, 1000, &o);
        property((enum dist)d, 100000, &o);
    }
    property(LOGNORMAL, big_n, &o);
    property(WIDE, big_n, &o);
    struct tl_sketch_opts coarse = {0.02, 1e-9, 4096, 0};
    property(PARETO, 100000, &coarse);
    printf("buckets:\n");
    buckets_respect_gamma();
    printf("merges:\n");
    merges(2, 4096);
    merges(10, 4096);
    merges(1000, 4096);
    merges(10, 128); /* parts collapse at different moments */
    printf("exact mode, collapse, bytes:\n");
    exact_mode();
    signed_values();
    collapse_bound();
    bytes();
    printf("histogram view:\n");
    fixed_buckets();
    fixed_buckets_collapsed();
    return check_done("test_sketch");
}
