/* The aggregator's state as bytes (aggregate.h: tl_agg_serialize,
 * tl_agg_restore): every group's counts, sketches and kept windows, for
 * checkpoints and for the Kafka state topic. The format is versioned
 * (AGG_VERSION); a state saved with fewer metrics restores as a prefix. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/aggregate_impl.h"
#include "core/bytes.h"
#include "core/zframe.h"

/* ---------------------------------------------------------------- state */

static void put_counts(struct tl_buf *b, const struct tl_count *c, size_t n)
{
    tl_put_varint(b, n);
    for (size_t i = 0; i < n; i++) {
        tl_put_str(b, c[i].name);
        tl_put_varint(b, c[i].n);
    }
}

static void put_glossary_counts(struct tl_buf *b, const struct tl_agg_group *g)
{
    tl_put_varint(b, g->failed);
    tl_put_varint(b, g->failed_attempts);
    tl_put_varint(b, TL_CAUSE_COUNT);
    for (int c = 0; c < TL_CAUSE_COUNT; c++) tl_put_varint(b, g->causes[c]);
    tl_put_f64(b, g->core_s);
    tl_put_f64(b, g->core_c);
    tl_put_f64(b, g->cpu_s);
    tl_put_f64(b, g->cpu_c);
}

/* A saved state's causes: one written by a build that knew fewer or more
 * causes keeps the ones both know. */
static bool get_glossary_counts(const uint8_t **p, const uint8_t *end, struct tl_agg_group *g)
{
    uint64_t n, v;
    if (!tl_get_varint(p, end, &g->failed) || !tl_get_varint(p, end, &g->failed_attempts) ||
        !tl_get_varint(p, end, &n) || n > 64)
        return false;
    for (uint64_t c = 0; c < n; c++) {
        if (!tl_get_varint(p, end, &v)) return false;
        if (c < TL_CAUSE_COUNT) g->causes[c] = v;
    }
    return tl_get_f64(p, end, &g->core_s) && tl_get_f64(p, end, &g->core_c) &&
           tl_get_f64(p, end, &g->cpu_s) && tl_get_f64(p, end, &g->cpu_c);
}

enum tl_err tl_agg_serialize(const struct tl_agg *a, struct tl_buf *out)
{
    struct tl_buf raw = {0};
    tl_buf_append(&raw, AGG_MAGIC, 4);
    tl_put_u8(&raw, AGG_VERSION);
    tl_put_varint(&raw, (uint64_t)a->o.nby);
    for (int i = 0; i < a->o.nby; i++) tl_put_str(&raw, a->o.by[i]);
    tl_put_varint(&raw, (uint64_t)a->o.nmetrics);
    for (int i = 0; i < a->o.nmetrics; i++) tl_put_str(&raw, tl_metric_info[a->o.metrics[i]].name);
    tl_put_varint(&raw, (uint64_t)a->o.window_ns);
    tl_put_varint(&raw, tl_zigzag(a->window));
    tl_put_varint(&raw, a->c.records);
    tl_put_varint(&raw, a->c.overflow_records);
    tl_put_varint(&raw, a->c.late_records);
    tl_put_varint(&raw, a->c.rejected_values);
    tl_put_varint(&raw, tl_zigzag(a->latest_ns));
    tl_put_varint(&raw, (uint64_t)a->o.ncoarse);
    for (int L = 0; L < a->o.ncoarse; L++) {
        tl_put_varint(&raw, (uint64_t)a->o.coarse_ns[L]);
        tl_put_varint(&raw, tl_zigzag(a->cwindow[L]));
    }
    tl_put_varint(&raw, a->ngroups);
    for (size_t gi = 0; gi < a->ngroups; gi++) {
        const struct tl_agg_group *g = &a->groups[gi];
        tl_put_str(&raw, g->key);
        tl_put_varint(&raw, g->tasks);
        tl_put_varint(&raw, g->attempts);
        tl_put_varint(&raw, g->open);
        tl_put_varint(&raw, g->samples);
        tl_put_f64(&raw, g->runtime_s);
        tl_put_f64(&raw, g->runtime_c);
        put_counts(&raw, g->results, g->nresults);
        put_counts(&raw, g->exits, g->nexits);
        tl_put_u8(&raw, g->win_dirty);
        tl_put_varint(&raw, g->late_seq);
        put_glossary_counts(&raw, g);
        for (int L = 0; L < a->o.ncoarse; L++) tl_put_u8(&raw, g->coarse_dirty[L]);
        for (int m = 0; m < a->o.nmetrics; m++) {
            tl_sketch_serialize(&g->cum[m], &raw);
            if (g->win) tl_sketch_serialize(&g->win[m], &raw);
        }
        for (int L = 0; L < a->o.ncoarse; L++)
            for (int m = 0; m < a->o.nmetrics; m++) tl_sketch_serialize(&g->coarse[L][m], &raw);
    }
    enum tl_err rc = raw.oom ? TL_ERR_NOMEM : tl_zframe_append(out, raw.data, raw.len);
    tl_buf_free(&raw);
    return rc;
}

static bool get_counts(const uint8_t **p, const uint8_t *end, struct tl_count **c, size_t *n)
{
    uint64_t k;
    if (!tl_get_varint(p, end, &k) || k > 1000000) return false;
    for (uint64_t i = 0; i < k; i++) {
        const char *s;
        size_t len;
        uint64_t v;
        if (!tl_get_str(p, end, TL_SAVED_NAME_MAX, &s, &len) || !tl_get_varint(p, end, &v)) return false;
        char *name = strndup(s, len); /* a result or exit code as long as the input wrote it */
        bool ok = name && agg_count_add(c, n, name, v);
        free(name);
        if (!ok) return false;
    }
    return true;
}

/* The saved state's magic, version and settings: TL_OK when they are this
 * aggregator's; TL_ERR_USAGE for intact state made with other settings (by,
 * metrics, window), told apart from damage so the caller can start over. */
static enum tl_err read_settings(struct tl_agg *a, const uint8_t **pp, const uint8_t *end,
                                 uint8_t *version)
{
    const uint8_t *p = *pp;
    uint64_t nby, nmetrics, window_ns;
    const char *s;
    size_t len;
    if (end - p < 4 || memcmp(p, AGG_MAGIC, 4)) return TL_ERR_CORRUPT;
    p += 4;
    if (!tl_get_u8(&p, end, version) || *version < 2 || *version > AGG_VERSION ||
        !tl_get_varint(&p, end, &nby))
        return TL_ERR_CORRUPT;
    bool other_settings = nby != (uint64_t)a->o.nby;
    for (uint64_t i = 0; i < nby && i < 64; i++) {
        if (!tl_get_str(&p, end, 256, &s, &len)) return TL_ERR_CORRUPT;
        other_settings |= i >= (uint64_t)a->o.nby || len != strlen(a->o.by[i]) || memcmp(s, a->o.by[i], len);
    }
    if (nby >= 64 || !tl_get_varint(&p, end, &nmetrics) || nmetrics > 64) return TL_ERR_CORRUPT;
    /* a state saved with fewer metrics (defaults appended since) restores:
     * the metrics it had keep their sketches, the new ones start empty */
    other_settings |= nmetrics > (uint64_t)a->o.nmetrics;
    for (uint64_t i = 0; i < nmetrics; i++) {
        if (!tl_get_str(&p, end, 256, &s, &len)) return TL_ERR_CORRUPT;
        const char *name = i < (uint64_t)a->o.nmetrics ? tl_metric_info[a->o.metrics[i]].name : "";
        other_settings |= len != strlen(name) || memcmp(s, name, len);
    }
    if (!tl_get_varint(&p, end, &window_ns)) return TL_ERR_CORRUPT;
    if (other_settings || window_ns != (uint64_t)a->o.window_ns) return TL_ERR_USAGE;
    a->saved_nmetrics = (int)nmetrics;
    *pp = p;
    return TL_OK;
}

/* One saved sketch into k: TL_ERR_USAGE when intact but made with another
 * alpha (start over), TL_ERR_CORRUPT when damaged (k stays freeable). */
static enum tl_err read_sketch(const struct tl_agg *a, struct tl_sketch *k, const uint8_t **p,
                               const uint8_t *end, uint64_t *exact_values)
{
    tl_sketch_free(k);
    if (tl_sketch_deserialize(k, p, end)) {
        tl_sketch_init(k, &a->o.sketch); /* keep agg_group_free safe */
        return TL_ERR_CORRUPT;
    }
    if (k->alpha0 != a->o.sketch.alpha || k->floor != a->o.sketch.floor) return TL_ERR_USAGE;
    *exact_values += k->nexact;
    return TL_OK;
}

/* The coarse windows a state was saved with: restored when they are the
 * ones configured now, else read past (their open windows start empty). */
struct saved_coarse {
    uint64_t n;
    uint64_t ns[TL_AGG_MAX_COARSE], cw[TL_AGG_MAX_COARSE];
    bool match;
};

static bool read_coarse_settings(const struct tl_agg *a, const uint8_t **p, const uint8_t *end,
                                 struct saved_coarse *sc)
{
    if (!tl_get_varint(p, end, &sc->n) || sc->n > TL_AGG_MAX_COARSE) return false;
    sc->match = sc->n == (uint64_t)a->o.ncoarse;
    for (uint64_t L = 0; L < sc->n; L++) {
        if (!tl_get_varint(p, end, &sc->ns[L]) || !tl_get_varint(p, end, &sc->cw[L])) return false;
        sc->match &= sc->ns[L] == (uint64_t)a->o.coarse_ns[L];
    }
    return true;
}

/* A group's saved coarse sketches, into its own or read past. */
static enum tl_err read_coarse(struct tl_agg *a, struct tl_agg_group *g, const uint8_t **p,
                               const uint8_t *end, const struct saved_coarse *sc,
                               struct tl_agg_counters *c)
{
    for (uint64_t L = 0; L < sc->n; L++)
        for (int m = 0; m < a->saved_nmetrics; m++) {
            struct tl_sketch scratch;
            tl_sketch_init(&scratch, &a->o.sketch);
            struct tl_sketch *k = sc->match ? &g->coarse[L][m] : &scratch;
            enum tl_err rc = read_sketch(a, k, p, end, &c->exact_values);
            tl_sketch_free(&scratch);
            if (rc) return rc;
        }
    return TL_OK;
}

/* One saved group (its key's id is the next): counts, then its sketches. */
static enum tl_err read_group(struct tl_agg *a, const uint8_t **pp, const uint8_t *end,
                              struct tl_agg_counters *c, uint8_t version,
                              const struct saved_coarse *sc)
{
    const uint8_t *p = *pp;
    const char *s;
    size_t len;
    if (!tl_get_str(&p, end, TL_SAVED_NAME_MAX, &s, &len)) return TL_ERR_CORRUPT;
    int32_t id = tl_intern(a->keys, s, len);
    if (id < 0 || (size_t)id != a->ngroups) return TL_ERR_CORRUPT; /* duplicate key */
    struct tl_agg_group *g = agg_group_new(a, id);
    if (!g) return TL_ERR_CORRUPT;
    uint8_t dirty;
    if (!tl_get_varint(&p, end, &g->tasks) || !tl_get_varint(&p, end, &g->attempts) ||
        !tl_get_varint(&p, end, &g->open) || !tl_get_varint(&p, end, &g->samples) ||
        !tl_get_f64(&p, end, &g->runtime_s) ||
        !tl_get_f64(&p, end, &g->runtime_c) || !get_counts(&p, end, &g->results, &g->nresults) ||
        !get_counts(&p, end, &g->exits, &g->nexits) || !tl_get_u8(&p, end, &dirty) || dirty > 1 ||
        (version >= 4 && !tl_get_varint(&p, end, &g->late_seq)) ||
        (version >= 6 && !get_glossary_counts(&p, end, g)))
        return TL_ERR_CORRUPT;
    g->win_dirty = dirty;
    for (uint64_t L = 0; L < sc->n; L++) {
        if (!tl_get_u8(&p, end, &dirty) || dirty > 1) return TL_ERR_CORRUPT;
        if (sc->match) g->coarse_dirty[L] = dirty;
    }
    for (int m = 0; m < a->saved_nmetrics; m++) {
        enum tl_err rc = read_sketch(a, &g->cum[m], &p, end, &c->exact_values);
        if (!rc && g->win) rc = read_sketch(a, &g->win[m], &p, end, &c->exact_values);
        if (rc) return rc;
    }
    enum tl_err rc = read_coarse(a, g, &p, end, sc, c);
    if (rc) return rc;
    *pp = p;
    return TL_OK;
}

enum tl_err tl_agg_restore(struct tl_agg *a, const uint8_t *zp, size_t zlen)
{
    uint8_t *raw;
    size_t size;
    enum tl_err rc = tl_zframe_decode(zp, zlen, 1ULL << 32, &raw, &size);
    if (rc) return rc;
    const uint8_t *p = raw, *end = raw + size;
    uint8_t version;
    uint64_t ngroups, window, latest = 0;
    struct tl_agg_counters c = {0};
    struct saved_coarse sc = {0};
    if ((rc = read_settings(a, &p, end, &version))) goto out;
    rc = TL_ERR_CORRUPT;
    if (!tl_get_varint(&p, end, &window) || !tl_get_varint(&p, end, &c.records) ||
        !tl_get_varint(&p, end, &c.overflow_records) || !tl_get_varint(&p, end, &c.late_records) ||
        !tl_get_varint(&p, end, &c.rejected_values) ||
        (version >= 3 && !tl_get_varint(&p, end, &latest)) ||
        (version >= 5 && !read_coarse_settings(a, &p, end, &sc)) ||
        !tl_get_varint(&p, end, &ngroups) || ngroups > a->o.max_keys + 1ULL)
        goto out;
    agg_groups_free(a);
    tl_intern_free(a->keys);
    if (!(a->keys = tl_intern_new((size_t)1 << 30))) {
        rc = TL_ERR_NOMEM;
        goto out;
    }
    rc = TL_OK;
    for (uint64_t gi = 0; !rc && gi < ngroups; gi++) rc = read_group(a, &p, end, &c, version, &sc);
    if (!rc && p != end) rc = TL_ERR_CORRUPT;
    if (rc) { /* start over: nothing of the damaged state stays */
        agg_groups_free(a);
        tl_intern_free(a->keys);
        a->keys = tl_intern_new((size_t)1 << 30);
        a->c = (struct tl_agg_counters){0};
        a->window = INT64_MIN;
        for (int L = 0; L < TL_AGG_MAX_COARSE; L++) a->cwindow[L] = INT64_MIN;
        a->latest_ns = 0;
        rc = rc == TL_ERR_USAGE ? TL_ERR_USAGE : TL_ERR_CORRUPT;
        goto out;
    }
    a->c = c;
    a->window = tl_unzigzag(window);
    for (int L = 0; L < a->o.ncoarse; L++)
        a->cwindow[L] = sc.match ? tl_unzigzag(sc.cw[L]) : INT64_MIN;
    a->latest_ns = tl_unzigzag(latest);
out:
    free(raw);
    return rc;
}
