/* core/aggregate: tumbling windows over record time, late records, the key
 * cap, the exact-value budget, and state that survives serialize/restore
 * (a restored aggregator fed the rest of the input ends identical to one
 * that saw everything). */
#include <math.h>
#include <string.h>

#include "check.h"

#include "core/aggregate.h"

#define SEC 1000000000LL

struct seen {
    int n;
    char key[16][64];
    int metric[16];
    int64_t start[16], end[16];
    uint64_t count[16];
    double p50[16];
};

static void on_window(void *ctx, const struct tl_agg_window *w)
{
    struct seen *s = ctx;
    if (w->cumulative != (w->start_ns == 0)) return; /* flag and bounds agree */
    if (s->n >= 16) return;
    snprintf(s->key[s->n], sizeof s->key[0], "%s", w->group->key);
    s->metric[s->n] = w->metric;
    s->start[s->n] = w->start_ns;
    s->end[s->n] = w->end_ns;
    s->count[s->n] = w->sketch->count;
    s->p50[s->n] = tl_sketch_quantile(w->sketch, 0.5);
    s->n++;
}

static struct tl_record task(const char *cat, int64_t t_ns, double wall)
{
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.category = cat;
    r.final = true;
    r.result = "SUCCESS";
    r.has_exit_code = true;
    r.time_ns = t_ns;
    tl_record_set(&r, TL_M_WALL_TIME_S, wall);
    return r;
}

static struct tl_agg_opts small_opts(void)
{
    struct tl_agg_opts o;
    tl_agg_opts_default(&o);
    o.nmetrics = 1;
    o.metrics[0] = TL_M_WALL_TIME_S;
    o.window_ns = 60 * SEC;
    return o;
}

static void windows(void)
{
    struct tl_agg_opts o = small_opts();
    struct seen s = {0};
    struct tl_agg *a = tl_agg_new(&o, on_window, &s);
    int64_t t0 = 1700000000LL * SEC - (1700000000LL * SEC) % (60 * SEC); /* window start */
    for (int i = 0; i < 10; i++) {
        struct tl_record r = task(i % 2 ? "b" : "a", t0 + i * SEC, 1.0 + i);
        tl_agg_add(a, &r);
    }
    CHECK_EQ_INT(s.n, 0); /* nothing closed yet */
    struct tl_record next = task("a", t0 + 61 * SEC, 100);
    tl_agg_add(a, &next); /* opens the next window: the first closes */
    CHECK_EQ_INT(s.n, 2);
    CHECK_STR(s.key[0], "a");
    CHECK_EQ_INT(s.count[0], 5);
    CHECK_EQ_INT(s.start[0], t0);
    CHECK_EQ_INT(s.end[0], t0 + 60 * SEC);
    CHECK_NEAR(s.p50[0], 5, 0); /* a: 1 3 5 7 9 */
    CHECK_EQ_INT(s.count[1], 5);
    struct tl_record late = task("b", t0 + 5 * SEC, 1000);
    tl_agg_add(a, &late);
    CHECK_EQ_INT(tl_agg_counters(a).late_records, 1);
    tl_agg_close_window(a);
    CHECK_EQ_INT(s.n, 3); /* only a has data in the second window */
    CHECK_EQ_INT(s.count[2], 1);
    CHECK_NEAR(s.p50[2], 100, 0);
    /* cumulative holds everything, the late record too */
    struct tl_agg_group *b = NULL;
    for (size_t i = 0; i < tl_agg_ngroups(a); i++)
        if (!strcmp(tl_agg_group(a, i)->key, "b")) b = tl_agg_group(a, i);
    CHECK(b && b->cum[0].count == 6 && b->tasks == 6);
    /* flush: one cumulative summary per (group, metric) with values */
    tl_agg_flush(a);
    CHECK_EQ_INT(s.n, 5);
    CHECK_EQ_INT(s.start[3], 0);
    CHECK_EQ_INT(s.end[3], t0 + 61 * SEC); /* the newest record time */
    CHECK_EQ_INT(s.count[3] + s.count[4], 12);
    tl_agg_free(a);
}

static void key_cap_and_budget(void)
{
    struct tl_agg_opts o = small_opts();
    o.window_ns = 0;
    o.max_keys = 3;
    o.exact_budget = 100;
    struct tl_agg *a = tl_agg_new(&o, NULL, NULL);
    const char *cats[] = {"c0", "c1", "c2", "c3", "c4"};
    for (int i = 0; i < 500; i++) {
        struct tl_record r = task(cats[i % 5], (int64_t)i * SEC, 0.5 + i);
        tl_agg_add(a, &r);
    }
    CHECK_EQ_INT(tl_agg_ngroups(a), 4); /* 3 + _other */
    struct tl_agg_group *other = tl_agg_group(a, 3);
    CHECK_STR(other->key, TL_AGG_OTHER);
    CHECK_EQ_INT(other->tasks, 200);
    CHECK_EQ_INT(tl_agg_counters(a).overflow_records, 200);
    uint64_t exact = 0;
    int approx = 0;
    for (size_t i = 0; i < tl_agg_ngroups(a); i++) {
        exact += tl_agg_group(a, i)->cum[0].nexact;
        approx += !tl_sketch_is_exact(&tl_agg_group(a, i)->cum[0]);
    }
    CHECK(exact <= 100);
    CHECK_EQ_INT(exact, tl_agg_counters(a).exact_values);
    CHECK(approx >= 1);
    tl_agg_free(a);
}

static int same_group(const struct tl_agg_group *x, const struct tl_agg_group *y, int nm)
{
    if (strcmp(x->key, y->key) || x->tasks != y->tasks || x->attempts != y->attempts ||
        x->open != y->open || x->runtime_s + x->runtime_c != y->runtime_s + y->runtime_c ||
        x->nresults != y->nresults)
        return 0;
    for (int m = 0; m < nm; m++) {
        struct tl_sketch *a = &x->cum[m], *b = &y->cum[m];
        if (a->count != b->count || a->min != b->min || a->max != b->max) return 0;
        for (double q = 0; q <= 1; q += 0.01)
            if (tl_sketch_quantile(a, q) != tl_sketch_quantile(b, q)) return 0;
    }
    return 1;
}

static void state_round_trip(void)
{
    struct tl_agg_opts o = small_opts();
    o.sketch.exact_limit = 100; /* some groups exact, some not */
    struct tl_agg *whole = tl_agg_new(&o, NULL, NULL), *first = tl_agg_new(&o, NULL, NULL);
    const char *cats[] = {"x", "y", "z"};
    uint64_t r64 = 12345;
    struct tl_record recs[3000];
    for (int i = 0; i < 3000; i++) {
        r64 = r64 * 6364136223846793005ULL + 1442695040888963407ULL;
        recs[i] = task(cats[(r64 >> 33) % (i < 1000 ? 3 : 2)], 1700000000LL * SEC + i * SEC / 10,
                       (double)((r64 >> 20) % 100000) / 7.0);
        if (i % 7 == 0) recs[i].kind = TL_REC_TASK_OPEN;
        if (i % 11 == 0) recs[i].result = "SIGNAL";
    }
    for (int i = 0; i < 3000; i++) tl_agg_add(whole, &recs[i]);
    for (int i = 0; i < 1500; i++) tl_agg_add(first, &recs[i]);
    struct tl_buf blob = {0};
    CHECK_EQ_INT(tl_agg_serialize(first, &blob), TL_OK);
    struct tl_agg *resumed = tl_agg_new(&o, NULL, NULL);
    CHECK_EQ_INT(tl_agg_restore(resumed, (const uint8_t *)blob.data, blob.len), TL_OK);
    for (int i = 1500; i < 3000; i++) tl_agg_add(resumed, &recs[i]);
    CHECK_EQ_INT(tl_agg_ngroups(resumed), tl_agg_ngroups(whole));
    for (size_t i = 0; i < tl_agg_ngroups(whole) && i < tl_agg_ngroups(resumed); i++)
        CHECK(same_group(tl_agg_group(whole, i), tl_agg_group(resumed, i), o.nmetrics));
    CHECK_EQ_INT(tl_agg_counters(resumed).records, tl_agg_counters(whole).records);
    printf("  state of 1500 records: %zu bytes (zstd)\n", blob.len);

    /* truncated or mismatched state is refused, and leaves a usable empty aggregator */
    struct tl_agg *bad = tl_agg_new(&o, NULL, NULL);
    CHECK(tl_agg_restore(bad, (const uint8_t *)blob.data, blob.len - 3) != TL_OK);
    struct tl_agg_opts other = o;
    other.by[0] = "host";
    struct tl_agg *wrong = tl_agg_new(&other, NULL, NULL);
    /* intact state of other settings is told apart from damage (a restart
     * after a reload of aggregate.by starts over instead of refusing) */
    CHECK_EQ_INT(tl_agg_restore(wrong, (const uint8_t *)blob.data, blob.len), TL_ERR_USAGE);
    CHECK_EQ_INT(tl_agg_ngroups(wrong), 0);
    struct tl_agg_opts other_alpha = o;
    other_alpha.sketch.alpha = o.sketch.alpha * 2;
    struct tl_agg *wrong_alpha = tl_agg_new(&other_alpha, NULL, NULL);
    CHECK_EQ_INT(tl_agg_restore(wrong_alpha, (const uint8_t *)blob.data, blob.len), TL_ERR_USAGE);
    CHECK_EQ_INT(tl_agg_ngroups(wrong_alpha), 0);
    tl_agg_free(wrong_alpha);
    /* a state saved before metrics were appended to the list restores: the
     * metrics it had keep their sketches, the new one starts empty */
    struct tl_agg_opts more = o;
    more.metrics[more.nmetrics++] = TL_M_ENERGY_J;
    struct tl_agg *grown = tl_agg_new(&more, NULL, NULL);
    CHECK_EQ_INT(tl_agg_restore(grown, (const uint8_t *)blob.data, blob.len), TL_OK);
    CHECK_EQ_INT(tl_agg_ngroups(grown), tl_agg_ngroups(first));
    for (size_t i = 0; i < tl_agg_ngroups(first) && i < tl_agg_ngroups(grown); i++) {
        CHECK(same_group(tl_agg_group(first, i), tl_agg_group(grown, i), o.nmetrics));
        CHECK_EQ_INT(tl_agg_group(grown, i)->cum[o.nmetrics].count, 0);
    }
    tl_agg_free(grown);
    /* and one saved with more metrics than configured now starts over */
    struct tl_buf more_blob = {0};
    struct tl_agg *wide = tl_agg_new(&more, NULL, NULL);
    tl_agg_add(wide, &recs[0]);
    CHECK_EQ_INT(tl_agg_serialize(wide, &more_blob), TL_OK);
    struct tl_agg *narrow = tl_agg_new(&o, NULL, NULL);
    CHECK_EQ_INT(tl_agg_restore(narrow, (const uint8_t *)more_blob.data, more_blob.len), TL_ERR_USAGE);
    tl_agg_free(narrow);
    tl_agg_free(wide);
    tl_buf_free(&more_blob);
    struct tl_buf damaged = {0};
    tl_buf_append(&damaged, blob.data, blob.len);
    damaged.data[damaged.len / 2] ^= 0x40;
    CHECK(tl_agg_restore(bad, (const uint8_t *)damaged.data, damaged.len) == TL_ERR_CORRUPT ||
          tl_agg_restore(bad, (const uint8_t *)damaged.data, damaged.len) == TL_ERR_DECODE);
    tl_buf_free(&damaged);
    tl_agg_add(wrong, &recs[0]);
    CHECK_EQ_INT(tl_agg_ngroups(wrong), 1);
    tl_buf_free(&blob);
    tl_agg_free(whole);
    tl_agg_free(first);
    tl_agg_free(resumed);
    tl_agg_free(bad);
    tl_agg_free(wrong);
}

/* Aggregators of disjoint parts, merged, hold what one fed everything holds:
 * counts, results, quantiles (exact ones and bucket ones), the newest time. */
static void merge_parts(void)
{
    struct tl_agg_opts o = small_opts();
    o.window_ns = 0;
    o.sketch.exact_limit = 200; /* x and y pass it, z stays exact */
    struct seen seen = {0};
    struct tl_agg *whole = tl_agg_new(&o, NULL, NULL), *merged = tl_agg_new(&o, on_window, &seen);
    struct tl_agg *part[3] = {tl_agg_new(&o, NULL, NULL), tl_agg_new(&o, NULL, NULL),
                              tl_agg_new(&o, NULL, NULL)};
    const char *cats[] = {"x", "y", "z"};
    uint64_t r64 = 777;
    int64_t newest = 0;
    for (int i = 0; i < 2000; i++) {
        r64 = r64 * 6364136223846793005ULL + 1442695040888963407ULL;
        int c = i % 10 == 0 ? 2 : (int)((r64 >> 33) % 2);
        int64_t t = 1700000000LL * SEC + (int64_t)((r64 >> 17) % 100000) * SEC;
        if (t > newest) newest = t;
        struct tl_record r = task(cats[c], t, (double)((r64 >> 20) % 100000) / 3.0);
        if (i % 13 == 0) r.result = "SIGNAL";
        tl_agg_add(whole, &r);
        tl_agg_add(part[(r64 >> 40) % 3], &r); /* partitions in any order */
    }
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(tl_agg_merge(merged, part[i]), TL_OK);
    CHECK_EQ_INT(tl_agg_ngroups(merged), tl_agg_ngroups(whole));
    for (size_t i = 0; i < tl_agg_ngroups(whole); i++) {
        struct tl_agg_group *w = tl_agg_group(whole, i), *m = NULL;
        for (size_t j = 0; j < tl_agg_ngroups(merged); j++)
            if (!strcmp(tl_agg_group(merged, j)->key, w->key)) m = tl_agg_group(merged, j);
        CHECK(m != NULL);
        if (!m) continue;
        CHECK(m->tasks == w->tasks && m->attempts == w->attempts && m->nresults == w->nresults);
        CHECK(fabs(m->runtime_s + m->runtime_c - (w->runtime_s + w->runtime_c)) <=
              1e-12 * w->runtime_s);
        CHECK(tl_sketch_is_exact(&m->cum[0]) == tl_sketch_is_exact(&w->cum[0]));
        CHECK(m->cum[0].min == w->cum[0].min && m->cum[0].max == w->cum[0].max);
        for (double q = 0; q <= 1; q += 0.01)
            CHECK(tl_sketch_quantile(&m->cum[0], q) == tl_sketch_quantile(&w->cum[0], q));
    }
    int exact = 0; /* both kinds were met */
    for (size_t i = 0; i < tl_agg_ngroups(whole); i++) exact += tl_sketch_is_exact(&tl_agg_group(whole, i)->cum[0]);
    CHECK(exact == 1);
    /* the newest record time survives serialize/restore and the merge */
    struct tl_buf blob = {0};
    CHECK_EQ_INT(tl_agg_serialize(merged, &blob), TL_OK);
    struct tl_agg *back = tl_agg_new(&o, on_window, &seen);
    CHECK_EQ_INT(tl_agg_restore(back, (const uint8_t *)blob.data, blob.len), TL_OK);
    tl_agg_flush(back);
    CHECK(seen.n > 0 && seen.end[0] == newest);
    /* different grouping: refused */
    struct tl_agg_opts other = o;
    other.by[0] = "host";
    struct tl_agg *wrong = tl_agg_new(&other, NULL, NULL);
    CHECK_EQ_INT(tl_agg_merge(wrong, whole), TL_ERR_USAGE);
    tl_buf_free(&blob);
    for (int i = 0; i < 3; i++) tl_agg_free(part[i]);
    tl_agg_free(whole);
    tl_agg_free(merged);
    tl_agg_free(back);
    tl_agg_free(wrong);
}

static struct tl_agg_group *group_named(struct tl_agg *a, const char *key)
{
    for (size_t i = 0; i < tl_agg_ngroups(a); i++)
        if (!strcmp(tl_agg_group(a, i)->key, key)) return tl_agg_group(a, i);
    return NULL;
}

/* Each metric lands in the sketch of its place in o.metrics, whatever
 * order they are listed in and when one is listed twice; groups are keyed
 * by any fixed tag or extra tag, one or several, absent ones included. */
static void places_and_keys(void)
{
    struct tl_agg_opts o;
    tl_agg_opts_default(&o);
    o.window_ns = 0;
    o.nmetrics = 4;
    o.metrics[0] = TL_M_SAMPLE_VALUE; /* after the others in the enum */
    o.metrics[1] = TL_M_MAX_RSS_BYTES;
    o.metrics[2] = TL_M_WALL_TIME_S;
    o.metrics[3] = TL_M_CPU_TIME_S;
    o.by[0] = "worker";
    struct tl_agg *a = tl_agg_new(&o, NULL, NULL);
    struct tl_record r = task("c", SEC, 2);
    r.worker = "w1";
    tl_record_set(&r, TL_M_MAX_RSS_BYTES, 100);
    tl_record_set(&r, TL_M_GPUS, 1); /* not aggregated */
    CHECK_EQ_INT(tl_agg_add(a, &r), TL_OK);
    struct tl_record s;
    tl_record_init(&s, TL_REC_SAMPLE);
    s.worker = "w1";
    tl_record_set(&s, TL_M_SAMPLE_VALUE, 7);
    CHECK_EQ_INT(tl_agg_add(a, &s), TL_OK);
    struct tl_record n = task("c", SEC, 3); /* no worker, twice: one group */
    CHECK_EQ_INT(tl_agg_add(a, &n), TL_OK);
    CHECK_EQ_INT(tl_agg_add(a, &n), TL_OK);
    CHECK_EQ_INT(tl_agg_add(a, &r), TL_OK); /* and w1 again */
    CHECK_EQ_INT(tl_agg_ngroups(a), 2);
    struct tl_agg_group *g = group_named(a, "w1");
    CHECK(g != NULL);
    if (g) {
        CHECK_EQ_INT(g->cum[0].count, 1);
        CHECK(tl_sketch_quantile(&g->cum[0], 0.5) == 7);
        CHECK_EQ_INT(g->cum[1].count, 2);
        CHECK(tl_sketch_quantile(&g->cum[1], 0.5) == 100);
        CHECK_EQ_INT(g->cum[2].count, 2);
        CHECK(tl_sketch_quantile(&g->cum[2], 0.5) == 2);
        CHECK_EQ_INT(g->cum[3].count, 0);
    }
    g = group_named(a, "\x1e");
    CHECK(g && g->cum[2].count == 2 && tl_sketch_quantile(&g->cum[2], 0.5) == 3);
    tl_agg_free(a);

    /* listed twice: both places get the value */
    o.nmetrics = 2;
    o.metrics[0] = o.metrics[1] = TL_M_WALL_TIME_S;
    o.by[0] = "category";
    a = tl_agg_new(&o, NULL, NULL);
    r = task("c", SEC, 5);
    CHECK_EQ_INT(tl_agg_add(a, &r), TL_OK);
    g = group_named(a, "c");
    CHECK(g && g->cum[0].count == 1 && g->cum[1].count == 1);
    tl_agg_free(a);

    /* two keys, one of them an extra tag */
    o.nmetrics = 1;
    o.by[0] = "category";
    o.by[1] = "band";
    o.nby = 2;
    a = tl_agg_new(&o, NULL, NULL);
    r = task("isr", SEC, 1);
    r.tags[0] = (struct tl_tag){"band", "g"};
    r.n_tags = 1;
    CHECK_EQ_INT(tl_agg_add(a, &r), TL_OK);
    r.n_tags = 0;
    CHECK_EQ_INT(tl_agg_add(a, &r), TL_OK);
    CHECK(group_named(a, "isr\x1fg") != NULL);
    CHECK(group_named(a, "isr\x1f\x1e") != NULL);
    CHECK_EQ_INT(tl_agg_ngroups(a), 2);
    tl_agg_free(a);

    /* a metric out of range is refused, not indexed */
    o.nby = 1;
    o.metrics[0] = TL_M_COUNT;
    CHECK(tl_agg_new(&o, NULL, NULL) == NULL);
}

/* Histogram sums: every record lands in its window at every level -- in
 * the window itself, or in a late part of it when it came after the window
 * had closed -- however out of order the input, and through a checkpoint
 * (serialize after the late parts are written, restore, go on). */
struct sums {
    int n;
    struct {
        int level;
        char key[8];
        int64_t start;
        uint64_t count;
    } e[4096];
    int parts;
};

static void sum_window(void *ctx, const struct tl_agg_window *w)
{
    struct sums *s = ctx;
    if (w->cumulative || w->requote) return; /* histogram sums: a requote's records are in late parts */
    s->parts += w->part > 0;
    for (int i = 0; i < s->n; i++)
        if (s->e[i].level == w->level && s->e[i].start == w->start_ns && !strcmp(s->e[i].key, w->group->key)) {
            s->e[i].count += w->sketch->count;
            return;
        }
    if (s->n == 4096) return;
    s->e[s->n].level = w->level;
    snprintf(s->e[s->n].key, sizeof s->e[0].key, "%s", w->group->key);
    s->e[s->n].start = w->start_ns;
    s->e[s->n].count = w->sketch->count;
    s->n++;
}

static uint64_t summed(const struct sums *s, int level, const char *key, int64_t start)
{
    for (int i = 0; i < s->n; i++)
        if (s->e[i].level == level && s->e[i].start == start && !strcmp(s->e[i].key, key))
            return s->e[i].count;
    return 0;
}

/* The last quote of each (group, window) at level 0: what InfluxDB keeps
 * of a window's quantile point (a requote replaces the first). */
struct quotes {
    int n;
    struct {
        char key[8];
        int64_t start;
        uint64_t count;
    } e[4096];
    int requotes;
};

static void last_quote(void *ctx, const struct tl_agg_window *w)
{
    struct quotes *q = ctx;
    if (w->cumulative || w->part || w->level || w->metric != TL_M_WALL_TIME_S) return;
    q->requotes += w->requote;
    int i = 0;
    while (i < q->n && !(q->e[i].start == w->start_ns && !strcmp(q->e[i].key, w->group->key))) i++;
    if (i == q->n && q->n < 4096) {
        snprintf(q->e[i].key, sizeof q->e[i].key, "%s", w->group->key);
        q->e[i].start = w->start_ns;
        q->n++;
    }
    if (i < 4096) q->e[i].count = w->sketch->count;
}

/* Records late by up to the allowed lateness land in their window's
 * quantiles (the window is quoted again whole); later ones are counted. */
static void late_quantiles(void)
{
    struct tl_agg_opts o = small_opts();
    o.allowed_lateness_ns = 600 * SEC;
    int64_t t0 = 1700000040LL * SEC - (1700000040LL * SEC) % (60 * SEC);
    static struct quotes q;
    memset(&q, 0, sizeof q);
    struct tl_agg *a = tl_agg_new(&o, last_quote, &q);
    /* two managers' logs of the same 10 minutes, read one after the other:
     * the whole second one comes after its windows were written */
    int64_t when[400];
    for (int i = 0; i < 400; i++) when[i] = t0 + (i < 200 ? i : i - 200) * SEC * 3 + (i >= 200) * SEC;
    for (int i = 0; i < 400; i++) {
        struct tl_record r = task("a", when[i], 1.0 + i % 5);
        tl_agg_add(a, &r);
        if (i % 50 == 49) tl_agg_flush_late(a); /* flush ticks */
    }
    /* and one record an hour late: too late for any window's quantiles */
    struct tl_record r = task("a", t0 - 3600 * SEC, 1.0);
    tl_agg_add(a, &r);
    tl_agg_close_window(a);
    tl_agg_flush_late(a);
    int bad = 0;
    for (int i = 0; i < q.n; i++) {
        uint64_t want = 0;
        for (int k = 0; k < 400; k++) want += when[k] >= q.e[i].start && when[k] < q.e[i].start + 60 * SEC;
        bad += q.e[i].count != want;
    }
    uint64_t windows = 0;
    for (int64_t st = t0; st < t0 + 600 * SEC; st += 60 * SEC)
        for (int k = 0; k < 400; k++)
            if (when[k] >= st && when[k] < st + 60 * SEC) {
                windows++;
                break;
            }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(q.n, windows);
    CHECK(q.requotes > 0);
    CHECK_EQ_INT(tl_agg_counters(a).too_late_records, 1);
    printf("  late records: %d windows, each last quoted with all its records (%d requotes); "
           "1 record past the lateness counted\n", q.n, q.requotes);
    tl_agg_free(a);
}

#define HN 3000
static void histogram_sums(void)
{
    struct tl_agg_opts o = small_opts();
    o.ncoarse = 2;
    o.coarse_ns[0] = 600 * SEC;
    o.coarse_ns[1] = 3600 * SEC;
    int64_t t0 = 1700000000LL * SEC - (1700000000LL * SEC) % (3600 * SEC);
    static int64_t when[HN];
    uint64_t rng = 7;
    for (int i = 0; i < HN; i++) { /* 3 hours, a third of them out of order by up to an hour */
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        int64_t t = t0 + (int64_t)i * (3 * 3600 * SEC / HN);
        if ((rng >> 33) % 3 == 0) t -= (int64_t)((rng >> 20) % 3600) * SEC;
        when[i] = t < t0 ? t0 : t;
    }
    const int64_t lens[3] = {60 * SEC, 600 * SEC, 3600 * SEC};
    for (int cut = 0; cut < HN; cut += HN / 2) { /* uninterrupted, then through a checkpoint */
        static struct sums s;
        memset(&s, 0, sizeof s);
        struct tl_agg *a = tl_agg_new(&o, sum_window, &s);
        for (int i = 0; i < HN; i++) {
            if (i == cut && cut) {
                tl_agg_flush_late(a); /* what a flush tick does before a checkpoint */
                struct tl_buf b = {0};
                CHECK(tl_agg_serialize(a, &b) == TL_OK);
                tl_agg_free(a);
                a = tl_agg_new(&o, sum_window, &s);
                CHECK(tl_agg_restore(a, (const uint8_t *)b.data, b.len) == TL_OK);
                tl_buf_free(&b);
            }
            struct tl_record r = task(i % 2 ? "b" : "a", when[i], 1.0 + i % 7);
            tl_agg_add(a, &r);
        }
        tl_agg_close_window(a);
        tl_agg_flush_late(a);
        int bad = 0, windows_seen = 0;
        for (int L = 0; L < 3; L++) {
            uint64_t total = 0;
            for (int64_t st = t0; st < t0 + 3 * 3600 * SEC; st += lens[L])
                for (int k = 0; k < 2; k++) {
                    uint64_t want = 0;
                    for (int i = k ? 1 : 0; i < HN; i += 2) want += when[i] >= st && when[i] < st + lens[L];
                    uint64_t got = summed(&s, L, k ? "b" : "a", st);
                    bad += got != want;
                    total += got;
                    windows_seen += want > 0;
                }
            CHECK_EQ_INT(total, HN);
        }
        CHECK_EQ_INT(bad, 0);
        CHECK(s.parts > 0 && tl_agg_counters(a).late_records > 0);
        printf("  histogram sums%s: %d windows at 3 levels, %d late parts, every record once\n",
               cut ? " through a checkpoint" : "", windows_seen, s.parts);
        tl_agg_free(a);
    }
}

/* Names holding the key's own separator, absent mark and escape bytes
 * cannot forge another field or another group (issue 55 point 2: a task on
 * node1 was reported on node9, from its category "x\x1fnode9"); every
 * value reads back whole, however long. */
static void unforgeable_keys(void)
{
    struct tl_agg_opts o = small_opts();
    o.window_ns = 0;
    o.nby = 2;
    o.by[0] = "category";
    o.by[1] = "host";
    struct tl_agg *a = tl_agg_new(&o, NULL, NULL);
    static char long_name[20000];
    memset(long_name, 'n', sizeof long_name - 1);
    const char *cats[] = {"x\x1fnode9", "x", "\x1e", "\x1d", "a\x1d\x1f" "b", "a\x1d", long_name, NULL};
    const char *hosts[] = {"node1", "node9", NULL, "\x1e", "h\x1d", "\x1f" "b", "n1", "h"};
    size_t n = sizeof cats / sizeof *cats;
    for (size_t i = 0; i < n; i++) {
        struct tl_record r = task(cats[i], SEC, 1);
        r.host = hosts[i];
        tl_agg_add(a, &r);
    }
    CHECK_EQ_INT(tl_agg_ngroups(a), n); /* every pair its own group */
    struct tl_buf part = {0};
    for (size_t i = 0; i < n && i < tl_agg_ngroups(a); i++) {
        const char *key = tl_agg_group(a, i)->key;
        const char *c = tl_agg_key_part(key, 0, &part);
        CHECK(cats[i] ? c && !strcmp(c, cats[i]) : c == NULL);
        const char *h = tl_agg_key_part(key, 1, &part);
        CHECK(hosts[i] ? h && !strcmp(h, hosts[i]) : h == NULL);
    }
    tl_agg_free(a);
    o.nby = 1; /* one tag: the key is the name itself unless it holds those bytes */
    a = tl_agg_new(&o, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        struct tl_record r = task(cats[i], SEC, 1);
        tl_agg_add(a, &r);
    }
    CHECK_EQ_INT(tl_agg_ngroups(a), n); /* "\x1e" is not the absent category */
    for (size_t i = 0; i < n && i < tl_agg_ngroups(a); i++) {
        const char *c = tl_agg_key_part(tl_agg_group(a, i)->key, 0, &part);
        CHECK(cats[i] ? c && !strcmp(c, cats[i]) : c == NULL);
    }
    tl_buf_free(&part);
    tl_agg_free(a);
}

int main(void)
{
    unforgeable_keys();
    places_and_keys();
    windows();
    key_cap_and_budget();
    state_round_trip();
    merge_parts();
    histogram_sums();
    late_quantiles();
    return check_done("test_aggregate");
}
