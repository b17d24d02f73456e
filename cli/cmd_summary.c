/* tasklens summary: the batch question in one command.
 *
 *   tasklens summary [--by KEYS] [--quantiles LIST] [--format table|csv|json]
 *                    [--metrics LIST] [--format-in NAME] [--strict] INPUT...
 *
 * Every input goes through its own parser instance (runs in different files
 * are independent), and all records feed one summary. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/term.h"
#include "cli/input.h"
#include "core/aggregate.h"
#include "core/quantile.h"
#include "core/summary.h"

#define MAX_SETTINGS 32

static void summary_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens summary [OPTIONS] INPUT...\n"
            "\n"
            "Reads task records from each INPUT (a file, '-' for stdin, or a directory: its\n"
            "files in name order; .gz and .zst are decoded by their magic bytes) and prints\n"
            "per-group counts and distributions.\n"
            "\n"
            "  --by KEYS           group by these tags (default: category); any of\n"
            "                      category, host, worker, workflow, result, source\n"
            "  --quantiles LIST    probabilities (default: 0,0.01,0.05,0.32,0.5,0.68,0.95,0.99,1)\n"
            "  --metrics LIST      metrics to summarize (default: wall_time_s,cpu_time_s,\n"
            "                      max_rss_bytes,disk_bytes,cores,queue_time_s,exec_time_s,\n"
            "                      alloc_cores,alloc_memory_bytes,value)\n"
            "  --format FMT        table (default), csv or json\n"
            "  --format-in NAME    input format instead of auto-detection (see `tasklens formats`)\n"
            "  -O PARSER.KEY=VAL   parser option, e.g. -O wq.max_line=4M\n"
            "  --max-errors N      rejected lines to print in the run (default 10)\n"
            "  --max-groups N      groups kept (default 1000000); the records of later ones\n"
            "                      go to the group _other, counted and said\n"
            "  --exact-limit N     exact quantiles while a group has at most N values of a\n"
            "                      metric (default 1000000); a sketch beyond\n"
            "  --approx            sketches everywhere (bounded memory, relative error)\n"
            "  --alpha X           sketch relative accuracy (default 0.005)\n"
            "  --strict            exit 1 if any line was rejected\n"
            "  -q, --quiet         do not print rejected lines\n" TL_THREADS_HELP
            "\n"
            "  --lsst-summary      LSST's ResourceUsageSummary table instead (see its --help)\n"
            "  --dasf-task-balance DASF's task balance table (CSV) of TracePlugin traces\n"
            "\n"
            "exit status: 0 done, 1 an input could not be read (or --strict and a line was\n"
            "rejected), 2 usage error.\n");
}

/* What reading adds to: the summary, its first error, and the names of
 * the extra tags the records carried (data ids), so that a --by tag no
 * record has can be told from one some records lack. */
#define MAX_SEEN_TAGS 64
/* What reading gives: the summary, the tag keys seen (for --by), the first
 * error. The whole, and each file's part (struct tl_input_parts). */
struct reading {
    struct tl_summary *s;
    enum tl_err rc;
    char *seen[MAX_SEEN_TAGS]; /* owned: a parser's names end with its input */
    int nseen;
    const struct tl_summary_opts *so; /* for a part's summary */
};

static void note_tag(struct reading *rd, const char *key)
{
    int j = 0;
    while (j < rd->nseen && strcmp(rd->seen[j], key)) j++;
    if (j == rd->nseen && rd->nseen < MAX_SEEN_TAGS && (rd->seen[j] = strdup(key))) rd->nseen++;
}

static void add_record(void *ctx, const struct tl_record *r)
{
    struct reading *rd = ctx;
    for (int i = 0; i < r->n_tags; i++) note_tag(rd, r->tags[i].key);
    enum tl_err e = tl_summary_add(rd->s, r);
    if (e && !rd->rc) rd->rc = e;
}

static void *part_open(void *ctx)
{
    const struct reading *whole = ctx;
    struct reading *rd = calloc(1, sizeof *rd);
    if (rd && !(rd->s = tl_summary_new(whole->so))) {
        free(rd);
        rd = NULL;
    }
    return rd;
}

static void part_merge(void *ctx, void *part)
{
    struct reading *whole = ctx, *rd = part;
    enum tl_err e = tl_summary_merge(whole->s, rd->s);
    if (!whole->rc) whole->rc = rd->rc ? rd->rc : e;
    for (int i = 0; i < rd->nseen; i++) {
        note_tag(whole, rd->seen[i]);
        free(rd->seen[i]);
    }
    tl_summary_free(rd->s);
    free(rd);
}

/* What the flags ask for. */
struct summary_cmd {
    struct tl_summary_opts so;
    struct tl_input_opts io;
    struct tl_parser_setting settings[MAX_SETTINGS];
    enum tl_summary_format fmt;
    bool strict;
};

/* A count flag (--max-groups, --exact-limit) into *out; false when bad. */
static bool count_flag(const char *arg, unsigned long long min, uint32_t *out)
{
    char *end;
    unsigned long long n = strtoull(arg, &end, 10);
    if (*end || end == arg || n > UINT32_MAX || n < min) return false;
    *out = (uint32_t)n;
    return true;
}

/* One option of the table's own; false (said) when its value is bad. */
static bool summary_option(int c, const char *arg, struct summary_cmd *k)
{
    char err[2048];
    switch (c) {
    case 'b':
        if ((k->so.nby = tl_parse_key_list((char *)arg, k->so.by, TL_SUMMARY_MAX_KEYS))) return true;
        tl_eprintf("tasklens summary: bad --by list\n");
        return false;
    case 'Q': {
        double scratch[TL_SUMMARY_MAX_QUANTILES + 1];
        int n = tl_parse_quantile_list(arg, scratch, TL_SUMMARY_MAX_QUANTILES + 1);
        if (n > TL_SUMMARY_MAX_QUANTILES) {
            tl_eprintf("tasklens summary: --quantiles takes at most %d values\n",
                    TL_SUMMARY_MAX_QUANTILES);
            return false;
        }
        if ((k->so.nq = tl_parse_quantile_list(arg, k->so.q, TL_SUMMARY_MAX_QUANTILES)) > 0) return true;
        tl_eprintf("tasklens summary: --quantiles wants numbers in [0,1], comma-separated\n");
        return false;
    }
    case 'm':
        if (tl_summary_opts_set_metrics(&k->so, arg, err, sizeof err)) return true;
        tl_eprintf("tasklens summary: --metrics: %s\n", err);
        return false;
    case 'f':
        if (!strcmp(arg, "table")) k->fmt = TL_SUMMARY_TABLE;
        else if (!strcmp(arg, "csv")) k->fmt = TL_SUMMARY_CSV;
        else if (!strcmp(arg, "json")) k->fmt = TL_SUMMARY_JSON;
        else {
            tl_eprintf("tasklens summary: --format is table, csv or json\n");
            return false;
        }
        return true;
    case 'x':
    case 'G':
        if (count_flag(arg, c == 'G', c == 'G' ? &k->so.max_groups : &k->so.exact_limit)) return true;
        tl_eprintf("tasklens summary: --%s wants a count\n", c == 'G' ? "max-groups" : "exact-limit");
        return false;
    case 'A': {
        char *end;
        k->so.alpha = strtod(arg, &end);
        if (!*end && k->so.alpha >= 1e-6 && k->so.alpha <= 0.5) return true;
        tl_eprintf("tasklens summary: --alpha wants a number in [0.000001, 0.5]\n");
        return false;
    }
    }
    return false;
}

/* The flags into k: -1 to go on, else the exit status. */
static int parse_flags(int argc, char **argv, struct summary_cmd *k)
{
    static const struct option longopts[] = {
        {"by", required_argument, NULL, 'b'},
        {"quantiles", required_argument, NULL, 'Q'},
        {"metrics", required_argument, NULL, 'm'},
        {"format", required_argument, NULL, 'f'},
        {"max-groups", required_argument, NULL, 'G'},
        {"strict", no_argument, NULL, 's'},
        {"exact-limit", required_argument, NULL, 'x'},
        {"approx", no_argument, NULL, 'a'},
        {"alpha", required_argument, NULL, 'A'},
        {"help", no_argument, NULL, 'h'},
        TL_INPUT_LONGOPTS,
        {0},
    };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "O:qh", longopts, NULL)) != -1) {
        if (c > 0 && strchr("bQmfxGA", c)) {
            if (!summary_option(c, optarg, k)) return TL_EXIT_USAGE;
            continue;
        }
        if (c == 's') k->strict = true;
        else if (c == 'a') k->so.approx = true;
        else if (c == 'h') {
            summary_usage(stdout);
            return TL_EXIT_OK;
        } else {
            int r = tl_input_option(c, optarg, &k->io, k->settings, MAX_SETTINGS, "tasklens summary");
            if (r == 0) summary_usage(stderr);
            if (r <= 0) return TL_EXIT_USAGE;
        }
    }
    k->io.settings = k->settings;
    k->io.kinds = TL_AGG_KINDS; /* tl_summary_add aggregates, nothing else */
    if (optind >= argc) {
        summary_usage(stderr);
        return TL_EXIT_USAGE;
    }
    return -1;
}

/* Every --by tag is a record field or a tag some record carried; else it
 * is refused with the names there are (it used to group everything under
 * node=-). */
static bool tags_known(const struct summary_cmd *k, const struct reading *rd)
{
    static const char *const fields[] = {"category", "host", "worker", "workflow", "result", "source"};
    bool ok = true;
    for (int b = 0; b < k->so.nby; b++) {
        bool known = false;
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) known |= !strcmp(k->so.by[b], fields[i]);
        for (int i = 0; i < rd->nseen; i++) known |= !strcmp(k->so.by[b], rd->seen[i]);
        if (known) continue;
        tl_eprintf("tasklens summary: --by %s: no record has this tag (known: category, host, "
                        "worker, workflow, result, source", k->so.by[b]);
        for (int i = 0; i < rd->nseen; i++) tl_eprintf(", %s", rd->seen[i]);
        tl_eprintf(")\n");
        ok = false;
    }
    return ok;
}

/* What reading the inputs gave: their infos, kept, and the exit status. */
struct inputs_read {
    struct tl_summary_input *infos;
    bool strict;
    int status;
};

static void input_read(void *ctx, int i, enum tl_err rc, struct tl_summary_input *info)
{
    struct inputs_read *ir = ctx;
    ir->infos[i] = *info;
    ir->status = tl_input_status(ir->status, rc, info, ir->strict);
}

int tl_cmd_summary(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* a different table: its own options */
        if (!strcmp(argv[i], "--lsst-summary")) return tl_cmd_lsst_summary(argc, argv);
        else if (!strcmp(argv[i], "--dasf-task-balance")) return tl_cmd_dasf_balance(argc, argv);
    struct summary_cmd k = {.io = {.max_reports = 10}, .fmt = TL_SUMMARY_TABLE};
    tl_summary_opts_default(&k.so);
    int status = parse_flags(argc, argv, &k);
    if (status >= 0) return status;
    int ninputs = tl_inputs_once(argv + optind, argc - optind, "tasklens summary");
    struct tl_reject_budget budget;
    tl_input_budget(&k.io, &budget);
    struct tl_summary *s = tl_summary_new(&k.so);
    struct tl_summary_input *infos = calloc((size_t)ninputs, sizeof *infos);
    if (!s || !infos) {
        tl_eprintf("tasklens: out of memory\n");
        tl_summary_free(s);
        free(infos);
        return TL_EXIT_INPUT;
    }
    struct reading rd = {.s = s, .so = &k.so};
    struct tl_input_parts parts = {part_open, add_record, part_merge, &rd};
    k.io.parts = &parts; /* each file summarized apart, merged in order: the same on any threads */
    struct inputs_read ir = {.infos = infos, .strict = k.strict, .status = TL_EXIT_OK};
    k.io.progress = !k.io.quiet && isatty(2); /* a progress line for big inputs */
    tl_read_inputs(argv + optind, ninputs, &k.io, add_record, &rd, input_read, &ir);
    status = ir.status;
    tl_reject_budget_end(&budget, "tasklens summary");
    if (rd.rc) {
        tl_eprintf("tasklens: %s\n", tl_strerror(rd.rc));
        status = TL_EXIT_INPUT;
    }
    if (!tags_known(&k, &rd)) status = TL_EXIT_USAGE;
    if (status != TL_EXIT_USAGE) {
        enum tl_err rc = tl_summary_write(s, k.fmt, infos, (size_t)ninputs, stdout);
        if (rc || fflush(stdout)) {
            tl_eprintf("tasklens: writing the summary: %s\n", tl_strerror(rc ? rc : TL_ERR_IO));
            status = TL_EXIT_INPUT;
        }
    }
    for (int i = 0; i < ninputs; i++) tl_input_info_free(&infos[i]);
    for (int i = 0; i < rd.nseen; i++) free(rd.seen[i]);
    free(infos);
    tl_summary_free(s);
    return status;
}
