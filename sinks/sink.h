/* Sinks are tables of functions, like parsers and sources.
 *
 * A sink type is a const struct of callbacks with its own option table:
 * the one declaration that the YAML reader (`sinks: - type: NAME`), the
 * quick flags of `lines` and `run` (an option's `flag`), `run
 * --help-config`, the manual and the defaults all come from. Its state and
 * its counters are its own; it speaks through the logger it is handed.
 *
 * What a sink receives (it declares the callbacks it wants):
 *   points   the points (core/point.h) in the sink's codec (sinks/codec.h):
 *            line protocol for file and InfluxDB, remote-write series for
 *            prometheus. The runtime encodes each point once per codec in
 *            use (and, for a sink that names its measurements, only
 *            those): the encoding is the expensive part of a pass, and
 *            sharing it is what keeps `run` at its speed;
 *   record   every record (task attempts, workflow events, samples);
 *   window   every window and cumulative summary of the aggregator (the
 *            coarse windows and late parts reach sinks only as
 *            task_histogram line protocol).
 *
 * Durability is the runtime's contract with checkpoints: `flush` hands on
 * what a sink batched, `sync` makes it durable (a 2xx, or spooled and
 * fsync'ed). Only when every sink synced may a checkpoint cover the input.
 * A sink that cannot take more returns TL_ERR_LIMIT from `points` and the
 * runtime stops reading (backpressure) and calls `drain` until it can.
 * A sink that wants points needs a codec; it never reads another sink's
 * bytes.
 *
 * Adding a sink: one file (or folder) in sinks/, its line in sinks/sinks.c;
 * ARCHITECTURE.md walks through it with sinks/ndjson.c. */
#ifndef TL_SINKS_SINK_H
#define TL_SINKS_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/aggregate.h"
#include "core/counter.h"
#include "core/error.h"
#include "core/log.h"
#include "core/options.h"
#include "core/record.h"
#include "sinks/codec.h"

/* What the runtime gives a sink when it opens it. */
struct tl_sink_env {
    const struct tl_log *log;
    bool quiet;             /* -q: only what stops the input is said */
    long flush_interval_ms; /* a batch never waits longer than this */
    const char *window_label; /* "60s": the tumbling window's `window` tag */
};


/* What a sink left behind when it closed (tl_sink_type.finish). */
#define TL_SINK_SPOOLED 1 /* batches wait in a spool: safe on disk, sent on the next run */
#define TL_SINK_FAILED 2  /* an output failed */
#define TL_SINK_HELD 4    /* points neither sent nor spooled: only a checkpoint saves them */

struct tl_sink_type {
    const char *name; /* `type:` in a configuration's sinks entry */
    const char *help;
    size_t config_size;
    const struct tl_option *options;
    /* Optional: checks beyond the option table (required settings, ranges);
     * key names the offending option, or NULL for the entry as a whole. */
    enum tl_err (*validate)(const void *config, const char **key, char *err, size_t errlen);
    /* Optional, for quick flags: whether the flags given name a
     * destination (a sink is added only then). */
    bool (*configured)(const void *config);
    enum tl_err (*open)(void **state, const void *config, const struct tl_sink_env *env,
                        char *err, size_t errlen);
    /* Receiving (at least one). points: n points encoded by codec. */
    const struct tl_codec *codec;
    enum tl_err (*points)(void *state, const char *data, size_t len, uint32_t n);
    /* Optional, with points: the measurements it takes (a mask of
     * core/point.h's enum tl_measurement); NULL: all of them. */
    unsigned (*measurements)(const void *state);
    void (*record)(void *state, const struct tl_record *r);
    void (*window)(void *state, const struct tl_agg_window *w, const struct tl_agg_opts *ao,
                   const char *window, const char *scope);
    /* Durability: hand on the open batch (also called on idle ticks, to
     * age batches out); make what was handed on durable. */
    enum tl_err (*flush)(void *state);
    enum tl_err (*sync)(void *state);
    /* Optional (network sinks): deliver what waits, until nothing does
     * (TL_OK) or timeout_ms passes (TL_ERR_LIMIT). 0: one attempt. */
    enum tl_err (*drain)(void *state, long timeout_ms);
    /* Optional: points neither sent nor spooled (held in memory). */
    uint32_t (*held)(const void *state);
    /* Its counters (core/counter.h): the runtime sums them by name over
     * sinks, for self-metrics (`self`), `--stats` and the status line. */
    size_t (*counters)(const void *state, struct tl_counter *out, size_t max);
    /* The end: drains up to drain_ms, says what stays behind (through the
     * logger), returns TL_SINK_* flags; then close frees. */
    int (*finish)(void *state, long drain_ms);
    void (*close)(void *state);
    /* `tasklens check`: tries the destination (reachable, writable). */
    void (*check)(const void *config, int index, tl_check_say *say, void *ctx);
};

/* The registry (sinks.c), NULL-terminated. */
extern const struct tl_sink_type *const tl_sink_types[];
const struct tl_sink_type *tl_sink_find(const char *name);

/* A sink type with its config: what a configuration holds. */
struct tl_sink_conf {
    const struct tl_sink_type *type;
    void *config; /* config_size bytes, defaults filled in */
    int line;     /* where it was declared (0: flags) */
};

enum tl_err tl_sink_conf_init(struct tl_sink_conf *c, const struct tl_sink_type *type);
void tl_sink_conf_free(struct tl_sink_conf *c);

/* For sinks that write a file (file, ndjson): a `path` given and not
 * empty (a validate's check), and `check`'s finding on its directory. */
enum tl_err tl_sink_path_required(const char *path, const char **key, char *err, size_t errlen);
void tl_sink_check_path(const char *type, const char *path, int index, tl_check_say *say,
                        void *ctx);

/* A sink open. */
struct tl_sink {
    const struct tl_sink_type *type;
    void *state;
    bool failed; /* points or flush failed (not a full spool) */
};

#endif
