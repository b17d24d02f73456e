/* The Work Queue / TaskVine parser's private header: the state every layer
 * shares (the parser's design is in wq.c's opening comment). The parser is
 * split by layer, as Fluent Bit's in_tail/ is:
 *
 *   wq.c      the plugin: options, open/close, stats, probe
 *   scan.h    the resources JSON scanner, cctools units (cctools_units.h),
 *             inline in events.c
 *   events.c  the event state machine: one line in, records out; the
 *             task lines
 *   workers.c the worker and transfer lines (rare: events.c's helpers
 *             called out of line)
 *   state.c   checkpoints: the state as bytes, and older states translated
 *
 * The cursor helpers below are inline: they run for every word of every
 * line. */
#ifndef TL_PARSERS_WQ_INTERNAL_H
#define TL_PARSERS_WQ_INTERNAL_H

#include "parsers/parser.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/bytes.h"
#include "core/intern.h"
#include "core/map64.h"
#include "core/numfmt.h"
#include "parsers/cctools_units.h"
#include "parsers/jscan.h"

/* The metrics Work Queue measures all come before the ones appended for
 * the formats read since (storage I/O, energy, ...): a measured attempt
 * keeps those, and its saved layout stays what it was before they came. */
#define WQ_NMETRICS TL_M_STORAGE_READ_BYTES

/* ---------------------------------------------------------------- config */

#define WQ_MAX_TIMESTAMP_US 9000000000000000LL

struct wq_config {
    size_t max_line;
    long long max_open_tasks;
    size_t max_names;
    bool close_superseded;
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

/* The keys of a resources JSON object that tasklens keeps. */
enum jkey {
    K_NONE = -1,
    K_WALL_TIME, K_CPU_TIME, K_MEMORY, K_VIRTUAL_MEMORY, K_SWAP_MEMORY, K_DISK,
    K_BYTES_READ, K_BYTES_WRITTEN, K_BYTES_RECEIVED, K_BYTES_SENT, K_BANDWIDTH,
    K_GPUS, K_CORES, K_CORES_AVG, K_MACHINE_CPUS, K_CONTEXT_SWITCHES,
    K_MAX_CONCURRENT_PROCESSES, K_TOTAL_PROCESSES, K_TOTAL_FILES,
    K_INPUT_SIZE, K_OUTPUT_SIZE, K_INPUT_TIME, K_OUTPUT_TIME,
    K_WORKER_START, K_WORKER_END,
};

/* What a resources JSON object fills. */
enum json_target { J_MEASURED, J_BOX, J_IGNORE };

/* ---------------------------------------------------------------- state */

enum task_state {
    ST_WAITING,
    ST_RUNNING,
    ST_WAITING_RETRIEVAL,
    ST_RETRIEVED,
};


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
    double v[WQ_NMETRICS]; /* by metric: Work Queue's come first */
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
    bool nomem;            /* a line was left out for lack of memory: the input fails at its end */
    bool run_names_full;   /* the last run that could not be made was past max_names (else: memory) */
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

static inline bool span_i64(struct span s, int64_t *out)
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

/* ---------------------------------------------------------------- sizes */

/* A size that cctools wrote in MiB (size / 2^20, printed to 6 decimals or
 * 16 digits), as whole bytes: the size was a byte count, and the product
 * carries only the decimal's rounding (0.01606845855712891 MiB is 16849
 * bytes, not 16849.000000000004). Six decimals leave half a millionth of a
 * MiB, so the nearest integer is the byte count within one. */
static inline __attribute__((always_inline)) double whole_bytes(double x)
{
    if (!(x < 4503599627370496.0 && x > -4503599627370496.0)) return x; /* 2^52 on: whole */
    double t = (double)(int64_t)x, d = x - t; /* both exact */
    return d >= 0.5 ? t + 1 : d <= -0.5 ? t - 1 : t;
}

static inline double mib_bytes(double mib)
{
    return whole_bytes(mib * 1048576.0);
}

/* ---------------------------------------------------------------- across the layers */

/* events.c */
void wq_reject(struct wq_state *st, enum tl_reject why, const char *detail);
/* A line left out for lack of memory: rejected, and the input fails when it
 * ends (wq_finish: out of memory), as its answer is not whole. */
void wq_reject_nomem(struct wq_state *st);
/* A task that could not be made: the open table full (max_open_tasks, a
 * configured bound) or no memory for it. */
void wq_reject_no_task(struct wq_state *st);
/* A run that could not be made (run_new): past max_names, or no memory. */
void wq_reject_no_run(struct wq_state *st);
struct task *wq_task_new(struct wq_state *st, uint32_t run, int64_t id);
struct measured *wq_measured_get(struct wq_state *st, struct task *t);
enum tl_err wq_feed(void *state, const char *buf, size_t len);
enum tl_err wq_finish(void *state);
/* A task's record (kind TASK, or TASK_OPEN censored at end_us), in st's
 * scratch record. */
/* Drops the zeros TaskVine writes as a library function call's measured
 * resources (wq.c). */
void wq_unmeasured_function_call(struct tl_record *r);
struct tl_record *wq_task_record(struct wq_state *st, struct task *t, enum tl_record_kind kind,
                                 int64_t end_us);
/* An open task's last state change (µs). */
static inline int64_t wq_task_last_us(const struct task *t)
{
    return t->t_retrieved ? t->t_retrieved : t->t_wret ? t->t_wret : t->t_running ? t->t_running : t->t_waiting;
}

/* events.c's helpers, for workers.c */
void wq_reject_bad_values(struct wq_state *st, const struct bad_value *bad);
void wq_emit(struct wq_state *st, struct tl_record *r);
int32_t wq_intern_span(struct wq_state *st, struct span s);
const char *wq_name_of(const struct wq_state *st, int32_t id);
struct run *wq_run_for(struct wq_state *st, int64_t pid, int64_t ts);
int32_t wq_host_of_addr(struct wq_state *st, int32_t addr);
uint32_t wq_run_index(const struct wq_state *st, const struct run *r);
struct task *wq_task_find(struct wq_state *st, uint32_t run, int64_t id);
/* A box's values into r's metrics (inline: a summary of 100k tasks runs
 * 0.5 % fewer instructions than with a call, callgrind). */
static inline void wq_box_to_record(struct tl_record *r, const struct box *b, enum tl_metric cores,
                                    enum tl_metric mem, enum tl_metric disk, enum tl_metric gpus)
{
    if (b->present & (1u << BOX_CORES)) tl_record_set(r, cores, b->v[BOX_CORES]);
    if (b->present & (1u << BOX_MEMORY)) tl_record_set(r, mem, b->v[BOX_MEMORY]);
    if (b->present & (1u << BOX_DISK)) tl_record_set(r, disk, b->v[BOX_DISK]);
    if (b->present & (1u << BOX_GPUS)) tl_record_set(r, gpus, b->v[BOX_GPUS]);
}

/* A record of a kind the consumer does not use: counted, not built. */
static inline bool wq_skip_kind(struct wq_state *st, enum tl_record_kind k)
{
    if (tl_emit_wants(&st->emit, k)) return false;
    st->stats.records++;
    return true;
}

/* workers.c: WORKER and TRANSFER lines */
void wq_parse_worker(struct wq_state *st, int64_t ts, int64_t pid, const char *p, const char *end);
void wq_parse_transfer(struct wq_state *st, int64_t ts, int64_t pid, const char *p, const char *end);

/* state.c */
enum tl_err wq_save(const void *state, struct tl_buf *b);
enum tl_err wq_restore(void *state, const uint8_t *p, size_t len);

#endif
