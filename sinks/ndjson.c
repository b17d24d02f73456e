/* The `ndjson` sink: every finished task attempt as one JSON object per
 * line, for a notebook reading a run as it happens
 * (`pd.read_json(path, lines=True)`), and each window summary as an object
 * with its count and sum.
 *
 * It is also the example of ARCHITECTURE.md's "Adding a sink": a sink that
 * does not speak line protocol takes records and windows (the `record` and
 * `window` callbacks) instead of `lines`, keeps its own counters, and is
 * this file plus one line in sinks.c.
 *
 * Fields: kind ("task" or "window"), source, workflow, category, host,
 * worker, result, task_id, attempt, exit_code, end (ns since the epoch) and
 * every metric present under its canonical name (wall_time_s,
 * max_rss_bytes, ...). An absent value is absent, never 0. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/sketch.h"
#include "sinks/sink.h"

struct ndjson_config {
    const char *path;
    bool windows;
};

#define NC(f) offsetof(struct ndjson_config, f)
static const struct tl_option ndjson_options[] = {
    {"path", TL_OPT_STRING, NULL, "file to append one JSON object per task attempt to", NC(path)},
    {"windows", TL_OPT_BOOL, "false", "also one object per window summary (count, sum)",
     NC(windows)},
    {0},
};

struct ndjson_sink {
    FILE *out;
    const char *path;
    const struct tl_log *log;
    struct tl_buf line;
    bool windows, failed;
    uint64_t tasks, windows_written;
};

static enum tl_err ndjson_validate(const void *config, const char **key, char *err, size_t cap)
{
    return tl_sink_path_required(((const struct ndjson_config *)config)->path, key, err, cap);
}

static enum tl_err ndjson_open(void **state, const void *config, const struct tl_sink_env *env,
                               char *err, size_t errlen)
{
    const struct ndjson_config *c = config;
    struct ndjson_sink *n = calloc(1, sizeof *n);
    if (!n) return TL_ERR_NOMEM;
    if (!(n->out = fopen(c->path, "a"))) {
        snprintf(err, errlen, "%s: %s", c->path, strerror(errno));
        free(n);
        return TL_ERR_OPEN;
    }
    n->path = c->path;
    n->log = env->log;
    n->windows = c->windows;
    *state = n;
    return TL_OK;
}

static void put_str(struct tl_buf *b, const char *key, const char *v)
{
    if (!v) return;
    tl_buf_printf(b, ",\"%s\":", key);
    tl_buf_put_json_string(b, v);
}

static void put_num(struct tl_buf *b, const char *key, double v)
{
    tl_buf_printf(b, ",\"%s\":", key);
    tl_buf_put_double(b, v);
}

static void emit_line(struct ndjson_sink *n)
{
    tl_buf_puts(&n->line, "}\n");
    if (n->line.oom || fwrite(n->line.data, 1, n->line.len, n->out) != n->line.len)
        n->failed = true;
    n->line.len = 0;
}

static void ndjson_record(void *state, const struct tl_record *r)
{
    struct ndjson_sink *n = state;
    if (r->kind != TL_REC_TASK) return;
    struct tl_buf *b = &n->line;
    tl_buf_puts(b, "{\"kind\":\"task\"");
    put_str(b, "source", r->source);
    put_str(b, "workflow", r->workflow);
    put_str(b, "category", r->category);
    put_str(b, "host", r->host);
    put_str(b, "worker", r->worker);
    put_str(b, "result", r->result);
    if (r->task_id >= 0) tl_buf_printf(b, ",\"task_id\":%lld", (long long)r->task_id);
    if (r->attempt > 0) tl_buf_printf(b, ",\"attempt\":%d", (int)r->attempt);
    if (r->has_exit_code) tl_buf_printf(b, ",\"exit_code\":%d", (int)r->exit_code);
    if (r->time_ns) tl_buf_printf(b, ",\"end\":%lld", (long long)r->time_ns);
    for (int w = 0; w < TL_MASK_WORDS; w++)
        for (uint64_t bits = r->present[w]; bits; bits &= bits - 1) {
            int m = w * 64 + __builtin_ctzll(bits);
            put_num(b, tl_metric_info[m].name, r->v[m]);
        }
    emit_line(n);
    n->tasks++;
}

static void ndjson_window(void *state, const struct tl_agg_window *w, const struct tl_agg_opts *ao,
                          const char *window, const char *scope)
{
    struct ndjson_sink *n = state;
    if (!n->windows) return;
    struct tl_buf *b = &n->line;
    tl_buf_puts(b, "{\"kind\":\"window\"");
    put_str(b, "window", window);
    put_str(b, "scope", scope);
    struct tl_buf part = {0};
    for (int i = 0; i < ao->nby; i++) put_str(b, ao->by[i], tl_agg_key_part(w->group->key, i, &part));
    tl_buf_free(&part);
    put_str(b, "metric", tl_metric_info[w->metric].name);
    tl_buf_printf(b, ",\"end\":%lld", (long long)w->end_ns);
    tl_buf_printf(b, ",\"count\":%llu", (unsigned long long)w->sketch->count);
    put_num(b, "sum", tl_sketch_sum(w->sketch));
    emit_line(n);
    n->windows_written++;
}

static enum tl_err ndjson_flush(void *state)
{
    struct ndjson_sink *n = state;
    if (fflush(n->out)) n->failed = true;
    return n->failed ? TL_ERR_IO : TL_OK;
}

static enum tl_err ndjson_sync(void *state)
{
    struct ndjson_sink *n = state;
    if (fflush(n->out) || (fsync(fileno(n->out)) && errno != EINVAL)) n->failed = true;
    return n->failed ? TL_ERR_IO : TL_OK;
}

static size_t ndjson_counters(const void *state, struct tl_counter *out, size_t max)
{
    const struct ndjson_sink *n = state;
    if (max < 2) return 0;
    out[0] = (struct tl_counter){"ndjson_tasks", n->tasks, false};
    out[1] = (struct tl_counter){"ndjson_windows", n->windows_written, false};
    return 2;
}

static int ndjson_finish(void *state, long drain_ms)
{
    struct ndjson_sink *n = state;
    (void)drain_ms;
    if (fclose(n->out)) n->failed = true;
    n->out = NULL;
    if (!n->failed) return 0;
    tl_log(n->log, TL_LOG_ERROR, "writing %s failed", n->path);
    return TL_SINK_FAILED;
}

static void ndjson_close(void *state)
{
    struct ndjson_sink *n = state;
    if (!n) return;
    if (n->out) fclose(n->out);
    tl_buf_free(&n->line);
    free(n);
}

static void ndjson_check(const void *config, int index, tl_check_say *say, void *ctx)
{
    tl_sink_check_path("ndjson", ((const struct ndjson_config *)config)->path, index, say, ctx);
}

const struct tl_sink_type tl_sink_ndjson = {
    .name = "ndjson",
    .help = "task attempts as JSON lines (and, optionally, window counts)",
    .config_size = sizeof(struct ndjson_config),
    .options = ndjson_options,
    .validate = ndjson_validate,
    .open = ndjson_open,
    .record = ndjson_record,
    .window = ndjson_window,
    .flush = ndjson_flush,
    .sync = ndjson_sync,
    .counters = ndjson_counters,
    .finish = ndjson_finish,
    .close = ndjson_close,
    .check = ndjson_check,
};
