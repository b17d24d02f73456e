/* tasklens summary --lsst-summary DIR...: the ResourceUsageSummary table of
 * LSST's analysis_tools (computed by parsers/lsst_usage.c, which says how),
 * printed as a table or CSV. Numbers are the shortest decimals that read
 * back as the same doubles.
 *
 * Inputs are directories (walked recursively, in name order, for the LSST
 * parser's metadata files: `*_metadata*` ending in .yaml or .json,
 * optionally .gz/.zst) or files, all read by one parser through the door
 * (its pattern compiled once: a datastore holds tens of thousands). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "core/term.h"
#include "cli/input.h"
#include "core/numfmt.h"
#include "ingest/reader.h"
#include "parsers/drive.h"
#include "parsers/lsst_usage.h"

#define MAX_REPORTS 20

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

/* The metadata files under each argument (a file named is read as is). */
static bool list_inputs(struct tl_file_list *fl, char **args, int n)
{
    bool ok = true;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(args[i], &st)) {
            tl_eprintf("tasklens: %s: %s\n", args[i], strerror(errno));
            ok = false;
        } else if (S_ISDIR(st.st_mode)) {
            ok &= tl_dir_list(fl, args[i], tl_parser_find("lsst")->member);
        } else {
            ok &= tl_file_list_add(fl, args[i]);
        }
    }
    char why[700];
    if (tl_file_list_problem(fl, why, sizeof why)) tl_eprintf("tasklens: %s\n", why);
    return ok;
}

/* The --lsst-* settings on the parser (a drive's configure). */
static enum tl_err lsst_settings(void *ctx, const struct tl_parser *p, void *config, char *err,
                                 size_t errlen)
{
    const struct tl_input_opts *io = ctx;
    for (int k = 0; k < io->nsettings; k++) {
        char why[256];
        if (tl_options_set(p->options, config, io->settings[k].key, io->settings[k].value, why,
                           sizeof why)) {
            snprintf(err, errlen, "--lsst-%s: %s", io->settings[k].key, why);
            return TL_ERR_USAGE;
        }
    }
    return TL_OK;
}

struct totals {
    uint64_t bytes, rejected;
    double secs;
};

/* Every file through one drive: one document each. */
static int read_all(const struct tl_file_list *fl, const struct tl_input_opts *io,
                    struct tl_lsst_usage *u, struct totals *t)
{
    struct tl_reject_budget budget = {.max = MAX_REPORTS, .quiet = io->quiet};
    struct tl_drive_cfg dc = {.parser = io->forced, .configure = lsst_settings,
                              .configure_ctx = (void *)io, .record = tl_lsst_usage_add,
                              .record_ctx = u, .kinds = TL_KIND(TL_REC_TASK), .budget = &budget};
    struct tl_drive d;
    char err[512];
    char *buf = malloc(TL_READ_CHUNK);
    int status = TL_EXIT_OK;
    if (!buf || tl_drive_init(&d, &dc, NULL)) {
        free(buf);
        return TL_EXIT_INPUT;
    }
    if (tl_drive_start(&d, NULL, NULL, 0)) {
        tl_eprintf("tasklens: %s\n", d.error);
        status = TL_EXIT_USAGE;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; status != TL_EXIT_USAGE && i < fl->n; i++) {
        struct tl_reader *rd;
        if (tl_reader_open(fl->paths[i], &rd, err, sizeof err)) {
            tl_eprintf("tasklens: %s\n", err);
            status = TL_EXIT_INPUT;
            continue;
        }
        tl_drive_next_input(&d, fl->paths[i]);
        size_t got;
        enum tl_err rc;
        while ((rc = tl_reader_read(rd, buf, TL_READ_CHUNK, &got, err, sizeof err)) == TL_OK && got) {
            tl_drive_feed(&d, buf, got);
            t->bytes += got;
        }
        if (rc) {
            tl_eprintf("tasklens: %s: %s\n", fl->paths[i], err);
            status = TL_EXIT_INPUT;
        }
        tl_drive_end_document(&d);
        tl_reader_close(rd);
    }
    t->rejected = tl_drive_stats(&d).rejected;
    if (budget.untold)
        tl_eprintf("tasklens: ... %llu more rejected files not shown\n",
                (unsigned long long)budget.untold);
    tl_drive_free(&d);
    free(buf);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    t->secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return status;
}

/* The table (or CSV) of the rows. */
static bool print_rows(struct tl_lsst_usage *u, bool csv, FILE *out)
{
    struct tl_lsst_usage_row *rows = NULL;
    size_t n = tl_lsst_usage_rows(u, &rows);
    size_t wlabel = 4;
    for (size_t i = 0; i < n; i++)
        if (strlen(rows[i].label) > wlabel) wlabel = strlen(rows[i].label);
    const char *sep = csv ? "," : " ";
    if (csv) fputs("task,quanta,integrated_runtime_hrs", out);
    else fprintf(out, "%-*s %8s %22s", (int)wlabel, "task", "quanta", "integrated_runtime_hrs");
    static const char *const groups[3] = {"mem_GB_", "runtime_s_", "walltime_s_"};
    for (int g = 0; g < 3; g++)
        for (int q = 0; q < TL_LSST_NQ; q++) {
            char name[32];
            snprintf(name, sizeof name, "%s%s", groups[g], tl_lsst_usage_qnames[q]);
            if (csv) fprintf(out, ",%s", name);
            else fprintf(out, " %22s", name);
        }
    fputc('\n', out);
    for (size_t i = 0; i < n; i++) {
        const struct tl_lsst_usage_row *r = &rows[i];
        if (csv) fprintf(out, "%s,%llu,", r->label, (unsigned long long)r->quanta);
        else fprintf(out, "%-*s %8llu ", (int)wlabel, r->label, (unsigned long long)r->quanta);
        put_num(out, r->integrated_runtime_hrs, csv, 22);
        const double *vs[3] = {r->mem_gb, r->runtime_s, r->walltime_s};
        for (int g = 0; g < 3; g++)
            for (int q = 0; q < TL_LSST_NQ; q++) {
                fputs(sep, out);
                put_num(out, vs[g][q], csv, 22);
            }
        fputc('\n', out);
    }
    free(rows);
    return !fflush(out);
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
                tl_eprintf("tasklens summary --lsst-summary: --format is table or csv\n");
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
    int status = list_inputs(&fl, argv + optind, argc - optind) ? TL_EXIT_OK : TL_EXIT_INPUT;
    struct tl_lsst_usage *u = tl_lsst_usage_new();
    struct totals t = {0};
    int rs = u ? read_all(&fl, &io, u, &t) : TL_EXIT_INPUT;
    if (rs != TL_EXIT_OK) status = rs;
    if (!io.quiet && u)
        tl_eprintf("tasklens: %zu metadata %s, %llu %s, %llu rejected, %.2f s "
                        "(%.0f files/s, %.1f MB/s)\n",
                fl.n, fl.n == 1 ? "file" : "files", (unsigned long long)tl_lsst_usage_quanta(u),
                tl_lsst_usage_quanta(u) == 1 ? "quantum" : "quanta", (unsigned long long)t.rejected,
                t.secs, t.secs > 0 ? (double)fl.n / t.secs : 0,
                t.secs > 0 ? (double)t.bytes / 1e6 / t.secs : 0);
    if (!io.quiet && u) /* a peer's column under the peer's name: said, once (docs/glossary.md) */
        tl_eprintf("tasklens: LSST's columns and meanings: integrated_runtime_hrs and runtime_s are "
                   "CPU time (tasklens's wall-hours are wall time)\n");
    if (u && status != TL_EXIT_USAGE && !print_rows(u, csv, stdout)) status = TL_EXIT_INPUT;
    tl_lsst_usage_free(u);
    tl_file_list_free(&fl);
    return status;
}
