/* The inputs of a batch command (`summary`, `lines`, `report`, `advise`,
 * ...), each read whole through the parsers' one door (parsers/drive.h):
 * a file, '-' for stdin, .gz/.zst by their magic bytes, a directory (its
 * files in name order, those of no known format skipped and counted), or
 * a directory a format writes as one input in parts (its parser's
 * dir_whole and dir_part: a rolling Spark event log). Rejected lines are
 * said as `path:line: reason` (the first max_reports of the run, then a
 * total per input, and one line for the inputs past that budget). */
#include "pipeline/batch.h"
#include "pipeline/batch_input.h"
#include "core/term.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/path.h"
#include "ingest/dirlist.h"
#include "ingest/reader.h"
#include "parsers/drive.h"

#define PROGRESS_MIN_BYTES (100ULL * 1000 * 1000)

void tl_batch_say(const struct tl_batch_voice *v, const char *fmt, ...)
{
    /* formatted on the stack: a message that could find no memory was lost,
     * and an input failed for lack of memory said nothing */
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    const char *text = small;
    struct tl_buf msg = {0};
    if ((size_t)n >= sizeof small) {
        if (tl_buf_reserve(&msg, (size_t)n + 1)) {
            va_start(ap, fmt);
            vsnprintf(msg.data, (size_t)n + 1, fmt, ap);
            va_end(ap);
            text = msg.data;
        } else {
            text = "tasklens: (a message lost: out of memory)\n";
        }
    }
    if (v) v->text(v->ctx, text);
    else tl_eprintf("%s", text);
    tl_buf_free(&msg);
}

/* The -O settings of the chosen parser (a drive's configure callback). */
static enum tl_err apply_settings(void *ctx, const struct tl_parser *p, void *config, char *err,
                                  size_t errlen)
{
    const struct tl_input_opts *o = ctx;
    for (int i = 0; i < o->nsettings; i++) {
        if (strcmp(o->settings[i].parser, p->name)) continue;
        char why[200];
        if (tl_options_set(p->options, config, o->settings[i].key, o->settings[i].value, why,
                           sizeof why)) {
            snprintf(err, errlen, "%s parser: %s", p->name, why);
            return TL_ERR_USAGE;
        }
    }
    return TL_OK;
}

/* in_dir: a file of no known format is skipped quietly (read_dir counts) */
/* The next part of an input read as one stream (a rolling Spark event log:
 * events_1_..., events_2_...): opened when the current one ends. */
static enum tl_err next_part(struct tl_reader **rd, char *const **rest, char *buf, size_t *got,
                             char *err, size_t errlen)
{
    enum tl_err rc = TL_OK;
    while (!rc && !*got && *rest && **rest) {
        tl_reader_close(*rd);
        *rd = NULL;
        rc = tl_reader_open(*(*rest)++, rd, err, errlen);
        if (!rc) rc = tl_reader_read(*rd, buf, TL_READ_CHUNK, got, err, errlen);
    }
    return rc;
}

/* A progress line on stderr for a large input, every 0.25 s. */
struct progress {
    bool on;
    uint64_t size;
    struct timespec t0;
    double last; /* the first line after 16 chunks, then every 0.25 s */
    unsigned chunks;
};

static void progress_tick(struct progress *pr, const char *path, struct tl_reader *rd)
{
    if (!pr->on || (++pr->chunks & 15) != 0) return;
    struct timespec tn;
    clock_gettime(CLOCK_MONOTONIC, &tn);
    double el = (double)(tn.tv_sec - pr->t0.tv_sec) + (tn.tv_nsec - pr->t0.tv_nsec) * 1e-9;
    if (el - pr->last < 0.25) return;
    uint64_t at = tl_reader_raw_offset(rd);
    char shown[256];
    fprintf(stderr, "\r%s: %3.0f%%  %.2f / %.2f GB  %.0f MB/s ", tl_vis(path, shown, sizeof shown),
            100.0 * (double)at / (double)pr->size, (double)at / 1e9, (double)pr->size / 1e9,
            (double)at / 1e6 / el);
    pr->last = el;
}

/* What the parser counted, into info (counters copied: info owns them). */
static void take_stats(const struct tl_drive *d, struct tl_summary_input *info)
{
    struct tl_parse_stats st = tl_drive_stats(d);
    info->lines = st.lines;
    info->records = st.records;
    info->rejected = st.rejected;
    memcpy(info->rejected_by, st.rejected_by, sizeof info->rejected_by);
    struct tl_counter c[TL_MAX_COUNTERS];
    size_t n = tl_drive_counters(d, c, TL_MAX_COUNTERS);
    struct tl_counter *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (copy) {
        memcpy(copy, c, n * sizeof *copy);
        info->counters = copy;
        info->ncounters = n;
    }
}

static void set_error(struct tl_summary_input *info, const char *err, enum tl_err rc,
                      const struct tl_batch_voice *v)
{
    tl_batch_say(v, "tasklens: %s\n", err[0] ? err : tl_strerror(rc));
    if (!info->error) info->error = strdup(err[0] ? err : tl_strerror(rc));
}

/* path's failure that came with no words of its own (out of memory): said
 * as "path: reason", as every input that is not read. */
static void set_error_of(struct tl_summary_input *info, const char *path, enum tl_err rc,
                         const struct tl_batch_voice *v)
{
    char err[PATH_MAX + 64];
    snprintf(err, sizeof err, "%s: %s", path, tl_strerror(rc));
    set_error(info, err, rc, v);
}

/* Feeds the whole input (and the parts after it) through the drive. */
static enum tl_err feed_all(struct tl_drive *d, struct tl_reader **rd, char *const *rest, char *buf,
                            size_t got, bool show_progress, struct tl_summary_input *info,
                            const struct tl_batch_voice *v)
{
    char err[512] = "";
    struct progress pr = {.on = show_progress && tl_reader_raw_size(*rd) > PROGRESS_MIN_BYTES,
                          .size = tl_reader_raw_size(*rd), .last = -1};
    clock_gettime(CLOCK_MONOTONIC, &pr.t0);
    enum tl_err rc = TL_OK;
    while (got > 0) {
        info->bytes += got;
        if ((rc = tl_drive_feed(d, buf, got))) break;
        if (!info->format && tl_drive_parser(d)) info->format = tl_drive_parser(d)->name;
        if (tl_drive_parser(d)) info->zoneless |= tl_drive_parser(d)->zoneless_times;
        progress_tick(&pr, info->path, *rd);
        rc = tl_reader_read(*rd, buf, TL_READ_CHUNK, &got, err, sizeof err);
        if (!rc && !got) rc = next_part(rd, &rest, buf, &got, err, sizeof err);
        if (rc) {
            set_error(info, err, rc, v);
            break;
        }
    }
    if (pr.on && pr.last >= 0) fputs("\r\033[K", stderr); /* the table starts clean */
    return rc;
}

enum tl_err tl_batch_read_file(const char *path, char *const *rest, const struct tl_input_opts *opts,
                               void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                               struct tl_summary_input *info, bool in_dir,
                               const struct tl_batch_voice *v)
{
    memset(info, 0, sizeof *info);
    info->path = path;
    char err[512] = "";
    struct tl_reader *rd = NULL;
    enum tl_err rc = tl_reader_open(path, &rd, err, sizeof err);
    if (rc) {
        if (err[0]) set_error(info, err, rc, v);
        else set_error_of(info, path, rc, v); /* out of memory */
        return rc;
    }
    info->codec = tl_reader_codec(rd);
    char *buf = malloc(TL_READ_CHUNK);
    struct tl_reject_budget own = {.max = opts->max_reports, .quiet = opts->quiet}; /* stderr */
    struct tl_drive_cfg dc = {.parser = opts->forced, .configure = apply_settings,
                              .configure_ctx = (void *)opts, .record = on_record,
                              .record_ctx = ctx, .kinds = opts->kinds,
                              .budget = v ? v->budget : opts->budget ? opts->budget : &own};
    struct tl_drive d;
    if (!buf || tl_drive_init(&d, &dc, path)) {
        free(buf);
        tl_reader_close(rd);
        set_error_of(info, path, TL_ERR_NOMEM, v);
        return TL_ERR_NOMEM;
    }
    tl_reader_size_at_open(rd);
    tl_drive_set_input_time(&d, strcmp(path, "-") ? tl_reader_mtime_ns(rd) : 0);
    size_t got = 0;
    rc = tl_reader_read(rd, buf, TL_READ_CHUNK, &got, err, sizeof err);
    if (rc) set_error(info, err, rc, v);
    if (!rc) rc = feed_all(&d, &rd, rest, buf, got, opts->progress && (!v || v->progress), info, v);
    /* Even after a decode error, what did decode is parsed to the end. */
    enum tl_err frc = d.error[0] ? TL_OK : tl_drive_finish(&d);
    if (!rc) rc = frc;
    if (tl_drive_parser(&d)) {
        info->format = tl_drive_parser(&d)->name;
        info->zoneless |= tl_drive_parser(&d)->zoneless_times;
        take_stats(&d, info);
        if (!opts->quiet && tl_summary_counter(info, 1, "time_anchor_fallback"))
            tl_batch_say(v, "%s: no wall-clock anchor (no Resource Usage event for it, nor a "
                            "ResourceMonitor file beside it): its monotonic timestamps are placed as "
                            "if its first event happened when the file was created, so a second "
                            "read places them the same\n", path);
        if (v) v->rejects(v->ctx, &d);
        else tl_drive_say_rejects(&d);
        if (rc == TL_ERR_NOMEM && !info->error) set_error_of(info, path, rc, v); /* lines left out */
    } else if (in_dir && rc == TL_ERR_FORMAT) {
        /* counted by the directory */
    } else if (d.error[0] && rc != TL_ERR_USAGE) {
        set_error(info, d.error, rc, v);
    } else if (d.error[0]) {
        tl_batch_say(v, "tasklens: %s\n", d.error);
    }
    tl_drive_free(&d);
    free(buf);
    tl_reader_close(rd);
    return rc;
}

void tl_input_info_free(struct tl_summary_input *info)
{
    free((void *)info->counters);
    free((void *)info->error);
    info->counters = NULL;
    info->error = NULL;
}

void tl_batch_say_unreadable(const struct tl_file_list *fl, const struct tl_batch_voice *v)
{
    char why[700];
    if (tl_file_list_problem(fl, why, sizeof why)) tl_batch_say(v, "tasklens: %s\n", why);
}

void tl_batch_dir_add(struct tl_batch_dir *bd, const char *file, enum tl_err r,
                      struct tl_summary_input *one, struct tl_summary_input *info)
{
    if (r == TL_ERR_FORMAT && !one->format) {
        if (bd->unknown < 3) bd->first_unknown[bd->unknown] = file;
        bd->unknown++;
    } else if (r) {
        bd->failed++;
        bd->rc = r;
    }
    if (one->format) {
        info->zoneless |= one->zoneless;
        if (!info->format) info->format = one->format;
        else if (strcmp(info->format, one->format)) info->format = "mixed";
        if (!info->codec) info->codec = one->codec;
        else if (one->codec && strcmp(info->codec, one->codec)) info->codec = "mixed";
    }
    info->lines += one->lines;
    info->records += one->records;
    info->rejected += one->rejected;
    info->bytes += one->bytes;
    for (int k = 0; k < TL_REJ_COUNT; k++) info->rejected_by[k] += one->rejected_by[k];
    /* parser counters add up, by name, over the files of the first parser that has some */
    if (one->ncounters && !bd->counters_format &&
        (bd->counters = calloc(TL_MAX_COUNTERS, sizeof *bd->counters)))
        bd->counters_format = one->format;
    if (bd->counters && one->ncounters && !strcmp(one->format, bd->counters_format))
        bd->ncounters = tl_counters_merge(bd->counters, bd->ncounters, TL_MAX_COUNTERS, one->counters,
                                          one->ncounters);
    tl_input_info_free(one);
}

enum tl_err tl_batch_dir_end(struct tl_batch_dir *bd, const char *dir, size_t nfiles,
                             const struct tl_input_opts *opts, struct tl_summary_input *info,
                             const struct tl_batch_voice *v)
{
    enum tl_err rc = bd->rc;
    info->counters = bd->counters;
    info->ncounters = bd->ncounters;
    size_t unknown = bd->unknown;
    const char *const *first = bd->first_unknown;
    if (unknown && unknown == nfiles) { /* nothing read: an error, said even with -q, files named */
        tl_batch_say(v, "%s: none of its %zu files is of a known format (%s%s%s%s%s%s); --format-in NAME "
                     "reads them as NAME\n", dir, nfiles, first[0], unknown > 1 ? ", " : "",
                     unknown > 1 ? first[1] : "", unknown > 2 ? ", " : "", unknown > 2 ? first[2] : "",
                     unknown > 3 ? ", ..." : "");
        if (!rc) rc = TL_ERR_FORMAT;
    } else if (unknown && !opts->quiet)
        tl_batch_say(v, "%s: %zu of %zu files of no known format, skipped (--format-in NAME reads "
                     "them as NAME)\n", dir, unknown, nfiles);
    if (bd->failed && !opts->quiet)
        tl_batch_say(v, "%s: %zu of %zu files could not be read (reported above)\n", dir, bd->failed,
                     nfiles);
    if (!info->format) info->format = "none";
    return rc;
}

/* A directory: every file under it that is not hidden, in name order, as
 * one input. Files of no known format are skipped (a datastore holds
 * images beside the metadata) and counted in one line. */
static enum tl_err read_dir(const char *dir, const struct tl_input_opts *opts,
                            void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                            struct tl_summary_input *info)
{
    struct tl_file_list fl = {0};
    struct tl_batch_dir bd = {.rc = tl_dir_list(&fl, dir, NULL) ? TL_OK : TL_ERR_IO};
    tl_batch_say_unreadable(&fl, NULL);
    for (size_t i = 0; i < fl.n; i++) {
        struct tl_summary_input one;
        enum tl_err r = tl_batch_read_file(fl.paths[i], NULL, opts, on_record, ctx, &one, true, NULL);
        tl_batch_dir_add(&bd, fl.paths[i], r, &one, info);
    }
    enum tl_err rc = tl_batch_dir_end(&bd, dir, fl.n, opts, info, NULL);
    tl_file_list_free(&fl);
    return rc;
}

/* A file's place among the parts of a directory format p wrote. */
static unsigned long part_index(const struct tl_parser *p, const char *path)
{
    const char *b = strrchr(path, '/');
    return p->dir_part(b ? b + 1 : path);
}

static int by_part(const void *a, const void *b, void *p)
{
    unsigned long x = part_index(p, *(char *const *)a), y = part_index(p, *(char *const *)b);
    return (x > y) - (x < y);
}

enum tl_err tl_batch_list_parts(const struct tl_parser *p, const char *dir, struct tl_file_list *fl,
                                const struct tl_batch_voice *v)
{
    if (!tl_dir_list(fl, dir, NULL)) {
        tl_batch_say_unreadable(fl, v);
        return TL_ERR_IO;
    }
    size_t k = 0;
    for (size_t i = 0; i < fl->n; i++) {
        if (part_index(p, fl->paths[i])) fl->paths[k++] = fl->paths[i];
        else free(fl->paths[i]);
    }
    fl->n = k;
    if (!k) {
        tl_batch_say(v, "tasklens: %s: no parts of a %s directory in it\n", dir, p->name);
        return TL_ERR_FORMAT;
    }
    qsort_r(fl->paths, fl->n, sizeof *fl->paths, by_part, (void *)p);
    char **rest = realloc(fl->paths, (fl->n + 1) * sizeof *fl->paths);
    if (!rest) return TL_ERR_NOMEM;
    fl->paths = rest;
    fl->paths[fl->n] = NULL;
    return TL_OK;
}

/* A directory a format wrote as one input in parts (a rolling Spark event
 * log, eventlog_v2_<app>/): its parts in the format's order, as one stream
 * through one parser; other files are left. */
static enum tl_err read_parts(const struct tl_parser *p, const char *dir,
                              const struct tl_input_opts *opts,
                              void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                              struct tl_summary_input *info)
{
    struct tl_file_list fl = {0};
    enum tl_err rc = tl_batch_list_parts(p, dir, &fl, NULL);
    if (rc) memset(info, 0, sizeof *info);
    else rc = tl_batch_read_file(fl.paths[0], fl.paths + 1, opts, on_record, ctx, info, false, NULL);
    info->path = dir;
    tl_file_list_free(&fl);
    return rc;
}

enum tl_batch_kind tl_batch_kind(const char *path, const struct tl_parser **whole)
{
    struct stat st;
    *whole = NULL;
    if (!strcmp(path, "-") || stat(path, &st) || !S_ISDIR(st.st_mode)) return TL_BATCH_FILE;
    char name[4096];
    snprintf(name, sizeof name, "%s", path);
    for (size_t n = strlen(name); n > 1 && name[n - 1] == '/'; n--) name[n - 1] = '\0';
    const struct tl_parser *p = tl_parser_for_dir(name);
    if (p && p->dir_part) {
        *whole = p;
        return TL_BATCH_PARTS;
    }
    return TL_BATCH_DIR;
}

enum tl_err tl_read_input(const char *path, const struct tl_input_opts *opts,
                          void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                          struct tl_summary_input *info)
{
    const struct tl_parser *whole;
    switch (tl_batch_kind(path, &whole)) {
    case TL_BATCH_PARTS: return read_parts(whole, path, opts, on_record, ctx, info);
    case TL_BATCH_DIR:
        memset(info, 0, sizeof *info);
        info->path = path;
        return read_dir(path, opts, on_record, ctx, info);
    case TL_BATCH_FILE: break;
    }
    return tl_batch_read_file(path, NULL, opts, on_record, ctx, info, false, NULL);
}

int tl_inputs_once(char **paths, int n, const char *cmd)
{
    char **canon = calloc((size_t)n + 1, sizeof *canon);
    if (!canon) return n; /* out of memory: read what was given */
    int kept = 0;
    for (int i = 0; i < n; i++) {
        char *c = strcmp(paths[i], "-") ? tl_canonical_path(paths[i]) : NULL;
        int twin = -1;
        for (int j = 0; c && j < kept && twin < 0; j++)
            if (canon[j] && !strcmp(canon[j], c)) twin = j;
        if (twin >= 0) {
            tl_eprintf("%s: %s is %s, given twice: read once\n", cmd, paths[i], paths[twin]);
            free(c);
            continue;
        }
        canon[kept] = c;
        paths[kept++] = paths[i];
    }
    for (int j = 0; j < kept; j++) free(canon[j]);
    free(canon);
    return kept;
}
