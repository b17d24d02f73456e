/* The report's task rows as compact data (tasks.c draws them): one JSON
 * script element, per column one comma-separated string of integers --
 * times in microseconds, as a profiler's slices need; a submission after
 * the run's first; cores in millicores; bytes as they are -- with runs of a
 * value written once and ids and submissions as differences, so a million
 * attempts are tens of megabytes a browser parses in a second. Names go
 * through json_html_str: nothing in them can close the script element. A
 * number is written by its own integer writer into a block, never by
 * printf: a million rows write fifteen million of them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/numfmt.h"
#include "core/utf8.h"
#include "report/report.h"
#include "report/tasks_impl.h"

const char *const tl_tasks_col_key[C_COUNT] = {"cat", "status", "exit", "attempt", "id", "submit", "queue", "wall",
                                               "cpu", "rss", "read", "written", "req_cores", "req_mem", "req_time",
                                               "alloc_cores", "alloc_mem"};

void tl_tasks_blocks_free(struct tl_tasks_blocks *kp)
{
    for (size_t i = 0; i < kp->n; i++) free(kp->b[i]);
    free(kp->b);
    free(kp->len);
    *kp = (struct tl_tasks_blocks){0};
}

/* Output gathered in a block: written to o when full (a million rows write
 * fifteen million numbers, and a stdio call each cost a third of the page's
 * time, perf, 1 M attempts) or, with o NULL, kept as it is and the next
 * block begun (the second thread's data: a memory stream growing to 80 MB
 * copied and cleared it again at each doubling, 0.12 s of its CPU). */
struct chunk {
    FILE *o;
    char *b;
    size_t n, size;
    struct tl_tasks_blocks *kept; /* o NULL: the blocks filled, in order */
    bool short_write;  /* a write that did not take all it was given, or no memory for a block */
};

#define CHUNK_FILE ((size_t)1 << 16) /* a block written to a file and refilled */
#define CHUNK_KEPT ((size_t)1 << 20) /* a block kept: a million rows fill about 50 */

static bool chunk_open(struct chunk *k, FILE *o, struct tl_tasks_blocks *kept)
{
    *k = (struct chunk){.o = o, .kept = kept, .size = o ? CHUNK_FILE : CHUNK_KEPT};
    k->b = malloc(k->size);
    return k->b != NULL;
}

static bool keep_block(struct tl_tasks_blocks *kp, char *b, size_t n)
{
    if (kp->n == kp->cap) {
        size_t cap = kp->cap ? kp->cap * 2 : 64;
        char **nb = realloc(kp->b, cap * sizeof *nb);
        if (nb) kp->b = nb;
        size_t *nl = nb ? realloc(kp->len, cap * sizeof *nl) : NULL;
        if (!nl) return false;
        kp->len = nl;
        kp->cap = cap;
    }
    kp->b[kp->n] = b;
    kp->len[kp->n++] = n;
    return true;
}

/* The block written or kept, and the next one begun. */
static void chunk_flush(struct chunk *k)
{
    if (k->short_write) {
        k->n = 0;
        return;
    }
    if (k->o) {
        if (fwrite(k->b, 1, k->n, k->o) != k->n) k->short_write = true;
        k->n = 0;
        return;
    }
    char *next = malloc(k->size);
    if (!next || !keep_block(k->kept, k->b, k->n)) {
        free(next); /* what follows is dropped: the data is not whole */
        k->short_write = true;
    } else {
        k->b = next;
    }
    k->n = 0;
}

/* The last block written or kept; true when all of it went. */
static bool chunk_close(struct chunk *k)
{
    bool kept = false;
    if (k->n && !k->short_write) {
        if (k->o) chunk_flush(k);
        else if (!(kept = keep_block(k->kept, k->b, k->n))) k->short_write = true;
    }
    if (!kept) free(k->b);
    k->b = NULL;
    return !k->short_write;
}

static void chunk_put(struct chunk *k, const void *p, size_t len)
{
    const char *s = p;
    while (len) {
        if (k->n == k->size) chunk_flush(k);
        size_t part = len < k->size - k->n ? len : k->size - k->n;
        memcpy(k->b + k->n, s, part);
        k->n += part;
        s += part;
        len -= part;
    }
}

static void chunk_c(struct chunk *k, char c)
{
    if (k->n == k->size) chunk_flush(k);
    k->b[k->n++] = c;
}

/* A JSON string that can sit in a <script> element: '<', '>' and '&' as
 * \u escapes, bytes that are not UTF-8 as U+FFFD. Runs of plain bytes are
 * copied whole. */
static void json_html_str(struct chunk *k, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), run = 0;
    char esc[8];
    chunk_c(k, '"');
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        bool plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
        int len = c >= 0x80 ? tl_utf8_len(p + i, n - i, NULL) : 1;
        if (plain || (c >= 0x80 && len)) {
            i += (size_t)len;
            run += (size_t)len;
            continue;
        }
        chunk_put(k, p + i - run, run);
        run = 0;
        if (c == '"' || c == '\\') snprintf(esc, sizeof esc, "\\%c", c);
        else if (c < 0x80) snprintf(esc, sizeof esc, "\\u%04x", c);
        else snprintf(esc, sizeof esc, "\\ufffd");
        chunk_put(k, esc, strlen(esc));
        i++;
    }
    chunk_put(k, p + n - run, run);
    chunk_c(k, '"');
}

static void key_open(struct chunk *k, const char *key, char bracket)
{
    chunk_put(k, ",\"", 2);
    chunk_put(k, key, strlen(key));
    chunk_put(k, "\":", 2);
    chunk_c(k, bracket);
}

static void names_array(struct chunk *k, const char *key, const struct tl_intern *in)
{
    key_open(k, key, '[');
    for (size_t i = 0; i < tl_intern_count(in); i++) {
        if (i) chunk_c(k, ',');
        json_html_str(k, tl_intern_str(in, (int32_t)i));
    }
    chunk_c(k, ']');
}

/* A column's values as runs: a value repeated k > 1 times in a row is
 * written once as "v*k" (an absent value is empty, so "*k" is k absent
 * ones); in a delta column (ids, submissions) each present value is its
 * difference from the previous present one. Constant columns -- a result,
 * an exit code, what was asked for -- shrink to a few bytes, and sequential
 * ids to "1*n": a million Work Queue attempts' data went from 81 MB to
 * about 45 MB (bench/RESULTS.md). */
struct runs {
    struct chunk *k;
    int64_t v, prev; /* the run's value; the previous present value (delta columns) */
    size_t count;    /* of the run, 0 before the first value */
    bool absent, delta, any;
};

/* x written straight into the block (the wide writer may use 64 bytes of room). */
static inline void put_i64(struct chunk *k, int64_t x)
{
    if (k->n + TL_FMT_WIDE > k->size) chunk_flush(k);
    k->n += tl_fmt_i64_wide(k->b + k->n, x);
}

static void run_end(struct runs *r)
{
    if (!r->count) return;
    if (r->any) chunk_c(r->k, ',');
    r->any = true;
    if (!r->absent) put_i64(r->k, r->v);
    if (r->count > 1) {
        chunk_c(r->k, '*');
        put_i64(r->k, (int64_t)r->count);
    }
}

/* v rounded half away from zero (fractions of a microsecond, a byte or a
 * millicore are below what the table shows), absent when NAN or past int64
 * (then no difference of two values overflows). */
static inline void run_add(struct runs *r, double v)
{
    bool absent = !(fabs(v) < 9e18);
    int64_t x = 0;
    if (!absent) {
        x = v >= 0 ? (int64_t)(v + 0.5) : -(int64_t)(0.5 - v);
        if (r->delta) {
            int64_t d = x - r->prev;
            r->prev = x;
            x = d;
        }
    }
    if (r->count && absent == r->absent && (absent || x == r->v)) {
        r->count++;
        return;
    }
    run_end(r);
    *r = (struct runs){.k = r->k, .v = x, .prev = r->prev, .count = 1, .absent = absent, .delta = r->delta,
                       .any = r->any};
}

static bool delta_column(int c)
{
    return c == C_ID || c == C_SUBMIT;
}

/* Rows [from, to) of column c into r: one loop per column, the field
 * chosen outside it (a switch per value cost a tenth of the page). */
static void encode_range(struct runs *r, const struct tl_report_tasks *t, int c, double t0, size_t from, size_t to)
{
#define COLUMN(expr)                                                                                               \
    for (size_t i = from; i < to; i++) {                                                                           \
        const struct trow *w = trow_at(t, i);                                                                      \
        run_add(r, (expr));                                                                                        \
    }                                                                                                              \
    break
    switch (c) {
    case C_CAT: COLUMN(w->cat);
    case C_STATUS: COLUMN(w->status);
    case C_EXIT: COLUMN(w->has_exit ? w->exit : NAN);
    case C_ATTEMPT: COLUMN(w->attempt > 0 ? w->attempt : NAN);
    case C_ID: COLUMN(w->id >= 0 ? (double)w->id : NAN);
    case C_SUBMIT: COLUMN(w->untimed ? NAN : (submit_of(w) - t0) * US);
    case C_QUEUE: COLUMN(w->queue * US);
    case C_WALL: COLUMN(w->wall * US);
    case C_CPU: COLUMN(w->cpu * US);
    case C_RSS: COLUMN(w->rss);
    case C_READ: COLUMN(w->read);
    case C_WRITTEN: COLUMN(w->written);
    case C_REQ_CORES: COLUMN(w->req_cores * 1000);
    case C_REQ_MEM: COLUMN(w->req_mem);
    case C_ALLOC_CORES: COLUMN(w->alloc_cores * 1000);
    case C_ALLOC_MEM: COLUMN(w->alloc_mem);
    default: COLUMN(w->req_time * US);
    }
#undef COLUMN
}

/* ------------------------------------------------------------ the stream */

/* The submissions count from the first, known only once every row is in. */
static bool streamed(int c)
{
    return c != C_SUBMIT;
}

struct tl_tasks_stream {
    struct chunk k[C_COUNT];
    struct tl_tasks_blocks blocks[C_COUNT];
    struct runs r[C_COUNT];
    size_t done; /* rows encoded */
    bool oom;
};

struct tl_tasks_stream *tl_tasks_stream_new(void)
{
    struct tl_tasks_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    for (int c = 0; c < C_COUNT; c++) {
        if (!streamed(c)) continue;
        if (!chunk_open(&s->k[c], NULL, &s->blocks[c])) {
            tl_tasks_stream_free(s);
            return NULL;
        }
        s->r[c] = (struct runs){.k = &s->k[c], .delta = delta_column(c)};
    }
    return s;
}

void tl_tasks_stream_feed(struct tl_tasks_stream *s, const struct tl_report_tasks *t, size_t upto, size_t most)
{
    size_t to = upto - s->done > most ? s->done + most : upto;
    if (to <= s->done) return;
    for (int c = 0; c < C_COUNT; c++)
        if (streamed(c)) encode_range(&s->r[c], t, c, 0, s->done, to);
    s->done = to;
}

size_t tl_tasks_stream_done(const struct tl_tasks_stream *s)
{
    return s->done;
}

void tl_tasks_stream_free(struct tl_tasks_stream *s)
{
    if (!s) return;
    for (int c = 0; c < C_COUNT; c++) {
        free(s->k[c].b);
        tl_tasks_blocks_free(&s->blocks[c]);
    }
    free(s);
}

/* Column c's blocks moved after what k keeps (a stream is only ever
 * spliced into kept blocks: tl_tasks_data_keep). */
static void chunk_splice(struct chunk *k, struct tl_tasks_blocks *from)
{
    char *next = k->n ? malloc(k->size) : NULL;
    if (k->n && (!next || !keep_block(k->kept, k->b, k->n))) {
        free(next);
        k->short_write = true;
        k->n = 0;
        tl_tasks_blocks_free(from);
        return;
    }
    if (next) k->b = next, k->n = 0;
    for (size_t i = 0; i < from->n; i++) {
        if (!keep_block(k->kept, from->b[i], from->len[i])) {
            k->short_write = true;
            break; /* the rest freed below */
        }
        from->b[i] = NULL;
    }
    tl_tasks_blocks_free(from);
}

/* Column c, the stream's part of it and the rows it has not reached. */
static void streamed_column(struct chunk *k, struct tl_tasks_stream *s, const struct tl_report_tasks *t, int c)
{
    encode_range(&s->r[c], t, c, 0, s->done, t->n);
    run_end(&s->r[c]);
    s->r[c].count = 0;
    if (!chunk_close(&s->k[c])) s->oom = true;
    chunk_splice(k, &s->blocks[c]);
}

static void number_column(struct chunk *k, const struct tl_report_tasks *t, int c, double t0,
                          struct tl_tasks_stream *s)
{
    key_open(k, tl_tasks_col_key[c], '"');
    if (s && streamed(c)) {
        streamed_column(k, s, t, c);
    } else {
        struct runs r = {.k = k, .delta = delta_column(c)};
        encode_range(&r, t, c, t0, 0, t->n);
        run_end(&r);
    }
    chunk_c(k, '"');
}

static void text_column(struct chunk *k, const struct tl_report_tasks *t, const char *key, bool tag)
{
    key_open(k, key, '[');
    for (size_t i = 0; i < t->n; i++) {
        if (i) chunk_c(k, ',');
        size_t at = tag ? trow_at(t, i)->tag : trow_at(t, i)->label;
        if (at) json_html_str(k, t->text + at - 1);
        else chunk_put(k, "null", 4);
    }
    chunk_c(k, ']');
}

/* The rows' data, whole, into k; false when it could not be (a write that
 * fell short, or no memory for a block). */
static bool data_script(struct chunk *k, const struct tl_report_tasks *t, double t0, const bool *show,
                        struct tl_tasks_stream *s)
{
    char head[128];
    int len = snprintf(head, sizeof head, "<script type=\"application/json\" id=\"task-data\">{\"n\":%zu,\"t0\":", t->n);
    chunk_put(k, head, (size_t)len);
    len = isfinite(t0) ? snprintf(head, sizeof head, "%.6f", t0) : snprintf(head, sizeof head, "null");
    chunk_put(k, head, (size_t)len);
    chunk_put(k, ",\"deltas\":[", 11);
    for (int c = 0, any = 0; c < C_COUNT; c++) {
        if (!show[c] || !delta_column(c)) continue;
        if (any++) chunk_c(k, ',');
        json_html_str(k, tl_tasks_col_key[c]);
    }
    chunk_c(k, ']');
    names_array(k, "cats", t->cats);
    names_array(k, "statuses", t->status);
    if (t->has_label) text_column(k, t, "label", false);
    if (t->has_tag) text_column(k, t, "tag", true);
    for (int c = 0; c < C_COUNT; c++)
        if (show[c]) number_column(k, t, c, t0, s);
    chunk_put(k, "}</script>\n", 11);
    return chunk_close(k) && !(s && s->oom);
}

bool tl_tasks_data_write(FILE *o, const struct tl_report_tasks *t, double t0, const bool *show)
{
    struct chunk k;
    return chunk_open(&k, o, NULL) && data_script(&k, t, t0, show, NULL);
}

bool tl_tasks_data_keep(struct tl_tasks_blocks *out, const struct tl_report_tasks *t, double t0, const bool *show,
                        struct tl_tasks_stream *s)
{
    struct chunk k;
    return chunk_open(&k, NULL, out) && data_script(&k, t, t0, show, s);
}
