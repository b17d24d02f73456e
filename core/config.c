/* Configuration files: see config.h.
 *
 * libyaml's document API gives a graph of nodes; we copy it into our own
 * tree (strings substituted once, lines kept) and let the document go. The
 * copy is bounded in depth and in node count, so aliases cannot blow a
 * small file up into a huge tree ("billion laughs"). Everything lives in
 * one arena freed with the document. */
#include "core/config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define CFG_MAX_FILE (1 << 20)
#define CFG_MAX_DEPTH 16
#define CFG_MAX_NODES 100000

struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(16) char data[];
};

static void *arena_alloc(struct tl_cfg_doc *doc, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct arena_block *b = doc->arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        struct arena_block *nb = malloc(sizeof *nb + cap);
        if (!nb) return NULL;
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        doc->arena = b = nb;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

static char *arena_strndup(struct tl_cfg_doc *doc, const char *s, size_t n)
{
    char *d = arena_alloc(doc, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

struct loader {
    struct tl_cfg_doc *doc;
    yaml_document_t *y;
    size_t nodes;
    char *err;
    size_t errlen;
    bool verbatim; /* another program's file: its ${...} are its own */
};

/* ${VAR}, ${VAR:-default}, $$ -> the environment. key names the value. */
static char *substitute(struct loader *L, const char *v, size_t n, const char *key, int line)
{
    if (L->verbatim || !memchr(v, '$', n)) return arena_strndup(L->doc, v, n);
    size_t cap = n + 1, len = 0;
    char *out = malloc(cap);
    for (size_t i = 0; out && i < n;) {
        const char *piece = v + i;
        size_t plen = 1;
        char *var_value = NULL;
        if (v[i] == '$' && i + 1 < n && v[i + 1] == '$') {
            plen = 1;
            i += 2;
        } else if (v[i] == '$' && i + 1 < n && v[i + 1] == '{') {
            const char *close = memchr(v + i, '}', n - i);
            if (!close) {
                snprintf(L->err, L->errlen, "%s:%d: %s: '${' without '}'", L->doc->path, line,
                         key);
                free(out);
                return NULL;
            }
            const char *name = v + i + 2;
            size_t nlen = (size_t)(close - name);
            const char *dflt = NULL;
            size_t dlen = 0;
            const char *sep = NULL;
            for (const char *q = name; q + 1 < close; q++)
                if (q[0] == ':' && q[1] == '-') {
                    sep = q;
                    break;
                }
            if (sep) {
                dflt = sep + 2;
                dlen = (size_t)(close - dflt);
                nlen = (size_t)(sep - name);
            }
            char vname[256];
            if (nlen == 0 || nlen >= sizeof vname) {
                snprintf(L->err, L->errlen, "%s:%d: %s: bad variable name in ${...}",
                         L->doc->path, line, key);
                free(out);
                return NULL;
            }
            memcpy(vname, name, nlen);
            vname[nlen] = '\0';
            var_value = getenv(vname);
            if (var_value) {
                piece = var_value;
                plen = strlen(var_value);
            } else if (dflt) {
                piece = dflt;
                plen = dlen;
            } else {
                snprintf(L->err, L->errlen,
                         "%s:%d: %s: environment variable %s is not set (use ${%s:-default} "
                         "for an optional one)",
                         L->doc->path, line, key, vname, vname);
                free(out);
                return NULL;
            }
            i = (size_t)(close - v) + 1;
        } else {
            i++;
        }
        if (len + plen + 1 > cap) {
            while (len + plen + 1 > cap) cap *= 2;
            char *o = realloc(out, cap);
            if (!o) {
                free(out);
                out = NULL;
                break;
            }
            out = o;
        }
        memcpy(out + len, piece, plen);
        len += plen;
    }
    if (!out) {
        snprintf(L->err, L->errlen, "%s: out of memory", L->doc->path);
        return NULL;
    }
    char *r = arena_strndup(L->doc, out, len);
    free(out);
    return r;
}

static struct tl_cfg_node *convert(struct loader *L, yaml_node_t *yn, int depth, const char *key)
{
    int line = (int)yn->start_mark.line + 1;
    if (depth > CFG_MAX_DEPTH || ++L->nodes > CFG_MAX_NODES) {
        snprintf(L->err, L->errlen, "%s:%d: nested too deep or too many nodes (aliases?)",
                 L->doc->path, line);
        return NULL;
    }
    struct tl_cfg_node *n = arena_alloc(L->doc, sizeof *n);
    if (!n) goto nomem;
    n->line = line;
    switch (yn->type) {
    case YAML_SCALAR_NODE:
        n->kind = TL_CFG_SCALAR;
        n->scalar = substitute(L, (const char *)yn->data.scalar.value, yn->data.scalar.length,
                               key, line);
        return n->scalar ? n : NULL;
    case YAML_SEQUENCE_NODE: {
        n->kind = TL_CFG_SEQ;
        size_t cnt = (size_t)(yn->data.sequence.items.top - yn->data.sequence.items.start);
        n->items = arena_alloc(L->doc, (cnt ? cnt : 1) * sizeof *n->items);
        if (!n->items) goto nomem;
        for (size_t i = 0; i < cnt; i++) {
            yaml_node_t *c = yaml_document_get_node(L->y, yn->data.sequence.items.start[i]);
            if (!c || !(n->items[i] = convert(L, c, depth + 1, key))) return NULL;
        }
        n->n = cnt;
        return n;
    }
    case YAML_MAPPING_NODE: {
        n->kind = TL_CFG_MAP;
        size_t cnt = (size_t)(yn->data.mapping.pairs.top - yn->data.mapping.pairs.start);
        n->items = arena_alloc(L->doc, (cnt ? cnt : 1) * sizeof *n->items);
        n->keys = arena_alloc(L->doc, (cnt ? cnt : 1) * sizeof *n->keys);
        if (!n->items || !n->keys) goto nomem;
        for (size_t i = 0; i < cnt; i++) {
            yaml_node_pair_t *pr = &yn->data.mapping.pairs.start[i];
            yaml_node_t *k = yaml_document_get_node(L->y, pr->key);
            yaml_node_t *v = yaml_document_get_node(L->y, pr->value);
            if (!k || !v) goto nomem;
            if (k->type != YAML_SCALAR_NODE) {
                snprintf(L->err, L->errlen, "%s:%d: a key must be a plain name", L->doc->path,
                         (int)k->start_mark.line + 1);
                return NULL;
            }
            const char *ks = arena_strndup(L->doc, (const char *)k->data.scalar.value,
                                           k->data.scalar.length);
            if (!ks) goto nomem;
            for (size_t j = 0; j < i; j++)
                if (!strcmp(n->keys[j], ks)) {
                    snprintf(L->err, L->errlen, "%s:%d: %s: given twice (first on line %d)",
                             L->doc->path, (int)k->start_mark.line + 1, ks, n->items[j]->line);
                    return NULL;
                }
            n->keys[i] = ks;
            if (!(n->items[i] = convert(L, v, depth + 1, ks))) return NULL;
            n->items[i]->line = (int)k->start_mark.line + 1; /* the key's line reads best */
        }
        n->n = cnt;
        return n;
    }
    default: break;
    }
    snprintf(L->err, L->errlen, "%s:%d: empty node", L->doc->path, line);
    return NULL;
nomem:
    snprintf(L->err, L->errlen, "%s: out of memory", L->doc->path);
    return NULL;
}

static enum tl_err parse(const char *name, const char *text, size_t len, struct tl_cfg_doc *doc,
                         char *err, size_t errlen, bool verbatim)
{
    memset(doc, 0, sizeof *doc);
    doc->path = strdup(name);
    if (!doc->path) return TL_ERR_NOMEM;
    if (len > CFG_MAX_FILE) {
        snprintf(err, errlen, "%s: larger than %d bytes; not a configuration file", name,
                 CFG_MAX_FILE);
        return TL_ERR_LIMIT;
    }
    yaml_parser_t p;
    yaml_document_t y;
    if (!yaml_parser_initialize(&p)) return TL_ERR_NOMEM;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &y)) {
        char ctx[160] = "";
        if (p.context)
            snprintf(ctx, sizeof ctx, " %s (started on line %d)", p.context,
                     (int)p.context_mark.line + 1);
        snprintf(err, errlen, "%s:%d:%d: %s%s", name, (int)p.problem_mark.line + 1,
                 (int)p.problem_mark.column + 1, p.problem ? p.problem : "not valid YAML", ctx);
        yaml_parser_delete(&p);
        return TL_ERR_USAGE;
    }
    enum tl_err rc = TL_OK;
    yaml_node_t *root = yaml_document_get_root_node(&y);
    struct loader L = {doc, &y, 0, err, errlen, verbatim};
    if (!root) {
        doc->root = arena_alloc(doc, sizeof *doc->root); /* empty file */
        if (doc->root) {
            doc->root->kind = TL_CFG_MAP;
            doc->root->line = 1;
        } else {
            rc = TL_ERR_NOMEM;
        }
    } else if (root->type != YAML_MAPPING_NODE) {
        snprintf(err, errlen, "%s:%d: the top level must be a mapping of settings", name,
                 (int)root->start_mark.line + 1);
        rc = TL_ERR_USAGE;
    } else if (!(doc->root = convert(&L, root, 0, "(top)"))) {
        rc = TL_ERR_USAGE;
    }
    yaml_document_delete(&y);
    yaml_parser_delete(&p);
    return rc;
}

enum tl_err tl_cfg_parse(const char *name, const char *text, size_t len, struct tl_cfg_doc *doc,
                         char *err, size_t errlen)
{
    return parse(name, text, len, doc, err, errlen, false);
}

static enum tl_err load(const char *path, struct tl_cfg_doc *doc, char *err, size_t errlen,
                        bool verbatim)
{
    memset(doc, 0, sizeof *doc);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return TL_ERR_OPEN;
    }
    char *text = malloc(CFG_MAX_FILE + 1);
    size_t len = text ? fread(text, 1, CFG_MAX_FILE + 1, f) : 0;
    bool rerr = ferror(f);
    fclose(f);
    if (!text || rerr) {
        free(text);
        snprintf(err, errlen, "%s: %s", path, text ? "read error" : "out of memory");
        return text ? TL_ERR_IO : TL_ERR_NOMEM;
    }
    enum tl_err rc = parse(path, text, len, doc, err, errlen, verbatim);
    free(text);
    return rc;
}

enum tl_err tl_cfg_load(const char *path, struct tl_cfg_doc *doc, char *err, size_t errlen)
{
    return load(path, doc, err, errlen, false);
}

enum tl_err tl_cfg_load_verbatim(const char *path, struct tl_cfg_doc *doc, char *err,
                                 size_t errlen)
{
    return load(path, doc, err, errlen, true);
}

void tl_cfg_free(struct tl_cfg_doc *doc)
{
    struct arena_block *b = doc->arena;
    while (b) {
        struct arena_block *next = b->next;
        free(b);
        b = next;
    }
    free(doc->path);
    memset(doc, 0, sizeof *doc);
}

const struct tl_cfg_node *tl_cfg_get(const struct tl_cfg_node *map, const char *key)
{
    if (!map || map->kind != TL_CFG_MAP) return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (!strcmp(map->keys[i], key)) return map->items[i];
    return NULL;
}

int tl_cfg_key_line(const struct tl_cfg_node *map, const char *key)
{
    const struct tl_cfg_node *v = tl_cfg_get(map, key);
    return v ? v->line : map ? map->line : 0;
}

static bool listed(const char *const *list, const char *k)
{
    for (; list && *list; list++)
        if (!strcmp(*list, k)) return true;
    return false;
}

static const char *const kind_names[] = {"a single value", "a list", "a mapping"};

enum tl_err tl_cfg_apply(const struct tl_cfg_doc *doc, const struct tl_cfg_node *map,
                         const struct tl_option *table, void *cfg, const char *where,
                         const char *const *skip, char *err, size_t errlen)
{
    if (!map || map->kind != TL_CFG_MAP) {
        snprintf(err, errlen, "%s:%d: %s must be a mapping of settings", doc->path,
                 map ? map->line : 0, where);
        return TL_ERR_USAGE;
    }
    for (size_t i = 0; i < map->n; i++) {
        const char *k = map->keys[i];
        const struct tl_cfg_node *v = map->items[i];
        if (listed(skip, k)) continue;
        const struct tl_option *o = table;
        while (o && o->name && strcmp(o->name, k)) o++;
        if (!o || !o->name) {
            char known[512] = "";
            size_t kl = 0;
            for (const struct tl_option *q = table; q && q->name && kl < sizeof known - 40; q++)
                kl += (size_t)snprintf(known + kl, sizeof known - kl, "%s%s", kl ? ", " : "",
                                       q->name);
            snprintf(err, errlen, "%s:%d: %s: unknown key '%s' (known: %s)", doc->path, v->line,
                     where, k, known);
            return TL_ERR_USAGE;
        }
        if (o->type == TL_OPT_MAP) { /* kept whole, for its owner to read */
            if (v->kind != TL_CFG_MAP) {
                snprintf(err, errlen, "%s:%d: %s: '%s' takes a mapping, not %s", doc->path, v->line, where, k,
                         kind_names[v->kind]);
                return TL_ERR_USAGE;
            }
            *(const struct tl_cfg_node **)((char *)cfg + o->offset) = v;
            continue;
        }
        const char *value = v->scalar;
        if (v->kind == TL_CFG_SEQ && o->type == TL_OPT_LIST) {
            /* a list for a list option: joined with commas (a list where one
             * value goes -- a path, a URL -- is refused below) */
            size_t total = 1;
            for (size_t j = 0; j < v->n; j++) {
                if (v->items[j]->kind != TL_CFG_SCALAR) goto wrong_kind;
                total += strlen(v->items[j]->scalar) + 1;
            }
            char *joined = arena_alloc((struct tl_cfg_doc *)doc, total);
            if (!joined) return TL_ERR_NOMEM;
            for (size_t j = 0; j < v->n; j++) {
                if (j) strcat(joined, ",");
                strcat(joined, v->items[j]->scalar);
            }
            value = joined;
        } else if (v->kind != TL_CFG_SCALAR) {
            goto wrong_kind;
        }
        char why[256];
        if (tl_options_set(table, cfg, k, value, why, sizeof why)) {
            snprintf(err, errlen, "%s:%d: %s: %s", doc->path, v->line, where, why);
            return TL_ERR_USAGE;
        }
        continue;
    wrong_kind:
        snprintf(err, errlen, "%s:%d: %s: '%s' takes a single value, not %s", doc->path, v->line,
                 where, k, kind_names[v->kind]);
        return TL_ERR_USAGE;
    }
    return TL_OK;
}

enum tl_err tl_cfg_only_keys(const struct tl_cfg_doc *doc, const struct tl_cfg_node *map,
                             const char *const *keys, const char *where, char *err,
                             size_t errlen)
{
    if (!map || map->kind != TL_CFG_MAP) {
        snprintf(err, errlen, "%s:%d: %s must be a mapping", doc->path, map ? map->line : 0,
                 where);
        return TL_ERR_USAGE;
    }
    for (size_t i = 0; i < map->n; i++)
        if (!listed(keys, map->keys[i])) {
            char known[512] = "";
            size_t kl = 0;
            for (const char *const *q = keys; *q && kl < sizeof known - 40; q++)
                kl += (size_t)snprintf(known + kl, sizeof known - kl, "%s%s", kl ? ", " : "", *q);
            snprintf(err, errlen, "%s:%d: %s: unknown key '%s' (known: %s)", doc->path,
                     map->items[i]->line, where, map->keys[i], known);
            return TL_ERR_USAGE;
        }
    return TL_OK;
}
