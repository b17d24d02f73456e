/* `tasklens summary --dasf-task-balance TRACE...`: DASF's own "Task balance"
 * table (parsers/dasf_balance.c computes it, as DASF does), as CSV with
 * DASF's columns. The traces are read with dasf.clock=monotonic, so the
 * seconds are DASF's. */
#include "cli/cli.h"
#include "core/term.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/input.h"
#include "parsers/dasf_balance.h"

static bool write_csv(const struct tl_dasf_balance *b, FILE *out)
{
    struct tl_dasf_balance_table t;
    if (!tl_dasf_balance_table(b, &t)) return false;
    fputs(",Time Interval (seconds from begin)", out);
    for (size_t i = 0; i < t.nworkers; i++) fprintf(out, ",%s", t.workers[i]);
    fputc('\n', out);
    for (size_t r = 0; r < t.nrows; r++) {
        long long at = (long long)t.seconds[r];
        fprintf(out, "%lld,%lld", at, at);
        for (size_t i = 0; i < t.nworkers; i++) fprintf(out, ",%.17g", t.tasks[r * t.nworkers + i]);
        fputc('\n', out);
    }
    tl_dasf_balance_table_free(&t);
    return !fflush(out);
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
        tl_eprintf("tasklens summary --dasf-task-balance: no TracePlugin file given\n");
        return TL_EXIT_USAGE;
    }
    struct tl_dasf_balance *b = tl_dasf_balance_new();
    int status = b ? TL_EXIT_OK : TL_EXIT_INPUT;
    argc = optind + tl_inputs_once(argv + optind, argc - optind, "tasklens summary");
    struct tl_reject_budget budget;
    tl_input_budget(&io, &budget);
    for (int i = optind; status == TL_EXIT_OK && i < argc; i++) {
        struct tl_summary_input info;
        memset(&info, 0, sizeof info);
        if (tl_read_input(argv[i], &io, tl_dasf_balance_add, b, &info)) status = TL_EXIT_INPUT;
        tl_input_info_free(&info);
    }
    tl_reject_budget_end(&budget, "tasklens summary");
    if (b && tl_dasf_balance_failed(b)) {
        tl_eprintf("tasklens summary --dasf-task-balance: out of memory\n");
        status = TL_EXIT_INPUT;
    }
    if (status == TL_EXIT_OK && !write_csv(b, stdout)) status = TL_EXIT_INPUT;
    tl_dasf_balance_free(b);
    return status;
}
