/* The aggregator: see aggregate.h.
 *
 * Groups live in an array indexed by the interned group key, so a record
 * costs one hash lookup plus one sketch insert per present metric. */
#include "core/aggregate.h"
#include "core/numfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "core/intern.h"
#include "core/zframe.h"
#include "core/aggregate_impl.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif


static const int default_metrics[] = {
    TL_M_WALL_TIME_S, TL_M_CPU_TIME_S,   TL_M_MAX_RSS_BYTES, TL_M_DISK_BYTES,
    TL_M_CORES,       TL_M_QUEUE_TIME_S, TL_M_EXEC_TIME_S,   TL_M_ALLOC_CORES,
    TL_M_ALLOC_MEMORY_BYTES, TL_M_SAMPLE_VALUE,
    /* appended (restore takes states saved without them): what codecarbon
     * and line_profiler measure */
    TL_M_ENERGY_J, TL_M_EMISSIONS_KG, TL_M_HITS,
};

void tl_agg_opts_default(struct tl_agg_opts *o)
{
    memset(o, 0, sizeof *o);
    o->by[0] = "category";
    o->nby = 1;
    for (size_t i = 0; i < sizeof default_metrics / sizeof *default_metrics; i++)
        o->metrics[o->nmetrics++] = default_metrics[i];
    o->window_ns = 60LL * 1000000000LL;
    struct tl_sketch_opts so = TL_SKETCH_DEFAULT_OPTS;
    o->sketch = so;
    o->max_keys = 10000;
    o->exact_budget = 12000000;
    o->allowed_lateness_ns = 900LL * 1000000000LL; /* as aggregate.allowed_lateness */
}

struct tl_agg *tl_agg_new(const struct tl_agg_opts *o, tl_agg_window_cb on_window, void *ctx)
{
    struct tl_sketch probe;
    if (o->nby < 1 || o->nby > TL_AGG_MAX_KEYS || o->nmetrics < 1 || o->nmetrics > 64 /* places: one word */ ||
        o->window_ns < 0 || o->max_keys < 1 || tl_sketch_init(&probe, &o->sketch) ||
        o->ncoarse < 0 || o->ncoarse > TL_AGG_MAX_COARSE || (o->ncoarse && !o->window_ns))
        return NULL;
    for (int L = 0; L < o->ncoarse; L++) /* multiples of the window, ascending */
        if (o->coarse_ns[L] <= (L ? o->coarse_ns[L - 1] : o->window_ns) ||
            o->coarse_ns[L] % o->window_ns)
            return NULL;
    struct tl_agg *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->o = *o;
    a->on_window = on_window;
    a->ctx = ctx;
    a->window = INT64_MIN;
    for (int L = 0; L < TL_AGG_MAX_COARSE; L++) a->cwindow[L] = INT64_MIN;
    for (int i = 0; i < o->nby; i++) a->by_field[i] = tl_tag_field(o->by[i]);
    for (int i = 0; i < o->nmetrics; i++) {
        int m = o->metrics[i];
        if (m < 0 || m >= TL_M_COUNT) {
            free(a);
            return NULL;
        }
        if (a->metric_mask[m >> 6] >> (m & 63) & 1) a->dup_metrics = true;
        a->metric_mask[m >> 6] |= (uint64_t)1 << (m & 63);
        a->place[m] = (int8_t)i;
    }
    /* windows kept for late records: as many as the lateness spans, bounded */
    if (o->window_ns && o->allowed_lateness_ns > 0) {
        int64_t k = (o->allowed_lateness_ns + o->window_ns - 1) / o->window_ns;
        a->nkept = k > TL_AGG_MAX_KEPT ? TL_AGG_MAX_KEPT : (int)k;
    }
    a->keys = tl_intern_new((size_t)1 << 30);
    if (!a->keys) {
        free(a);
        return NULL;
    }
    return a;
}

static void counts_free(struct tl_count *c, size_t n)
{
    for (size_t i = 0; i < n; i++) free(c[i].name);
    free(c);
}

void agg_group_free(struct tl_agg_group *g, int nmetrics, int nkept)
{
    counts_free(g->results, g->nresults);
    counts_free(g->exits, g->nexits);
    for (int k = 0; g->kept && k < nkept; k++) {
        for (int m = 0; g->kept[k].s && m < nmetrics; m++) tl_sketch_free(&g->kept[k].s[m]);
        free(g->kept[k].s);
    }
    free(g->kept);
    for (int m = 0; m < nmetrics; m++) {
        if (g->cum) tl_sketch_free(&g->cum[m]);
        if (g->win) tl_sketch_free(&g->win[m]);
        for (int L = 0; L < TL_AGG_MAX_COARSE; L++)
            if (g->coarse[L]) tl_sketch_free(&g->coarse[L][m]);
    }
    free(g->cum);
    free(g->win);
    for (int L = 0; L < TL_AGG_MAX_COARSE; L++) free(g->coarse[L]);
}

void agg_groups_free(struct tl_agg *a)
{
    for (size_t i = 0; i < a->nlate; i++) { /* late parts not emitted: dropped with their groups */
        for (int m = 0; m < a->o.nmetrics; m++) tl_sketch_free(&a->late[i].s[m]);
        free(a->late[i].s);
    }
    a->nlate = 0;
    for (size_t i = 0; i < a->ngroups; i++) agg_group_free(&a->groups[i], a->o.nmetrics, a->nkept);
    free(a->groups);
    a->groups = NULL;
    a->ngroups = a->cap = 0;
}

void tl_agg_free(struct tl_agg *a)
{
    if (!a) return;
    agg_groups_free(a);
    tl_intern_free(a->keys);
    tl_buf_free(&a->keybuf);
    free(a);
}

size_t tl_agg_ngroups(const struct tl_agg *a)
{
    return a->ngroups;
}

struct tl_agg_group *tl_agg_group(struct tl_agg *a, size_t i)
{
    return i < a->ngroups ? &a->groups[i] : NULL;
}

const struct tl_agg_opts *tl_agg_options(const struct tl_agg *a)
{
    return &a->o;
}

struct tl_agg_counters tl_agg_counters(const struct tl_agg *a)
{
    return a->c;
}

/* Group keys. A key is its tags' values joined by KEY_SEP, an absent value
 * KEY_ABSENT alone; a value's own KEY_ESC, KEY_ABSENT and KEY_SEP bytes
 * are written after a KEY_ESC, so no byte of a name can end its part or
 * stand for another (a name holding KEY_SEP once forged a host). */
#define KEY_SEP '\x1f'
#define KEY_ABSENT '\x1e'
#define KEY_ESC '\x1d'
static const char key_specials[] = {KEY_ESC, KEY_ABSENT, KEY_SEP, 0};

/* Whether v can be a key part as it is (the usual: no byte to escape). */
static inline bool key_plain(const char *v)
{
    return !v[strcspn(v, key_specials)];
}

/* key_plain and strlen in one pass, 16 bytes a step: *len is v's length
 * when it returns true. The record path asked both of every name (strcspn,
 * then strlen): 63 + 15 instructions a record on the Kineto trace, 20
 * here (callgrind, issue 56 point 9). Aligned loads never cross a page,
 * as libc's vector string functions read; the sanitizer is told so. */
#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize_address))
#endif
static inline bool key_plain_len(const char *v, size_t *len)
{
#ifndef __SSE2__
    *len = strlen(v);
    return key_plain(v);
#else
    const __m128i top = _mm_set1_epi8(0x1f); /* every special byte and the end are <= 0x1f */
    uintptr_t at = (uintptr_t)v & ~(uintptr_t)15;
    unsigned skip = (unsigned)((uintptr_t)v - at);
    for (;; at += 16, skip = 0) {
        __m128i x = _mm_load_si128((const __m128i *)at);
        unsigned low = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(x, top), top)) >> skip << skip;
        if (!low) continue;
        const char *p = (const char *)at + __builtin_ctz(low);
        if (!*p) {
            *len = (size_t)(p - v);
            return true;
        }
        if (*p == KEY_ESC || *p == KEY_ABSENT || *p == KEY_SEP) return false;
        *len = strlen(p) + (size_t)(p - v); /* a tab or another control byte: the slow way */
        return key_plain(p);
    }
#endif
}

static void key_put_part(struct tl_buf *k, const char *v)
{
    if (!v) {
        tl_buf_putc(k, KEY_ABSENT);
        return;
    }
    size_t n;
    if (key_plain_len(v, &n)) { /* the usual: the name whole */
        tl_buf_append(k, v, n);
        return;
    }
    for (;;) { /* the plain runs in one copy each (a byte at a time cost lines 1 %) */
        size_t run = strcspn(v, key_specials);
        tl_buf_append(k, v, run);
        if (!v[run]) return;
        tl_buf_putc(k, KEY_ESC);
        tl_buf_putc(k, v[run]);
        v += run + 1;
    }
}

const char *tl_agg_key_part(const char *key, int i, struct tl_buf *out)
{
    if (i == 0 && key_plain(key)) return key; /* one part, nothing escaped: the name itself */
    for (; i > 0; i--) { /* past i separators that are not escaped */
        while (*key && *key != KEY_SEP) key += *key == KEY_ESC && key[1] ? 2 : 1;
        if (!*key) return NULL;
        key++;
    }
    if (key[0] == KEY_ABSENT && (!key[1] || key[1] == KEY_SEP)) return NULL;
    out->len = 0;
    for (; *key && *key != KEY_SEP; key++) {
        if (*key == KEY_ESC && key[1]) key++;
        tl_buf_putc(out, *key);
    }
    return out->oom ? NULL : tl_buf_cstr(out);
}

/* A new group for an interned key id (== its index). */
struct tl_agg_group *agg_group_new(struct tl_agg *a, int32_t id)
{
    if ((size_t)id != a->ngroups) return NULL; /* ids are dense, in order */
    if (a->ngroups == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        struct tl_agg_group *g = realloc(a->groups, cap * sizeof *g);
        if (!g) return NULL;
        a->groups = g;
        a->cap = cap;
    }
    struct tl_agg_group *g = &a->groups[a->ngroups];
    memset(g, 0, sizeof *g);
    g->key = tl_intern_str(a->keys, id);
    g->cum = calloc((size_t)a->o.nmetrics, sizeof *g->cum);
    if (!g->cum) return NULL;
    if (a->o.window_ns) {
        g->win = calloc((size_t)a->o.nmetrics, sizeof *g->win);
        if (!g->win) {
            free(g->cum);
            return NULL;
        }
    }
    struct tl_sketch_opts co = a->o.sketch;
    co.exact_limit = 0; /* a coarse window is only ever buckets */
    for (int L = 0; L < a->o.ncoarse; L++) {
        if (!(g->coarse[L] = calloc((size_t)a->o.nmetrics, sizeof *g->coarse[L]))) {
            for (int k = 0; k < L; k++) free(g->coarse[k]);
            free(g->cum);
            free(g->win);
            return NULL;
        }
        for (int m = 0; m < a->o.nmetrics; m++) tl_sketch_init(&g->coarse[L][m], &co);
    }
    struct tl_sketch_opts wo = a->o.sketch;
    for (int m = 0; m < a->o.nmetrics; m++) {
        tl_sketch_init(&g->cum[m], &a->o.sketch);
        if (g->win) {
            /* windows are short-lived: exact values there would only add to
             * memory, and each window summary is one point anyway */
            wo.exact_limit = a->o.sketch.exact_limit < 1024 ? a->o.sketch.exact_limit : 1024;
            tl_sketch_init(&g->win[m], &wo);
        }
    }
    a->ngroups++;
    return g;
}

/* The group of interned key id: made now when its making failed before
 * (out of memory: the key was interned, its group not), so a key never
 * points at a group that is not there. */
static struct tl_agg_group *group_at(struct tl_agg *a, int32_t id)
{
    return (size_t)id < a->ngroups ? &a->groups[id] : agg_group_new(a, id);
}

static struct tl_agg_group *group_for(struct tl_agg *a, const struct tl_record *r)
{
    int32_t id;
    const char *v1 = a->o.nby == 1 ? tl_record_tag_at(r, a->by_field[0], a->o.by[0]) : NULL;
    size_t n1 = 0;
    bool plain = a->o.nby == 1 && (!v1 || key_plain_len(v1, &n1));
    if (plain) { /* the usual: the key is the tag itself, found without a copy */
        id = v1 ? tl_intern_find(a->keys, v1, n1) : tl_intern_find(a->keys, "\x1e", 1);
        if (id >= 0) return group_at(a, id);
    }
    struct tl_buf *k = &a->keybuf;
    k->len = 0;
    for (int i = 0; i < a->o.nby; i++) {
        if (i) tl_buf_putc(k, KEY_SEP);
        key_put_part(k, tl_record_tag_at(r, a->by_field[i], a->o.by[i]));
    }
    if (k->oom) return NULL;
    id = plain ? -1 : tl_intern_find(a->keys, k->data, k->len);
    if (id >= 0) return group_at(a, id);
    if (a->ngroups >= a->o.max_keys) {
        a->c.overflow_records++;
        k->len = 0;
        for (int i = 0; i < a->o.nby; i++) {
            if (i) tl_buf_putc(k, KEY_SEP);
            tl_buf_puts(k, TL_AGG_OTHER);
        }
        id = tl_intern_find(a->keys, k->data, k->len);
        if (id >= 0) return group_at(a, id);
    }
    id = tl_intern(a->keys, k->data, k->len);
    if (id < 0) return NULL;
    return agg_group_new(a, id);
}

bool agg_count_add(struct tl_count **arr, size_t *n, const char *name, uint64_t by)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*arr)[i].name, name)) {
            (*arr)[i].n += by;
            return true;
        }
    struct tl_count *c = realloc(*arr, (*n + 1) * sizeof *c);
    if (!c) return false;
    *arr = c;
    c[*n].name = strdup(name);
    if (!c[*n].name) return false;
    c[*n].n = by;
    (*n)++;
    return true;
}

/* Adds v to a sketch, keeping the global count of exact values within the
 * budget: a sketch that would pass it gives its exact values up. A value the
 * sketch had no memory for is counted apart (tl_agg_add says it), unlike
 * one it refuses. */
static void sketch_add(struct tl_agg *a, struct tl_sketch *s, double v)
{
    uint32_t before = s->nexact;
    if (!s->exact_dropped && a->c.exact_values >= a->o.exact_budget) tl_sketch_drop_exact(s);
    enum tl_err rc = tl_sketch_add(s, v);
    if (rc) {
        a->c.rejected_values++;
        a->nomem_values += rc == TL_ERR_NOMEM;
    }
    a->c.exact_values = a->c.exact_values - before + s->nexact;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Emits coarse level L's open window for every group that has one. */
static void emit_coarse(struct tl_agg *a, int L)
{
    int64_t cw = a->cwindow[L], len = a->o.coarse_ns[L];
    for (size_t i = 0; i < a->ngroups; i++) {
        struct tl_agg_group *g = &a->groups[i];
        if (!g->coarse_dirty[L]) continue;
        for (int m = 0; m < a->o.nmetrics; m++) {
            struct tl_sketch *s = &g->coarse[L][m];
            if (s->count && a->on_window) {
                struct tl_agg_window w = {g, a->o.metrics[m], cw * len, (cw + 1) * len, false, s, 0,
                                          L + 1};
                a->on_window(a->ctx, &w);
            }
            tl_sketch_reset(s);
        }
        g->coarse_dirty[L] = false;
    }
}

/* The closing window's coarse windows: a coarse window it does not fall in
 * has closed (windows close in order). */
static void advance_coarse(struct tl_agg *a)
{
    for (int L = 0; L < a->o.ncoarse; L++) {
        int64_t cw = floor_div(a->window * a->o.window_ns, a->o.coarse_ns[L]);
        if (a->cwindow[L] != INT64_MIN && cw != a->cwindow[L]) emit_coarse(a, L);
        a->cwindow[L] = cw;
    }
}

/* The kept slot of window w in group g, emptied for it when it held an
 * older one; NULL without memory. */
static struct tl_agg_kept *kept_slot(struct tl_agg *a, struct tl_agg_group *g, int64_t w)
{
    if (!g->kept && !(g->kept = calloc((size_t)a->nkept, sizeof *g->kept))) return NULL;
    struct tl_agg_kept *k = &g->kept[(uint64_t)w % (uint64_t)a->nkept];
    if (!k->s) {
        if (!(k->s = calloc((size_t)a->o.nmetrics, sizeof *k->s))) return NULL;
        for (int m = 0; m < a->o.nmetrics; m++) tl_sketch_init(&k->s[m], &a->o.sketch);
    } else if (k->window != w) {
        for (int m = 0; m < a->o.nmetrics; m++) {
            a->c.exact_values -= k->s[m].nexact;
            tl_sketch_reset(&k->s[m]);
        }
    }
    if (k->window != w) k->dirty = false;
    k->window = w;
    return k;
}

/* The window's sketches, kept for records that come late (moved, not
 * copied: the window starts the next one empty). */
static void keep_window(struct tl_agg *a, struct tl_agg_group *g, int m, struct tl_sketch *s)
{
    struct tl_agg_kept *k = a->nkept ? kept_slot(a, g, a->window) : NULL;
    if (!k) {
        a->c.exact_values -= s->nexact;
        tl_sketch_reset(s);
        return;
    }
    struct tl_sketch t = k->s[m]; /* an empty sketch after kept_slot */
    k->s[m] = *s;
    *s = t;
}

static void emit_windows(struct tl_agg *a)
{
    if (a->window == INT64_MIN || !a->o.window_ns) return;
    advance_coarse(a);
    for (size_t i = 0; i < a->ngroups; i++) {
        struct tl_agg_group *g = &a->groups[i];
        if (!g->win_dirty) continue;
        for (int m = 0; m < a->o.nmetrics; m++) {
            struct tl_sketch *s = &g->win[m];
            if (s->count && a->on_window) {
                struct tl_agg_window w = {g, a->o.metrics[m], a->window * a->o.window_ns,
                                          (a->window + 1) * a->o.window_ns, false, s};
                a->on_window(a->ctx, &w);
            }
            for (int L = 0; L < a->o.ncoarse && s->count; L++) {
                tl_sketch_merge(&g->coarse[L][m], s);
                g->coarse_dirty[L] = true;
            }
            keep_window(a, g, m, s);
        }
        g->win_dirty = false;
    }
}

/* The kept windows late records changed, emitted again whole (requote). */
static void requote(struct tl_agg *a)
{
    for (size_t i = 0; a->nkept && i < a->ngroups; i++) {
        struct tl_agg_group *g = &a->groups[i];
        for (int k = 0; g->kept && k < a->nkept; k++) {
            struct tl_agg_kept *kw = &g->kept[k];
            if (!kw->dirty) continue;
            for (int m = 0; m < a->o.nmetrics && a->on_window; m++) {
                if (!kw->s[m].count) continue;
                struct tl_agg_window w = {g, a->o.metrics[m], kw->window * a->o.window_ns,
                                          (kw->window + 1) * a->o.window_ns, false, &kw->s[m], 0, 0,
                                          true};
                a->on_window(a->ctx, &w);
            }
            kw->dirty = false;
            a->c.requotes++;
        }
    }
}

void tl_agg_close_window(struct tl_agg *a)
{
    emit_windows(a);
    for (int L = 0; L < a->o.ncoarse; L++)
        if (a->cwindow[L] != INT64_MIN) emit_coarse(a, L);
}

void tl_agg_flush(struct tl_agg *a)
{
    if (!a->on_window) return;
    for (size_t i = 0; i < a->ngroups; i++)
        for (int m = 0; m < a->o.nmetrics; m++) {
            struct tl_sketch *s = &a->groups[i].cum[m];
            if (!s->count) continue;
            struct tl_agg_window w = {&a->groups[i], a->o.metrics[m], 0, a->latest_ns, true, s};
            a->on_window(a->ctx, &w);
        }
}

static void emit_late(struct tl_agg *a, struct late_part *lp)
{
    struct tl_agg_group *g = &a->groups[lp->group];
    uint32_t part = (uint32_t)(g->late_seq++ % 999999) + 1; /* ns after the end: the same ms */
    for (int m = 0; m < a->o.nmetrics; m++) {
        /* a part of its window and of each coarse window that holds it */
        for (int L = 0; L <= a->o.ncoarse && lp->s[m].count && a->on_window; L++) {
            int64_t len = L ? a->o.coarse_ns[L - 1] : a->o.window_ns;
            int64_t k = floor_div(lp->window * a->o.window_ns, len);
            struct tl_agg_window w = {g, a->o.metrics[m], k * len, (k + 1) * len, false, &lp->s[m],
                                      part, L};
            a->on_window(a->ctx, &w);
        }
        tl_sketch_free(&lp->s[m]);
    }
    free(lp->s);
    a->c.late_parts++;
}

void tl_agg_flush_late(struct tl_agg *a)
{
    for (size_t i = 0; i < a->nlate; i++) emit_late(a, &a->late[i]);
    a->nlate = 0;
    requote(a);
}

/* The late part of a group's window: the newest ones are looked at first
 * (a late stretch of a log falls in few windows). NULL without memory. */
static struct late_part *late_part_for(struct tl_agg *a, struct tl_agg_group *g, int64_t w)
{
    size_t gi = (size_t)(g - a->groups);
    for (size_t i = a->nlate; i-- > 0;)
        if (a->late[i].group == gi && a->late[i].window == w) return &a->late[i];
    if (a->nlate == TL_AGG_LATE_PARTS) tl_agg_flush_late(a);
    struct late_part *lp = &a->late[a->nlate];
    if (!(lp->s = calloc((size_t)a->o.nmetrics, sizeof *lp->s))) return NULL;
    struct tl_sketch_opts o = a->o.sketch;
    o.exact_limit = 0; /* a part is only ever buckets */
    for (int m = 0; m < a->o.nmetrics; m++) tl_sketch_init(&lp->s[m], &o);
    lp->group = gi;
    lp->window = w;
    a->nlate++;
    return lp;
}

/* The kept window of a late record's window w, or NULL when w is older
 * than the allowed lateness (too late: counted) or was never kept. */
static struct tl_agg_kept *kept_late(struct tl_agg *a, struct tl_agg_group *g, int64_t w)
{
    struct tl_agg_kept *k = NULL;
    if (a->nkept && w > a->window - 1 - a->nkept && g->kept)
        k = &g->kept[(uint64_t)w % (uint64_t)a->nkept];
    if (k && k->s && k->window == w) return k;
    if (a->nkept && w > a->window - 1 - a->nkept) /* within the lateness: a window never emitted */
        return kept_slot(a, g, w);
    a->c.too_late_records++;
    return NULL;
}

/* The record's time moves the window; its metrics go into the group's
 * cumulative sketches and, when it falls in the open window, that one, or
 * when its window has closed, that window's late part. */
static void add_values(struct tl_agg *a, struct tl_agg_group *g, const struct tl_record *r)
{
    bool in_window = false;
    struct late_part *late = NULL;
    if (r->time_ns > a->latest_ns) a->latest_ns = r->time_ns;
    if (a->o.window_ns && r->time_ns) {
        int64_t w = floor_div(r->time_ns, a->o.window_ns);
        if (w > a->window) {
            emit_windows(a);
            a->window = w;
        }
        if (w == a->window) {
            in_window = true;
        } else {
            a->c.late_records++;
            late = late_part_for(a, g, w);
        }
    }
    /* the record's metrics that are aggregated, in the order of o.metrics
     * (that order decides which sketch meets the exact budget first) */
    uint64_t places = 0;
    if (a->dup_metrics) {
        for (int i = 0; i < a->o.nmetrics; i++)
            if (tl_record_has(r, (enum tl_metric)a->o.metrics[i])) places |= (uint64_t)1 << i;
    } else {
        for (int w = 0; w < TL_MASK_WORDS; w++)
            for (uint64_t have = r->present[w] & a->metric_mask[w]; have; have &= have - 1)
                places |= (uint64_t)1 << a->place[w * 64 + __builtin_ctzll(have)];
    }
    /* a late record within the allowed lateness: also into its kept window */
    struct tl_agg_kept *kept = late ? kept_late(a, g, floor_div(r->time_ns, a->o.window_ns)) : NULL;
    enum tl_err rc;
    for (; places; places &= places - 1) {
        int i = __builtin_ctzll(places), m = a->o.metrics[i];
        sketch_add(a, &g->cum[i], r->v[m]);
        if (in_window) {
            sketch_add(a, &g->win[i], r->v[m]);
            g->win_dirty = true;
        } else if (late && (rc = tl_sketch_add(&late->s[i], r->v[m]))) {
            a->c.rejected_values++;
            a->nomem_values += rc == TL_ERR_NOMEM;
        }
        if (kept) {
            sketch_add(a, &kept->s[i], r->v[m]);
            kept->dirty = true;
        }
    }
}

struct tl_agg_apart tl_agg_group_apart(const struct tl_agg_group *g)
{
    struct tl_agg_apart a = {0};
    for (size_t i = 0; i < g->nresults; i++) {
        const char *res = g->results[i].name;
        uint64_t n = g->results[i].n;
        if (tl_result_cached(res)) a.cached += n;
        else if (tl_result_cancelled(res)) a.cancelled += n;
        else if (tl_result_library(res)) a.libraries += n;
    }
    return a;
}

/* Kahan-compensated *sum += v. */
static inline void kahan_add(double *restrict sum, double *restrict comp, double v)
{
    double t = *sum + v;
    *comp += fabs(*sum) >= fabs(v) ? (*sum - t) + v : (v - t) + *sum;
    *sum = t;
}

enum tl_err tl_agg_add(struct tl_agg *a, const struct tl_record *r)
{
    if (!(TL_AGG_KINDS & TL_KIND(r->kind))) return TL_OK;
    a->c.records++;
    struct tl_agg_group *g = group_for(a, r);
    if (!g) return TL_ERR_NOMEM;
    if (r->kind == TL_REC_SAMPLE) {
        g->samples++;
        uint64_t lost = a->nomem_values;
        add_values(a, g, r);
        return a->nomem_values == lost ? TL_OK : TL_ERR_NOMEM;
    }
    if (r->kind == TL_REC_TASK_OPEN) {
        g->open++;
        return TL_OK;
    }
    g->attempts++;
    bool failed = tl_verdict_of(&a->verdict, r) == TL_VERDICT_FAILED;
    if (failed) {
        g->failed_attempts++;
        g->causes[tl_failure_cause(r)]++;
    }
    if (!r->final) return TL_OK;
    g->tasks++;
    g->failed += failed;
    bool ok = agg_count_add(&g->results, &g->nresults, r->result ? r->result : "(none)", 1);
    if (r->has_exit_code) {
        char code[24];
        tl_fmt_i64(code, r->exit_code); /* snprintf cost more than the rest of this record */
        ok = ok && agg_count_add(&g->exits, &g->nexits, code, 1);
    }
    if (tl_record_has(r, TL_M_WALL_TIME_S) && !a->verdict.cached) {
        double v = r->v[TL_M_WALL_TIME_S];
        kahan_add(&g->runtime_s, &g->runtime_c, v);
        double cores = tl_allocated_cores(r);
        if (cores > 0) kahan_add(&g->core_s, &g->core_c, v * cores);
    }
    if (tl_record_has(r, TL_M_CPU_TIME_S) && !a->verdict.cached)
        kahan_add(&g->cpu_s, &g->cpu_c, r->v[TL_M_CPU_TIME_S]);
    uint64_t lost = a->nomem_values;
    add_values(a, g, r);
    ok &= a->nomem_values == lost; /* a value no sketch had room for: out of memory, said */
    return ok ? TL_OK : TL_ERR_NOMEM;
}

/* ---------------------------------------------------------------- merge */

enum tl_err tl_agg_merge(struct tl_agg *dst, const struct tl_agg *src)
{
    if (dst->o.nby != src->o.nby || dst->o.nmetrics != src->o.nmetrics ||
        dst->o.sketch.alpha != src->o.sketch.alpha || dst->o.sketch.floor != src->o.sketch.floor)
        return TL_ERR_USAGE;
    for (int i = 0; i < dst->o.nby; i++)
        if (strcmp(dst->o.by[i], src->o.by[i])) return TL_ERR_USAGE;
    for (int i = 0; i < dst->o.nmetrics; i++)
        if (dst->o.metrics[i] != src->o.metrics[i]) return TL_ERR_USAGE;
    for (size_t gi = 0; gi < src->ngroups; gi++) {
        const struct tl_agg_group *sg = &src->groups[gi];
        size_t klen = strlen(sg->key);
        int32_t id = tl_intern_find(dst->keys, sg->key, klen);
        struct tl_agg_group *g;
        if (id >= 0) {
            g = group_at(dst, id);
        } else if (dst->ngroups >= dst->o.max_keys) {
            struct tl_buf *k = &dst->keybuf; /* as group_for: into "_other" */
            k->len = 0;
            for (int i = 0; i < dst->o.nby; i++) {
                if (i) tl_buf_putc(k, KEY_SEP);
                tl_buf_puts(k, TL_AGG_OTHER);
            }
            if (k->oom) return TL_ERR_NOMEM;
            id = tl_intern_find(dst->keys, k->data, k->len);
            if (id < 0 && (id = tl_intern(dst->keys, k->data, k->len)) < 0) return TL_ERR_NOMEM;
            g = group_at(dst, id);
            dst->c.overflow_records += sg->tasks + sg->open + sg->samples;
        } else {
            if ((id = tl_intern(dst->keys, sg->key, klen)) < 0) return TL_ERR_NOMEM;
            g = agg_group_new(dst, id);
        }
        if (!g) return TL_ERR_NOMEM;
        g->tasks += sg->tasks;
        g->attempts += sg->attempts;
        g->open += sg->open;
        g->samples += sg->samples;
        double v = sg->runtime_s, t = g->runtime_s + v; /* as kahan_add, with sg's own compensation */
        g->runtime_c += (fabs(g->runtime_s) >= fabs(v) ? (g->runtime_s - t) + v : (v - t) + g->runtime_s) +
                        sg->runtime_c;
        g->runtime_s = t;
        kahan_add(&g->core_s, &g->core_c, sg->core_s + sg->core_c);
        kahan_add(&g->cpu_s, &g->cpu_c, sg->cpu_s + sg->cpu_c);
        g->failed += sg->failed;
        g->failed_attempts += sg->failed_attempts;
        for (int c = 0; c < TL_CAUSE_COUNT; c++) g->causes[c] += sg->causes[c];
        for (size_t i = 0; i < sg->nresults; i++)
            if (!agg_count_add(&g->results, &g->nresults, sg->results[i].name, sg->results[i].n))
                return TL_ERR_NOMEM;
        for (size_t i = 0; i < sg->nexits; i++)
            if (!agg_count_add(&g->exits, &g->nexits, sg->exits[i].name, sg->exits[i].n))
                return TL_ERR_NOMEM;
        for (int m = 0; m < dst->o.nmetrics; m++) {
            uint32_t before = g->cum[m].nexact;
            enum tl_err rc = tl_sketch_merge(&g->cum[m], &sg->cum[m]);
            if (rc) return rc;
            dst->c.exact_values = dst->c.exact_values - before + g->cum[m].nexact;
        }
    }
    dst->c.records += src->c.records;
    dst->c.late_records += src->c.late_records;
    dst->c.rejected_values += src->c.rejected_values;
    dst->c.overflow_records += src->c.overflow_records; /* src's own past its max_keys */
    if (src->latest_ns > dst->latest_ns) dst->latest_ns = src->latest_ns;
    return TL_OK;
}
