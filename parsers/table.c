/* Header-keyed delimited tables (table.h): lines from bytes in any split,
 * the header's names, cells by separator with CSV quotes where asked. */
#include "parsers/table.h"

#include "core/bytes.h"
#include "core/error.h"
#include "core/numfmt.h"
#include "parsers/parser.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tl_table_init(struct tl_table *t, char sep, bool quotes, size_t max_line)
{
    memset(t, 0, sizeof *t);
    t->sep = sep;
    t->quotes = quotes;
    t->max_line = max_line;
}

void tl_table_free(struct tl_table *t)
{
    tl_buf_free(&t->partial);
    tl_buf_free(&t->header);
    tl_buf_free(&t->names);
    tl_buf_free(&t->unquoted);
}

int tl_table_col(const struct tl_table *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++)
        if (!strcmp(t->col[i], name)) return i;
    return -1;
}

/* A quoted cell from p (at the opening quote): its text with "" as ", into
 * t->unquoted; returns where the cell ends (at a separator or the end). */
static const char *unquote(struct tl_table *t, const char *p, const char *end, size_t *off, size_t *n)
{
    *off = t->unquoted.len;
    p++;
    while (p < end) {
        if (*p == '"') {
            if (p + 1 < end && p[1] == '"') {
                tl_buf_putc(&t->unquoted, '"');
                p += 2;
                continue;
            }
            p++;
            break;
        }
        tl_buf_putc(&t->unquoted, *p++);
    }
    *n = t->unquoted.len - *off;
    while (p < end && *p != t->sep) p++; /* text after the closing quote: dropped */
    return p;
}

/* Splits [p, end) into t->cell[]. Quoted cells point into t->unquoted,
 * fixed up once the row is split (the buffer may move as it grows). */
static void split(struct tl_table *t, const char *p, const char *end)
{
    size_t qoff[TL_TABLE_MAX_COLS];
    bool quoted[TL_TABLE_MAX_COLS];
    t->ncells = 0;
    t->unquoted.len = 0;
    for (;;) {
        int c = t->ncells;
        if (c == TL_TABLE_MAX_COLS) break;
        quoted[c] = t->quotes && p < end && *p == '"';
        const char *q;
        if (quoted[c]) {
            q = unquote(t, p, end, &qoff[c], &t->cell_len[c]);
        } else {
            q = memchr(p, t->sep, (size_t)(end - p));
            if (!q) q = end;
            t->cell[c] = p;
            t->cell_len[c] = (size_t)(q - p);
        }
        t->ncells++;
        if (q >= end) break;
        p = q + 1;
    }
    for (int c = 0; c < t->ncells; c++)
        if (quoted[c]) t->cell[c] = t->unquoted.data ? t->unquoted.data + qoff[c] : "";
}

static void read_header(struct tl_table *t, const char *p, size_t n, const struct tl_table_cb *cb)
{
    t->header.len = 0;
    tl_buf_append(&t->header, p, n);
    if (!t->sep) t->sep = memchr(p, '\t', n) ? '\t' : ',';
    split(t, p, p + n);
    t->names.len = 0;
    size_t off[TL_TABLE_MAX_COLS];
    for (int c = 0; c < t->ncells; c++) {
        off[c] = t->names.len;
        tl_buf_append(&t->names, t->cell[c], t->cell_len[c]);
        tl_buf_putc(&t->names, '\0');
    }
    t->ncols = t->names.oom ? 0 : t->ncells;
    for (int c = 0; c < t->ncols; c++) t->col[c] = t->names.data + off[c];
    t->ncells = 0;
    if (cb->header) cb->header(cb->ctx);
}

/* Where a CSV record is, byte by byte (RFC 4180): at a cell's start, in an
 * unquoted cell, in a quoted one, or just after a quote inside a quoted
 * one (the closing quote, or the first of a doubled one). */
enum { Q_START, Q_PLAIN, Q_QUOTED, Q_QUOTE };

static uint8_t quote_step(uint8_t q, char c, char sep)
{
    bool is_sep = sep ? c == sep : c == ',' || c == '\t';
    switch (q) {
    case Q_START: return c == '"' ? Q_QUOTED : is_sep ? Q_START : Q_PLAIN;
    case Q_PLAIN: return is_sep ? Q_START : Q_PLAIN;
    case Q_QUOTED: return c == '"' ? Q_QUOTE : Q_QUOTED;
    default: return c == '"' ? Q_QUOTED : is_sep ? Q_START : Q_PLAIN;
    }
}

/* Steps t's quote state over [p, p+n): true when the record is inside a
 * quoted cell at the end. */
static bool inside_quotes(struct tl_table *t, const char *p, size_t n)
{
    if (!t->quotes) return false;
    if (!memchr(p, '"', n) && t->qstate != Q_QUOTED) { /* the usual: no quote, no cell open */
        if (n) t->qstate = quote_step(Q_PLAIN, p[n - 1], t->sep);
        return false;
    }
    for (size_t i = 0; i < n; i++) t->qstate = quote_step(t->qstate, p[i], t->sep);
    return t->qstate == Q_QUOTED;
}

static void line(struct tl_table *t, const char *p, size_t n, const struct tl_table_cb *cb)
{
    uint64_t first = t->lines + 1; /* a record is numbered by its first line */
    t->lines += 1 + t->record_lines;
    t->record_lines = 0;
    t->qstate = Q_START;
    if (n && p[n - 1] == '\r') n--;
    if (t->lines == 1 && n >= 3 && !memcmp(p, "\xef\xbb\xbf", 3)) p += 3, n -= 3; /* a BOM */
    if (cb->raw && cb->raw(cb->ctx, p, n, first)) return;
    if (!t->ncols && !t->header.len) {
        read_header(t, p, n, cb);
        return;
    }
    if (!n) return; /* blank lines carry nothing */
    split(t, p, p + n);
    cb->row(cb->ctx, first);
}

void tl_table_glue(struct tl_table *t, int c)
{
    if (c < 0 || t->ncells <= t->ncols || c >= t->ncols) return;
    int extra = t->ncells - t->ncols;
    /* cells are consecutive in the line (none quoted where this is used) */
    const char *last = t->cell[c + extra];
    t->cell_len[c] = (size_t)(last + t->cell_len[c + extra] - t->cell[c]);
    for (int i = c + 1; i + extra < t->ncells; i++) {
        t->cell[i] = t->cell[i + extra];
        t->cell_len[i] = t->cell_len[i + extra];
    }
    t->ncells -= extra;
}

enum tl_err tl_table_feed(struct tl_table *t, const char *buf, size_t len, const struct tl_table_cb *cb)
{
    while (len) {
        const char *nl = memchr(buf, '\n', len);
        size_t take = nl ? (size_t)(nl - buf) : len;
        if (!t->skipping && t->partial.len + take > t->max_line) {
            t->skipping = true;
            t->partial.len = 0;
        }
        bool quoted = !t->skipping && inside_quotes(t, buf, take);
        if (!nl) {
            if (!t->skipping) tl_buf_append(&t->partial, buf, take);
            return t->partial.oom ? TL_ERR_NOMEM : TL_OK;
        }
        if (quoted) { /* a line break inside a quoted cell: the record goes on */
            tl_buf_append(&t->partial, buf, take + 1);
            if (t->partial.oom) return TL_ERR_NOMEM;
            t->record_lines++;
            t->qstate = quote_step(t->qstate, '\n', t->sep);
            buf = nl + 1;
            len -= take + 1;
            continue;
        }
        if (t->skipping) {
            t->lines += 1 + t->record_lines;
            t->record_lines = 0;
            t->qstate = Q_START;
            if (cb->too_long) cb->too_long(cb->ctx, t->lines);
            t->skipping = false;
        } else if (t->partial.len) {
            tl_buf_append(&t->partial, buf, take);
            if (t->partial.oom) return TL_ERR_NOMEM;
            line(t, t->partial.data, t->partial.len, cb);
        } else {
            line(t, buf, take, cb); /* the usual case: the line whole in this feed */
        }
        t->partial.len = 0;
        buf = nl + 1;
        len -= take + 1;
    }
    return TL_OK;
}

void tl_table_finish(struct tl_table *t, const struct tl_table_cb *cb)
{
    if (t->skipping) {
        t->lines += 1 + t->record_lines;
        if (cb->too_long) cb->too_long(cb->ctx, t->lines);
    } else if (t->partial.len && t->qstate == Q_QUOTED && cb->unterminated) {
        cb->unterminated(cb->ctx, t->lines + 1); /* a quoted cell never closed: not a row */
        t->lines += 1 + t->record_lines;
    } else if (t->partial.len) {
        line(t, t->partial.data, t->partial.len, cb);
    }
    t->skipping = false;
    t->partial.len = 0;
    t->record_lines = 0;
    t->qstate = Q_START;
}

void tl_table_save(const struct tl_table *t, struct tl_buf *b)
{
    tl_put_varint(b, t->lines);
    tl_put_u8(b, (uint8_t)t->sep);
    tl_put_u8(b, t->skipping);
    tl_put_varint(b, t->header.len);
    tl_buf_append(b, t->header.data, t->header.len);
    tl_put_varint(b, t->partial.len);
    tl_buf_append(b, t->partial.data, t->partial.len);
}

bool tl_table_restore(struct tl_table *t, const uint8_t **p, const uint8_t *end,
                      const struct tl_table_cb *cb)
{
    uint64_t lines, hlen, plen;
    uint8_t sep, skipping;
    if (!tl_get_varint(p, end, &lines) || !tl_get_u8(p, end, &sep) || !tl_get_u8(p, end, &skipping) ||
        !tl_get_varint(p, end, &hlen) || hlen > (uint64_t)(end - *p) || hlen > t->max_line)
        return false;
    t->sep = (char)sep;
    if (hlen) read_header(t, (const char *)*p, (size_t)hlen, cb);
    *p += hlen;
    if (!tl_get_varint(p, end, &plen) || plen > (uint64_t)(end - *p) || plen > t->max_line) return false;
    t->partial.len = 0;
    tl_buf_append(&t->partial, *p, (size_t)plen);
    *p += plen;
    t->lines = lines;
    t->skipping = skipping & 1;
    /* the quote state and the line breaks of a record cut by the checkpoint,
     * from its bytes: the saved state stays as it was */
    t->qstate = Q_START;
    t->record_lines = 0;
    for (size_t i = 0; t->quotes && i < t->partial.len; i++) {
        t->record_lines += t->partial.data[i] == '\n';
        t->qstate = quote_step(t->qstate, t->partial.data[i], t->sep);
    }
    return !t->partial.oom && !t->header.oom;
}

void tl_table_state_save(struct tl_buf *b, const char *magic, const struct tl_parse_stats *st,
                         const uint64_t *counters, size_t n, const struct tl_table *t)
{
    tl_buf_append(b, magic, 4);
    tl_parse_stats_put(b, st);
    tl_counters_put(b, counters, n);
    tl_table_save(t, b);
}

bool tl_table_state_restore(const uint8_t **p, const uint8_t *end, const char *magic,
                            struct tl_parse_stats *st, uint64_t *counters, size_t n,
                            struct tl_table *t, const struct tl_table_cb *cb)
{
    if (end - *p < 4 || memcmp(*p, magic, 4)) return false;
    *p += 4;
    return tl_parse_stats_get(p, end, st) && tl_counters_get(p, end, counters, n) &&
           tl_table_restore(t, p, end, cb);
}

bool tl_cell_number(const char *s, size_t n, double *out)
{
    while (n && (*s == ' ')) s++, n--;
    while (n && s[n - 1] == ' ') n--;
    if (!n || n > 63) return false;
    double v;
    /* the JSON-style numbers every producer writes, as strtod reads them
     * bit for bit, without its cost (strtod was half of reading a
     * Nextflow trace); "+1" and ".5" through strtod */
    if (!tl_parse_double(s, s + n, &v)) {
        if (*s != '+' && *s != '.') return false;
        char tmp[64], *e;
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        v = strtod(tmp, &e);
        if (e != tmp + n) return false;
    }
    if (isnan(v)) return false; /* "nan": not a number; "inf" stays, for the bad-value check */
    *out = v;
    return true;
}
