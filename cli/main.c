/* tasklens: entry point. Dispatches to one file per subcommand. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/term.h"
#include "parsers/parser.h"

#ifndef TASKLENS_VERSION
#define TASKLENS_VERSION "0.1.0"
#endif

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens COMMAND [OPTIONS] ...\n"
            "\n"
            "commands:\n"
            "  summary INPUT...   per-category task counts, results and resource quantiles\n"
            "  lines INPUT...     InfluxDB line protocol (task and task_quantiles points)\n"
            "  records INPUT...   one row per task attempt (CSV, TSV, NDJSON) for a notebook\n"
            "  run -c FILE        the daemon: follow logs, push points continuously\n"
            "  run --follow PATH  the same, configured by flags\n"
            "  top INPUT...       a live view of a run in the terminal (--follow, --once)\n"
            "  advise INPUT...    right-sizing: waste and a recommended allocation per category\n"
            "  plan --node SPEC INPUT...  node-hours for a workload, and what binds\n"
            "  energy INPUT...    kWh and kgCO2eq per category and workflow (stated model)\n"
            "  path INPUT...      where the makespan went: critical path, waits, what-ifs\n"
            "  report INPUT... -o FILE  one offline HTML page of the run (plots, tables)\n"
            "  check -c FILE      validate a run configuration and try its sources and sinks\n"
            "  formats            list the input formats tasklens reads\n"
            "  version            print the version\n"
            "\n"
            "`tasklens COMMAND --help` describes a command.\n");
}

static int cmd_formats(void)
{
    int w = 0;
    for (int i = 0; tl_parsers[i]; i++) {
        int n = (int)strlen(tl_parsers[i]->name);
        w = n > w ? n : w;
    }
    for (int i = 0; tl_parsers[i]; i++) {
        printf("%-*s %s\n", w, tl_parsers[i]->name, tl_parsers[i]->help);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%s.", tl_parsers[i]->name);
        tl_options_help(tl_parsers[i]->options, prefix, stdout);
    }
    if (*tl_parsers_left_out()) printf("left out of this build:%s\n", tl_parsers_left_out());
    return TL_EXIT_OK;
}

/* What this build holds of the parts cmake can leave out (README, "Build
 * options"), so a site knows what its binary does before a config fails. */
static void print_build_parts(void)
{
    static const struct {
        const char *option, *what;
        bool on;
    } parts[] = {
        {"TL_KAFKA", "Kafka source", TL_BUILT_KAFKA},
        {"TL_HTTP_SINKS", "influxdb and prometheus sinks", TL_BUILT_HTTP_SINKS},
        {"TL_DASF", "DASF traces", TL_BUILT_DASF},
        {"TL_PARSL", "Parsl databases", TL_BUILT_PARSL},
    };
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        printf("  %-30s %s (%s)\n", parts[i].what, parts[i].on ? "built" : "left out",
               parts[i].option);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return TL_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "summary")) return tl_cmd_summary(argc - 1, argv + 1);
    if (!strcmp(cmd, "lines")) return tl_cmd_lines(argc - 1, argv + 1);
    if (!strcmp(cmd, "records")) return tl_cmd_records(argc - 1, argv + 1);
    if (!strcmp(cmd, "run")) return tl_cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "check")) return tl_cmd_check(argc - 1, argv + 1);
    if (!strcmp(cmd, "advise")) return tl_cmd_advise(argc - 1, argv + 1);
    if (!strcmp(cmd, "plan")) return tl_cmd_plan(argc - 1, argv + 1);
    if (!strcmp(cmd, "energy")) return tl_cmd_energy(argc - 1, argv + 1);
    if (!strcmp(cmd, "path")) return tl_cmd_path(argc - 1, argv + 1);
    if (!strcmp(cmd, "report")) return tl_cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "top")) return tl_cmd_top(argc - 1, argv + 1);
    if (!strcmp(cmd, "formats")) return cmd_formats();
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("tasklens %s\n", TASKLENS_VERSION);
        print_build_parts();
        return TL_EXIT_OK;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return TL_EXIT_OK;
    }
    tl_eprintf("tasklens: unknown command '%s'\n", cmd);
    usage(stderr);
    return TL_EXIT_USAGE;
}
