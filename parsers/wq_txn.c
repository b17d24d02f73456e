/* Work Queue / TaskVine transaction log parser.
 *
 * The format (shared/formats/wq-transaction-log.md) is one event per line:
 *
 *     <µs since epoch> <manager pid> <BODY>
 *
 * written by every cctools release since 6.0 (WQ) and 7.5 (TaskVine), with
 * a dozen layouts across versions. This parser follows every one of them.
 *
 * Design
 * ------
 * Hand-written scanning, not PCRE2 + Jansson: the bodies are a few
 * space-separated words followed by flat JSON objects of the fixed shape
 * {"key":[value,"unit"],...}. A cursor that jumps between spaces (16 bytes
 * per compare, parsers/jscan.h) plus a single-pass scanner for that JSON
 * shape touches each byte about once and allocates nothing; a regex plus a
 * JSON DOM per line costs several allocations and passes per line
 * (bench/RESULTS.md has the figures).
 *
 * Words are found by skipping runs of spaces, never by splitting on exactly
 * one space: the C format strings write double and trailing spaces. Lines
 * whose middle is a user string (WAITING/READY and CATEGORY: the category
 * name) are read from the right, so names with spaces survive.
 *
 * State
 * -----
 * The only per-task state is the table of open tasks, keyed by (run, task
 * id): task ids restart at 1 in each manager run, and WQ appends runs to one
 * file. A record is emitted per finished attempt, when its fate is known:
 * at DONE (final), or when the task goes back to the queue (a retry: the
 * RETRIEVED attempt, or a RUNNING attempt whose worker was lost, which is
 * reported with result REQUEUED). finish() reports what is still open.
 * Runs, worker addresses and names are interned and bounded by limits.
 */
#include "parser.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "bytes.h"
#include "intern.h"
#include "jscan.h"
#include "map64.h"
#include "numfmt.h"

/* ---------------------------------------------------------------- config */

#define WQ_MAX_TIMESTAMP_US 9000000000000000LL

struct wq_config {
    size_t max_line;
    long long max_open_tasks;
    size_t max_names;
    bool close_superseded;
};

static const struct tl_option wq_options[] = {
    {"max_line", TL_OPT_SIZE, "1M", "longest line accepted; longer lines are rejected",
     offsetof(struct wq_config, max_line)},
    {"max_open_tasks", TL_OPT_INT, "10000000", "open tasks tracked at once (memory bound)",
     offsetof(struct wq_config, max_open_tasks)},
    {"max_names", TL_OPT_SIZE, "64M", "bytes of distinct names (categories, workers, hosts)",
     offsetof(struct wq_config, max_names)},
    {"close_superseded", TL_OPT_BOOL, "true",
     "a run without MANAGER END that wrote nothing between two later MANAGER STARTs of the "
     "input is taken for crashed: its unfinished tasks are reported and freed then, not at "
     "the end of input (memory stays flat over restarts); false keeps them to the end",
     offsetof(struct wq_config, close_superseded)},
    {0},
};

/* ---------------------------------------------------------------- counters */

#define WQ_COUNTERS(X)                                                                             \
    X(HEADER, "header")                                                                            \
    X(BLANK, "blank")                                                                              \
    X(MANAGER_START, "MANAGER START")                                                              \
    X(MANAGER_END, "MANAGER END")                                                                  \
    X(TASK_WAITING, "TASK WAITING")                                                                \
    X(TASK_READY, "TASK READY")                                                                    \
    X(TASK_RUNNING, "TASK RUNNING")                                                                \
    X(TASK_WAITING_RETRIEVAL, "TASK WAITING_RETRIEVAL")                                            \
    X(TASK_RETRIEVED, "TASK RETRIEVED")                                                            \
    X(TASK_DONE, "TASK DONE")                                                                      \
    X(TASK_CANCELED, "TASK CANCELED")                                                              \
    X(TASK_OTHER, "TASK other state")                                                              \
    X(WORKER_CONNECTION, "WORKER CONNECTION")                                                      \
    X(WORKER_DISCONNECTION, "WORKER DISCONNECTION")                                                \
    X(WORKER_RESOURCES, "WORKER RESOURCES")                                                        \
    X(WORKER_TRANSFER, "WORKER TRANSFER")                                                          \
    X(WORKER_CACHE_UPDATE, "WORKER CACHE_UPDATE")                                                  \
    X(TRANSFER_INPUT, "TRANSFER INPUT")                                                            \
    X(TRANSFER_OUTPUT, "TRANSFER OUTPUT")                                                          \
    X(CATEGORY_MAX, "CATEGORY MAX")                                                                \
    X(CATEGORY_MIN, "CATEGORY MIN")                                                                \
    X(CATEGORY_FIRST, "CATEGORY FIRST")                                                            \
    X(LIBRARY, "LIBRARY")                                                                          \
    X(APPLICATION, "APPLICATION")                                                              \
    X(RUN_SUPERSEDED, "runs ended by later MANAGER STARTs")

enum wq_counter {
#define WQ_C_ENUM(e, n) WQC_##e,
    WQ_COUNTERS(WQ_C_ENUM)
#undef WQ_C_ENUM
        WQC_COUNT
};

static const char *const wq_counter_names[WQC_COUNT] = {
#define WQ_C_NAME(e, n) n,
    WQ_COUNTERS(WQ_C_NAME)
#undef WQ_C_NAME
};

/* ---------------------------------------------------------------- state */

enum task_state {
    ST_WAITING,
    ST_RUNNING,
    ST_WAITING_RETRIEVAL,
    ST_RETRIEVED,
};

static const char *const task_state_names[] = {"WAITING", "RUNNING", "WAITING_RETRIEVAL",
                                               "RETRIEVED"};

/* Resource boxes (requested, allocated, limits) hold these four. */
enum { BOX_CORES, BOX_MEMORY, BOX_DISK, BOX_GPUS, BOX_WALL, BOX_N };

struct box {
    uint8_t present;
    double v[BOX_N];
};

/* Measured resources of a RETRIEVED attempt waiting for its DONE line. Kept
 * in a pool, so retries and deferrals allocate nothing in steady state. */
struct measured {
    uint64_t present;
    double v[TL_M_COUNT];
    double worker_start, worker_end; /* TaskVine time_worker_*, epoch s; 0 = absent */
    struct box limits;
    uint32_t next_free;
};

struct task {
    uint32_t run;
    int32_t category; /* interned name, -1 unknown */
    int32_t worker;   /* interned worker id (or address when the id is unknown) */
    int32_t host;     /* interned host */
    int32_t result;   /* interned result of the RETRIEVED line, -1 none */
    int64_t id;
    int64_t t_waiting, t_running, t_wret, t_retrieved; /* µs, 0 = not seen */
    int32_t attempt;
    int32_t exit_code;
    uint32_t measured; /* index + 1 into the measured pool, 0 = none */
    uint8_t state;
    bool has_exit;
    struct box req, alloc;
    uint32_t next_free; /* free-list link */
};

struct run {
    int64_t pid;
    int64_t start_us;
    int32_t workflow; /* interned "pid@start" */
    struct tl_map64 addr_to_worker; /* interned addr -> interned worker id */
    struct tl_map64 worker_to_addr; /* interned worker id -> interned addr */
    /* the workflow's state, for the `workflow` records */
    int64_t by_state[4];            /* open tasks per task_state */
    uint64_t done, failed;          /* final results: SUCCESS / anything else */
    int64_t workers;
    double cores;
    struct tl_map64 worker_cores;   /* interned worker id -> cores (double bits) */
    int64_t last_emit_sec;          /* workflow records: at most one per second */
    bool ended;                     /* MANAGER END seen, or superseded (below) */
    bool quiet;                     /* no line since the last MANAGER START of another run */
};

/* The first value of a line that no measurement can have, and how many. */
struct bad_value {
    unsigned n;
    int key; /* enum jkey */
    double v;
};

struct wq_state {
    struct wq_config cfg;
    struct tl_emit emit;
    struct tl_parse_stats stats;
    uint64_t counters[WQC_COUNT];

    struct tl_buf partial; /* bytes of a line split across feed() calls */
    bool skipping;         /* inside a line longer than max_line */
    bool chunk_has_nul;
    /* The last line's manager pid as written, with the space after it
     * (pid_n digits, 7-15): the next line's pid is compared, not converted. */
    char pid_text[16];
    size_t pid_n;
    int64_t pid_val;
    /* The last line's first eight bytes and, when they are digits, their value. */
    uint64_t ts_word, ts_high;
    bool ts_known;

    bool family_ab; /* header says WQ 6.0-7.0.3: one JSON on RETRIEVED = limits */

    struct tl_intern *names;
    struct run *runs;
    size_t nruns, cap_runs;
    struct tl_map64 pid_to_run; /* pid -> latest run index */
    int64_t last_pid;           /* one-entry cache in front of pid_to_run */
    size_t last_run;            /* index + 1; 0 = empty */
    struct tl_map64 host_of;    /* interned "host:port" -> interned host */
    int32_t last_result;        /* one-entry cache for result names */

    struct task *tasks;
    size_t ntasks_alloc, cap_tasks;
    uint32_t task_free; /* index + 1, 0 = none */
    struct tl_map64 open; /* (run << 32 | task id) -> task index */

    struct measured *meas;
    size_t nmeas_alloc, cap_meas;
    uint32_t meas_free;

    /* Tasks that just finished: cctools 9.x writes CANCELED twice for one
     * cancel, and a repeated terminal line must not become a second task. */
    uint64_t recent_closed[64];
    unsigned recent_next;

    uint32_t line_run;       /* run index + 1 of the line being parsed, 0 = none */
    int64_t line_ts;
    struct tl_record rec;    /* scratch, reused for every emitted record */
    struct measured scratch; /* JSON of the line being parsed */
    /* The last resource text a RETRIEVED or DONE line carried, and what
     * scanning it gave (before the WQ 6.x limits move): cctools writes the
     * same text on a task's RETRIEVED and the DONE after it. The scan is a
     * function of the bytes alone, so equal bytes reuse it. */
    struct measured memo;
    int memo_njson;
    struct bad_value memo_bad;
    size_t memo_len; /* 0: none */
    char memo_text[2048];
};

/* ---------------------------------------------------------------- cursor */

struct span {
    const char *p;
    size_t n;
};

static inline bool span_eq(struct span s, const char *lit, size_t n)
{
    return s.n == n && memcmp(s.p, lit, n) == 0;
}
#define SPAN_IS(s, lit) span_eq((s), lit, sizeof(lit) - 1)

/* Next space-separated word in [*pos, end); false at end of line. */
static inline bool next_word(const char **pos, const char *end, struct span *w)
{
    const char *p = *pos;
    while (p < end && *p == ' ') p++;
    if (p >= end) return false;
    const char *q = tl_find_space(p, end);
    w->p = p;
    w->n = (size_t)(q - p);
    *pos = q;
    return true;
}

/* Last word in [start, *end); moves *end before it. */
static inline bool last_word(const char *start, const char **end, struct span *w)
{
    const char *e = *end;
    while (e > start && e[-1] == ' ') e--;
    if (e <= start) return false;
    const char *b = memrchr(start, ' ', (size_t)(e - start));
    b = b ? b + 1 : start;
    w->p = b;
    w->n = (size_t)(e - b);
    *end = b;
    return true;
}

static inline const char *skip_spaces(const char *p, const char *end)
{
    while (p < end && *p == ' ') p++;
    return p;
}

static bool span_i64(struct span s, int64_t *out)
{
    return tl_parse_i64(s.p, s.p + s.n, out);
}

/* The number that opens a line (timestamp: 16 digits; manager pid: up to
 * 11) read eight digits at a time, with the space after it found on the
 * way: the end of the digits, or NULL unless 1-18 digits end at a space or
 * at end (signs, leading spaces, longer runs: next_word and span_i64). */
static inline const char *lead_int(const char *p, const char *end, int64_t *out)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    const char *q = tl_digits_value(p, end, &v);
    if (q == p || q - p > 18 || (q < end && *q != ' ')) return NULL;
    *out = (int64_t)v;
    return q;
#else
    const char *s = p;
    uint64_t v = 0;
    for (unsigned d; p < end && (d = (unsigned)(*p - '0')) <= 9; p++) v = v * 10 + d;
    if (p == s || p - s > 18 || (p < end && *p != ' ')) return NULL;
    *out = (int64_t)v;
    return p;
#endif
}

/* The timestamp that opens a line: its first eight digits, which the
 * lines of a second or more share, compared as one word with the last
 * line's and converted only when they differ; the rest as lead_int. */
static inline const char *lead_ts(struct wq_state *st, const char *p, const char *end, int64_t *ts)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (end - p >= 8) {
        uint64_t w, hi;
        memcpy(&w, p, 8);
        if (w == st->ts_word && st->ts_known) {
            hi = st->ts_high;
        } else {
            if (tl_swar_nondigits(w)) return lead_int(p, end, ts);
            hi = tl_swar_value8(w - 0x3030303030303030ULL);
            st->ts_word = w;
            st->ts_high = hi;
            st->ts_known = true;
        }
        uint64_t v;
        const char *q = tl_digits_value_from(p + 8, end, hi, &v);
        if (q - p > 18 || (q < end && *q != ' ')) return NULL;
        *ts = (int64_t)v;
        return q;
    }
#endif
    return lead_int(p, end, ts);
}

/* The manager pid after the timestamp: the one of the line before when
 * its digits and the space after them are the same bytes (two overlapping
 * words), else lead_int's, remembered for the next line. */
static inline const char *lead_pid(struct wq_state *st, const char *p, const char *end, int64_t *pid)
{
    size_t n = st->pid_n;
    if (n && (size_t)(end - p) > n) {
        uint64_t a, b, x, y;
        memcpy(&a, p, 8);
        memcpy(&x, st->pid_text, 8);
        memcpy(&b, p + n + 1 - 8, 8);
        memcpy(&y, st->pid_text + n + 1 - 8, 8);
        if (a == x && b == y) {
            *pid = st->pid_val;
            return p + n;
        }
    }
    const char *q = lead_int(p, end, pid);
    if (q && q < end && q - p >= 7 && q - p <= 15) { /* *q is the space */
        st->pid_n = (size_t)(q - p);
        memcpy(st->pid_text, p, st->pid_n + 1);
        st->pid_val = *pid;
    }
    return q;
}

/* ---------------------------------------------------------------- JSON */

/* What a resources JSON object fills. */
enum json_target { J_MEASURED, J_BOX, J_IGNORE };

enum jkey {
    K_NONE = -1,
    K_WALL_TIME, K_CPU_TIME, K_MEMORY, K_VIRTUAL_MEMORY, K_SWAP_MEMORY, K_DISK,
    K_BYTES_READ, K_BYTES_WRITTEN, K_BYTES_RECEIVED, K_BYTES_SENT, K_BANDWIDTH,
    K_GPUS, K_CORES, K_CORES_AVG, K_MACHINE_CPUS, K_CONTEXT_SWITCHES,
    K_MAX_CONCURRENT_PROCESSES, K_TOTAL_PROCESSES, K_TOTAL_FILES,
    K_INPUT_SIZE, K_OUTPUT_SIZE, K_INPUT_TIME, K_OUTPUT_TIME,
    K_WORKER_START, K_WORKER_END,
};

/* Keys are few and short: dispatch on the length, then memcmp against the
 * two or three names of that length. */
static enum jkey json_key_lookup(const char *k, size_t n)
{
#define KEY(name, key)                                                                             \
    if (!memcmp(k, name, n)) return key
    switch (n) {
    case 3: KEY("end", K_NONE); break;
    case 4:
        KEY("disk", K_DISK);
        KEY("gpus", K_GPUS);
        break;
    case 5: KEY("cores", K_CORES); break;
    case 6: KEY("memory", K_MEMORY); break;
    case 8: KEY("cpu_time", K_CPU_TIME); break;
    case 9:
        KEY("wall_time", K_WALL_TIME);
        KEY("bandwidth", K_BANDWIDTH);
        KEY("cores_avg", K_CORES_AVG);
        break;
    case 10:
        KEY("bytes_read", K_BYTES_READ);
        KEY("bytes_sent", K_BYTES_SENT);
        break;
    case 11:
        KEY("swap_memory", K_SWAP_MEMORY);
        KEY("total_files", K_TOTAL_FILES);
        break;
    case 12: KEY("machine_cpus", K_MACHINE_CPUS); break;
    case 13:
        KEY("bytes_written", K_BYTES_WRITTEN);
        KEY("wq_input_size", K_INPUT_SIZE);
        KEY("wq_input_time", K_INPUT_TIME);
        break;
    case 14:
        KEY("virtual_memory", K_VIRTUAL_MEMORY);
        KEY("bytes_received", K_BYTES_RECEIVED);
        KEY("wq_output_size", K_OUTPUT_SIZE);
        KEY("wq_output_time", K_OUTPUT_TIME);
        KEY("size_input_mgr", K_INPUT_SIZE);
        KEY("time_input_mgr", K_INPUT_TIME);
        break;
    case 15:
        KEY("total_processes", K_TOTAL_PROCESSES);
        KEY("vine_input_size", K_INPUT_SIZE);
        KEY("vine_input_time", K_INPUT_TIME);
        KEY("size_output_mgr", K_OUTPUT_SIZE);
        KEY("time_output_mgr", K_OUTPUT_TIME);
        KEY("time_worker_end", K_WORKER_END);
        break;
    case 16:
        KEY("context_switches", K_CONTEXT_SWITCHES);
        KEY("vine_output_size", K_OUTPUT_SIZE);
        KEY("vine_output_time", K_OUTPUT_TIME);
        break;
    case 17: KEY("time_worker_start", K_WORKER_START); break;
    case 24: KEY("max_concurrent_processes", K_MAX_CONCURRENT_PROCESSES); break;
    }
    return K_NONE;
#undef KEY
}

/* A size that cctools wrote in MiB (size / 2^20, printed to 6 decimals or
 * 16 digits), as whole bytes: the size was a byte count, and the product
 * carries only the decimal's rounding (0.01606845855712891 MiB is 16849
 * bytes, not 16849.000000000004). Six decimals leave half a millionth of a
 * MiB, so the nearest integer is the byte count within one. */
static inline double whole_bytes(double x)
{
    if (!(x < 4503599627370496.0 && x > -4503599627370496.0)) return x; /* 2^52 on: whole */
    double t = (double)(int64_t)x, d = x - t; /* both exact */
    return d >= 0.5 ? t + 1 : d <= -0.5 ? t - 1 : t;
}

static inline double mib_bytes(double mib)
{
    return whole_bytes(mib * 1048576.0);
}

/* Unit string -> factor to canonical (bytes, seconds). Sizes without a unit
 * are cctools' MB, times without one seconds. */
static double unit_factor(enum jkey key, const char *u, size_t n)
{
    if (n == 2 && u[0] == 'M' && u[1] == 'B') return 1048576.0;
    if (n == 1 && u[0] == 's') return 1.0;
    if (n == 2 && u[0] == 'u' && u[1] == 's') return 1e-6;
    if (n == 2 && u[0] == 'G' && u[1] == 'B') return 1073741824.0;
    if (n == 2 && (u[0] == 'K' || u[0] == 'k') && u[1] == 'B') return 1024.0;
    if (n == 1 && u[0] == 'B') return 1.0;
    if (n == 2 && u[0] == 'm' && u[1] == 's') return 1e-3;
    if (n == 0) {
        switch (key) {
        case K_MEMORY: case K_VIRTUAL_MEMORY: case K_SWAP_MEMORY: case K_DISK:
        case K_BYTES_READ: case K_BYTES_WRITTEN: case K_BYTES_RECEIVED: case K_BYTES_SENT:
        case K_INPUT_SIZE: case K_OUTPUT_SIZE:
            return 1048576.0;
        default:
            return 1.0;
        }
    }
    return 1.0;
}

/* The record metric of each key (worker start/end are times of day, kept apart). */
static const int8_t to_metric[] = {
    [K_WALL_TIME] = TL_M_WALL_TIME_S,
    [K_CPU_TIME] = TL_M_CPU_TIME_S,
    [K_MEMORY] = TL_M_MAX_RSS_BYTES,
    [K_VIRTUAL_MEMORY] = TL_M_VIRTUAL_MEMORY_BYTES,
    [K_SWAP_MEMORY] = TL_M_SWAP_BYTES,
    [K_DISK] = TL_M_DISK_BYTES,
    [K_BYTES_READ] = TL_M_BYTES_READ,
    [K_BYTES_WRITTEN] = TL_M_BYTES_WRITTEN,
    [K_BYTES_RECEIVED] = TL_M_BYTES_RECEIVED,
    [K_BYTES_SENT] = TL_M_BYTES_SENT,
    [K_BANDWIDTH] = TL_M_BANDWIDTH_MBPS,
    [K_GPUS] = TL_M_GPUS,
    [K_CORES] = TL_M_CORES,
    [K_CORES_AVG] = TL_M_CORES_AVG,
    [K_MACHINE_CPUS] = TL_M_MACHINE_CPUS,
    [K_CONTEXT_SWITCHES] = TL_M_CONTEXT_SWITCHES,
    [K_MAX_CONCURRENT_PROCESSES] = TL_M_MAX_CONCURRENT_PROCESSES,
    [K_TOTAL_PROCESSES] = TL_M_TOTAL_PROCESSES,
    [K_TOTAL_FILES] = TL_M_TOTAL_FILES,
    [K_INPUT_SIZE] = TL_M_INPUT_BYTES,
    [K_OUTPUT_SIZE] = TL_M_OUTPUT_BYTES,
    [K_INPUT_TIME] = TL_M_INPUT_TIME_S,
    [K_OUTPUT_TIME] = TL_M_OUTPUT_TIME_S,
    [K_WORKER_START] = -1,
    [K_WORKER_END] = -1,
};

static void store_measured(struct measured *m, enum jkey key, double v)
{
    if (key == K_WORKER_START) {
        m->worker_start = v;
        return;
    }
    if (key == K_WORKER_END) {
        m->worker_end = v;
        return;
    }
    int metric = to_metric[key];
    m->v[metric] = v;
    m->present |= (uint64_t)1 << metric;
}

static void store_box(struct box *b, enum jkey key, double v)
{
    int i;
    switch (key) {
    case K_CORES: i = BOX_CORES; break;
    case K_MEMORY: i = BOX_MEMORY; break;
    case K_DISK: i = BOX_DISK; break;
    case K_GPUS: i = BOX_GPUS; break;
    case K_WALL_TIME: i = BOX_WALL; break;
    default: return;
    }
    b->v[i] = v;
    b->present |= (uint8_t)(1u << i);
}

/* Stores a value read for key k unless no measurement can have it (negative,
 * past the double range): that one goes to *bad, and its line is rejected.
 * Checked here, once per value read, rather than per value of every record
 * emitted (callgrind, Colmena log, `lines`: +0.3 % against +1.8 %). */
static inline void store_value(enum json_target target, struct measured *m, struct box *b,
                               enum jkey k, double v, struct bad_value *bad)
{
    if (__builtin_expect(!tl_value_possible(v), 0)) {
        if (!bad->n++) {
            bad->key = k;
            bad->v = v;
        }
    } else if (target == J_MEASURED) {
        store_measured(m, k, v);
    } else {
        store_box(b, k, v);
    }
}

/* Scans a JSON string starting at the opening quote; returns the position
 * after the closing quote, or NULL. Escapes are skipped, not decoded (keys
 * and units in rmsummary JSON never need decoding). */
static inline __attribute__((always_inline)) const char *json_string(const char *p, const char *end,
                                                                   struct span *s)
{
    const char *b = ++p; /* past the opening quote */
    for (;;) {
        p = tl_find_quote_or_backslash(p, end);
        if (p >= end) return NULL;
        if (*p == '"') break;
        p += 2; /* backslash and the escaped byte */
    }
    s->p = b;
    s->n = (size_t)(p - b);
    return p + 1;
}

/* Steps over a number without converting it (values of keys we ignore). */
static const char *json_skip_number(const char *p, const char *end)
{
    const char *b = p;
    while (p < end && ((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == '.' ||
                       *p == 'e' || *p == 'E' || (*p >= 'a' && *p <= 'z')))
        p++;
    return p > b ? p : NULL;
}

/* Skips any JSON value (for keys we do not use), with a depth bound. */
static const char *json_skip(const char *p, const char *end, int depth)
{
    if (p >= end || depth > 32) return NULL;
    if (*p == '"') {
        struct span s;
        return json_string(p, end, &s);
    }
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = skip_spaces(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                if (p >= end || *p != '"') return NULL;
                struct span k;
                p = json_string(p, end, &k);
                if (!p) return NULL;
                p = skip_spaces(p, end);
                if (p >= end || *p != ':') return NULL;
                p = skip_spaces(p + 1, end);
            }
            p = json_skip(p, end, depth + 1);
            if (!p) return NULL;
            p = skip_spaces(p, end);
            if (p >= end) return NULL;
            if (*p == close) return p + 1;
            if (*p != ',') return NULL;
            p = skip_spaces(p + 1, end);
        }
    }
    if (end - p >= 4 && (!memcmp(p, "true", 4) || !memcmp(p, "null", 4))) return p + 4;
    if (end - p >= 5 && !memcmp(p, "false", 5)) return p + 5;
    return json_skip_number(p, end);
}

/* Whether the n (8-16) bytes at p are t's (t zero-padded to 16 bytes); 16
 * bytes must be readable at p. Two word compares, no loop. */
static inline bool bytes16_are(const char *p, const char *t, unsigned n)
{
    uint64_t a, b, x, y;
    memcpy(&a, p, 8);
    memcpy(&b, p + 8, 8);
    memcpy(&x, t, 8);
    memcpy(&y, t + 8, 8);
    uint64_t mb = n >= 16 ? ~0ULL : n <= 8 ? 0 : (1ULL << (8 * (n - 8))) - 1;
    return a == x && ((b ^ y) & mb) == 0;
}

/* The four members nearly every rmsummary, allocation and worker box
 * holds, as every cctools release spells them: key, bracket and unit
 * matched as whole words, so neither string is searched or looked up. */
static const struct common_member {
    char text[16]; /* "key":[ */
    char unit[16]; /* ,"unit"] */
    uint8_t n, un;
    enum jkey key;
    double factor;
} common_members[] = {
    {"\"cores\":[", ",\"cores\"]", 9, 9, K_CORES, 1.0},
    {"\"disk\":[", ",\"MB\"]", 8, 6, K_DISK, 1048576.0},
    {"\"memory\":[", ",\"MB\"]", 10, 6, K_MEMORY, 1048576.0},
    {"\"gpus\":[", ",\"gpus\"]", 8, 8, K_GPUS, 1.0},
};

/* Whether the c->un bytes at ne are c's unit (,"MB"] ...) and a ',' or
 * '}' follows: a word compare and at most one byte more. */
static inline bool unit_is(const char *ne, const char *end, const struct common_member *c)
{
    if (end - ne < 8 || end - ne < c->un + 1) return false;
    uint64_t a, x;
    memcpy(&a, ne, 8);
    memcpy(&x, c->unit, 8);
    uint64_t mask = c->un >= 8 ? ~0ULL : (1ULL << (8 * c->un)) - 1;
    if ((a ^ x) & mask || (c->un > 8 && ne[8] != c->unit[8])) return false;
    return ne[c->un] == ',' || ne[c->un] == '}';
}

/* Parses one rmsummary JSON object {"key":[value,"unit"],...} at p, storing
 * the known keys into m (J_MEASURED) or b (J_BOX). Returns the position after
 * the closing brace, or NULL when malformed. Impossible values are left out
 * and counted in *bad, for the caller to reject the line. */
static const char *scan_resources(const char *p, const char *end, enum json_target target,
                                  struct measured *m, struct box *b, struct bad_value *bad)
{
    if (p >= end || *p != '{') return NULL;
    p = skip_spaces(p + 1, end);
    if (p < end && *p == '}') return p + 1;
    for (;;) {
        /* cores, disk, memory, gpus first (see common_members) */
        if (end - p >= 16) {
            const struct common_member *c;
            switch (p[1]) {
            case 'c': c = &common_members[0]; break;
            case 'd': c = &common_members[1]; break;
            case 'm': c = &common_members[2]; break;
            case 'g': c = &common_members[3]; break;
            default: c = NULL;
            }
            double v;
            const char *ne;
            if (c && bytes16_are(p, c->text, c->n) && (ne = tl_scan_decimal(p + c->n, end, &v)) &&
                unit_is(ne, end, c)) {
                if (target != J_IGNORE) {
                    v = c->factor >= 1024.0 ? whole_bytes(v * c->factor) : v * c->factor;
                    store_value(target, m, b, c->key, v, bad);
                }
                if (ne[c->un] == '}') return ne + c->un + 1;
                p = skip_spaces(ne + c->un + 1, end);
                continue;
            }
        }
        /* The form every cctools release writes, "key":[number,"unit"]
         * with no spaces, straight through; anything else (spaces, a bare
         * number, an exponent, escapes, other values) from the member's
         * start in the general steps below, which accept the same. */
        if (p < end && *p == '"') {
            const char *ke = tl_find_quote_or_backslash(p + 1, end);
            if (end - ke > 3 && ke[0] == '"' && ke[1] == ':' && ke[2] == '[') {
                size_t kn = (size_t)(ke - p - 1);
                enum jkey k = kn && target != J_IGNORE ? json_key_lookup(p + 1, kn) : K_NONE;
                double v = 0;
                const char *ne;
                if (k == K_NONE) { /* not stored: digits[.digits] stepped over (the general
                                    * steps below skip any number of such a key) */
                    ne = tl_skip_digits(ke + 3, end);
                    if (ne == ke + 3) ne = NULL;
                    else if (ne < end && *ne == '.') ne = tl_skip_digits(ne + 1, end);
                } else {
                    ne = tl_scan_decimal(ke + 3, end, &v);
                }
                if (ne && end - ne > 2 && ne[0] == ',' && ne[1] == '"') {
                    const char *ub = ne + 2, *ue = tl_find_quote_or_backslash(ub, end);
                    if (end - ue > 2 && ue[0] == '"' && ue[1] == ']' && (ue[2] == ',' || ue[2] == '}')) {
                        if (k != K_NONE) {
                            double f = unit_factor(k, ub, (size_t)(ue - ub));
                            v = f >= 1024.0 ? whole_bytes(v * f) : v * f;
                            store_value(target, m, b, k, v, bad);
                        }
                        if (ue[2] == '}') return ue + 3;
                        p = skip_spaces(ue + 3, end);
                        continue;
                    }
                }
            }
        }
        if (p >= end || *p != '"') return NULL;
        struct span key;
        p = json_string(p, end, &key);
        if (!p) return NULL;
        p = skip_spaces(p, end);
        if (p >= end || *p != ':') return NULL;
        p = skip_spaces(p + 1, end);
        if (p >= end) return NULL;
        enum jkey k = key.n ? json_key_lookup(key.p, key.n) : K_NONE;
        if (k == K_NONE || target == J_IGNORE) {
            p = json_skip(p, end, 1);
            if (!p) return NULL;
            goto next;
        }
        double v = 0;
        bool have = false;
        struct span unit = {"", 0};
        if (*p == '[') {
            /* [value, "unit"] -- the form every release writes */
            p = skip_spaces(p + 1, end);
            if (p < end && (*p == '-' || *p == 'n' || *p == 'i' || (*p >= '0' && *p <= '9'))) {
                p = tl_scan_double(p, end, &v);
                if (!p) return NULL;
                have = true;
                p = skip_spaces(p, end);
                if (p < end && *p == ',') {
                    p = skip_spaces(p + 1, end);
                    if (p >= end || *p != '"') return NULL;
                    p = json_string(p, end, &unit);
                    if (!p) return NULL;
                    p = skip_spaces(p, end);
                }
                if (p >= end || *p != ']') return NULL;
                p++;
            } else {
                p = json_skip(p - 1, end, 1); /* back to '[' */
                if (!p) return NULL;
            }
        } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            p = tl_scan_double(p, end, &v);
            if (!p) return NULL;
            have = true;
        } else {
            p = json_skip(p, end, 1);
            if (!p) return NULL;
        }
        if (have) { /* nan, inf, negatives too: store_value sorts them out */
            double f = unit_factor(k, unit.p, unit.n);
            v = f >= 1024.0 ? whole_bytes(v * f) : v * f; /* KB, MB, GB: see mib_bytes */
            store_value(target, m, b, k, v, bad);
        }
    next:
        p = skip_spaces(p, end);
        if (p >= end) return NULL;
        if (*p == '}') return p + 1;
        if (*p != ',') return NULL;
        p = skip_spaces(p + 1, end);
    }
}

/* ---------------------------------------------------------------- helpers */

static void reject(struct wq_state *st, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, st->stats.lines, why, detail);
}

/* A record of a kind the consumer does not use: counted, not built. */
static inline bool skip_kind(struct wq_state *st, enum tl_record_kind k)
{
    if (tl_emit_wants(&st->emit, k)) return false;
    st->stats.records++;
    return true;
}

/* A line holding values no measurement has (negative, past the double
 * range): rejected, naming the first; what else it says is used. */
static void reject_bad_values(struct wq_state *st, const struct bad_value *bad)
{
    char num[TL_FMT_WIDE + 1], detail[128];
    tl_fmt_double_wide(num, bad->v);
    int metric = to_metric[bad->key];
    const char *name = metric >= 0 ? tl_metric_info[metric].name
                       : bad->key == K_WORKER_START ? "time_worker_start" : "time_worker_end";
    if (bad->n > 1) snprintf(detail, sizeof detail, "%s=%s and %u more", name, num, bad->n - 1);
    else snprintf(detail, sizeof detail, "%s=%s", name, num);
    reject(st, TL_REJ_BAD_VALUE, detail);
}

static void emit(struct wq_state *st, struct tl_record *r)
{
    r->line = st->stats.lines;
    r->source = "wq";
    st->stats.records++;
    st->emit.record(st->emit.ctx, r);
}

static int32_t intern_span(struct wq_state *st, struct span s)
{
    return tl_intern(st->names, s.p, s.n);
}

static const char *name_of(const struct wq_state *st, int32_t id)
{
    return id >= 0 ? tl_intern_str(st->names, id) : NULL;
}

static struct run *run_new(struct wq_state *st, int64_t pid, int64_t start_us)
{
    if (st->nruns == st->cap_runs) {
        size_t cap = st->cap_runs ? st->cap_runs * 2 : 4;
        struct run *r = realloc(st->runs, cap * sizeof *r);
        if (!r) return NULL;
        st->runs = r;
        st->cap_runs = cap;
    }
    char name[64];
    time_t secs = (time_t)(start_us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    int n = snprintf(name, sizeof name, "%lld@%04d-%02d-%02dT%02d:%02d:%02dZ", (long long)pid,
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec);
    int32_t wf = tl_intern(st->names, name, (size_t)n);
    if (wf < 0) return NULL;
    struct run *r = &st->runs[st->nruns];
    memset(r, 0, sizeof *r);
    r->pid = pid;
    r->start_us = start_us;
    r->workflow = wf;
    if (!tl_map64_put(&st->pid_to_run, (uint64_t)pid, st->nruns)) return NULL;
    st->nruns++;
    st->last_pid = pid;
    st->last_run = st->nruns;
    st->line_run = (uint32_t)st->nruns;
    st->line_ts = start_us;
    return r;
}

/* The run a line belongs to: the latest run of its pid, or a new one when
 * the log did not show this manager start (input joined mid-run). */
static struct run *run_for(struct wq_state *st, int64_t pid, int64_t ts)
{
    st->line_ts = ts;
    if (st->last_run && st->last_pid == pid) {
        st->line_run = (uint32_t)st->last_run;
        /* no need to clear `quiet`: it is set only at a START, which makes
         * the new run the last one, so a quiet run's next line comes here
         * through the lookup below */
        return &st->runs[st->last_run - 1];
    }
    uint64_t *idx = tl_map64_get(&st->pid_to_run, (uint64_t)pid);
    /* an index past the runs can only come from a damaged restored state
     * (fuzz_state found one that the restore's checks let through) */
    if (!idx || *idx >= st->nruns) return run_new(st, pid, ts);
    st->last_pid = pid;
    st->last_run = *idx + 1;
    st->line_run = (uint32_t)st->last_run;
    st->runs[*idx].quiet = false;
    return &st->runs[*idx];
}

/* Moves t to a new state, keeping its run's per-state counts. */
static void set_state(struct wq_state *st, struct task *t, enum task_state s)
{
    struct run *r = &st->runs[t->run];
    r->by_state[t->state]--;
    r->by_state[s]++;
    t->state = (uint8_t)s;
}

/* Host part of an interned "host:port" (memoized: RUNNING lines repeat it). */
static int32_t host_of_addr(struct wq_state *st, int32_t addr)
{
    uint64_t *h = tl_map64_get(&st->host_of, (uint64_t)addr);
    if (h) return (int32_t)*h;
    const char *s = tl_intern_str(st->names, addr);
    const char *colon = strrchr(s, ':');
    int32_t host = tl_intern(st->names, s, colon ? (size_t)(colon - s) : strlen(s));
    if (host >= 0) tl_map64_put(&st->host_of, (uint64_t)addr, (uint64_t)host);
    return host;
}

static int32_t intern_result(struct wq_state *st, struct span r)
{
    if (st->last_result >= 0 && tl_intern_len(st->names, st->last_result) == r.n &&
        !memcmp(tl_intern_str(st->names, st->last_result), r.p, r.n))
        return st->last_result;
    return st->last_result = tl_intern(st->names, r.p, r.n);
}

static uint32_t run_index(const struct wq_state *st, const struct run *r)
{
    return (uint32_t)(r - st->runs);
}

static inline uint64_t task_key(uint32_t run, int64_t id)
{
    return ((uint64_t)run << 32) | (uint32_t)id;
}

static struct task *task_find(struct wq_state *st, uint32_t run, int64_t id)
{
    uint64_t *ix = tl_map64_get(&st->open, task_key(run, id));
    return ix ? &st->tasks[*ix] : NULL;
}

static struct task *task_new(struct wq_state *st, uint32_t run, int64_t id)
{
    if ((long long)st->open.n >= st->cfg.max_open_tasks) return NULL;
    uint32_t ix;
    if (st->task_free) {
        ix = st->task_free - 1;
        st->task_free = st->tasks[ix].next_free;
    } else {
        if (st->ntasks_alloc == st->cap_tasks) {
            size_t cap = st->cap_tasks ? st->cap_tasks * 2 : 256;
            struct task *t = realloc(st->tasks, cap * sizeof *t);
            if (!t) return NULL;
            st->tasks = t;
            st->cap_tasks = cap;
        }
        ix = (uint32_t)st->ntasks_alloc++;
    }
    if (!tl_map64_put(&st->open, task_key(run, id), ix)) return NULL;
    struct task *t = &st->tasks[ix];
    memset(t, 0, sizeof *t);
    t->run = run;
    t->id = id;
    t->category = t->worker = t->host = t->result = -1;
    st->runs[run].by_state[ST_WAITING]++; /* state 0 */
    return t;
}

static void measured_release(struct wq_state *st, struct task *t)
{
    if (!t->measured) return;
    st->meas[t->measured - 1].next_free = st->meas_free;
    st->meas_free = t->measured;
    t->measured = 0;
}

static struct measured *measured_get(struct wq_state *st, struct task *t)
{
    if (!t->measured) {
        uint32_t ix;
        if (st->meas_free) {
            ix = st->meas_free - 1;
            st->meas_free = st->meas[ix].next_free;
        } else {
            if (st->nmeas_alloc == st->cap_meas) {
                size_t cap = st->cap_meas ? st->cap_meas * 2 : 64;
                struct measured *m = realloc(st->meas, cap * sizeof *m);
                if (!m) return NULL;
                st->meas = m;
                st->cap_meas = cap;
            }
            ix = (uint32_t)st->nmeas_alloc++;
        }
        t->measured = ix + 1;
    }
    struct measured *m = &st->meas[t->measured - 1];
    m->present = 0;
    m->worker_start = m->worker_end = 0;
    m->limits.present = 0;
    return m;
}

static bool recently_closed(const struct wq_state *st, uint32_t run, int64_t id)
{
    uint64_t key = task_key(run, id);
    for (size_t i = 0; i < sizeof st->recent_closed / sizeof *st->recent_closed; i++)
        if (st->recent_closed[i] == key + 1) return true;
    return false;
}

static void task_delete(struct wq_state *st, struct task *t)
{
    st->runs[t->run].by_state[t->state]--;
    st->recent_closed[st->recent_next++ % (sizeof st->recent_closed / sizeof *st->recent_closed)] =
        task_key(t->run, t->id) + 1;
    measured_release(st, t);
    uint32_t ix = (uint32_t)(t - st->tasks);
    tl_map64_del(&st->open, task_key(t->run, t->id));
    t->next_free = st->task_free;
    st->task_free = ix + 1;
}

static void box_to_record(struct tl_record *r, const struct box *b, enum tl_metric cores,
                          enum tl_metric mem, enum tl_metric disk, enum tl_metric gpus)
{
    if (b->present & (1u << BOX_CORES)) tl_record_set(r, cores, b->v[BOX_CORES]);
    if (b->present & (1u << BOX_MEMORY)) tl_record_set(r, mem, b->v[BOX_MEMORY]);
    if (b->present & (1u << BOX_DISK)) tl_record_set(r, disk, b->v[BOX_DISK]);
    if (b->present & (1u << BOX_GPUS)) tl_record_set(r, gpus, b->v[BOX_GPUS]);
}

/* Fills the scratch record with everything known about task t's current
 * attempt. `end_us` is the time of the line that closes the attempt. */
static struct tl_record *task_record(struct wq_state *st, struct task *t,
                                     enum tl_record_kind kind, int64_t end_us)
{
    struct tl_record *r = &st->rec;
    tl_record_init(r, kind);
    const struct run *run = &st->runs[t->run];
    r->workflow = name_of(st, run->workflow);
    r->category = name_of(st, t->category);
    r->worker = name_of(st, t->worker);
    r->host = name_of(st, t->host);
    r->result = name_of(st, t->result);
    r->task_id = t->id;
    r->attempt = t->attempt;
    r->has_exit_code = t->has_exit;
    r->exit_code = t->exit_code;
    r->time_ns = end_us * 1000;
    r->state = task_state_names[t->state];

    if (t->measured) {
        const struct measured *m = &st->meas[t->measured - 1];
        r->present = m->present;
        memcpy(r->v, m->v, sizeof r->v);
        if (!tl_record_has(r, TL_M_WALL_TIME_S) && m->worker_start > 0 &&
            m->worker_end >= m->worker_start)
            tl_record_set(r, TL_M_WALL_TIME_S, m->worker_end - m->worker_start);
        const struct box *l = &m->limits;
        box_to_record(r, l, TL_M_LIMIT_CORES, TL_M_LIMIT_MEMORY_BYTES, TL_M_LIMIT_DISK_BYTES,
                      TL_M_LIMIT_CORES);
        if (l->present & (1u << BOX_WALL)) tl_record_set(r, TL_M_LIMIT_WALL_TIME_S, l->v[BOX_WALL]);
    }
    box_to_record(r, &t->req, TL_M_REQ_CORES, TL_M_REQ_MEMORY_BYTES, TL_M_REQ_DISK_BYTES,
                  TL_M_REQ_GPUS);
    box_to_record(r, &t->alloc, TL_M_ALLOC_CORES, TL_M_ALLOC_MEMORY_BYTES, TL_M_ALLOC_DISK_BYTES,
                  TL_M_ALLOC_GPUS);
    if (t->t_waiting && t->t_running >= t->t_waiting)
        tl_record_set(r, TL_M_QUEUE_TIME_S, (double)(t->t_running - t->t_waiting) / 1e6);
    int64_t exec_end = t->t_wret ? t->t_wret : t->t_retrieved;
    if (t->t_running && exec_end >= t->t_running)
        tl_record_set(r, TL_M_EXEC_TIME_S, (double)(exec_end - t->t_running) / 1e6);
    if (t->t_wret && t->t_retrieved >= t->t_wret)
        tl_record_set(r, TL_M_RETRIEVAL_TIME_S, (double)(t->t_retrieved - t->t_wret) / 1e6);
    /* Without a resource monitor, the wall time is the lifecycle's. */
    if (!tl_record_has(r, TL_M_WALL_TIME_S) && tl_record_has(r, TL_M_EXEC_TIME_S))
        tl_record_set(r, TL_M_WALL_TIME_S, r->v[TL_M_EXEC_TIME_S]);
    return r;
}

/* A new attempt starts: reset per-attempt fields, keep identity and request. */
static void attempt_reset(struct wq_state *st, struct task *t)
{
    measured_release(st, t);
    t->t_running = t->t_wret = t->t_retrieved = 0;
    t->result = -1;
    t->has_exit = false;
    t->alloc.present = 0;
    t->worker = t->host = -1;
}

/* Resolves a RUNNING / WAITING_RETRIEVAL worker word (host:port in WQ,
 * worker-<hex> in TaskVine) into the task's worker and host. */
static void task_set_worker(struct wq_state *st, struct run *run, struct task *t, struct span w)
{
    int32_t id = intern_span(st, w);
    if (id < 0) return;
    bool is_worker_id = w.n > 7 && !memcmp(w.p, "worker-", 7);
    int32_t addr = -1;
    if (is_worker_id) {
        t->worker = id;
        uint64_t *a = tl_map64_get(&run->worker_to_addr, (uint64_t)id);
        if (a) addr = (int32_t)*a;
    } else {
        addr = id;
        uint64_t *wk = tl_map64_get(&run->addr_to_worker, (uint64_t)id);
        t->worker = wk ? (int32_t)*wk : id;
    }
    if (addr >= 0) {
        int32_t h = host_of_addr(st, addr);
        if (h >= 0) t->host = h;
    }
}

/* A `workflow` record: the run's state after this line, at most once per
 * second of log time (and at MANAGER END), so a dashboard gets a steady
 * series whatever the line rate, and a replay produces the same points. */
static void emit_workflow(struct wq_state *st, struct run *run, int64_t ts)
{
    run->last_emit_sec = ts / 1000000;
    if (skip_kind(st, TL_REC_WORKFLOW)) return;
    struct tl_record *r = &st->rec;
    tl_record_init(r, TL_REC_WORKFLOW);
    r->workflow = name_of(st, run->workflow);
    r->time_ns = ts * 1000;
    tl_record_set(r, TL_M_TASKS_WAITING, (double)run->by_state[ST_WAITING]);
    tl_record_set(r, TL_M_TASKS_RUNNING,
                  (double)(run->by_state[ST_RUNNING] + run->by_state[ST_WAITING_RETRIEVAL]));
    tl_record_set(r, TL_M_TASKS_DONE, (double)run->done);
    tl_record_set(r, TL_M_TASKS_FAILED, (double)run->failed);
    tl_record_set(r, TL_M_WORKERS, (double)run->workers);
    tl_record_set(r, TL_M_WORKER_CORES, run->cores);
    emit(st, r);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Reports the unfinished tasks of one run (or of all, run NULL) as
 * TL_REC_TASK_OPEN, censored at their last state change, in a stable order
 * (run, task id), and forgets them. */
static enum tl_err close_open_tasks(struct wq_state *st, const struct run *run)
{
    size_t n = st->open.n, k = 0;
    if (!n) return TL_OK;
    uint64_t *keys = malloc(n * sizeof *keys);
    if (!keys) return TL_ERR_NOMEM;
    uint32_t ri = run ? run_index(st, run) : 0;
    for (size_t i = 0; i < st->open.cap; i++) {
        uint64_t key = st->open.slots[i].key;
        if (key != TL_MAP64_EMPTY && (!run || key >> 32 == ri)) keys[k++] = key;
    }
    if (k > 1) qsort(keys, k, sizeof *keys, cmp_u64);
    for (size_t i = 0; i < k; i++) {
        struct task *t = &st->tasks[*tl_map64_get(&st->open, keys[i])];
        int64_t last = t->t_retrieved ? t->t_retrieved
                       : t->t_wret    ? t->t_wret
                       : t->t_running ? t->t_running
                                      : t->t_waiting;
        emit(st, task_record(st, t, TL_REC_TASK_OPEN, last));
    }
    for (size_t i = 0; i < k; i++) task_delete(st, &st->tasks[*tl_map64_get(&st->open, keys[i])]);
    free(keys);
    return TL_OK;
}

/* The manager is gone: its unfinished tasks never will be. Reports them
 * now, not at the end of input (a followed log has none), and frees them
 * and the run's worker tables, so memory follows the live runs, not every
 * run the input ever had. */
static enum tl_err end_run(struct wq_state *st, struct run *run)
{
    run->ended = true;
    enum tl_err rc = close_open_tasks(st, run);
    tl_map64_free(&run->worker_cores);
    tl_map64_free(&run->addr_to_worker);
    tl_map64_free(&run->worker_to_addr);
    return rc;
}

/* ---------------------------------------------------------------- records */

static void parse_manager(struct wq_state *st, int64_t ts, int64_t pid, const char *p,
                          const char *end)
{
    struct span w;
    if (!next_word(&p, end, &w)) return reject(st, TL_REJ_BAD_FIELDS, "MANAGER without event");
    if (w.n && w.p[0] >= '0' && w.p[0] <= '9') { /* TaskVine: MANAGER <pid> START|END [µs] */
        if (!next_word(&p, end, &w)) return reject(st, TL_REJ_BAD_FIELDS, "MANAGER without event");
    }
    bool start = SPAN_IS(w, "START");
    if (!start && !SPAN_IS(w, "END")) return reject(st, TL_REJ_BAD_FIELDS, "MANAGER event");
    struct run *run;
    if (start) {
        st->counters[WQC_MANAGER_START]++;
        /* A manager that crashed writes no MANAGER END; its restart writes
         * a START. A run still open at a START is marked quiet, and any
         * line of it clears the mark; quiet still at the next START, it is
         * taken for crashed. (Two live managers interleaved in one stream
         * keep writing, so neither is closed.) */
        for (size_t i = 0; st->cfg.close_superseded && i < st->nruns; i++) {
            struct run *old = &st->runs[i];
            if (old->ended) continue;
            if (!old->quiet) {
                old->quiet = true;
                continue;
            }
            st->counters[WQC_RUN_SUPERSEDED]++;
            if (end_run(st, old)) return reject(st, TL_REJ_LIMIT, "out of memory");
        }
        run = run_new(st, pid, ts);
    } else {
        st->counters[WQC_MANAGER_END]++;
        run = run_for(st, pid, ts);
    }
    if (!run) return reject(st, TL_REJ_LIMIT, "too many runs or names");
    if (!skip_kind(st, TL_REC_MANAGER)) {
        struct tl_record *r = &st->rec;
        tl_record_init(r, TL_REC_MANAGER);
        r->workflow = name_of(st, run->workflow);
        r->state = start ? "START" : "END";
        r->time_ns = ts * 1000;
        emit(st, r);
    }
    if (!start) {
        emit_workflow(st, run, ts); /* the final state, whatever the second */
        st->line_run = 0;
        if (end_run(st, run)) return reject(st, TL_REJ_LIMIT, "out of memory");
    }
}

enum worker_event { EV_CONNECTION, EV_DISCONNECTION, EV_RESOURCES, EV_TRANSFER, EV_CACHE_UPDATE, EV_NONE };

static enum worker_event worker_event(struct span w)
{
    switch (w.n) {
    case 8: return SPAN_IS(w, "TRANSFER") ? EV_TRANSFER : EV_NONE;
    case 9: return SPAN_IS(w, "RESOURCES") ? EV_RESOURCES : EV_NONE;
    case 10: return SPAN_IS(w, "CONNECTION") ? EV_CONNECTION : EV_NONE;
    case 12:
        return SPAN_IS(w, "CACHE_UPDATE") || SPAN_IS(w, "CACHE-UPDATE") ? EV_CACHE_UPDATE : EV_NONE;
    case 13: return SPAN_IS(w, "DISCONNECTION") ? EV_DISCONNECTION : EV_NONE;
    }
    return EV_NONE;
}

/* Whether a size or time as a transfer line writes it is one a transfer can
 * have: not negative, and below 2^960 (about 1e289), so that every unit
 * conversion (MiB, µs) keeps it finite. Judged as read, the same whether the
 * number is converted or only validated. */
static inline bool transfer_number_possible(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u < UINT64_C(0x7bf0000000000000); /* 2^960 */
}

/* Whether tl_parse_double takes exactly [p, end), without converting: the
 * plain form (0|[1-9]digits)[.digits] of up to 280 integer digits, which it
 * always takes, is checked here; anything else (a sign, exponents, nan,
 * longer) it is asked. *impossible: see transfer_number_possible. For
 * numbers that are validated, not used. */
static bool number_ok(const char *p, const char *end, bool *impossible)
{
    const char *q = tl_skip_digits(p, end);
    *impossible = false;
    if (q > p && !(*p == '0' && q - p > 1) && q - p <= 280) {
        if (q < end && *q == '.') {
            const char *f = q + 1;
            q = tl_skip_digits(f, end);
            if (q == f || end - p > 400) q = NULL; /* "1." */
        }
        if (q == end) return true;
    }
    double v;
    if (!tl_parse_double(p, end, &v)) return false;
    *impossible = !transfer_number_possible(v);
    return true;
}

/* The tail of a worker TRANSFER / CACHE_UPDATE line: a name (which may hold
 * spaces), then 2 or 3 numbers, taken from the right: [start] time size.
 * 7.5.1+ writes integer bytes and µs; 7.5.0 and earlier builds write %f MiB
 * and seconds. Each number is converted once. NULL, or the reject detail.
 * bytes NULL: the numbers are only validated (a consumer that does not use
 * the transfer), with the same verdicts: *impossible says whether the size
 * or the time is one no transfer has (negative, past the double range). */
static const char *transfer_numbers(const char *p, const char *end, double *bytes, double *secs,
                                    bool *impossible)
{
    struct span nums[3];
    double vals[3];
    bool imp[3];
    int n = 0;
    const char *e = end;
    struct span x;
    for (const char *before = e; n < 3 && last_word(p, &e, &x); before = e) {
        if (bytes ? !tl_parse_double(x.p, x.p + x.n, &vals[n]) : !number_ok(x.p, x.p + x.n, &imp[n])) {
            e = before; /* that word is the name: leave it */
            break;
        }
        nums[n++] = x;
    }
    if (n < 2) return "transfer size/time";
    if (skip_spaces(p, e) >= e) { /* the last number was the name after all */
        if (n == 2) return "transfer file name";
        n--;
    }
    if (!bytes) {
        *impossible = imp[n - 1] || imp[n - 2];
        return NULL;
    }
    double sz = vals[n - 1], tm = vals[n - 2];
    *impossible = !transfer_number_possible(sz) || !transfer_number_possible(tm);
    if (memchr(nums[n - 1].p, '.', nums[n - 1].n)) sz = mib_bytes(sz);
    else tm /= 1e6;
    *bytes = sz;
    *secs = tm;
    return NULL;
}

static void parse_worker(struct wq_state *st, int64_t ts, int64_t pid, const char *p,
                         const char *end)
{
    struct span id, w;
    if (!next_word(&p, end, &id) || !next_word(&p, end, &w))
        return reject(st, TL_REJ_BAD_FIELDS, "WORKER line too short");
    struct run *run = run_for(st, pid, ts);
    if (!run) return reject(st, TL_REJ_LIMIT, "too many runs or names");
    bool null_id = SPAN_IS(id, "(null)");
    struct span addr = {NULL, 0};
    /* WQ layout: WORKER id host:port  CONNECTION|DISCONNECTION [reason] */
    enum worker_event ev = worker_event(w);
    if (ev == EV_NONE) {
        addr = w;
        if (!next_word(&p, end, &w)) return reject(st, TL_REJ_BAD_FIELDS, "WORKER event missing");
        ev = worker_event(w);
        if (ev == EV_NONE) return reject(st, TL_REJ_UNKNOWN, "WORKER event");
    }
    /* Transfers and cache updates: a third of a TaskVine log. Without an
     * address they change no state, so a consumer that does not use
     * transfer records gets them validated and counted only. */
    struct span dir = {"CACHE_UPDATE", 12};
    double xfer_bytes = 0, xfer_secs = 0;
    bool impossible = false; /* the transfer's size or time */
    if (ev == EV_TRANSFER || ev == EV_CACHE_UPDATE) {
        st->counters[ev == EV_TRANSFER ? WQC_WORKER_TRANSFER : WQC_WORKER_CACHE_UPDATE]++;
        if (ev == EV_TRANSFER && !next_word(&p, end, &dir))
            return reject(st, TL_REJ_BAD_FIELDS, "TRANSFER direction");
        bool used = addr.p || tl_emit_wants(&st->emit, TL_REC_TRANSFER);
        const char *bad = transfer_numbers(p, end, used ? &xfer_bytes : NULL, &xfer_secs, &impossible);
        if (bad) return reject(st, TL_REJ_BAD_FIELDS, bad);
        if (impossible) reject(st, TL_REJ_BAD_VALUE, "transfer size or time");
        if (!used && skip_kind(st, TL_REC_TRANSFER)) return;
    }
    struct tl_record *r = &st->rec;
    tl_record_init(r, TL_REC_WORKER);
    r->workflow = name_of(st, run->workflow);
    r->time_ns = ts * 1000;
    int32_t wid = null_id ? -1 : intern_span(st, id);
    r->worker = name_of(st, wid);

    switch (ev) {
    case EV_CONNECTION:
        st->counters[WQC_WORKER_CONNECTION]++;
        if (!addr.p && !next_word(&p, end, &addr)) /* TaskVine: CONNECTION host:port */
            return reject(st, TL_REJ_BAD_FIELDS, "CONNECTION without address");
        r->state = "CONNECTION";
        if (wid >= 0 && !tl_map64_get(&run->worker_cores, (uint64_t)wid)) {
            run->workers++;
            tl_map64_put(&run->worker_cores, (uint64_t)wid, 0); /* 0.0's bits */
        }
        break;
    case EV_DISCONNECTION: {
        st->counters[WQC_WORKER_DISCONNECTION]++;
        struct span reason;
        r->state = "DISCONNECTION";
        if (next_word(&p, end, &reason)) r->result = name_of(st, intern_span(st, reason));
        uint64_t *c = wid >= 0 ? tl_map64_get(&run->worker_cores, (uint64_t)wid) : NULL;
        if (c) {
            double cores;
            memcpy(&cores, c, sizeof cores);
            run->cores -= cores;
            run->workers--;
            tl_map64_del(&run->worker_cores, (uint64_t)wid);
        }
        break;
    }
    case EV_RESOURCES: {
        st->counters[WQC_WORKER_RESOURCES]++;
        const char *j = skip_spaces(p, end);
        struct box b = {0};
        struct bad_value bad = {0};
        if (!scan_resources(j, end, J_BOX, NULL, &b, &bad))
            return reject(st, TL_REJ_BAD_JSON, "WORKER RESOURCES");
        if (bad.n) reject_bad_values(st, &bad);
        r->state = "RESOURCES";
        uint64_t *c = wid >= 0 ? tl_map64_get(&run->worker_cores, (uint64_t)wid) : NULL;
        if (c && (b.present & (1u << BOX_CORES))) {
            double old;
            memcpy(&old, c, sizeof old);
            run->cores += b.v[BOX_CORES] - old;
            memcpy(c, &b.v[BOX_CORES], sizeof *c);
        }
        /* For worker records, alloc_* is the worker's total capacity. */
        box_to_record(r, &b, TL_M_ALLOC_CORES, TL_M_ALLOC_MEMORY_BYTES, TL_M_ALLOC_DISK_BYTES,
                      TL_M_ALLOC_GPUS);
        break;
    }
    case EV_TRANSFER:
    case EV_CACHE_UPDATE: {
        bool input = !SPAN_IS(dir, "OUTPUT");
        r->kind = TL_REC_TRANSFER;
        r->state = ev == EV_TRANSFER ? (input ? "INPUT" : "OUTPUT") : "CACHE_UPDATE";
        if (!impossible) {
            tl_record_set(r, input ? TL_M_INPUT_BYTES : TL_M_OUTPUT_BYTES, xfer_bytes);
            tl_record_set(r, input ? TL_M_INPUT_TIME_S : TL_M_OUTPUT_TIME_S, xfer_secs);
        }
        break;
    }
    case EV_NONE:
        break; /* not reached: rejected above */
    }
    if (addr.p) {
        int32_t aid = intern_span(st, addr);
        if (aid < 0) return reject(st, TL_REJ_LIMIT, "too many names");
        r->host = name_of(st, host_of_addr(st, aid));
        if (wid >= 0) {
            tl_map64_put(&run->addr_to_worker, (uint64_t)aid, (uint64_t)wid);
            tl_map64_put(&run->worker_to_addr, (uint64_t)wid, (uint64_t)aid);
        }
    } else if (wid >= 0) {
        uint64_t *a = tl_map64_get(&run->worker_to_addr, (uint64_t)wid);
        if (a) r->host = name_of(st, host_of_addr(st, (int32_t)*a));
    }
    if (!r->worker && addr.p && !null_id) r->worker = name_of(st, intern_span(st, addr));
    if (skip_kind(st, r->kind)) return;
    emit(st, r);
}

/* WQ top-level: TRANSFER INPUT|OUTPUT taskid cache_flag MiB seconds name... */
static void parse_transfer(struct wq_state *st, int64_t ts, int64_t pid, const char *p,
                           const char *end)
{
    struct span dir, id, flag, size, secs;
    if (!next_word(&p, end, &dir) || !next_word(&p, end, &id) || !next_word(&p, end, &flag) ||
        !next_word(&p, end, &size) || !next_word(&p, end, &secs))
        return reject(st, TL_REJ_BAD_FIELDS, "TRANSFER line too short");
    bool input = SPAN_IS(dir, "INPUT");
    if (!input && !SPAN_IS(dir, "OUTPUT")) return reject(st, TL_REJ_BAD_FIELDS, "TRANSFER direction");
    int64_t task_id;
    double mib = 0, s = 0;
    bool used = tl_emit_wants(&st->emit, TL_REC_TRANSFER), imp_size = false, imp_secs = false;
    if (!span_i64(id, &task_id) ||
        !(used ? tl_parse_double(size.p, size.p + size.n, &mib) : number_ok(size.p, size.p + size.n, &imp_size)) ||
        !(used ? tl_parse_double(secs.p, secs.p + secs.n, &s) : number_ok(secs.p, secs.p + secs.n, &imp_secs)))
        return reject(st, TL_REJ_BAD_FIELDS, "TRANSFER numbers");
    st->counters[input ? WQC_TRANSFER_INPUT : WQC_TRANSFER_OUTPUT]++;
    struct run *run = run_for(st, pid, ts);
    if (!run) return reject(st, TL_REJ_LIMIT, "too many runs or names");
    if (used && (!transfer_number_possible(mib) || !transfer_number_possible(s))) imp_size = true;
    if (imp_size || imp_secs) reject(st, TL_REJ_BAD_VALUE, "transfer size or time");
    if (skip_kind(st, TL_REC_TRANSFER)) return;
    struct tl_record *r = &st->rec;
    tl_record_init(r, TL_REC_TRANSFER);
    r->workflow = name_of(st, run->workflow);
    r->task_id = task_id;
    r->state = input ? "INPUT" : "OUTPUT";
    r->time_ns = ts * 1000;
    if (!imp_size) {
        tl_record_set(r, input ? TL_M_INPUT_BYTES : TL_M_OUTPUT_BYTES, mib_bytes(mib));
        tl_record_set(r, input ? TL_M_INPUT_TIME_S : TL_M_OUTPUT_TIME_S, s);
    }
    struct task *t = task_find(st, run_index(st, run), task_id);
    if (t) r->category = name_of(st, t->category);
    emit(st, r);
}

static void parse_category(struct wq_state *st, const char *p, const char *end)
{
    /* CATEGORY name MAX|MIN {json} | CATEGORY name FIRST mode {json}; the JSON
     * may be missing (NULL summary). Read from the right: names may hold spaces. */
    const char *e = end;
    struct span w;
    if (!last_word(p, &e, &w)) return reject(st, TL_REJ_BAD_FIELDS, "CATEGORY line too short");
    if (w.p[0] == '{') {
        struct box b = {0};
        struct bad_value bad = {0};
        if (scan_resources(w.p, w.p + w.n, J_BOX, NULL, &b, &bad) != w.p + w.n)
            return reject(st, TL_REJ_BAD_JSON, "CATEGORY resources");
        if (bad.n) reject_bad_values(st, &bad);
        if (!last_word(p, &e, &w)) return reject(st, TL_REJ_BAD_FIELDS, "CATEGORY kind");
    }
    if (SPAN_IS(w, "MAX") || SPAN_IS(w, "MIN")) {
        /* "FIRST MAX" is FIRST with mode MAX: look one word further left. */
        const char *e2 = e;
        struct span prev;
        if (SPAN_IS(w, "MAX") && last_word(p, &e2, &prev) && SPAN_IS(prev, "FIRST") &&
            skip_spaces(p, e2) < e2) {
            st->counters[WQC_CATEGORY_FIRST]++;
            return;
        }
        st->counters[SPAN_IS(w, "MAX") ? WQC_CATEGORY_MAX : WQC_CATEGORY_MIN]++;
        return;
    }
    struct span kind;
    if (last_word(p, &e, &kind) && SPAN_IS(kind, "FIRST")) {
        st->counters[WQC_CATEGORY_FIRST]++;
        return;
    }
    reject(st, TL_REJ_BAD_FIELDS, "CATEGORY kind");
}

/* WAITING / READY: category [FIRST_RESOURCES|MAX_RESOURCES] [attempt] {json} */
static void task_waiting(struct wq_state *st, struct run *run, int64_t ts, int64_t id,
                         const char *p, const char *end, bool ready)
{
    const char *e = end;
    struct span w;
    struct box req = {0};
    int64_t attempt = 0;
    if (!last_word(p, &e, &w)) return reject(st, TL_REJ_BAD_FIELDS, "WAITING without category");
    if (w.p[0] == '{') {
        struct bad_value bad = {0};
        if (scan_resources(w.p, w.p + w.n, J_BOX, NULL, &req, &bad) != w.p + w.n)
            return reject(st, TL_REJ_BAD_JSON, "requested resources");
        if (bad.n) reject_bad_values(st, &bad);
        if (!last_word(p, &e, &w)) return reject(st, TL_REJ_BAD_FIELDS, "WAITING without category");
    }
    if (span_i64(w, &attempt)) { /* TaskVine >= 7.5.1: attempt number */
        if (!last_word(p, &e, &w)) return reject(st, TL_REJ_BAD_FIELDS, "WAITING without category");
    }
    if (SPAN_IS(w, "FIRST_RESOURCES") || SPAN_IS(w, "MAX_RESOURCES")) {
        /* allocation mode; what remains is the category */
    } else {
        e = w.p + w.n; /* no mode word: it was part of the name */
    }
    const char *cb = skip_spaces(p, e);
    while (e > cb && e[-1] == ' ') e--;
    if (e <= cb) return reject(st, TL_REJ_BAD_FIELDS, "WAITING without category");
    st->counters[ready ? WQC_TASK_READY : WQC_TASK_WAITING]++;

    uint32_t ri = run_index(st, run);
    struct task *t = task_find(st, ri, id);
    if (t) {
        /* Back in the queue: the previous attempt is over. */
        if (t->state == ST_RETRIEVED) {
            emit(st, task_record(st, t, TL_REC_TASK, t->t_retrieved));
        } else if (t->state == ST_RUNNING || t->state == ST_WAITING_RETRIEVAL) {
            struct tl_record *r = task_record(st, t, TL_REC_TASK, ts);
            r->result = "REQUEUED";
            r->has_exit_code = false;
            emit(st, r);
        }
        attempt_reset(st, t);
        t->attempt = attempt > 0 ? (int32_t)attempt : t->attempt + (t->state != ST_WAITING);
    } else {
        t = task_new(st, ri, id);
        if (!t) return reject(st, TL_REJ_LIMIT, "open task table full (max_open_tasks)");
        t->attempt = attempt > 0 ? (int32_t)attempt : 1;
    }
    t->category = tl_intern(st->names, cb, (size_t)(e - cb));
    t->req = req;
    set_state(st, t, ST_WAITING);
    t->t_waiting = ts;
}

static struct task *task_for_state(struct wq_state *st, struct run *run, int64_t id)
{
    uint32_t ri = run_index(st, run);
    struct task *t = task_find(st, ri, id);
    if (t) return t;
    /* A task first seen past WAITING (input joined mid-run). */
    t = task_new(st, ri, id);
    if (t) t->attempt = 1;
    return t;
}

/* The JSON just scanned was a limits object: move its values to limits. */
static void measured_to_limits(struct measured *m)
{
    static const struct {
        enum tl_metric metric;
        int box;
    } moves[] = {{TL_M_MAX_RSS_BYTES, BOX_MEMORY}, {TL_M_CORES, BOX_CORES},
                 {TL_M_DISK_BYTES, BOX_DISK},      {TL_M_GPUS, BOX_GPUS},
                 {TL_M_WALL_TIME_S, BOX_WALL}};
    m->limits.present = 0;
    for (size_t i = 0; i < sizeof moves / sizeof *moves; i++) {
        if (!((m->present >> moves[i].metric) & 1)) continue;
        m->limits.v[moves[i].box] = m->v[moves[i].metric];
        m->limits.present |= (uint8_t)(1u << moves[i].box);
    }
    m->present = 0;
    m->worker_start = m->worker_end = 0;
}

/* RETRIEVED / DONE: result [exit] [{limits}] [{measured}] */
static void task_finished(struct wq_state *st, struct run *run, int64_t ts, int64_t id,
                          const char *p, const char *end, bool done)
{
    struct span result;
    if (!next_word(&p, end, &result)) return reject(st, TL_REJ_BAD_FIELDS, "result missing");
    const char *save = p;
    struct span w;
    int64_t exit_code = 0;
    bool has_exit = false;
    if (next_word(&p, end, &w) && w.p[0] != '{') {
        if (!span_i64(w, &exit_code)) return reject(st, TL_REJ_BAD_FIELDS, "exit code");
        has_exit = true;
    } else {
        p = save;
    }
    /* Up to two JSON objects follow: two = limits + measured; one = measured,
     * except on WQ 6.0-7.0.3 RETRIEVED lines, where the only JSON is the
     * limits. Scan into scratch, so a bad line leaves the task untouched. */
    struct measured *m = &st->scratch;
    m->present = 0;
    m->worker_start = m->worker_end = 0;
    m->limits.present = 0;
    int njson = 0;
    struct bad_value bad = {0};
    p = skip_spaces(p, end);
    size_t tn = (size_t)(end - p);
    if (tn && tn == st->memo_len && !memcmp(p, st->memo_text, tn)) {
        *m = st->memo;
        njson = st->memo_njson;
        bad = st->memo_bad;
    } else {
        const char *text = p;
        while (p < end && njson < 2) {
            if (*p != '{') return reject(st, TL_REJ_BAD_FIELDS, "unexpected text after result");
            if (njson == 1) measured_to_limits(m);
            p = scan_resources(p, end, J_MEASURED, m, NULL, &bad);
            if (!p) return reject(st, TL_REJ_BAD_JSON, done ? "DONE resources" : "RETRIEVED resources");
            njson++;
            p = skip_spaces(p, end);
        }
        if (p < end) return reject(st, TL_REJ_BAD_FIELDS, "text after resources");
        st->memo_len = 0;
        if (tn && tn <= sizeof st->memo_text) {
            memcpy(st->memo_text, text, tn);
            st->memo = *m;
            st->memo_njson = njson;
            st->memo_bad = bad;
            st->memo_len = tn;
        }
    }
    if (njson == 1 && !done && st->family_ab && !has_exit) measured_to_limits(m);
    if (bad.n) reject_bad_values(st, &bad);

    st->counters[done ? WQC_TASK_DONE : WQC_TASK_RETRIEVED]++;
    struct task *t = task_for_state(st, run, id);
    if (!t) return reject(st, TL_REJ_LIMIT, "open task table full (max_open_tasks)");
    /* TaskVine's DONE carries no JSON: the RETRIEVED measurement stands. */
    if (!(done && t->state == ST_RETRIEVED && njson == 0)) {
        struct box prev_limits = {0};
        if (t->measured) prev_limits = st->meas[t->measured - 1].limits;
        struct measured *dst = measured_get(st, t);
        if (!dst) return reject(st, TL_REJ_LIMIT, "out of memory");
        uint32_t link = dst->next_free;
        *dst = *m;
        dst->next_free = link;
        /* WQ 6.x: limits were on RETRIEVED, the measurement on DONE. */
        if (done && !dst->limits.present) dst->limits = prev_limits;
    }
    int32_t res = intern_result(st, result);
    if (!done) {
        t->result = res;
        t->exit_code = (int32_t)exit_code;
        t->has_exit = has_exit;
        t->t_retrieved = ts;
        set_state(st, t, ST_RETRIEVED);
        return;
    }
    /* DONE: the final word on this task. */
    t->result = res;
    if (has_exit) {
        t->exit_code = (int32_t)exit_code;
        t->has_exit = true;
    }
    struct tl_record *r = task_record(st, t, TL_REC_TASK, t->t_retrieved ? t->t_retrieved : ts);
    r->final = true;
    r->state = "DONE";
    if (r->result && !strcmp(r->result, "SUCCESS")) run->done++;
    else run->failed++;
    emit(st, r);
    task_delete(st, t);
}

static void parse_task(struct wq_state *st, int64_t ts, int64_t pid, const char *p,
                       const char *end)
{
    struct span idw, state;
    int64_t id;
    const char *q = p < end && *p == ' ' ? lead_int(p + 1, end, &id) : NULL;
    if (q) {
        p = q;
        if (!next_word(&p, end, &state)) return reject(st, TL_REJ_BAD_FIELDS, "TASK line too short");
    } else {
        if (!next_word(&p, end, &idw) || !next_word(&p, end, &state))
            return reject(st, TL_REJ_BAD_FIELDS, "TASK line too short");
        if (!span_i64(idw, &id)) return reject(st, TL_REJ_BAD_FIELDS, "task id");
    }
    struct run *run = run_for(st, pid, ts);
    if (!run) return reject(st, TL_REJ_LIMIT, "too many runs or names");

    switch (state.p[0]) {
    case 'W':
        if (SPAN_IS(state, "WAITING")) return task_waiting(st, run, ts, id, p, end, false);
        if (SPAN_IS(state, "WAITING_RETRIEVAL")) {
            st->counters[WQC_TASK_WAITING_RETRIEVAL]++;
            struct task *t = task_for_state(st, run, id);
            if (!t) return reject(st, TL_REJ_LIMIT, "open task table full (max_open_tasks)");
            struct span w;
            if (next_word(&p, end, &w) && t->worker < 0) task_set_worker(st, run, t, w);
            t->t_wret = ts;
            set_state(st, t, ST_WAITING_RETRIEVAL);
            return;
        }
        if (SPAN_IS(state, "WAITING_RESUBMISSION")) {
            st->counters[WQC_TASK_OTHER]++;
            return;
        }
        break;
    case 'R':
        if (SPAN_IS(state, "READY")) return task_waiting(st, run, ts, id, p, end, true);
        if (SPAN_IS(state, "RUNNING")) {
            struct span w, mode;
            struct box alloc = {0};
            bool have_worker = next_word(&p, end, &w);
            if (have_worker && next_word(&p, end, &mode)) {
                const char *j = skip_spaces(p, end);
                struct bad_value bad = {0};
                if (j < end && scan_resources(j, end, J_BOX, NULL, &alloc, &bad) == NULL)
                    return reject(st, TL_REJ_BAD_JSON, "allocated resources");
                if (bad.n) reject_bad_values(st, &bad);
            }
            st->counters[WQC_TASK_RUNNING]++;
            struct task *t = task_for_state(st, run, id);
            if (!t) return reject(st, TL_REJ_LIMIT, "open task table full (max_open_tasks)");
            if (t->state == ST_RUNNING || t->state == ST_WAITING_RETRIEVAL) {
                /* RUNNING again without going back to the queue: treat the
                 * earlier attempt as lost. */
                struct tl_record *r = task_record(st, t, TL_REC_TASK, ts);
                r->result = "REQUEUED";
                emit(st, r);
                attempt_reset(st, t);
                t->attempt++;
            }
            t->alloc = alloc;
            if (have_worker) task_set_worker(st, run, t, w);
            t->t_running = ts;
            set_state(st, t, ST_RUNNING);
            return;
        }
        if (SPAN_IS(state, "RETRIEVED")) return task_finished(st, run, ts, id, p, end, false);
        break;
    case 'D':
        if (SPAN_IS(state, "DONE")) return task_finished(st, run, ts, id, p, end, true);
        break;
    case 'C':
        if (SPAN_IS(state, "CANCELED")) {
            st->counters[WQC_TASK_CANCELED]++;
            if (!task_find(st, run_index(st, run), id) && recently_closed(st, run_index(st, run), id))
                return; /* the repeated line of one cancel */
            struct task *t = task_for_state(st, run, id);
            if (!t) return reject(st, TL_REJ_LIMIT, "open task table full (max_open_tasks)");
            struct tl_record *r = task_record(st, t, TL_REC_TASK, ts);
            r->result = "CANCELED";
            r->has_exit_code = false;
            r->final = true;
            r->state = "CANCELED";
            run->failed++;
            emit(st, r);
            task_delete(st, t);
            return;
        }
        break;
    case 'I':
    case 'U':
        if (SPAN_IS(state, "INITIAL") || SPAN_IS(state, "UNKNOWN")) {
            st->counters[WQC_TASK_OTHER]++;
            return;
        }
        break;
    }
    reject(st, TL_REJ_BAD_FIELDS, "unknown task state");
}

static void parse_header(struct wq_state *st, const char *p, const char *end)
{
    st->counters[WQC_HEADER]++;
    /* WQ 6.0-7.0.3: "... TASK taskid RETRIEVED|DONE task-result ..." (no
     * braces): a lone JSON on RETRIEVED is then the limits, not the measure. */
    static const char marker[] = "RETRIEVED|DONE task-result";
    if ((size_t)(end - p) >= sizeof marker - 1 && memmem(p, (size_t)(end - p), marker, sizeof marker - 1))
        st->family_ab = true;
}

static void parse_line(struct wq_state *st, const char *p, const char *end)
{
    while (end > p && (end[-1] == ' ' || end[-1] == '\r' || end[-1] == '\t')) end--;
    if (p == end) {
        st->counters[WQC_BLANK]++;
        return;
    }
    if (*p == '#') return parse_header(st, p, end);
    struct span tsw, pidw, kind;
    int64_t ts, pid;
    const char *q = lead_ts(st, p, end, &ts);
    if (q && q < end && (q = lead_pid(st, q + 1, end, &pid))) {
        p = q;
    } else if (!next_word(&p, end, &tsw) || !span_i64(tsw, &ts) || !next_word(&p, end, &pidw) ||
               !span_i64(pidw, &pid)) {
        return reject(st, TL_REJ_BAD_PREFIX, NULL);
    }
    /* µs since the epoch; beyond year ~2255 the ns conversion would overflow */
    if (ts < 0 || ts > WQ_MAX_TIMESTAMP_US) return reject(st, TL_REJ_BAD_PREFIX, "timestamp out of range");
    if (!next_word(&p, end, &kind)) return reject(st, TL_REJ_BAD_FIELDS, "no record type");
    switch (kind.p[0]) {
    case 'T':
        if (SPAN_IS(kind, "TASK")) return parse_task(st, ts, pid, p, end);
        if (SPAN_IS(kind, "TRANSFER")) return parse_transfer(st, ts, pid, p, end);
        break;
    case 'W':
        if (SPAN_IS(kind, "WORKER")) return parse_worker(st, ts, pid, p, end);
        break;
    case 'M':
        if (SPAN_IS(kind, "MANAGER") || SPAN_IS(kind, "MASTER"))
            return parse_manager(st, ts, pid, p, end);
        break;
    case 'C':
        if (SPAN_IS(kind, "CATEGORY")) return parse_category(st, p, end);
        break;
    case 'L':
    case 'D':
        if (SPAN_IS(kind, "LIBRARY") || SPAN_IS(kind, "DUTY")) {
            struct span id, what;
            if (!next_word(&p, end, &id) || !next_word(&p, end, &what))
                return reject(st, TL_REJ_BAD_FIELDS, "LIBRARY line too short");
            st->counters[WQC_LIBRARY]++;
            return;
        }
        break;
    case 'A':
        if (SPAN_IS(kind, "APPLICATION")) {
            st->counters[WQC_APPLICATION]++;
            return;
        }
        break;
    }
    reject(st, TL_REJ_UNKNOWN, NULL);
}

static void process_line(struct wq_state *st, const char *p, size_t n)
{
    st->stats.lines++;
    if (st->chunk_has_nul && memchr(p, '\0', n)) {
        /* A run of NUL bytes is where a crash left preallocated blocks: it
         * ends the damaged line, and what follows the last NUL is a line of
         * its own (it was swallowed with the damage). */
        const char *last = memrchr(p, '\0', n);
        reject(st, TL_REJ_NUL_BYTE, NULL);
        size_t rest = n - (size_t)(last + 1 - p);
        if (rest && last[1] >= '0' && last[1] <= '9') process_line(st, last + 1, rest);
        return;
    }
    st->line_run = 0;
    parse_line(st, p, p + n);
    if (st->line_run) {
        struct run *run = &st->runs[st->line_run - 1];
        if (st->line_ts / 1000000 != run->last_emit_sec) emit_workflow(st, run, st->line_ts);
    }
}

/* ---------------------------------------------------------------- plugin */

static enum tl_err wq_feed(void *state, const char *buf, size_t len)
{
    struct wq_state *st = state;
    const char *p = buf, *end = buf + len;
    st->chunk_has_nul = memchr(buf, '\0', len) != NULL;

    /* Finish a line carried over from the previous chunk. */
    if (st->partial.len || st->skipping) {
        const char *nl = memchr(p, '\n', len);
        size_t take = nl ? (size_t)(nl - p) : len;
        if (!st->skipping) {
            if (st->partial.len + take > st->cfg.max_line) {
                st->skipping = true;
                st->partial.len = 0;
            } else {
                tl_buf_append(&st->partial, p, take);
                if (st->partial.oom) return TL_ERR_NOMEM;
            }
        }
        if (!nl) return TL_OK;
        if (st->skipping) {
            st->stats.lines++;
            reject(st, TL_REJ_LINE_TOO_LONG, NULL);
            st->skipping = false;
        } else {
            bool had_nul = st->chunk_has_nul;
            st->chunk_has_nul = memchr(st->partial.data, '\0', st->partial.len) != NULL;
            process_line(st, st->partial.data, st->partial.len);
            st->chunk_has_nul = had_nul;
        }
        st->partial.len = 0;
        p = nl + 1;
    }
    for (;;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;
        if ((size_t)(nl - p) > st->cfg.max_line) {
            st->stats.lines++;
            reject(st, TL_REJ_LINE_TOO_LONG, NULL);
        } else {
            process_line(st, p, (size_t)(nl - p));
        }
        p = nl + 1;
    }
    if (p < end) {
        if ((size_t)(end - p) > st->cfg.max_line) {
            st->skipping = true;
        } else {
            tl_buf_append(&st->partial, p, (size_t)(end - p));
            if (st->partial.oom) return TL_ERR_NOMEM;
        }
    }
    return TL_OK;
}


static enum tl_err wq_finish(void *state)
{
    struct wq_state *st = state;
    if (st->skipping) {
        st->stats.lines++;
        reject(st, TL_REJ_LINE_TOO_LONG, NULL);
        st->skipping = false;
    } else if (st->partial.len) {
        /* A last line without newline: a crashed writer, or a cut file. */
        st->chunk_has_nul = memchr(st->partial.data, '\0', st->partial.len) != NULL;
        process_line(st, st->partial.data, st->partial.len);
    }
    st->partial.len = 0;
    return close_open_tasks(st, NULL);
}

static enum tl_err wq_open(void **state, const void *config, const struct tl_emit *emit_cb)
{
    struct wq_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct wq_config *)config;
    st->emit = *emit_cb;
    st->last_result = -1;
    st->names = tl_intern_new(st->cfg.max_names);
    if (!st->names) {
        free(st);
        return TL_ERR_NOMEM;
    }
    *state = st;
    return TL_OK;
}

static void wq_close(void *state)
{
    struct wq_state *st = state;
    if (!st) return;
    for (size_t i = 0; i < st->nruns; i++) {
        tl_map64_free(&st->runs[i].addr_to_worker);
        tl_map64_free(&st->runs[i].worker_to_addr);
        tl_map64_free(&st->runs[i].worker_cores);
    }
    free(st->runs);
    tl_map64_free(&st->pid_to_run);
    tl_map64_free(&st->host_of);
    tl_map64_free(&st->open);
    free(st->tasks);
    free(st->meas);
    tl_buf_free(&st->partial);
    tl_intern_free(st->names);
    free(st);
}

static const struct tl_parse_stats *wq_stats(const void *state)
{
    return &((const struct wq_state *)state)->stats;
}

static size_t wq_counters(const void *state, const char *const **names, const uint64_t **values)
{
    *names = wq_counter_names;
    *values = ((const struct wq_state *)state)->counters;
    return WQC_COUNT;
}

/* ---------------------------------------------------------------- checkpoint
 *
 * The state as bytes: counters, the partial line, every interned name in id
 * order (restoring them in order gives the same ids, so everything that
 * holds an id stays valid), the runs with their worker maps, and the open
 * tasks. Tasks and their measurements are written as the structs they are,
 * behind a layout signature: a checkpoint from a build whose structs differ
 * is refused as corrupt rather than misread. Free lists are not saved; the
 * restored tables are dense. */

#define WQ_SAVE_MAGIC "WQS2" /* 2: runs carry ended/quiet */

static void put_map(struct tl_buf *b, const struct tl_map64 *m)
{
    tl_put_varint(b, m->n);
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key != TL_MAP64_EMPTY) {
            tl_put_varint(b, m->slots[i].key);
            tl_put_varint(b, m->slots[i].val);
        }
}

static bool get_map(const uint8_t **p, const uint8_t *end, struct tl_map64 *m)
{
    uint64_t n, k, v;
    if (!tl_get_varint(p, end, &n) || n > (uint64_t)(end - *p) / 2) return false;
    for (uint64_t i = 0; i < n; i++)
        if (!tl_get_varint(p, end, &k) || !tl_get_varint(p, end, &v) || k == TL_MAP64_EMPTY ||
            !tl_map64_put(m, k, v))
            return false;
    return true;
}

/* Keys below kmax and values below vmax (UINT64_MAX: anything). */
static bool map_within(const struct tl_map64 *m, uint64_t kmax, uint64_t vmax)
{
    for (size_t i = 0; i < m->cap; i++) {
        const struct tl_map64_slot *sl = &m->slots[i];
        if (sl->key == TL_MAP64_EMPTY) continue;
        if ((kmax != UINT64_MAX && sl->key >= kmax) || (vmax != UINT64_MAX && sl->val >= vmax))
            return false;
    }
    return true;
}

static uint64_t wq_layout(void)
{
    return (uint64_t)sizeof(struct task) << 32 | (uint64_t)sizeof(struct measured) << 16 |
           (uint64_t)(TL_M_COUNT << 8 | WQC_COUNT);
}

/* A state saved when the record had fewer metrics (new ones are appended to
 * TL_METRICS, so the old ones keep their index and presence bit): the same
 * task and counters, and a `struct measured` whose value array was shorter
 * by whole doubles. *old_metrics: how many it had. */
static bool wq_layout_older(uint64_t u, unsigned *old_metrics)
{
    uint64_t task = u >> 32, meas = (u >> 16) & 0xffff, m = (u >> 8) & 0xff, c = u & 0xff;
    if (task != sizeof(struct task) || c != WQC_COUNT || m >= TL_M_COUNT || !m) return false;
    if (meas != sizeof(struct measured) - (TL_M_COUNT - m) * sizeof(double)) return false;
    *old_metrics = (unsigned)m;
    return true;
}

/* A saved `struct measured` of an older layout into m: its values, then the
 * fields after the array, which keep their layout. */
static void measured_from_older(struct measured *m, const uint8_t *p, unsigned old_metrics)
{
    size_t head = offsetof(struct measured, v) + old_metrics * sizeof(double);
    size_t tail = sizeof *m - offsetof(struct measured, worker_start);
    memset(m, 0, sizeof *m);
    memcpy(m, p, head);
    memcpy((char *)m + offsetof(struct measured, worker_start), p + head, tail);
}

static enum tl_err wq_save(const void *state, struct tl_buf *b)
{
    const struct wq_state *st = state;
    tl_buf_append(b, WQ_SAVE_MAGIC, 4);
    tl_put_varint(b, wq_layout());
    tl_parse_stats_put(b, &st->stats);
    for (int i = 0; i < WQC_COUNT; i++) tl_put_varint(b, st->counters[i]);
    tl_put_varint(b, st->partial.len);
    tl_buf_append(b, st->partial.data, st->partial.len);
    tl_put_u8(b, (uint8_t)(st->skipping | st->family_ab << 1));
    size_t nnames = tl_intern_count(st->names);
    tl_put_varint(b, nnames);
    for (size_t i = 0; i < nnames; i++) {
        size_t n = tl_intern_len(st->names, (int32_t)i);
        tl_put_varint(b, n);
        tl_buf_append(b, tl_intern_str(st->names, (int32_t)i), n);
    }
    tl_put_varint(b, st->nruns);
    for (size_t i = 0; i < st->nruns; i++) {
        const struct run *r = &st->runs[i];
        tl_put_varint(b, tl_zigzag(r->pid));
        tl_put_varint(b, tl_zigzag(r->start_us));
        tl_put_varint(b, (uint64_t)r->workflow);
        for (int k = 0; k < 4; k++) tl_put_varint(b, tl_zigzag(r->by_state[k]));
        tl_put_varint(b, r->done);
        tl_put_varint(b, r->failed);
        tl_put_varint(b, tl_zigzag(r->workers));
        tl_put_f64(b, r->cores);
        tl_put_varint(b, tl_zigzag(r->last_emit_sec));
        tl_put_u8(b, (uint8_t)(r->ended | r->quiet << 1));
        put_map(b, &r->addr_to_worker);
        put_map(b, &r->worker_to_addr);
        put_map(b, &r->worker_cores);
    }
    put_map(b, &st->pid_to_run);
    put_map(b, &st->host_of);
    tl_put_varint(b, st->open.n);
    for (size_t i = 0; i < st->open.cap; i++) {
        if (st->open.slots[i].key == TL_MAP64_EMPTY) continue;
        const struct task *t = &st->tasks[st->open.slots[i].val];
        tl_buf_append(b, t, sizeof *t);
        if (t->measured) tl_buf_append(b, &st->meas[t->measured - 1], sizeof(struct measured));
    }
    for (size_t i = 0; i < 64; i++) tl_put_varint(b, st->recent_closed[i]);
    tl_put_varint(b, st->recent_next);
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

static bool get_i64(const uint8_t **p, const uint8_t *end, int64_t *x)
{
    uint64_t u;
    if (!tl_get_varint(p, end, &u)) return false;
    *x = tl_unzigzag(u);
    return true;
}

static enum tl_err wq_restore(void *state, const uint8_t *p, size_t len)
{
    struct wq_state *st = state;
    const uint8_t *end = p + len;
    uint64_t u, n;
    if (len < 4 || memcmp(p, WQ_SAVE_MAGIC, 4)) return TL_ERR_CORRUPT;
    p += 4;
    unsigned old_metrics = TL_M_COUNT;
    if (!tl_get_varint(&p, end, &u) || (u != wq_layout() && !wq_layout_older(u, &old_metrics)))
        return TL_ERR_CORRUPT;
    size_t meas_size = sizeof(struct measured) - (TL_M_COUNT - old_metrics) * sizeof(double);
    if (!tl_parse_stats_get(&p, end, &st->stats)) return TL_ERR_CORRUPT;
    for (int i = 0; i < WQC_COUNT; i++)
        if (!tl_get_varint(&p, end, &st->counters[i])) return TL_ERR_CORRUPT;
    if (!tl_get_varint(&p, end, &n) || n > (uint64_t)(end - p) || n > st->cfg.max_line)
        return TL_ERR_CORRUPT;
    st->partial.len = 0;
    tl_buf_append(&st->partial, p, (size_t)n);
    p += n;
    uint8_t flags;
    if (!tl_get_u8(&p, end, &flags)) return TL_ERR_CORRUPT;
    st->skipping = flags & 1;
    st->family_ab = (flags >> 1) & 1;
    if (!tl_get_varint(&p, end, &n)) return TL_ERR_CORRUPT;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t sl;
        if (!tl_get_str(&p, end, SIZE_MAX, &s, &sl) ||
            tl_intern(st->names, s, sl) != (int32_t)i)
            return TL_ERR_CORRUPT; /* over max_names, or a duplicate */
    }
    if (!tl_get_varint(&p, end, &n) || n > (uint64_t)(end - p)) return TL_ERR_CORRUPT;
    if (n) {
        st->runs = calloc((size_t)n, sizeof *st->runs);
        if (!st->runs) return TL_ERR_NOMEM;
        st->cap_runs = (size_t)n;
    }
    for (uint64_t i = 0; i < n; i++) {
        struct run *r = &st->runs[i];
        st->nruns = (size_t)i + 1; /* so close frees the maps of a partial restore */
        uint64_t wf;
        if (!get_i64(&p, end, &r->pid) || !get_i64(&p, end, &r->start_us) ||
            !tl_get_varint(&p, end, &wf) || wf >= tl_intern_count(st->names))
            return TL_ERR_CORRUPT;
        r->workflow = (int32_t)wf;
        for (int k = 0; k < 4; k++)
            if (!get_i64(&p, end, &r->by_state[k])) return TL_ERR_CORRUPT;
        uint8_t rflags;
        if (!tl_get_varint(&p, end, &r->done) || !tl_get_varint(&p, end, &r->failed) ||
            !get_i64(&p, end, &r->workers) || !tl_get_f64(&p, end, &r->cores) ||
            !get_i64(&p, end, &r->last_emit_sec) || !tl_get_u8(&p, end, &rflags) || rflags > 3 ||
            !get_map(&p, end, &r->addr_to_worker) || !get_map(&p, end, &r->worker_to_addr) ||
            !get_map(&p, end, &r->worker_cores))
            return TL_ERR_CORRUPT;
        r->ended = rflags & 1;
        r->quiet = rflags >> 1;
    }
    if (!get_map(&p, end, &st->pid_to_run) || !get_map(&p, end, &st->host_of))
        return TL_ERR_CORRUPT;
    /* every index and name id must point inside what was restored */
    uint64_t nnames = tl_intern_count(st->names);
    if (!map_within(&st->pid_to_run, UINT64_MAX, st->nruns) ||
        !map_within(&st->host_of, nnames, nnames))
        return TL_ERR_CORRUPT;
    for (size_t i = 0; i < st->nruns; i++) {
        const struct run *r = &st->runs[i];
        if (!map_within(&r->addr_to_worker, nnames, nnames) ||
            !map_within(&r->worker_to_addr, nnames, nnames) ||
            !map_within(&r->worker_cores, nnames, UINT64_MAX))
            return TL_ERR_CORRUPT;
    }
    if (!tl_get_varint(&p, end, &n) || n > (uint64_t)(end - p) / sizeof(struct task) ||
        (long long)n > st->cfg.max_open_tasks)
        return TL_ERR_CORRUPT;
    for (uint64_t i = 0; i < n; i++) {
        struct task t;
        if ((size_t)(end - p) < sizeof t) return TL_ERR_CORRUPT;
        memcpy(&t, p, sizeof t);
        p += sizeof t;
        int32_t names = (int32_t)tl_intern_count(st->names);
        if (t.run >= st->nruns || t.state > ST_RETRIEVED || t.category >= names ||
            t.worker >= names || t.host >= names || t.result >= names)
            return TL_ERR_CORRUPT;
        /* task_new counts the task as WAITING: the saved counts already hold it */
        struct task *nt = task_new(st, t.run, t.id);
        if (!nt) return TL_ERR_CORRUPT;
        st->runs[t.run].by_state[ST_WAITING]--;
        bool has_meas = t.measured != 0;
        t.measured = 0;
        t.next_free = 0;
        *nt = t;
        if (has_meas) {
            if ((size_t)(end - p) < meas_size) return TL_ERR_CORRUPT;
            struct measured *m = measured_get(st, nt);
            if (!m) return TL_ERR_NOMEM;
            measured_from_older(m, p, old_metrics);
            m->next_free = 0;
            p += meas_size;
        }
    }
    for (size_t i = 0; i < 64; i++)
        if (!tl_get_varint(&p, end, &st->recent_closed[i])) return TL_ERR_CORRUPT;
    if (!tl_get_varint(&p, end, &u)) return TL_ERR_CORRUPT;
    st->recent_next = (unsigned)u;
    st->last_run = 0;
    st->last_result = -1;
    return p == end ? TL_OK : TL_ERR_CORRUPT;
}

/* Sure when the first line is a cctools header, or a "<16 digits> <pid>
 * <RECORD>" line with a record keyword this format has. */
static int wq_probe(const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    for (int lines = 0; p < end && lines < 32; lines++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        size_t n = (size_t)(e - p);
        if ((n >= 6 && !memcmp(p, "# time", 6)) || (n >= 11 && !memcmp(p, "# date time", 11))) {
            if (memmem(p, (size_t)(e - p), "_pid", 4) || memmem(p, (size_t)(e - p), "-pid", 4))
                return 100;
        } else if (p < e && *p != '#') {
            struct span ts, pid, kind;
            const char *q = p;
            int64_t v;
            if (next_word(&q, e, &ts) && span_i64(ts, &v) && ts.n >= 10 &&
                next_word(&q, e, &pid) && span_i64(pid, &v) && next_word(&q, e, &kind) &&
                (SPAN_IS(kind, "TASK") || SPAN_IS(kind, "WORKER") || SPAN_IS(kind, "MANAGER") ||
                 SPAN_IS(kind, "MASTER") || SPAN_IS(kind, "CATEGORY") ||
                 SPAN_IS(kind, "TRANSFER") || SPAN_IS(kind, "LIBRARY")))
                return 90;
            if (e > p) return 0;
        }
        if (!nl) break;
        p = nl + 1;
    }
    return 0;
}

const struct tl_parser tl_parser_wq = {
    .name = "wq",
    .help = "Work Queue / TaskVine transaction log",
    .probe = wq_probe,
    .config_size = sizeof(struct wq_config),
    .options = wq_options,
    .open = wq_open,
    .feed = wq_feed,
    .finish = wq_finish,
    .close = wq_close,
    .stats = wq_stats,
    .counters = wq_counters,
    .save = wq_save,
    .restore = wq_restore,
    .messages = TL_MSG_LINES,
};
