/* line_profiler output (`kernprof -l`, `python -m line_profiler`): the
 * binary `.lprof` and its text report. Facts from line_profiler 4.1.3 and
 * 5.1.0 (line_profiler.py: LineStats, show_func, show_text), summed up in
 * ../shared/lineprof/FORMAT.md.
 *
 * One record per timed source line (a line never run is not one):
 *   category     "<file>:<first line>:<function>", the key line_profiler
 *                prints a function under (names repeat across files)
 *   task_id      the line number; task key: its source text where the
 *                report shows it (the `.lprof` holds none)
 *   wall_time_s  the line's time summed over its runs, so per function the
 *                records sum to line_profiler's "Total time" (which counts
 *                profiled callees inside their caller's lines too)
 *   hits         how many times it ran
 * `.lprof` (a first byte 0x80): a pickle of LineStats, read by a restricted
 * reader (pickle.h) that imports and calls nothing: state {'timings':
 * {(file, first line, name): [(line, hits, time), ...]}, 'unit': u}, time
 * in u seconds (1e-9 with the 4.x/5.x timers, whatever the report prints).
 * Text: "Timer unit: u s" (1e-06 when absent, as in fink's README block)
 * scales Time; "File:", "Function: NAME at line N" or "Could not find file
 * F" name the function; the header row marks where each column ends (they
 * widen with their values), so a row is read where its cells end under
 * Line #, Hits and Time. Anything else (the program's own output before
 * the report, `-m` summary lines, `-r`'s ANSI colours, which are removed,
 * and its rows wrapped at 80 columns, whose tails start at the left edge)
 * is passed over. No record carries a time: the file's modification time
 * stands in (file_time). */
#include "parsers/parser.h"
#include "parsers/pickle.h"
#include "parsers/table.h"

#include "core/bytes.h"
#include "core/intern.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lp_config {
    size_t max_line;
    size_t max_document;
};

static const struct tl_option lp_options[] = {
    {"max_line", TL_OPT_SIZE, "1M", "longest line of a text report", offsetof(struct lp_config, max_line)},
    {"max_document", TL_OPT_SIZE, "256M", "largest .lprof read (one entry per profiled line)",
     offsetof(struct lp_config, max_document)},
    {0},
};

enum { LC_FUNCTIONS, LC_LINES, LC_TOTAL_NS, LC_SUM_NS, LC_PICKLES, LC_COUNT };
static const char *const counter_names[LC_COUNT] = {
    "functions", "timed_lines", "total_time_ns", "line_time_ns", "lprof_files",
};

struct lp_state {
    struct lp_config cfg;
    struct tl_emit emit;
    struct tl_parse_stats stats;
    uint64_t counters[LC_COUNT];
    int mode;              /* 0 undecided, 'p' pickle, 't' text */
    struct tl_buf doc;     /* a pickle, whole */
    bool too_large;
    struct tl_table lines; /* the text, a line at a time (no columns: split here) */
    struct tl_table_cb cb;
    struct tl_buf plain;   /* a line without its ANSI escapes */
    struct tl_intern *names;
    /* the text's current function */
    double unit;
    char file[1024], func[256];
    long first_line;
    const char *category;
    int end_line, end_hits, end_time; /* column ends of the header row; 0: none yet */
    char workflow[256];
};

static void reject(struct lp_state *st, uint64_t line, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, line, why, detail);
}

static const char *intern(struct lp_state *st, const char *s, size_t n)
{
    int32_t id = tl_intern(st->names, s, n);
    return id >= 0 ? tl_intern_str(st->names, id) : NULL;
}

static const char *category_of(struct lp_state *st, const char *file, size_t fn, long first,
                               const char *func, size_t un)
{
    char cat[1400];
    int k = snprintf(cat, sizeof cat, "%.*s:%ld:%.*s", (int)(fn < 1024 ? fn : 1024), file, first,
                     (int)(un < 256 ? un : 256), func);
    return intern(st, cat, (size_t)k < sizeof cat ? (size_t)k : sizeof cat - 1);
}

/* x units of u seconds: divided by 1/u where u is 1e-k (a text's 1094.6 at
 * 1e-06 is 0.0010946 s, not 0.0010945999999999998). */
static double seconds_of(double x, double unit)
{
    double inv = 1 / unit, k = round(inv);
    return unit < 1 && fabs(inv - k) < 1e-9 * k ? x / k : x * unit;
}

static void emit_line(struct lp_state *st, uint64_t line, const char *category, long lineno,
                      double hits, double seconds, const char *code)
{
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.source = "lineprof";
    r.workflow = st->workflow;
    r.line = line;
    r.result = "SUCCESS";
    r.final = true;
    r.attempt = 1;
    r.category = category;
    r.task_id = lineno;
    r.task_key = code;
    tl_record_set(&r, TL_M_WALL_TIME_S, seconds);
    tl_record_set(&r, TL_M_HITS, hits);
    char detail[160];
    if (tl_record_drop_bad_values(&r, detail, sizeof detail)) reject(st, line, TL_REJ_BAD_VALUE, detail);
    st->counters[LC_LINES]++;
    if (isfinite(seconds) && seconds >= 0 && seconds < 9e9) st->counters[LC_SUM_NS] += (uint64_t)llround(seconds * 1e9);
    st->stats.records++;
    if (tl_emit_wants(&st->emit, TL_REC_TASK)) st->emit.record(st->emit.ctx, &r);
}

/* ---------------------------------------------------------------- .lprof */

static const char *pk_str(const struct tl_pickle *p, uint32_t id, size_t *n)
{
    if (!id || p->v[id].type != TL_PK_STR) return NULL;
    *n = p->v[id].len;
    return p->data + p->v[id].off;
}

/* One function: key (file, first line, name) and its [(line, hits, time)]. */
static void pk_function(struct lp_state *st, const struct tl_pickle *p, uint32_t key, uint32_t list,
                        double unit)
{
    size_t fn = 0, un = 0;
    double first;
    const char *file = pk_str(p, tl_pickle_item(p, key, 0), &fn);
    const char *func = pk_str(p, tl_pickle_item(p, key, 2), &un);
    if (!file || !func || !tl_pickle_number(p, tl_pickle_item(p, key, 1), &first) ||
        p->v[list].type != TL_PK_LIST || !(fabs(first) <= 1e15)) {
        reject(st, 1, TL_REJ_BAD_FIELDS, "a timings key that is not (file, line, name)");
        return;
    }
    const char *category = category_of(st, file, fn, (long)first, func, un);
    st->counters[LC_FUNCTIONS]++;
    uint32_t chunk = 0, i = 0, t;
    while ((t = tl_pickle_next(p, &p->v[list], &chunk, &i))) {
        double lineno, hits, time;
        if (!tl_pickle_number(p, tl_pickle_item(p, t, 0), &lineno) ||
            !tl_pickle_number(p, tl_pickle_item(p, t, 1), &hits) ||
            !tl_pickle_number(p, tl_pickle_item(p, t, 2), &time) || !(fabs(lineno) <= 1e15)) {
            reject(st, 1, TL_REJ_BAD_FIELDS, "a line entry that is not (line, hits, time)");
            continue;
        }
        emit_line(st, 1, category, (long)lineno, hits, seconds_of(time, unit), NULL);
    }
}

static void read_pickle(struct lp_state *st)
{
    struct tl_pickle p;
    st->stats.lines = 1;
    st->counters[LC_PICKLES]++;
    /* the document and what the pickle makes of it, together within max_document */
    size_t budget = st->cfg.max_document > st->doc.len ? st->cfg.max_document - st->doc.len : 0;
    if (!tl_pickle_read(&p, st->doc.data, st->doc.len, budget)) {
        reject(st, 1, p.over_budget ? TL_REJ_TOO_LARGE : TL_REJ_BAD_DOCUMENT, p.error);
        tl_pickle_free(&p);
        return;
    }
    uint32_t root = p.root, state = root;
    if (p.v[root].type == TL_PK_OBJECT) {
        const char *cls = tl_pickle_global(&p, p.v[root].cls);
        size_t n = strlen(cls);
        if (n < 9 || strcmp(cls + n - 9, "LineStats")) {
            reject(st, 1, TL_REJ_BAD_DOCUMENT, "a pickle, not of line_profiler's LineStats");
            tl_pickle_free(&p);
            return;
        }
        state = p.v[root].state;
    }
    uint32_t timings = tl_pickle_get(&p, state, "timings");
    double unit;
    if (!timings || p.v[timings].type != TL_PK_DICT ||
        !tl_pickle_number(&p, tl_pickle_get(&p, state, "unit"), &unit) || !(unit > 0)) {
        reject(st, 1, TL_REJ_NO_RESOURCES, "no timings and unit in the LineStats");
        tl_pickle_free(&p);
        return;
    }
    uint32_t chunk = 0, i = 0, key;
    while ((key = tl_pickle_next(&p, &p.v[timings], &chunk, &i))) {
        uint32_t list = tl_pickle_next(&p, &p.v[timings], &chunk, &i);
        pk_function(st, &p, key, list, unit);
    }
    tl_pickle_free(&p);
}

/* ---------------------------------------------------------------- text */

/* The line without ANSI escapes (ESC [ ... letter), in st->plain. */
static const char *strip_ansi(struct lp_state *st, const char *p, size_t n, size_t *out)
{
    if (!memchr(p, '\x1b', n)) {
        *out = n;
        return p;
    }
    st->plain.len = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\x1b' && i + 1 < n && p[i + 1] == '[') {
            i += 2;
            while (i < n && !((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' && p[i] <= 'z'))) i++;
            continue;
        }
        tl_buf_putc(&st->plain, p[i]);
    }
    *out = st->plain.len;
    return st->plain.data ? st->plain.data : "";
}

static bool starts(const char *p, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && !memcmp(p, prefix, k);
}

/* The column ends of "Line #      Hits         Time  Per Hit ..." */
static bool header_row(struct lp_state *st, const char *p, size_t n)
{
    const char *a = memmem(p, n, "Line #", 6);
    if (!a) return false;
    const char *h = memmem(a + 6, n - (size_t)(a + 6 - p), "Hits", 4);
    const char *t = h ? memmem(h + 4, n - (size_t)(h + 4 - p), "Time", 4) : NULL;
    if (!h || !t) return false;
    st->end_line = (int)(a + 6 - p);
    st->end_hits = (int)(h + 4 - p);
    st->end_time = (int)(t + 4 - p);
    return true;
}

/* A token ending exactly at column `end` after only spaces from `from`:
 * its span, or false (an empty cell, or something else there). */
static bool cell_at(const char *p, size_t n, int from, int end, size_t *s)
{
    if (end <= from || (size_t)end > n || p[end - 1] == ' ') return false;
    if ((size_t)end < n && p[end] != ' ') return false;
    int i = end;
    while (i > from && p[i - 1] != ' ') i--;
    for (int j = from; j < i; j++)
        if (p[j] != ' ') return false;
    *s = (size_t)i;
    return true;
}

/* A row: Line #, Hits, Time under their headers; the code after % Time. */
static void data_row(struct lp_state *st, uint64_t no, const char *p, size_t n)
{
    size_t a, b, c;
    double lineno, hits, time;
    if (!cell_at(p, n, 0, st->end_line, &a) || !cell_at(p, n, st->end_line, st->end_hits, &b) ||
        !cell_at(p, n, st->end_hits, st->end_time, &c))
        return; /* a line not run, a wrapped tail, a blank */
    if (!tl_cell_number(p + a, (size_t)st->end_line - a, &lineno) ||
        !tl_cell_number(p + b, (size_t)st->end_hits - b, &hits) ||
        !tl_cell_number(p + c, (size_t)st->end_time - c, &time) || !(fabs(lineno) <= 1e15)) {
        reject(st, no, TL_REJ_BAD_FIELDS, "a row whose Line #, Hits or Time is not a number");
        return;
    }
    if (!st->category) st->category = category_of(st, st->file, strlen(st->file), st->first_line,
                                                   st->func, strlen(st->func));
    /* the code: past the Per Hit and % Time cells, after two spaces */
    size_t k = (size_t)st->end_time;
    for (int cells = 0; cells < 2 && k < n; cells++) {
        while (k < n && p[k] == ' ') k++;
        while (k < n && p[k] != ' ') k++;
    }
    if (k + 2 <= n) k += 2;
    while (n > k && p[n - 1] == ' ') n--;
    const char *code = k < n ? intern(st, p + k, n - k) : NULL;
    emit_line(st, no, st->category, (long)lineno, hits, seconds_of(time, st->unit), code);
}

static void function_line(struct lp_state *st, const char *p, size_t n)
{
    /* "Function: NAME at line N" */
    const char *at = NULL;
    for (const char *q = p; (q = memmem(q, n - (size_t)(q - p), " at line ", 9)); q += 9) at = q;
    if (!at) return;
    snprintf(st->func, sizeof st->func, "%.*s", (int)(at - p - 10), p + 10);
    st->first_line = strtol(at + 9, NULL, 10);
    st->category = NULL;
    st->counters[LC_FUNCTIONS]++;
}

static void text_line(struct lp_state *st, const char *raw, size_t rn, uint64_t no)
{
    size_t n;
    const char *p = strip_ansi(st, raw, rn, &n);
    st->stats.lines = no;
    double v;
    if (starts(p, n, "Timer unit: ")) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%.*s", (int)(n - 12 < 63 ? n - 12 : 63), p + 12);
        if ((v = strtod(tmp, NULL)) > 0 && isfinite(v)) st->unit = v;
    } else if (starts(p, n, "Total time: ")) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%.*s", (int)(n - 12 < 63 ? n - 12 : 63), p + 12);
        if ((v = strtod(tmp, NULL)) >= 0 && v < 9e9) st->counters[LC_TOTAL_NS] += (uint64_t)llround(v * 1e9);
    } else if (starts(p, n, "File: ") || starts(p, n, "Could not find file ")) {
        size_t skip = p[0] == 'F' ? 6 : 20;
        snprintf(st->file, sizeof st->file, "%.*s", (int)(n - skip), p + skip);
        st->category = NULL;
        st->end_line = 0;
    } else if (starts(p, n, "Function: ")) {
        function_line(st, p, n);
        st->end_line = 0;
    } else if (header_row(st, p, n)) {
        /* the column ends are set */
    } else if (st->end_line) {
        data_row(st, no, p, n);
    }
}

static bool on_raw(void *ctx, const char *p, size_t n, uint64_t no)
{
    text_line(ctx, p, n, no);
    return true;
}

static void on_too_long(void *ctx, uint64_t line)
{
    struct lp_state *st = ctx;
    st->stats.lines = line;
    reject(st, line, TL_REJ_LINE_TOO_LONG, "over max_line");
}

static void on_row(void *ctx, uint64_t line)
{
    (void)ctx;
    (void)line; /* every line goes through on_raw */
}

/* ---------------------------------------------------------------- plumbing */

static enum tl_err lp_feed(void *state, const char *buf, size_t len)
{
    struct lp_state *st = state;
    if (!len) return TL_OK;
    if (!st->mode) st->mode = (unsigned char)buf[0] == 0x80 ? 'p' : 't';
    if (st->mode == 't') return tl_table_feed(&st->lines, buf, len, &st->cb);
    if (st->too_large || st->doc.len + len > st->cfg.max_document) {
        st->too_large = true;
        return TL_OK;
    }
    tl_buf_append(&st->doc, buf, len);
    return st->doc.oom ? TL_ERR_NOMEM : TL_OK;
}

static enum tl_err lp_finish(void *state)
{
    struct lp_state *st = state;
    if (st->mode == 't') {
        tl_table_finish(&st->lines, &st->cb);
        st->stats.lines = st->lines.lines;
    } else if (st->mode == 'p' && st->too_large) {
        st->stats.lines = 1;
        reject(st, 1, TL_REJ_TOO_LARGE, "over max_document");
    } else if (st->mode == 'p') {
        read_pickle(st);
    }
    st->doc.len = 0;
    st->too_large = false;
    st->mode = 0;
    return TL_OK;
}

static int lp_probe(const char *buf, size_t len)
{
    size_t n = len < 65536 ? len : 65536;
    if (n > 16 && (unsigned char)buf[0] == 0x80 && memmem(buf, n < 512 ? n : 512, "LineStats", 9)) return 95;
    if (memmem(buf, n, "Timer unit: ", 12) || memmem(buf, n, "Line #      Hits", 16)) return 80;
    return 0;
}

static void lp_set_name(void *state, const char *name)
{
    struct lp_state *st = state;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (base && *base && strcmp(base, "-")) snprintf(st->workflow, sizeof st->workflow, "%s", base);
}

static enum tl_err lp_open(void **state, const void *config, const struct tl_emit *emit, char *err, size_t errcap)
{
    struct lp_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct lp_config *)config;
    st->emit = *emit;
    if (!(st->names = tl_intern_new(64u << 20))) {
        free(st);
        return TL_ERR_NOMEM;
    }
    tl_table_init(&st->lines, '\t', false, st->cfg.max_line);
    st->cb = (struct tl_table_cb){.row = on_row, .too_long = on_too_long, .raw = on_raw, .ctx = st};
    st->unit = 1e-6; /* line_profiler's default output unit */
    snprintf(st->workflow, sizeof st->workflow, "lineprof");
    *state = st;
    return TL_OK;
}

static void lp_close(void *state)
{
    struct lp_state *st = state;
    if (!st) return;
    tl_table_free(&st->lines);
    tl_buf_free(&st->doc);
    tl_buf_free(&st->plain);
    tl_intern_free(st->names);
    free(st);
}

static const struct tl_parse_stats *lp_stats(const void *state)
{
    return &((const struct lp_state *)state)->stats;
}

static size_t lp_counters(const void *state, struct tl_counter *out, size_t max)
{
    return tl_counters_fill(out, max, counter_names, ((const struct lp_state *)state)->counters, LC_COUNT);
}

const struct tl_parser tl_parser_lineprof = {
    .name = "lineprof",
    .help = "line_profiler output (.lprof, or its text report): one record per timed source line",
    .probe = lp_probe,
    .config_size = sizeof(struct lp_config),
    .options = lp_options,
    .open = lp_open,
    .feed = lp_feed,
    .finish = lp_finish,
    .close = lp_close,
    .stats = lp_stats,
    .counters = lp_counters,
    .set_name = lp_set_name,
    .messages = TL_MSG_DOCUMENT,
    .file_time = true,
};
