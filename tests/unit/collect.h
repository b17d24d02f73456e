/* Collects every record a parser emits, deep-copied, for tests. */
#ifndef TL_COLLECT_H
#define TL_COLLECT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/parser.h"

struct collected {
    struct tl_record *recs;
    size_t n, cap;
    uint64_t reject_lines[64];
    int reject_why[64];
    size_t nrejects;
};

static inline const char *collect_dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static inline void collect_record(void *ctx, const struct tl_record *r)
{
    struct collected *c = ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->recs = realloc(c->recs, c->cap * sizeof *c->recs);
    }
    struct tl_record *d = &c->recs[c->n++];
    *d = *r;
    d->workflow = collect_dup(r->workflow);
    d->category = collect_dup(r->category);
    d->host = collect_dup(r->host);
    d->worker = collect_dup(r->worker);
    d->result = collect_dup(r->result);
    d->state = collect_dup(r->state);
    d->task_key = collect_dup(r->task_key);
}

static inline void collect_reject(void *ctx, uint64_t line, enum tl_reject why, const char *d)
{
    struct collected *c = ctx;
    (void)d;
    if (c->nrejects < 64) {
        c->reject_lines[c->nrejects] = line;
        c->reject_why[c->nrejects] = (int)why;
    }
    c->nrejects++;
}

static inline void collected_free(struct collected *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct tl_record *r = &c->recs[i];
        free((void *)r->workflow);
        free((void *)r->category);
        free((void *)r->host);
        free((void *)r->worker);
        free((void *)r->result);
        free((void *)r->state);
        free((void *)r->task_key);
    }
    free(c->recs);
    memset(c, 0, sizeof *c);
}

/* Runs parser p over buf, fed in pieces of `step` bytes (0 = all at once),
 * asking for the record kinds in `kinds` (struct tl_emit; 0 = all). */
static inline const struct tl_parse_stats *
parse_buffer_kinds(const struct tl_parser *p, const char *buf, size_t len, size_t step,
                   uint32_t kinds, struct collected *c, struct tl_parser_inst *inst)
{
    tl_parser_inst_init(inst, p);
    struct tl_emit emit = {collect_record, collect_reject, c, kinds};
    tl_parser_inst_open(inst, &emit, NULL, 0);
    if (!step) step = len ? len : 1;
    for (size_t off = 0; off < len; off += step)
        p->feed(inst->state, buf + off, len - off < step ? len - off : step);
    p->finish(inst->state);
    return p->stats(inst->state);
}

static inline const struct tl_parse_stats *parse_buffer(const struct tl_parser *p, const char *buf,
                                                        size_t len, size_t step,
                                                        struct collected *c,
                                                        struct tl_parser_inst *inst)
{
    return parse_buffer_kinds(p, buf, len, step, 0, c, inst);
}

/* Reads a whole file (as stored, not decompressed); NULL if it cannot be read. */
static inline char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = '\0';
    *len = (size_t)n;
    return b;
}

#endif
