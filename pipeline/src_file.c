/* The `file` source: a log read once (`follow: false`) or followed like
 * `tail -F` (rotation, truncation, a file that appears later, a rotated-away
 * file read until quiet: ingest/follow.c), through one parser.
 *
 * Read once and followed are one source because they are one mechanism: a
 * file read once is a followed file that stops at its end, and both resume
 * from a checkpoint the same way (a file read to its end and unchanged is
 * not read again).
 *
 * Checkpoint section (after version and 'F'):
 *   u8 flags (1 done, 2 finished) | str parser name ("" none) | dev | ino |
 *   offset | tail hash | u8 mid_line | head hash | head length | size
 *   (version 2 on) | varint len | parser state */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bytes.h"
#include "ingest/follow.h"
#include "pipeline/source.h"

#define REOPEN_MS 5000

/* A file entry's settings. */
struct file_settings {
    struct src_base base; /* path (a file or a glob), parser */
    bool follow;
    const char *from;
    const char *rotated;    /* glob of rotated names (NULL: the path followed by anything) */
    long long rotate_quiet; /* ms a rotated-away file must be quiet before it is left */
};

static const struct file_settings *settings(const struct tl_source *s)
{
    return s->cfg.config;
}

struct file_src {
    struct tl_feed feed;
    struct tl_follow *fl;
    int64_t reopen_ms;           /* could not be opened: try again then (0: no) */
    uint64_t reopen_errors_seen; /* the follower's failed reopens, at the last look */
    uint64_t gaps_seen;          /* the follower's gaps, said */
    bool reopen_said;            /* ... said, until the file reads again */
    struct tl_follow_pos reopen_pos; /* where to resume it, from the checkpoint */
    bool has_reopen_pos;
};

static void say_resume(struct tl_source *s, struct file_src *f, const struct tl_follow_pos *at)
{
    struct tl_runtime *rt = s->rt;
    struct tl_follow_stats st = tl_follow_stats(f->fl);
    if (st.resume == TL_RESUME_SAME)
        tl_rt_log(rt, TL_LOG_INFO, "%s: resuming at byte %llu", s->path,
                  (unsigned long long)tl_follow_position(f->fl).offset);
    else if (st.resume == TL_RESUME_ROTATED)
        tl_rt_log(rt, TL_LOG_INFO, "%s: rotated while stopped; reading the rest of %s%s first%s",
                  s->path, st.rotated_name, st.rotated_compressed ? " (decompressed)" : "",
                  st.chain_files ? ", then the files rotated after it" : "");
    if (st.resume == TL_RESUME_REPLACED && at)
        tl_rt_log(rt, TL_LOG_WARN, "%s: the checkpointed file is not at this path any more, and "
                  "its content was not found among the rotated files (%s); lost: %llu bytes known "
                  "unread at the checkpoint, and whatever was written to it after (self-metrics "
                  "gaps, gap_bytes); reading the path from the start",
                  s->path, settings(s)->rotated ? settings(s)->rotated : "its name followed by anything",
                  (unsigned long long)st.gap_bytes);
    f->gaps_seen = st.gaps;
    if (st.chain_skipped)
        tl_rt_log(rt, TL_LOG_WARN, "%s: %llu rotated files could not be read or decoded whole: "
                  "their tasks are missing (self-metric gaps)", s->path,
                  (unsigned long long)st.chain_skipped);
}

/* Opens the follower at `at` (NULL: per `from`). A file there but not
 * readable now (permissions, a disk error) only makes this source wait:
 * tried again every few seconds, said once. */
static enum tl_err follow_open(struct tl_source *s, const struct tl_follow_pos *at, char *why, size_t whycap)
{
    struct file_src *f = s->own;
    char err[512];
    if (!tl_followable(s->path, why, whycap)) return TL_ERR_OPEN;
    struct tl_follow_opts fo = {.from_end = !strcmp(settings(s)->from, "end"), .rotated = settings(s)->rotated,
                                .quiet_ms = settings(s)->rotate_quiet ? (int)settings(s)->rotate_quiet : -1};
    if (tl_follow_open(s->path, &fo, at, &f->fl, err, sizeof err)) {
        if (!f->reopen_ms)
            tl_rt_log(s->rt, TL_LOG_WARN, "%s (tried again every %d s; the other sources go on)",
                      err, REOPEN_MS / 1000);
        f->reopen_ms = tl_mono_ms() + REOPEN_MS;
        if (at) {
            f->reopen_pos = *at;
            f->has_reopen_pos = true;
        }
        return TL_OK;
    }
    if (f->reopen_ms) tl_rt_log(s->rt, TL_LOG_INFO, "%s: readable now", s->path);
    f->reopen_ms = 0;
    f->has_reopen_pos = false;
    say_resume(s, f, at);
    return TL_OK;
}

/* The saved section: the parser state restored, the position into *pos. */
static bool restore(struct tl_source *s, int version, const uint8_t *p, const uint8_t *end,
                    struct tl_follow_pos *pos, uint8_t *flags)
{
    struct file_src *f = s->own;
    const char *pname;
    size_t plen;
    uint64_t slen, head_len = 0;
    uint8_t mid;
    char name[64];
    if (!tl_get_u8(&p, end, flags) || !tl_get_str(&p, end, 63, &pname, &plen) ||
        !tl_get_varint(&p, end, &pos->dev) || !tl_get_varint(&p, end, &pos->ino) ||
        !tl_get_varint(&p, end, &pos->offset) || !tl_get_varint(&p, end, &pos->tail_hash) ||
        !tl_get_u8(&p, end, &mid))
        return false;
    /* version 1 had no content identity: found by inode only */
    if (version >= 2 && (!tl_get_varint(&p, end, &pos->head_hash) ||
                         !tl_get_varint(&p, end, &head_len) || head_len > 4096 ||
                         !tl_get_varint(&p, end, &pos->size)))
        return false;
    if (!tl_get_varint(&p, end, &slen) || slen != (uint64_t)(end - p)) return false;
    pos->head_len = (uint32_t)head_len;
    pos->mid_line = mid;
    memcpy(name, pname, plen);
    name[plen] = '\0';
    if ((plen || slen) && tl_feed_restore(&f->feed, name, p, (size_t)slen, *flags & 2))
        return false;
    return true;
}

static enum tl_err file_open(struct tl_source *s, int version, const uint8_t *saved, size_t len, char *err,
                             size_t errcap)
{
    struct file_src *f = s->own;
    if (!f) {
        if (!(f = s->own = calloc(1, sizeof *f))) return TL_ERR_NOMEM;
        if (tl_feed_init(&f->feed, s, NULL)) return TL_ERR_NOMEM;
    }
    if (!saved) return follow_open(s, NULL, err, errcap);
    struct tl_follow_pos pos = {0};
    uint8_t flags;
    if (!restore(s, version, saved, saved + len, &pos, &flags)) return TL_ERR_CORRUPT;
    enum tl_err rc = follow_open(s, &pos, err, errcap);
    /* a file read to its end before: done, unless it is another file now */
    if (!rc && (flags & 1) && f->fl && tl_follow_stats(f->fl).resume == TL_RESUME_SAME)
        s->done = true;
    return rc;
}

/* What the follower says about rotations it could not follow, once. */
static void say_follow_trouble(struct tl_source *s, struct file_src *f, size_t got)
{
    int why;
    uint64_t reopen_errors = tl_follow_reopen_errors(f->fl, &why);
    if (reopen_errors > f->reopen_errors_seen && !f->reopen_said) {
        /* rotated into a file it cannot read: said once, counted in the
         * self-metrics (open_errors), read when it can be */
        tl_rt_log(s->rt, TL_LOG_WARN, "%s: the file now at this path cannot be read (%s); waiting "
                  "until it can (self-metric open_errors)", s->path, strerror(why));
        f->reopen_said = true;
    }
    if (got && f->reopen_said) {
        tl_rt_log(s->rt, TL_LOG_INFO, "%s: readable again", s->path);
        f->reopen_said = false;
    }
    f->reopen_errors_seen = reopen_errors;
    if (tl_follow_gaps(f->fl) > f->gaps_seen) { /* a rotated file that would not decode */
        struct tl_follow_stats fst = tl_follow_stats(f->fl);
        tl_rt_log(s->rt, TL_LOG_WARN, "%s: %llu rotated files could not be read or decoded "
                  "whole: their tasks are missing (self-metric gaps)", s->path,
                  (unsigned long long)fst.chain_skipped);
        f->gaps_seen = fst.gaps;
    }
}

/* follow_open again (a retry, a reopen), saying why it failed. */
static enum tl_err follow_reopen(struct tl_source *s, const struct tl_follow_pos *at)
{
    char err[512];
    enum tl_err rc = follow_open(s, at, err, sizeof err);
    if (rc) tl_rt_log(s->rt, TL_LOG_ERROR, "%s", err);
    return rc;
}

static size_t file_step(struct tl_source *s)
{
    struct file_src *f = s->own;
    if (!f->fl) { /* not readable yet: its time to try again? */
        if (f->reopen_ms && tl_mono_ms() >= f->reopen_ms)
            follow_reopen(s, f->has_reopen_pos ? &f->reopen_pos : NULL);
        return 0;
    }
    char *buf = tl_rt_buf(s->rt);
    size_t got = 0;
    if (tl_follow_read(f->fl, buf, TL_RT_CHUNK, &got)) {
        tl_rt_log(s->rt, TL_LOG_ERROR, "%s: read failed: %s", s->path, strerror(errno));
        got = 0;
    }
    say_follow_trouble(s, f, got);
    if (!got && !settings(s)->follow) s->done = true;
    if (got) {
        s->bytes += got;
        f->feed.follows = settings(s)->follow; /* a reload may change it */
        if (tl_feed_bytes(&f->feed, buf, got)) {
            s->done = true;
            return 0;
        }
    }
    if (s->done) tl_feed_finish(&f->feed);
    return got;
}

static int file_wait_fd(struct tl_source *s, bool *poll_soon)
{
    struct file_src *f = s->own;
    if (f->fl && tl_follow_uses_inotify(f->fl)) return tl_follow_fd(f->fl);
    *poll_soon = true;
    return -1;
}

static void file_woken(struct tl_source *s)
{
    struct file_src *f = s->own;
    if (f->fl) tl_follow_wait(f->fl, 0);
}

static enum tl_err file_save(struct tl_source *s, struct tl_buf *b)
{
    struct file_src *f = s->own;
    const struct tl_parser *parser = tl_feed_parser(&f->feed);
    tl_put_u8(b, (uint8_t)(s->done | tl_feed_finished(&f->feed) << 1));
    tl_put_str(b, parser ? parser->name : "");
    struct tl_follow_pos pos = {0};
    if (f->fl) pos = tl_follow_position(f->fl);
    else if (f->has_reopen_pos) pos = f->reopen_pos; /* not reopened yet: where it will resume */
    tl_put_varint(b, pos.dev);
    tl_put_varint(b, pos.ino);
    tl_put_varint(b, pos.offset);
    tl_put_varint(b, pos.tail_hash);
    tl_put_u8(b, pos.mid_line);
    tl_put_varint(b, pos.head_hash);
    tl_put_varint(b, pos.head_len);
    tl_put_varint(b, pos.size);
    struct tl_buf st = {0};
    enum tl_err rc = tl_feed_save(&f->feed, &st);
    if (rc) {
        tl_buf_free(&st);
        return rc;
    }
    tl_put_varint(b, st.len);
    tl_buf_append(b, st.data, st.len);
    tl_buf_free(&st);
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

static void file_self_metrics(struct tl_source *s)
{
    struct file_src *f = s->own;
    struct tl_summary_input in = {.path = s->path, .bytes = s->bytes};
    uint64_t lag = 0;
    if (f->fl) {
        struct tl_follow_stats fst = tl_follow_stats(f->fl);
        in.open_errors = fst.reopen_errors;
        in.gaps = fst.gaps;
        in.gap_bytes = fst.gap_bytes;
        lag = fst.lag;
    }
    tl_feed_self_metrics(&f->feed, &in, lag);
}

static size_t file_counters(const struct tl_source *s, struct tl_counter *out, size_t max)
{
    const struct file_src *f = s->own;
    return tl_feed_counters(&f->feed, f->fl ? tl_follow_stats(f->fl).lag : 0, out, max);
}

/* SIGHUP: the file reopened where it was (a rotation by hand). */
static void file_reopen(struct tl_source *s)
{
    struct file_src *f = s->own;
    if (!f->fl) return;
    struct tl_follow_pos pos = tl_follow_position(f->fl);
    tl_follow_close(f->fl);
    f->fl = NULL;
    if (follow_reopen(s, &pos)) s->done = true;
}

static void file_close(struct tl_source *s)
{
    struct file_src *f = s->own;
    if (!f) return;
    tl_follow_close(f->fl);
    tl_feed_free(&f->feed);
    free(f);
    s->own = NULL;
}

static enum tl_err file_validate(const void *config, const char **key, char *err, size_t cap)
{
    const struct file_settings *c = config;
    if (!c->base.path) {
        snprintf(err, cap, "`path` is required");
        return TL_ERR_USAGE;
    }
    if (strcmp(c->from, "beginning") && strcmp(c->from, "end")) {
        *key = "from";
        snprintf(err, cap, "from: '%s' is not beginning or end", c->from);
        return TL_ERR_USAGE;
    }
    if (c->rotate_quiet < 0 || c->rotate_quiet > 600000) {
        *key = "rotate_quiet";
        snprintf(err, cap, "rotate_quiet: %lld is outside 0..600000", c->rotate_quiet);
        return TL_ERR_USAGE;
    }
    return TL_OK;
}

/* Each match: there, followable, its size and format. */
static void file_check(const void *config, int i, tl_check_say *say, void *ctx)
{
    const struct file_settings *s = config;
    glob_t g;
    int gr = glob(s->base.path, GLOB_BRACE, NULL, &g);
    size_t n = gr == 0 ? g.gl_pathc : 0;
    if (!n) {
        bool wild = strpbrk(s->base.path, "*?[{") != NULL;
        say(ctx, s->follow, "sources[%d]: %s: %s", i, s->base.path,
            !s->follow ? "does not exist"
            : wild     ? "matches no file yet (expanded again on SIGHUP)"
                       : "does not exist yet; it is waited for");
    }
    for (size_t k = 0; k < n; k++) {
        const char *p = g.gl_pathv[k];
        char why[1024];
        if (!tl_followable(p, why, sizeof why)) say(ctx, false, "sources[%d]: %s", i, why);
        else tl_source_check_file(&s->base, i, p, say, ctx);
    }
    if (gr == 0) globfree(&g);
}

#define SS(f) offsetof(struct file_settings, f)
static const struct tl_option file_options[] = {
    TL_SRC_PATH_OPTION(struct file_settings, "a file, or a glob (expanded at start and on SIGHUP)"),
    {"follow", TL_OPT_BOOL, "true", "keep reading as the file grows (tail -F)", SS(follow)},
    {"from", TL_OPT_STRING, "beginning", "beginning or end: where a first start reads from",
     SS(from)},
    {"rotated", TL_OPT_STRING, NULL,
     "glob of the names rotation gives the file, relative to its directory (default: its name "
     "followed by anything: run.log.1, run.log.2.gz, run.log-20261125.zst); a restart reads the "
     "unread rest from there, compressed or not", SS(rotated)},
    {"rotate_quiet", TL_OPT_INT, "1000",
     "ms a rotated-away file must stay quiet before the new one is read (its writer may not have "
     "reopened yet); 0: at once", SS(rotate_quiet)},
    TL_SRC_PARSER_OPTIONS(struct file_settings, "input format, or auto (detected)"),
    {0},
};

static bool file_open_tasks(struct tl_source *s, void (*each)(void *ctx, const struct tl_record *r),
                             void *ctx)
{
    struct file_src *f = s->own;
    return f && tl_feed_open_tasks(&f->feed, each, ctx);
}

const struct tl_source_type tl_source_file = {
    .name = "file",
    .help = "a log file (or a glob of them), followed like tail -F or read once",
    .config_size = sizeof(struct file_settings),
    .options = file_options,
    .ckpt_tag = 'F',
    .validate = file_validate,
    .open = file_open,
    .step = file_step,
    .wait_fd = file_wait_fd,
    .woken = file_woken,
    .save = file_save,
    .self_metrics = file_self_metrics,
    .counters = file_counters,
    .reopen = file_reopen,
    .close = file_close,
    .open_tasks = file_open_tasks,
    .check = file_check,
};
