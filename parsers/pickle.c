/* The restricted pickle reader (pickle.h): the data opcodes of Python's
 * pickle machine (Lib/pickletools.py documents each), over one buffer. */
#include "parsers/pickle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PK_MAX_DEPTH 100000 /* stack and marks: far above any real file */

struct machine {
    struct tl_pickle *p;
    const unsigned char *at, *end;
    uint32_t *stack, nstack;
    uint32_t *marks, nmarks;
    uint32_t *memo, nmemo;
    size_t cap; /* of stack, marks and memo: the input's length bounds all three */
};

static bool fail(struct machine *m, const char *why)
{
    if (!m->p->error[0]) snprintf(m->p->error, sizeof m->p->error, "%s at byte %zu", why,
                                  (size_t)(m->at - (const unsigned char *)m->p->data));
    return false;
}

/* Grows an array of p's within p's memory budget: the arrays a pickle
 * makes count against it, so a small file that decodes to millions of
 * values is refused, not given gigabytes (2.8 KB of .lprof.zst once took
 * 1.2 GB). */
static bool grow(struct tl_pickle *p, void **a, uint32_t *cap, uint32_t need, size_t size)
{
    if (need <= *cap) return true;
    uint32_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    size_t more = ((size_t)c - *cap) * size;
    if (p->used + more > p->max_bytes) {
        p->over_budget = true;
        return false;
    }
    void *n = realloc(*a, (size_t)c * size);
    if (!n) return false;
    p->used += more;
    *a = n;
    *cap = c;
    return true;
}

static uint32_t new_value(struct machine *m, uint8_t type)
{
    struct tl_pickle *p = m->p;
    if (!grow(p, (void **)&p->v, &p->capv, p->nv + 1, sizeof *p->v)) return 0;
    memset(&p->v[p->nv], 0, sizeof *p->v);
    p->v[p->nv].type = type;
    return p->nv++;
}

static bool push(struct machine *m, uint32_t id)
{
    if (!id) return fail(m, m->p->over_budget ? "more values than max_document allows" : "out of memory");
    if (m->nstack >= m->cap) return fail(m, "stack too deep");
    m->stack[m->nstack++] = id;
    return true;
}

static bool take(struct machine *m, size_t n, const unsigned char **out)
{
    if ((size_t)(m->end - m->at) < n) return fail(m, "input ends inside an opcode");
    *out = m->at;
    m->at += n;
    return true;
}

static uint64_t le(const unsigned char *b, int n)
{
    uint64_t x = 0;
    for (int i = n - 1; i >= 0; i--) x = x << 8 | b[i];
    return x;
}

/* Appends stack[from..nstack) to container c as one chunk, and pops them. */
static bool append_items(struct machine *m, uint32_t c, uint32_t from)
{
    struct tl_pickle *p = m->p;
    uint32_t n = m->nstack - from;
    if (!n) return true;
    if (!grow(p, (void **)&p->cells, &p->capcells, p->ncells + n, sizeof *p->cells) ||
        !grow(p, (void **)&p->chunks, &p->capchunks, p->nchunks + 1, sizeof *p->chunks))
        return fail(m, "out of memory");
    uint32_t k = p->nchunks++;
    p->chunks[k].first = p->ncells;
    p->chunks[k].n = n;
    p->chunks[k].next = 0;
    memcpy(p->cells + p->ncells, m->stack + from, n * sizeof *m->stack);
    p->ncells += n;
    struct tl_pk_value *v = &p->v[c];
    if (v->tail) p->chunks[v->tail - 1].next = k + 1;
    else v->head = k + 1;
    v->tail = k + 1;
    v->n += n;
    m->nstack = from;
    return true;
}

static bool pop_mark(struct machine *m, uint32_t *from)
{
    if (!m->nmarks) return fail(m, "no mark");
    *from = m->marks[--m->nmarks];
    return *from <= m->nstack || fail(m, "mark above the stack");
}

static bool container_from(struct machine *m, uint8_t type, uint32_t from)
{
    uint32_t c = new_value(m, type);
    if (!c) return fail(m, "out of memory");
    if (type == TL_PK_DICT && (m->nstack - from) % 2) return fail(m, "odd dict items");
    return append_items(m, c, from) && push(m, c);
}

static bool add_to(struct machine *m, uint32_t from, uint8_t type)
{
    if (from == 0 || from > m->nstack) return fail(m, "nothing to add to");
    uint32_t c = m->stack[from - 1];
    if (m->p->v[c].type != type) return fail(m, type == TL_PK_LIST ? "append to a non-list" : "setitem on a non-dict");
    if (type == TL_PK_DICT && (m->nstack - from) % 2) return fail(m, "odd dict items");
    return append_items(m, c, from);
}

static bool string_value(struct machine *m, size_t n)
{
    const unsigned char *s;
    if (!take(m, n, &s)) return false;
    if (n > UINT32_MAX) return fail(m, "string too long");
    uint32_t id = new_value(m, TL_PK_STR);
    if (id) {
        m->p->v[id].off = (uint32_t)(s - (const unsigned char *)m->p->data);
        m->p->v[id].len = (uint32_t)n;
    }
    return push(m, id);
}

static bool global_value(struct machine *m, const char *mod, size_t ml, const char *name, size_t nl)
{
    struct tl_pickle *p = m->p;
    uint32_t need = p->nnames + (uint32_t)(ml + nl + 2);
    if (ml + nl > 4096 || !grow(p, (void **)&p->names, &p->capnames, need, 1)) return fail(m, "bad class name");
    uint32_t off = p->nnames;
    memcpy(p->names + off, mod, ml);
    p->names[off + ml] = '.';
    memcpy(p->names + off + ml + 1, name, nl);
    p->names[off + ml + 1 + nl] = '\0';
    p->nnames = need;
    uint32_t id = new_value(m, TL_PK_GLOBAL);
    if (id) p->v[id].off = off;
    return push(m, id);
}

static bool pop(struct machine *m, uint32_t *id)
{
    if (m->nstack == 0 || (m->nmarks && m->marks[m->nmarks - 1] == m->nstack))
        return fail(m, "stack empty");
    *id = m->stack[--m->nstack];
    return true;
}

static bool number(struct machine *m, int64_t i)
{
    uint32_t id = new_value(m, TL_PK_INT);
    if (id) m->p->v[id].i = i;
    return push(m, id);
}

static bool long_value(struct machine *m, size_t n)
{
    const unsigned char *b;
    if (!take(m, n, &b)) return false;
    if (n > 8) return fail(m, "integer past 64 bits");
    uint64_t x = n ? le(b, (int)n) : 0;
    if (n && n < 8 && (b[n - 1] & 0x80)) x |= ~UINT64_C(0) << (8 * n); /* sign-extend */
    return number(m, (int64_t)x);
}

/* STACK_GLOBAL, NEWOBJ, REDUCE, BUILD: names and opaque objects. */
static bool object_op(struct machine *m, unsigned char op)
{
    uint32_t a, b;
    if (op == 0x93) { /* STACK_GLOBAL: module, name */
        if (!pop(m, &b) || !pop(m, &a)) return false;
        const struct tl_pk_value *mod = &m->p->v[a], *name = &m->p->v[b];
        if (mod->type != TL_PK_STR || name->type != TL_PK_STR) return fail(m, "class name not a string");
        return global_value(m, m->p->data + mod->off, mod->len, m->p->data + name->off, name->len);
    }
    if (op == 'b') { /* BUILD: state onto the object under it */
        if (!pop(m, &b) || !m->nstack) return fail(m, "BUILD without an object");
        uint32_t o = m->stack[m->nstack - 1];
        if (m->p->v[o].type != TL_PK_OBJECT) return fail(m, "BUILD on a non-object");
        m->p->v[o].state = b;
        return true;
    }
    /* NEWOBJ (cls, args), REDUCE (callable, args): an object of that class */
    if (!pop(m, &b) || !pop(m, &a)) return false;
    if (m->p->v[a].type != TL_PK_GLOBAL) return fail(m, "object of no class");
    uint32_t o = new_value(m, TL_PK_OBJECT);
    if (o) m->p->v[o].cls = a;
    return push(m, o);
}

static bool simple(struct machine *m, uint8_t type, int64_t i)
{
    uint32_t id = new_value(m, type);
    if (id) m->p->v[id].i = i;
    return push(m, id);
}

static bool memo_put(struct machine *m, uint64_t k)
{
    if (!m->nstack) return fail(m, "memo of nothing");
    if (k >= m->cap) return fail(m, "memo index too large");
    while (m->nmemo <= k) m->memo[m->nmemo++] = 0;
    m->memo[k] = m->stack[m->nstack - 1];
    return true;
}

static bool memo_get(struct machine *m, uint64_t k)
{
    if (k >= m->nmemo || !m->memo[k]) return fail(m, "memo index not set");
    return push(m, m->memo[k]);
}

static bool tuple_n(struct machine *m, uint32_t n)
{
    if (m->nstack < n || (m->nmarks && m->marks[m->nmarks - 1] > m->nstack - n)) return fail(m, "stack empty");
    return container_from(m, TL_PK_TUPLE, m->nstack - n);
}

static bool step(struct machine *m, unsigned char op)
{
    const unsigned char *b;
    uint32_t from;
    switch (op) {
    case 0x80: return take(m, 1, &b);                                  /* PROTO */
    case 0x95: return take(m, 8, &b);                                  /* FRAME */
    case 0x8c: return take(m, 1, &b) && string_value(m, b[0]);         /* SHORT_BINUNICODE */
    case 'U': return take(m, 1, &b) && string_value(m, b[0]);          /* SHORT_BINSTRING */
    case 'X': case 'T': return take(m, 4, &b) && string_value(m, le(b, 4)); /* BINUNICODE, BINSTRING */
    case 0x8d: return take(m, 8, &b) && string_value(m, le(b, 8));     /* BINUNICODE8 */
    case 0x94: return memo_put(m, m->nmemo);                           /* MEMOIZE */
    case 'q': return take(m, 1, &b) && memo_put(m, b[0]);              /* BINPUT */
    case 'r': return take(m, 4, &b) && memo_put(m, le(b, 4));          /* LONG_BINPUT */
    case 'h': return take(m, 1, &b) && memo_get(m, b[0]);              /* BINGET */
    case 'j': return take(m, 4, &b) && memo_get(m, le(b, 4));          /* LONG_BINGET */
    case 'K': return take(m, 1, &b) && number(m, b[0]);                /* BININT1 */
    case 'M': return take(m, 2, &b) && number(m, (int64_t)le(b, 2));   /* BININT2 */
    case 'J': return take(m, 4, &b) && number(m, (int32_t)(uint32_t)le(b, 4)); /* BININT */
    case 0x8a: return take(m, 1, &b) && long_value(m, b[0]);           /* LONG1 */
    case 0x8b: return take(m, 4, &b) && long_value(m, le(b, 4));       /* LONG4 */
    case 'G': {                                                        /* BINFLOAT, big-endian */
        if (!take(m, 8, &b)) return false;
        uint64_t x = 0;
        for (int i = 0; i < 8; i++) x = x << 8 | b[i];
        uint32_t id = new_value(m, TL_PK_FLOAT);
        if (id) memcpy(&m->p->v[id].f, &x, sizeof x);
        return push(m, id);
    }
    case 'N': return simple(m, TL_PK_NONE, 0);
    case 0x88: return simple(m, TL_PK_BOOL, 1);
    case 0x89: return simple(m, TL_PK_BOOL, 0);
    case ')': return tuple_n(m, 0);
    case 0x85: return tuple_n(m, 1);
    case 0x86: return tuple_n(m, 2);
    case 0x87: return tuple_n(m, 3);
    case ']': return simple(m, TL_PK_LIST, 0);
    case '}': return simple(m, TL_PK_DICT, 0);
    case '(':                                                          /* MARK */
        if (m->nmarks >= m->cap) return fail(m, "too many marks");
        m->marks[m->nmarks++] = m->nstack;
        return true;
    case 't': return pop_mark(m, &from) && container_from(m, TL_PK_TUPLE, from);
    case 'l': return pop_mark(m, &from) && container_from(m, TL_PK_LIST, from);
    case 'd': return pop_mark(m, &from) && container_from(m, TL_PK_DICT, from);
    case 'e': return pop_mark(m, &from) && add_to(m, from, TL_PK_LIST);  /* APPENDS */
    case 'u': return pop_mark(m, &from) && add_to(m, from, TL_PK_DICT);  /* SETITEMS */
    case 'a': return m->nstack >= 2 && add_to(m, m->nstack - 1, TL_PK_LIST); /* APPEND */
    case 's': return m->nstack >= 3 && add_to(m, m->nstack - 2, TL_PK_DICT); /* SETITEM */
    case '0': return pop(m, &from);                                    /* POP */
    case '1': return pop_mark(m, &from) && ((m->nstack = from), true); /* POP_MARK */
    case '2': return m->nstack && push(m, m->stack[m->nstack - 1]);    /* DUP */
    case 0x93: case 0x81: case 'R': case 'b': return object_op(m, op);
    case 'c': {                                                        /* GLOBAL "mod\nname\n" */
        const char *s = (const char *)m->at, *e = (const char *)m->end;
        const char *n1 = memchr(s, '\n', (size_t)(e - s));
        const char *n2 = n1 ? memchr(n1 + 1, '\n', (size_t)(e - n1 - 1)) : NULL;
        if (!n2) return fail(m, "GLOBAL without its names");
        m->at = (const unsigned char *)n2 + 1;
        return global_value(m, s, (size_t)(n1 - s), n1 + 1, (size_t)(n2 - n1 - 1));
    }
    default: {
        char why[48];
        snprintf(why, sizeof why, "opcode 0x%02x not read", op);
        return fail(m, why);
    }
    }
}

bool tl_pickle_read(struct tl_pickle *p, const char *data, size_t len, size_t max_bytes)
{
    memset(p, 0, sizeof *p);
    p->data = data;
    p->len = len;
    p->max_bytes = max_bytes;
    struct machine m = {.p = p, .at = (const unsigned char *)data,
                        .end = (const unsigned char *)data + len};
    m.cap = len + 1 < PK_MAX_DEPTH ? len + 1 : PK_MAX_DEPTH;
    p->used = m.cap * (sizeof *m.stack + sizeof *m.marks + sizeof *m.memo);
    bool fits = p->used <= max_bytes;
    m.stack = fits ? malloc(m.cap * sizeof *m.stack) : NULL;
    m.marks = fits ? malloc(m.cap * sizeof *m.marks) : NULL;
    m.memo = fits ? malloc(m.cap * sizeof *m.memo) : NULL;
    bool ok = m.stack && m.marks && m.memo;
    if (ok) new_value(&m, TL_PK_NONE); /* id 0: "none" in every reference */
    ok = ok && p->nv == 1;
    if (!ok) fail(&m, "out of memory");
    while (ok) {
        if (m.at >= m.end) {
            ok = fail(&m, "input ends before STOP");
            break;
        }
        unsigned char op = *m.at++;
        if (op == '.') { /* STOP */
            ok = m.nstack >= 1 || fail(&m, "STOP on an empty stack");
            if (ok) p->root = m.stack[m.nstack - 1];
            break;
        }
        ok = step(&m, op);
    }
    free(m.stack);
    free(m.marks);
    free(m.memo);
    return ok;
}

void tl_pickle_free(struct tl_pickle *p)
{
    free(p->v);
    free(p->cells);
    free(p->chunks);
    free(p->names);
    memset(p, 0, sizeof *p);
}

uint32_t tl_pickle_next(const struct tl_pickle *p, const struct tl_pk_value *c, uint32_t *chunk,
                        uint32_t *i)
{
    if (*chunk == UINT32_MAX) return 0;
    if (!*chunk) *chunk = c->head, *i = 0;
    while (*chunk) {
        if (*i < p->chunks[*chunk - 1].n) return p->cells[p->chunks[*chunk - 1].first + (*i)++];
        *chunk = p->chunks[*chunk - 1].next;
        *i = 0;
        if (!*chunk) break;
    }
    *chunk = UINT32_MAX; /* done: stays done */
    return 0;
}

uint32_t tl_pickle_item(const struct tl_pickle *p, uint32_t tuple, uint32_t k)
{
    const struct tl_pk_value *t = &p->v[tuple];
    if (t->type != TL_PK_TUPLE || k >= t->n || !t->head) return 0;
    return p->cells[p->chunks[t->head - 1].first + k]; /* a tuple is one chunk */
}

uint32_t tl_pickle_get(const struct tl_pickle *p, uint32_t dict, const char *key)
{
    const struct tl_pk_value *d = &p->v[dict];
    if (d->type != TL_PK_DICT) return 0;
    size_t kl = strlen(key);
    uint32_t chunk = 0, i = 0, k;
    while ((k = tl_pickle_next(p, d, &chunk, &i))) {
        uint32_t v = tl_pickle_next(p, d, &chunk, &i);
        const struct tl_pk_value *kv = &p->v[k];
        if (kv->type == TL_PK_STR && kv->len == kl && !memcmp(p->data + kv->off, key, kl)) return v;
    }
    return 0;
}

bool tl_pickle_number(const struct tl_pickle *p, uint32_t id, double *out)
{
    const struct tl_pk_value *v = &p->v[id];
    if (v->type == TL_PK_INT) *out = (double)v->i;
    else if (v->type == TL_PK_FLOAT) *out = v->f;
    else return false;
    return true;
}
