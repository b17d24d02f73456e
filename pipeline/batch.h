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

/* A command that aggregates reads each file into a part of its own (on the
 * thread that parses it) and merges the parts in file order on the calling
 * thread: every reading, on any number of threads, merges the same parts
 * in the same order, so the sums come out the same to the last bit. */
struct tl_input_parts {
    void *(*open)(void *ctx); /* a new empty part; NULL: out of memory */
    void (*record)(void *part, const struct tl_record *r);
    void (*merge)(void *ctx, void *part); /* into the whole; frees the part */
    void *ctx;
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
    /* threads parsing files at once (tl_read_inputs); 0: the cores this
     * process may use; 1: the calling thread alone */
    int threads;
    /* NULL: records go to tl_read_inputs's on_record, in order */
    const struct tl_input_parts *parts;
    /* Work for a parsing thread that waits for the calling thread to take
     * its records (tl_read_inputs, more than one thread): a small piece of
     * it per call, true when there was some. Called on any parsing thread,
     * never two at once with the same ctx unless it guards itself; NULL:
     * none. The report encodes its finished task rows there. */
    bool (*idle)(void *ctx);
    void *idle_ctx;
};

/* Reads path through its parser, passing records to on_record. Fills info
 * (the caller owns info->counters copies it needs). Returns TL_OK, or the
 * error that stopped the input (already reported on stderr). */
enum tl_err tl_read_input(const char *path, const struct tl_input_opts *opts,
                          void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                          struct tl_summary_input *info);

/* After input i was read, on the calling thread, in input order: its
 * status and info (the callback's: keep it or tl_input_info_free it). */
typedef void (*tl_input_done)(void *ctx, int i, enum tl_err rc, struct tl_summary_input *info);

/* Reads paths[0..n) as tl_read_input reads each, in turn, parsing their
 * files on opts->threads threads (batch_pool.c): on_record and done are
 * called on the calling thread with exactly what reading them one by one
 * gives, in the same order, and stderr says the same lines. Memory: at most
 * 4 MiB of parsed records waiting per thread, beside each thread's parser.
 * Returns the first error of an input (each is also given to done). */
enum tl_err tl_read_inputs(char *const *paths, int n, const struct tl_input_opts *opts,
                           void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                           tl_input_done done, void *dctx);

/* The threads tl_read_inputs uses by default: the cores this process may
 * run on. */
int tl_batch_threads(void);
#define TL_BATCH_MAX_THREADS 256

/* The inputs of a command, each once: a path named twice (a.log and
 * ./a.log, or through a link) is read once, and said ("cmd: B is A, given
 * twice: read once"). Compacts paths in place; returns how many stay.
 * "-" (stdin) is kept as given. */
int tl_inputs_once(char **paths, int n, const char *cmd);

/* Frees what tl_read_input allocated in info. */
void tl_input_info_free(struct tl_summary_input *info);

#endif
