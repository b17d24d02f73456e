/* The inputs of a batch command, each read whole through the parsers' one
 * door (batch.c): files, '-', .gz/.zst, directories, and directories a
 * format writes in parts. */
#ifndef TL_PIPELINE_BATCH_H
#define TL_PIPELINE_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "parsers/parser.h"
#include "core/summary.h"

struct tl_reject_budget;

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
    /* the run's one budget of rejected lines told (parsers/drive.h); NULL:
     * one per input, of max_reports */
    struct tl_reject_budget *budget;
};

/* Reads path through its parser, passing records to on_record. Fills info
 * (the caller owns info->counters copies it needs). Returns TL_OK, or the
 * error that stopped the input (already reported on stderr). */
enum tl_err tl_read_input(const char *path, const struct tl_input_opts *opts,
                          void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                          struct tl_summary_input *info);

/* The inputs of a command, each once: a path named twice (a.log and
 * ./a.log, or through a link) is read once, and said ("cmd: B is A, given
 * twice: read once"). Compacts paths in place; returns how many stay.
 * "-" (stdin) is kept as given. */
int tl_inputs_once(char **paths, int n, const char *cmd);

/* Frees what tl_read_input allocated in info. */
void tl_input_info_free(struct tl_summary_input *info);

#endif
