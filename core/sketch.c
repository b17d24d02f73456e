/* Mergeable quantile sketch: see sketch.h for the design and the bound.
 *
 * Bucket index at collapse level c is floor(M0 * L(v)) >> c, so a level-c
 * index is always the level-0 index shifted: collapsing (k -> k >> 1) and
 * merging sketches of different levels are exact index arithmetic, with no
 * floating-point recomputation that could move a value across a boundary. */
#include "core/sketch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "core/quantile.h"
#include "core/zframe.h"

/* L(v) = e + P(m) for v = 2^e (1 + m): P(0) = 0, P(1) = 1, increasing. */
#define CUBIC_A (6.0 / 35.0)
#define CUBIC_B (-3.0 / 5.0)
#define CUBIC_C (10.0 / 7.0)
/* max over m of d log2(1+m) / dP(m) = 7 / (10 ln 2), at m = 0 */
#define SLOPE_MAX 1.0098865286222745
/* Keeps each bucket's hi/lo a hair under gamma, absorbing rounding in
 * the index computation. */
#define SLACK (1.0 + 1e-6)

#define SKETCH_MAGIC "TLSK"
#define SKETCH_VERSION 1
#define PACK_MAGIC "TLSP"
#define MAX_BUCKETS_LIMIT (1u << 22)

static double multiplier0(double alpha)
{
    double gamma = (1 + alpha) / (1 - alpha);
    return SLOPE_MAX * SLACK / log2(gamma);
}

static inline double cubic_l(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff) - 1023;
    uint64_t mbits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double m;
    memcpy(&m, &mbits, sizeof m);
    m -= 1.0;
    return (double)e + ((CUBIC_A * m + CUBIC_B) * m + CUBIC_C) * m;
}

/* Inverse of L: the v with L(v) = y. Newton on the cubic (monotone, smooth,
 * starts close): a few steps reach double precision. */
static double cubic_l_inv(double y)
{
    double e = floor(y), t = y - e;
    if (e > 1100) return INFINITY; /* outside doubles: only for corrupt input */
    if (e < -1100) return 0;
    double m = t;
    for (int i = 0; i < 8; i++) {
        double p = ((CUBIC_A * m + CUBIC_B) * m + CUBIC_C) * m - t;
        double dp = (3 * CUBIC_A * m + 2 * CUBIC_B) * m + CUBIC_C;
        double step = p / dp;
        m -= step;
        if (fabs(step) < 1e-17) break;
    }
    if (m < 0) m = 0;
    if (m > 1) m = 1;
    return ldexp(1.0 + m, (int)e);
}

enum tl_err tl_sketch_init(struct tl_sketch *s, const struct tl_sketch_opts *o)
{
    memset(s, 0, sizeof *s);
    /* alpha >= 1e-6 keeps every index (|L| <= 1024 times M) far inside int64 */
    if (!(o->alpha >= 1e-6 && o->alpha <= 0.5) || !(o->floor >= 1e-300 && o->floor <= 1e300) ||
        o->max_buckets < 16 || o->max_buckets > MAX_BUCKETS_LIMIT)
        return TL_ERR_USAGE;
    s->alpha0 = o->alpha;
    s->floor = o->floor;
    s->max_buckets = o->max_buckets;
    s->exact_limit = o->exact_limit;
    s->m0 = multiplier0(o->alpha);
    s->min = INFINITY;
    s->max = -INFINITY;
    s->kmin = INT64_MAX;
    s->kmax = INT64_MIN;
    s->exact_dropped = o->exact_limit == 0;
    return TL_OK;
}

void tl_sketch_free(struct tl_sketch *s)
{
    if (s->neg) tl_sketch_free(s->neg);
    free(s->neg);
    s->neg = NULL;
    free(s->counts);
    free(s->exact);
    s->counts = NULL;
    s->exact = NULL;
    s->nbuckets = s->nexact = s->cap_exact = 0;
}

void tl_sketch_reset(struct tl_sketch *s)
{
    struct tl_sketch_opts o = {s->alpha0, s->floor, s->max_buckets, s->exact_limit};
    tl_sketch_free(s);
    tl_sketch_init(s, &o);
}

/* floor(m0 L(v)) without a libm call or a compare: x is within +-2^29
 * (|L| <= 1075, m0 <= 3.6e5 for alpha >= 1e-6), so x + 2^30 is positive and
 * truncation is floor; the addition is exact while x has at most 22
 * fractional bits in play -- below that, SLACK in the multiplier absorbs a
 * boundary that moves by 2^-22. */
static inline int64_t index0(const struct tl_sketch *s, double v)
{
    double x = s->m0 * cubic_l(v);
    return (int64_t)(x + 1073741824.0) - 1073741824;
}

int64_t tl_sketch_index(const struct tl_sketch *s, double v)
{
    return index0(s, v) >> s->collapses;
}

void tl_sketch_bucket_bounds(const struct tl_sketch *s, int64_t k, double *lo, double *hi)
{
    double m0 = s->m0;
    double width = ldexp(1.0, (int)s->collapses);
    *lo = cubic_l_inv((double)k * width / m0);
    *hi = cubic_l_inv((double)(k + 1) * width / m0);
}

static double bucket_value(const struct tl_sketch *s, int64_t k)
{
    double lo, hi;
    tl_sketch_bucket_bounds(s, k, &lo, &hi);
    return 2 * lo * hi / (lo + hi);
}

/* The level-0 bucket holding bucket k of the current level: its middle
 * one, where the representative value lies. */
static int64_t level0_index(const struct tl_sketch *s, int64_t k)
{
    return s->collapses ? k * ((int64_t)1 << s->collapses) + ((int64_t)1 << (s->collapses - 1)) : k;
}

static void give(const struct tl_sketch *s, int64_t k0, int kind, uint64_t n, tl_sketch_bucket_cb cb,
                 void *ctx)
{
    struct tl_sketch_bucket b = {k0 * 4 + kind, n, s, k0, kind};
    cb(ctx, &b);
}

void tl_sketch_bucket_range(const struct tl_sketch_bucket *b, double *lo, double *hi)
{
    if (b->kind >= 2) { /* the zero buckets */
        *lo = b->kind == 2 ? 0 : -b->s->floor;
        *hi = b->kind == 2 ? b->s->floor : 0;
        return;
    }
    double l = cubic_l_inv((double)b->k0 / b->s->m0), h = cubic_l_inv((double)(b->k0 + 1) / b->s->m0);
    *lo = b->kind ? -h : l;
    *hi = b->kind ? -l : h;
}

static void each_positive(const struct tl_sketch *s, tl_sketch_bucket_cb cb, void *ctx)
{
    if (s->zero_count) give(s, 0, 2, s->zero_count, cb, ctx);
    for (int64_t k = s->kmin; k <= s->kmax; k++) {
        uint64_t n = s->counts[k - s->offset];
        if (n) give(s, level0_index(s, k), 0, n, cb, ctx);
    }
}

/* Negative values from the largest magnitude down, so values ascend. */
static void each_negative(const struct tl_sketch *n, tl_sketch_bucket_cb cb, void *ctx)
{
    for (int64_t k = n->kmax; k >= n->kmin; k--) {
        uint64_t c = n->counts[k - n->offset];
        if (c) give(n, level0_index(n, k), 1, c, cb, ctx);
    }
    if (n->zero_count) give(n, 0, 3, n->zero_count, cb, ctx);
}

void tl_sketch_each_bucket(const struct tl_sketch *s, tl_sketch_bucket_cb cb, void *ctx)
{
    if (s->neg) each_negative(s->neg, cb, ctx);
    each_positive(s, cb, ctx);
}

int tl_sketch_range_label(const struct tl_sketch *s, double lo, double hi, char *out, size_t cap)
{
    double gamma = (1 + s->alpha0) / (1 - s->alpha0);
    int digits = (int)ceil(-log10(gamma - 1)) + 2; /* 4 at alpha 0.005 */
    if (digits < 3) digits = 3;
    if (digits > 15) digits = 15;
    /* the lower bound one digit longer: VictoriaMetrics (1.79) pins a
     * bucket's lower bound only where it is not written as the previous
     * bucket's upper bound, and a neighbour that exists elsewhere in the
     * range (empty here) would otherwise move it down */
    int n = snprintf(out, cap, "%.*e...%.*e", digits + 1, lo, digits, hi);
    return n < 0 ? 0 : n >= (int)cap ? (int)cap - 1 : n;
}

/* Merges buckets pairwise once: k -> floor(k/2), gamma -> gamma^2. */
static enum tl_err collapse_once(struct tl_sketch *s)
{
    if (s->nbuckets) {
        int64_t lo = s->offset >> 1, hi = (s->offset + (int64_t)s->nbuckets - 1) >> 1;
        uint32_t n = (uint32_t)(hi - lo + 1);
        uint64_t *c = calloc(n, sizeof *c);
        if (!c) return TL_ERR_NOMEM;
        for (uint32_t i = 0; i < s->nbuckets; i++) c[((s->offset + i) >> 1) - lo] += s->counts[i];
        free(s->counts);
        s->counts = c;
        s->offset = lo;
        s->nbuckets = n;
    }
    if (s->kmin <= s->kmax) {
        s->kmin >>= 1;
        s->kmax >>= 1;
    }
    s->collapses++;
    return TL_OK;
}

/* Makes the bucket of level-0 index k0 addressable and returns its index
 * at the current level. Grows the dense array (with a little room in the
 * direction of growth); when the span would pass max_buckets, collapses
 * instead -- the only way the size is capped. */
__attribute__((noinline)) static enum tl_err ensure_bucket(struct tl_sketch *s, int64_t k0,
                                                           int64_t *kout)
{
    for (;;) {
        int64_t k = k0 >> s->collapses;
        /* Collapse on the span of the data, never of the padded array, so
         * the level depends only on the extremes seen -- not on the order
         * of inserts and merges. */
        int64_t dlo = s->kmin <= s->kmax && s->kmin < k ? s->kmin : k;
        int64_t dhi = s->kmin <= s->kmax && s->kmax > k ? s->kmax : k;
        if ((uint64_t)(dhi - dlo) >= s->max_buckets) {
            enum tl_err rc = collapse_once(s);
            if (rc) return rc;
            continue;
        }
        if (s->nbuckets && k >= s->offset && k < s->offset + (int64_t)s->nbuckets) {
            s->kmin = dlo;
            s->kmax = dhi;
            *kout = k;
            return TL_OK;
        }
        /* New array: the data span plus room on the side that grew (an
         * eighth of the span, at least 16: geometric growth at 12.5 % memory
         * overhead), within max_buckets. */
        int64_t room = (int64_t)s->max_buckets - (dhi - dlo + 1);
        int64_t want = (dhi - dlo + 1) / 8 > 16 ? (dhi - dlo + 1) / 8 : 16;
        if (room > want) room = want;
        int64_t lo = dlo, hi = dhi;
        if (s->nbuckets && k < s->offset) lo -= room;
        else hi += room;
        uint32_t n = (uint32_t)(hi - lo + 1);
        uint64_t *c = calloc(n, sizeof *c);
        if (!c) return TL_ERR_NOMEM; /* the data span as it was: the array covers it */
        for (uint32_t i = 0; i < s->nbuckets; i++)
            if (s->counts[i]) c[s->offset + i - lo] = s->counts[i];
        free(s->counts);
        s->counts = c;
        s->offset = lo;
        s->nbuckets = n;
        s->kmin = dlo;
        s->kmax = dhi;
        *kout = k;
        return TL_OK;
    }
}

void tl_sketch_drop_exact(struct tl_sketch *s)
{
    free(s->exact);
    s->exact = NULL;
    s->nexact = s->cap_exact = 0;
    s->exact_dropped = true;
}

static void add_sum(struct tl_sketch *s, double v)
{
    double t = s->sum + v;
    if (fabs(s->sum) >= fabs(v)) s->sum_c += (s->sum - t) + v;
    else s->sum_c += (v - t) + s->sum;
    s->sum = t;
}

static enum tl_err add_bucket_count(struct tl_sketch *s, double v, uint64_t n)
{
    if (v < s->floor) {
        s->zero_count += n;
        return TL_OK;
    }
    int64_t k0 = index0(s, v), k = k0 >> s->collapses;
    /* Fast path: inside the array. The array is never wider than
     * max_buckets, so the data span stays within the cap. */
    if (k >= s->offset && k < s->offset + (int64_t)s->nbuckets) {
        if (k < s->kmin) s->kmin = k;
        if (k > s->kmax) s->kmax = k;
    } else {
        enum tl_err rc = ensure_bucket(s, k0, &k);
        if (rc) return rc;
    }
    s->counts[k - s->offset] += n;
    return TL_OK;
}

/* Keeps v verbatim while the sketch is within exact_limit. */
__attribute__((noinline)) static void add_exact(struct tl_sketch *s, double v)
{
    if (s->count > s->exact_limit) {
        tl_sketch_drop_exact(s);
        return;
    }
    if (s->nexact == s->cap_exact) {
        uint32_t cap = s->cap_exact ? s->cap_exact * 2 : 16;
        if (cap > s->exact_limit) cap = s->exact_limit;
        double *e = realloc(s->exact, cap * sizeof *e);
        if (!e) {
            tl_sketch_drop_exact(s);
            return;
        }
        s->exact = e;
        s->cap_exact = cap;
    }
    s->exact[s->nexact++] = v;
    s->exact_sorted = false;
}

/* The negative part, made on first use: same accuracy, no verbatim values
 * (the parent keeps those for every value). */
static struct tl_sketch *negative_part(struct tl_sketch *s)
{
    if (s->neg) return s->neg;
    struct tl_sketch_opts o = {s->alpha0, s->floor, s->max_buckets, 0};
    struct tl_sketch *n = malloc(sizeof *n);
    if (!n || tl_sketch_init(n, &o)) {
        free(n);
        return NULL;
    }
    return s->neg = n;
}

/* A negative v: its magnitude into the negative part's buckets, which keep
 * their own count, min and max of magnitudes. */
__attribute__((noinline)) static enum tl_err add_negative(struct tl_sketch *s, double v)
{
    struct tl_sketch *n = negative_part(s);
    if (!n) return TL_ERR_NOMEM;
    enum tl_err rc = add_bucket_count(n, -v, 1);
    if (rc) return rc;
    n->count++;
    add_sum(n, -v);
    n->min = -v < n->min ? -v : n->min;
    n->max = -v > n->max ? -v : n->max;
    return TL_OK;
}

enum tl_err tl_sketch_add(struct tl_sketch *s, double v)
{
    enum tl_err rc;
    if (__builtin_expect(!(v >= 0 && v <= 1.7976931348623157e308), 0)) { /* <0, NaN, inf */
        if (!(v < 0 && v >= -1.7976931348623157e308)) {
            s->rejected++;
            return TL_ERR_USAGE;
        }
        rc = add_negative(s, v);
    } else {
        rc = add_bucket_count(s, v, 1);
    }
    if (__builtin_expect(rc != TL_OK, 0)) return rc;
    s->count++;
    add_sum(s, v);
    s->min = v < s->min ? v : s->min;
    s->max = v > s->max ? v : s->max;
    if (!s->exact_dropped) add_exact(s, v);
    return TL_OK;
}

enum tl_err tl_sketch_merge(struct tl_sketch *dst, const struct tl_sketch *src)
{
    if (dst->alpha0 != src->alpha0 || dst->floor != src->floor) return TL_ERR_USAGE;
    if (!src->count && !src->rejected) return TL_OK;
    enum tl_err rc;
    while (dst->collapses < src->collapses)
        if ((rc = collapse_once(dst))) return rc;
    /* A source bucket k at level c covers level-0 indexes [k 2^c, (k+1) 2^c). */
    int64_t scale = (int64_t)1 << src->collapses;
    if (src->kmin <= src->kmax) {
        /* Widen dst once for the source's data extremes (this may collapse
         * dst); every source bucket then lands inside dst's array. */
        int64_t k;
        if ((rc = ensure_bucket(dst, src->kmin * scale, &k)) ||
            (rc = ensure_bucket(dst, src->kmax * scale, &k)) ||
            (rc = ensure_bucket(dst, src->kmin * scale, &k)))
            return rc;
        uint32_t shift = dst->collapses - src->collapses;
        const uint64_t *from = src->counts + (src->kmin - src->offset);
        uint32_t n = (uint32_t)(src->kmax - src->kmin + 1);
        if (shift == 0) { /* same level: a straight, vectorizable add */
            uint64_t *to = dst->counts + (src->kmin - dst->offset);
            for (uint32_t i = 0; i < n; i++) to[i] += from[i];
        } else {
            for (uint32_t i = 0; i < n; i++)
                dst->counts[((src->kmin + i) >> shift) - dst->offset] += from[i];
        }
    }
    dst->zero_count += src->zero_count;
    /* exact values survive a merge while the union stays within the limit */
    if (!dst->exact_dropped) {
        if (src->exact_dropped || dst->count + src->count > dst->exact_limit) {
            tl_sketch_drop_exact(dst);
        } else if (src->nexact) {
            uint32_t need = dst->nexact + src->nexact;
            double *e = need > dst->cap_exact ? realloc(dst->exact, need * sizeof *e) : dst->exact;
            if (!e) {
                tl_sketch_drop_exact(dst);
            } else {
                dst->exact = e;
                if (need > dst->cap_exact) dst->cap_exact = need;
                memcpy(dst->exact + dst->nexact, src->exact, src->nexact * sizeof *e);
                dst->nexact = need;
                dst->exact_sorted = false;
            }
        }
    }
    if (src->neg) {
        if (!negative_part(dst)) return TL_ERR_NOMEM;
        if ((rc = tl_sketch_merge(dst->neg, src->neg))) return rc;
    }
    dst->count += src->count;
    dst->rejected += src->rejected;
    add_sum(dst, src->sum);
    add_sum(dst, src->sum_c);
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
    return TL_OK;
}

bool tl_sketch_is_exact(const struct tl_sketch *s)
{
    return !s->exact_dropped;
}

double tl_sketch_alpha(const struct tl_sketch *s)
{
    if (!s->exact_dropped) return 0;
    uint32_t c = s->neg && s->neg->collapses > s->collapses ? s->neg->collapses : s->collapses;
    if (!c) return s->alpha0;
    double g = (1 + s->alpha0) / (1 - s->alpha0);
    double gc = pow(g, ldexp(1.0, (int)c));
    return (gc - 1) / (gc + 1);
}

double tl_sketch_sum(const struct tl_sketch *s)
{
    return s->sum + s->sum_c;
}

/* The value at sorted position `rank` of the zero bucket and the buckets
 * (not the negative part): in the first bucket whose cumulative count
 * passes it, within the exact min and max. */
static double value_at_rank(const struct tl_sketch *s, uint64_t rank)
{
    double lo = s->neg ? 0 : s->min; /* with negatives, s->min is one of them */
    uint64_t cum = s->zero_count;
    if (rank < cum) return lo < s->floor ? lo : 0;
    for (uint32_t i = 0; i < s->nbuckets; i++) {
        cum += s->counts[i];
        if (rank < cum) {
            double v = bucket_value(s, s->offset + i);
            if (v < lo) v = lo;
            if (v > s->max) v = s->max;
            return v;
        }
    }
    return s->max;
}

double tl_sketch_quantile(struct tl_sketch *s, double q)
{
    if (!s->count) return NAN;
    if (!(q > 0)) return s->min;
    if (q >= 1) return s->max;
    if (!s->exact_dropped) {
        if (!s->exact_sorted) {
            tl_sort_doubles(s->exact, s->nexact);
            s->exact_sorted = true;
        }
        return tl_quantile_sorted(s->exact, s->nexact, q);
    }
    /* The value at sorted position floor(q (n-1)): the negative values
     * first (the largest magnitude first), then the zero bucket and the
     * positive buckets. */
    uint64_t target = (uint64_t)floor(q * (double)(s->count - 1));
    uint64_t nneg = s->neg ? s->neg->count : 0;
    if (target < nneg) return -value_at_rank(s->neg, nneg - 1 - target);
    return value_at_rank(s, target - nneg);
}

/* ---------------------------------------------------------------- bytes */

enum tl_err tl_sketch_serialize(const struct tl_sketch *s, struct tl_buf *out)
{
    tl_buf_append(out, SKETCH_MAGIC, 4);
    tl_put_u8(out, SKETCH_VERSION);
    tl_put_u8(out, (uint8_t)((s->exact_dropped ? 0 : 1) | (s->exact_sorted ? 2 : 0) | (s->neg ? 4 : 0)));
    tl_put_f64(out, s->alpha0);
    tl_put_f64(out, s->floor);
    tl_put_varint(out, s->max_buckets);
    tl_put_varint(out, s->exact_limit);
    tl_put_varint(out, s->collapses);
    tl_put_varint(out, s->count);
    tl_put_varint(out, s->rejected);
    tl_put_f64(out, s->sum);
    tl_put_f64(out, s->sum_c);
    tl_put_f64(out, s->min);
    tl_put_f64(out, s->max);
    tl_put_varint(out, s->zero_count);
    /* Buckets as runs of adjacent non-empty ones: per run the zigzag gap
     * from the previous run's end and the length; per bucket the zigzag
     * difference from the previous count (neighbours hold similar counts,
     * so most take one byte whatever the total). */
    uint64_t runs = 0;
    for (uint32_t i = 0; i < s->nbuckets; i++)
        if (s->counts[i] && (i == 0 || !s->counts[i - 1])) runs++;
    tl_put_varint(out, runs);
    int64_t prev_end = 0;
    uint64_t prev_count = 0;
    for (uint32_t i = 0; i < s->nbuckets;) {
        if (!s->counts[i]) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j < s->nbuckets && s->counts[j]) j++;
        tl_put_varint(out, tl_zigzag(s->offset + i - prev_end));
        tl_put_varint(out, j - i);
        for (uint32_t t = i; t < j; t++) {
            tl_put_varint(out, tl_zigzag((int64_t)(s->counts[t] - prev_count)));
            prev_count = s->counts[t];
        }
        prev_end = s->offset + j;
        i = j;
    }
    if (!s->exact_dropped) {
        tl_put_varint(out, s->nexact);
        for (uint32_t i = 0; i < s->nexact; i++) tl_put_f64(out, s->exact[i]);
    }
    if (s->neg) return tl_sketch_serialize(s->neg, out); /* flags & 4 */
    return out->oom ? TL_ERR_NOMEM : TL_OK;
}

/* The first pass over the bucket runs: validated, and their span found, so
 * the array that holds them is bounded before it is allocated. */
static bool bucket_span(const uint8_t *q, const uint8_t *end, uint64_t runs, uint64_t count,
                        uint64_t max_buckets, int64_t *lo, int64_t *hi, uint64_t *total)
{
    int64_t end_k = 0;
    uint64_t prev = 0;
    for (uint64_t r = 0; r < runs; r++) {
        uint64_t gz, len;
        if (!tl_get_varint(&q, end, &gz) || !tl_get_varint(&q, end, &len) || len == 0 ||
            len > max_buckets)
            return false;
        int64_t gap = tl_unzigzag(gz);
        if ((r && gap <= 0) || gap > (int64_t)1 << 40 || gap < -((int64_t)1 << 40)) return false;
        int64_t start = end_k + gap;
        if (!r) *lo = start;
        end_k = start + (int64_t)len;
        *hi = end_k - 1;
        if ((uint64_t)(*hi - *lo) >= max_buckets) return false;
        for (uint64_t t = 0; t < len; t++) {
            uint64_t dz;
            if (!tl_get_varint(&q, end, &dz)) return false;
            uint64_t c = prev + (uint64_t)tl_unzigzag(dz);
            if (c == 0 || c > count || *total > count - c) return false;
            *total += c;
            prev = c;
        }
    }
    return true;
}

/* The bucket runs (`runs` of them) into s; TL_ERR_CORRUPT or NOMEM. */
static enum tl_err read_buckets(struct tl_sketch *s, const uint8_t **pp, const uint8_t *end,
                                uint64_t runs, uint64_t max_buckets, uint64_t *total)
{
    int64_t lo = 0, hi = 0;
    if (!bucket_span(*pp, end, runs, s->count, max_buckets, &lo, &hi, total))
        return TL_ERR_CORRUPT;
    /* every bucket must map to doubles: |L(v)| <= 1075, so
     * |k| 2^c <= 1075 M0 (this also keeps k 2^c far inside int64) */
    double bound = ldexp(1075.0 * multiplier0(s->alpha0), -(int)s->collapses) + 1;
    if ((double)lo < -bound || (double)hi > bound) return TL_ERR_CORRUPT;
    s->nbuckets = (uint32_t)(hi - lo + 1);
    s->offset = lo;
    s->kmin = lo;
    s->kmax = hi;
    if (!(s->counts = calloc(s->nbuckets, sizeof *s->counts))) return TL_ERR_NOMEM;
    const uint8_t *p = *pp;
    int64_t end_k = 0;
    uint64_t prev = 0;
    for (uint64_t r = 0; r < runs; r++) { /* validated above */
        uint64_t gz = 0, len = 0;
        tl_get_varint(&p, end, &gz);
        tl_get_varint(&p, end, &len);
        int64_t start = end_k + tl_unzigzag(gz);
        for (uint64_t t = 0; t < len; t++) {
            uint64_t dz = 0;
            tl_get_varint(&p, end, &dz);
            prev += (uint64_t)tl_unzigzag(dz);
            s->counts[start + (int64_t)t - lo] = prev;
        }
        end_k = start + (int64_t)len;
    }
    *pp = p;
    return TL_OK;
}

/* The verbatim values, when the sketch kept them (flags & 1). */
static enum tl_err read_exact(struct tl_sketch *s, const uint8_t **pp, const uint8_t *end,
                              uint8_t flags, uint64_t exact_limit)
{
    if (!(flags & 1)) {
        s->exact_dropped = true;
        return TL_OK;
    }
    const uint8_t *p = *pp;
    uint64_t n;
    if (!tl_get_varint(&p, end, &n) || n != s->count || n > exact_limit ||
        (uint64_t)(end - p) / 8 < n)
        return TL_ERR_CORRUPT;
    s->exact_dropped = false;
    s->nexact = s->cap_exact = (uint32_t)n;
    s->exact = n ? malloc(n * sizeof *s->exact) : NULL;
    if (n && !s->exact) return TL_ERR_NOMEM;
    for (uint64_t i = 0; i < n; i++) {
        tl_get_f64(&p, end, &s->exact[i]);
        if (!((s->exact[i] >= 0 || flags & 4) && isfinite(s->exact[i]))) return TL_ERR_CORRUPT;
    }
    s->exact_sorted = (flags & 2) != 0;
    *pp = p;
    return TL_OK;
}

/* The negative part (flags & 4): a sketch of its own, with the parent's
 * accuracy, no verbatim values and no part of its own. */
static enum tl_err read_negative(struct tl_sketch *s, const uint8_t **pp, const uint8_t *end)
{
    if (end - *pp < 6 || (*pp)[5] & 4) return TL_ERR_CORRUPT; /* no part in a part: no recursion */
    if (!(s->neg = malloc(sizeof *s->neg))) return TL_ERR_NOMEM;
    enum tl_err rc = tl_sketch_deserialize(s->neg, pp, end);
    if (rc) {
        free(s->neg);
        s->neg = NULL;
        return rc;
    }
    struct tl_sketch *n = s->neg;
    if (n->neg || !n->exact_dropped || n->alpha0 != s->alpha0 || n->floor != s->floor ||
        !n->count || n->count > s->count || n->min < 0)
        return TL_ERR_CORRUPT;
    return TL_OK;
}

enum tl_err tl_sketch_deserialize(struct tl_sketch *s, const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp;
    memset(s, 0, sizeof *s);
    uint8_t version, flags;
    uint64_t max_buckets, exact_limit, collapses, count, rejected, zero, nonempty;
    double alpha, floor_v, sum, sum_c, min, max;
    if (end - p < 4 || memcmp(p, SKETCH_MAGIC, 4)) return TL_ERR_CORRUPT;
    p += 4;
    if (!tl_get_u8(&p, end, &version) || version != SKETCH_VERSION || !tl_get_u8(&p, end, &flags) ||
        (flags & ~7u) || !tl_get_f64(&p, end, &alpha) || !tl_get_f64(&p, end, &floor_v) ||
        !tl_get_varint(&p, end, &max_buckets) || !tl_get_varint(&p, end, &exact_limit) ||
        !tl_get_varint(&p, end, &collapses) || !tl_get_varint(&p, end, &count) ||
        !tl_get_varint(&p, end, &rejected) || !tl_get_f64(&p, end, &sum) ||
        !tl_get_f64(&p, end, &sum_c) || !tl_get_f64(&p, end, &min) || !tl_get_f64(&p, end, &max) ||
        !tl_get_varint(&p, end, &zero) || !tl_get_varint(&p, end, &nonempty))
        return TL_ERR_CORRUPT;
    struct tl_sketch_opts o = {alpha, floor_v, (uint32_t)max_buckets, (uint32_t)exact_limit};
    if (max_buckets > MAX_BUCKETS_LIMIT || exact_limit > UINT32_MAX || collapses > 40 ||
        tl_sketch_init(s, &o))
        return TL_ERR_CORRUPT;
    enum tl_err rc = TL_ERR_CORRUPT;
    if (!isfinite(sum) || !isfinite(sum_c) || nonempty > max_buckets || zero > count ||
        (count && !((min >= 0 || flags & 4) && min <= max && isfinite(min) && isfinite(max))) ||
        (!count && (min != INFINITY || max != -INFINITY)))
        goto fail;
    s->collapses = (uint32_t)collapses;
    s->count = count;
    s->rejected = rejected;
    s->sum = sum;
    s->sum_c = sum_c;
    s->min = min;
    s->max = max;
    s->zero_count = zero;
    uint64_t total = zero;
    if (nonempty && (rc = read_buckets(s, &p, end, nonempty, max_buckets, &total))) goto fail;
    rc = TL_ERR_CORRUPT;
    if (total > count || (rc = read_exact(s, &p, end, flags, exact_limit))) goto fail;
    if (flags & 4 && (rc = read_negative(s, &p, end))) goto fail;
    rc = TL_ERR_CORRUPT;
    if (total + (s->neg ? s->neg->count : 0) != count) goto fail;
    *pp = p;
    return TL_OK;
fail:
    tl_sketch_free(s);
    return rc;
}

enum tl_err tl_sketches_pack(const struct tl_sketch *const *v, size_t n, struct tl_buf *out)
{
    struct tl_buf raw = {0};
    tl_buf_append(&raw, PACK_MAGIC, 4);
    tl_put_u8(&raw, 1);
    tl_put_varint(&raw, n);
    for (size_t i = 0; i < n; i++) tl_sketch_serialize(v[i], &raw);
    enum tl_err rc = raw.oom ? TL_ERR_NOMEM : tl_zframe_append(out, raw.data, raw.len);
    tl_buf_free(&raw);
    return rc;
}

enum tl_err tl_sketches_unpack(const uint8_t *p, size_t len, struct tl_sketch **vout, size_t *nout)
{
    *vout = NULL;
    *nout = 0;
    uint8_t *raw;
    size_t size;
    enum tl_err rc = tl_zframe_decode(p, len, 1ULL << 31, &raw, &size);
    if (rc) return rc;
    const uint8_t *q = raw, *end = raw + size;
    uint8_t version;
    uint64_t n;
    if (size < 4 || memcmp(q, PACK_MAGIC, 4)) rc = TL_ERR_CORRUPT;
    q += 4;
    if (!rc && (!tl_get_u8(&q, end, &version) || version != 1 || !tl_get_varint(&q, end, &n) ||
                n > size / 16))
        rc = TL_ERR_CORRUPT;
    struct tl_sketch *v = NULL;
    if (!rc && n) {
        v = calloc(n, sizeof *v);
        if (!v) rc = TL_ERR_NOMEM;
    }
    size_t done = 0;
    for (; !rc && done < n; done++) rc = tl_sketch_deserialize(&v[done], &q, end);
    if (!rc && q != end) rc = TL_ERR_CORRUPT;
    free(raw);
    if (rc) {
        for (size_t i = 0; i < done; i++) tl_sketch_free(&v[i]);
        free(v);
        return rc;
    }
    *vout = v;
    *nout = n;
    return TL_OK;
}
