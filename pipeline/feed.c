/* One parser fed by one source, through the parsers' one door
 * (parsers/drive.h): set up from the source's settings (named, or detected
 * from the first bytes), its records to the runtime's output, its rejected
 * lines reported as `input:line: reason` up to a limit, an input no parser
 * recognizes said once and stopped. Shared by the file, stdin, fifo,
 * directory and parsl sources. See source.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/path.h"
#include "pipeline/source.h"

static void on_record(void *ctx, const struct tl_record *r)
{
    tl_output_record(tl_rt_output(((struct tl_feed *)ctx)->src->rt), r);
}

enum tl_err tl_source_parser_options(void *source, const struct tl_parser *p, void *config,
                                     char *err, size_t errlen)
{
    const struct tl_source *s = source;
    const struct src_base *b = tl_src_base(&s->cfg);
    if (!b->parser_options) return TL_OK;
    return tl_cfg_apply(tl_rt_doc(s->rt), b->parser_options, p->options, config,
                        "parser options", NULL, err, errlen);
}

enum tl_err tl_feed_init(struct tl_feed *f, struct tl_source *src, const char *name)
{
    memset(f, 0, sizeof *f);
    f->src = src;
    /* rejects said on stderr, as `path:line: reason` */
    f->budget = (struct tl_reject_budget){.max = TL_RT_MAX_REPORTS, .quiet = tl_rt_quiet(src->rt)};
    const char *parser = tl_src_base(&src->cfg)->parser;
    struct tl_drive_cfg dc = {
        .parser = parser && strcmp(parser, "auto") ? tl_parser_find(parser) : NULL,
        .configure = tl_source_parser_options, .configure_ctx = src,
        .record = on_record, .record_ctx = f,
        .budget = &f->budget};
    enum tl_err rc = tl_drive_init(&f->drive, &dc, name ? name : src->path);
    if (!rc && (name || src->path)) tl_drive_set_input_time(&f->drive, tl_file_mtime_ns(name ? name : src->path));
    return rc;
}

/* Said once per input: the input stops. */
static enum tl_err stopped(struct tl_feed *f, enum tl_err rc)
{
    if (!f->stop_said) tl_rt_log(f->src->rt, TL_LOG_ERROR, "%s", f->drive.error[0] ? f->drive.error
                                                                             : tl_strerror(rc));
    f->stop_said = true;
    return rc;
}

enum tl_err tl_feed_bytes(struct tl_feed *f, const char *buf, size_t len)
{
    enum tl_err rc = tl_drive_feed(&f->drive, buf, len);
    if (rc && f->drive.error[0]) return stopped(f, rc);
    if (f->follows && !tl_drive_parser(&f->drive) && f->drive.held.len && !f->said) {
        /* a followed file's first bytes no probe is sure of yet */
        tl_rt_log(f->src->rt, TL_LOG_WARN, "%s: format not recognized from its first %zu bytes; "
                  "waiting for more (up to %d KiB; name it with parser: NAME)",
                  f->drive.name ? f->drive.name : "stdin", f->drive.held.len,
                  TL_DRIVE_DETECT_BYTES / 1024);
        f->said = true;
    }
    return TL_OK;
}

enum tl_err tl_feed_end_document(struct tl_feed *f)
{
    enum tl_err rc = tl_drive_end_document(&f->drive);
    return rc && f->drive.error[0] ? stopped(f, rc) : TL_OK;
}

void tl_feed_finish(struct tl_feed *f)
{
    if (tl_drive_finish(&f->drive) && f->drive.error[0]) stopped(f, TL_ERR_FORMAT);
}

enum tl_err tl_feed_save(const struct tl_feed *f, struct tl_buf *b)
{
    return tl_drive_save(&f->drive, b);
}

enum tl_err tl_feed_restore(struct tl_feed *f, const char *parser, const uint8_t *state,
                            size_t len, bool finished)
{
    enum tl_err rc = tl_drive_restore(&f->drive, parser, state, len);
    f->drive.finished = finished;
    return rc;
}

void tl_feed_self_metrics(const struct tl_feed *f, struct tl_summary_input *in, uint64_t lag)
{
    const struct tl_parser *p = tl_drive_parser(&f->drive);
    if (!p) return;
    struct tl_parse_stats ps = tl_drive_stats(&f->drive);
    in->format = p->name;
    in->lines = ps.lines;
    in->records = ps.records;
    in->rejected = ps.rejected;
    memcpy(in->rejected_by, ps.rejected_by, sizeof in->rejected_by);
    tl_output_self(tl_rt_output(f->src->rt), tl_rt_instance(f->src->rt), in, lag);
}

size_t tl_source_counters(const struct tl_parse_stats *ps, uint64_t lag, struct tl_counter *out, size_t max)
{
    static const char *const names[] = {"lines", "records", "parse_errors", "lag"};
    const uint64_t values[] = {ps ? ps->lines : 0, ps ? ps->records : 0, ps ? ps->rejected : 0, lag};
    return tl_counters_fill(out, max, names, values, 4);
}

size_t tl_feed_counters(const struct tl_feed *f, uint64_t lag, struct tl_counter *out, size_t max)
{
    struct tl_parse_stats ps = tl_drive_parser(&f->drive) ? tl_drive_stats(&f->drive) : (struct tl_parse_stats){0};
    return tl_source_counters(&ps, lag, out, max);
}

void tl_feed_free(struct tl_feed *f)
{
    tl_drive_free(&f->drive);
    f->said = f->stop_said = false;
}

void tl_source_check_file(const struct src_base *cfg, int index, const char *path,
                          tl_check_say *say, void *ctx)
{
    char head[65536];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        say(ctx, false, "sources[%d]: %s: %s", index, path, strerror(errno));
        return;
    }
    struct stat st;
    fstat(fd, &st);
    ssize_t got = read(fd, head, sizeof head);
    close(fd);
    bool named = cfg->parser && strcmp(cfg->parser, "auto");
    const struct tl_parser *fmt = named ? tl_parser_find(cfg->parser)
                                        : tl_parser_detect(head, got > 0 ? (size_t)got : 0, NULL);
    say(ctx, fmt || got <= 0, "sources[%d]: %s: %lld bytes, format %s%s", index, path,
        (long long)st.st_size, fmt ? fmt->name : "not recognized",
        named ? " (named)" : got > 0 ? " (detected)" : " (empty yet)");
}
