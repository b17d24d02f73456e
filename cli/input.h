/* Reading one batch input end to end: open (file, "-", .gz, .zst), detect or
 * force the format, feed the parser in large chunks, finish, and report
 * rejected lines as `path:line: reason` (the first max_reports, then a total
 * per reason). Shared by every batch subcommand. */
#ifndef TL_CLI_INPUT_H
#define TL_CLI_INPUT_H

#include <stdbool.h>

#include "options.h"
#include "parser.h"
#include "summary.h"

struct tl_parser_setting {
    const char *parser; /* "wq" */
    const char *key;    /* "max_line" */
    const char *value;
};

struct tl_input_opts {
    const struct tl_parser *forced; /* NULL: auto-detect */
    const struct tl_parser_setting *settings;
    int nsettings;
    int max_reports; /* rejected lines printed per input */
    bool quiet;
    bool progress; /* a progress line on stderr for inputs over 100 MB */
    uint32_t kinds; /* record kinds the command uses (struct tl_emit); 0 = all */
};

/* Parses "-O wq.max_line=2M" style settings; false with a message on error. */
bool tl_parse_setting(char *arg, struct tl_parser_setting *out);

/* The input options every batch command shares: --format-in (c == 'i'),
 * -O (c == 'O'), --max-errors (c == 'e'), -q (c == 'q'). Returns 1 when c
 * was one of them and is applied, 0 when it is not one of them, and -1 on a
 * bad value (message printed, prefixed with cmd). settings has room for
 * max entries. */
int tl_input_option(int c, char *arg, struct tl_input_opts *io,
                    struct tl_parser_setting *settings, int max, const char *cmd);

/* Reads path through its parser, passing records to on_record. Fills info
 * (the caller owns info->counters copies it needs). Returns TL_OK, or the
 * error that stopped the input (already reported on stderr). */
enum tl_err tl_read_input(const char *path, const struct tl_input_opts *opts,
                          void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                          struct tl_summary_input *info);

/* A list of paths (owned). */
struct tl_file_list {
    char **paths;
    size_t n, cap;
};

bool tl_file_list_add(struct tl_file_list *fl, const char *path);

/* Appends the LSST <label>_metadata files under dir (recursively, symlinks
 * not followed), in name order; false (reported) when a directory could
 * not be read. */
bool tl_walk_metadata(struct tl_file_list *fl, const char *dir);
void tl_file_list_free(struct tl_file_list *fl);

/* Frees what tl_read_input allocated in info. */
void tl_input_info_free(struct tl_summary_input *info);

#endif
