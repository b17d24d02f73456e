/* Snakemake `benchmark:` files: one record per run of a rule's job
 * (`repeat("path", N)` gives N rows in one file). Facts from Snakemake's
 * own benchmark.py (9.27), summed up in ../shared/snakemake/FORMAT.md.
 *
 * Three layouts, told apart by their first byte: TSV with a header (9, 10,
 * 17 or 18 columns, by name in any order), and JSON lines (a `.jsonl`
 * benchmark path; `s` a number, or a string before 9.13.5).
 *   s          -> wall_time_s (h:m:s only when there is no s: it drops
 *                 the fractions)
 *   cpu_time   -> cpu_time_s (taken at the last sample, so short jobs
 *                 undercount; as written)
 *   max_rss, max_vms, max_uss, max_pss -> max_rss_bytes,
 *                 virtual_memory_bytes, uss_bytes, pss_bytes: MiB (bytes /
 *                 1024 / 1024 in benchmark.py) x 1048576
 *   io_in, io_out -> storage_read_bytes, storage_written_bytes (psutil's
 *                 read_bytes / write_bytes, in MiB)
 *   mean_load  -> cores_avg (percent of one CPU / 100)
 *   the row's line -> task_id (jobid is the same for every repeat() row);
 *   threads -> alloc_cores;
 *   resources mem_mib / mem_mb / runtime -> req_memory_bytes (MiB, or
 *                 MB = 10^6 bytes as Snakemake's mem_mb counts), req_wall_time_s (min)
 *   rule_name  -> category. A standard file does not name its rule: it is
 *                 the folder the file is in (benchmarks/<rule>/<wildcards>.tsv),
 *                 or the file's stem when that folder is `benchmarks` or
 *                 `benchmark` (benchmarks/<rule>.tsv); option `rule` names it.
 *   the file's stem under benchmarks/<rule>/ -> tag (the job's wildcards)
 * A job that ended before the first sample is written with integer 0 in
 * the memory columns (not NA, not 0.00): those are left absent, not read
 * as 0 bytes. So is an integer 0 in max_pss alone: psutil without PSS
 * (macOS, an old kernel) leaves benchmark.py's `getattr(meminfo, "pss", 0)`
 * an int, where any measurement is a float written 0.00 or more. NA and -
 * are absent. Rows carry no time: the file's
 * modification time (written when the job ends) stands in (file_time). */
#include "parsers/parser.h"
#include "parsers/table.h"

#include "core/bytes.h"
#include "core/intern.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sm_config {
    size_t max_line;
    const char *rule;
};

static const struct tl_option sm_options[] = {
    {"max_line", TL_OPT_SIZE, "1M", "longest line", offsetof(struct sm_config, max_line)},
    {"rule", TL_OPT_STRING, "",
     "the rule of a standard benchmark file (it does not name it): default the folder the file "
     "is in, or its stem when that folder is benchmarks/", offsetof(struct sm_config, rule)},
    {0},
};

enum col {
    C_S, C_HMS, C_MAX_RSS, C_MAX_VMS, C_MAX_USS, C_MAX_PSS, C_IO_IN, C_IO_OUT, C_MEAN_LOAD,
    C_CPU_TIME, C_RULE, C_THREADS, C_RESOURCES, NCOL
};
static const char *const col_names[NCOL] = {
    "s", "h:m:s", "max_rss", "max_vms", "max_uss", "max_pss", "io_in", "io_out", "mean_load",
    "cpu_time", "rule_name", "threads", "resources",
};

enum { SK_TSV_ROWS, SK_JSON_ROWS, SK_NOT_SAMPLED, SK_COUNT };
static const char *const counter_names[SK_COUNT] = {"tsv_rows", "jsonl_rows", "not_sampled"};

struct sm_state {
    struct sm_config cfg;
    struct tl_emit emit;
    struct tl_parse_stats stats;
    uint64_t counters[SK_COUNT];
    struct tl_table table;
    struct tl_table_cb cb;
    int col[NCOL];
    bool no_columns;
    bool nomem; /* something left out for lack of memory: the input fails at its end */
    bool jsonl; /* the input is JSON lines (its first row was an object) */
    struct tl_intern *names;
    char rule[256];     /* from the path, or the option */
    char wildcards[256]; /* benchmarks/<rule>/<wildcards>.tsv: the stem, the record's tag */
    char workflow[512]; /* the file's folder */
};

static void reject(struct sm_state *st, uint64_t line, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, line, why, detail);
}

static const char *intern(struct sm_state *st, const char *s, size_t n)
{
    int32_t id = tl_intern(st->names, s, n);
    if (id < 0 && !tl_intern_full(st->names, n)) st->nomem = true;
    return id >= 0 ? tl_intern_str(st->names, id) : NULL;
}

/* One column's value as Snakemake wrote it: a number, absent, or bad. */
struct cell {
    bool present, bad, integer_zero;
    double v;
};

static struct cell cell_text(const char *s, size_t n)
{
    struct cell c = {0};
    if (!s || !n || (n == 1 && *s == '-') || (n == 2 && !memcmp(s, "NA", 2))) return c;
    c.present = tl_cell_number(s, n, &c.v);
    c.bad = !c.present;
    c.integer_zero = n == 1 && *s == '0';
    return c;
}

static struct cell cell_json(json_t *v)
{
    struct cell c = {0};
    if (!v || json_is_null(v)) return c;
    if (json_is_string(v)) return cell_text(json_string_value(v), json_string_length(v));
    c.present = json_is_number(v);
    c.bad = !c.present;
    c.v = json_number_value(v);
    c.integer_zero = json_is_integer(v) && json_integer_value(v) == 0;
    return c;
}

/* "0:01:02", "1 day, 2:03:04": seconds (whole; the fractions are gone). */
static bool hms(const char *s, double *out)
{
    long d = 0, h, m, sec;
    const char *p = s;
    const char *comma = strchr(s, ',');
    if (comma) {
        d = strtol(s, NULL, 10);
        p = comma + 1;
    }
    if (sscanf(p, " %ld:%ld:%ld", &h, &m, &sec) != 3) return false;
    *out = (double)d * 86400 + (double)h * 3600 + (double)m * 60 + (double)sec;
    return true;
}

/* A key's number in a dict repr ("{'mem_mb': 1000, ...}") or JSON text. */
static bool dict_number(const char *s, size_t n, const char *key, double *out)
{
    size_t k = strlen(key);
    for (const char *p = s, *end = s + n; (p = memmem(p, (size_t)(end - p), key, k)); p += k) {
        if (p == s || (p[-1] != '\'' && p[-1] != '"') || p + k >= end || p[k] != p[-1]) continue;
        const char *q = p + k + 1;
        while (q < end && (*q == ':' || *q == ' ')) q++;
        const char *e = q;
        while (e < end && ((*e >= '0' && *e <= '9') || *e == '.')) e++;
        return tl_cell_number(q, (size_t)(e - q), out);
    }
    return false;
}

/* ---------------------------------------------------------------- a row */

struct row {
    struct cell c[NCOL];
    const char *rule;  /* rule_name, when written */
    size_t rule_len;
    const char *resources;
    size_t resources_len;
    char hms[32];
};

static void bytes_mib(struct tl_record *r, const struct cell *c, enum tl_metric m)
{
    if (c->present) tl_record_set(r, m, round(c->v * 1048576));
}

static void emit_row(struct sm_state *st, uint64_t line, struct row *w)
{
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.source = "snakemake";
    r.workflow = st->workflow;
    r.line = line;
    r.result = "SUCCESS"; /* a failed job leaves no benchmark */
    r.final = true;
    r.attempt = 1;
    r.category = w->rule_len ? intern(st, w->rule, w->rule_len) : st->rule;
    r.tag = st->wildcards[0] ? st->wildcards : NULL;
    r.task_id = (int64_t)line; /* jobid repeats in repeat() rows: the row is the run */
    double hs;
    if (w->c[C_S].present) tl_record_set(&r, TL_M_WALL_TIME_S, w->c[C_S].v);
    else if (w->hms[0] && hms(w->hms, &hs)) tl_record_set(&r, TL_M_WALL_TIME_S, hs);
    if (w->c[C_CPU_TIME].present) tl_record_set(&r, TL_M_CPU_TIME_S, w->c[C_CPU_TIME].v);
    if (w->c[C_MEAN_LOAD].present) tl_record_set(&r, TL_M_CORES_AVG, w->c[C_MEAN_LOAD].v / 100);
    bool not_sampled = w->c[C_MAX_RSS].integer_zero && w->c[C_MAX_VMS].integer_zero;
    if (not_sampled) st->counters[SK_NOT_SAMPLED]++;
    else {
        bytes_mib(&r, &w->c[C_MAX_RSS], TL_M_MAX_RSS_BYTES);
        bytes_mib(&r, &w->c[C_MAX_VMS], TL_M_VIRTUAL_MEMORY_BYTES);
        bytes_mib(&r, &w->c[C_MAX_USS], TL_M_USS_BYTES);
        if (!w->c[C_MAX_PSS].integer_zero) bytes_mib(&r, &w->c[C_MAX_PSS], TL_M_PSS_BYTES);
    }
    bytes_mib(&r, &w->c[C_IO_IN], TL_M_STORAGE_READ_BYTES);
    bytes_mib(&r, &w->c[C_IO_OUT], TL_M_STORAGE_WRITTEN_BYTES);
    if (w->c[C_THREADS].present) tl_record_set(&r, TL_M_ALLOC_CORES, w->c[C_THREADS].v);
    double v;
    if (w->resources && dict_number(w->resources, w->resources_len, "mem_mib", &v))
        tl_record_set(&r, TL_M_REQ_MEMORY_BYTES, v * 1048576);
    else if (w->resources && dict_number(w->resources, w->resources_len, "mem_mb", &v))
        tl_record_set(&r, TL_M_REQ_MEMORY_BYTES, v * 1e6);
    if (w->resources && dict_number(w->resources, w->resources_len, "runtime", &v))
        tl_record_set(&r, TL_M_REQ_WALL_TIME_S, v * 60);
    for (int c = 0; c < NCOL; c++)
        if (w->c[c].bad) {
            char detail[96];
            snprintf(detail, sizeof detail, "%s: not a number", col_names[c]);
            reject(st, line, TL_REJ_BAD_FIELDS, detail);
        }
    char detail[160];
    if (tl_record_drop_bad_values(&r, detail, sizeof detail)) reject(st, line, TL_REJ_BAD_VALUE, detail);
    st->stats.records++;
    if (tl_emit_wants(&st->emit, TL_REC_TASK)) st->emit.record(st->emit.ctx, &r);
}

static void on_row(void *ctx, uint64_t line)
{
    struct sm_state *st = ctx;
    st->stats.lines = line;
    if (st->no_columns || st->table.ncells != st->table.ncols) {
        char detail[96];
        if (st->no_columns) snprintf(detail, sizeof detail, "the header names no benchmark column");
        else snprintf(detail, sizeof detail, "%d values for %d columns", st->table.ncells, st->table.ncols);
        reject(st, line, TL_REJ_BAD_FIELDS, detail);
        return;
    }
    struct row w = {0};
    for (int c = 0; c < NCOL; c++) {
        size_t n;
        const char *s = tl_table_cell(&st->table, st->col[c], &n);
        if (c == C_RULE) w.rule = s, w.rule_len = s ? n : 0;
        else if (c == C_RESOURCES) w.resources = s, w.resources_len = s ? n : 0;
        else if (c == C_HMS && s) snprintf(w.hms, sizeof w.hms, "%.*s", (int)n, s);
        else if (s) w.c[c] = cell_text(s, n);
    }
    st->counters[SK_TSV_ROWS]++;
    emit_row(st, line, &w);
}

/* A JSON line: the same names as keys. */
static bool on_raw(void *ctx, const char *p, size_t n, uint64_t line)
{
    struct sm_state *st = ctx;
    if (st->jsonl && n && *p != '{') { /* JSON lines hold objects: anything else is refused, said */
        st->stats.lines = line;
        reject(st, line, TL_REJ_BAD_JSON, *p == '[' ? "an array, not an object" : "not a JSON object");
        return true;
    }
    if (!n || *p != '{') return false;
    st->stats.lines = line;
    st->jsonl = true;
    json_error_t e;
    json_t *o = json_loadb(p, n, 0, &e);
    if (!o && (json_error_code(&e) == json_error_out_of_memory || !e.text[0])) { /* not the line's fault */
        st->nomem = true;
        reject(st, line, TL_REJ_LIMIT, "out of memory");
        return true;
    }
    if (!json_is_object(o)) {
        json_decref(o);
        reject(st, line, TL_REJ_BAD_JSON, NULL);
        return true;
    }
    struct row w = {0};
    for (int c = 0; c < NCOL; c++) {
        json_t *v = json_object_get(o, col_names[c]);
        if (c == C_RULE && json_is_string(v)) w.rule = json_string_value(v), w.rule_len = json_string_length(v);
        else if (c == C_HMS && json_is_string(v)) snprintf(w.hms, sizeof w.hms, "%s", json_string_value(v));
        else if (c != C_RULE && c != C_HMS && c != C_RESOURCES) w.c[c] = cell_json(v);
    }
    json_t *resources = json_object_get(o, "resources");
    char *res = resources ? json_dumps(resources, JSON_COMPACT) : NULL;
    if (resources && !res) st->nomem = true; /* the row goes without them: the input fails at its end */
    w.resources = res;
    w.resources_len = res ? strlen(res) : 0;
    st->counters[SK_JSON_ROWS]++;
    emit_row(st, line, &w);
    free(res);
    json_decref(o);
    return true;
}

static void on_header(void *ctx)
{
    struct sm_state *st = ctx;
    st->no_columns = true;
    for (int c = 0; c < NCOL; c++)
        if ((st->col[c] = tl_table_col(&st->table, col_names[c])) >= 0) st->no_columns = false;
}

static void on_too_long(void *ctx, uint64_t line)
{
    struct sm_state *st = ctx;
    st->stats.lines = line;
    reject(st, line, TL_REJ_LINE_TOO_LONG, "over max_line");
}

/* ---------------------------------------------------------------- plumbing */

static enum tl_err sm_feed(void *state, const char *buf, size_t len)
{
    struct sm_state *st = state;
    return tl_table_feed(&st->table, buf, len, &st->cb);
}

static enum tl_err sm_finish(void *state)
{
    struct sm_state *st = state;
    tl_table_finish(&st->table, &st->cb);
    st->stats.lines = st->table.lines;
    bool nomem = st->nomem;
    st->nomem = false;
    return nomem ? TL_ERR_NOMEM : TL_OK;
}

#define SM_SAVE_MAGIC "TLK1"

static enum tl_err sm_save(const void *state, struct tl_buf *b)
{
    const struct sm_state *st = state;
    tl_table_state_save(b, SM_SAVE_MAGIC, &st->stats, st->counters, SK_COUNT, &st->table);
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

static enum tl_err sm_restore(void *state, const uint8_t *p, size_t len)
{
    struct sm_state *st = state;
    const uint8_t *end = p + len;
    if (!tl_table_state_restore(&p, end, SM_SAVE_MAGIC, &st->stats, st->counters, SK_COUNT, &st->table, &st->cb))
        return TL_ERR_CORRUPT;
    st->jsonl = !st->table.header.len && st->counters[SK_JSON_ROWS]; /* rows read, no header */
    return p == end ? TL_OK : TL_ERR_CORRUPT;
}

/* The TSV header starts "s<TAB>h:m:s"; a JSON line has "h:m:s" and max_rss. */
static int sm_probe(const char *buf, size_t len)
{
    if (len >= 7 && !memcmp(buf, "s\th:m:s", 7)) return 95;
    size_t n = len < 4096 ? len : 4096;
    if (n && buf[0] == '{' && memmem(buf, n, "\"h:m:s\":", 8) && memmem(buf, n, "\"max_rss\":", 10))
        return 90;
    return 0;
}

/* The rule from the path: the folder, or the stem under benchmarks/. */
static void sm_set_name(void *state, const char *name)
{
    struct sm_state *st = state;
    st->wildcards[0] = '\0';
    if (!name || !*name || !strcmp(name, "-") || st->cfg.rule[0]) return;
    const char *base = strrchr(name, '/');
    size_t dlen = base ? (size_t)(base - name) : 0;
    base = base ? base + 1 : name;
    snprintf(st->workflow, sizeof st->workflow, "%.*s", (int)dlen, name);
    const char *dir = dlen ? memrchr(name, '/', dlen) : NULL;
    dir = dir ? dir + 1 : name;
    size_t dn = dlen ? (size_t)(name + dlen - dir) : 0;
    bool under_benchmarks = !dn || (dn == 10 && !memcmp(dir, "benchmarks", 10)) ||
                            (dn == 9 && !memcmp(dir, "benchmark", 9));
    if (under_benchmarks) {
        const char *dot = strrchr(base, '.');
        snprintf(st->rule, sizeof st->rule, "%.*s", (int)(dot && dot > base ? dot - base : (long)strlen(base)), base);
    } else {
        snprintf(st->rule, sizeof st->rule, "%.*s", (int)dn, dir);
        const char *dot = strrchr(base, '.');
        snprintf(st->wildcards, sizeof st->wildcards, "%.*s",
                 (int)(dot && dot > base ? dot - base : (long)strlen(base)), base);
    }
}

static enum tl_err sm_open(void **state, const void *config, const struct tl_emit *emit, char *err, size_t errcap)
{
    struct sm_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct sm_config *)config;
    st->emit = *emit;
    if (!(st->names = tl_intern_new(16u << 20))) {
        free(st);
        return TL_ERR_NOMEM;
    }
    tl_table_init(&st->table, '\t', false, st->cfg.max_line);
    st->cb = (struct tl_table_cb){.header = on_header, .row = on_row, .too_long = on_too_long,
                                  .raw = on_raw, .ctx = st};
    for (int c = 0; c < NCOL; c++) st->col[c] = -1;
    snprintf(st->rule, sizeof st->rule, "%s", st->cfg.rule[0] ? st->cfg.rule : "snakemake");
    snprintf(st->workflow, sizeof st->workflow, "snakemake");
    *state = st;
    return TL_OK;
}

static void sm_close(void *state)
{
    struct sm_state *st = state;
    if (!st) return;
    tl_table_free(&st->table);
    tl_intern_free(st->names);
    free(st);
}

static const struct tl_parse_stats *sm_stats(const void *state)
{
    return &((const struct sm_state *)state)->stats;
}

static size_t sm_counters(const void *state, struct tl_counter *out, size_t max)
{
    return tl_counters_fill(out, max, counter_names, ((const struct sm_state *)state)->counters, SK_COUNT);
}

const struct tl_parser tl_parser_snakemake = {
    .name = "snakemake",
    .help = "Snakemake benchmark files (benchmark:, TSV, extended TSV or JSON lines): one run of a rule per row",
    .probe = sm_probe,
    .config_size = sizeof(struct sm_config),
    .options = sm_options,
    .open = sm_open,
    .feed = sm_feed,
    .finish = sm_finish,
    .close = sm_close,
    .stats = sm_stats,
    .counters = sm_counters,
    .save = sm_save,
    .restore = sm_restore,
    .set_name = sm_set_name,
    .messages = TL_MSG_LINES,
    .file_time = true,
};
