#include "core/buf.h"
#include "core/numfmt.h"
#include "core/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_buf_free(struct tl_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

bool tl_buf_reserve(struct tl_buf *b, size_t extra)
{
    if (b->oom) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void tl_buf_append(struct tl_buf *b, const void *p, size_t n)
{
    if (!n || !tl_buf_reserve(b, n)) return; /* n == 0: p may be NULL */
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void tl_buf_puts(struct tl_buf *b, const char *s)
{
    tl_buf_append(b, s, strlen(s));
}

void tl_buf_put_i64(struct tl_buf *b, int64_t v)
{
    if (!tl_buf_room(b, TL_FMT_WIDE)) return;
    b->len += tl_fmt_i64_wide(b->data + b->len, v);
}

void tl_buf_printf(struct tl_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        tl_buf_append(b, small, (size_t)n);
        return;
    }
    if (!tl_buf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void tl_buf_put_double(struct tl_buf *b, double v)
{
    char tmp[40];
    size_t n = tl_fmt_double(tmp, sizeof tmp, v);
    tl_buf_append(b, tmp, n);
}

void tl_buf_put_json_string(struct tl_buf *b, const char *s)
{
    tl_buf_putc(b, '"');
    const unsigned char *end = (const unsigned char *)s + strlen(s);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': tl_buf_puts(b, "\\\""); break;
        case '\\': tl_buf_puts(b, "\\\\"); break;
        case '\n': tl_buf_puts(b, "\\n"); break;
        case '\r': tl_buf_puts(b, "\\r"); break;
        case '\t': tl_buf_puts(b, "\\t"); break;
        default:
            if (*p < 0x20) {
                tl_buf_printf(b, "\\u%04x", *p);
            } else if (*p < 0x80) {
                tl_buf_putc(b, (char)*p);
            } else {
                /* names come from input: a byte that is not UTF-8 becomes
                 * U+FFFD, so the document stays valid JSON */
                int n = tl_utf8_len(p, (size_t)(end - p), NULL);
                if (n) {
                    tl_buf_append(b, p, (size_t)n);
                    p += n - 1;
                } else {
                    tl_buf_puts(b, TL_UTF8_REPLACEMENT);
                }
            }
        }
    }
    tl_buf_putc(b, '"');
}

const char *tl_buf_cstr(struct tl_buf *b)
{
    if (!tl_buf_reserve(b, 0)) return "";
    b->data[b->len] = '\0';
    return b->data;
}
