#include "input.h"

#define PROGRESS_MIN_BYTES (100ULL * 1000 * 1000)

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reader.h"

struct reporter {
    const char *path;
    int max_reports;
    int reported;
    bool quiet;
    void (*on_record)(void *ctx, const struct tl_record *r);
    void *ctx;
};

static void report_reject(void *ctx, uint64_t line, enum tl_reject why, const char *detail)
{
    struct reporter *rep = ctx;
    if (rep->quiet || rep->reported >= rep->max_reports) return;
    rep->reported++;
    if (detail)
        fprintf(stderr, "%s:%llu: %s (%s)\n", rep->path, (unsigned long long)line,
                tl_reject_str(why), detail);
    else
        fprintf(stderr, "%s:%llu: %s\n", rep->path, (unsigned long long)line, tl_reject_str(why));
}

static void forward_record(void *ctx, const struct tl_record *r)
{
    struct reporter *rep = ctx;
    rep->on_record(rep->ctx, r);
}

bool tl_parse_setting(char *arg, struct tl_parser_setting *out)
{
    char *dot = strchr(arg, '.');
    char *eq = strchr(arg, '=');
    if (!dot || !eq || dot > eq || dot == arg || eq == dot + 1) return false;
    *dot = *eq = '\0';
    out->parser = arg;
    out->key = dot + 1;
    out->value = eq + 1;
    return true;
}

int tl_input_option(int c, char *arg, struct tl_input_opts *io,
                    struct tl_parser_setting *settings, int max, const char *cmd)
{
    switch (c) {
    case 'i':
        io->forced = tl_parser_find(arg);
        if (!io->forced) {
            fprintf(stderr, "%s: unknown input format '%s' (see `tasklens formats`)\n", cmd, arg);
            return -1;
        }
        return 1;
    case 'O':
        if (io->nsettings == max || !tl_parse_setting(arg, &settings[io->nsettings])) {
            fprintf(stderr, "%s: -O wants PARSER.KEY=VALUE\n", cmd);
            return -1;
        }
        io->nsettings++;
        io->settings = settings;
        return 1;
    case 'e': io->max_reports = atoi(arg); return 1;
    case 'q': io->quiet = true; return 1;
    default: return 0;
    }
}

static enum tl_err apply_settings(struct tl_parser_inst *inst, const struct tl_input_opts *o)
{
    char err[256];
    for (int i = 0; i < o->nsettings; i++) {
        if (strcmp(o->settings[i].parser, inst->p->name)) continue;
        if (tl_options_set(inst->p->options, inst->config, o->settings[i].key,
                           o->settings[i].value, err, sizeof err)) {
            fprintf(stderr, "tasklens: %s parser: %s\n", inst->p->name, err);
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

/* path, then the files of `rest` (NULL-terminated; may be NULL) as one
 * stream through one parser. */
static enum tl_err read_file(const char *path, char *const *rest, const struct tl_input_opts *opts,
                             void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                             struct tl_summary_input *info, bool in_dir)
{
    memset(info, 0, sizeof *info);
    info->path = path;
    char err[512] = "";
    struct tl_reader *rd = NULL;
    enum tl_err rc = tl_reader_open(path, &rd, err, sizeof err);
    if (rc) {
        fprintf(stderr, "tasklens: %s\n", err[0] ? err : tl_strerror(rc));
        info->error = strdup(err[0] ? err : tl_strerror(rc));
        return rc;
    }
    info->codec = tl_reader_codec(rd);
    char *buf = malloc(TL_READ_CHUNK);
    if (!buf) {
        tl_reader_close(rd);
        return TL_ERR_NOMEM;
    }
    size_t got = 0;
    rc = tl_reader_read(rd, buf, TL_READ_CHUNK, &got, err, sizeof err);
    struct tl_parser_inst inst = {0};
    const struct tl_parser *p = opts->forced;
    if (!rc && !p) {
        p = tl_parser_detect(buf, got, NULL);
        if (!p && got == 0) p = tl_parser_find("wq"); /* empty input: nothing to detect */
        if (!p) {
            snprintf(err, sizeof err, "%s: format not recognized (use --format-in NAME; see "
                                      "`tasklens formats`)", path);
            rc = TL_ERR_FORMAT;
        }
    }
    struct reporter rep = {path, opts->max_reports, 0, opts->quiet, on_record, ctx};
    struct tl_emit emit = {forward_record, report_reject, &rep, opts->kinds};
    if (!rc) rc = tl_parser_inst_init(&inst, p);
    if (!rc) rc = apply_settings(&inst, opts);
    if (!rc) rc = tl_parser_inst_open(&inst, &emit);
    if (!rc && p->set_name) p->set_name(inst.state, path);
    if (!rc) {
        info->format = p->name;
        uint64_t size = tl_reader_raw_size(rd);
        bool progress = opts->progress && size > PROGRESS_MIN_BYTES;
        struct timespec t0, tn;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        double last = -1; /* the first line after 16 chunks, then every 0.25 s */
        unsigned chunks = 0;
        while (got > 0) {
            info->bytes += got;
            rc = p->feed(inst.state, buf, got);
            if (rc) break;
            if (progress && (++chunks & 15) == 0) {
                clock_gettime(CLOCK_MONOTONIC, &tn);
                double el = (double)(tn.tv_sec - t0.tv_sec) + (tn.tv_nsec - t0.tv_nsec) * 1e-9;
                if (el - last >= 0.25) {
                    uint64_t at = tl_reader_raw_offset(rd);
                    fprintf(stderr, "\r%s: %3.0f%%  %.2f / %.2f GB  %.0f MB/s ", path,
                            100.0 * (double)at / (double)size, (double)at / 1e9, (double)size / 1e9,
                            (double)at / 1e6 / el);
                    last = el;
                }
            }
            rc = tl_reader_read(rd, buf, TL_READ_CHUNK, &got, err, sizeof err);
            if (!rc && !got) rc = next_part(&rd, &rest, buf, &got, err, sizeof err);
            if (rc) {
                fprintf(stderr, "tasklens: %s: %s\n", path, err[0] ? err : tl_strerror(rc));
                info->error = strdup(err[0] ? err : tl_strerror(rc));
                break;
            }
        }
        if (progress && last >= 0) fputs("\r\033[K", stderr); /* the table starts clean */
        /* Even after a decode error, what did decode is parsed to the end. */
        enum tl_err frc = p->finish(inst.state);
        if (!rc) rc = frc;
        const struct tl_parse_stats *st = p->stats(inst.state);
        info->lines = st->lines;
        info->records = st->records;
        info->rejected = st->rejected;
        memcpy(info->rejected_by, st->rejected_by, sizeof info->rejected_by);
        if (p->counters) {
            const char *const *names;
            const uint64_t *values;
            size_t n = p->counters(inst.state, &names, &values);
            uint64_t *copy = malloc(n * sizeof *copy);
            if (copy) {
                memcpy(copy, values, n * sizeof *copy);
                info->counter_names = names;
                info->counters = copy;
                info->ncounters = n;
            }
        }
        if (!opts->quiet && tl_summary_counter(info, 1, "time_anchor_fallback"))
            fprintf(stderr, "%s: no wall-clock anchor (no Resource Usage event for it, nor a "
                            "ResourceMonitor file beside it): its monotonic timestamps are placed as "
                            "if its first event happened when it was read\n", path);
        if (st->rejected && !opts->quiet) {
            fprintf(stderr, "%s: %llu of %llu lines rejected:", path,
                    (unsigned long long)st->rejected, (unsigned long long)st->lines);
            for (int r = 0; r < TL_REJ_COUNT; r++)
                if (st->rejected_by[r])
                    fprintf(stderr, " %s=%llu", tl_reject_key((enum tl_reject)r),
                            (unsigned long long)st->rejected_by[r]);
            fputc('\n', stderr);
        }
    } else if (in_dir && rc == TL_ERR_FORMAT && !info->format) {
        /* counted by the directory */
    } else if (rc != TL_ERR_USAGE) {
        fprintf(stderr, "tasklens: %s\n", err[0] ? err : tl_strerror(rc));
        if (!info->error) info->error = strdup(err[0] ? err : tl_strerror(rc));
    }
    tl_parser_inst_free(&inst);
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

/* ---------------------------------------------------------------- files */

static bool is_metadata_name(const char *base)
{
    if (base[0] == '.' || !strstr(base, "_metadata")) return false;
    static const char *const exts[] = {".yaml", ".json", ".yaml.gz", ".json.gz", ".yaml.zst",
                                       ".json.zst"};
    size_t bl = strlen(base);
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
        size_t el = strlen(exts[i]);
        if (bl > el && !strcmp(base + bl - el, exts[i])) return true;
    }
    return false;
}

bool tl_file_list_add(struct tl_file_list *fl, const char *path)
{
    if (fl->n == fl->cap) {
        size_t cap = fl->cap ? fl->cap * 2 : 1024;
        char **p = realloc(fl->paths, cap * sizeof *p);
        if (!p) return false;
        fl->paths = p;
        fl->cap = cap;
    }
    if (!(fl->paths[fl->n] = strdup(path))) return false;
    fl->n++;
    return true;
}

/* Files under the directory fd (path: its name), recursively (symlinks not
 * followed): metadata files only, or every file not hidden. A butler
 * datastore holds more directories than files, so this reads entries with
 * getdents64 and trusts their d_type (no opendir fstat, no stat per entry;
 * fstatat only where the filesystem does not say). */
static bool walk(struct tl_file_list *fl, int fd, char *path, size_t plen, int depth, bool metadata)
{
    size_t cap = 32768, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return false;
    }
    for (;;) { /* every entry first: the fd is then free for the children */
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) break;
            buf = nb;
            cap *= 2;
        }
        ssize_t n = getdents64(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n < 0) fprintf(stderr, "tasklens: %s: %s\n", path, strerror(errno));
            break;
        }
        len += (size_t)n;
    }
    bool ok = true;
    for (size_t off = 0; off < len;) {
        struct dirent64 *e = (struct dirent64 *)(buf + off);
        off += e->d_reclen;
        const char *name = e->d_name;
        if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
        size_t nl = strlen(name);
        if (plen + 1 + nl + 1 > PATH_MAX) continue;
        path[plen] = '/';
        memcpy(path + plen + 1, name, nl + 1);
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN) {
            struct stat st;
            if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW)) continue;
            type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
        }
        if (type == DT_DIR && depth < 64) {
            if (!metadata && name[0] == '.') continue;
            int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                fprintf(stderr, "tasklens: %s: %s\n", path, strerror(errno));
                ok = false;
                continue;
            }
            ok &= walk(fl, sub, path, plen + 1 + nl, depth + 1, metadata);
        } else if (type == DT_REG && (metadata ? is_metadata_name(name) : name[0] != '.')) {
            ok &= tl_file_list_add(fl, path);
        }
    }
    path[plen] = '\0';
    free(buf);
    close(fd);
    return ok;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool walk_sorted(struct tl_file_list *fl, const char *dir, bool metadata)
{
    size_t before = fl->n;
    char path[PATH_MAX];
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || strlen(dir) >= sizeof path) {
        fprintf(stderr, "tasklens: %s: %s\n", dir, strerror(fd < 0 ? errno : ENAMETOOLONG));
        if (fd >= 0) close(fd);
        return false;
    }
    strcpy(path, dir);
    size_t plen = strlen(path);
    while (plen > 1 && path[plen - 1] == '/') path[--plen] = '\0'; /* "dir/" names files "dir/x" */
    bool ok = walk(fl, fd, path, plen, 0, metadata);
    if (fl->n > before) qsort(fl->paths + before, fl->n - before, sizeof *fl->paths, cmp_str);
    return ok;
}

bool tl_walk_metadata(struct tl_file_list *fl, const char *dir)
{
    return walk_sorted(fl, dir, true);
}

void tl_file_list_free(struct tl_file_list *fl)
{
    for (size_t i = 0; i < fl->n; i++) free(fl->paths[i]);
    free(fl->paths);
    *fl = (struct tl_file_list){0};
}

/* A directory: every file under it that is not hidden, in name order, as
 * one input. Files of no known format are skipped (a datastore holds
 * images beside the metadata) and counted in one line. */
static enum tl_err read_dir(const char *dir, const struct tl_input_opts *opts,
                            void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                            struct tl_summary_input *info)
{
    struct tl_file_list fl = {0};
    enum tl_err rc = walk_sorted(&fl, dir, false) ? TL_OK : TL_ERR_IO;
    size_t unknown = 0, failed = 0;
    uint64_t *counters = NULL;
    for (size_t i = 0; i < fl.n; i++) {
        struct tl_summary_input one;
        enum tl_err r = read_file(fl.paths[i], NULL, opts, on_record, ctx, &one, true);
        if (r == TL_ERR_FORMAT && !one.format) {
            unknown++;
        } else if (r) {
            failed++;
            rc = r;
        }
        if (one.format) {
            if (!info->format) info->format = one.format;
            else if (strcmp(info->format, one.format)) info->format = "mixed";
            if (!info->codec) info->codec = one.codec;
            else if (one.codec && strcmp(info->codec, one.codec)) info->codec = "mixed";
        }
        info->lines += one.lines;
        info->records += one.records;
        info->rejected += one.rejected;
        info->bytes += one.bytes;
        for (int k = 0; k < TL_REJ_COUNT; k++) info->rejected_by[k] += one.rejected_by[k];
        /* parser counters add up while every file has the same parser's */
        if (one.counters && !info->counter_names && !counters) {
            counters = calloc(one.ncounters, sizeof *counters);
            if (counters) {
                info->counter_names = one.counter_names;
                info->ncounters = one.ncounters;
            }
        }
        if (counters && one.counters && one.counter_names == info->counter_names)
            for (size_t k = 0; k < one.ncounters && k < info->ncounters; k++) counters[k] += one.counters[k];
        tl_input_info_free(&one);
    }
    info->counters = counters;
    if (unknown && !opts->quiet)
        fprintf(stderr, "%s: %zu of %zu files of no known format, skipped (--format-in NAME reads "
                        "them as NAME)\n", dir, unknown, fl.n);
    if (failed && !opts->quiet)
        fprintf(stderr, "%s: %zu of %zu files could not be read (reported above)\n", dir, failed, fl.n);
    if (!info->format) info->format = "none";
    tl_file_list_free(&fl);
    return rc;
}

/* The index N of a rolling Spark event log part `events_N_<app>[.codec]`,
 * or 0 for any other name. */
static unsigned long rolling_index(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (strncmp(b, "events_", 7)) return 0;
    char *end;
    unsigned long n = strtoul(b + 7, &end, 10);
    return *end == '_' ? n : 0;
}

static int by_rolling_index(const void *a, const void *b)
{
    unsigned long x = rolling_index(*(char *const *)a), y = rolling_index(*(char *const *)b);
    return (x > y) - (x < y);
}

/* A rolling Spark event log directory (eventlog_v2_<app>/): its
 * events_N_ files in the order of N (events_10 after events_9), as one
 * stream through one parser (a later part's tasks name stages an earlier
 * part submitted). appstatus_ and anything else is left. */
static enum tl_err read_rolling(const char *dir, const struct tl_input_opts *opts,
                                void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                                struct tl_summary_input *info)
{
    struct tl_file_list fl = {0};
    if (!walk_sorted(&fl, dir, false)) return TL_ERR_IO;
    size_t k = 0;
    for (size_t i = 0; i < fl.n; i++) {
        if (rolling_index(fl.paths[i])) fl.paths[k++] = fl.paths[i];
        else free(fl.paths[i]);
    }
    fl.n = k;
    if (!k) {
        tl_file_list_free(&fl);
        memset(info, 0, sizeof *info);
        info->path = dir;
        fprintf(stderr, "tasklens: %s: no events_N_ files in this rolling event log\n", dir);
        return TL_ERR_FORMAT;
    }
    qsort(fl.paths, fl.n, sizeof *fl.paths, by_rolling_index);
    char **rest = realloc(fl.paths, (fl.n + 1) * sizeof *fl.paths);
    enum tl_err rc = TL_ERR_NOMEM;
    if (rest) {
        fl.paths = rest;
        fl.paths[fl.n] = NULL;
        rc = read_file(fl.paths[0], fl.paths + 1, opts, on_record, ctx, info, false);
    }
    info->path = dir;
    tl_file_list_free(&fl);
    return rc;
}

enum tl_err tl_read_input(const char *path, const struct tl_input_opts *opts,
                          void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                          struct tl_summary_input *info)
{
    struct stat st;
    if (strcmp(path, "-") && !stat(path, &st) && S_ISDIR(st.st_mode)) {
        const char *b = strrchr(path, '/');
        while (b && b > path && !b[1]) /* a trailing slash: the name before it */
            for (b--; b > path && *b != '/'; b--) {}
        b = b ? (*b == '/' ? b + 1 : b) : path;
        if (!strncmp(b, "eventlog_v2_", 12)) return read_rolling(path, opts, on_record, ctx, info);
        memset(info, 0, sizeof *info);
        info->path = path;
        return read_dir(path, opts, on_record, ctx, info);
    }
    return read_file(path, NULL, opts, on_record, ctx, info, false);
}
