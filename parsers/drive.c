/* One door into a parser (drive.h): choose, configure, open, feed, finish,
 * tell rejects, count. Batch commands, the followed sources of `run` and
 * the Kafka source all come through here, so an unrecognized input is
 * refused the same way everywhere, and a reject reads the same whoever
 * read the line.
 *
 * Detection holds the first bytes of an unnamed input until a probe is
 * sure of them: a followed file may show its first 20 bytes before the
 * rest is written, and a guess on those would stick for the whole file.
 * The held bytes are fed as they were once the parser is known, so a
 * parser still sees one unbroken stream. */
#include "parsers/drive.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void tell(struct tl_reject_budget *b, const char *line)
{
    tl_say_line(b->say, b->ctx, line);
}

/* A rejected unit of input, told while the budget lasts. */
static void tell_reject(struct tl_drive *d, uint64_t line, const char *reason, const char *detail)
{
    struct tl_reject_budget *b = d->cfg.budget;
    if (!b || b->quiet) return;
    if (b->told >= b->max) {
        b->untold++;
        return;
    }
    b->told++;
    d->told_any = true;
    char where[512], msg[1024];
    if (d->cfg.where) d->cfg.where(d->cfg.where_ctx, line, where, sizeof where);
    else snprintf(where, sizeof where, "%s:%llu", d->name ? d->name : "stdin",
                  (unsigned long long)line);
    snprintf(msg, sizeof msg, "%s: %s%s%s%s", where, reason, detail ? " (" : "", detail ? detail : "",
             detail ? ")" : "");
    tell(b, msg);
}

static void on_reject(void *ctx, uint64_t line, enum tl_reject why, const char *detail)
{
    tell_reject(ctx, line, tl_reject_str(why), detail);
}

static void on_record(void *ctx, const struct tl_record *r)
{
    struct tl_drive *d = ctx;
    d->cfg.record(d->cfg.record_ctx, r);
}

/* The records of a file_time parser: one without a time takes the input's.
 * A callback of its own, so the other parsers' records pay nothing. */
static void on_record_stamped(void *ctx, const struct tl_record *r)
{
    struct tl_drive *d = ctx;
    if (!r->time_ns && d->input_time_ns) {
        d->stamped = *r;
        d->stamped.time_ns = d->input_time_ns;
        d->stamped.time_from_file = true;
        r = &d->stamped;
    }
    d->cfg.record(d->cfg.record_ctx, r);
}

enum tl_err tl_drive_init(struct tl_drive *d, const struct tl_drive_cfg *cfg, const char *name)
{
    memset(d, 0, sizeof *d);
    d->cfg = *cfg;
    d->emit = (struct tl_emit){on_record, on_reject, d, cfg->kinds};
    if (name && !(d->name = strdup(name))) return TL_ERR_NOMEM;
    return TL_OK;
}

bool tl_drive_open_tasks(struct tl_drive *d, void (*each)(void *ctx, const struct tl_record *r),
                         void *ctx)
{
    const struct tl_parser *p = d->inst.p;
    if (!p || !p->open_tasks || !d->inst.state) return false;
    if (!d->finished) p->open_tasks(d->inst.state, each, ctx);
    return true;
}

void tl_drive_free(struct tl_drive *d)
{
    tl_parser_inst_free(&d->inst);
    tl_buf_free(&d->held);
    free(d->name);
    memset(d, 0, sizeof *d);
}

static enum tl_err stop(struct tl_drive *d, enum tl_err rc, const char *why)
{
    snprintf(d->error, sizeof d->error, "%s: %s", d->name ? d->name : "stdin", why);
    return rc;
}

static enum tl_err open_parser(struct tl_drive *d, const struct tl_parser *p)
{
    char err[200] = "";
    enum tl_err rc = tl_parser_inst_init(&d->inst, p);
    if (!rc && d->cfg.configure)
        rc = d->cfg.configure(d->cfg.configure_ctx, p, d->inst.config, err, sizeof err);
    d->emit.record = p->file_time ? on_record_stamped : on_record;
    if (!rc) rc = tl_parser_inst_open(&d->inst, &d->emit, err, sizeof err);
    if (rc) { /* no parser, half set up: the drive has none */
        tl_parser_inst_free(&d->inst);
        return stop(d, rc, err[0] ? err : tl_strerror(rc));
    }
    if (p->set_name && d->name) p->set_name(d->inst.state, d->name);
    return TL_OK;
}

enum tl_err tl_drive_start(struct tl_drive *d, const char *named, const char *first, size_t len)
{
    const struct tl_parser *p = named ? tl_parser_find(named) : d->cfg.parser;
    if (named && !p) return stop(d, TL_ERR_CORRUPT, "saved with an unknown parser");
    if (!p && len) p = tl_parser_detect(first, len, NULL);
    if (!p) {
        d->unrecognized++;
        return stop(d, TL_ERR_FORMAT, "format not recognized (use --format-in NAME, or parser: "
                                      "NAME in a source; see `tasklens formats`)");
    }
    return open_parser(d, p);
}

/* Decides the parser for held bytes: not yet (more may make a probe sure),
 * or now. `ending`: no more bytes will come. */
static enum tl_err decide(struct tl_drive *d, bool ending)
{
    const struct tl_parser *p = d->cfg.parser;
    if (!p && d->held.len) p = tl_parser_detect(d->held.data, d->held.len, NULL);
    if (!p && !ending && d->held.len < TL_DRIVE_DETECT_BYTES) return TL_OK; /* wait */
    if (!p && ending && d->held.len == 0) p = tl_parser_find("wq"); /* empty: zero lines */
    enum tl_err rc = p ? open_parser(d, p) : tl_drive_start(d, NULL, d->held.data, d->held.len);
    if (rc) return rc;
    if (d->held.len) rc = d->inst.p->feed(d->inst.state, d->held.data, d->held.len);
    tl_buf_free(&d->held);
    return rc;
}

enum tl_err tl_drive_feed(struct tl_drive *d, const char *buf, size_t len)
{
    if (d->error[0]) return TL_ERR_FORMAT;
    if (d->inst.p) return d->inst.p->feed(d->inst.state, buf, len);
    const struct tl_parser *p = d->held.len ? NULL
                                : d->cfg.parser ? d->cfg.parser : tl_parser_detect(buf, len, NULL);
    if (p) { /* the usual case: sure from the first bytes, nothing copied */
        enum tl_err rc = open_parser(d, p);
        if (rc) return rc;
        return d->inst.p->feed(d->inst.state, buf, len);
    }
    tl_buf_append(&d->held, buf, len);
    if (d->held.oom) return stop(d, TL_ERR_NOMEM, tl_strerror(TL_ERR_NOMEM));
    return decide(d, false);
}

static bool is_whole_trace(const char *v, size_t n)
{
    size_t i = 0;
    while (i < n && (v[i] == ' ' || v[i] == '\n' || v[i] == '\r' || v[i] == '\t')) i++;
    return i < n && (v[i] == '[' || memmem(v, n < 4096 ? n : 4096, "\"traceEvents\"", 13));
}

enum tl_err tl_drive_message(struct tl_drive *d, const char *buf, size_t len)
{
    if (!len) return TL_OK;
    if (!d->inst.p) {
        const struct tl_parser *p = d->cfg.parser ? d->cfg.parser : tl_parser_detect(buf, len, NULL);
        if (!p) { /* this message only: the next may be recognized */
            d->unrecognized++;
            tell_reject(d, d->unrecognized, "format not recognized",
                        "name the parser with parser: NAME");
            return TL_OK;
        }
        enum tl_err rc = open_parser(d, p);
        if (rc) return rc;
    }
    const struct tl_parser *p = d->inst.p;
    void *st = d->inst.state;
    switch (p->messages) {
    case TL_MSG_LINES:
        p->feed(st, buf, len);
        if (buf[len - 1] != '\n') p->feed(st, "\n", 1);
        return TL_OK;
    case TL_MSG_STREAM: return p->feed(st, buf, len);
    case TL_MSG_EVENTS:
        if (!is_whole_trace(buf, len)) { /* one event of an open array, as catapult writes */
            if (!d->events_open) p->feed(st, "[", 1);
            d->events_open = true;
            p->feed(st, buf, len);
            return p->feed(st, ",", 1);
        }
        p->feed(st, buf, len); /* a whole trace: a document */
        return p->finish(st);
    case TL_MSG_DOCUMENT:
        p->feed(st, buf, len);
        return p->finish(st);
    }
    return TL_OK;
}

enum tl_err tl_drive_end_document(struct tl_drive *d)
{
    if (d->error[0]) return TL_ERR_FORMAT;
    if (!d->inst.p) {
        enum tl_err rc = decide(d, true);
        if (rc) return rc;
    }
    return d->inst.p->finish(d->inst.state);
}

enum tl_err tl_drive_finish(struct tl_drive *d)
{
    if (d->finished || d->error[0]) return TL_OK;
    if (!d->inst.p) {
        enum tl_err rc = decide(d, true);
        if (rc) return rc;
    }
    d->finished = true;
    return d->inst.p->finish(d->inst.state); /* open tasks are reported */
}

enum tl_err tl_drive_next_input(struct tl_drive *d, const char *name)
{
    char *copy = name ? strdup(name) : NULL;
    if (name && !copy) return TL_ERR_NOMEM;
    free(d->name);
    d->name = copy;
    if (d->inst.p && d->inst.p->set_name && name) d->inst.p->set_name(d->inst.state, name);
    return TL_OK;
}

struct tl_parse_stats tl_drive_stats(const struct tl_drive *d)
{
    struct tl_parse_stats st = {0};
    if (d->inst.p) st = *d->inst.p->stats(d->inst.state);
    return st;
}

size_t tl_drive_counters(const struct tl_drive *d, struct tl_counter *out, size_t max)
{
    if (!d->inst.p || !d->inst.p->counters) return 0;
    return d->inst.p->counters(d->inst.state, out, max);
}

/* An input's count the spent budget cannot say: kept for the end. */
static void keep_unsaid(struct tl_reject_budget *b, const char *name, uint64_t rejected)
{
    if (b->files_unsaid < TL_BUDGET_NAMED)
        snprintf(b->named[b->files_unsaid], sizeof b->named[0], "%s (%llu)", name,
                 (unsigned long long)rejected);
    b->files_unsaid++;
    b->rejected_unsaid += rejected;
}

void tl_reject_budget_end(struct tl_reject_budget *b, const char *cmd)
{
    if (!b->files_unsaid || b->quiet) return;
    char msg[1024];
    int n = snprintf(msg, sizeof msg, "%s: %llu %sinput%s with %llu rejected line%s:", cmd,
                     (unsigned long long)b->files_unsaid, b->told ? "more " : "",
                     b->files_unsaid == 1 ? "" : "s",
                     (unsigned long long)b->rejected_unsaid, b->rejected_unsaid == 1 ? "" : "s");
    for (uint64_t i = 0; i < b->files_unsaid && i < TL_BUDGET_NAMED && n > 0 && (size_t)n < sizeof msg; i++)
        n += snprintf(msg + n, sizeof msg - (size_t)n, "%s %s", i ? "," : "", b->named[i]);
    if (n > 0 && (size_t)n < sizeof msg)
        snprintf(msg + n, sizeof msg - (size_t)n, "%s (--max-errors N says more)",
                 b->files_unsaid > TL_BUDGET_NAMED ? ", ..." : "");
    tell(b, msg);
}

bool tl_reject_budget_tell(struct tl_reject_budget *b, const char *line)
{
    if (b->quiet) return false;
    if (b->told >= b->max) {
        b->untold++;
        return false;
    }
    b->told++;
    tell(b, line);
    return true;
}

void tl_reject_budget_input(struct tl_reject_budget *b, const char *name,
                            const struct tl_parse_stats *st, bool told_any)
{
    if (!st->rejected || !b || b->quiet) return;
    if (!told_any && b->told >= b->max) return keep_unsaid(b, name, st->rejected);
    char msg[1024];
    int n = snprintf(msg, sizeof msg, "%s: %llu of %llu lines rejected:", name,
                     (unsigned long long)st->rejected, (unsigned long long)st->lines);
    for (int r = 0; r < TL_REJ_COUNT && n > 0 && (size_t)n < sizeof msg; r++)
        if (st->rejected_by[r])
            n += snprintf(msg + n, sizeof msg - (size_t)n, " %s=%llu",
                          tl_reject_key((enum tl_reject)r), (unsigned long long)st->rejected_by[r]);
    tell(b, msg);
}

void tl_drive_say_rejects(const struct tl_drive *d)
{
    struct tl_parse_stats st = tl_drive_stats(d);
    tl_reject_budget_input(d->cfg.budget, d->name ? d->name : "stdin", &st, d->told_any);
}

enum tl_err tl_drive_save(const struct tl_drive *d, struct tl_buf *out)
{
    if (!d->inst.p) { /* still choosing: the bytes held are the state */
        tl_buf_append(out, d->held.data, d->held.len);
        return out->oom ? TL_ERR_NOMEM : TL_OK;
    }
    if (!d->inst.p->save) return TL_ERR_USAGE;
    return d->inst.p->save(d->inst.state, out);
}

enum tl_err tl_drive_restore(struct tl_drive *d, const char *named, const uint8_t *state,
                             size_t len)
{
    if (!named || !*named) { /* saved while choosing */
        tl_buf_append(&d->held, state, len);
        return d->held.oom ? TL_ERR_NOMEM : TL_OK;
    }
    enum tl_err rc = tl_drive_start(d, named, NULL, 0);
    if (rc || !len) return rc;
    if (!d->inst.p->restore) return TL_ERR_CORRUPT;
    return d->inst.p->restore(d->inst.state, state, len) ? TL_ERR_CORRUPT : TL_OK;
}
