/* tasklens records: one row per finished task attempt, for a notebook.
 *
 *   tasklens records [--format csv|tsv|ndjson] [--metrics LIST] [--tags LIST]
 *                    [-o FILE] INPUT...
 *
 * The same columns for every input format (sinks/table.h), so a table of a
 * Work Queue log and one of an LSST tree concatenate. Streams: each row is
 * written as its record arrives, through one buffer flushed every 256 KiB,
 * so memory stays that of the parser whatever the input's size. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/term.h"
#include "core/path.h"
#include "cli/input.h"
#include "sinks/table.h"

#define MAX_SETTINGS 32
#define FLUSH_AT (256 * 1024)

static void records_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens records [OPTIONS] INPUT...\n"
            "\n"
            "Writes one row per finished task attempt: who ran it (source, workflow,\n"
            "category, task_id, attempt, final, result, exit_code, host, worker), when\n"
            "(start and end in ISO 8601 UTC and epoch seconds), its data id, and every\n"
            "metric in SI units named with its unit. An absent value is empty, never 0.\n"
            "\n"
            "  -f, --format F      csv (default), tsv, or ndjson (one JSON object per line)\n"
            "  -o, --output FILE   write to FILE instead of stdout\n"
            "  --metrics LIST      metric columns (default: every metric a task can have)\n"
            "  --tags LIST         one column per data id tag (e.g. band,visit,detector)\n"
            "                      instead of the one data_id column\n"
            "  --format-in NAME    input format instead of auto-detection\n"
            "  -O PARSER.KEY=VAL   parser option\n"
            "  --max-errors N      rejected lines to print in the run (default 10)\n"
            "  --strict            exit 1 if any line was rejected\n"
            "  -q, --quiet         do not print rejected lines\n" TL_THREADS_HELP
            "\n"
            "In a notebook: pd.read_csv(\"tasks.csv\"), pl.read_csv(\"tasks.csv\"),\n"
            "pd.read_json(\"tasks.ndjson\", lines=True).\n");
}

struct records_cmd {
    struct tl_table table;
    struct tl_input_opts io;
    struct tl_parser_setting settings[MAX_SETTINGS];
    const char *outpath;
    bool strict;
};

/* Where rows go: the buffer, and the stream it drains into. */
struct records_out {
    struct tl_table *table;
    struct tl_buf buf;
    FILE *out;
    int error; /* errno of the first failed write */
    uint64_t rows;
};

static void drain(struct records_out *w)
{
    if (w->buf.len && !w->error && fwrite(w->buf.data, 1, w->buf.len, w->out) != w->buf.len)
        w->error = errno ? errno : EIO;
    w->buf.len = 0;
}

static void on_record(void *ctx, const struct tl_record *r)
{
    struct records_out *w = ctx;
    if (!tl_table_row(w->table, r, &w->buf)) return;
    w->rows++;
    if (w->buf.len >= FLUSH_AT) drain(w);
}

/* Every input through the parsers' one door into rows; the exit status. */
static int write_records(struct records_cmd *k, char **paths, int n)
{
    struct records_out w = {.table = &k->table};
    struct tl_out_file of; /* written whole or not at all */
    char err[512];
    if (!tl_out_open(&of, k->outpath ? k->outpath : "-", err, sizeof err)) {
        tl_eprintf("tasklens records: %s\n", err);
        return TL_EXIT_INPUT;
    }
    w.out = of.f;
    tl_table_header(&k->table, &w.buf);
    int status = TL_EXIT_OK;
    n = tl_inputs_once(paths, n, "tasklens records");
    struct tl_reject_budget budget;
    tl_input_budget(&k->io, &budget);
    struct tl_input_status_ctx ir = {.strict = k->strict, .status = status};
    tl_read_inputs(paths, n, &k->io, on_record, &w, tl_input_status_done, &ir);
    status = ir.status;
    tl_reject_budget_end(&budget, "tasklens records");
    drain(&w);
    if (w.buf.oom && !w.error) w.error = ENOMEM;
    tl_buf_free(&w.buf);
    if (!tl_out_commit(&of, w.error, err, sizeof err)) {
        tl_eprintf("tasklens records: writing %s\n", err);
        return TL_EXIT_INPUT;
    }
    if (k->table.cells_not_utf8)
        tl_eprintf("tasklens records: %llu names held bytes that are not UTF-8: written with U+FFFD "
                   "for each, as NDJSON writes them\n", (unsigned long long)k->table.cells_not_utf8);
    return status;
}

/* --tags: tag names, each a data id key (the fixed columns are already
 * there). False with a message otherwise. */
static bool set_tags(struct tl_table *t, char *list)
{
    t->ntags = 0;
    for (char *save, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        if (tl_tag_field(s) != TL_TAG_OTHER) {
            tl_eprintf("tasklens records: --tags: '%s' is already a column\n", s);
            return false;
        }
        if (t->ntags == TL_TABLE_MAX_TAGS) {
            tl_eprintf("tasklens records: --tags: at most %d\n", TL_TABLE_MAX_TAGS);
            return false;
        }
        t->tags[t->ntags++] = s;
    }
    return t->ntags > 0;
}

/* One flag; -1 to go on, else the exit status (said). */
static int records_flag(int c, char *arg, struct records_cmd *k)
{
    char err[2048];
    switch (c) {
    case 'f':
        if (tl_table_format_named(arg, &k->table.format)) break;
        tl_eprintf("tasklens records: --format: '%s' is none of csv, tsv, ndjson\n", arg);
        return TL_EXIT_USAGE;
    case 'o': k->outpath = arg; break;
    case 'm':
        if ((k->table.nmetrics = tl_metric_list(arg, k->table.metrics, err, sizeof err))) break;
        tl_eprintf("tasklens records: --metrics: %s\n", err);
        return TL_EXIT_USAGE;
    case 't':
        if (set_tags(&k->table, arg)) break;
        return TL_EXIT_USAGE;
    case 's': k->strict = true; break;
    case 'h': records_usage(stdout); return TL_EXIT_OK;
    default: {
        int r = tl_input_option(c, arg, &k->io, k->settings, MAX_SETTINGS, "tasklens records");
        if (r == 0) records_usage(stderr);
        if (r <= 0) return TL_EXIT_USAGE;
    }
    }
    return -1;
}

int tl_cmd_records(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"metrics", required_argument, NULL, 'm'},
        {"tags", required_argument, NULL, 't'},
        {"strict", no_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        TL_INPUT_LONGOPTS,
        {0},
    };
    struct records_cmd k = {.io = {.max_reports = 10, .kinds = TL_KIND(TL_REC_TASK)}};
    k.io.settings = k.settings;
    tl_table_default_metrics(&k.table);
    int c, status = -1;
    optind = 1;
    while (status < 0 && (c = getopt_long(argc, argv, "f:o:O:qh", longopts, NULL)) != -1)
        status = records_flag(c, optarg, &k);
    if (status >= 0) return status;
    if (optind >= argc) {
        records_usage(stderr);
        return TL_EXIT_USAGE;
    }
    k.io.progress = !k.io.quiet && isatty(2) && k.outpath;
    return write_records(&k, argv + optind, argc - optind);
}
