/* Apache Spark event logs: one JSON object per line, its type in "Event"
 * (../shared/spark/samples/SOURCES.md describes a real one). Read with
 * Jansson a line at a time, in any split of the bytes.
 *
 * Records:
 *   - each SparkListenerTaskEnd is a task attempt: category = the stage's
 *     name (from its StageSubmitted; option category=description: the
 *     job's spark.job.description, else the stage name), task_id = the
 *     Task ID, attempt = Attempt + 1, final = the attempt succeeded (a
 *     failed one is retried: it counts as an attempt, as in Work Queue),
 *     result = the Task End Reason (Success, ExceptionFailure, ...),
 *     host, worker = Executor ID, time = Finish Time; wall_time_s =
 *     Executor Run Time, cpu_time_s = Executor CPU Time, bytes_read =
 *     input bytes, bytes_written = output bytes, bytes_received = shuffle
 *     bytes read (remote + local), bytes_sent = shuffle bytes written,
 *     output_bytes = Result Size, jvm_gc_time_s = JVM GC Time,
 *     peak_execution_memory_bytes = Peak Execution Memory.
 *   - SparkListenerStageExecutorMetrics: one sample per executor metric
 *     ("executor ProcessTreePythonRSSMemory", ...), worker = the executor,
 *     at the time of the last event read.
 * Other events are counted by type. */
#include "parsers/parser.h"

#include "core/bytes.h"
#include "core/intern.h"
#include "core/map64.h"
#include "parsers/jscan.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct spark_config {
    size_t max_line;
    const char *category;
};

static const struct tl_option spark_options[] = {
    {"max_line", TL_OPT_SIZE, "64M", "longest event line (an EnvironmentUpdate holds the classpath)",
     offsetof(struct spark_config, max_line)},
    {"category", TL_OPT_STRING, "stage",
     "what names a task's category: stage (its name, the call site) or description (the job's "
     "spark.job.description, else the stage name)",
     offsetof(struct spark_config, category)},
    {0},
};

enum {
    SC_TASK_END, SC_TASK_FAILED, SC_STAGE_SUBMITTED, SC_JOB_START, SC_STAGE_EXECUTOR_METRICS,
    SC_SAMPLES, SC_OTHER_EVENTS, SC_COUNT
};
static const char *const counter_names[SC_COUNT] = {
    "task_end", "task_end_failed", "stage_submitted", "job_start", "stage_executor_metrics",
    "samples", "other_events",
};

struct spark_state {
    struct spark_config cfg;
    bool by_description;
    struct tl_emit emit;
    struct tl_parse_stats stats;
    uint64_t counters[SC_COUNT];
    struct tl_buf partial;    /* a line not complete yet */
    bool nomem;               /* an event left out for lack of memory: the input fails at its end */
    struct tl_buf skimmed;    /* the line being read, without what is never read */
    bool skipping;            /* inside a line over max_line */
    struct tl_intern *names;  /* stage names, descriptions, hosts, executors, series */
    struct tl_map64 stage_name; /* stage id -> interned name */
    struct tl_map64 stage_desc; /* stage id -> interned job description */
    /* a task's dependencies: the task of each parent stage that ended last */
    struct tl_map64 stage_parents; /* stage id -> offset + 1 in parents: [count, parent ids...] */
    struct tl_buf parents;         /* int64s */
    struct tl_map64 stage_last;    /* stage id -> index in last[] + 1 */
    struct tl_map64 stage_rdd;     /* stage id -> the RDD it computes + 1 */
    struct tl_map64 rdd_stage;     /* RDD id -> the stage with tasks that computed it last + 1 */
    struct stage_last {
        int64_t finish_ms, task;
    } *last;
    size_t nlast, caplast;
    struct tl_buf depends;         /* the record's depends, made per task */
    int64_t last_ms;          /* the newest event time seen */
    char workflow[256];
};

static void reject(struct spark_state *st, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, st->stats.lines, why, detail);
}

static const char *intern(struct spark_state *st, const char *s)
{
    if (!s) return NULL;
    int32_t id = tl_intern(st->names, s, strlen(s));
    return id >= 0 ? tl_intern_str(st->names, id) : NULL;
}

static bool num(json_t *o, const char *key, double *v)
{
    json_t *x = o ? json_object_get(o, key) : NULL;
    if (!json_is_number(x)) return false;
    *v = json_number_value(x);
    return true;
}

static void emit(struct spark_state *st, struct tl_record *r)
{
    char detail[160];
    if (tl_record_drop_bad_values(r, detail, sizeof detail)) reject(st, TL_REJ_BAD_VALUE, detail);
    st->stats.records++;
    if (tl_emit_wants(&st->emit, r->kind)) st->emit.record(st->emit.ctx, r);
}

static void sample(struct spark_state *st, const char *prefix, const char *key, double v,
                   const char *worker, const char *host)
{
    char series[300];
    snprintf(series, sizeof series, "%s %s", prefix, key);
    struct tl_record r;
    tl_record_init(&r, TL_REC_SAMPLE);
    r.source = "spark";
    r.workflow = st->workflow;
    r.category = intern(st, series);
    r.worker = worker;
    r.host = host;
    r.line = st->stats.lines;
    r.time_ns = st->last_ms * 1000000;
    tl_record_set(&r, TL_M_SAMPLE_VALUE, v);
    st->counters[SC_SAMPLES]++;
    if (r.category) emit(st, &r);
}

static const char *category_of(struct spark_state *st, int64_t stage)
{
    uint64_t *d = st->by_description ? tl_map64_get(&st->stage_desc, (uint64_t)stage) : NULL;
    if (d) return tl_intern_str(st->names, (int32_t)*d);
    uint64_t *n = tl_map64_get(&st->stage_name, (uint64_t)stage);
    return n ? tl_intern_str(st->names, (int32_t)*n) : "(unknown stage)";
}

/* Stage `stage`'s task `task` ended at finish_ms: the stage's last so far? */
static void note_last(struct spark_state *st, int64_t stage, int64_t finish_ms, int64_t task)
{
    uint64_t *at = tl_map64_get(&st->stage_last, (uint64_t)stage);
    if (at) {
        struct stage_last *l = &st->last[*at - 1];
        if (finish_ms >= l->finish_ms) *l = (struct stage_last){finish_ms, task};
        return;
    }
    if (st->nlast == st->caplast) {
        size_t cap = st->caplast ? st->caplast * 2 : 64;
        struct stage_last *p = realloc(st->last, cap * sizeof *p);
        if (!p) return;
        st->last = p;
        st->caplast = cap;
    }
    st->last[st->nlast++] = (struct stage_last){finish_ms, task};
    tl_map64_put(&st->stage_last, (uint64_t)stage, st->nlast);
    uint64_t *rdd = tl_map64_get(&st->stage_rdd, (uint64_t)stage);
    if (rdd) tl_map64_put(&st->rdd_stage, *rdd - 1, (uint64_t)stage + 1);
}

/* The task that ended last in the stage that computed parent stage p's
 * output: p's own, or, p skipped (its output was an earlier stage's: the
 * same RDD), that stage's. NULL when none is known. */
static const struct stage_last *parent_last(const struct spark_state *st, int64_t p)
{
    uint64_t *l = tl_map64_get(&st->stage_last, (uint64_t)p);
    if (!l) {
        uint64_t *rdd = tl_map64_get(&st->stage_rdd, (uint64_t)p);
        uint64_t *q = rdd ? tl_map64_get(&st->rdd_stage, *rdd - 1) : NULL;
        l = q ? tl_map64_get(&st->stage_last, *q - 1) : NULL;
    }
    return l ? &st->last[*l - 1] : NULL;
}

/* A stage's RDD (from its Stage Info), kept the first time it is seen. */
static void keep_rdd(struct spark_state *st, int64_t stage, json_t *si)
{
    json_t *rdd = json_object_get(si, "RDD Info");
    if (json_is_integer(rdd) && json_integer_value(rdd) >= 0 && !tl_map64_get(&st->stage_rdd, (uint64_t)stage))
        tl_map64_put(&st->stage_rdd, (uint64_t)stage, (uint64_t)json_integer_value(rdd) + 1);
}

/* "12,40": for each parent stage of `stage`, the task that ended last in
 * the stage that computed its output (a stage's tasks start once its
 * parents are done, so that task is what they waited for; in the bound,
 * each parent stage is as late as that task); NULL when none is known. */
static const char *depends_of(struct spark_state *st, int64_t stage)
{
    uint64_t *at = tl_map64_get(&st->stage_parents, (uint64_t)stage);
    if (!at) return NULL;
    const int64_t *p = (const int64_t *)(const void *)(st->parents.data + (*at - 1));
    st->depends.len = 0;
    for (int64_t i = 1; i <= p[0]; i++) {
        const struct stage_last *l = parent_last(st, p[i]);
        if (l) tl_buf_printf(&st->depends, "%s%lld", st->depends.len ? "," : "", (long long)l->task);
    }
    if (!st->depends.len || st->depends.oom) return NULL;
    tl_buf_putc(&st->depends, '\0');
    return st->depends.data;
}

/* The stage's Parent IDs, kept for its tasks' dependencies. */
static void keep_parents(struct spark_state *st, int64_t stage, json_t *ids)
{
    if (!json_is_array(ids) || !json_array_size(ids) || tl_map64_get(&st->stage_parents, (uint64_t)stage)) return;
    size_t off = st->parents.len, i;
    int64_t count = 0;
    json_t *x;
    tl_buf_append(&st->parents, &count, sizeof count);
    json_array_foreach(ids, i, x) if (json_is_integer(x)) {
        int64_t id = json_integer_value(x);
        tl_buf_append(&st->parents, &id, sizeof id);
        count++;
    }
    if (st->parents.oom) return;
    memcpy(st->parents.data + off, &count, sizeof count);
    tl_map64_put(&st->stage_parents, (uint64_t)stage, off + 1);
}

static void task_end(struct spark_state *st, json_t *ev)
{
    json_t *info = json_object_get(ev, "Task Info"), *m = json_object_get(ev, "Task Metrics");
    json_t *reason = json_object_get(json_object_get(ev, "Task End Reason"), "Reason");
    double stage, tid, attempt, finish;
    if (!json_is_object(info) || !num(ev, "Stage ID", &stage) || !num(info, "Task ID", &tid) ||
        !num(info, "Attempt", &attempt) || !num(info, "Finish Time", &finish) || !json_is_string(reason))
        return reject(st, TL_REJ_BAD_FIELDS, "SparkListenerTaskEnd without its Task Info or reason");
    const char *bad = !tl_epoch_plausible(finish / 1e3) ? "Finish Time"
                      : !(stage >= 0 && stage < 9e15)   ? "Stage ID"
                      : !(tid >= 0 && tid < 9e15)       ? "Task ID"
                      : !(attempt >= 0 && attempt < 1e6) ? "Attempt"
                                                         : NULL;
    if (bad) { /* damage, not a task of 1969 or attempt -2147483647 */
        char detail[96];
        double v = bad[0] == 'F' ? finish : bad[0] == 'S' ? stage : bad[0] == 'T' ? tid : attempt;
        snprintf(detail, sizeof detail, "%s out of range: %.17g", bad, v);
        return reject(st, TL_REJ_BAD_VALUE, detail);
    }
    st->counters[SC_TASK_END]++;
    const char *why = json_string_value(reason);
    bool ok = !strcmp(why, "Success");
    if (!ok) st->counters[SC_TASK_FAILED]++;
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.source = "spark";
    r.workflow = st->workflow;
    r.category = category_of(st, (int64_t)stage);
    r.task_id = (int64_t)tid;
    r.attempt = (int32_t)attempt + 1;
    r.final = ok;
    r.result = intern(st, why);
    r.host = intern(st, json_string_value(json_object_get(info, "Host")));
    r.worker = intern(st, json_string_value(json_object_get(info, "Executor ID")));
    r.line = st->stats.lines;
    r.time_ns = (int64_t)finish * 1000000;
    double launch;
    if (num(info, "Launch Time", &launch) && tl_epoch_plausible(launch / 1e3) && launch <= finish)
        r.start_ns = (int64_t)launch * 1000000;
    if ((int64_t)finish > st->last_ms) st->last_ms = (int64_t)finish;
    double v, a;
    if (num(m, "Executor Run Time", &v)) tl_record_set(&r, TL_M_WALL_TIME_S, v / 1e3);
    if (num(m, "Executor CPU Time", &v)) tl_record_set(&r, TL_M_CPU_TIME_S, v / 1e9);
    if (num(m, "Result Size", &v)) tl_record_set(&r, TL_M_OUTPUT_BYTES, v);
    if (num(json_object_get(m, "Input Metrics"), "Bytes Read", &v)) tl_record_set(&r, TL_M_BYTES_READ, v);
    if (num(json_object_get(m, "Output Metrics"), "Bytes Written", &v)) tl_record_set(&r, TL_M_BYTES_WRITTEN, v);
    json_t *sr = json_object_get(m, "Shuffle Read Metrics");
    if (num(sr, "Remote Bytes Read", &v) && num(sr, "Local Bytes Read", &a))
        tl_record_set(&r, TL_M_BYTES_RECEIVED, v + a);
    if (num(json_object_get(m, "Shuffle Write Metrics"), "Shuffle Bytes Written", &v))
        tl_record_set(&r, TL_M_BYTES_SENT, v);
    if (num(m, "JVM GC Time", &v)) tl_record_set(&r, TL_M_JVM_GC_TIME_S, v / 1e3);
    if (num(m, "Peak Execution Memory", &v)) tl_record_set(&r, TL_M_PEAK_EXECUTION_MEMORY_BYTES, v);
    r.depends = depends_of(st, (int64_t)stage);
    note_last(st, (int64_t)stage, (int64_t)finish, (int64_t)tid);
    emit(st, &r);
}

static void stage_submitted(struct spark_state *st, json_t *ev)
{
    json_t *si = json_object_get(ev, "Stage Info");
    double id;
    const char *name = json_string_value(json_object_get(si, "Stage Name"));
    if (!num(si, "Stage ID", &id) || !name) return reject(st, TL_REJ_BAD_FIELDS, "StageSubmitted without its Stage Info");
    st->counters[SC_STAGE_SUBMITTED]++;
    int32_t n = tl_intern(st->names, name, strlen(name));
    if (n >= 0) tl_map64_put(&st->stage_name, (uint64_t)(int64_t)id, (uint64_t)n);
    keep_parents(st, (int64_t)id, json_object_get(si, "Parent IDs"));
    keep_rdd(st, (int64_t)id, si);
    double t;
    if (num(si, "Submission Time", &t) && (int64_t)t > st->last_ms) st->last_ms = (int64_t)t;
}

static void job_start(struct spark_state *st, json_t *ev)
{
    st->counters[SC_JOB_START]++;
    size_t k;
    json_t *si;
    json_array_foreach(json_object_get(ev, "Stage Infos"), k, si) { /* skipped ones too: their RDDs */
        json_t *id = json_object_get(si, "Stage ID");
        if (json_is_integer(id)) keep_rdd(st, json_integer_value(id), si);
    }
    const char *desc = json_string_value(json_object_get(json_object_get(ev, "Properties"), "spark.job.description"));
    if (!desc) return;
    int32_t n = tl_intern(st->names, desc, strlen(desc));
    json_t *ids = json_object_get(ev, "Stage IDs");
    size_t i;
    json_t *x;
    json_array_foreach(ids, i, x) if (json_is_integer(x) && n >= 0)
        tl_map64_put(&st->stage_desc, (uint64_t)json_integer_value(x), (uint64_t)n);
}

static void stage_metrics(struct spark_state *st, json_t *ev)
{
    st->counters[SC_STAGE_EXECUTOR_METRICS]++;
    const char *exec = intern(st, json_string_value(json_object_get(ev, "Executor ID")));
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(ev, "Executor Metrics"), k, v)
        if (json_is_number(v)) sample(st, "executor", k, json_number_value(v), exec, NULL);
}

/* Whether a line is an event tasklens does not read, by the type Spark
 * writes first ({"Event":"<type>",...}): counted, not parsed. The SQL
 * plans and the environment are most of a log's bytes; parsing only the
 * events used took `summary` on 20 copies of the sample log (21 MB) from
 * 0.34 s to 0.15 s, and skimming those (skim) to 0.04 s (Python's
 * json.loads of every line: 0.12 s; bench/RESULTS.md). */
static bool unused_event(const char *p, size_t n)
{
    static const char head[] = "{\"Event\":\"";
    static const char *const used[] = {"SparkListenerTaskEnd\"", "SparkListenerStageSubmitted\"",
                                       "SparkListenerJobStart\"", "SparkListenerStageExecutorMetrics\"",
                                       "SparkListenerApplicationStart\""};
    if (n < sizeof head + 8 || memcmp(p, head, sizeof head - 1)) return false; /* parsed: judged */
    const char *t = p + sizeof head - 1;
    size_t left = n - (sizeof head - 1);
    for (size_t i = 0; i < sizeof used / sizeof *used; i++) {
        size_t k = strlen(used[i]);
        if (left >= k && !memcmp(t, used[i], k)) return false;
    }
    return memchr(t, '"', left < 200 ? left : 200) != NULL; /* a type, and not one of ours */
}

/* ---------------------------------------------------------------- skimming */

/* The end of the string whose opening quote is at p (the byte after its
 * closing quote), or NULL when the line ends first. */
static const char *string_end(const char *p, const char *end)
{
    for (p++; p < end;) {
        p = tl_find_quote_or_backslash(p, end);
        if (p == end) return NULL;
        if (*p == '"') return p + 1;
        p += 2; /* an escape: the next byte is not a closing quote */
    }
    return NULL;
}

/* The end of the JSON value at p (after whitespace), or NULL. */
static const char *value_end(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p == end) return NULL;
    if (*p == '"') return string_end(p, end);
    if (*p != '{' && *p != '[') {
        while (p < end && *p != ',' && *p != '}' && *p != ']') p++;
        return p;
    }
    int depth = 0;
    while (p < end) {
        char c = *p;
        if (c == '"') {
            if (!(p = string_end(p, end))) return NULL;
            continue;
        }
        if (c == '{' || c == '[') depth++;
        else if ((c == '}' || c == ']') && --depth == 0) return p + 1;
        p++;
    }
    return NULL;
}

/* Keys whose values the parser never reads, at any depth: Spark writes
 * them on the events it does read, and they are most of their bytes
 * (accumulators, executor metrics, call sites, properties). A stage's
 * RDD Info becomes its first RDD's id (the RDD the stage computes: a
 * skipped stage names the one an earlier stage computed), and its Parent
 * IDs are read: its tasks' dependencies. */
static bool skipped_key(const char *k, size_t n, bool want_properties)
{
    static const char *const keys[] = {"Accumulables", "Task Executor Metrics", "Details"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strlen(keys[i]) == n && !memcmp(keys[i], k, n)) return true;
    return !want_properties && n == 10 && !memcmp(k, "Properties", 10);
}

/* The first "RDD ID" number in [p, end) into out, else null. */
static void first_rdd_id(const char *p, const char *end, struct tl_buf *out)
{
    static const char key[] = "\"RDD ID\"";
    for (; p + sizeof key < end; p++) {
        if (memcmp(p, key, sizeof key - 1)) continue;
        const char *d = p + sizeof key - 1;
        while (d < end && (*d == ' ' || *d == ':')) d++;
        const char *e = d;
        while (e < end && *e >= '0' && *e <= '9') e++;
        if (e > d && e - d < 19) {
            tl_buf_append(out, d, (size_t)(e - d));
            return;
        }
        break;
    }
    tl_buf_puts(out, "null");
}

/* The line with the values of skipped keys written as null, into out, so
 * Jansson builds only what is read: on the sample log's TaskEnd, JobStart
 * and StageSubmitted lines a third of their bytes. false when the line is
 * cut short (then it is parsed as it is, and judged). */
static bool skim(const char *p, size_t n, bool want_properties, struct tl_buf *out)
{
    const char *end = p + n, *from = p;
    out->len = 0;
    while (p < end) {
        const char *q = tl_find2(p, end, '"', '"');
        if (q == end) break;
        const char *e = string_end(q, end);
        if (!e) return false;
        const char *c = e;
        while (c < end && *c == ' ') c++;
        size_t klen = (size_t)(e - 1 - (q + 1));
        bool rdds = klen == 8 && !memcmp(q + 1, "RDD Info", 8);
        if (c < end && *c == ':' && (rdds || skipped_key(q + 1, klen, want_properties))) {
            const char *v = value_end(c + 1, end);
            if (!v) return false;
            tl_buf_append(out, from, (size_t)(c + 1 - from));
            if (rdds) first_rdd_id(c + 1, v, out);
            else tl_buf_puts(out, "null");
            from = p = v;
            continue;
        }
        p = e;
    }
    tl_buf_append(out, from, (size_t)(end - from));
    return !out->oom;
}

static void line(struct spark_state *st, const char *p, size_t n)
{
    st->stats.lines++;
    while (n && (p[n - 1] == '\r' || p[n - 1] == ' ')) n--;
    if (!n) return;
    if (unused_event(p, n)) {
        st->counters[SC_OTHER_EVENTS]++;
        return;
    }
    if (skim(p, n, st->by_description, &st->skimmed)) {
        p = st->skimmed.data;
        n = st->skimmed.len;
    }
    json_error_t e;
    json_t *ev = json_loadb(p, n, 0, &e);
    /* out of memory is not the input's fault: Jansson says so by its code,
     * or (where it ran out before it could) with no text at all */
    if (!ev && (json_error_code(&e) == json_error_out_of_memory || !e.text[0])) {
        st->nomem = true;
        return reject(st, TL_REJ_LIMIT, "out of memory");
    }
    const char *type = json_string_value(json_object_get(ev, "Event"));
    if (!ev || !type) {
        json_decref(ev);
        return reject(st, TL_REJ_BAD_JSON, ev ? "an object without \"Event\"" : e.text);
    }
    if (!strcmp(type, "SparkListenerTaskEnd")) task_end(st, ev);
    else if (!strcmp(type, "SparkListenerStageSubmitted")) stage_submitted(st, ev);
    else if (!strcmp(type, "SparkListenerJobStart")) job_start(st, ev);
    else if (!strcmp(type, "SparkListenerStageExecutorMetrics")) stage_metrics(st, ev);
    else {
        st->counters[SC_OTHER_EVENTS]++;
        const char *app = !strcmp(type, "SparkListenerApplicationStart")
                              ? json_string_value(json_object_get(ev, "App ID")) : NULL;
        if (app) snprintf(st->workflow, sizeof st->workflow, "%s", app);
        double t;
        if (num(ev, "Timestamp", &t) && tl_epoch_plausible(t / 1e3) && (int64_t)t > st->last_ms)
            st->last_ms = (int64_t)t;
    }
    json_decref(ev);
}

static enum tl_err spark_feed(void *state, const char *buf, size_t len)
{
    struct spark_state *st = state;
    while (len) {
        const char *nl = memchr(buf, '\n', len);
        size_t take = nl ? (size_t)(nl - buf) : len;
        if (!st->skipping && st->partial.len + take > st->cfg.max_line) {
            st->skipping = true;
            st->partial.len = 0;
        }
        if (!st->skipping) tl_buf_append(&st->partial, buf, take);
        if (st->partial.oom) return TL_ERR_NOMEM;
        if (!nl) return TL_OK;
        if (st->skipping) {
            st->stats.lines++;
            reject(st, TL_REJ_LINE_TOO_LONG, "over max_line");
            st->skipping = false;
        } else {
            line(st, st->partial.data, st->partial.len);
        }
        st->partial.len = 0;
        buf = nl + 1;
        len -= take + 1;
    }
    return TL_OK;
}

static enum tl_err spark_finish(void *state)
{
    struct spark_state *st = state;
    if (st->partial.len) { /* a last line without newline: an in-progress log's half-written event */
        json_t *ev = json_loadb(st->partial.data, st->partial.len, 0, NULL);
        if (ev) line(st, st->partial.data, st->partial.len);
        else {
            st->stats.lines++;
            reject(st, TL_REJ_TRUNCATED, "the last line is an event cut short");
        }
        json_decref(ev);
        st->partial.len = 0;
    }
    return st->nomem ? TL_ERR_NOMEM : TL_OK;
}

/* ---------------------------------------------------------------- checkpoints */

#define SPARK_SAVE_MAGIC "TLS1"

static void put_map_names(struct tl_buf *b, const struct spark_state *st, const struct tl_map64 *m)
{
    tl_put_varint(b, m->n);
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key == TL_MAP64_EMPTY) continue;
        tl_put_varint(b, m->slots[i].key);
        tl_put_str(b, tl_intern_str(st->names, (int32_t)m->slots[i].val));
    }
}

static bool get_map_names(const uint8_t **p, const uint8_t *end, struct spark_state *st, struct tl_map64 *m)
{
    uint64_t n, k;
    if (!tl_get_varint(p, end, &n) || n > (uint64_t)(end - *p)) return false;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        if (!tl_get_varint(p, end, &k) || k == TL_MAP64_EMPTY || !tl_get_str(p, end, 1 << 20, &s, &len)) return false;
        int32_t id = tl_intern(st->names, s, len);
        if (id < 0) return false;
        tl_map64_put(m, k, (uint64_t)id);
    }
    return true;
}

static enum tl_err spark_save(const void *state, struct tl_buf *b)
{
    const struct spark_state *st = state;
    tl_buf_append(b, SPARK_SAVE_MAGIC, 4);
    tl_parse_stats_put(b, &st->stats);
    tl_counters_put(b, st->counters, SC_COUNT);
    tl_put_varint(b, (uint64_t)st->last_ms);
    tl_put_str(b, st->workflow);
    tl_put_u8(b, st->skipping);
    tl_put_varint(b, st->partial.len);
    tl_buf_append(b, st->partial.data, st->partial.len);
    put_map_names(b, st, &st->stage_name);
    put_map_names(b, st, &st->stage_desc);
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

static enum tl_err spark_restore(void *state, const uint8_t *p, size_t len)
{
    struct spark_state *st = state;
    const uint8_t *end = p + len;
    uint64_t n, last;
    uint8_t skipping;
    const char *wf;
    size_t wflen;
    if (len < 4 || memcmp(p, SPARK_SAVE_MAGIC, 4)) return TL_ERR_CORRUPT;
    p += 4;
    if (!tl_parse_stats_get(&p, end, &st->stats) || !tl_counters_get(&p, end, st->counters, SC_COUNT))
        return TL_ERR_CORRUPT;
    if (!tl_get_varint(&p, end, &last) || !tl_get_str(&p, end, sizeof st->workflow - 1, &wf, &wflen) ||
        !tl_get_u8(&p, end, &skipping) || !tl_get_varint(&p, end, &n) || n > (uint64_t)(end - p) ||
        n > st->cfg.max_line)
        return TL_ERR_CORRUPT;
    st->last_ms = (int64_t)last;
    memcpy(st->workflow, wf, wflen);
    st->workflow[wflen] = '\0';
    st->skipping = skipping & 1;
    st->partial.len = 0;
    tl_buf_append(&st->partial, p, (size_t)n);
    p += n;
    if (!get_map_names(&p, end, st, &st->stage_name) || !get_map_names(&p, end, st, &st->stage_desc) || p != end)
        return TL_ERR_CORRUPT;
    return st->partial.oom ? TL_ERR_NOMEM : TL_OK;
}

/* ---------------------------------------------------------------- plumbing */

static int spark_probe(const char *buf, size_t len)
{
    size_t n = len < 4096 ? len : 4096;
    return n > 10 && buf[0] == '{' && memmem(buf, n, "\"Event\":\"SparkListener", 22) ? 95 : 0;
}

static void spark_set_name(void *state, const char *name)
{
    struct spark_state *st = state;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (base && *base && strcmp(base, "-") && !strcmp(st->workflow, "spark"))
        snprintf(st->workflow, sizeof st->workflow, "%.*s",
                 strstr(base, ".inprogress") ? (int)(strstr(base, ".inprogress") - base) : (int)strlen(base), base);
}

static enum tl_err spark_validate(const void *config, const char **key, char *err, size_t errcap)
{
    const char *category = ((const struct spark_config *)config)->category;
    if (!strcmp(category, "stage") || !strcmp(category, "description")) return TL_OK;
    *key = "category";
    snprintf(err, errcap, "spark.category is stage or description, not '%s'", category);
    return TL_ERR_USAGE;
}

static enum tl_err spark_open(void **state, const void *config, const struct tl_emit *emit, char *err, size_t errcap)
{
    struct spark_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct spark_config *)config;
    st->by_description = !strcmp(st->cfg.category, "description");
    st->emit = *emit;
    st->names = tl_intern_new(64u << 20);
    snprintf(st->workflow, sizeof st->workflow, "spark");
    if (!st->names) {
        free(st);
        return TL_ERR_NOMEM;
    }
    *state = st;
    return TL_OK;
}

static void spark_close(void *state)
{
    struct spark_state *st = state;
    if (!st) return;
    tl_buf_free(&st->partial);
    tl_buf_free(&st->skimmed);
    tl_intern_free(st->names);
    tl_map64_free(&st->stage_name);
    tl_map64_free(&st->stage_desc);
    tl_map64_free(&st->stage_parents);
    tl_map64_free(&st->stage_last);
    tl_map64_free(&st->stage_rdd);
    tl_map64_free(&st->rdd_stage);
    tl_buf_free(&st->parents);
    tl_buf_free(&st->depends);
    free(st->last);
    free(st);
}

static const struct tl_parse_stats *spark_stats(const void *state)
{
    return &((const struct spark_state *)state)->stats;
}

static size_t spark_counters(const void *state, struct tl_counter *out, size_t max)
{
    return tl_counters_fill(out, max, counter_names, ((const struct spark_state *)state)->counters, SC_COUNT);
}

/* A rolling event log (spark.eventLog.rolling.enabled) is a directory
 * eventlog_v2_<app>/ of parts events_N_<app>[.codec], read in the order of
 * N (events_10 after events_9) as one stream: a later part's tasks name
 * stages an earlier part submitted. appstatus_ and the rest are left. */
static bool spark_dir_whole(const char *dirname)
{
    const char *b = strrchr(dirname, '/');
    b = b ? b + 1 : dirname;
    return !strncmp(b, "eventlog_v2_", 12);
}

/* The index N of a part `events_N_<app>[.codec]`, or 0 for any other name. */
static unsigned long spark_dir_part(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (strncmp(b, "events_", 7)) return 0;
    char *end;
    unsigned long n = strtoul(b + 7, &end, 10);
    return *end == '_' ? n : 0;
}

const struct tl_parser tl_parser_spark = {
    .name = "spark",
    .help = "Apache Spark event logs (JSON lines): task attempts per stage, executor metrics",
    .probe = spark_probe,
    .config_size = sizeof(struct spark_config),
    .options = spark_options,
    .validate = spark_validate,
    .open = spark_open,
    .feed = spark_feed,
    .finish = spark_finish,
    .close = spark_close,
    .stats = spark_stats,
    .counters = spark_counters,
    .save = spark_save,
    .restore = spark_restore,
    .set_name = spark_set_name,
    .dir_whole = spark_dir_whole,
    .dir_part = spark_dir_part,
    .messages = TL_MSG_LINES,
};
