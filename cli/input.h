/* The input flags every batch command shares (--format-in, -O,
 * --max-errors, -q), into the batch reader's options (pipeline/batch.h). */
#ifndef TL_CLI_INPUT_H
#define TL_CLI_INPUT_H

#include <getopt.h>
#include <stdbool.h>

#include "ingest/dirlist.h"
#include "parsers/drive.h"
#include "pipeline/batch.h"

/* The long options tl_input_option takes, for a command's option table
 * (-O is a short option only). */
/* The help lines of --threads, for every command that reads files. */
#define TL_THREADS_HELP                                                                            \
    "  --threads N         parse files on N threads (default: the cores it may use);\n"           \
    "                      the output is the same whatever N\n"

#define TL_INPUT_LONGOPTS                                                                          \
    {"format-in", required_argument, NULL, 'i'}, {"max-errors", required_argument, NULL, 'e'},   \
        {"quiet", no_argument, NULL, 'q'}, {"threads", required_argument, NULL, 'j'}

/* Parses "-O wq.max_line=2M" style settings; false with a message on error. */
bool tl_parse_setting(char *arg, struct tl_parser_setting *out);

/* The input options every batch command shares: --format-in (c == 'i'),
 * -O (c == 'O'), --max-errors (c == 'e'), -q (c == 'q'), --threads (c == 'j'). Returns 1 when c
 * was one of them and is applied, 0 when it is not one of them, and -1 on a
 * bad value (message printed, prefixed with cmd). settings has room for
 * max entries. */
int tl_input_option(int c, char *arg, struct tl_input_opts *io,
                    struct tl_parser_setting *settings, int max, const char *cmd);

/* The exit status after an input: a usage error (a bad -O) wins, then the
 * first input error; with strict, an input with rejected lines is one. */
int tl_input_status(int status, enum tl_err rc, const struct tl_summary_input *info, bool strict);

/* The exit status over a run's inputs, for tl_read_inputs's done callback
 * when the command keeps nothing of an input: tl_input_status_done. */
struct tl_input_status_ctx {
    bool strict;
    int status;
};
void tl_input_status_done(void *ctx, int i, enum tl_err rc, struct tl_summary_input *info);

/* The run's one budget of rejected lines (--max-errors, -q), into io:
 * call after the flags; tl_reject_budget_end says what it left unsaid. */
void tl_input_budget(struct tl_input_opts *io, struct tl_reject_budget *b);

#endif
