/* `tasklens summary --dasf-task-balance TRACE...`: DASF's own "Task balance"
 * table (dasf.profile.analysis, per_worker_task_balance), as CSV with its
 * columns: per whole second of DASF's monotonic clock (int(timestamp)), and
 * per worker, the `tasks` of the last Managed Memory event written for it
 * in that second -- file order, which is DASF's batch order, not time
 * order -- 0 where a worker wrote none; a second in which no worker wrote
 * one has no row, as in DASF's. The traces are read with dasf.clock=
 * monotonic, so the seconds are DASF's. */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "intern.h"
#include "map64.h"

struct balance {
    struct tl_intern *workers;
    struct tl_map64 last; /* second << 16 | worker -> the value's bits */
    int64_t first, end;   /* seconds seen */
    bool any, oom;
};

static void on_sample(void *ctx, const struct tl_record *r)
{
    struct balance *b = ctx;
    if (r->kind != TL_REC_SAMPLE || !r->worker || !r->category ||
        strcmp(r->category, "Managed Memory tasks"))
        return;
    int64_t sec = r->time_ns >= 0 ? r->time_ns / 1000000000 : -1;
    int32_t w = tl_intern(b->workers, r->worker, strlen(r->worker));
    if (sec < 0 || w < 0 || w >= 65536) {
        b->oom = w < 0;
        return;
    }
    uint64_t bits;
    double v = r->v[TL_M_SAMPLE_VALUE];
    memcpy(&bits, &v, sizeof bits);
    if (!tl_map64_put(&b->last, (uint64_t)sec << 16 | (uint64_t)w, bits)) b->oom = true;
    if (!b->any || sec < b->first) b->first = sec;
    if (!b->any || sec > b->end) b->end = sec;
    b->any = true;
}

static int by_name(const void *x, const void *y, void *ctx)
{
    const struct tl_intern *in = ctx;
    return strcmp(tl_intern_str(in, *(const int32_t *)x), tl_intern_str(in, *(const int32_t *)y));
}

static void write_csv(const struct balance *b, FILE *out)
{
    size_t nw = tl_intern_count(b->workers);
    int32_t *order = malloc((nw ? nw : 1) * sizeof *order);
    if (!order) return;
    for (size_t i = 0; i < nw; i++) order[i] = (int32_t)i;
    qsort_r(order, nw, sizeof *order, by_name, b->workers);
    fputs(",Time Interval (seconds from begin)", out);
    for (size_t i = 0; i < nw; i++) fprintf(out, ",%s", tl_intern_str(b->workers, order[i]));
    fputc('\n', out);
    for (int64_t s = b->first; b->any && s <= b->end; s++) {
        bool row = false;
        for (size_t i = 0; i < nw && !row; i++)
            row = tl_map64_get(&b->last, (uint64_t)s << 16 | (uint64_t)order[i]) != NULL;
        if (!row) continue;
        long long at = (long long)(s - b->first);
        fprintf(out, "%lld,%lld", at, at);
        for (size_t i = 0; i < nw; i++) {
            uint64_t *bits = tl_map64_get(&b->last, (uint64_t)s << 16 | (uint64_t)order[i]);
            double v = 0;
            if (bits) memcpy(&v, bits, sizeof v);
            fprintf(out, ",%.17g", v);
        }
        fputc('\n', out);
    }
    free(order);
}

int tl_cmd_dasf_balance(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"dasf-task-balance", no_argument, NULL, 'T'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    struct tl_parser_setting clock = {"dasf", "clock", "monotonic"};
    struct tl_input_opts io = {.max_reports = 10, .settings = &clock, .nsettings = 1,
                               .kinds = TL_KIND(TL_REC_SAMPLE)};
    io.forced = tl_parser_find("dasf");
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'T': break;
        case 'q': io.quiet = true; break;
        case 'h':
            printf("usage: tasklens summary --dasf-task-balance TRACE...\n\n"
                   "DASF's Task balance table as CSV: per second of its monotonic clock and per worker,\n"
                   "the tasks in worker memory of the last Managed Memory event written then.\n");
            return TL_EXIT_OK;
        default: return TL_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "tasklens summary --dasf-task-balance: no TracePlugin file given\n");
        return TL_EXIT_USAGE;
    }
    struct balance b = {.workers = tl_intern_new(1u << 20)};
    int status = b.workers ? TL_EXIT_OK : TL_EXIT_INPUT;
    for (int i = optind; status == TL_EXIT_OK && i < argc; i++) {
        struct tl_summary_input info;
        memset(&info, 0, sizeof info);
        if (tl_read_input(argv[i], &io, on_sample, &b, &info)) status = TL_EXIT_INPUT;
        tl_input_info_free(&info);
    }
    if (b.oom) {
        fprintf(stderr, "tasklens summary --dasf-task-balance: out of memory\n");
        status = TL_EXIT_INPUT;
    }
    if (status == TL_EXIT_OK) write_csv(&b, stdout);
    tl_map64_free(&b.last);
    tl_intern_free(b.workers);
    return status;
}
