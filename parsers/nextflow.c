/* Nextflow trace files (`-with-trace`, `trace { enabled = true }`): a
 * header line of field names, then one line per task record, TAB (or
 * `trace.sep`) between values. Facts from Nextflow's own source
 * (TraceRecord.groovy, Duration.groovy, MemoryUnit.groovy,
 * command-trace.txt), summed up in ../shared/nextflow/FORMAT.md.
 *
 * Every row is one task attempt. Columns are found by name, in any subset
 * and order (`trace.fields`); names tasklens does not know are left.
 *   status     -> result: COMPLETED, FAILED, ABORTED, CACHED (a task taken
 *                 from an earlier run with -resume, its values that run's);
 *                 NEW / SUBMITTED / RUNNING (in flight when the run ended)
 *                 -> an open task with that state
 *   process    -> category; without it (the default fields), `name` up to
 *                 " (" (a process name holds no space)
 *   task_id, hash -> task_id, task key; attempt; error_action RETRY: not
 *                 the task's final attempt; exit; hostname -> host;
 *                 name, tag -> the task's name and tag (records' columns)
 *   realtime   -> wall_time_s (the wrapper's own wall time)
 *   start - submit, else duration - realtime -> queue_time_s (duration
 *                 is complete - submit: queueing, staging, container start)
 *   %cpu       -> cores_avg (% of ONE CPU / 100); cpu_time_s is DERIVED:
 *                 realtime x %cpu / 100 (Nextflow writes no CPU time)
 *   peak_rss, peak_vmem -> max_rss_bytes, virtual_memory_bytes (rss, vmem,
 *                 the last sample, only where no peak column is written)
 *   rchar, wchar -> bytes_read, bytes_written; read_bytes, write_bytes ->
 *                 storage_read_bytes, storage_written_bytes
 *   vol_ctxt, inv_ctxt -> context_switches, involuntary_context_switches
 *   cpus, memory, disk, time, accelerator -> the request (req_*)
 *   complete (else submit + duration) -> the record's time; start (else
 *                 complete - realtime) -> its start
 * Values in both forms Nextflow writes, told apart by their text (the file
 * does not say which): human (`1m 5s`, `352ms`, `1.5 GB` where GB is 1024^3
 * bytes as MemoryUnit counts, `56.4%`, `2026-01-02 03:04:05.678`) and raw
 * (`trace.raw`: ms, bytes, a plain percent, epoch ms). `-` is absent.
 * Dates carry no zone (the JVM's): utc_offset says the zone. A value that
 * holds the separator (a tag with a comma in a CSV trace) is glued back into
 * `name`. */
#include "parsers/civil_time.h"
#include "parsers/parser.h"
#include "parsers/table.h"

#include "core/bytes.h"
#include "core/intern.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nf_config {
    size_t max_line;
    double utc_offset;
};

static const struct tl_option nf_options[] = {
    {"max_line", TL_OPT_SIZE, "1M", "longest line (a row with a long env or script is a few KB)",
     offsetof(struct nf_config, max_line)},
    {"utc_offset", TL_OPT_DOUBLE, "0",
     "hours the clock of the machine that ran Nextflow was ahead of UTC: trace dates carry no "
     "zone (Nextflow writes the JVM's local time)", offsetof(struct nf_config, utc_offset)},
    {0},
};

enum col {
    C_TASK_ID, C_HASH, C_PROCESS, C_NAME, C_STATUS, C_EXIT, C_SUBMIT, C_START, C_COMPLETE,
    C_DURATION, C_REALTIME, C_PCPU, C_RSS, C_VMEM, C_PEAK_RSS, C_PEAK_VMEM, C_RCHAR, C_WCHAR,
    C_READ_BYTES, C_WRITE_BYTES, C_ATTEMPT, C_CPUS, C_MEMORY, C_DISK, C_TIME, C_VOL_CTXT,
    C_INV_CTXT, C_HOSTNAME, C_ERROR_ACTION, C_ACCELERATOR, C_TAG, NCOL
};
static const char *const col_names[NCOL] = {
    "task_id", "hash", "process", "name", "status", "exit", "submit", "start", "complete",
    "duration", "realtime", "%cpu", "rss", "vmem", "peak_rss", "peak_vmem", "rchar", "wchar",
    "read_bytes", "write_bytes", "attempt", "cpus", "memory", "disk", "time", "vol_ctxt",
    "inv_ctxt", "hostname", "error_action", "accelerator", "tag",
};

/* Every name TraceRecord.FIELDS has (44 at v26.08), for the probe. */
static const char *const all_fields[] = {
    "task_id", "hash", "native_id", "process", "module", "container", "tag", "name", "status",
    "exit", "submit", "start", "complete", "duration", "realtime", "%cpu", "%mem", "rss", "vmem",
    "peak_rss", "peak_vmem", "rchar", "wchar", "syscr", "syscw", "read_bytes", "write_bytes",
    "attempt", "workdir", "script", "scratch", "queue", "cpus", "memory", "disk", "time", "env",
    "error_action", "vol_ctxt", "inv_ctxt", "hostname", "cpu_model", "accelerator",
    "accelerator_type",
};

enum { NC_COMPLETED, NC_FAILED, NC_ABORTED, NC_CACHED, NC_UNFINISHED, NC_GLUED, NC_COUNT };
static const char *const counter_names[NC_COUNT] = {
    "completed", "failed", "aborted", "cached", "unfinished", "rows_glued",
};

struct nf_state {
    struct nf_config cfg;
    struct tl_emit emit;
    struct tl_parse_stats stats;
    uint64_t counters[NC_COUNT];
    struct tl_table table;
    struct tl_table_cb cb;
    int col[NCOL];
    bool no_columns; /* a header without one column tasklens reads */
    struct tl_intern *names;
    char workflow[256];
};

static void reject(struct nf_state *st, uint64_t line, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, line, why, detail);
}

static const char *intern(struct nf_state *st, const char *s, size_t n)
{
    int32_t id = tl_intern(st->names, s, n);
    return id >= 0 ? tl_intern_str(st->names, id) : NULL;
}

/* ---------------------------------------------------------------- values */

static bool absent(const char *s, size_t n)
{
    return !s || !n || (n == 1 && *s == '-');
}

/* Duration.toString: "1d 2h 3m 4s", "9.6s", "352ms"; raw: ms. In ms, as
 * Nextflow keeps them (so differences stay whole: 765ms - 731ms is 0.034 s). */
static bool parse_time(const char *s, size_t n, double *out)
{
    if (tl_cell_number(s, n, out)) return true;
    double sum = 0;
    const char *p = s, *end = s + n;
    bool any = false;
    while (p < end) {
        while (p < end && *p == ' ') p++;
        if (p == end) break;
        const char *num = p;
        while (p < end && ((*p >= '0' && *p <= '9') || *p == '.')) p++;
        const char *unit = p;
        while (p < end && *p >= 'a' && *p <= 'z') p++;
        double v;
        size_t un = (size_t)(p - unit);
        if (unit == num || !un || !tl_cell_number(num, (size_t)(unit - num), &v)) return false;
        double scale = un == 2 && !memcmp(unit, "ms", 2) ? 1
                       : un == 1 && *unit == 's'           ? 1e3
                       : un == 1 && *unit == 'm'           ? 60e3
                       : un == 1 && *unit == 'h'           ? 3600e3
                       : un == 1 && *unit == 'd'           ? 86400e3
                                                            : 0;
        if (!scale) return false;
        sum += round(v * scale); /* "9.6s": 9600 ms, not 9599.999 */
        any = true;
    }
    *out = sum;
    return any;
}

/* MemoryUnit.toString: "875 B", "1.5 GB" (KB = 1024 B: binary), "0"; raw:
 * bytes. Bytes. */
static bool parse_mem(const char *s, size_t n, double *out)
{
    if (tl_cell_number(s, n, out)) return true;
    static const char units[] = "BKMGTPEZ";
    size_t u = n;
    while (u && s[u - 1] >= 'A' && s[u - 1] <= 'Z') u--;
    size_t un = n - u;
    double v;
    if (!un || un > 2 || (un == 2 && s[n - 1] != 'B') || (un == 1 && s[u] != 'B') ||
        !tl_cell_number(s, u, &v))
        return false;
    const char *k = memchr(units, s[u], sizeof units - 1);
    if (!k) return false;
    static const double scale[] = {1.0, 1024.0, 1048576.0, 1073741824.0, 1099511627776.0,
                                   1125899906842624.0, 1152921504606846976.0, 1180591620717411303424.0};
    *out = round(v * scale[k - units]); /* 1024^k, as MemoryUnit (pow() was 5 % of a trace) */
    return true;
}

/* "566.4%" or raw "566.4": percent of one CPU. */
static bool parse_perc(const char *s, size_t n, double *out)
{
    if (n && s[n - 1] == '%') n--;
    return tl_cell_number(s, n, out);
}

/* "2026-01-02 03:04:05.678" in the run's zone, or raw epoch ms: ns. */
static bool parse_date(const struct nf_state *st, const char *s, size_t n, int64_t *ns)
{
    double ms;
    if (tl_cell_number(s, n, &ms)) {
        *ns = tl_epoch_ns_of_seconds(ms / 1000);
        return *ns != 0;
    }
    char tmp[48];
    if (n >= sizeof tmp) return false;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    if (!tl_parse_iso_time(tmp, ns)) return false;
    *ns = tl_ns_plus_seconds(*ns, -st->cfg.utc_offset * 3600);
    return *ns != 0;
}

/* ---------------------------------------------------------------- a row */

enum vkind { V_TIME, V_MEM, V_PERC, V_NUM };

/* The cell of column c as a number of its kind; false when absent. A cell
 * that is there but not a value of its kind is said and left out. */
static bool value(struct nf_state *st, uint64_t line, enum col c, enum vkind k, double *out)
{
    size_t n;
    const char *s = tl_table_cell(&st->table, st->col[c], &n);
    if (absent(s, n)) return false;
    bool ok = k == V_TIME ? parse_time(s, n, out)
              : k == V_MEM ? parse_mem(s, n, out)
              : k == V_PERC ? parse_perc(s, n, out)
                            : tl_cell_number(s, n, out);
    if (!ok) {
        char detail[160];
        snprintf(detail, sizeof detail, "%s: not a value: %.*s", col_names[c], (int)(n < 60 ? n : 60), s);
        reject(st, line, TL_REJ_BAD_FIELDS, detail);
    }
    return ok;
}

static void set(struct nf_state *st, uint64_t line, struct tl_record *r, enum col c, enum vkind k,
                enum tl_metric m)
{
    double v;
    if (value(st, line, c, k, &v)) tl_record_set(r, m, k == V_TIME ? v / 1000 : v);
}

/* process, else name up to " (", else "(no name)". */
static const char *category_of(struct nf_state *st)
{
    size_t n;
    const char *s = tl_table_cell(&st->table, st->col[C_PROCESS], &n);
    if (absent(s, n)) {
        s = tl_table_cell(&st->table, st->col[C_NAME], &n);
        const char *paren = s ? memmem(s, n, " (", 2) : NULL;
        if (paren) n = (size_t)(paren - s);
    }
    return absent(s, n) ? "(no name)" : intern(st, s, n);
}

/* status: the result, or for a task still in flight its state; false for
 * a status Nextflow does not write (TaskStatus: NEW, SUBMITTED, RUNNING,
 * COMPLETED, FAILED, ABORTED, CACHED), which the caller refuses rather than
 * count a task as running that the input never said was. */
static bool status_of(struct nf_state *st, struct tl_record *r)
{
    size_t n;
    const char *s = tl_table_cell(&st->table, st->col[C_STATUS], &n);
    static const struct { const char *name; int counter; } known[] = {
        {"COMPLETED", NC_COMPLETED}, {"FAILED", NC_FAILED}, {"ABORTED", NC_ABORTED},
        {"CACHED", NC_CACHED},
    };
    static const char *const in_flight[] = {"NEW", "SUBMITTED", "RUNNING"};
    if (absent(s, n)) { /* no status column: a row is written when a task ends */
        r->result = "COMPLETED";
        st->counters[NC_COMPLETED]++;
        return true;
    }
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strlen(known[i].name) == n && !memcmp(s, known[i].name, n)) {
            r->result = known[i].name;
            st->counters[known[i].counter]++;
            return true;
        }
    for (size_t i = 0; i < sizeof in_flight / sizeof *in_flight; i++)
        if (strlen(in_flight[i]) == n && !memcmp(s, in_flight[i], n)) {
            r->kind = TL_REC_TASK_OPEN; /* never completed */
            r->state = in_flight[i];
            st->counters[NC_UNFINISHED]++;
            return true;
        }
    return false;
}

static void ids_of(struct nf_state *st, uint64_t line, struct tl_record *r)
{
    double v;
    r->task_id = value(st, line, C_TASK_ID, V_NUM, &v) && v >= 0 && v < 9e18 ? (int64_t)v : (int64_t)line;
    r->attempt = value(st, line, C_ATTEMPT, V_NUM, &v) && v >= 1 && v < 1e6 ? (int32_t)v : 1;
    if (value(st, line, C_EXIT, V_NUM, &v) && fabs(v) < 1e9) {
        r->has_exit_code = true;
        r->exit_code = (int32_t)v;
    }
    size_t n;
    const char *s = tl_table_cell(&st->table, st->col[C_HASH], &n);
    if (!absent(s, n)) r->task_key = intern(st, s, n);
    s = tl_table_cell(&st->table, st->col[C_NAME], &n);
    if (!absent(s, n)) r->name = intern(st, s, n);
    s = tl_table_cell(&st->table, st->col[C_TAG], &n);
    if (!absent(s, n)) r->tag = intern(st, s, n);
    s = tl_table_cell(&st->table, st->col[C_HOSTNAME], &n);
    if (!absent(s, n)) r->host = intern(st, s, n);
    s = tl_table_cell(&st->table, st->col[C_ERROR_ACTION], &n);
    r->final = !(s && n == 5 && !memcmp(s, "RETRY", 5));
}

static bool date(struct nf_state *st, uint64_t line, enum col c, int64_t *ns)
{
    size_t n;
    const char *s = tl_table_cell(&st->table, st->col[c], &n);
    if (absent(s, n)) return false;
    if (parse_date(st, s, n, ns)) return true;
    char detail[160];
    snprintf(detail, sizeof detail, "%s: not a date: %.*s", col_names[c], (int)(n < 60 ? n : 60), s);
    reject(st, line, TL_REJ_BAD_FIELDS, detail);
    return false;
}

/* Times: end, start, and the queue before the start. */
static void times_of(struct nf_state *st, uint64_t line, struct tl_record *r)
{
    int64_t submit = 0, start = 0, complete = 0;
    bool has_submit = date(st, line, C_SUBMIT, &submit), has_start = date(st, line, C_START, &start),
         has_complete = date(st, line, C_COMPLETE, &complete);
    double duration = NAN, realtime = NAN; /* ms */
    value(st, line, C_DURATION, V_TIME, &duration);
    if (value(st, line, C_REALTIME, V_TIME, &realtime)) tl_record_set(r, TL_M_WALL_TIME_S, realtime / 1000);
    if (has_complete) r->time_ns = complete;
    else if (has_submit && duration >= 0) r->time_ns = tl_ns_plus_seconds(submit, duration / 1000);
    if (has_start) r->start_ns = start;
    else if (r->time_ns && realtime >= 0 && tl_ns_plus_seconds(r->time_ns, -realtime / 1000))
        r->start_ns = tl_ns_plus_seconds(r->time_ns, -realtime / 1000);
    int64_t queued;
    if (has_start && has_submit && start >= submit && !__builtin_sub_overflow(start, submit, &queued))
        tl_record_set(r, TL_M_QUEUE_TIME_S, (double)queued / 1e9);
    else if (isfinite(duration) && isfinite(realtime) && duration >= realtime)
        tl_record_set(r, TL_M_QUEUE_TIME_S, (duration - realtime) / 1000);
}

static void resources_of(struct nf_state *st, uint64_t line, struct tl_record *r)
{
    double pcpu;
    if (value(st, line, C_PCPU, V_PERC, &pcpu)) {
        tl_record_set(r, TL_M_CORES_AVG, pcpu / 100);
        if (tl_record_has(r, TL_M_WALL_TIME_S)) /* derived, from the ms: 500 x 97.0% = 0.485 s */
            tl_record_set(r, TL_M_CPU_TIME_S, r->v[TL_M_WALL_TIME_S] * 1000 * pcpu / 100000);
    }
    set(st, line, r, st->col[C_PEAK_RSS] >= 0 ? C_PEAK_RSS : C_RSS, V_MEM, TL_M_MAX_RSS_BYTES);
    set(st, line, r, st->col[C_PEAK_VMEM] >= 0 ? C_PEAK_VMEM : C_VMEM, V_MEM, TL_M_VIRTUAL_MEMORY_BYTES);
    set(st, line, r, C_RCHAR, V_MEM, TL_M_BYTES_READ);
    set(st, line, r, C_WCHAR, V_MEM, TL_M_BYTES_WRITTEN);
    set(st, line, r, C_READ_BYTES, V_MEM, TL_M_STORAGE_READ_BYTES);
    set(st, line, r, C_WRITE_BYTES, V_MEM, TL_M_STORAGE_WRITTEN_BYTES);
    set(st, line, r, C_VOL_CTXT, V_NUM, TL_M_CONTEXT_SWITCHES);
    set(st, line, r, C_INV_CTXT, V_NUM, TL_M_INVOL_CONTEXT_SWITCHES);
    set(st, line, r, C_CPUS, V_NUM, TL_M_REQ_CORES);
    set(st, line, r, C_MEMORY, V_MEM, TL_M_REQ_MEMORY_BYTES);
    set(st, line, r, C_DISK, V_MEM, TL_M_REQ_DISK_BYTES);
    set(st, line, r, C_TIME, V_TIME, TL_M_REQ_WALL_TIME_S);
    set(st, line, r, C_ACCELERATOR, V_NUM, TL_M_REQ_GPUS);
}

static void on_row(void *ctx, uint64_t line)
{
    struct nf_state *st = ctx;
    st->stats.lines = line;
    if (st->no_columns) {
        reject(st, line, TL_REJ_BAD_FIELDS, "the header names no Nextflow trace field");
        return;
    }
    if (st->table.ncells > st->table.ncols && st->col[C_NAME] >= 0) { /* a separator in a value */
        tl_table_glue(&st->table, st->col[C_NAME]);
        st->counters[NC_GLUED]++;
    }
    if (st->table.ncells != st->table.ncols) {
        char detail[96];
        snprintf(detail, sizeof detail, "%d values for %d fields", st->table.ncells, st->table.ncols);
        reject(st, line, TL_REJ_BAD_FIELDS, detail);
        return;
    }
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.source = "nextflow";
    r.workflow = st->workflow;
    r.line = line;
    r.category = category_of(st);
    if (!status_of(st, &r)) {
        size_t n;
        const char *s = tl_table_cell(&st->table, st->col[C_STATUS], &n);
        char detail[96];
        snprintf(detail, sizeof detail, "status '%.*s' is none of Nextflow's", (int)(n < 40 ? n : 40), s);
        reject(st, line, TL_REJ_BAD_FIELDS, detail);
        return;
    }
    ids_of(st, line, &r);
    times_of(st, line, &r);
    resources_of(st, line, &r);
    char detail[160];
    if (tl_record_drop_bad_values(&r, detail, sizeof detail)) reject(st, line, TL_REJ_BAD_VALUE, detail);
    st->stats.records++;
    if (tl_emit_wants(&st->emit, r.kind)) st->emit.record(st->emit.ctx, &r);
}

static void on_header(void *ctx)
{
    struct nf_state *st = ctx;
    st->no_columns = true;
    for (int c = 0; c < NCOL; c++)
        if ((st->col[c] = tl_table_col(&st->table, col_names[c])) >= 0) st->no_columns = false;
}

static void on_too_long(void *ctx, uint64_t line)
{
    struct nf_state *st = ctx;
    st->stats.lines = line;
    reject(st, line, TL_REJ_LINE_TOO_LONG, "over max_line");
}

/* ---------------------------------------------------------------- plumbing */

static enum tl_err nf_feed(void *state, const char *buf, size_t len)
{
    struct nf_state *st = state;
    return tl_table_feed(&st->table, buf, len, &st->cb);
}

static enum tl_err nf_finish(void *state)
{
    struct nf_state *st = state;
    tl_table_finish(&st->table, &st->cb);
    st->stats.lines = st->table.lines;
    return TL_OK;
}

#define NF_SAVE_MAGIC "TLN1"

static enum tl_err nf_save(const void *state, struct tl_buf *b)
{
    const struct nf_state *st = state;
    tl_table_state_save(b, NF_SAVE_MAGIC, &st->stats, st->counters, NC_COUNT, &st->table);
    tl_put_str(b, st->workflow);
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

static enum tl_err nf_restore(void *state, const uint8_t *p, size_t len)
{
    struct nf_state *st = state;
    const uint8_t *end = p + len;
    if (!tl_table_state_restore(&p, end, NF_SAVE_MAGIC, &st->stats, st->counters, NC_COUNT, &st->table, &st->cb))
        return TL_ERR_CORRUPT;
    const char *wf;
    size_t wflen;
    if (!tl_get_str(&p, end, sizeof st->workflow - 1, &wf, &wflen)) return TL_ERR_CORRUPT;
    memcpy(st->workflow, wf, wflen);
    st->workflow[wflen] = '\0';
    return p == end ? TL_OK : TL_ERR_CORRUPT;
}

/* Sure when the first line names at least three of Nextflow's fields and
 * nothing but names (no spaces, no digits first). */
static int nf_probe(const char *buf, size_t len)
{
    const char *nl = memchr(buf, '\n', len < 8192 ? len : 8192);
    size_t n = nl ? (size_t)(nl - buf) : (len < 8192 ? len : 0);
    if (n && buf[n - 1] == '\r') n--;
    char sep = memchr(buf, '\t', n) ? '\t' : ',';
    int known = 0, names = 0;
    for (const char *p = buf, *end = buf + n; p < end;) {
        const char *q = memchr(p, sep, (size_t)(end - p));
        if (!q) q = end;
        size_t k = (size_t)(q - p);
        if (!k || memchr(p, ' ', k) || (*p >= '0' && *p <= '9')) return 0;
        names++;
        for (size_t i = 0; i < sizeof all_fields / sizeof *all_fields; i++)
            if (strlen(all_fields[i]) == k && !memcmp(all_fields[i], p, k)) {
                known++;
                break;
            }
        p = q + 1;
    }
    return known >= 3 && known * 2 >= names ? 90 : 0;
}

static void nf_set_name(void *state, const char *name)
{
    struct nf_state *st = state;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (base && *base && strcmp(base, "-")) snprintf(st->workflow, sizeof st->workflow, "%s", base);
}

static enum tl_err nf_validate(const void *config, const char **key, char *err, size_t errcap)
{
    double h = ((const struct nf_config *)config)->utc_offset;
    if (isfinite(h) && fabs(h) <= 24) return TL_OK;
    *key = "utc_offset";
    snprintf(err, errcap, "nextflow.utc_offset is hours from UTC, -24 to 24, not %g", h);
    return TL_ERR_USAGE;
}

static enum tl_err nf_open(void **state, const void *config, const struct tl_emit *emit, char *err, size_t errcap)
{
    struct nf_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct nf_config *)config;
    st->emit = *emit;
    if (!(st->names = tl_intern_new(64u << 20))) {
        free(st);
        return TL_ERR_NOMEM;
    }
    tl_table_init(&st->table, 0, false, st->cfg.max_line);
    st->cb = (struct tl_table_cb){.header = on_header, .row = on_row, .too_long = on_too_long, .ctx = st};
    for (int c = 0; c < NCOL; c++) st->col[c] = -1;
    snprintf(st->workflow, sizeof st->workflow, "nextflow");
    *state = st;
    return TL_OK;
}

static void nf_close(void *state)
{
    struct nf_state *st = state;
    if (!st) return;
    tl_table_free(&st->table);
    tl_intern_free(st->names);
    free(st);
}

static const struct tl_parse_stats *nf_stats(const void *state)
{
    return &((const struct nf_state *)state)->stats;
}

static size_t nf_counters(const void *state, struct tl_counter *out, size_t max)
{
    return tl_counters_fill(out, max, counter_names, ((const struct nf_state *)state)->counters, NC_COUNT);
}

const struct tl_parser tl_parser_nextflow = {
    .name = "nextflow",
    .zoneless_times = true,
    .help = "Nextflow trace files (-with-trace; TSV or CSV, human or raw units): one task attempt per row",
    .probe = nf_probe,
    .config_size = sizeof(struct nf_config),
    .options = nf_options,
    .validate = nf_validate,
    .open = nf_open,
    .feed = nf_feed,
    .finish = nf_finish,
    .close = nf_close,
    .stats = nf_stats,
    .counters = nf_counters,
    .save = nf_save,
    .restore = nf_restore,
    .set_name = nf_set_name,
    .messages = TL_MSG_LINES,
    .file_time = true,
};
