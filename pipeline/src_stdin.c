/* The `stdin` source: a pipe into tasklens (`zcat run.log.gz | tasklens run
 * -c stdin.yaml`), through one parser, until its end. It cannot be resumed
 * (nothing identifies a position in a pipe), so it has no checkpoint
 * section. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/source.h"

static enum tl_err stdin_expand(struct tl_runtime *rt, const struct src_settings *cfg)
{
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    return tl_rt_add_source(rt, cfg, NULL, "-");
}

static enum tl_err stdin_open(struct tl_source *s, int version, const uint8_t *saved, size_t len, char *err,
                              size_t errcap)
{
    struct tl_feed *f = s->own;
    if (!f) {
        if (!(f = s->own = calloc(1, sizeof *f))) return TL_ERR_NOMEM;
        tl_feed_init(f, s, NULL);
    }
    return TL_OK;
}

static size_t stdin_step(struct tl_source *s)
{
    struct tl_feed *f = s->own;
    char *buf = tl_rt_buf(s->rt);
    ssize_t n = read(0, buf, TL_RT_CHUNK);
    size_t got = n > 0 ? (size_t)n : 0;
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) s->done = true;
    if (got) {
        s->bytes += got;
        if (tl_feed_bytes(f, buf, got)) {
            s->done = true;
            return 0;
        }
    }
    if (s->done) tl_feed_finish(f);
    return got;
}

static int stdin_wait_fd(struct tl_source *s, bool *poll_soon)
{
    return 0;
}

static void stdin_self_metrics(struct tl_source *s)
{
    struct tl_summary_input in = {.path = "-", .bytes = s->bytes};
    tl_feed_self_metrics(s->own, &in, 0);
}

static size_t stdin_counters(const struct tl_source *s, struct tl_counter *out, size_t max)
{
    return tl_feed_counters(s->own, 0, out, max);
}

static void stdin_close(struct tl_source *s)
{
    if (!s->own) return;
    tl_feed_free(s->own);
    free(s->own);
    s->own = NULL;
}

/* Standard input's settings: its format only. */
struct stdin_settings {
    struct src_base base; /* parser (no path) */
};

static void stdin_check(const void *config, int i, tl_check_say *say, void *ctx)
{
    say(ctx, true, "sources[%d]: stdin (parser %s)", i, ((const struct stdin_settings *)config)->base.parser);
}

static const struct tl_option stdin_options[] = {
    TL_SRC_PARSER_OPTIONS(struct stdin_settings, "input format, or auto (detected)"),
    {0},
};

static bool stdin_open_tasks(struct tl_source *s, void (*each)(void *ctx, const struct tl_record *r),
                             void *ctx)
{
    struct tl_feed *f = s->own;
    return f && tl_feed_open_tasks(f, each, ctx);
}

const struct tl_source_type tl_source_stdin = {
    .name = "stdin",
    .help = "standard input, until its end; not resumable",
    .config_size = sizeof(struct stdin_settings),
    .options = stdin_options,
    .expand = stdin_expand,
    .open = stdin_open,
    .step = stdin_step,
    .wait_fd = stdin_wait_fd,
    .self_metrics = stdin_self_metrics,
    .counters = stdin_counters,
    .close = stdin_close,
    .open_tasks = stdin_open_tasks,
    .check = stdin_check,
};
