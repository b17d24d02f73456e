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

/* A source entry. The fields are those of every source type; each type's
 * option table (in its src_*.c) says which ones it takes. */
struct src_settings {
    const struct tl_source_type *type;
    const char *path;
    bool follow;
    const char *from;
    const char *rotated;    /* glob of rotated names (NULL: the path followed by anything) */
    long long rotate_quiet; /* ms a rotated-away file must be quiet before it is left */
    long long poll;         /* ms between looks (a database that changes in place) */
    const char *parser;
    bool recursive;
    const char *match;
    const struct tl_cfg_node *parser_options; /* may be NULL */
    /* kafka */
    const char *brokers, *topics, *group, *start, *key_tag, *header_tags, *state_topic;
    long long max_streams;
    const struct tl_cfg_node *properties; /* librdkafka pass-through, may be NULL */
    int line;                                 /* where it was declared, 0 for flags */
};

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
/* Adds a source / sink with defaults (for flags). NULL when full. */
struct src_settings *run_config_add_source(struct run_config *c,
                                          const struct tl_source_type *type);
struct tl_sink_conf *run_config_add_sink(struct run_config *c, const struct tl_sink_type *type);
/* Checks what flags and files both need: at least one source and sink,
 * values in range. */
enum tl_err run_config_validate(const struct run_config *c, char *err, size_t errlen);
void run_config_free(struct run_config *c);
/* Every setting with its type, default and help. */
void run_config_help(FILE *out);

#endif
