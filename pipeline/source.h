/* Sources are plugins, as parsers are: each is a const struct of callbacks
 * in one file (src_file.c, src_dir.c, src_stdin.c, src_fifo.c; kafka/, by job),
 * named in the one list of sources.c. The runner (runner.c) knows only this
 * interface: it asks a source to read a chunk and feed it to its parser,
 * for a descriptor to sleep on, to save its position in a checkpoint and
 * to restore it, for its counters, and (Kafka) to publish and commit what a
 * checkpoint covers.
 *
 * A source owns its parser state(s): one for a file or stdin, one per file
 * of a directory, one per (topic, partition, key) stream of Kafka. Records
 * go to the runtime's output (tl_rt_output) through the emit of tl_feed
 * (feed.c), which most sources use as they are.
 *
 * Adding a source: a new src_NAME.c with its `const struct tl_source_type`
 * (its settings: a struct of its own starting with struct src_base, and
 * the option table over it; open/step/save/...), and its line in
 * sources.c. See ARCHITECTURE.md. */
#ifndef TL_PIPELINE_SOURCE_H
#define TL_PIPELINE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/counter.h"
#include "core/error.h"
#include "core/log.h"
#include "parsers/drive.h"
#include "parsers/parser.h"
#include "pipeline/output.h"
#include "pipeline/run_config.h"

/* Bytes a source reads at a time, into the runtime's buffer (tl_rt_buf). */
#define TL_RT_CHUNK (256 * 1024)
/* Rejected lines reported per input (then only counted). */
#define TL_RT_MAX_REPORTS 10

struct tl_runtime; /* the runner, as sources see it (runner.c) */
struct tl_source;


struct tl_source_type {
    const char *name; /* `type:` in a configuration's sources entry */
    const char *help;
    /* its settings: a config struct of its own (config_size bytes, a
     * struct src_base first: run_config.h) and the option table over it,
     * which drives the YAML reader, validation and `run --help-config` */
    size_t config_size;
    const struct tl_option *options;
    /* checkpoint: the byte that tags its sections ('F', 'D', 'K'); 0 when
     * it cannot resume (stdin, a pipe) and is not saved */
    char ckpt_tag;

    /* Checks an entry beyond what its option table says (required keys,
     * allowed values): the message in err, *key the setting at fault (for
     * its line; left NULL: the entry). NULL: nothing more to check. */
    enum tl_err (*validate)(const void *config, const char **key, char *err, size_t cap);
    /* The inputs of an entry: tl_rt_add_source() once per input. NULL:
     * tl_rt_expand_glob (`path` as a glob, each file an input). */
    enum tl_err (*expand)(struct tl_runtime *rt, const struct src_settings *cfg);
    /* Opens (or, on SIGHUP, reopens) the input. With a checkpoint, saved
     * is its section after the version byte and the tag (len bytes,
     * written by save at that version); NULL on a first start. err: why it
     * would not open, one line (the runtime says it). */
    enum tl_err (*open)(struct tl_source *s, int version, const uint8_t *saved, size_t len, char *err,
                        size_t errcap);
    /* Reads one chunk (or one batch of messages) and feeds it. Returns the
     * bytes read, 0 when nothing is there now; sets s->done when the input
     * is over (read once to its end). */
    size_t (*step)(struct tl_source *s);
    /* The descriptor to sleep on when no source read anything (-1: none);
     * *poll_soon when it must be looked at again within 100 ms anyway. */
    int (*wait_fd)(struct tl_source *s, bool *poll_soon);
    /* After the sleep: consume the descriptor's events. May be NULL. */
    void (*woken)(struct tl_source *s);
    /* Its checkpoint section's body (after version and tag). */
    enum tl_err (*save)(struct tl_source *s, struct tl_buf *b);
    /* `tasklens` self-metrics points, one per input (or partition). */
    void (*self_metrics)(struct tl_source *s);
    /* Its counters (core/counter.h): lines, records, parse_errors, lag
     * (tl_source_counters), summed by name over sources for the status line. */
    size_t (*counters)(const struct tl_source *s, struct tl_counter *out, size_t max);
    /* SIGHUP: reopen the input (a file renamed by hand). May be NULL. */
    void (*reopen)(struct tl_source *s);
    /* After a checkpoint was saved (or, without a checkpoint_dir, after the
     * output was acknowledged): publish what it covers (Kafka's state
     * topic); false when that failed and offsets must not be committed.
     * May be NULL. */
    bool (*publish)(struct tl_source *s);
    /* What the last checkpoint covers may be committed. May be NULL. */
    void (*commit)(struct tl_source *s);
    /* At every cumulative interval (Kafka: the group's merged quantiles).
     * May be NULL. */
    void (*cumulative)(struct tl_source *s);
    /* The run ends; saved: the last checkpoint covers everything. May be
     * NULL. */
    void (*stop)(struct tl_source *s, bool saved);
    /* Frees what open and step made (not the struct tl_source). */
    void (*close)(struct tl_source *s);
    /* `tasklens top`: the tasks open now in its parsers (tl_feed_open_tasks).
     * False (or NULL) when it cannot say: top shows no running or waiting
     * tasks for it. */
    bool (*open_tasks)(struct tl_source *s, void (*each)(void *ctx, const struct tl_record *r),
                       void *ctx);
    /* `tasklens check`: tries the entry (files there, broker reachable),
     * saying each finding. */
    void (*check)(const void *config, int index, tl_check_say *say, void *ctx);
};

/* One input: what every source has; the type's own state in `own`. */
struct tl_source {
    const struct tl_source_type *type;
    struct tl_runtime *rt;
    struct src_settings cfg;
    char *path;   /* the input's name (a file, a directory, kafka:topics); NULL: stdin */
    char *canon;  /* path resolved (realpath): what identifies the input */
    char key[64]; /* its checkpoint section: "s:" + hash of canon */
    char legacy_key[64]; /* the section of checkpoints keyed by path as written */
    uint64_t bytes; /* read from it, this process */
    bool done;      /* over: read once to its end */
    bool keep;      /* SIGHUP reload: still configured */
    void *own;
};

/* The registry (sources.c). */
extern const struct tl_source_type *const tl_source_types[];
const struct tl_source_type *tl_source_find(const char *name);

/* ---- what the runtime offers sources (runner.c) */

void tl_rt_log(const struct tl_runtime *rt, enum tl_log_level lv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool tl_rt_quiet(const struct tl_runtime *rt);
/* The shared read buffer, TL_RT_CHUNK bytes. */
char *tl_rt_buf(struct tl_runtime *rt);
struct tl_output *tl_rt_output(struct tl_runtime *rt);
/* The configuration document (parser options are nodes of it). */
const struct tl_cfg_doc *tl_rt_doc(const struct tl_runtime *rt);
const char *tl_rt_instance(const struct tl_runtime *rt);
/* Everything produced so far acknowledged and checkpointed (a Kafka revoke
 * needs it before partitions go); true when it was. */
bool tl_rt_checkpoint(struct tl_runtime *rt, const char *why);
/* The run is over: a revoke only commits. */
bool tl_rt_closing(const struct tl_runtime *rt);
/* For expand: one more input of this entry, named path (NULL: stdin),
 * identified in checkpoints by identity (NULL: the path resolved, so the
 * same file named twice -- a.log, ./a.log, a symlink -- is added once). */
enum tl_err tl_rt_add_source(struct tl_runtime *rt, const struct src_settings *cfg,
                             const char *path, const char *identity);
/* The default expand: `path` as a glob, each match an input (a path with
 * no match is one input, waited for, unless it has wildcards). */
enum tl_err tl_rt_expand_glob(struct tl_runtime *rt, const struct src_settings *cfg);

/* ---- feeding one parser (feed.c): the parser state of a file, stdin or a
 * directory's current file, through the parsers' one door (drive.h) */
struct tl_feed {
    struct tl_source *src;
    struct tl_drive drive;
    struct tl_reject_budget budget;
    bool follows;   /* the input grows (a followed file, a pipe): set by its source */
    bool said;      /* waiting for bytes to recognize the format: said */
    bool stop_said; /* the input's stop was said */
};

/* A drive's configure for a source (ctx: the struct tl_source): its
 * `options:` node applied to the chosen parser's table. */
enum tl_err tl_source_parser_options(void *source, const struct tl_parser *p, void *config,
                                     char *err, size_t errlen);
/* name: in reject reports and for the parser (NULL: the source's path). */
enum tl_err tl_feed_init(struct tl_feed *f, struct tl_source *src, const char *name);
/* Feeds bytes, setting the parser up from them first if needed (named by
 * the source's `parser`, else detected). Nonzero: the input cannot be read
 * (said once); stop feeding it. */
enum tl_err tl_feed_bytes(struct tl_feed *f, const char *buf, size_t len);
/* A whole document was fed (a database read again): the parser's finish,
 * which may come again. */
enum tl_err tl_feed_end_document(struct tl_feed *f);
/* Its parser's open tasks now (tl_drive_open_tasks); false: it cannot say. */
static inline bool tl_feed_open_tasks(struct tl_feed *f,
                                      void (*each)(void *ctx, const struct tl_record *r), void *ctx)
{
    return tl_drive_open_tasks(&f->drive, each, ctx);
}
void tl_feed_finish(struct tl_feed *f);
static inline bool tl_feed_finished(const struct tl_feed *f)
{
    return f->drive.finished;
}
static inline const struct tl_parser *tl_feed_parser(const struct tl_feed *f)
{
    return tl_drive_parser(&f->drive);
}
/* Checkpoints: the parser's state, and back (parser: the name saved). */
enum tl_err tl_feed_save(const struct tl_feed *f, struct tl_buf *b);
enum tl_err tl_feed_restore(struct tl_feed *f, const char *parser, const uint8_t *state,
                            size_t len, bool finished);
/* A `tasklens` self-metrics point for the input f reads: in holds what the
 * source knows (path, bytes, open errors, gaps); the parser's counts are
 * added. Nothing before the parser is set up. */
void tl_feed_self_metrics(const struct tl_feed *f, struct tl_summary_input *in, uint64_t lag);
/* A source's counters from what its parsers counted (ps, NULL: nothing
 * yet) and its lag in bytes: lines, records, parse_errors, lag -- the names
 * of the self-metrics point's fields. */
size_t tl_source_counters(const struct tl_parse_stats *ps, uint64_t lag, struct tl_counter *out, size_t max);
/* tl_source_counters of f's parser. */
size_t tl_feed_counters(const struct tl_feed *f, uint64_t lag, struct tl_counter *out, size_t max);
void tl_feed_free(struct tl_feed *f);
/* `tasklens check` of one file a source would read: opened, its size, the
 * format named or detected from its first bytes. */
void tl_source_check_file(const struct src_base *cfg, int index, const char *path,
                          tl_check_say *say, void *ctx);


#endif
