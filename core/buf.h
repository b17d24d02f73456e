/* A growable byte buffer. The one allocation belongs to the struct; free it
 * with tl_buf_free. Appends that fail to grow set `oom` and become no-ops, so
 * a formatter can write many pieces and check once at the end. */
#ifndef TL_BUF_H
#define TL_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tl_buf {
    char *data;
    size_t len;
    size_t cap;
    bool oom;
};

void tl_buf_free(struct tl_buf *b);
bool tl_buf_reserve(struct tl_buf *b, size_t extra);
void tl_buf_append(struct tl_buf *b, const void *p, size_t n);
void tl_buf_puts(struct tl_buf *b, const char *s);
/* tl_buf_reserve with the common case inline. */
static inline bool tl_buf_room(struct tl_buf *b, size_t extra)
{
    return (!b->oom && b->len + extra + 1 <= b->cap) || tl_buf_reserve(b, extra);
}
static inline void tl_buf_putc(struct tl_buf *b, char c)
{
    if (b->len + 2 > b->cap && !tl_buf_reserve(b, 1)) return;
    b->data[b->len++] = c;
}
/* Appends a decimal integer. */
void tl_buf_put_i64(struct tl_buf *b, int64_t v);
void tl_buf_printf(struct tl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends the shortest decimal that round-trips (see numfmt.h). */
void tl_buf_put_double(struct tl_buf *b, double v);
/* Appends s as a JSON string literal, with quotes. */
void tl_buf_put_json_string(struct tl_buf *b, const char *s);
/* NUL-terminates without counting the terminator in len. */
const char *tl_buf_cstr(struct tl_buf *b);

#endif
