/* The `fifo` source: a named pipe (mkfifo) that writers open, write task
 * records to, and close -- a workflow tool that pipes its log, or several
 * one after the other. It stays open across writers (it holds a write end
 * itself, so a closing writer is not the end) unless `follow: false`,
 * when the first writer's end ends it. Not resumable: a pipe has no
 * position.
 *
 * Also the smallest complete source, and the example ARCHITECTURE.md walks
 * through: this file and its line in sources.c are all it took. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/source.h"

/* A named pipe's settings. */
struct fifo_settings {
    struct src_base base; /* path (the pipe), parser */
    bool follow;
};

static bool follows(const struct tl_source *s)
{
    return ((const struct fifo_settings *)s->cfg.config)->follow;
}

struct fifo_src {
    struct tl_feed feed;
    int fd;      /* the read end */
    int keep_fd; /* our write end (follow): no EOF between writers */
    bool written; /* a writer came: an end now is its end, not "none yet" */
};

static enum tl_err fifo_open(struct tl_source *s, int version, const uint8_t *saved, size_t len, char *err,
                             size_t errcap)
{
    struct fifo_src *f = s->own;
    if (!f) {
        if (!(f = s->own = calloc(1, sizeof *f))) return TL_ERR_NOMEM;
        tl_feed_init(&f->feed, s, NULL);
        f->fd = f->keep_fd = -1;
    }
    struct stat st;
    if (stat(s->path, &st) || !S_ISFIFO(st.st_mode)) {
        snprintf(err, errcap, "%s: %s", s->path,
                 errno == ENOENT ? "does not exist (make it with mkfifo)" : "not a named pipe");
        return TL_ERR_OPEN;
    }
    if ((f->fd = open(s->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0 ||
        (follows(s) && (f->keep_fd = open(s->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0)) {
        snprintf(err, errcap, "%s: %s", s->path, strerror(errno));
        return TL_ERR_OPEN;
    }
    return TL_OK;
}

static size_t fifo_step(struct tl_source *s)
{
    struct fifo_src *f = s->own;
    char *buf = tl_rt_buf(s->rt);
    ssize_t n = read(f->fd, buf, TL_RT_CHUNK);
    if ((n == 0 && f->written) || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        s->done = true; /* without follow: the writer closed */
        tl_feed_finish(&f->feed);
        return 0;
    }
    if (n <= 0) return 0;
    f->written = true;
    s->bytes += (size_t)n;
    f->feed.follows = follows(s); /* a reload may change it */
    if (tl_feed_bytes(&f->feed, buf, (size_t)n)) s->done = true;
    return (size_t)n;
}

static int fifo_wait_fd(struct tl_source *s, bool *poll_soon)
{
    struct fifo_src *f = s->own;
    if (f->keep_fd >= 0 || f->written) return f->fd;
    *poll_soon = true; /* no writer yet: poll() would say "hung up" at once */
    return -1;
}

static void fifo_self_metrics(struct tl_source *s)
{
    struct tl_summary_input in = {.path = s->path, .bytes = s->bytes};
    tl_feed_self_metrics(&((struct fifo_src *)s->own)->feed, &in, 0);
}

static size_t fifo_counters(const struct tl_source *s, struct tl_counter *out, size_t max)
{
    return tl_feed_counters(&((const struct fifo_src *)s->own)->feed, 0, out, max);
}

static void fifo_close(struct tl_source *s)
{
    struct fifo_src *f = s->own;
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    if (f->keep_fd >= 0) close(f->keep_fd);
    tl_feed_free(&f->feed);
    free(f);
    s->own = NULL;
}

static enum tl_err fifo_validate(const void *config, const char **key, char *err, size_t cap)
{
    if (((const struct fifo_settings *)config)->base.path) return TL_OK;
    snprintf(err, cap, "`path` is required");
    return TL_ERR_USAGE;
}

static void fifo_check(const void *config, int i, tl_check_say *say, void *ctx)
{
    const char *path = ((const struct fifo_settings *)config)->base.path;
    struct stat st;
    bool ok = !stat(path, &st) && S_ISFIFO(st.st_mode);
    say(ctx, ok, "sources[%d]: %s: %s", i, path, ok ? "a named pipe" : "not a named pipe");
}

static const struct tl_option fifo_options[] = {
    TL_SRC_PATH_OPTION(struct fifo_settings, "the named pipe (mkfifo)"),
    {"follow", TL_OPT_BOOL, "true", "stay open for the next writer (false: stop at the first end)",
     offsetof(struct fifo_settings, follow)},
    TL_SRC_PARSER_OPTIONS(struct fifo_settings, "input format, or auto (detected)"),
    {0},
};

static bool fifo_open_tasks(struct tl_source *s, void (*each)(void *ctx, const struct tl_record *r),
                             void *ctx)
{
    struct fifo_src *f = s->own;
    return f && tl_feed_open_tasks(&f->feed, each, ctx);
}

const struct tl_source_type tl_source_fifo = {
    .name = "fifo",
    .help = "a named pipe, across writers; not resumable",
    .config_size = sizeof(struct fifo_settings),
    .options = fifo_options,
    .validate = fifo_validate,
    .open = fifo_open,
    .step = fifo_step,
    .wait_fd = fifo_wait_fd,
    .self_metrics = fifo_self_metrics,
    .counters = fifo_counters,
    .close = fifo_close,
    .open_tasks = fifo_open_tasks,
    .check = fifo_check,
};
