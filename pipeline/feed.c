/* One parser fed by one source: set up from the configuration (named, or
 * detected from the first bytes), its records to the runtime's output, its
 * rejected lines reported as `input:line: reason` up to a limit. Shared by
 * the file, stdin, fifo and directory sources. See source.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source.h"

static void on_record(void *ctx, const struct tl_record *r)
{
    tl_output_record(tl_rt_output(((struct tl_feed *)ctx)->src->rt), r);
}

static void on_reject(void *ctx, uint64_t line, enum tl_reject why, const char *detail)
{
    struct tl_feed *f = ctx;
    if (tl_rt_quiet(f->src->rt) || f->reported++ >= TL_RT_MAX_REPORTS) return;
    const char *name = f->name ? f->name : f->src->path ? f->src->path : "stdin";
    fprintf(stderr, "%s:%llu: %s%s%s%s\n", name, (unsigned long long)line, tl_reject_str(why),
            detail ? " (" : "", detail ? detail : "", detail ? ")" : "");
}

void tl_feed_init(struct tl_feed *f, struct tl_source *src)
{
    memset(f, 0, sizeof *f);
    f->src = src;
    f->emit = (struct tl_emit){on_record, on_reject, f, 0};
}

enum tl_err tl_feed_start(struct tl_feed *f, const char *buf, size_t len, const char *name)
{
    const struct src_settings *cfg = &f->src->cfg;
    const struct tl_parser *p = NULL;
    if (name) p = tl_parser_find(name);
    else if (cfg->parser && strcmp(cfg->parser, "auto")) p = tl_parser_find(cfg->parser);
    else p = tl_parser_detect(buf, len, NULL);
    if (!p) p = tl_parser_find("wq");
    char err[512];
    if (tl_parser_inst_init(&f->inst, p)) return TL_ERR_NOMEM;
    if (cfg->parser_options &&
        tl_cfg_apply(tl_rt_doc(f->src->rt), cfg->parser_options, p->options, f->inst.config,
                     "parser options", NULL, err, sizeof err)) {
        tl_rt_log(f->src->rt, TL_LOG_ERROR, "%s", err);
        return TL_ERR_USAGE;
    }
    enum tl_err rc = tl_parser_inst_open(&f->inst, &f->emit);
    if (!rc && p->set_name) p->set_name(f->inst.state, f->name ? f->name : f->src->path);
    return rc;
}

enum tl_err tl_feed_bytes(struct tl_feed *f, const char *buf, size_t len)
{
    if (!f->inst.p) {
        enum tl_err rc = tl_feed_start(f, buf, len, NULL);
        if (rc) return rc;
    }
    f->inst.p->feed(f->inst.state, buf, len);
    return TL_OK;
}

void tl_feed_finish(struct tl_feed *f)
{
    if (!f->inst.p || f->finished) return;
    f->inst.p->finish(f->inst.state); /* open tasks are reported */
    f->finished = true;
}

void tl_feed_self_metrics(const struct tl_feed *f, struct tl_summary_input *in, uint64_t lag)
{
    if (!f->inst.p) return;
    const struct tl_parse_stats *ps = f->inst.p->stats(f->inst.state);
    in->format = f->inst.p->name;
    in->lines = ps->lines;
    in->records = ps->records;
    in->rejected = ps->rejected;
    memcpy(in->rejected_by, ps->rejected_by, sizeof in->rejected_by);
    tl_output_self(tl_rt_output(f->src->rt), tl_rt_instance(f->src->rt), in, lag);
}

void tl_feed_totals(const struct tl_feed *f, struct tl_source_totals *t)
{
    if (!f->inst.p) return;
    const struct tl_parse_stats *ps = f->inst.p->stats(f->inst.state);
    t->lines += ps->lines;
    t->records += ps->records;
    t->rejected += ps->rejected;
}

void tl_feed_free(struct tl_feed *f)
{
    tl_parser_inst_free(&f->inst);
    f->finished = false;
    f->reported = 0;
}

char *tl_canonical_path(const char *path)
{
    char *r = realpath(path, NULL);
    if (r) return r;
    const char *slash = strrchr(path, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    char *d = realpath(*dir ? dir : "/", NULL);
    if (!d) return strdup(path);
    size_t n = strlen(d) + strlen(slash ? slash + 1 : path) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s", strcmp(d, "/") ? d : "", slash ? slash + 1 : path);
    free(d);
    return out;
}

void tl_source_check_file(const struct src_settings *cfg, int index, const char *path,
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
