/* The `parsl` source: a Parsl monitoring database (monitoring.db) followed
 * while the workflow runs. SQLite rewrites pages in place, so the file
 * cannot be followed like a log: it is read whole whenever it changed
 * (size or modification time, looked at every `poll` ms) and fed to the
 * `parsl` parser, which emits only the tries it has not emitted before
 * (parsers/parsl_db.c), 5 s after they returned (their last resource
 * samples arrive after the return) or when the workflow has completed. A
 * read that catches a page half-written is a rejected `bad_document`, and
 * the next change reads it again.
 *
 * Checkpoint section (after version and 'P'): the parser's state (the
 * tries emitted), so a restart emits each try once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bytes.h"
#include "pipeline/source.h"

#define SETTLE_S "5" /* s: the monitoring writes a try's last samples after it returns */

/* A Parsl database entry's settings (its parser is Parsl's own). */
struct parsl_settings {
    struct src_base base; /* path (monitoring.db) */
    long long poll;       /* ms between looks */
    bool follow;
};

static const struct parsl_settings *settings(const struct tl_source *s)
{
    return s->cfg.config;
}

struct parsl_src {
    struct tl_feed feed;
    int64_t next_ms;          /* the next look at the file */
    int64_t seen_mtime_ns;    /* the file as last read */
    off_t seen_size;
    bool missing_said;
};

/* The `parsl` parser, told to let a try settle for its last samples: the
 * database is read while the workflow writes it (a drive's configure). */
static enum tl_err settle_option(void *ctx, const struct tl_parser *p, void *config, char *err,
                                 size_t errlen)
{
    (void)ctx;
    return tl_options_set(p->options, config, "settle", SETTLE_S, err, errlen);
}

static enum tl_err parsl_src_open(struct tl_source *s, int version, const uint8_t *saved, size_t len,
                                  char *err, size_t errcap)
{
    struct parsl_src *p = s->own;
    if (!p) {
        if (!(p = s->own = calloc(1, sizeof *p))) return TL_ERR_NOMEM;
        if (tl_feed_init(&p->feed, s, NULL)) return TL_ERR_NOMEM;
        p->feed.drive.cfg.parser = tl_parser_find("parsl");
        p->feed.drive.cfg.configure = settle_option;
        p->seen_size = -1;
    }
    if (!saved) return TL_OK;
    /* an empty state: saved before the first read */
    return tl_feed_restore(&p->feed, "parsl", saved, len, false) ? TL_ERR_CORRUPT : TL_OK;
}

/* The whole file, fed; its tries not emitted yet come out. */
static size_t read_whole(struct tl_source *s, struct parsl_src *p)
{
    int fd = open(s->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char *buf = tl_rt_buf(s->rt);
    size_t total = 0;
    ssize_t n;
    while ((n = read(fd, buf, TL_RT_CHUNK)) > 0) {
        tl_feed_bytes(&p->feed, buf, (size_t)n);
        total += (size_t)n;
    }
    close(fd);
    tl_feed_end_document(&p->feed);
    s->bytes += total;
    return total ? total : 1;
}

static size_t parsl_src_step(struct tl_source *s)
{
    struct parsl_src *p = s->own;
    int64_t now = tl_mono_ms();
    if (now < p->next_ms) return 0;
    p->next_ms = now + settings(s)->poll;
    struct stat st;
    if (stat(s->path, &st)) {
        if (!p->missing_said)
            tl_rt_log(s->rt, TL_LOG_WARN, "%s: %s (looked at again every %lld ms)", s->path,
                      strerror(errno), settings(s)->poll);
        p->missing_said = true;
        return 0;
    }
    p->missing_said = false;
    int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    if (mtime == p->seen_mtime_ns && st.st_size == p->seen_size) return 0;
    p->seen_mtime_ns = mtime;
    p->seen_size = st.st_size;
    size_t got = read_whole(s, p);
    if (!settings(s)->follow) s->done = true;
    return got;
}

static int parsl_src_wait_fd(struct tl_source *s, bool *poll_soon)
{
    *poll_soon = true;
    return -1;
}

static enum tl_err parsl_src_save(struct tl_source *s, struct tl_buf *b)
{
    struct parsl_src *p = s->own;
    return tl_feed_save(&p->feed, b);
}

static void parsl_src_self_metrics(struct tl_source *s)
{
    struct tl_summary_input in = {.path = s->path, .bytes = s->bytes};
    tl_feed_self_metrics(&((struct parsl_src *)s->own)->feed, &in, 0);
}

static size_t parsl_src_counters(const struct tl_source *s, struct tl_counter *out, size_t max)
{
    return tl_feed_counters(&((const struct parsl_src *)s->own)->feed, 0, out, max);
}

static void parsl_src_close(struct tl_source *s)
{
    struct parsl_src *p = s->own;
    if (!p) return;
    tl_feed_free(&p->feed);
    free(p);
    s->own = NULL;
}

static enum tl_err parsl_src_validate(const void *config, const char **key, char *err, size_t cap)
{
    const struct parsl_settings *c = config;
    if (!c->base.path) {
        snprintf(err, cap, "`path` is required");
        return TL_ERR_USAGE;
    }
    if (c->poll < 100 || c->poll > 3600000) {
        *key = "poll";
        snprintf(err, cap, "poll: %lld is outside 100..3600000", c->poll);
        return TL_ERR_USAGE;
    }
    return TL_OK;
}

static void parsl_src_check(const void *config, int i, tl_check_say *say, void *ctx)
{
    const struct parsl_settings *s = config;
    const char *path = s->base.path;
    char head[16] = "";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, head, sizeof head) : -1;
    if (fd >= 0) close(fd);
    if (fd < 0)
        say(ctx, s->follow, "sources[%d]: %s: %s", i, path,
            s->follow ? "not there yet; looked at until it is" : strerror(errno));
    else
        say(ctx, n == 16 && !memcmp(head, "SQLite format 3", 16), "sources[%d]: %s: %s", i,
            path, n == 16 && !memcmp(head, "SQLite format 3", 16) ? "an SQLite database"
                                                                      : "not an SQLite database");
}

#define SS(f) offsetof(struct parsl_settings, f)
static const struct tl_option parsl_src_options[] = {
    TL_SRC_PATH_OPTION(struct parsl_settings, "the workflow's monitoring.db"),
    {"poll", TL_OPT_INT, "2000", "ms between looks at the database", SS(poll)},
    {"follow", TL_OPT_BOOL, "true", "keep looking as the workflow runs (false: read it once)",
     SS(follow)},
    {0},
};

const struct tl_source_type tl_source_parsl = {
    .name = "parsl",
    .help = "a Parsl monitoring database, read again whenever it changes; each try once",
    .config_size = sizeof(struct parsl_settings),
    .options = parsl_src_options,
    .ckpt_tag = 'P',
    .validate = parsl_src_validate,
    .open = parsl_src_open,
    .step = parsl_src_step,
    .wait_fd = parsl_src_wait_fd,
    .save = parsl_src_save,
    .self_metrics = parsl_src_self_metrics,
    .counters = parsl_src_counters,
    .close = parsl_src_close,
    .check = parsl_src_check,
};
