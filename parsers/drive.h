/* One door into a parser: a parser driven end to end for one input.
 *
 * Every way tasklens reads (a batch command over files, `run` following a
 * file, stdin, a pipe or a directory, a Kafka stream) goes through this
 * door, so they agree on everything that is not about bytes arriving:
 *
 *   choose     the parser named, else the one whose probe is surest of the
 *              first bytes. Bytes are held until a probe is sure or
 *              TL_DRIVE_DETECT_BYTES have come; input no parser recognizes
 *              is refused with TL_ERR_FORMAT and said, never read as `wq`.
 *   configure  the caller's options applied to the chosen parser's table;
 *   open       with the input's name (LSST takes data ids from it);
 *   feed       bytes in any split, or Kafka messages as the parser declares
 *              them (lines, a stream, documents, Chrome events);
 *   finish     a last line without newline, open tasks reported;
 *   rejects    `where: reason (detail)` lines up to a budget that may be
 *              shared by every input of a run, then counted;
 *   stats      lines, records, rejects by reason, the parser's counters;
 *   save       the parser's name and state for checkpoints, and back.
 *
 * The door never does I/O of its own: it tells rejects only through the
 * budget's `say` callback, and leaves errors in d->error. */
#ifndef TL_PARSERS_DRIVE_H
#define TL_PARSERS_DRIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "parsers/parser.h"

/* How many first bytes an unnamed input may take to be recognized. */
#define TL_DRIVE_DETECT_BYTES (64 * 1024)

/* Where rejected lines are told, and how many: one budget serves every
 * input of a run, so a tree of 2,000 files says `max` lines, not 2,000 x
 * max. Lines past it are counted (`untold`); so are the inputs whose own
 * count could not be said once it was spent (tl_reject_budget_end says
 * them in one line, naming the first few). */
#define TL_BUDGET_NAMED 3
struct tl_reject_budget {
    int max;
    int told;
    uint64_t untold;
    bool quiet;
    /* one line, without newline; NULL: stderr */
    void (*say)(void *ctx, const char *line);
    void *ctx;
    /* inputs with rejects whose count line was not said, their rejects, and
     * the first TL_BUDGET_NAMED of them as "name (N)" */
    uint64_t files_unsaid, rejected_unsaid;
    char named[TL_BUDGET_NAMED][160];
};

/* The run's closing line when inputs' counts went unsaid: "cmd: 1958 more
 * inputs with 1958 rejected lines: a.yaml (1), b.yaml (1), c.yaml (1), ...
 * (--max-errors N says more)". Nothing otherwise. */
void tl_reject_budget_end(struct tl_reject_budget *b, const char *cmd);

/* For inputs parsed on another thread, whose rejected lines and count line
 * are decided where they are said, in input order: a rejected unit's line,
 * told if the budget lasts (true), else counted; and an input's count line
 * as tl_drive_say_rejects says it (told_any: a line of that input was told). */
bool tl_reject_budget_tell(struct tl_reject_budget *b, const char *line);
void tl_reject_budget_input(struct tl_reject_budget *b, const char *name,
                            const struct tl_parse_stats *st, bool told_any);

struct tl_drive_cfg {
    const struct tl_parser *parser; /* NULL: detect from the first bytes */
    /* Applies the caller's options to the chosen parser's config; NULL:
     * defaults. Returns nonzero with err filled when an option is bad. */
    enum tl_err (*configure)(void *ctx, const struct tl_parser *p, void *config, char *err,
                             size_t errlen);
    void *configure_ctx;
    void (*record)(void *ctx, const struct tl_record *r);
    void *record_ctx;
    uint32_t kinds; /* struct tl_emit's kinds: the record kinds used; 0 = all */
    struct tl_reject_budget *budget;
    /* Optional: writes where a rejected unit is ("kafka:t/0@17") instead of
     * `name:line`. */
    void (*where)(void *ctx, uint64_t line, char *out, size_t cap);
    void *where_ctx;
};

struct tl_drive {
    struct tl_drive_cfg cfg;
    char *name; /* the input's name: reject reports, set_name */
    struct tl_parser_inst inst;
    struct tl_emit emit;
    struct tl_buf held; /* first bytes, until a probe is sure */
    uint64_t unrecognized; /* inputs or messages no parser recognized */
    bool finished;      /* the parser's finish() ran */
    bool events_open;   /* Kafka events one per message: the stream is an open array */
    bool told_any;      /* a rejected unit of this input was told */
    int64_t input_time_ns; /* the input's modification time, 0 if unknown */
    struct tl_record stamped; /* a file_time record with that time */
    char error[256];    /* why the drive stopped (TL_ERR_FORMAT, a bad option) */
};

/* cfg is copied; name may be NULL ("stdin"). */
enum tl_err tl_drive_init(struct tl_drive *d, const struct tl_drive_cfg *cfg, const char *name);
void tl_drive_free(struct tl_drive *d);
/* The parser's open tasks now (struct tl_parser.open_tasks), if it has
 * them and is running; false when it cannot say. */
bool tl_drive_open_tasks(struct tl_drive *d, void (*each)(void *ctx, const struct tl_record *r),
                         void *ctx);

/* The input's modification time (ns since the epoch), for the records of
 * file_time formats that carry none. */
static inline void tl_drive_set_input_time(struct tl_drive *d, int64_t ns)
{
    d->input_time_ns = ns;
}

/* Chooses, configures and opens the parser now: `named` (a checkpoint's
 * parser), else the configured one, else the one recognizing first[0..len)
 * (which is not fed). TL_ERR_FORMAT when none does. */
enum tl_err tl_drive_start(struct tl_drive *d, const char *named, const char *first, size_t len);
/* Feeds bytes of the input, choosing the parser from them first if needed.
 * A nonzero return stops this input; the reason is in d->error, for the
 * caller to say (a batch command, a directory that skips such files and
 * counts them, and `run` say it differently). */
enum tl_err tl_drive_feed(struct tl_drive *d, const char *buf, size_t len);
/* One Kafka message, as the parser declares its messages (parser.h). A
 * message of an unrecognized format is rejected and counted; the next one
 * is tried again. */
enum tl_err tl_drive_message(struct tl_drive *d, const char *buf, size_t len);
/* A document of a series ended (a database read whole again, each time):
 * the parser's finish(), which may come again after more bytes. */
enum tl_err tl_drive_end_document(struct tl_drive *d);
/* The next of a series of documents read by one parser (a datastore's
 * metadata files: one parser set up once, its pattern compiled once): its
 * name, for reject reports and the parser. End the one before with
 * tl_drive_end_document. */
enum tl_err tl_drive_next_input(struct tl_drive *d, const char *name);
/* The input ended: held bytes decided, finish() once. */
enum tl_err tl_drive_finish(struct tl_drive *d);

/* The chosen parser, or NULL before it is known. */
static inline const struct tl_parser *tl_drive_parser(const struct tl_drive *d)
{
    return d->inst.p;
}
/* Lines, records, rejects (zeros before the parser is known). */
struct tl_parse_stats tl_drive_stats(const struct tl_drive *d);
/* The parser's own counters (0 when it has none). */
size_t tl_drive_counters(const struct tl_drive *d, struct tl_counter *out, size_t max);
/* "path: 3 of 120 lines rejected: bad_fields=2 bad_json=1", told through
 * the budget when some of its lines were told or the budget lasts (not
 * counted against it), else kept for tl_reject_budget_end; nothing when
 * none was rejected. */
void tl_drive_say_rejects(const struct tl_drive *d);

/* Checkpoints: the parser's state (TL_ERR_USAGE when it cannot save; the
 * bytes held while the format is not known yet), and a state saved by the
 * parser `named` (NULL or "": held bytes) restored into a drive just
 * initialized. */
enum tl_err tl_drive_save(const struct tl_drive *d, struct tl_buf *out);
enum tl_err tl_drive_restore(struct tl_drive *d, const char *named, const uint8_t *state,
                             size_t len);

#endif
