/* Line protocol encoder: see lineproto.h.
 *
 * Points are built into the caller's buffer; a point that turns out to be
 * unwritable (a newline somewhere) is rolled back by truncating the buffer
 * to where it started, so a batch never holds half a line. */
#include "sinks/lineproto.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/glossary.h"
#include "core/numfmt.h"

/* Where the first of ", =\n\r" is in s[0..n), or n: sixteen bytes at a
 * time where SSE2 is there (every x86-64), the last block overlapping. A
 * string shorter than 16 bytes is read as one block when that stays
 * inside its memory page (as the vector string functions of libc do) and
 * the bytes past n are masked off; the sanitizer is told so. */
#ifdef __SSE2__
static inline unsigned special_mask(__m128i x)
{
    const __m128i comma = _mm_set1_epi8(','), space = _mm_set1_epi8(' '), eq = _mm_set1_epi8('='),
                  nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, comma), _mm_cmpeq_epi8(x, space)),
                             _mm_or_si128(_mm_cmpeq_epi8(x, eq),
                                          _mm_or_si128(_mm_cmpeq_epi8(x, nl), _mm_cmpeq_epi8(x, cr))));
    return (unsigned)_mm_movemask_epi8(m);
}
#endif

#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize_address))
#endif
static size_t first_special(const char *s, size_t n)
{
    size_t i = 0;
#ifdef __SSE2__
    if (n >= 16) {
        for (;; i += 16) {
            if (i + 16 > n) i = n - 16;
            unsigned mask = special_mask(_mm_loadu_si128((const __m128i *)(const void *)(s + i)));
            if (mask) return i + (size_t)__builtin_ctz(mask);
            if (i + 16 == n) return n;
        }
    }
    if (((uintptr_t)s & 4095) <= 4096 - 16) {
        unsigned mask = special_mask(_mm_loadu_si128((const __m128i *)(const void *)s)) &
                        ((1u << n) - 1);
        return mask ? (size_t)__builtin_ctz(mask) : n;
    }
#endif
    for (; i < n; i++) {
        char c = s[i];
        if (c == ',' || c == ' ' || c == '=' || c == '\n' || c == '\r') return i;
    }
    return n;
}

/* The length of s when it equals the remembered tag value m (n bytes,
 * zero-padded to 64), else 0. Where s's 64-byte block stays inside its
 * page, it is compared as four vectors (bytes past the NUL are masked
 * off, as in first_special). */
#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize_address))
#endif
static inline size_t same_tag(const char *s, const char *m, size_t n)
{
    if (!n) return 0;
#ifdef __SSE2__
    if (((uintptr_t)s & 4095) <= 4096 - 64) {
        uint64_t eq = 0;
        for (int i = 0; i < 4; i++) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * i));
            __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(m + 16 * i));
            eq |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, c)) << (16 * i);
        }
        uint64_t want = (UINT64_C(2) << n) - 1; /* n + 1 bytes: the NUL too */
        return (eq & want) == want ? n : 0;
    }
#endif
    return strncmp(s, m, n + 1) ? 0 : n;
}

/* A tag value of n bytes, escaped, at p (2n bytes of room); NULL when it
 * cannot be written. */
static char *put_tag_value(char *p, const char *s, size_t n)
{
    if (s[n - 1] == '\\') return NULL;
    size_t i = first_special(s, n);
    memcpy(p, s, i);
    p += i;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '\n' || c == '\r') return NULL;
        if (c == ',' || c == ' ' || c == '=') *p++ = '\\';
        *p++ = c;
    }
    return p;
}

/* A tag key or value or a field key, escaped (comma, equals, space). False
 * when it cannot be written: a newline, or a backslash as the last
 * character (line protocol reads it as escaping the separator after it,
 * and has no escape for a backslash itself). */
bool tl_lp_put_escaped(struct tl_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (!n) return true;
    if (!tl_buf_room(b, 2 * n)) return true; /* out of memory: b->oom says so */
    char *e = put_tag_value(b->data + b->len, s, n);
    if (!e) return false;
    b->len = (size_t)(e - b->data);
    return true;
}

/* A tag key: most are tasklens's own names, which need nothing, and are
 * copied whole; the rest escaped (or renamed: `time`). */
static bool put_key(struct tl_buf *b, const char *k, struct tl_lp_stats *st)
{
    size_t n = strlen(k);
    if (n == 4 && !memcmp(k, "time", 4)) {
        st->renamed_time++;
        tl_buf_puts(b, "time_");
        return true;
    }
    if (n && first_special(k, n) == n && k[n - 1] != '\\') {
        tl_buf_append(b, k, n);
        return true;
    }
    return tl_lp_put_escaped(b, k);
}

static bool put_tag(struct tl_buf *b, const char *k, const char *v, struct tl_lp_stats *st)
{
    if (!v || !*v) return true; /* empty tag values are omitted */
    tl_buf_putc(b, ',');
    return put_key(b, k, st) && (tl_buf_putc(b, '='), tl_lp_put_escaped(b, v));
}

/* k: one of our own names (nothing to escape). No 'i' after the number:
 * InfluxDB reads it as a float. */
static void put_float_field_n(struct tl_buf *b, bool *first, const char *k, size_t klen, double v)
{
    if (!tl_buf_room(b, klen + 2 + TL_FMT_WIDE)) return;
    char *p = b->data + b->len;
    *p++ = *first ? ' ' : ',';
    *first = false;
    memcpy(p, k, klen);
    p += klen;
    *p++ = '=';
    p += tl_fmt_double_wide(p, v);
    b->len = (size_t)(p - b->data);
}

static void put_float_field(struct tl_buf *b, bool *first, const char *k, double v)
{
    put_float_field_n(b, first, k, strlen(k), v);
}

static void put_int_field(struct tl_buf *b, bool *first, const char *k, int64_t v)
{
    tl_buf_putc(b, *first ? ' ' : ',');
    *first = false;
    tl_buf_puts(b, k);
    tl_buf_putc(b, '=');
    tl_buf_put_i64(b, v);
    tl_buf_putc(b, 'i');
}

/* ",name=" for every metric, in blocks copied whole (the encoder has the
 * room reserved; what follows the name is overwritten by the value). */
static const struct {
    char s[32];
    unsigned char n;
} field_prefix[TL_M_COUNT] = {
#define TL_FIELD_PREFIX(e, n, u, h) [TL_M_##e] = {"," n "=", sizeof n + 1},
    TL_METRICS(TL_FIELD_PREFIX)
#undef TL_FIELD_PREFIX
};

/* A value's slot in the memo: the top bits of a multiplicative hash. */
static inline unsigned memo_slot(uint64_t bits)
{
    _Static_assert((TL_LP_MEMO & (TL_LP_MEMO - 1)) == 0, "memo size is a power of two");
    return (unsigned)((bits * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - __builtin_ctz(TL_LP_MEMO)));
}

/* One field ",name=value" at p: the value from the memo, or formatted and
 * noted in missed[] (see tl_lp_task). Inlined into the loops over the
 * presence words: a loop over the words cost 2 instructions a task more. */
static inline __attribute__((always_inline)) char *put_metric(struct tl_lp_stats *st, char *p,
                                                              const char *first,
                                                              const struct tl_record *r, int m,
                                                              uint64_t *missed, int *nmissed)
{
    uint64_t vb;
    memcpy(&vb, &r->v[m], sizeof vb);
    if ((~vb & (UINT64_C(0x7ff) << 52)) == 0) return p; /* nan, inf */
    memcpy(p, field_prefix[m].s, sizeof field_prefix[m].s);
    p += field_prefix[m].n;
    unsigned h = memo_slot(vb);
    if (st->memo[h].bits == vb && st->memo[h].n) {
        memcpy(p, st->memo[h].s, sizeof st->memo[h].s);
        return p + st->memo[h].n;
    }
    size_t n = tl_fmt_double_wide(p, r->v[m]);
    st->memo[h].bits = vb;
    st->memo[h].n = 0;
    if (n <= sizeof st->memo[h].s)
        missed[(*nmissed)++] = (uint64_t)m << 40 | (uint64_t)n << 32 | (uint64_t)(p - first);
    return p + n;
}

/* A failed attempt's tags: its cause (docs/glossary.md) and failed=true,
 * what the Grafana failure panels select and group by; both absent on the
 * rest. Tags, not fields: InfluxQL groups by tags only, and a cause adds few
 * series (a failing result is a series of its own already). */
static bool put_failure(struct tl_buf *b, const struct tl_record *r)
{
    tl_buf_append(b, ",cause=", 7);
    tl_buf_puts(b, tl_cause_name(tl_failure_cause(r)));
    tl_buf_append(b, ",failed=true", 12);
    return !b->oom;
}

int tl_lp_task(struct tl_buf *b, const struct tl_record *r, struct tl_lp_stats *st)
{
    if (r->kind != TL_REC_TASK) return 0;
    static const struct {
        char s[12];
        unsigned char n;
    } tag_prefix[] = {{",category=", 10}, {",host=", 6}, {",result=", 8}, {",source=", 8},
                      {",workflow=", 10}};
    const char *vals[] = {r->category, r->host, r->result, r->source, r->workflow};
    size_t lens[5], room = 4 + 5 * (sizeof tag_prefix[0].s + sizeof st->tag_memo[0].s);
    unsigned hit = 0; /* tags equal to the remembered ones: copied whole */
    for (int i = 0; i < 5; i++) {
        lens[i] = 0;
        if (!vals[i]) continue;
        if ((lens[i] = same_tag(vals[i], st->tag_memo[i].s, st->tag_memo[i].n))) hit |= 1u << i;
        else room += 2 * (lens[i] = strlen(vals[i]));
    }
    size_t start = b->len;
    if (!tl_buf_room(b, room)) return 0;
    char *p = b->data + b->len;
    memcpy(p, "task", 4);
    p += 4;
    for (int i = 0; i < 5; i++) {
        if (!lens[i]) continue; /* empty tag values are omitted */
        memcpy(p, tag_prefix[i].s, sizeof tag_prefix[i].s);
        p += tag_prefix[i].n;
        if (hit >> i & 1) {
            memcpy(p, st->tag_memo[i].s, sizeof st->tag_memo[i].s);
            p += lens[i];
            continue;
        }
        char *e = put_tag_value(p, vals[i], lens[i]);
        if (!e) goto unwritable;
        if ((size_t)(e - p) == lens[i] && lens[i] < sizeof st->tag_memo[i].s - 1) {
            /* nothing escaped: remembered for the next points */
            memset(st->tag_memo[i].s, 0, sizeof st->tag_memo[i].s);
            memcpy(st->tag_memo[i].s, vals[i], lens[i]);
            st->tag_memo[i].n = lens[i];
        }
        p = e;
    }
    b->len = (size_t)(p - b->data);
    for (int i = 0; i < r->n_tags; i++)
        if (!put_tag(b, r->tags[i].key, r->tags[i].value, st)) goto unwritable;
    /* An attempt that was not its task's last carries retried=true (a tag, so
     * dashboards keep each task's last attempt by series, in storage, instead
     * of reading the `final` field beside every value: 25x cheaper in Flux). */
    if (!r->final) {
        tl_buf_append(b, ",retried=true", 13);
        if (b->oom) return 0;
    }
    if (tl_verdict_of(&st->verdict, r) == TL_VERDICT_FAILED && !put_failure(b, r)) return 0;

    /* fields: each metric present, then the integers, the task's own key
     * (a string field: no series; left out if it holds a newline, which
     * line protocol cannot carry), then final */
    size_t klen = r->task_key && !strchr(r->task_key, '\n') ? strlen(r->task_key) : 0;
    room = TL_M_COUNT * (sizeof field_prefix[0].s + TL_FMT_WIDE) + 4 * (16 + TL_FMT_WIDE) + 2 * klen + 64;
    if (!tl_buf_room(b, room)) return 0;
    p = b->data + b->len;
    char *first = p; /* the separator before the first field becomes a space */
    /* Values formatted now are remembered once the point is written: read
     * back right away, the bytes just stored in pieces would stall the
     * load (no store-to-load forwarding across several stores). Each is
     * noted as one word: metric << 40 | length << 32 | offset from first. */
    uint64_t missed[TL_M_COUNT];
    int nmissed = 0;
    for (uint64_t bits = r->present[0]; bits; bits &= bits - 1)
        p = put_metric(st, p, first, r, __builtin_ctzll(bits), missed, &nmissed);
    _Static_assert(TL_MASK_WORDS == 2, "the metrics past 64 are the second word's");
    for (uint64_t bits = r->present[1]; bits; bits &= bits - 1) /* the formats' own: rare */
        p = put_metric(st, p, first, r, 64 + __builtin_ctzll(bits), missed, &nmissed);
    if (r->task_id >= 0) {
        memcpy(p, ",task_id=", 9);
        p += 9;
        p += tl_fmt_i64_wide(p, r->task_id);
        *p++ = 'i';
    }
    memcpy(p, ",attempt=", 9);
    p += 9;
    p += tl_fmt_i64_wide(p, r->attempt);
    *p++ = 'i';
    if (r->has_exit_code) {
        memcpy(p, ",exit_code=", 11);
        p += 11;
        p += tl_fmt_i64_wide(p, r->exit_code);
        *p++ = 'i';
    }
    if (klen) {
        memcpy(p, ",task_key=\"", 11);
        p += 11;
        for (size_t i = 0; i < klen; i++) {
            if (r->task_key[i] == '"' || r->task_key[i] == '\\') *p++ = '\\';
            *p++ = r->task_key[i];
        }
        *p++ = '"';
    }
    if (r->final) {
        memcpy(p, ",final=true ", 12);
        p += 12;
    } else {
        memcpy(p, ",final=false ", 13);
        p += 13;
    }
    *first = ' ';
    p += tl_fmt_i64_wide(p, tl_point_task_time(r));
    *p++ = '\n';
    b->len = (size_t)(p - b->data);
    for (int i = 0; i < nmissed; i++) {
        /* in order, with the bits: two values of one point may share a slot */
        uint64_t vb;
        memcpy(&vb, &r->v[missed[i] >> 40], sizeof vb);
        unsigned h = memo_slot(vb);
        memcpy(st->memo[h].s, first + (uint32_t)missed[i], sizeof st->memo[0].s);
        st->memo[h].bits = vb;
        st->memo[h].n = (unsigned char)(missed[i] >> 32);
    }
    st->points++;
    return 1;
unwritable:
    b->len = start;
    st->rejected_unwritable++;
    return 0;
}

/* One `task_histogram` bucket point: the shared tag prefix, the bucket's
 * range, the window tag, its count, the window's time. */
struct hist_emit {
    struct tl_buf *b;
    struct tl_lp_stats *st;
    const char *prefix, *window_tag; /* "task_histogram,...,metric=x", ",window=60s" */
    size_t prefix_len, window_len;
    char time[24]; /* " <ns>\n" */
    size_t time_len;
    int points;
};

/* The bucket's tags -- ",vmrange=<lo>...<hi>,lo=<lo>,hi=<hi>" -- remembered
 * by its id (see tl_lp_stats.hist_memo). `lo` and `hi` repeat the bounds as
 * plain numbers: Flux converts such a tag to a float in its vectorized map,
 * where splitting `vmrange` with strings.split costs ~24 us a row
 * (bench/RESULTS.md: a day's quantile graph 28.8 s -> ~3 s on 2.7). */
static size_t bucket_tags(struct tl_lp_stats *st, const struct tl_sketch_bucket *k, char *out,
                          size_t cap, const char **tags)
{
    unsigned h = (unsigned)(((uint64_t)k->id * 0x9E3779B97F4A7C15ULL) >> 53); /* 11 bits */
    *tags = out;
    if (st->hist_memo[h].n && st->hist_memo[h].id == k->id) {
        *tags = st->hist_memo[h].s; /* appended from the memo itself: one copy a point */
        return st->hist_memo[h].n;
    }
    double lo, hi;
    char label[64];
    tl_sketch_bucket_range(k, &lo, &hi);
    int n = tl_sketch_range_label(k->s, lo, hi, label, sizeof label);
    const char *dots = n > 0 ? strstr(label, "...") : NULL;
    if (!dots) return 0;
    size_t lo_len = (size_t)(dots - label), hi_len = (size_t)n - lo_len - 3;
    size_t len = 9 + (size_t)n + 4 + lo_len + 4 + hi_len;
    if (len > cap) return 0;
    char *p = out;
    memcpy(p, ",vmrange=", 9), p += 9;
    memcpy(p, label, (size_t)n), p += n;
    memcpy(p, ",lo=", 4), p += 4;
    memcpy(p, label, lo_len), p += lo_len;
    memcpy(p, ",hi=", 4), p += 4;
    memcpy(p, dots + 3, hi_len);
    if (len <= sizeof st->hist_memo[h].s) {
        memcpy(st->hist_memo[h].s, out, len);
        st->hist_memo[h].n = (unsigned char)len;
        st->hist_memo[h].id = k->id;
    }
    return len;
}

static void hist_bucket(void *ctx, const struct tl_sketch_bucket *k)
{
    struct hist_emit *h = ctx;
    char tags[160];
    const char *text;
    size_t len = bucket_tags(h->st, k, tags, sizeof tags, &text);
    if (!len) { /* a bound no label can hold: counted, never half-written */
        h->st->rejected_unwritable++;
        return;
    }
    struct tl_buf *b = h->b;
    tl_buf_append(b, h->prefix, h->prefix_len);
    tl_buf_append(b, text, len);
    tl_buf_append(b, h->window_tag, h->window_len);
    tl_buf_puts(b, " bucket=");
    tl_buf_put_i64(b, (int64_t)k->n); /* no `i`: a float, as histogramQuantile wants */
    tl_buf_append(b, h->time, h->time_len);
    h->points++;
}

int tl_lp_histogram(struct tl_buf *b, const struct tl_agg_window *w, const char *const *by,
                    int nby, const char *window_label, const char *instance,
                    struct tl_lp_stats *st)
{
    struct tl_sketch *s = w->sketch;
    if (!s->count) return 0;
    struct tl_buf tags = {0};
    bool ok = true;
    struct tl_buf part = {0};
    tl_buf_puts(&tags, "task_histogram");
    for (int i = 0; ok && i < nby; i++)
        ok = put_tag(&tags, by[i], tl_agg_key_part(w->group->key, i, &part), st);
    tl_buf_free(&part);
    ok = ok && put_tag(&tags, "instance", instance, st) &&
         put_tag(&tags, "metric", tl_metric_info[w->metric].name, st);
    size_t prefix_len = tags.len;
    ok = ok && put_tag(&tags, "window", window_label, st);
    if (!ok || tags.oom) {
        tl_buf_free(&tags);
        st->rejected_unwritable++;
        return 0;
    }
    struct hist_emit h = {b, st, tags.data, tags.data + prefix_len, prefix_len, tags.len - prefix_len,
                          "", 0, 0};
    int64_t time_ns = w->end_ns + (int64_t)w->part;
    h.time[0] = ' ';
    h.time_len = 1 + (size_t)tl_fmt_i64_wide(h.time + 1, time_ns);
    h.time[h.time_len++] = '\n';
    tl_sketch_each_bucket(s, hist_bucket, &h);
    /* the window's count, sum, min and max: p0 and p100 exact, means over any range */
    tl_buf_append(b, tags.data, tags.len);
    bool first = true;
    put_int_field(b, &first, "count", (int64_t)s->count);
    put_float_field(b, &first, "sum", tl_sketch_sum(s));
    put_float_field(b, &first, "min", s->min);
    put_float_field(b, &first, "max", s->max);
    tl_buf_append(b, h.time, h.time_len);
    tl_buf_free(&tags);
    st->points += (uint64_t)h.points + 1;
    return h.points + 1;
}

/* ---------------------------------------------------------------- any point */

/* The fields of a point at p (room reserved by the caller), separated by
 * sep (' ' before the first, then ','): keys are tasklens's own names
 * (core/point.h), written as they are; floats that are not finite and
 * strings with a newline are left out (line protocol has no NaN, and no
 * escape for a newline). Returns the end; *any says whether one was. */
static char *put_fields(char *p, const struct tl_point *pt, const size_t *klen, bool *any)
{
    char sep = ' ';
    for (int i = 0; i < pt->nfields; i++) {
        const struct tl_point_field *f = &pt->fields[i];
        if (f->type == TL_FIELD_FLOAT && !isfinite(f->v.f)) continue;
        if (f->type == TL_FIELD_STRING && strchr(f->v.s, '\n')) continue;
        *p++ = sep;
        sep = ',';
        memcpy(p, f->key, klen[i]);
        p += klen[i];
        *p++ = '=';
        switch (f->type) {
        case TL_FIELD_FLOAT:
            p += tl_fmt_double_wide(p, f->v.f);
            break;
        case TL_FIELD_INT:
            p += tl_fmt_i64_wide(p, f->v.i);
            *p++ = 'i';
            break;
        case TL_FIELD_BOOL:
            memcpy(p, f->v.b ? "true" : "false", 5);
            p += f->v.b ? 4 : 5;
            break;
        case TL_FIELD_STRING:
            *p++ = '"';
            for (const char *c = f->v.s; *c; c++) {
                if (*c == '"' || *c == '\\') *p++ = '\\';
                *p++ = *c;
            }
            *p++ = '"';
            break;
        }
    }
    *any = sep == ',';
    return p;
}

int tl_lp_point(struct tl_buf *b, const struct tl_point *p, struct tl_lp_stats *st)
{
    size_t start = b->len;
    tl_buf_puts(b, p->measurement); /* ours: nothing to escape */
    for (int i = 0; i < p->ntags; i++)
        if (!put_tag(b, p->tags[i].key, p->tags[i].value, st)) {
            b->len = start;
            st->rejected_unwritable++;
            return 0;
        }
    /* the fields' room at once: keys, '=', a number's widest (or a string
     * escaped and quoted), the separator; then the time */
    size_t klen[TL_POINT_MAX_FIELDS], room = 2 * TL_FMT_WIDE;
    for (int i = 0; i < p->nfields; i++) {
        klen[i] = strlen(p->fields[i].key);
        room += klen[i] + 2 + (p->fields[i].type == TL_FIELD_STRING ? 2 * strlen(p->fields[i].v.s) + 2 : TL_FMT_WIDE);
    }
    if (!tl_buf_room(b, room)) return 0; /* out of memory: b->oom says so */
    bool any;
    char *e = put_fields(b->data + b->len, p, klen, &any);
    if (!any) { /* no field: not a point */
        b->len = start;
        return 0;
    }
    *e++ = ' ';
    e += tl_fmt_i64_wide(e, p->time_ns);
    *e++ = '\n';
    b->len = (size_t)(e - b->data);
    st->points++;
    return 1;
}

/* ---------------------------------------------------------------- the codec */

static int codec_point(struct tl_buf *out, const struct tl_point *p, void *state)
{
    return tl_lp_point(out, p, state);
}

static int codec_task(struct tl_buf *out, const struct tl_record *r, void *state)
{
    return tl_lp_task(out, r, state);
}

static int codec_histogram(struct tl_buf *out, const struct tl_agg_window *w, const char *const *by, int nby,
                           const char *window_label, const char *instance, void *state)
{
    return tl_lp_histogram(out, w, by, nby, window_label, instance, state);
}

static uint64_t codec_refused(const void *state)
{
    return ((const struct tl_lp_stats *)state)->rejected_unwritable;
}

/* One point a line. */
static uint32_t codec_count(const char *p, size_t len)
{
    uint32_t n = 0;
    for (const char *e = p + len; (p = memchr(p, '\n', (size_t)(e - p))); p++) n++;
    return n;
}

static size_t codec_split(const char *body, size_t len)
{
    const char *mid = memchr(body + len / 2, '\n', len - len / 2);
    if (!mid || mid + 1 >= body + len) mid = memrchr(body, '\n', len / 2);
    return mid ? (size_t)(mid - body) + 1 : len;
}

const struct tl_codec tl_codec_lineproto = {
    .name = "line protocol",
    .state_size = sizeof(struct tl_lp_stats),
    .point = codec_point,
    .task = codec_task,
    .histogram = codec_histogram,
    .refused = codec_refused,
    .refused_why = "a name or value with a newline or a trailing backslash cannot be written in line protocol",
    .count = codec_count,
    .split = codec_split,
};

void tl_lp_victoriametrics(struct tl_buf *out, const char *lp, size_t len)
{
    const char *p = lp, *end = lp + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        eol = eol ? eol + 1 : end;
        bool series = true; /* up to the first unescaped space: measurement and tags */
        for (const char *q = p; q < eol; q++) {
            if (series && *q == '\\') {
                bool escape = q + 1 < eol && (q[1] == ',' || q[1] == ' ' || q[1] == '=');
                tl_buf_putc(out, '\\');
                if (escape) tl_buf_putc(out, *++q);
                else tl_buf_putc(out, '\\');
                continue;
            }
            if (*q == ' ') series = false;
            tl_buf_putc(out, *q);
        }
        p = eol;
    }
}
