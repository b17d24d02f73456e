/* The per-task table's encoder (table.h): a record into one CSV, TSV or
 * NDJSON row. Written for `tasklens records` streaming a 1 GB log, so a
 * row is built in the caller's buffer with no allocation, and times are
 * formatted from integers (exact to the nanosecond; no gmtime, no locale). */
#include "sinks/table.h"
#include "core/quote.h"
#include "core/utf8.h"

#include <stdio.h>
#include <string.h>

#include "core/numfmt.h"

bool tl_table_format_named(const char *name, enum tl_table_format *out)
{
    static const struct { const char *name; enum tl_table_format f; } names[] = {
        {"csv", TL_TABLE_CSV}, {"tsv", TL_TABLE_TSV}, {"ndjson", TL_TABLE_NDJSON},
        {"jsonl", TL_TABLE_NDJSON},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i].name)) {
            *out = names[i].f;
            return true;
        }
    return false;
}

static bool is_task_metric(int m)
{
    return m != TL_M_SAMPLE_VALUE && !(m >= TL_M_TASKS_WAITING && m <= TL_M_WORKER_CORES);
}

void tl_table_default_metrics(struct tl_table *t)
{
    t->nmetrics = 0;
    for (int m = 0; m < TL_M_COUNT; m++)
        if (is_task_metric(m)) t->metrics[t->nmetrics++] = m;
}

/* A metric's column: its name, which spells its unit, save bandwidth,
 * which the record keeps in Mbit/s and the table gives in bit/s. */
static const char *column_name(int m)
{
    return tl_metric_info[m].unit == TL_UNIT_MBPS ? "bandwidth_bit_per_s" : tl_metric_info[m].name;
}

static double column_value(int m, double v)
{
    return tl_metric_info[m].unit == TL_UNIT_MBPS ? v * 1e6 : v;
}

static const char *const fixed_columns[] = {
    "source", "workflow", "category", "task_id", "task_key", "name", "tag", "depends", "attempt", "final",
    "result", "exit_code", "host", "worker", "start", "end", "start_epoch_s", "end_epoch_s",
};

void tl_table_header(const struct tl_table *t, struct tl_buf *out)
{
    if (t->format == TL_TABLE_NDJSON) return;
    char sep = t->format == TL_TABLE_TSV ? '\t' : ',';
    for (size_t i = 0; i < sizeof fixed_columns / sizeof *fixed_columns; i++) {
        if (i) tl_buf_putc(out, sep);
        tl_buf_puts(out, fixed_columns[i]);
    }
    for (int i = 0; i < (t->ntags ? t->ntags : 1); i++) {
        tl_buf_putc(out, sep);
        tl_buf_puts(out, t->ntags ? t->tags[i] : "data_id");
    }
    for (int i = 0; i < t->nmetrics; i++) {
        tl_buf_putc(out, sep);
        tl_buf_puts(out, column_name(t->metrics[i]));
    }
    tl_buf_putc(out, '\n');
}

/* ------------------------------------------------------------ times */

/* Days since 1970-01-01 into a civil date (proleptic Gregorian; H. Hinnant's
 * days_from_civil inverse): exact for every int64 time in ns. */
static void civil_from_days(int64_t z, int *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

/* n decimal digits of v, zero-padded, at p. */
static void put_fixed(char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v /= 10) p[i] = (char)('0' + v % 10);
}

static void split_ns(int64_t t, int64_t *sec, int64_t *ns)
{
    *sec = t / 1000000000;
    *ns = t % 1000000000;
    if (*ns < 0) {
        *ns += 1000000000;
        (*sec)--;
    }
}

/* One time as the table writes it twice: ISO 8601 UTC and epoch seconds,
 * sharing the fraction (formatted once per row, on the stack). */
struct when {
    char iso[64], epoch[40];
    size_t iso_len, epoch_len;
};

/* ".123", ".123456" or ".123456789" at p: the fewest groups of three
 * digits that hold ns exactly; nothing for a whole second. Its length. */
static size_t put_fraction(char *p, int64_t ns)
{
    if (!ns) return 0;
    int digits = ns % 1000000 == 0 ? 3 : ns % 1000 == 0 ? 6 : 9;
    char f[10];
    f[0] = '.';
    put_fixed(f + 1, (uint64_t)ns, 9);
    memcpy(p, f, (size_t)digits + 1);
    return (size_t)digits + 1;
}

static void format_time(struct when *w, int64_t t)
{
    int64_t sec, ns;
    split_ns(t, &sec, &ns);
    int64_t days = sec / 86400, rem = sec % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    int y, mo, d;
    civil_from_days(days, &y, &mo, &d);
    if (y < 0 || y > 9999) {
        w->iso_len = (size_t)snprintf(w->iso, 40, "%d-%02d-%02dT%02d:%02d:%02d", y, mo, d,
                                      (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60));
    } else {
        memcpy(w->iso, "0000-00-00T00:00:00", 19);
        put_fixed(w->iso, (uint64_t)y, 4);
        put_fixed(w->iso + 5, (uint64_t)mo, 2);
        put_fixed(w->iso + 8, (uint64_t)d, 2);
        put_fixed(w->iso + 11, (uint64_t)(rem / 3600), 2);
        put_fixed(w->iso + 14, (uint64_t)(rem / 60 % 60), 2);
        put_fixed(w->iso + 17, (uint64_t)(rem % 60), 2);
        w->iso_len = 19;
    }
    w->epoch_len = tl_fmt_i64(w->epoch, sec);
    size_t f = put_fraction(w->epoch + w->epoch_len, ns);
    memcpy(w->iso + w->iso_len, w->epoch + w->epoch_len, f);
    w->epoch_len += f;
    w->iso_len += f;
    w->iso[w->iso_len++] = 'Z';
}

/* ------------------------------------------------------------ rows */

/* A row under construction: its separator, and whether a cell has been
 * written (the first one has no separator before it). */
struct row {
    struct tl_table *t;
    struct tl_buf *b;
    char sep;
    bool json, started;
};

/* Starts the cell of `key` (n bytes): its separator, or in NDJSON its key
 * (one copy: NDJSON writes a key per value, and three appends with their
 * strlen cost it a quarter of its time on a Work Queue log). */
static inline void cell_n(struct row *w, const char *key, size_t n)
{
    if (w->json) {
        if (!tl_buf_room(w->b, n + 4)) return;
        char *p = w->b->data + w->b->len;
        p[0] = w->started ? ',' : '{';
        p[1] = '"';
        memcpy(p + 2, key, n);
        p[n + 2] = '"';
        p[n + 3] = ':';
        w->b->len += n + 4;
    } else if (w->started) {
        tl_buf_putc(w->b, w->sep);
    }
    w->started = true;
}

/* cell_n of a literal key (its length a constant once inlined). */
static inline void cell(struct row *w, const char *key)
{
    cell_n(w, key, w->json ? strlen(key) : 0);
}

/* An absent value: an empty cell, or in NDJSON no key at all. */
static inline void absent(struct row *w)
{
    if (!w->json) cell_n(w, NULL, 0);
}

/* RFC 4180: a field holding the separator, a quote or a line break is
 * quoted, its quotes doubled (pandas and polars read TSV the same way). */
static void put_csv_string(struct tl_buf *b, const char *s, char sep)
{
    const char specials[] = {sep, '"', '\n', '\r', 0};
    if (!s[strcspn(s, specials)]) {
        tl_buf_puts(b, s);
        return;
    }
    tl_buf_putc(b, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"') tl_buf_putc(b, '"');
        tl_buf_putc(b, *p);
    }
    tl_buf_putc(b, '"');
}

/* v with each byte that is not UTF-8 as U+FFFD, in out. */
static const char *replace_ill_formed(const char *v, struct tl_buf *out)
{
    const unsigned char *p = (const unsigned char *)v, *end = p + strlen(v);
    while (p < end) {
        int n = tl_utf8_len(p, (size_t)(end - p), NULL);
        if (n) tl_buf_append(out, p, (size_t)n);
        else tl_buf_puts(out, TL_UTF8_REPLACEMENT);
        p += n ? n : 1;
    }
    return out->oom ? "" : tl_buf_cstr(out);
}

/* A name: UTF-8 in every format (pandas reads a CSV as UTF-8 and fails on
 * the whole file at one bad byte), an ill-formed byte replaced by U+FFFD
 * as NDJSON does, and counted for the command to say. */
static void str_cell(struct row *w, const char *key, const char *v)
{
    if (!v) return absent(w);
    cell(w, key);
    struct tl_buf fixed = {0};
    if (!tl_ascii(v) && !tl_utf8_valid(v)) {
        w->t->cells_not_utf8++;
        v = replace_ill_formed(v, &fixed);
    }
    if (w->json) tl_buf_put_json_string(w->b, v);
    else put_csv_string(w->b, v, w->sep);
    tl_buf_free(&fixed);
}

static void int_cell(struct row *w, const char *key, bool has, int64_t v)
{
    if (!has) return absent(w);
    cell(w, key);
    tl_buf_put_i64(w->b, v);
}

static void time_cell(struct row *w, const char *key, const char *text, size_t len, bool quoted)
{
    if (!text) return absent(w);
    cell(w, key);
    if (quoted && w->json) tl_buf_putc(w->b, '"');
    tl_buf_append(w->b, text, len);
    if (quoted && w->json) tl_buf_putc(w->b, '"');
}

/* "band=i detector=42": every extra tag, for the one data_id column. */
static void data_id_cell(struct row *w, const struct tl_record *r)
{
    if (!r->n_tags) return absent(w);
    struct tl_buf id = {0}; /* whole, however long the values */
    for (int i = 0; i < r->n_tags; i++)
        tl_buf_printf(&id, "%s%s=%s", i ? " " : "", r->tags[i].key, r->tags[i].value);
    str_cell(w, "data_id", id.oom ? "" : tl_buf_cstr(&id));
    tl_buf_free(&id);
}

static void identity_cells(struct row *w, const struct tl_record *r)
{
    str_cell(w, "source", r->source);
    str_cell(w, "workflow", r->workflow);
    str_cell(w, "category", r->category);
    int_cell(w, "task_id", r->task_id >= 0, r->task_id);
    str_cell(w, "task_key", r->task_key);
    str_cell(w, "name", r->name);
    str_cell(w, "tag", r->tag);
    str_cell(w, "depends", r->depends);
    int_cell(w, "attempt", r->attempt > 0, r->attempt);
    cell(w, "final");
    tl_buf_puts(w->b, r->final ? "true" : "false");
    str_cell(w, "result", r->result);
    int_cell(w, "exit_code", r->has_exit_code, r->exit_code);
    str_cell(w, "host", r->host);
    str_cell(w, "worker", r->worker);
    struct when start, end;
    bool has_start = r->start_ns != TL_NO_TIME, has_end = r->time_ns != 0;
    if (has_start) format_time(&start, r->start_ns);
    if (has_end) format_time(&end, r->time_ns);
    time_cell(w, "start", has_start ? start.iso : NULL, has_start ? start.iso_len : 0, true);
    time_cell(w, "end", has_end ? end.iso : NULL, has_end ? end.iso_len : 0, true);
    time_cell(w, "start_epoch_s", has_start ? start.epoch : NULL, has_start ? start.epoch_len : 0, false);
    time_cell(w, "end_epoch_s", has_end ? end.epoch : NULL, has_end ? end.epoch_len : 0, false);
}

bool tl_table_row(struct tl_table *t, const struct tl_record *r, struct tl_buf *out)
{
    if (r->kind != TL_REC_TASK) return false;
    struct row w = {.t = t, .b = out, .sep = t->format == TL_TABLE_TSV ? '\t' : ',',
                    .json = t->format == TL_TABLE_NDJSON};
    identity_cells(&w, r);
    if (!t->ntags) data_id_cell(&w, r);
    for (int i = 0; i < t->ntags; i++) str_cell(&w, t->tags[i], tl_record_tag(r, t->tags[i]));
    for (int i = 0; i < t->nmetrics; i++) {
        int m = t->metrics[i];
        if (!tl_record_has(r, m)) {
            absent(&w);
            continue;
        }
        const char *name = column_name(m);
        cell_n(&w, name, tl_metric_info[m].unit == TL_UNIT_MBPS ? strlen(name) : tl_metric_info[m].name_len);
        tl_buf_put_double(out, column_value(m, r->v[m]));
    }
    tl_buf_puts(out, w.json ? "}\n" : "\n");
    return true;
}
