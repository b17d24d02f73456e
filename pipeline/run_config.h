/* What `tasklens run` is told to do, from a YAML file (-c) or from quick
 * flags: sources, sinks, aggregation and run settings. Every setting is
 * declared once, in the option tables of run_config.c, which drive the
 * YAML reader, validation and `tasklens run --help-config`.
 *
 *   sources:                      # one or more
 *     - type: file                # file | dir | stdin | kafka
 *       path: /var/log/wq/run*.log # a path or a glob
 *       follow: true
 *       from: beginning           # or end (first start only)
 *       rotated: "run.log*"       # where rotation puts it (default: the path + anything)
 *       parser: auto              # or a name from `tasklens formats`
 *       options: {max_line: 4M}   # the parser's own options
 *   sinks:                        # one or more
 *     - type: influxdb
 *       url: http://127.0.0.1:8086
 *       db: tasklens              # 1.x; or org + bucket (2.x)
 *       token: ${INFLUX_TOKEN}
 *     - type: file
 *       path: points.lp
 *   aggregate: {by: [source, category], window: 60}
 *   checkpoint_dir: /var/lib/tasklens
 *   flush_interval: 1000
 */
#ifndef TL_PIPELINE_RUN_CONFIG_H
#define TL_PIPELINE_RUN_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "core/config.h"
#include "core/options.h"
#include "sinks/sink.h"

#define RUN_MAX_SOURCES 64
/* Sources once globs are expanded (files) or partitions assigned: each is a
 * checkpoint section and up to two descriptors (run raises its open-file
 * limit to the hard one at start). */
#define RUN_MAX_OPEN_SOURCES 4096
#define RUN_MAX_SINKS 8

struct run_settings {
    const char *checkpoint_dir;
    long long flush_interval;      /* ms */
    long long cumulative_interval; /* s */
    long long checkpoint_interval; /* s */
    long long drain_timeout;       /* ms, at exit */
    const char *log_level;
    const char *instance;
    bool quiet;
    const char *requests; /* a BPS submit YAML: LSST quanta's allocations */
};

struct agg_settings {
    const char *by;
    long long window; /* s */
    double alpha;
    long long max_keys;
    long long exact_limit;
    bool histograms;
    const char *histogram_windows; /* s, comma-separated */
    long long allowed_lateness; /* s */
};

struct tl_source_type; /* source.h: what reads this entry */

/* What every source type's settings start with (the first member, `base`,
 * of its own config struct): the input and its format. A type that reads
 * no path, or parses with no parser of its choosing, leaves them out of its
 * option table. */
struct src_base {
    const char *path;
    const char *parser;
    const struct tl_cfg_node *parser_options; /* `options:`; may be NULL */
};

/* The option table entries of the base, declared once: path (HELP says
 * what it names) and parser (HELP) with the parser's `options:`. */
#define TL_SRC_PATH_OPTION(C, HELP) {"path", TL_OPT_STRING, NULL, HELP, offsetof(C, base.path)}
#define TL_SRC_PARSER_OPTIONS(C, HELP)                                                            \
    {"parser", TL_OPT_STRING, "auto", HELP, offsetof(C, base.parser)},                            \
    {"options", TL_OPT_MAP, NULL, "the parser's own options (below)", offsetof(C, base.parser_options)}

/* A source entry: its type, the type's own settings (type->config_size
 * bytes, defaults filled in, a struct src_base first) and where it was
 * declared. */
struct src_settings {
    const struct tl_source_type *type;
    void *config;
    int line; /* 0 for flags */
};

static inline struct src_base *tl_src_base(const struct src_settings *s)
{
    return (struct src_base *)s->config;
}

struct run_config {
    struct tl_cfg_doc doc; /* owns the strings when loaded from a file */
    const char *file;      /* NULL: from flags */
    struct run_settings run;
    struct agg_settings agg;
    struct src_settings src[RUN_MAX_SOURCES];
    int nsrc;
    struct tl_sink_conf sink[RUN_MAX_SINKS]; /* each type's own settings (sinks/sink.h) */
    int nsink;
    bool view_only; /* `top`: a view takes the records; no sink is needed */
};

/* Defaults everywhere, no sources or sinks. */
void run_config_init(struct run_config *c);
/* Loads and validates a file; err names file:line and key. */
enum tl_err run_config_load(struct run_config *c, const char *path, char *err, size_t errlen);
/* Adds a source / sink with defaults (for flags). NULL when full (or out
 * of memory). A source's own settings are set by name with
 * run_config_source_set. */
struct src_settings *run_config_add_source(struct run_config *c,
                                          const struct tl_source_type *type);
struct tl_sink_conf *run_config_add_sink(struct run_config *c, const struct tl_sink_type *type);
/* One setting of a source by its option name ("from", "follow": a bool as
 * "true"/"false"); TL_ERR_USAGE when the type has no such setting. */
enum tl_err run_config_source_set(struct src_settings *s, const char *name, const char *value);
/* A string setting of a source by its option name; NULL when unset or none. */
const char *run_config_source_get(const struct src_settings *s, const char *name);
/* Checks what flags and files both need: at least one source and sink,
 * values in range. */
enum tl_err run_config_validate(const struct run_config *c, char *err, size_t errlen);
void run_config_free(struct run_config *c);
/* Every setting with its type, default and help. */
void run_config_help(FILE *out);

#endif
