/* Mergeable quantile sketch with a relative-error guarantee.
 *
 * DDSketch (Masson, Rim, Lee, VLDB 2019) with UDDSketch's uniform collapse as
 * the only size cap (Epicoco et al., 2020):
 *
 *  - A value v > floor falls in bucket k = floor(M * L(v)), where L is a
 *    cheap stand-in for log2: the IEEE-754 exponent plus a cubic in the
 *    mantissa (the interpolation DataDog's sketches use). L is monotone and
 *    its slope is within [0.97, 1.0099] of log2's, so choosing
 *    M = 1.0099 / log2(gamma), gamma = (1+alpha)/(1-alpha), makes every bucket
 *    [lo, hi) satisfy hi/lo <= gamma. Answering a quantile with
 *    2*lo*hi/(lo+hi) is then within alpha of every value in the bucket.
 *    No log() per insert.
 *  - Merge adds bucket counts, so the guarantee survives any number of
 *    merges of sketches with the same alpha.
 *  - When the bucket span exceeds max_buckets, buckets are merged pairwise
 *    (k -> floor(k/2), i.e. M -> M/2, gamma -> gamma^2). The bound loosens to
 *    alpha' = (gamma^2 - 1)/(gamma^2 + 1) and tl_sketch_alpha() reports it.
 *  - Count, sum, min and max are exact. Values in [0, floor) count in a
 *    zero bucket. Negative values (a sample can be: a counter's free) go to
 *    a second sketch of their magnitudes, made on the first one, so they
 *    keep the same relative guarantee (DDSketch's negative store). NaN and
 *    infinite inputs are rejected and counted.
 *  - Up to exact_limit values are also kept verbatim: while a sketch holds
 *    no more, quantiles are exact (linear interpolation, as numpy), so tables
 *    for small groups match pandas exactly. Past it, the sketch answers.
 *
 * Serialization is versioned, little-endian by construction (byte by byte),
 * with varint-delta bucket indexes; it round-trips exactly and rejects
 * corrupt or truncated input with TL_ERR_CORRUPT. */
#ifndef TL_SKETCH_H
#define TL_SKETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"

struct tl_sketch_opts {
    double alpha;         /* relative accuracy, default 0.005 */
    double floor;         /* values below go to the zero bucket, default 1e-9 */
    uint32_t max_buckets; /* collapse beyond this span, default 4096 */
    uint32_t exact_limit; /* values kept verbatim, default 1024; 0 = never */
};

#define TL_SKETCH_DEFAULT_OPTS {0.005, 1e-9, 4096, 1024}

struct tl_sketch {
    double alpha0;        /* configured accuracy */
    double floor;
    uint32_t max_buckets;
    uint32_t exact_limit;
    uint32_t collapses;   /* times the buckets were merged pairwise */
    double m0;            /* M at level 0: the index is floor(m0 L(v)) >> collapses */

    uint64_t count;       /* accepted values */
    uint64_t rejected;    /* negative, NaN, infinite */
    double sum, min, max;
    double sum_c;         /* Kahan compensation for sum */

    uint64_t zero_count;
    int64_t kmin, kmax;   /* non-empty bucket extremes; kmin > kmax if none */
    int64_t offset;       /* bucket index of counts[0] */
    uint64_t *counts;     /* dense, [offset, offset + nbuckets) */
    uint32_t nbuckets;

    double *exact;        /* verbatim values while count <= exact_limit */
    uint32_t nexact, cap_exact;
    bool exact_sorted;
    bool exact_dropped;   /* exact_limit was passed: the sketch answers */

    struct tl_sketch *neg; /* the magnitudes of the negative values; NULL: none yet */
};

enum tl_err tl_sketch_init(struct tl_sketch *s, const struct tl_sketch_opts *o);
void tl_sketch_free(struct tl_sketch *s);
void tl_sketch_reset(struct tl_sketch *s); /* empty, same options */

/* TL_OK, or TL_ERR_USAGE for a rejected value: NaN or infinite (counted in
 * s->rejected). Task resources are never negative (parsers reject them
 * before); a sample may be. */
enum tl_err tl_sketch_add(struct tl_sketch *s, double v);
/* dst += src. Both must share alpha and floor (else TL_ERR_USAGE). */
enum tl_err tl_sketch_merge(struct tl_sketch *dst, const struct tl_sketch *src);

/* Value at quantile q in [0,1]; NaN if empty. Exact while is_exact(). */
double tl_sketch_quantile(struct tl_sketch *s, double q);
bool tl_sketch_is_exact(const struct tl_sketch *s);
/* The guarantee in force: 0 while exact, else alpha after collapses. */
double tl_sketch_alpha(const struct tl_sketch *s);
double tl_sketch_sum(const struct tl_sketch *s);
/* Frees the verbatim values: from now on quantiles come from the buckets. */
void tl_sketch_drop_exact(struct tl_sketch *s);

/* Bucket index of v (> floor) at the current level, and the bounds of
 * bucket k: exposed for tests. */
int64_t tl_sketch_index(const struct tl_sketch *s, double v);
void tl_sketch_bucket_bounds(const struct tl_sketch *s, int64_t k, double *lo, double *hi);

/* Every non-empty bucket, in ascending order of value, with bounds that
 * depend on alpha and floor alone: level-0 buckets [lo, hi) (the zero
 * bucket is [0, floor); a negative value's bucket is [-hi, -lo)). So the
 * buckets of any two sketches of the same alpha line up, whatever their
 * values, windows, instances or restarts: what histogram series are made
 * of. A collapsed sketch (values spanning more than max_buckets, 1e17 at
 * the defaults) gives each merged bucket to the level-0 bucket of its
 * representative value, within the collapsed alpha. */
struct tl_sketch_bucket {
    int64_t id;  /* the same for the same bucket in every sketch of this alpha */
    uint64_t n;  /* values in it */
    /* how its bounds are found (tl_sketch_bucket_range): they cost two
     * inversions, so a caller that remembers them by id skips those */
    const struct tl_sketch *s;
    int64_t k0;
    int kind; /* 0 positive, 1 negative, 2 the zero bucket, 3 the negative zero bucket */
};
typedef void (*tl_sketch_bucket_cb)(void *ctx, const struct tl_sketch_bucket *b);
void tl_sketch_each_bucket(const struct tl_sketch *s, tl_sketch_bucket_cb cb, void *ctx);
void tl_sketch_bucket_range(const struct tl_sketch_bucket *b, double *lo, double *hi);

/* A bucket's bounds as one label, "1.00000e+00...1.0100e+00" (the form of
 * VictoriaMetrics' `vmrange`), with as many digits as alpha needs to keep
 * neighbours apart (the lower bound one more, so that it is never the same
 * text as the upper bound below it), and no more: the same text for the same
 * bucket in every sketch of that alpha. Returns the length (< cap). */
int tl_sketch_range_label(const struct tl_sketch *s, double lo, double hi, char *out, size_t cap);

enum tl_err tl_sketch_serialize(const struct tl_sketch *s, struct tl_buf *out);
/* Reads one sketch from [*p, end) and advances *p. s must be uninitialized
 * or freed; on error it is left freed. */
enum tl_err tl_sketch_deserialize(struct tl_sketch *s, const uint8_t **p, const uint8_t *end);

/* Many sketches in one zstd frame (checkpoints, sharing between instances). */
enum tl_err tl_sketches_pack(const struct tl_sketch *const *v, size_t n, struct tl_buf *out);
/* Returns an array of *n sketches (free each, then the array). */
enum tl_err tl_sketches_unpack(const uint8_t *p, size_t len, struct tl_sketch **v, size_t *n);

#endif
