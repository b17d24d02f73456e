/* Metadata documents as one node array: two fast scanners and two
 * converters (md_tree.h). The fast scanners' rule is one-sided: whatever
 * they accept, the library would accept and turn into the same tree; when
 * unsure they answer MD_FALLBACK and the library decides. */
#include "parsers/md_tree.h"

#include "core/numfmt.h"

#include <stdlib.h>
#include <string.h>

void md_tree_reset(struct md_tree *t, uint32_t max_nodes)
{
    t->n = 0;
    t->alen = 0;
    t->max_nodes = max_nodes;
}

void md_tree_free(struct md_tree *t)
{
    free(t->v);
    free(t->arena);
    free(t->ht);
    memset(t, 0, sizeof *t);
}

static bool grow(struct md_tree *t)
{
    uint32_t cap = t->cap ? t->cap * 2 : 256;
    struct md_node *v = realloc(t->v, cap * sizeof *v);
    if (!v) return false;
    t->v = v;
    t->cap = cap;
    return true;
}

/* A new node of type ty, or UINT32_MAX (over max_nodes, or no memory:
 * *rc says which). */
static inline uint32_t push(struct md_tree *t, enum md_type ty, enum md_rc *rc)
{
    if (t->n >= t->max_nodes) {
        *rc = MD_TOO_MANY;
        return UINT32_MAX;
    }
    if (t->n == t->cap && !grow(t)) {
        *rc = MD_NOMEM;
        return UINT32_MAX;
    }
    struct md_node *x = &t->v[t->n];
    x->type = (uint8_t)ty;
    x->n = x->len = 0;
    x->s = NULL;
    x->next = t->n + 1;
    return t->n++;
}

/* Room in the arena for the string copies of a document of n bytes: each
 * copy is at most its source plus a NUL, and sources do not overlap, so
 * 2n + 1 bytes never move (pointers into the arena stay valid). */
static bool arena_for(struct md_tree *t, size_t n)
{
    size_t need = 2 * n + 16;
    if (need <= t->acap) return true;
    char *a = realloc(t->arena, need);
    if (!a) return false;
    t->arena = a;
    t->acap = need;
    return true;
}

double md_number(const struct md_node *x)
{
    switch (x->type) {
    case MD_INT: { /* at most 18 digits: exact, as Jansson's strtoll */
        int64_t v;
        return tl_parse_i64(x->s, x->s + x->len, &v) ? (double)v : 0;
    }
    case MD_REAL: { /* strtod's double, bit for bit (numfmt.h) */
        double v;
        return tl_parse_double(x->s, x->s + x->len, &v) ? v : 0;
    }
    case MD_NUM: return x->num;
    default: return 0;
    }
}

uint32_t md_get(const struct md_tree *t, uint32_t m, const char *key)
{
    if (t->v[m].type != MD_MAP) return 0;
    size_t kl = strlen(key);
    for (uint32_t k = m + 1; k < t->v[m].next; k = t->v[k + 1].next)
        if (t->v[k].type == MD_STR && t->v[k].len == kl && !memcmp(t->v[k].s, key, kl))
            return k + 1;
    return 0;
}

/* Byte classes for the scanners' inner loops. */
enum {
    C_JSTR = 1,   /* ends a JSON string run: '"', '\\', control, non-ASCII */
    C_YBAD = 2,   /* never in the YAML subset: control (but \n), DEL, non-ASCII, '#' */
    C_YFLOW = 4,  /* ends a flow plain scalar: , ] \n : [ { } */
    C_YBLOCK = 8, /* ends a block plain scalar run: \n : */
    C_YQUOTE = 16 /* ends a quoted run: ' " \\ \n */
};
/* (generated from the rules above, 16 bytes per row) */
static const unsigned char cls[256] = {
     3,  3,  3,  3,  3,  3,  3,  3,  3,  3, 29,  3,  3,  3,  3,  3,
     3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,
     0,  0, 17,  2,  0,  0,  0, 16,  0,  0,  0,  0,  4,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0, 12,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  4, 17,  4,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  4,  0,  4,  0,  2,
     3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,
     3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,
     3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,
     3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,
     3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,
     3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,
     3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,
     3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,
};

/* ---------------------------------------------------------------- JSON */

struct jscan {
    const char *p, *e;
    struct md_tree *t;
    enum md_rc rc;
};

static inline void jws(struct jscan *j)
{
    while (j->p < j->e && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t')) j->p++;
}

static inline bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static inline bool is_alnum(char c)
{
    return is_digit(c) || (unsigned)((c | 0x20) - 'a') < 26u;
}

/* The string after its opening quote, into the arena. Plain ASCII and the
 * one-letter escapes only: \u (surrogates, \u0000) and every byte above
 * 0x7f (UTF-8 validity) are left to Jansson. */
static bool jstring(struct jscan *j, struct md_node *x)
{
    char *o = j->t->arena + j->t->alen, *s = o;
    const char *p = j->p, *e = j->e;
    for (;;) {
        const char *r = p;
        while (p < e && !(cls[(unsigned char)*p] & C_JSTR)) p++;
        memcpy(o, r, (size_t)(p - r));
        o += p - r;
        if (p >= e) return false;
        unsigned char c = (unsigned char)*p++;
        if (c == '"') break;
        if (c != '\\' || p >= e) return false; /* control, non-ASCII: Jansson's call */
        switch (*p++) {
        case '"': c = '"'; break;
        case '\\': c = '\\'; break;
        case '/': c = '/'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        default: return false;
        }
        *o++ = (char)c;
    }
    *o = '\0';
    x->s = s;
    x->len = (uint32_t)(o - s);
    j->t->alen += x->len + 1;
    j->p = p;
    return true;
}

/* A number as Jansson lexes it (RFC 8259 grammar), kept when Jansson
 * cannot reject it for range: integers of at most 18 digits (strtoll
 * cannot overflow), reals below 1e300 (strtod cannot overflow). */
static bool jnumber(struct jscan *j, struct md_node *x)
{
    const char *s = j->p, *p = s, *e = j->e;
    if (*p == '-') p++;
    if (p >= e) return false;
    const char *d0 = p;
    int sig = 0; /* integer digits after leading zeros */
    if (*p == '0') {
        p++;
        if (p < e && is_digit(*p)) return false;
    } else if (is_digit(*p)) {
        while (p < e && is_digit(*p)) p++;
        sig = (int)(p - d0);
    } else {
        return false;
    }
    bool real = false;
    if (p < e && *p == '.') {
        real = true;
        if (++p >= e || !is_digit(*p)) return false;
        while (p < e && is_digit(*p)) p++;
    }
    long exp = 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        real = true;
        bool neg = false;
        if (++p < e && (*p == '+' || *p == '-')) neg = *p++ == '-';
        if (p >= e || !is_digit(*p)) return false;
        for (; p < e && is_digit(*p); p++)
            if (exp < 100000) exp = exp * 10 + (*p - '0');
        if (neg) exp = -exp;
    }
    if (real ? sig + exp > 300 || p - s > 400 : p - d0 > 18) return false; /* 400: tl_parse_double's */
    x->type = real ? MD_REAL : MD_INT;
    x->s = s; /* in the document, not NUL-terminated: md_number reads s[0, len) */
    x->len = (uint32_t)(p - s);
    j->p = p;
    return true;
}

static inline uint64_t key_hash(const struct md_node *k)
{
    uint64_t h = 0x9e3779b97f4a7c15u * (k->len + 1);
    for (uint32_t i = 0; i < k->len; i++) h = (h ^ (unsigned char)k->s[i]) * 0x100000001b3u;
    return h;
}

/* Does mapping m hold a key twice? (Jansson rejects that document.) */
static bool dup_keys(struct md_tree *t, uint32_t m)
{
    uint32_t pairs = t->v[m].n / 2;
    if (pairs < 2) return false;
    size_t size = 16;
    while (size < 2 * (size_t)pairs) size *= 2;
    if (size > t->htcap) {
        uint32_t *h = realloc(t->ht, size * sizeof *h);
        if (!h) return true; /* let Jansson have it */
        t->ht = h;
        t->htcap = size;
    }
    memset(t->ht, 0, size * sizeof *t->ht);
    for (uint32_t k = m + 1; k < t->v[m].next; k = t->v[k + 1].next) {
        const struct md_node *kn = &t->v[k];
        size_t i = (size_t)key_hash(kn) & (size - 1);
        for (; t->ht[i]; i = (i + 1) & (size - 1)) {
            const struct md_node *o = &t->v[t->ht[i] - 1];
            if (o->len == kn->len && !memcmp(o->s, kn->s, kn->len)) return true;
        }
        t->ht[i] = k + 1;
    }
    return false;
}

static const struct {
    const char *text;
    size_t len;
    enum md_type type;
} literals[] = {
    {"true", 4, MD_TRUE}, {"false", 5, MD_FALSE}, {"null", 4, MD_NULL},
    /* bare NaN / Infinity: null, as md_json_constants_to_null makes them */
    {"NaN", 3, MD_NULL}, {"Infinity", 8, MD_NULL}, {"-Infinity", 9, MD_NULL},
};

static bool jvalue(struct jscan *j, int depth)
{
    struct md_tree *t = j->t;
    if (j->p >= j->e) return false;
    const char *p = j->p;
    size_t left = (size_t)(j->e - p);
    uint32_t x;
    switch (*p) {
    case '{':
    case '[': {
        bool map = *p == '{';
        char close = map ? '}' : ']';
        if (depth >= MD_MAX_DEPTH || (x = push(t, map ? MD_MAP : MD_SEQ, &j->rc)) == UINT32_MAX)
            return false;
        j->p++;
        jws(j);
        uint32_t n = 0;
        if (j->p < j->e && *j->p == close) {
            j->p++;
        } else {
            for (;;) {
                if (map) {
                    uint32_t k;
                    if (j->p >= j->e || *j->p != '"' || (k = push(t, MD_STR, &j->rc)) == UINT32_MAX)
                        return false;
                    j->p++;
                    if (!jstring(j, &t->v[k])) return false;
                    jws(j);
                    if (j->p >= j->e || *j->p != ':') return false;
                    j->p++;
                    jws(j);
                    n++;
                }
                if (!jvalue(j, depth + 1)) return false;
                n++;
                jws(j);
                if (j->p < j->e && *j->p == ',') {
                    j->p++;
                    jws(j);
                    continue;
                }
                if (j->p < j->e && *j->p == close) {
                    j->p++;
                    break;
                }
                return false;
            }
        }
        t->v[x].n = n;
        t->v[x].next = t->n;
        return !map || !dup_keys(t, x);
    }
    case '"':
        if ((x = push(t, MD_STR, &j->rc)) == UINT32_MAX) return false;
        j->p++;
        return jstring(j, &t->v[x]);
    default:
        for (size_t i = 0; i < sizeof literals / sizeof *literals; i++)
            if (left >= literals[i].len && !memcmp(p, literals[i].text, literals[i].len)) {
                j->p += literals[i].len;
                return push(t, literals[i].type, &j->rc) != UINT32_MAX;
            }
        if ((x = push(t, MD_NULL, &j->rc)) == UINT32_MAX) return false;
        return jnumber(j, &t->v[x]);
    }
}

enum md_rc md_json_fast(struct md_tree *t, const char *p, size_t n)
{
    if (n > UINT32_MAX / 4 || !arena_for(t, n)) return MD_FALLBACK;
    struct jscan j = {p, p + n, t, MD_FALLBACK};
    jws(&j);
    if (j.p >= j.e || *j.p != '{' || !jvalue(&j, 0)) return MD_FALLBACK;
    jws(&j);
    return j.p == j.e ? MD_OK : MD_FALLBACK;
}

/* ---------------------------------------------------------------- YAML */

/* The subset: block sequences and mappings (plain keys), flow sequences,
 * plain / single-quoted / escape-free double-quoted scalars on one line,
 * the tags !<uri> and !!suffix. Printable ASCII and newlines only: no tab,
 * CR, comment, anchor, alias, flow mapping, block scalar, directive,
 * document marker, multi-line scalar, empty node or indentless sequence. */
struct yscan {
    const char *p, *e, *line; /* line: start of the current line */
    struct md_tree *t;
    enum md_rc rc;
};

static inline int ycol(const struct yscan *y)
{
    return (int)(y->p - y->line);
}

/* From anywhere on a line: past its end and any blank lines, to the first
 * non-space of the next content line; false at the end of input. */
static bool ynext_line(struct yscan *y)
{
    const char *nl = memchr(y->p, '\n', (size_t)(y->e - y->p));
    y->p = nl ? nl + 1 : y->e;
    for (;;) {
        y->line = y->p;
        while (y->p < y->e && *y->p == ' ') y->p++;
        if (y->p >= y->e) return false;
        if (*y->p != '\n') return true;
        y->p++;
    }
}

/* Spaces, then the end of the line: true if nothing else is there. */
static bool yeol(struct yscan *y)
{
    while (y->p < y->e && *y->p == ' ') y->p++;
    return y->p >= y->e || *y->p == '\n';
}

/* A document marker or anything at column 0 that could be one. */
static bool ymarker(const struct yscan *y)
{
    return ycol(y) == 0 && y->e - y->p >= 3 &&
           (!memcmp(y->p, "---", 3) || !memcmp(y->p, "...", 3));
}

static bool yscalar_node(struct yscan *y, const char *s, size_t len)
{
    uint32_t x = push(y->t, MD_STR, &y->rc);
    if (x == UINT32_MAX) return false;
    char *o = y->t->arena + y->t->alen;
    memcpy(o, s, len);
    o[len] = '\0';
    y->t->v[x].s = o;
    y->t->v[x].len = (uint32_t)len;
    y->t->alen += len + 1;
    return true;
}

/* A quoted scalar on one line; p at the quote. */
static bool yquoted(struct yscan *y)
{
    char q = *y->p;
    uint32_t x = push(y->t, MD_STR, &y->rc);
    if (x == UINT32_MAX) return false;
    char *o = y->t->arena + y->t->alen, *s = o;
    const char *p = y->p + 1;
    for (;;) {
        const char *r = p;
        while (p < y->e && !(cls[(unsigned char)*p] & (C_YQUOTE | C_YBAD))) p++;
        memcpy(o, r, (size_t)(p - r));
        o += p - r;
        if (p >= y->e || *p == '\n' || *p == '\\' || (cls[(unsigned char)*p] & C_YBAD)) {
            if (p >= y->e || *p != '\\' || q != '\'') return false;
            *o++ = *p++; /* a backslash is text in single quotes */
            continue;
        }
        if (*p != q) { /* the other quote: text */
            *o++ = *p++;
            continue;
        }
        if (q == '\'' && p + 1 < y->e && p[1] == '\'') {
            *o++ = '\'';
            p += 2;
            continue;
        }
        p++;
        break;
    }
    *o = '\0';
    y->t->v[x].s = s;
    y->t->v[x].len = (uint32_t)(o - s);
    y->t->alen += (size_t)(o - s) + 1;
    y->p = p;
    return true;
}

/* A tag !<uri> or !!suffix; p at '!'; after it a space or the line end. */
static bool ytag(struct yscan *y)
{
    const char *p = y->p + 1, *e = y->e;
    if (p < e && *p == '<') {
        const char *u = ++p;
        while (p < e && (is_alnum(*p) || *p == '.' || *p == '_' ||
                         *p == ':' || *p == '/' || *p == '-'))
            p++;
        if (p == u || p >= e || *p != '>') return false;
        p++;
    } else if (p < e && *p == '!') {
        const char *u = ++p;
        while (p < e && (is_alnum(*p) || *p == '.' || *p == '_' ||
                         *p == '/' || *p == '-'))
            p++;
        if (p == u) return false;
    } else {
        return false;
    }
    if (p < e && *p != ' ' && *p != '\n') return false;
    y->p = p;
    return true;
}

/* Can c start a plain scalar (next: the character after it)? */
static bool yplain_start(char c, char next, bool flow)
{
    if (c == '-')
        return next != ' ' && next != '\n' && next != '\0' &&
               !(flow && (next == ',' || next == '[' || next == ']' || next == '{' || next == '}'));
    return !strchr("-?:,[]{}#&*!|>'\"%@`", c);
}

static bool yblock(struct yscan *y, int ind, int depth);

/* A flow sequence; p at '['; ind: the enclosing block's indent (a line
 * inside must be indented more). */
static bool yflow(struct yscan *y, int ind, int depth)
{
    uint32_t x;
    if (depth >= MD_MAX_DEPTH || (x = push(y->t, MD_SEQ, &y->rc)) == UINT32_MAX) return false;
    y->p++;
    uint32_t n = 0;
    for (bool first = true;; first = false) {
        /* spaces and line breaks between tokens */
        for (;;) {
            while (y->p < y->e && *y->p == ' ') y->p++;
            if (y->p >= y->e) return false;
            if (*y->p != '\n') break;
            if (!ynext_line(y) || ycol(y) <= ind || ymarker(y)) return false;
        }
        char c = *y->p;
        if (c == ']' && first) {
            y->p++;
            break;
        }
        if (c == '!') {
            if (!ytag(y)) return false;
            while (y->p < y->e && *y->p == ' ') y->p++;
            if (y->p >= y->e) return false;
            c = *y->p;
        }
        if (c == '[') {
            if (!yflow(y, ind, depth + 1)) return false;
        } else if (c == '\'' || c == '"') {
            if (!yquoted(y)) return false;
        } else {
            const char *s = y->p;
            if (!yplain_start(c, s + 1 < y->e ? s[1] : '\0', true)) return false;
            const char *p = s;
            while (p < y->e && !(cls[(unsigned char)*p] & (C_YFLOW | C_YBAD))) p++;
            if (p < y->e && *p != ',' && *p != ']' && *p != '\n') return false; /* : [ { } or bad */
            const char *end = p;
            while (end > s && end[-1] == ' ') end--;
            if (!yscalar_node(y, s, (size_t)(end - s))) return false;
            y->p = p;
            if (p < y->e && *p == '\n') { /* only a ',' or ']' may follow, or it folds */
                if (!ynext_line(y) || ycol(y) <= ind || ymarker(y) || (*y->p != ',' && *y->p != ']'))
                    return false;
            }
        }
        n++;
        while (y->p < y->e && *y->p == ' ') y->p++;
        if (y->p < y->e && *y->p == '\n' && (!ynext_line(y) || ycol(y) <= ind || ymarker(y)))
            return false; /* a line of flow content at column 0 may be a document marker */
        if (y->p >= y->e) return false;
        if (*y->p == ']') {
            y->p++;
            break;
        }
        if (*y->p != ',') return false;
        y->p++;
        /* no trailing comma: "[a, ]" */
        const char *q = y->p;
        while (q < y->e && (*q == ' ' || *q == '\n')) q++;
        if (q < y->e && *q == ']') return false;
    }
    y->t->v[x].n = n;
    y->t->v[x].next = y->t->n;
    return true;
}

/* A plain scalar in block context from p: up to the line end, or to a ':'
 * followed by a space or the line end (then *key = true). */
static bool yplain_block(struct yscan *y, const char **s, size_t *len, bool *key)
{
    const char *p = y->p;
    if (!yplain_start(*p, p + 1 < y->e ? p[1] : '\0', false)) return false;
    *key = false;
    for (;;) {
        while (p < y->e && !(cls[(unsigned char)*p] & (C_YBLOCK | C_YBAD))) p++;
        if (p >= y->e || *p == '\n') break;
        if (*p != ':') return false;
        if (p + 1 == y->e || p[1] == ' ' || p[1] == '\n') {
            *key = true;
            break;
        }
        p++;
    }
    if (*key && p - y->p > 1000) return false; /* libyaml: a simple key is at most 1024 */
    const char *end = p;
    while (end > y->p && end[-1] == ' ') end--;
    *s = y->p;
    *len = (size_t)(end - y->p);
    y->p = *key ? p + 1 : p;
    return true;
}

/* After a node's last token on its line: nothing else on it. Moves to the
 * next content line; false on trailing text. */
static bool yend_line(struct yscan *y, bool *more)
{
    if (!yeol(y)) return false;
    *more = ynext_line(y);
    return !*more || !ymarker(y);
}

/* Inline content after "- " or "key: " or a tag, up to the line end. */
static bool yinline(struct yscan *y, int ind, int depth, bool *more)
{
    char c = *y->p;
    if (c == '[') {
        if (!yflow(y, ind, depth)) return false;
    } else if (c == '\'' || c == '"') {
        if (!yquoted(y)) return false;
        if (!yeol(y)) return false; /* a quoted key, or text after the quote */
    } else {
        const char *s;
        size_t len;
        bool key;
        if (!yplain_block(y, &s, &len, &key) || key || !yscalar_node(y, s, len)) return false;
    }
    return yend_line(y, more);
}

/* Block sequence at column c; p at its first '-'. Returns with p at the
 * first content line not in it (more = false: end of input). */
static bool yseq(struct yscan *y, int c, int depth, bool *more)
{
    uint32_t x;
    if (depth >= MD_MAX_DEPTH || (x = push(y->t, MD_SEQ, &y->rc)) == UINT32_MAX) return false;
    uint32_t n = 0;
    for (;;) {
        y->p++; /* the '-' */
        while (y->p < y->e && *y->p == ' ') y->p++;
        if (y->p >= y->e || *y->p == '\n') { /* the item on the next lines */
            if (!ynext_line(y) || ymarker(y) || ycol(y) <= c || !yblock(y, c, depth + 1)) return false;
        } else if (!yblock(y, c, depth + 1)) {
            return false;
        }
        n++;
        *more = y->p < y->e;
        if (!*more || ycol(y) < c) break;
        if (ycol(y) > c || *y->p != '-' || !(y->p + 1 == y->e || y->p[1] == ' ' || y->p[1] == '\n'))
            return false;
    }
    y->t->v[x].n = n;
    y->t->v[x].next = y->t->n;
    return true;
}

/* Block mapping at column c; its first key already scanned. */
static bool ymap(struct yscan *y, int c, const char *ks, size_t kl, int depth, bool *more)
{
    uint32_t x;
    if (depth >= MD_MAX_DEPTH || (x = push(y->t, MD_MAP, &y->rc)) == UINT32_MAX) return false;
    uint32_t n = 0;
    for (;;) {
        if (!yscalar_node(y, ks, kl)) return false;
        while (y->p < y->e && *y->p == ' ') y->p++;
        if (y->p >= y->e || *y->p == '\n') { /* the value on the next lines */
            if (!ynext_line(y) || ymarker(y) || ycol(y) <= c || !yblock(y, c, depth + 1)) return false;
            *more = y->p < y->e;
        } else {
            if (*y->p == '-' && (y->p + 1 == y->e || y->p[1] == ' ' || y->p[1] == '\n')) return false;
            if (*y->p == '!') {
                if (!ytag(y) || yeol(y)) return false;
            }
            if (!yinline(y, c, depth + 1, more)) return false;
        }
        n += 2;
        if (!*more || ycol(y) < c) break;
        bool key;
        if (ycol(y) > c || !yplain_block(y, &ks, &kl, &key) || !key) return false;
    }
    y->t->v[x].n = n;
    y->t->v[x].next = y->t->n;
    return true;
}

/* The node starting at p (a non-space), inside a block of indent ind;
 * returns at the next content line (or the end). */
static bool yblock(struct yscan *y, int ind, int depth)
{
    bool more;
    const char *p = y->p;
    int col = ycol(y);
    if (*p == '-' && (p + 1 == y->e || p[1] == ' ' || p[1] == '\n')) return yseq(y, col, depth, &more);
    if (*p == '!') {
        if (!ytag(y)) return false;
        if (yeol(y)) { /* a collection on the next lines */
            if (!ynext_line(y) || ymarker(y) || ycol(y) <= ind) return false;
            if (!(*y->p == '-' && (y->p + 1 == y->e || y->p[1] == ' ' || y->p[1] == '\n')))
                return false;
            return yseq(y, ycol(y), depth, &more);
        }
        if (*y->p == '-' && (y->p + 1 == y->e || y->p[1] == ' ')) return false;
        return yinline(y, ind, depth, &more);
    }
    if (*p == '[' || *p == '\'' || *p == '"') return yinline(y, ind, depth, &more);
    const char *s;
    size_t len;
    bool key;
    if (!yplain_block(y, &s, &len, &key)) return false;
    if (key) return ymap(y, col, s, len, depth, &more);
    return yscalar_node(y, s, len) && yend_line(y, &more);
}

enum md_rc md_yaml_fast(struct md_tree *t, const char *p, size_t n)
{
    if (n > UINT32_MAX / 4 || !arena_for(t, n)) return MD_FALLBACK;
    /* no pass over the bytes first: each is classed by the scanner that passes it */
    struct yscan y = {p, p + n, p, t, MD_FALLBACK};
    /* the first content line */
    while (y.p < y.e && (*y.p == ' ' || *y.p == '\n')) {
        if (*y.p++ == '\n') y.line = y.p;
    }
    if (y.p >= y.e || ymarker(&y)) return MD_FALLBACK;
    /* the root: a block collection, optionally tagged */
    char c = *y.p;
    if (c == '[' || c == '\'' || c == '"') return MD_FALLBACK;
    if (!yblock(&y, -1, 0) || y.p < y.e) return MD_FALLBACK;
    return t->v[0].type == MD_STR ? MD_FALLBACK : MD_OK;
}

/* ---------------------------------------------------------------- converters */

/* Bare NaN, Infinity and -Infinity (pydantic's ser_json_inf_nan="constants")
 * are not JSON: outside strings they become null (absent values). */
char *md_json_constants_to_null(const char *p, size_t n, size_t *outlen)
{
    char *o = malloc(n + n / 2 + 8);
    if (!o) return NULL;
    size_t j = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (in_str) {
            o[j++] = c;
            if (c == '\\' && i + 1 < n) o[j++] = p[++i];
            else if (c == '"') in_str = false;
            continue;
        }
        if (c == '"') in_str = true;
        size_t skip = 0;
        if (c == 'N' && n - i >= 3 && !memcmp(p + i, "NaN", 3)) skip = 3;
        else if (c == 'I' && n - i >= 8 && !memcmp(p + i, "Infinity", 8)) skip = 8;
        else if (c == '-' && n - i >= 9 && !memcmp(p + i, "-Infinity", 9)) skip = 9;
        if (skip) {
            memcpy(o + j, "null", 4);
            j += 4;
            i += skip - 1;
            continue;
        }
        o[j++] = c;
    }
    *outlen = j;
    return o;
}


static enum md_rc from_json(struct md_tree *t, json_t *v, int depth)
{
    enum md_rc rc = MD_OK;
    uint32_t x;
    if (depth > MD_MAX_DEPTH) return MD_TOO_DEEP;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if ((x = push(t, MD_MAP, &rc)) == UINT32_MAX) return rc;
        const char *k;
        json_t *val;
        json_object_foreach(v, k, val) {
            uint32_t kx = push(t, MD_STR, &rc);
            if (kx == UINT32_MAX) return rc;
            t->v[kx].s = k;
            t->v[kx].len = (uint32_t)strlen(k);
            if ((rc = from_json(t, val, depth + 1)) != MD_OK) return rc;
            t->v[x].n += 2;
        }
        t->v[x].next = t->n;
        return MD_OK;
    }
    case JSON_ARRAY: {
        if ((x = push(t, MD_SEQ, &rc)) == UINT32_MAX) return rc;
        size_t i;
        json_t *val;
        json_array_foreach(v, i, val) {
            if ((rc = from_json(t, val, depth + 1)) != MD_OK) return rc;
            t->v[x].n++;
        }
        t->v[x].next = t->n;
        return MD_OK;
    }
    case JSON_STRING:
        if ((x = push(t, MD_STR, &rc)) == UINT32_MAX) return rc;
        t->v[x].s = json_string_value(v);
        t->v[x].len = (uint32_t)json_string_length(v);
        return MD_OK;
    case JSON_INTEGER:
    case JSON_REAL:
        if ((x = push(t, MD_NUM, &rc)) == UINT32_MAX) return rc;
        t->v[x].num = json_number_value(v);
        return MD_OK;
    case JSON_TRUE: return push(t, MD_TRUE, &rc) == UINT32_MAX ? rc : MD_OK;
    case JSON_FALSE: return push(t, MD_FALSE, &rc) == UINT32_MAX ? rc : MD_OK;
    default: return push(t, MD_NULL, &rc) == UINT32_MAX ? rc : MD_OK;
    }
}

enum md_rc md_from_jansson(struct md_tree *t, json_t *root)
{
    return from_json(t, root, 0);
}

/* Aliases are expanded (bounded by max_nodes and the depth). */
static enum md_rc from_yaml(struct md_tree *t, yaml_document_t *d, yaml_node_t *v, int depth)
{
    enum md_rc rc = MD_OK;
    uint32_t x;
    if (depth > MD_MAX_DEPTH) return MD_TOO_DEEP;
    switch (v->type) {
    case YAML_SEQUENCE_NODE:
        if ((x = push(t, MD_SEQ, &rc)) == UINT32_MAX) return rc;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++) {
            yaml_node_t *c = yaml_document_get_node(d, *it);
            if (!c) continue;
            if ((rc = from_yaml(t, d, c, depth + 1)) != MD_OK) return rc;
            t->v[x].n++;
        }
        t->v[x].next = t->n;
        return MD_OK;
    case YAML_MAPPING_NODE:
        if ((x = push(t, MD_MAP, &rc)) == UINT32_MAX) return rc;
        for (yaml_node_pair_t *pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top;
             pr++) {
            yaml_node_t *k = yaml_document_get_node(d, pr->key);
            yaml_node_t *val = yaml_document_get_node(d, pr->value);
            if (!k || !val) continue;
            if ((rc = from_yaml(t, d, k, depth + 1)) != MD_OK ||
                (rc = from_yaml(t, d, val, depth + 1)) != MD_OK)
                return rc;
            t->v[x].n += 2;
        }
        t->v[x].next = t->n;
        return MD_OK;
    case YAML_SCALAR_NODE:
        if ((x = push(t, MD_STR, &rc)) == UINT32_MAX) return rc;
        t->v[x].s = (const char *)v->data.scalar.value;
        t->v[x].len = (uint32_t)strlen(t->v[x].s);
        return MD_OK;
    default: return push(t, MD_NULL, &rc) == UINT32_MAX ? rc : MD_OK;
    }
}

enum md_rc md_from_libyaml(struct md_tree *t, yaml_document_t *d)
{
    yaml_node_t *root = yaml_document_get_root_node(d);
    return root ? from_yaml(t, d, root, 0) : MD_FALLBACK;
}

bool md_tree_same(const struct md_tree *a, const struct md_tree *b)
{
    if (a->n != b->n) return false;
    for (uint32_t i = 0; i < a->n; i++) {
        const struct md_node *x = &a->v[i], *y = &b->v[i];
        bool xnum = x->type == MD_INT || x->type == MD_REAL || x->type == MD_NUM;
        bool ynum = y->type == MD_INT || y->type == MD_REAL || y->type == MD_NUM;
        if (xnum || ynum) {
            double u = md_number(x), v = md_number(y);
            if (!xnum || !ynum || memcmp(&u, &v, sizeof u)) return false;
            continue;
        }
        if (x->type != y->type || x->next != y->next || x->n != y->n) return false;
        if (x->type == MD_STR && (x->len != y->len || memcmp(x->s, y->s, x->len))) return false;
    }
    return true;
}
