/* Configuration files: YAML (libyaml) read into a small tree, then applied
 * to option tables (core/options.h).
 *
 * The tree keeps each node's line, so every mistake is reported as
 * `file:line: key: what is wrong`. Scalars have `${VAR}` replaced by the
 * environment variable VAR (`${VAR:-default}` when it may be unset; `$$`
 * is a literal `$`); an unset variable without default is an error naming
 * the key -- tokens come from the environment and never from the file.
 *
 * Applying a mapping to a table checks every key (unknown keys are errors,
 * with the known ones listed) and every value's type. A sequence of
 * scalars given for a string option is joined with commas (`by: [a, b]`).
 * Memory is bounded: files over 1 MiB, or nested deeper than 16, are
 * refused. */
#ifndef TL_CONFIG_H
#define TL_CONFIG_H

#include <stddef.h>

#include "core/error.h"
#include "core/options.h"

enum tl_cfg_kind { TL_CFG_SCALAR, TL_CFG_SEQ, TL_CFG_MAP };

struct tl_cfg_node {
    enum tl_cfg_kind kind;
    int line;             /* 1-based */
    const char *scalar;   /* TL_CFG_SCALAR: the value, ${VAR} substituted */
    size_t n;             /* items (SEQ) or pairs (MAP) */
    const char **keys;    /* MAP */
    struct tl_cfg_node **items;
};

struct tl_cfg_doc {
    char *path;
    struct tl_cfg_node *root; /* a mapping (an empty file gives an empty one) */
    void *arena;
};

enum tl_err tl_cfg_load(const char *path, struct tl_cfg_doc *doc, char *err, size_t errlen);
/* Another program's YAML (a BPS submit file), its scalars as written: its
 * ${VAR} and {placeholders} are its own business. */
enum tl_err tl_cfg_load_verbatim(const char *path, struct tl_cfg_doc *doc, char *err,
                                 size_t errlen);
/* The same, from text in memory (name is used in messages). */
enum tl_err tl_cfg_parse(const char *name, const char *text, size_t len, struct tl_cfg_doc *doc,
                         char *err, size_t errlen);
void tl_cfg_free(struct tl_cfg_doc *doc);

/* Value of key in a mapping, or NULL. */
const struct tl_cfg_node *tl_cfg_get(const struct tl_cfg_node *map, const char *key);
/* Line of key in a mapping (for messages), or the mapping's line. */
int tl_cfg_key_line(const struct tl_cfg_node *map, const char *key);

/* Applies every key of map to cfg through table. Keys listed in skip
 * (NULL-terminated, may be NULL) are left for the caller. where names the
 * mapping in messages ("sources[0] (file)"). */
enum tl_err tl_cfg_apply(const struct tl_cfg_doc *doc, const struct tl_cfg_node *map,
                         const struct tl_option *table, void *cfg, const char *where,
                         const char *const *skip, char *err, size_t errlen);

/* Checks that map holds only the given keys (NULL-terminated). */
enum tl_err tl_cfg_only_keys(const struct tl_cfg_doc *doc, const struct tl_cfg_node *map,
                             const char *const *keys, const char *where, char *err,
                             size_t errlen);

#endif
