/* The `dir` source: every file of a directory (recursively, names matching
 * a glob) read once, whole, through its own parser, as it settles
 * (ingest/dirwatch.c): an LSST datastore where a metadata file appears per
 * quantum, a directory of traces, compressed or not.
 *
 * A file that grows after it was read (a log a run still writes, Spark's
 * app.inprogress) is read on from where it ended, through its parser's
 * state kept after the first read (logs: the formats read as lines or a
 * stream); a renamed file is the same file. Each task once. Where that
 * cannot be (a document format, a compressed file, the kept states over
 * their bound, a restart since), the new bytes are not read and that is
 * said, once per file.
 *
 * Checkpoint section (after version and 'D'):
 *   lines | records | rejected (summed over the files read) | the files
 *   read (tl_dirwatch_save) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bytes.h"
#include "core/map64.h"
#include "ingest/dirwatch.h"
#include "ingest/reader.h"
#include "pipeline/source.h"

/* Where a file's reading ended: its parser's state and the bytes read. */
/* A directory entry's settings. */
struct dir_settings {
    struct src_base base; /* path (the directory), parser */
    bool recursive;
    const char *match;
};

static const struct dir_settings *settings(const struct tl_source *s)
{
    return s->cfg.config;
}

struct resume {
    uint64_t id;     /* the file's identity (dirwatch) */
    uint64_t offset; /* bytes read */
    char parser[32];
    struct tl_buf state;
};
#define RESUME_MAX_BYTES (64u << 20) /* states kept, all files together */

struct dir_src {
    struct tl_dirwatch *dw;
    struct tl_parse_stats stats; /* summed over the files read */
    const char *format;          /* of the last file read */
    struct resume *resumes;
    size_t nresumes, cap_resumes, resume_bytes;
    struct tl_map64 resume_of; /* identity -> index + 1 */
    struct tl_map64 grew_said; /* identities whose growth could not be read: said */
};

static enum tl_err dir_open(struct tl_source *s, int version, const uint8_t *saved, size_t len, char *err,
                            size_t errcap)
{
    struct dir_src *d = s->own;
    if (!d && !(d = s->own = calloc(1, sizeof *d))) return TL_ERR_NOMEM;
    if (!d->dw && tl_dirwatch_open(s->path, settings(s)->recursive, 1000, settings(s)->match, &d->dw, err, errcap))
        return TL_ERR_OPEN;
    if (!saved) return TL_OK;
    const uint8_t *p = saved, *end = saved + len;
    if (!tl_get_varint(&p, end, &d->stats.lines) || !tl_get_varint(&p, end, &d->stats.records) ||
        !tl_get_varint(&p, end, &d->stats.rejected) ||
        tl_dirwatch_restore(d->dw, p, (size_t)(end - p)))
        return TL_ERR_CORRUPT;
    return TL_OK;
}

static void add_stats(struct tl_parse_stats *sum, const struct tl_parse_stats *ps)
{
    sum->lines += ps->lines;
    sum->records += ps->records;
    sum->rejected += ps->rejected;
    for (int i = 0; i < TL_REJ_COUNT; i++) sum->rejected_by[i] += ps->rejected_by[i];
}

static struct resume *resume_find(struct dir_src *d, uint64_t id)
{
    uint64_t *v = id ? tl_map64_get(&d->resume_of, id) : NULL;
    return v ? &d->resumes[*v - 1] : NULL;
}

/* Keeps where a stream format's reading of file id ended (before finish(),
 * so open tasks stay open); nothing when over the bound. */
static void resume_keep(struct dir_src *d, uint64_t id, const struct tl_feed *feed, uint64_t offset)
{
    const struct tl_parser *p = tl_feed_parser(feed);
    if (!id || !p || !p->save || (p->messages != TL_MSG_LINES && p->messages != TL_MSG_STREAM)) return;
    struct resume *r = resume_find(d, id);
    if (!r) {
        if (d->nresumes == d->cap_resumes) {
            size_t cap = d->cap_resumes ? d->cap_resumes * 2 : 16;
            struct resume *n = realloc(d->resumes, cap * sizeof *n);
            if (!n) return;
            d->resumes = n;
            d->cap_resumes = cap;
        }
        r = &d->resumes[d->nresumes];
        memset(r, 0, sizeof *r);
        r->id = id;
        if (!tl_map64_put(&d->resume_of, id, ++d->nresumes)) return;
    }
    d->resume_bytes -= r->state.len;
    r->state.len = 0;
    if (tl_drive_save(&feed->drive, &r->state) || r->state.oom ||
        d->resume_bytes + r->state.len > RESUME_MAX_BYTES) {
        r->state.len = 0; /* not kept: its growth is said, not read */
        r->offset = 0;
        return;
    }
    d->resume_bytes += r->state.len;
    r->offset = offset;
    snprintf(r->parser, sizeof r->parser, "%s", p->name);
}

/* A grown file whose new bytes cannot be read: said once. */
static size_t grew_unread(struct tl_source *s, const char *path, uint64_t id, const char *why)
{
    struct dir_src *d = s->own;
    if (!tl_map64_get(&d->grew_said, id ? id : 1)) {
        tl_map64_put(&d->grew_said, id ? id : 1, 1);
        tl_rt_log(s->rt, TL_LOG_WARN, "%s grew after it was read: its new bytes are not read (%s); "
                  "its tasks stay counted once. A log still written is read by a `file` source "
                  "with follow: true", path, why);
    }
    return 1;
}

/* Bytes of the reader up to offset, passed over (what a grown file's first
 * read already took). false when the file is shorter now. */
static bool skip_to(struct tl_reader *rd, char *buf, uint64_t offset, size_t *left, size_t *at)
{
    char err[256];
    size_t got;
    while (tl_reader_read(rd, buf, TL_RT_CHUNK, &got, err, sizeof err) == TL_OK && got) {
        if (offset < got) {
            *at = (size_t)offset;
            *left = got - (size_t)offset;
            return true;
        }
        offset -= got;
    }
    *left = 0;
    return offset == 0;
}

static void sub_stats(struct tl_parse_stats *a, const struct tl_parse_stats *b)
{
    a->lines -= b->lines;
    a->records -= b->records;
    a->rejected -= b->rejected;
    for (int i = 0; i < TL_REJ_COUNT; i++) a->rejected_by[i] -= b->rejected_by[i];
}

/* The next settled file, read whole through its own parser (the files are
 * independent documents: a metadata file per quantum), or a grown one read
 * on from where it ended. */
static size_t dir_step(struct tl_source *s)
{
    struct dir_src *d = s->own;
    const char *path = tl_dirwatch_next(d->dw);
    if (!path) return 0;
    char err[512];
    struct tl_reader *rd;
    if (tl_reader_open(path, &rd, err, sizeof err)) {
        /* tried again at the next scans; said once */
        bool again = tl_dirwatch_failed(d->dw);
        tl_rt_log(s->rt, again ? TL_LOG_DEBUG : TL_LOG_WARN, "%s (tried again until it can be read)",
                  err);
        return 1;
    }
    uint64_t id = tl_dirwatch_id(d->dw);
    struct resume *rs = tl_dirwatch_grown(d->dw) ? resume_find(d, id) : NULL;
    if (tl_dirwatch_grown(d->dw) && (!rs || !rs->state.len || strcmp(tl_reader_codec(rd), "plain"))) {
        tl_reader_close(rd);
        return grew_unread(s, path, id, !rs || !rs->state.len ? "its format is read whole, or its state "
                                                                "was not kept" : "it is compressed");
    }
    struct tl_feed feed;
    if (tl_feed_init(&feed, s, path)) {
        tl_reader_close(rd);
        return 0;
    }
    char *buf = tl_rt_buf(s->rt);
    size_t total = 0, got = 0, at = 0;
    uint64_t offset = rs ? rs->offset : 0;
    enum tl_err rc = TL_OK;
    if (rs && (tl_drive_restore(&feed.drive, rs->parser, (const uint8_t *)rs->state.data, rs->state.len) ||
               !skip_to(rd, buf, rs->offset, &got, &at))) {
        tl_feed_free(&feed);
        tl_reader_close(rd);
        return grew_unread(s, path, id, "its state could not be restored");
    }
    struct tl_parse_stats before = tl_drive_stats(&feed.drive); /* a resumed parser's earlier counts */
    if (got && !tl_feed_bytes(&feed, buf + at, got)) { /* the rest of the chunk past offset */
        total += got;
        s->bytes += got;
    }
    while ((rc = tl_reader_read(rd, buf, TL_RT_CHUNK, &got, err, sizeof err)) == TL_OK && got) {
        if (tl_feed_bytes(&feed, buf, got)) break;
        total += got;
        s->bytes += got;
    }
    if (rc) tl_rt_log(s->rt, TL_LOG_WARN, "%s: %s", path, err);
    resume_keep(d, id, &feed, offset + total);
    tl_feed_finish(&feed);
    if (tl_feed_parser(&feed)) {
        struct tl_parse_stats ps = tl_drive_stats(&feed.drive);
        sub_stats(&ps, &before);
        add_stats(&d->stats, &ps);
        d->format = tl_feed_parser(&feed)->name;
    }
    tl_feed_free(&feed);
    tl_reader_close(rd);
    return total ? total : 1;
}

static int dir_wait_fd(struct tl_source *s, bool *poll_soon)
{
    struct dir_src *d = s->own;
    *poll_soon = true; /* settling files are looked at again */
    return d->dw ? tl_dirwatch_fd(d->dw) : -1;
}

static void dir_woken(struct tl_source *s)
{
    struct dir_src *d = s->own;
    if (d->dw) tl_dirwatch_events(d->dw);
}

static enum tl_err dir_save(struct tl_source *s, struct tl_buf *b)
{
    struct dir_src *d = s->own;
    tl_put_varint(b, d->stats.lines);
    tl_put_varint(b, d->stats.records);
    tl_put_varint(b, d->stats.rejected);
    return tl_dirwatch_save(d->dw, b);
}

static void dir_self_metrics(struct tl_source *s)
{
    struct dir_src *d = s->own;
    if (!d->format) return;
    struct tl_summary_input in = {.path = s->path, .format = d->format,
                                  .lines = d->stats.lines, .records = d->stats.records,
                                  .rejected = d->stats.rejected, .bytes = s->bytes};
    memcpy(in.rejected_by, d->stats.rejected_by, sizeof in.rejected_by);
    tl_output_self(tl_rt_output(s->rt), tl_rt_instance(s->rt), &in, tl_dirwatch_pending(d->dw));
}

static size_t dir_counters(const struct tl_source *s, struct tl_counter *out, size_t max)
{
    return tl_source_counters(&((const struct dir_src *)s->own)->stats, 0, out, max);
}

static void dir_close(struct tl_source *s)
{
    struct dir_src *d = s->own;
    if (!d) return;
    tl_dirwatch_close(d->dw);
    for (size_t i = 0; i < d->nresumes; i++) tl_buf_free(&d->resumes[i].state);
    free(d->resumes);
    tl_map64_free(&d->resume_of);
    tl_map64_free(&d->grew_said);
    free(d);
    s->own = NULL;
}

static enum tl_err dir_validate(const void *config, const char **key, char *err, size_t cap)
{
    if (((const struct dir_settings *)config)->base.path) return TL_OK;
    snprintf(err, cap, "`path` is required");
    return TL_ERR_USAGE;
}

static void dir_check(const void *config, int i, tl_check_say *say, void *ctx)
{
    const struct dir_settings *s = config;
    const char *path = s->base.path;
    struct stat st;
    if (stat(path, &st) || !S_ISDIR(st.st_mode) || access(path, R_OK | X_OK))
        say(ctx, false, "sources[%d]: %s: %s", i, path,
            errno == ENOENT ? "does not exist" : !S_ISDIR(st.st_mode) ? "not a directory"
                                                                      : strerror(errno));
    else
        say(ctx, true, "sources[%d]: %s: a readable directory (files matching %s%s)", i, path,
            s->match, s->recursive ? ", recursively" : "");
}

#define SS(f) offsetof(struct dir_settings, f)
static const struct tl_option dir_options[] = {
    TL_SRC_PATH_OPTION(struct dir_settings, "a directory; each file in it is read once"),
    {"recursive", TL_OPT_BOOL, "true", "also read subdirectories", SS(recursive)},
    {"match", TL_OPT_LIST, "*",
     "file names to read (a glob; e.g. *_metadata* for an LSST datastore)", SS(match)},
    TL_SRC_PARSER_OPTIONS(struct dir_settings, "input format, or auto (detected)"),
    {0},
};

const struct tl_source_type tl_source_dir = {
    .name = "dir",
    .help = "each file of a directory read once as it appears (.gz, .zst too)",
    .config_size = sizeof(struct dir_settings),
    .options = dir_options,
    .ckpt_tag = 'D',
    .validate = dir_validate,
    .open = dir_open,
    .step = dir_step,
    .wait_fd = dir_wait_fd,
    .woken = dir_woken,
    .save = dir_save,
    .self_metrics = dir_self_metrics,
    .counters = dir_counters,
    .close = dir_close,
    .check = dir_check,
};
