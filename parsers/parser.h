/* Parsers are tables of functions.
 *
 * A parser turns bytes into struct tl_record. It never does I/O: a source
 * hands it bytes with feed(), in any split (mid-line, mid-JSON, one byte at a
 * time), and it calls back emit->record for each record and emit->reject for
 * each unit of input it cannot use. finish() says the input ended: flush a
 * last line without newline, report tasks still open. The hot path allocates
 * nothing per line.
 *
 * Options are declared in the `options` table (see core/options.h) against
 * the parser's own config struct of `config_size` bytes. */
#ifndef TL_PARSER_H
#define TL_PARSER_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/counter.h"
#include "core/error.h"
#include "core/options.h"
#include "core/record.h"
#include "core/reject.h"

struct tl_emit {
    void (*record)(void *ctx, const struct tl_record *r);
    /* line: 1-based line (or event/document) number; detail: short, may be NULL */
    void (*reject)(void *ctx, uint64_t line, enum tl_reject why, const char *detail);
    void *ctx;
    /* The record kinds the consumer uses, bit TL_KIND(k) per kind; 0 = all.
     * A parser may then skip building the others (it still validates their
     * lines, counts their rejects, keeps its state and counts them in
     * stats.records, so every figure stays the same whatever the mask). */
    uint32_t kinds;
};

static inline bool tl_emit_wants(const struct tl_emit *e, enum tl_record_kind k)
{
    return !e->kinds || (e->kinds & TL_KIND(k));
}

/* Edges (TL_REC_EDGE) only when the consumer names them: a parser may hold
 * the whole input's slices to make them (Chrome flows), which a daemon
 * reading forever (kinds 0) must not. */
static inline bool tl_emit_wants_edges(const struct tl_emit *e)
{
    return (e->kinds & TL_KIND(TL_REC_EDGE)) != 0;
}

struct tl_parse_stats {
    uint64_t lines;   /* lines (or events, documents) seen */
    uint64_t records; /* records emitted */
    uint64_t rejected;
    uint64_t rejected_by[TL_REJ_COUNT];
};

/* How a Kafka message of a format is fed to its parser. */
enum tl_message_kind {
    TL_MSG_DOCUMENT, /* each message a whole document, then finish() (LSST metadata) */
    TL_MSG_LINES,    /* lines of one stream; one without a final newline gets one (WQ, Spark) */
    TL_MSG_STREAM,   /* bytes of one stream, framing across messages (DASF's 8-byte lengths) */
    TL_MSG_EVENTS,   /* Chrome: each message an event of one array, or a whole trace */
};

struct tl_parser {
    const char *name;
    const char *help;
    /* How sure, 0..100, that buf (the first bytes of an input) is this format. */
    int (*probe)(const char *buf, size_t len);
    size_t config_size;
    const struct tl_option *options;
    /* Optional: checks beyond the option table (allowed values, ranges, a
     * regex that compiles), run before open and when a configuration is
     * read: the message in err (naming the option, as "spark.category is
     * ..."), *key the option at fault. */
    enum tl_err (*validate)(const void *config, const char **key, char *err, size_t errcap);
    /* err: why it would not open, one line without "tasklens: " (a
     * library room never prints: its caller says it); NULL with errcap 0
     * when the caller does not want it. */
    enum tl_err (*open)(void **state, const void *config, const struct tl_emit *emit, char *err, size_t errcap);
    enum tl_err (*feed)(void *state, const char *buf, size_t len);
    enum tl_err (*finish)(void *state);
    void (*close)(void *state);
    const struct tl_parse_stats *(*stats)(const void *state);
    /* Optional: format-specific counters (e.g. lines per record kind), in
     * the one form every plugin uses (core/counter.h). */
    size_t (*counters)(const void *state, struct tl_counter *out, size_t max);
    /* Optional, for checkpoints: the whole state (open tasks, a line split
     * across feeds, counters) as bytes, and back into a state just opened
     * with the same config. A parser without them cannot resume mid-input. */
    enum tl_err (*save)(const void *state, struct tl_buf *out);
    enum tl_err (*restore)(void *state, const uint8_t *p, size_t len);
    /* Optional: the input's name (a file path), before the first feed, for
     * parsers that take tags from it (LSST data ids). */
    void (*set_name)(void *state, const char *name);
    enum tl_message_kind messages; /* from Kafka */
    /* Optional, the format's directory layouts (the batch reader and LSST's
     * summary walk with them; the format knows its names, ingest/ walks).
     * member: whether a file of this name in a tree is one of this
     * format's (LSST's <label>_metadata.yaml: a datastore's images are left
     * unread). dir_whole: whether a directory of this name is one input the
     * format wrote in parts (Spark's rolling eventlog_v2_<app>/), read in
     * the order dir_part gives (1, 2, ...; 0: not a part) through one
     * parser. */
    bool (*member)(const char *filename);
    bool (*dir_whole)(const char *dirname);
    unsigned long (*dir_part)(const char *filename);
    /* The format writes no time for some or all of its records (Snakemake
     * benchmarks, line_profiler): a record with time_ns 0 takes its input's
     * modification time (the file is written when the job ends), when the
     * source knows it (tl_drive_set_input_time). */
    bool file_time;
    /* The format writes times without a zone (Nextflow, codecarbon, Parsl:
     * local clock times): they are read as UTC shifted by the parser's
     * utc_offset option, and the pages that show them say so. */
    bool zoneless_times;
    /* Optional, for `tasklens top`: each task open now (waiting, running)
     * as a TL_REC_TASK_OPEN record -- category, state, start_ns when it
     * runs, what it asked for -- without closing it. Borrowed records, as
     * emit's; the parser's own table, so it costs what is open. */
    void (*open_tasks)(void *state, void (*each)(void *ctx, const struct tl_record *r), void *ctx);
};

/* The stats and a parser's counters in a checkpoint (save/restore): the
 * same bytes for every parser. A state saved when there were fewer reject
 * reasons or counters restores with the new ones at 0. */
void tl_parse_stats_put(struct tl_buf *b, const struct tl_parse_stats *st);
bool tl_parse_stats_get(const uint8_t **p, const uint8_t *end, struct tl_parse_stats *st);
void tl_counters_put(struct tl_buf *b, const uint64_t *v, size_t n);
bool tl_counters_get(const uint8_t **p, const uint8_t *end, uint64_t *v, size_t max);

/* All parsers, NULL-terminated. */
extern const struct tl_parser *const tl_parsers[];

const struct tl_parser *tl_parser_find(const char *name);
/* The formats this build left out and the option that brings each back
 * (" dasf (TL_DASF=OFF)"), or "" for a full build. */
const char *tl_parsers_left_out(void);
/* The format that wrote a directory of this name as one input (dir_whole),
 * or NULL. */
const struct tl_parser *tl_parser_for_dir(const char *dirname);
/* The parser whose probe is most sure, or NULL when none scores above 0. */
const struct tl_parser *tl_parser_detect(const char *buf, size_t len, int *score);

/* A parser with its config: what callers hold. */
struct tl_parser_inst {
    const struct tl_parser *p;
    void *config;
    void *state;
};

/* Allocates the config and fills in defaults; set options with
 * tl_options_set(p->options, inst->config, ...) before tl_parser_inst_open. */
enum tl_err tl_parser_inst_init(struct tl_parser_inst *inst, const struct tl_parser *p);
enum tl_err tl_parser_inst_open(struct tl_parser_inst *inst, const struct tl_emit *emit, char *err, size_t errcap);
void tl_parser_inst_free(struct tl_parser_inst *inst);

#endif
