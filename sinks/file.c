/* The `file` sink: line protocol appended to a file, or written to stdout
 * ('-'). Durable means fsync'ed, where the file can be synced (a pipe, a
 * terminal or /dev/null have nothing to make durable). A failed write is
 * remembered and said at the end; the runtime never checkpoints past it. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sinks/lineproto.h"
#include "sinks/sink.h"

struct file_config {
    const char *path;
    bool append;
};

#define FS(f) offsetof(struct file_config, f)
static const struct tl_option file_options[] = {
    {"path", TL_OPT_STRING, NULL, "file to write line protocol to ('-': stdout)", FS(path)},
    {"append", TL_OPT_BOOL, "true", "add to the file (false: start it anew)", FS(append)},
    {0},
};

struct file_sink {
    FILE *out;
    const char *path;
    const struct tl_log *log;
    bool failed;
    int error; /* errno of the first failure, said at the end */
    uint64_t points;
};

/* Remembers the first failure's cause. */
static void failed(struct file_sink *f)
{
    if (!f->failed) f->error = errno;
    f->failed = true;
}

static enum tl_err file_validate(const void *config, const char **key, char *err, size_t errlen)
{
    return tl_sink_path_required(((const struct file_config *)config)->path, key, err, errlen);
}

static bool file_configured(const void *config)
{
    return ((const struct file_config *)config)->path != NULL;
}

static enum tl_err file_open(void **state, const void *config, const struct tl_sink_env *env,
                             char *err, size_t errlen)
{
    const struct file_config *c = config;
    bool is_stdout = !strcmp(c->path, "-");
    FILE *out = is_stdout ? stdout : fopen(c->path, c->append ? "a" : "w");
    if (!out) {
        snprintf(err, errlen, "%s: %s", c->path, strerror(errno));
        return TL_ERR_OPEN;
    }
    struct file_sink *f = calloc(1, sizeof *f);
    if (!f) {
        if (!is_stdout) fclose(out);
        return TL_ERR_NOMEM;
    }
    *f = (struct file_sink){.out = out, .path = is_stdout ? "stdout" : c->path, .log = env->log};
    *state = f;
    return TL_OK;
}

static enum tl_err file_points(void *state, const char *lp, size_t len, uint32_t nlines)
{
    struct file_sink *f = state;
    if (fwrite(lp, 1, len, f->out) != len || fflush(f->out)) failed(f);
    else f->points += nlines;
    return f->failed ? TL_ERR_IO : TL_OK;
}

static enum tl_err file_flush(void *state)
{
    struct file_sink *f = state;
    if (fflush(f->out)) failed(f);
    return f->failed ? TL_ERR_IO : TL_OK;
}

/* fsync, where the file can be synced: /dev/null, a pipe or a terminal
 * cannot (EINVAL), and have nothing to make durable. */
static enum tl_err file_sync(void *state)
{
    struct file_sink *f = state;
    if (fflush(f->out) || (f->out != stdout && fsync(fileno(f->out)) && errno != EINVAL &&
                           errno != ENOTSUP))
        failed(f);
    return f->failed ? TL_ERR_IO : TL_OK;
}

static size_t file_counters(const void *state, struct tl_counter *out, size_t max)
{
    const struct file_sink *f = state;
    if (max < 1) return 0;
    out[0] = (struct tl_counter){"points_written", f->points, false};
    return 1;
}

static int file_finish(void *state, long drain_ms)
{
    struct file_sink *f = state;
    (void)drain_ms;
    if (fflush(f->out) || (f->out != stdout && fclose(f->out))) failed(f);
    f->out = NULL;
    if (!f->failed) return 0;
    tl_log(f->log, TL_LOG_ERROR, "writing %s failed: %s", f->path, strerror(f->error ? f->error : EIO));
    return TL_SINK_FAILED;
}

static void file_close(void *state)
{
    struct file_sink *f = state;
    if (f && f->out && f->out != stdout) fclose(f->out);
    free(f);
}

static void file_check(const void *config, int index, tl_check_say *say, void *ctx)
{
    const struct file_config *c = config;
    if (!strcmp(c->path, "-")) {
        say(ctx, TL_CHECK_OK, "sinks[%d] file: stdout", index);
        return;
    }
    tl_sink_check_path("file", c->path, index, say, ctx);
}

const struct tl_sink_type tl_sink_file = {
    .name = "file",
    .help = "line protocol into a file or stdout",
    .config_size = sizeof(struct file_config),
    .options = file_options,
    .validate = file_validate,
    .configured = file_configured,
    .open = file_open,
    .codec = &tl_codec_lineproto,
    .points = file_points,
    .flush = file_flush,
    .sync = file_sync,
    .counters = file_counters,
    .finish = file_finish,
    .close = file_close,
    .check = file_check,
};
