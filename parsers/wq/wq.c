/* Work Queue / TaskVine transaction log parser: the plugin (wq_internal.h
 * says which file holds which layer).
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
#include "parsers/wq/wq_internal.h"

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

static const char *const wq_counter_names[WQC_COUNT] = {
#define WQ_C_NAME(e, n) n,
    WQ_COUNTERS(WQ_C_NAME)
#undef WQ_C_NAME
};

/* ---------------------------------------------------------------- plugin */

static enum tl_err wq_open(void **state, const void *config, const struct tl_emit *emit_cb, char *err, size_t errcap)
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

static size_t wq_counters(const void *state, struct tl_counter *out, size_t max)
{
    return tl_counters_fill(out, max, wq_counter_names, ((const struct wq_state *)state)->counters, WQC_COUNT);
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

/* The tasks open now (struct tl_parser.open_tasks): for `tasklens top`. */
static void wq_open_tasks(void *state, void (*each)(void *ctx, const struct tl_record *r), void *ctx)
{
    struct wq_state *st = state;
    for (size_t i = 0; i < st->open.cap; i++) {
        if (st->open.slots[i].key == TL_MAP64_EMPTY) continue;
        struct task *t = &st->tasks[st->open.slots[i].val];
        struct tl_record *r = wq_task_record(st, t, TL_REC_TASK_OPEN, wq_task_last_us(t));
        r->source = "wq";
        each(ctx, r);
    }
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
    .open_tasks = wq_open_tasks,
    .messages = TL_MSG_LINES,
};

/* A TaskVine function call runs inside a library's slot: it is allocated
 * nothing of its own (cores, memory and disk 0) and nothing monitors it, so
 * the zeros the log writes as its measured cores, memory and disk are no
 * measurement (a running process has memory): left absent, never "used 0
 * cores, 0 B" (lnni's 231 parsl-default calls). */
void wq_unmeasured_function_call(struct tl_record *r)
{
    static const enum tl_metric alloc[] = {TL_M_ALLOC_CORES, TL_M_ALLOC_MEMORY_BYTES, TL_M_ALLOC_DISK_BYTES};
    for (size_t i = 0; i < sizeof alloc / sizeof *alloc; i++)
        if (!tl_record_has(r, alloc[i]) || r->v[alloc[i]] != 0) return;
    static const enum tl_metric measured[] = {TL_M_CORES, TL_M_MAX_RSS_BYTES, TL_M_DISK_BYTES,
                                              TL_M_VIRTUAL_MEMORY_BYTES, TL_M_CORES_AVG, TL_M_GPUS};
    for (size_t i = 0; i < sizeof measured / sizeof *measured; i++)
        if (tl_record_has(r, measured[i]) && r->v[measured[i]] == 0) tl_record_unset(r, measured[i]);
}
