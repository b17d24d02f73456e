/* tasklens summary --lsst-summary DIR...: the ResourceUsageSummary table.
 *
 * Reproduces what analysis_tools computes (GatherResourceUsageTask per
 * quantum, then ConsolidateResourceUsageTask per task label): one row per
 * label with
 *   task, quanta, integrated_runtime_hrs,
 *   mem_GB_p000 ... mem_GB_p100, runtime_s_p000 ..., walltime_s_p000 ...
 * at q = 0, .01, .05, .32, .5, .68, .95, .99, 1 with numpy's linear
 * interpolation (core/quantile.c), memory in GiB (bytes / 1024 / 1024 /
 * 1024), runtime = end - start CPU seconds, walltime = endUtc - prepUtc,
 * integrated_runtime_hrs = sum(runtime) / 3600 with numpy's pairwise sum.
 * Every quantum counts, NoWorkFound ones too (runtime 0). Rows are sorted
 * by label (pandas' pivot order); numbers are the shortest decimals that
 * read back as the same doubles.
 *
 * Inputs are directories (walked recursively, in name order, for files
 * named `*_metadata*` ending in .yaml or .json, optionally .gz/.zst) or
 * files. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "input.h"
#include "reader.h"
#include "numfmt.h"
#include "quantile.h"

#define NQ 9
static const double QS[NQ] = TL_DEFAULT_QUANTILES;
static const char *const QNAMES[NQ] = {"p000", "p001", "p005", "p032", "p050",
                                       "p068", "p095", "p099", "p100"};

struct dvec {
    double *v;
    size_t n, cap;
};

static void dvec_push(struct dvec *d, double x)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        double *v = realloc(d->v, cap * sizeof *v);
        if (!v) return;
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = x;
}

struct label_rows {
    char *label;
    uint64_t quanta;
    struct dvec mem, run, wall;
};

struct collect {
    struct label_rows *rows;
    size_t n, cap;
    uint64_t records;
};

static struct label_rows *rows_for(struct collect *c, const char *label)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->rows[i].label, label)) return &c->rows[i];
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 32;
        struct label_rows *r = realloc(c->rows, cap * sizeof *r);
        if (!r) return NULL;
        c->rows = r;
        c->cap = cap;
    }
    struct label_rows *r = &c->rows[c->n];
    memset(r, 0, sizeof *r);
    if (!(r->label = strdup(label))) return NULL;
    c->n++;
    return r;
}

#define MAX_REPORTS 20

struct reject_ctx {
    const char *path;
    bool quiet;
    int reported;
};

struct emit_ctx {
    struct collect *col;
    struct reject_ctx *rj;
};

/* Rejected files: `path: reason (detail)`, the first MAX_REPORTS. */
static void on_reject(void *ctx, uint64_t line, enum tl_reject why, const char *detail)
{
    (void)line;
    struct reject_ctx *r = ((struct emit_ctx *)ctx)->rj;
    if (r->quiet || r->reported++ >= MAX_REPORTS) return;
    fprintf(stderr, "%s: %s%s%s%s\n", r->path, tl_reject_str(why), detail ? " (" : "",
            detail ? detail : "", detail ? ")" : "");
}

static void on_record(void *ctx, const struct tl_record *r)
{
    struct collect *c = ((struct emit_ctx *)ctx)->col;
    if (r->kind != TL_REC_TASK || !r->final) return; /* one row per quantum */
    struct label_rows *row = rows_for(c, r->category ? r->category : "(unknown)");
    if (!row) return;
    c->records++;
    row->quanta++;
    if (tl_record_has(r, TL_M_MAX_RSS_BYTES))
        dvec_push(&row->mem, r->v[TL_M_MAX_RSS_BYTES] / 1024 / 1024 / 1024);
    if (tl_record_has(r, TL_M_CPU_TIME_S)) dvec_push(&row->run, r->v[TL_M_CPU_TIME_S]);
    if (tl_record_has(r, TL_M_WALL_TIME_S)) dvec_push(&row->wall, r->v[TL_M_WALL_TIME_S]);
}

/* numpy's pairwise summation (umath loops: blocks of 128, 8 accumulators),
 * so the total matches numpy.sum / pandas' sum bit for bit. */
static double pairwise_sum(const double *a, size_t n)
{
    if (n < 8) {
        double s = -0.0;
        for (size_t i = 0; i < n; i++) s += a[i];
        return s;
    }
    if (n <= 128) {
        double r[8];
        for (int k = 0; k < 8; k++) r[k] = a[k];
        size_t i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int k = 0; k < 8; k++) r[k] += a[i + k];
        double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) s += a[i];
        return s;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

static int cmp_rows(const void *a, const void *b)
{
    return strcmp(((const struct label_rows *)a)->label, ((const struct label_rows *)b)->label);
}

static void put_num(FILE *out, double v, bool csv, int width)
{
    char b[40];
    if (v != v) snprintf(b, sizeof b, "%s", csv ? "" : "NaN");
    else tl_fmt_double(b, sizeof b, v);
    if (csv) fputs(b, out);
    else fprintf(out, "%*s", width, b);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens summary --lsst-summary [--format table|csv] [--lsst-rss-unit U]\n"
            "                        [--lsst-path-regex RE] [-q] DIR|FILE...\n"
            "\n"
            "The ResourceUsageSummary table of LSST analysis_tools, from <label>_metadata\n"
            "files (YAML or JSON) found under each DIR.\n");
}

int tl_cmd_lsst_summary(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"lsst-summary", no_argument, NULL, 'L'},
        {"format", required_argument, NULL, 'f'},
        {"lsst-rss-unit", required_argument, NULL, 'r'},
        {"lsst-path-regex", required_argument, NULL, 'p'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    bool csv = false;
    struct tl_parser_setting settings[2];
    struct tl_input_opts io = {.max_reports = 10, .settings = settings};
    io.forced = tl_parser_find("lsst");
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'L': break;
        case 'f':
            if (!strcmp(optarg, "csv")) csv = true;
            else if (strcmp(optarg, "table")) {
                fprintf(stderr, "tasklens summary --lsst-summary: --format is table or csv\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 'r': settings[io.nsettings++] = (struct tl_parser_setting){"lsst", "rss_unit", optarg}; break;
        case 'p': settings[io.nsettings++] = (struct tl_parser_setting){"lsst", "path_regex", optarg}; break;
        case 'q': io.quiet = true; break;
        case 'h': usage(stdout); return TL_EXIT_OK;
        default: usage(stderr); return TL_EXIT_USAGE;
        }
        if (io.nsettings > 2) return TL_EXIT_USAGE;
    }
    if (optind >= argc) {
        usage(stderr);
        return TL_EXIT_USAGE;
    }
    struct tl_file_list fl = {0};
    int status = TL_EXIT_OK;
    for (int i = optind; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st)) {
            fprintf(stderr, "tasklens: %s: %s\n", argv[i], strerror(errno));
            status = TL_EXIT_INPUT;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (!tl_walk_metadata(&fl, argv[i])) status = TL_EXIT_INPUT;
        } else if (!tl_file_list_add(&fl, argv[i])) { /* a file named explicitly: read it */
            status = TL_EXIT_INPUT;
        }
    }
    struct collect col = {0};
    uint64_t rejected = 0, bytes = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* one parser for every file: its pattern is compiled once, its buffers
     * reused; finish() ends each document */
    const struct tl_parser *lp = io.forced;
    struct tl_parser_inst inst = {0};
    struct reject_ctx rj = {NULL, io.quiet, 0};
    struct tl_emit emit = {on_record, on_reject, NULL, TL_KIND(TL_REC_TASK)};
    struct emit_ctx ec = {&col, &rj};
    emit.ctx = &ec;
    char err[512];
    char *buf = malloc(TL_READ_CHUNK);
    if (!buf || tl_parser_inst_init(&inst, lp)) status = TL_EXIT_INPUT;
    for (int k = 0; status == TL_EXIT_OK && k < io.nsettings; k++)
        if (tl_options_set(lp->options, inst.config, settings[k].key, settings[k].value, err,
                           sizeof err)) {
            fprintf(stderr, "tasklens: --lsst-%s: %s\n", settings[k].key, err);
            status = TL_EXIT_USAGE;
        }
    if (status == TL_EXIT_OK && tl_parser_inst_open(&inst, &emit)) {
        fprintf(stderr, "tasklens: bad --lsst-rss-unit or --lsst-path-regex\n");
        status = TL_EXIT_USAGE;
    }
    for (size_t i = 0; status != TL_EXIT_USAGE && inst.state && i < fl.n; i++) {
        struct tl_reader *rd;
        rj.path = fl.paths[i];
        if (tl_reader_open(fl.paths[i], &rd, err, sizeof err)) {
            fprintf(stderr, "tasklens: %s\n", err);
            status = TL_EXIT_INPUT;
            continue;
        }
        lp->set_name(inst.state, fl.paths[i]);
        size_t got;
        enum tl_err rc;
        while ((rc = tl_reader_read(rd, buf, TL_READ_CHUNK, &got, err, sizeof err)) == TL_OK && got) {
            lp->feed(inst.state, buf, got);
            bytes += got;
        }
        if (rc) {
            fprintf(stderr, "tasklens: %s: %s\n", fl.paths[i], err);
            status = TL_EXIT_INPUT;
        }
        lp->finish(inst.state);
        tl_reader_close(rd);
    }
    if (inst.state) rejected = lp->stats(inst.state)->rejected;
    if (rj.reported > MAX_REPORTS)
        fprintf(stderr, "tasklens: ... %d more rejected files not shown\n", rj.reported - MAX_REPORTS);
    tl_parser_inst_free(&inst);
    free(buf);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (!io.quiet)
        fprintf(stderr, "tasklens: %zu metadata files, %llu quanta, %llu rejected, %.2f s "
                        "(%.0f files/s, %.1f MB/s)\n",
                fl.n, (unsigned long long)col.records, (unsigned long long)rejected, secs,
                secs > 0 ? (double)fl.n / secs : 0, secs > 0 ? (double)bytes / 1e6 / secs : 0);
    if (status != TL_EXIT_USAGE) {
        qsort(col.rows, col.n, sizeof *col.rows, cmp_rows);
        FILE *out = stdout;
        size_t wlabel = 4;
        for (size_t i = 0; i < col.n; i++)
            if (strlen(col.rows[i].label) > wlabel) wlabel = strlen(col.rows[i].label);
        const char *sep = csv ? "," : " ";
        if (csv) fputs("task,quanta,integrated_runtime_hrs", out);
        else fprintf(out, "%-*s %8s %22s", (int)wlabel, "task", "quanta", "integrated_runtime_hrs");
        static const char *const groups[3] = {"mem_GB_", "runtime_s_", "walltime_s_"};
        for (int g = 0; g < 3; g++)
            for (int q = 0; q < NQ; q++) {
                char name[32];
                snprintf(name, sizeof name, "%s%s", groups[g], QNAMES[q]);
                if (csv) fprintf(out, ",%s", name);
                else fprintf(out, " %22s", name);
            }
        fputc('\n', out);
        for (size_t i = 0; i < col.n; i++) {
            struct label_rows *r = &col.rows[i];
            if (csv) fprintf(out, "%s,%llu,", r->label, (unsigned long long)r->quanta);
            else fprintf(out, "%-*s %8llu ", (int)wlabel, r->label, (unsigned long long)r->quanta);
            put_num(out, pairwise_sum(r->run.v, r->run.n) / 3600.0, csv, 22);
            struct dvec *vs[3] = {&r->mem, &r->run, &r->wall};
            for (int g = 0; g < 3; g++) {
                tl_sort_doubles(vs[g]->v, vs[g]->n);
                for (int q = 0; q < NQ; q++) {
                    fputs(sep, out);
                    put_num(out, vs[g]->n ? tl_quantile_sorted(vs[g]->v, vs[g]->n, QS[q]) : 0.0 / 0.0,
                            csv, 22);
                }
            }
            fputc('\n', out);
        }
        if (fflush(out)) status = TL_EXIT_INPUT;
    }
    for (size_t i = 0; i < col.n; i++) {
        free(col.rows[i].label);
        free(col.rows[i].mem.v);
        free(col.rows[i].run.v);
        free(col.rows[i].wall.v);
    }
    free(col.rows);
    tl_file_list_free(&fl);
    return status;
}
