/* cctools resource_monitor summaries (`.summary`): one JSON document per
 * monitored task, as resource_monitor -O NAME writes them, and as Makeflow
 * --monitor and Work Queue's monitor leave them in a directory, one file
 * per task. Several documents may follow each other in one input (`cat
 * *.summary`); files that start with a blank line (every version writes
 * one) are fine. Read with Jansson when the input ends: a summary is
 * written whole when its task ends, and is small.
 *
 * Every field resource_monitor(1) documents, each a [value, "unit"] pair
 * (older ones a bare number: cctools' MB and seconds):
 *   wall_time, cpu_time (s; "us" and "ms" too) -> wall_time_s, cpu_time_s
 *   memory, virtual_memory, swap_memory, disk (MB = 2^20 bytes, as cctools
 *     counts) -> max_rss_bytes, virtual_memory_bytes, swap_bytes, disk_bytes
 *   bytes_read, bytes_written, bytes_received, bytes_sent (MB) -> the same
 *     names, in bytes
 *   bandwidth (Mbps) -> bandwidth_mbps; cores, cores_avg, gpus,
 *     machine_cpus, context_switches, max_concurrent_processes,
 *     total_processes, total_files -> the same names
 *   start, end (s since the epoch) -> the record's time is the end
 *   exit_type normal -> result SUCCESS (exit_code = exit_status, as Work
 *     Queue reports a task that ran to its end); signal -> SIGNAL;
 *     limit(s) -> RESOURCE_EXHAUSTION with limits_exceeded as limit_*
 *   command -> category = its program's name, unless a "category" field
 *     says (Makeflow's); host; task_id when present; the file's name is
 *     the task key, its directory the workflow
 *   peak_times -> with peak_times=true, one sample per resource
 *     ("peak_time memory": seconds from the start when it peaked), at
 *     start + that time
 *   snapshots -> counted; machine_load, fs_nodes, workers,
 *     executable_type, monitor_version have no place in the record. */
#include "parsers/cctools_units.h"
#include "parsers/jscan.h"
#include "parsers/parser.h"

#include "core/bytes.h"
#include "core/intern.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rm_config {
    size_t max_document;
    bool peak_times;
};

static const struct tl_option rm_options[] = {
    {"max_document", TL_OPT_SIZE, "16M",
     "largest input read (summaries are a few KB; snapshots make them larger)",
     offsetof(struct rm_config, max_document)},
    {"peak_times", TL_OPT_BOOL, "false",
     "also emit peak_times as samples (\"peak_time memory\": seconds from the start when the "
     "memory peaked, at that time)", offsetof(struct rm_config, peak_times)},
    {0},
};

enum { RC_TASKS, RC_LIMITS, RC_PEAK_SAMPLES, RC_SNAPSHOTS, RC_COUNT };
static const char *const counter_names[RC_COUNT] = {
    "summaries", "limits_exceeded", "peak_time_samples", "snapshots",
};

struct rm_state {
    struct rm_config cfg;
    struct tl_emit emit;
    struct tl_parse_stats stats;
    uint64_t counters[RC_COUNT];
    struct tl_buf doc;       /* the input so far */
    bool too_large;
    struct tl_intern *names; /* categories, hosts */
    char task_key[256];      /* the file's name without .summary */
    char workflow[512];      /* its directory */
};

static void reject(struct rm_state *st, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, st->stats.lines, why, detail);
}

static const char *intern(struct rm_state *st, const char *s, size_t n)
{
    int32_t id = tl_intern(st->names, s, n);
    return id >= 0 ? tl_intern_str(st->names, id) : NULL;
}

static void emit(struct rm_state *st, struct tl_record *r)
{
    char detail[160];
    if (tl_record_drop_bad_values(r, detail, sizeof detail)) reject(st, TL_REJ_BAD_VALUE, detail);
    st->stats.records++;
    if (tl_emit_wants(&st->emit, r->kind)) st->emit.record(st->emit.ctx, r);
}

/* ---------------------------------------------------------------- values */

enum kind { SECONDS, BYTES, PLAIN };

struct field {
    const char *name;
    enum tl_metric metric;
    enum kind kind;
};

static const struct field fields[] = {
    {"wall_time", TL_M_WALL_TIME_S, SECONDS},
    {"cpu_time", TL_M_CPU_TIME_S, SECONDS},
    {"memory", TL_M_MAX_RSS_BYTES, BYTES},
    {"virtual_memory", TL_M_VIRTUAL_MEMORY_BYTES, BYTES},
    {"swap_memory", TL_M_SWAP_BYTES, BYTES},
    {"disk", TL_M_DISK_BYTES, BYTES},
    {"bytes_read", TL_M_BYTES_READ, BYTES},
    {"bytes_written", TL_M_BYTES_WRITTEN, BYTES},
    {"bytes_received", TL_M_BYTES_RECEIVED, BYTES},
    {"bytes_sent", TL_M_BYTES_SENT, BYTES},
    {"bandwidth", TL_M_BANDWIDTH_MBPS, PLAIN},
    {"cores", TL_M_CORES, PLAIN},
    {"cores_avg", TL_M_CORES_AVG, PLAIN},
    {"gpus", TL_M_GPUS, PLAIN},
    {"machine_cpus", TL_M_MACHINE_CPUS, PLAIN},
    {"context_switches", TL_M_CONTEXT_SWITCHES, PLAIN},
    {"max_concurrent_processes", TL_M_MAX_CONCURRENT_PROCESSES, PLAIN},
    {"total_processes", TL_M_TOTAL_PROCESSES, PLAIN},
    {"total_files", TL_M_TOTAL_FILES, PLAIN},
};

/* A [value, "unit"] pair (or a bare number) in canonical units. false when
 * absent; *bad when present but not a number in a known unit. */
static bool value_of(json_t *v, enum kind k, double *out, bool *bad)
{
    if (!v) return false;
    json_t *num = json_is_array(v) ? json_array_get(v, 0) : v;
    json_t *unit = json_is_array(v) ? json_array_get(v, 1) : NULL;
    const char *u = json_is_string(unit) ? json_string_value(unit) : "";
    double f = tl_cctools_unit(k == SECONDS ? TL_CCTOOLS_SECONDS : k == BYTES ? TL_CCTOOLS_BYTES
                                                                             : TL_CCTOOLS_COUNT,
                               u, strlen(u));
    if (!json_is_number(num) || (unit && !json_is_string(unit)) || !f) {
        *bad = true;
        return false;
    }
    *out = json_number_value(num) * f;
    if (k == BYTES && f >= 1024) *out = round(*out); /* byte counts: MB to 6 decimals */
    return true;
}

/* ---------------------------------------------------------------- a summary */

/* The category: the "category" field, else the command's program name. */
static const char *category_of(struct rm_state *st, json_t *d)
{
    json_t *c = json_object_get(d, "category");
    if (json_is_string(c) && json_string_length(c))
        return intern(st, json_string_value(c), json_string_length(c));
    const char *cmd = json_string_value(json_object_get(d, "command"));
    if (!cmd) return "(no command)";
    while (*cmd == ' ') cmd++;
    size_t n = strcspn(cmd, " \t");
    const char *slash = memrchr(cmd, '/', n);
    if (slash) {
        n -= (size_t)(slash + 1 - cmd);
        cmd = slash + 1;
    }
    return n ? intern(st, cmd, n) : "(no command)";
}

static const char *result_of(struct rm_state *st, json_t *d, struct tl_record *r)
{
    const char *type = json_string_value(json_object_get(d, "exit_type"));
    if (type && !strncmp(type, "limit", 5)) {
        json_t *lim = json_object_get(d, "limits_exceeded");
        const char *k;
        json_t *v;
        bool bad = false;
        double x;
        json_object_foreach(lim, k, v)
        {
            if (!strcmp(k, "memory") && value_of(v, BYTES, &x, &bad)) tl_record_set(r, TL_M_LIMIT_MEMORY_BYTES, x);
            else if (!strcmp(k, "disk") && value_of(v, BYTES, &x, &bad)) tl_record_set(r, TL_M_LIMIT_DISK_BYTES, x);
            else if (!strcmp(k, "cores") && value_of(v, PLAIN, &x, &bad)) tl_record_set(r, TL_M_LIMIT_CORES, x);
            else if (!strcmp(k, "wall_time") && value_of(v, SECONDS, &x, &bad)) tl_record_set(r, TL_M_LIMIT_WALL_TIME_S, x);
        }
        st->counters[RC_LIMITS]++;
        return "RESOURCE_EXHAUSTION";
    }
    if (type && !strcmp(type, "signal")) return "SIGNAL";
    return "SUCCESS";
}

/* One sample per resource of peak_times: when, after the start, it peaked. */
static void peaks(struct rm_state *st, json_t *d, const struct tl_record *task, double start)
{
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(d, "peak_times"), k, v)
    {
        double t;
        bool bad = false;
        if (!value_of(v, SECONDS, &t, &bad)) continue;
        char series[160];
        snprintf(series, sizeof series, "peak_time %s", k);
        struct tl_record r;
        tl_record_init(&r, TL_REC_SAMPLE);
        r.source = "rmonitor";
        r.workflow = task->workflow;
        r.category = intern(st, series, strlen(series));
        r.host = task->host;
        r.worker = task->category; /* which task's peak: its category */
        r.task_key = task->task_key;
        r.line = st->stats.lines;
        r.time_ns = start > 0 ? (int64_t)((start + t) * 1e9) : 0;
        tl_record_set(&r, TL_M_SAMPLE_VALUE, t);
        st->counters[RC_PEAK_SAMPLES]++;
        if (r.category) emit(st, &r);
    }
}

static void summary(struct rm_state *st, json_t *d)
{
    st->stats.lines++;
    if (!json_is_object(d) || (!json_object_get(d, "wall_time") && !json_object_get(d, "command"))) {
        reject(st, TL_REJ_NO_RESOURCES, "not a resource_monitor summary (no command, no wall_time)");
        return;
    }
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.source = "rmonitor";
    r.workflow = st->workflow;
    r.category = category_of(st, d);
    const char *host = json_string_value(json_object_get(d, "host"));
    r.host = host ? intern(st, host, strlen(host)) : NULL;
    r.task_key = st->task_key[0] ? st->task_key : NULL;
    json_t *tid = json_object_get(d, "task_id");
    r.task_id = json_is_integer(tid) ? json_integer_value(tid) : -1;
    r.attempt = 1;
    r.final = true;
    r.line = st->stats.lines;
    json_t *ex = json_object_get(d, "exit_status");
    bool bad = false;
    char detail[160] = "";
    r.has_exit_code = json_is_integer(ex) && json_integer_value(ex) >= INT32_MIN &&
                      json_integer_value(ex) <= INT32_MAX;
    r.exit_code = r.has_exit_code ? (int32_t)json_integer_value(ex) : 0;
    if (ex && !r.has_exit_code) { /* 2^40 is no exit status (it used to read as 0) */
        bad = true;
        snprintf(detail, sizeof detail, "exit_status: not an exit status");
    }
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        double x;
        bool was_bad = bad;
        if (value_of(json_object_get(d, fields[i].name), fields[i].kind, &x, &bad))
            tl_record_set(&r, fields[i].metric, x);
        else if (bad && !was_bad)
            snprintf(detail, sizeof detail, "%s: not a number in a known unit", fields[i].name);
    }
    double start = 0, end = 0;
    bool had_bad = bad;
    value_of(json_object_get(d, "start"), SECONDS, &start, &bad);
    value_of(json_object_get(d, "end"), SECONDS, &end, &bad);
    if (tl_epoch_plausible(end)) r.time_ns = tl_epoch_ns_of_seconds(end); /* cctools counts us */
    else if (!had_bad) { /* absent or 1e20: no 1970 point; the file's time stands in (file_time) */
        bad = true;
        snprintf(detail, sizeof detail, "end: %s", json_object_get(d, "end") ? "not a time" : "missing");
    }
    if (tl_epoch_plausible(start) && start <= end) r.start_ns = tl_epoch_ns_of_seconds(start);
    r.result = result_of(st, d, &r);
    json_t *snaps = json_object_get(d, "snapshots");
    if (json_is_array(snaps)) st->counters[RC_SNAPSHOTS] += json_array_size(snaps);
    if (bad) reject(st, TL_REJ_BAD_FIELDS, detail[0] ? detail : "start or end: not a time");
    st->counters[RC_TASKS]++;
    emit(st, &r);
    if (st->cfg.peak_times) peaks(st, d, &r, start);
}

/* ---------------------------------------------------------------- input */

static enum tl_err rm_feed(void *state, const char *buf, size_t len)
{
    struct rm_state *st = state;
    if (st->too_large) return TL_OK;
    if (st->doc.len + len > st->cfg.max_document) {
        st->too_large = true;
        tl_buf_free(&st->doc);
        return TL_OK;
    }
    tl_buf_append(&st->doc, buf, len);
    return st->doc.oom ? TL_ERR_NOMEM : TL_OK;
}

/* cctools writes its strings with JX's escapes, and JX allows \' (a
 * command with quotes: "python3 -c \"open(\'b\')\""), which JSON does not:
 * the backslash goes, in place. */
static void jx_escapes_to_json(struct tl_buf *doc)
{
    size_t w = 0;
    bool in_string = false;
    for (size_t r = 0; r < doc->len; r++) {
        char c = doc->data[r];
        if (in_string && c == '\\' && r + 1 < doc->len) {
            if (doc->data[r + 1] != '\'') doc->data[w++] = c;
            doc->data[w++] = doc->data[++r];
            continue;
        }
        if (c == '"') in_string = !in_string;
        doc->data[w++] = c;
    }
    doc->len = w;
}

/* A summary holds about 100 values; past this many, one is refused before
 * Jansson builds it (8 MB of "[0,0,...]" took 314 MB). */
#define RM_MAX_VALUES 65536

/* Every document of the input, one after the other. */
static enum tl_err rm_finish(void *state)
{
    struct rm_state *st = state;
    if (st->too_large) {
        st->stats.lines++;
        reject(st, TL_REJ_TOO_LARGE, "over max_document");
    }
    jx_escapes_to_json(&st->doc);
    size_t at = 0;
    while (!st->too_large && at < st->doc.len) {
        while (at < st->doc.len && strchr(" \t\r\n", st->doc.data[at])) at++;
        if (at == st->doc.len) break;
        json_error_t e;
        json_t *d = NULL;
        if (tl_json_values_upper(st->doc.data + at, st->doc.len - at, RM_MAX_VALUES) > RM_MAX_VALUES)
            snprintf(e.text, sizeof e.text, "more than %d values in one summary", RM_MAX_VALUES);
        else d = json_loadb(st->doc.data + at, st->doc.len - at, JSON_DISABLE_EOF_CHECK, &e);
        if (!d) {
            st->stats.lines++;
            char detail[200];
            snprintf(detail, sizeof detail, "JSON: %s", e.text);
            /* the next summary starts at a line's first '{' (resource_monitor
             * writes one per line start): read on from there, so a cut one
             * costs itself only */
            const char *next = memmem(st->doc.data + at + 1, st->doc.len - at - 1, "\n{", 2);
            reject(st, e.position >= (int)(st->doc.len - at) || next ? TL_REJ_TRUNCATED : TL_REJ_BAD_DOCUMENT,
                   detail);
            if (!next) break;
            at = (size_t)(next + 1 - st->doc.data);
            continue;
        }
        summary(st, d);
        json_decref(d);
        at += e.position;
    }
    st->doc.len = 0;
    st->too_large = false;
    return TL_OK;
}

/* ---------------------------------------------------------------- checkpoints */

#define RM_SAVE_MAGIC "TLR1"

static enum tl_err rm_save(const void *state, struct tl_buf *b)
{
    const struct rm_state *st = state;
    tl_buf_append(b, RM_SAVE_MAGIC, 4);
    tl_parse_stats_put(b, &st->stats);
    tl_counters_put(b, st->counters, RC_COUNT);
    tl_put_u8(b, st->too_large);
    tl_put_varint(b, st->doc.len);
    tl_buf_append(b, st->doc.data, st->doc.len);
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

static enum tl_err rm_restore(void *state, const uint8_t *p, size_t len)
{
    struct rm_state *st = state;
    const uint8_t *end = p + len;
    uint8_t big;
    uint64_t n;
    if (len < 4 || memcmp(p, RM_SAVE_MAGIC, 4)) return TL_ERR_CORRUPT;
    p += 4;
    if (!tl_parse_stats_get(&p, end, &st->stats) || !tl_counters_get(&p, end, st->counters, RC_COUNT) ||
        !tl_get_u8(&p, end, &big) || !tl_get_varint(&p, end, &n) || n != (uint64_t)(end - p) ||
        n > st->cfg.max_document)
        return TL_ERR_CORRUPT;
    st->too_large = big & 1;
    st->doc.len = 0;
    tl_buf_append(&st->doc, p, (size_t)n);
    return st->doc.oom ? TL_ERR_NOMEM : TL_OK;
}

/* ---------------------------------------------------------------- plumbing */

static int rm_probe(const char *buf, size_t len)
{
    size_t n = len < 4096 ? len : 4096, i = 0;
    while (i < n && strchr(" \t\r\n", buf[i])) i++;
    if (i == n || buf[i] != '{') return 0;
    if (memmem(buf, n, "\"monitor_version\"", 17) || memmem(buf, n, "\"executable_type\"", 17)) return 95;
    return memmem(buf, n, "\"wall_time\"", 11) && memmem(buf, n, "\"exit_type\"", 11) ? 80 : 0;
}

static void rm_set_name(void *state, const char *name)
{
    struct rm_state *st = state;
    if (!name || !strcmp(name, "-")) return;
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    size_t n = strlen(base);
    if (n > 8 && !strcmp(base + n - 8, ".summary")) n -= 8;
    snprintf(st->task_key, sizeof st->task_key, "%.*s", (int)n, base);
    snprintf(st->workflow, sizeof st->workflow, "%.*s", slash ? (int)(slash - name) : 1,
             slash ? name : ".");
}

static enum tl_err rm_open(void **state, const void *config, const struct tl_emit *emit, char *err, size_t errcap)
{
    struct rm_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct rm_config *)config;
    st->emit = *emit;
    snprintf(st->workflow, sizeof st->workflow, "rmonitor");
    if (!(st->names = tl_intern_new(16u << 20))) {
        free(st);
        return TL_ERR_NOMEM;
    }
    *state = st;
    return TL_OK;
}

static void rm_close(void *state)
{
    struct rm_state *st = state;
    if (!st) return;
    tl_buf_free(&st->doc);
    tl_intern_free(st->names);
    free(st);
}

static const struct tl_parse_stats *rm_stats(const void *state)
{
    return &((const struct rm_state *)state)->stats;
}

static size_t rm_counters(const void *state, struct tl_counter *out, size_t max)
{
    return tl_counters_fill(out, max, counter_names, ((const struct rm_state *)state)->counters, RC_COUNT);
}

const struct tl_parser tl_parser_rmonitor = {
    .name = "rmonitor",
    .help = "cctools resource_monitor summaries (.summary JSON; Makeflow --monitor directories)",
    .probe = rm_probe,
    .config_size = sizeof(struct rm_config),
    .options = rm_options,
    .open = rm_open,
    .feed = rm_feed,
    .finish = rm_finish,
    .close = rm_close,
    .stats = rm_stats,
    .counters = rm_counters,
    .save = rm_save,
    .restore = rm_restore,
    .set_name = rm_set_name,
    .messages = TL_MSG_DOCUMENT,
    .file_time = true,
};
