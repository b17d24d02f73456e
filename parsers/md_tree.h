/* A parsed metadata document as one flat array of nodes in document order
 * (a "tape"), built by one of four builders:
 *   - md_json_fast / md_yaml_fast: hand scanners for the shapes the LSST
 *     serializers write. They accept a document only when Jansson (with
 *     JSON_REJECT_DUPLICATES, after NaN/Infinity became null) or libyaml
 *     would accept it and give the same tree; anything else -- an escape
 *     they do not decode, a number that could overflow, a YAML anchor,
 *     comment, multi-line scalar, tab, non-ASCII byte... -- is
 *     MD_FALLBACK, never an error of theirs;
 *   - md_from_jansson / md_from_libyaml: the same tree from those
 *     libraries' documents, for everything the fast scanners leave.
 * The walk in lsst_metadata.c reads only this tree, so the records cannot
 * depend on which builder ran (fuzz_parser checks that on every input).
 *
 * Children of a container at index i start at i + 1; a node's `next` is the
 * index one past its subtree (its next sibling). A mapping's children
 * alternate key, value. Strings' text is NUL-terminated. */
#ifndef TL_MD_TREE_H
#define TL_MD_TREE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

enum md_type {
    MD_NULL,
    MD_FALSE,
    MD_TRUE,
    MD_INT,  /* JSON integer, as text (as Jansson: strtoll, then a double) */
    MD_REAL, /* JSON real, as text (strtod); both not NUL-terminated */
    MD_NUM,  /* a number already converted (from Jansson) */
    MD_STR,  /* a string, or any YAML scalar */
    MD_SEQ,
    MD_MAP,
};

struct md_node {
    uint8_t type;
    uint32_t next; /* one past this subtree */
    uint32_t n;    /* containers: children (a mapping: 2 per pair) */
    uint32_t len;  /* scalars: bytes of s */
    const char *s; /* scalars: NUL-terminated text */
    double num;    /* MD_NUM */
};

struct md_tree {
    struct md_node *v;
    uint32_t n, cap;
    uint32_t max_nodes;
    char *arena; /* the fast scanners' string copies */
    size_t alen, acap;
    uint32_t *ht; /* duplicate-key check */
    size_t htcap;
};

enum md_rc {
    MD_OK,
    MD_FALLBACK, /* fast scanners: not a shape they vouch for */
    MD_TOO_MANY, /* more nodes than max_nodes */
    MD_TOO_DEEP, /* nested deeper than MD_MAX_DEPTH */
    MD_NOMEM,
};

#define MD_MAX_DEPTH 64

/* Empties t for a new document of at most max_nodes nodes. */
void md_tree_reset(struct md_tree *t, uint32_t max_nodes);
void md_tree_free(struct md_tree *t);

enum md_rc md_json_fast(struct md_tree *t, const char *p, size_t n);
enum md_rc md_yaml_fast(struct md_tree *t, const char *p, size_t n);
/* Strings stay owned by the library's document: walk before freeing it. */
enum md_rc md_from_jansson(struct md_tree *t, json_t *root);
enum md_rc md_from_libyaml(struct md_tree *t, yaml_document_t *d);

/* Bare NaN, Infinity and -Infinity outside strings become null: the text
 * Jansson reads (malloc'd; NULL when out of memory). */
char *md_json_constants_to_null(const char *p, size_t n, size_t *outlen);
/* Same nodes, text and numbers (bit for bit) -- the fast scanners' check. */
bool md_tree_same(const struct md_tree *a, const struct md_tree *b);

/* A number node's value, as json_number_value would give it. */
double md_number(const struct md_node *x);
/* The value of key in mapping m, or 0 (the root is never a value). */
uint32_t md_get(const struct md_tree *t, uint32_t m, const char *key);

#endif
