/* Plugin options, declared once in a table (Fluent Bit's config map idea).
 *
 * Each parser, source and sink declares its options as an array of
 * struct tl_option ending in {0}: name, type, default (as text), one-line help,
 * and the offset of the field in the plugin's own config struct. Defaults,
 * parsing, validation, `--help` text and docs all come from that table and
 * nowhere else. */
#ifndef TL_OPTIONS_H
#define TL_OPTIONS_H

#include <stddef.h>
#include <stdio.h>
#include <stdbool.h>

#include "core/error.h"

enum tl_opt_type {
    TL_OPT_BOOL,   /* bool */
    TL_OPT_INT,    /* long long */
    TL_OPT_SIZE,   /* size_t; accepts K, M, G suffixes (powers of 1024) */
    TL_OPT_DOUBLE, /* double */
    TL_OPT_STRING, /* const char *, borrowed from the default or the caller */
    TL_OPT_LIST,   /* const char *, comma-separated; a YAML list is joined with commas */
    TL_OPT_MAP,    /* const struct tl_cfg_node *: a YAML mapping kept whole (a parser's
                    * options, librdkafka's properties); from a file only, never text */
};

struct tl_option {
    const char *name;
    enum tl_opt_type type;
    const char *def;
    const char *help;
    size_t offset;
    /* Optional: the command-line flag of `lines` and `run` that sets it
     * ("influx-url" for --influx-url). A bool's flag takes no value and
     * sets the opposite of its default (--no-gzip). */
    const char *flag;
};

/* Fills cfg with every option's default. */
enum tl_err tl_options_defaults(const struct tl_option *table, void *cfg);
/* Sets one option from text; err gets a message naming the option. */
enum tl_err tl_options_set(const struct tl_option *table, void *cfg, const char *name,
                           const char *value, char *err, size_t errlen);
void tl_options_help(const struct tl_option *table, const char *prefix, FILE *out);
/* One help entry: "  LEFT  text", the text wrapped at TL_HELP_WIDTH columns
 * under its own column. */
#define TL_HELP_WIDTH 80
void tl_help_line(FILE *out, const char *left, int left_width, const char *text);

/* Splits "category,host" in place into at most max tag names; the count,
 * or 0 when the list is empty or too long. */
int tl_parse_key_list(char *list, const char **out, int max);

#endif
