/* A record packed into bytes and back (record_pack.h). Layout: a fixed
 * head (kind, flags, tag count, string mask, attempt, exit code, task id,
 * times, line, presence mask), the present metrics' values in metric
 * order, then each string that is not NULL as its length (u32), its
 * bytes and a NUL. */
#include "core/record_pack.h"

#include <string.h>

enum { F_EXIT = 1, F_FINAL = 2, F_FILE_TIME = 4 };

/* The string fields, in packed order. */
#define STRING_FIELDS(X)                                                                           \
    X(source) X(workflow) X(category) X(host) X(worker) X(result) X(state) X(task_key) X(name)   \
        X(tag) X(depends)

struct head {
    uint8_t kind, flags, n_tags, pad;
    uint32_t strings; /* bit i: string field i is not NULL */
    uint32_t tags;    /* bit 2t: tag t's key is not NULL, bit 2t+1: its value */
    int32_t attempt, exit_code;
    int64_t task_id, time_ns, start_ns;
    uint64_t line;
    uint64_t present[TL_MASK_WORDS];
};

_Static_assert(2 * TL_MAX_EXTRA_TAGS <= 32, "a tag's two bits fit head.tags");

static void put_string(struct tl_buf *out, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    if (!tl_buf_room(out, sizeof n + n + 1)) return;
    memcpy(out->data + out->len, &n, sizeof n);
    memcpy(out->data + out->len + sizeof n, s, (size_t)n + 1);
    out->len += sizeof n + n + 1;
}

static const char *take_string(const char **p)
{
    uint32_t n;
    memcpy(&n, *p, sizeof n);
    const char *s = *p + sizeof n;
    *p = s + n + 1;
    return s;
}

static void put_values(struct tl_buf *out, const struct tl_record *r)
{
    for (int w = 0; w < TL_MASK_WORDS; w++)
        for (uint64_t bits = r->present[w]; bits; bits &= bits - 1) {
            int m = w * 64 + __builtin_ctzll(bits);
            if (!tl_buf_room(out, sizeof(double))) return;
            memcpy(out->data + out->len, &r->v[m], sizeof(double));
            out->len += sizeof(double);
        }
}

void tl_record_pack(struct tl_buf *out, const struct tl_record *r)
{
    struct head h = {.kind = (uint8_t)r->kind, .n_tags = (uint8_t)r->n_tags,
                     .attempt = r->attempt, .exit_code = r->exit_code, .task_id = r->task_id,
                     .time_ns = r->time_ns, .start_ns = r->start_ns, .line = r->line};
    h.flags = (uint8_t)((r->has_exit_code ? F_EXIT : 0) | (r->final ? F_FINAL : 0) |
                        (r->time_from_file ? F_FILE_TIME : 0));
    memcpy(h.present, r->present, sizeof h.present);
    unsigned i = 0;
#define MARK(f) h.strings |= (r->f ? 1u : 0u) << i++;
    STRING_FIELDS(MARK)
#undef MARK
    for (int t = 0; t < r->n_tags; t++)
        h.tags |= (r->tags[t].key ? 1u : 0u) << 2 * t | (r->tags[t].value ? 2u : 0u) << 2 * t;
    tl_buf_append(out, &h, sizeof h);
    put_values(out, r);
#define PUT(f) if (r->f) put_string(out, r->f);
    STRING_FIELDS(PUT)
#undef PUT
    for (int t = 0; t < r->n_tags; t++) {
        if (r->tags[t].key) put_string(out, r->tags[t].key);
        if (r->tags[t].value) put_string(out, r->tags[t].value);
    }
}

const char *tl_record_unpack(const char *p, struct tl_record *r)
{
    struct head h;
    memcpy(&h, p, sizeof h);
    p += sizeof h;
    r->kind = (enum tl_record_kind)h.kind;
    r->has_exit_code = h.flags & F_EXIT;
    r->final = h.flags & F_FINAL;
    r->time_from_file = h.flags & F_FILE_TIME;
    r->attempt = h.attempt;
    r->exit_code = h.exit_code;
    r->task_id = h.task_id;
    r->time_ns = h.time_ns;
    r->start_ns = h.start_ns;
    r->line = h.line;
    memcpy(r->present, h.present, sizeof r->present);
    memset(r->v, 0, sizeof r->v);
    for (int w = 0; w < TL_MASK_WORDS; w++)
        for (uint64_t bits = h.present[w]; bits; bits &= bits - 1) {
            memcpy(&r->v[w * 64 + __builtin_ctzll(bits)], p, sizeof(double));
            p += sizeof(double);
        }
    unsigned i = 0;
#define TAKE(f) r->f = h.strings >> i++ & 1u ? take_string(&p) : NULL;
    STRING_FIELDS(TAKE)
#undef TAKE
    r->n_tags = h.n_tags;
    for (int t = 0; t < r->n_tags; t++) {
        r->tags[t].key = h.tags >> 2 * t & 1u ? take_string(&p) : NULL;
        r->tags[t].value = h.tags >> 2 * t & 2u ? take_string(&p) : NULL;
    }
    return p;
}
