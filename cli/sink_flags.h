/* The quick flags of `lines` and `run` that configure sinks, made from the
 * sink types' option tables (every option with a `flag`): --influx-url,
 * --spool-dir, --no-gzip, ... are declared once, beside the YAML key they
 * set, so the flags, the configuration file and the help cannot drift. */
#ifndef TL_CLI_SINK_FLAGS_H
#define TL_CLI_SINK_FLAGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "sinks/sink.h"

#define TL_SINK_FLAG_BASE 2000 /* getopt codes of sink flags: BASE + index */
#define TL_SINK_FLAGS_MAX 64

struct tl_sink_flags {
    struct tl_sink_conf conf[8]; /* one per sink type that has flags */
    int nconf;
    struct { int conf; const struct tl_option *opt; } flag[TL_SINK_FLAGS_MAX];
    int nflags;
    struct option longopts[128]; /* the command's own, then the sink flags */
};

/* own: the command's getopt table (ending in {0}); f->longopts then holds
 * it followed by every sink flag. */
enum tl_err tl_sink_flags_init(struct tl_sink_flags *f, const struct option *own);
void tl_sink_flags_free(struct tl_sink_flags *f);
/* 1: c was a sink flag and is applied; 0: not one; -1: a bad value (said,
 * prefixed cmd). */
int tl_sink_flag(struct tl_sink_flags *f, int c, const char *arg, const char *cmd);
/* The sinks the flags name (their type's `configured`), in type order. */
int tl_sink_flags_configured(const struct tl_sink_flags *f, const struct tl_sink_conf **out,
                             int max);
/* "  --influx-url URL   InfluxDB base URL (http or https) (default ...)" lines. */
void tl_sink_flags_help(FILE *out);

#endif
