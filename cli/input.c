/* The input flags every batch command shares (input.h). */
#include "cli/input.h"
#include "cli/cli.h"
#include "core/term.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            tl_eprintf("%s: unknown input format '%s' (see `tasklens formats`)\n", cmd, arg);
            return -1;
        }
        return 1;
    case 'O':
        if (io->nsettings == max || !tl_parse_setting(arg, &settings[io->nsettings])) {
            tl_eprintf("%s: -O wants PARSER.KEY=VALUE\n", cmd);
            return -1;
        }
        io->nsettings++;
        io->settings = settings;
        return 1;
    case 'e': io->max_reports = atoi(arg); return 1;
    case 'q': io->quiet = true; return 1;
    case 'j': {
        char *end;
        long n = strtol(arg, &end, 10);
        if (*end || end == arg || n < 1 || n > TL_BATCH_MAX_THREADS) {
            tl_eprintf("%s: --threads wants a number from 1 to %d\n", cmd, TL_BATCH_MAX_THREADS);
            return -1;
        }
        io->threads = (int)n;
        return 1;
    }
    default: return 0;
    }
}

int tl_input_status(int status, enum tl_err rc, const struct tl_summary_input *info, bool strict)
{
    if (rc == TL_ERR_USAGE) return TL_EXIT_USAGE;
    if (rc && status == TL_EXIT_OK) return TL_EXIT_INPUT;
    if (strict && info->rejected && status == TL_EXIT_OK) return TL_EXIT_INPUT;
    return status;
}

void tl_input_status_done(void *ctx, int i, enum tl_err rc, struct tl_summary_input *info)
{
    (void)i;
    struct tl_input_status_ctx *st = ctx;
    st->status = tl_input_status(st->status, rc, info, st->strict);
    tl_input_info_free(info);
}

void tl_input_budget(struct tl_input_opts *io, struct tl_reject_budget *b)
{
    *b = (struct tl_reject_budget){.max = io->max_reports, .quiet = io->quiet};
    io->budget = b;
}
