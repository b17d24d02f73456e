/* Names on a terminal: visible escapes (term.h). */
#include "core/term.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/utf8.h"

/* Code points a terminal or a bidi algorithm acts on: C1 controls, the
 * Arabic letter mark, LRM/RLM, the bidi embeddings, overrides and isolates,
 * the line and paragraph separators, the BOM, and the two noncharacters
 * YAML readers refuse in a file. */
bool tl_term_active(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff ||
           cp == 0xfffe || cp == 0xffff;
}

/* The escape for the byte or sequence at p, written to out (>= 8 bytes);
 * its length, 0 when it is shown as it is. *used is the bytes it covers. */
static size_t escape_at(const unsigned char *p, size_t n, unsigned flags, char out[8], size_t *used)
{
    static const char hex[] = "0123456789abcdef";
    *used = 1;
    unsigned c = p[0];
    if (c == '\\' && (flags & TL_VIS_BACKSLASH)) return (size_t)snprintf(out, 8, "\\\\");
    if (c < 0x20 || c == 0x7f) {
        if (c == '\n') return (size_t)snprintf(out, 8, "\\n");
        if (c == '\r') return (size_t)snprintf(out, 8, "\\r");
        if (c == '\t') return (size_t)snprintf(out, 8, "\\t");
        return (size_t)snprintf(out, 8, "\\x%c%c", hex[c >> 4], hex[c & 15]);
    }
    if (c < 0x80) return 0;
    uint32_t cp;
    int len = tl_utf8_len(p, n, &cp);
    if (!len) return (size_t)snprintf(out, 8, "\\x%c%c", hex[c >> 4], hex[c & 15]);
    *used = (size_t)len;
    if (tl_term_active(cp)) return (size_t)snprintf(out, 8, "\\u%04x", (unsigned)cp);
    return 0;
}

void tl_vis_append(struct tl_buf *b, const char *s, size_t n, unsigned flags)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        const unsigned char *run = p;
        char esc[8];
        size_t used = 0, elen = 0;
        while (p < end && (*p >= 0x20 && *p < 0x7f && !(*p == '\\' && (flags & TL_VIS_BACKSLASH))))
            p++; /* the common case: printable ASCII, copied in one piece */
        while (p < end && !(elen = escape_at(p, (size_t)(end - p), flags, esc, &used))) p += used;
        tl_buf_append(b, run, (size_t)(p - run));
        if (p < end) {
            tl_buf_append(b, esc, elen);
            p += used;
        }
    }
}

bool tl_vis_needed(const char *s, size_t n, unsigned flags)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        char esc[8];
        size_t used;
        if (escape_at(p, (size_t)(end - p), flags, esc, &used)) return true;
        p += used;
    }
    return false;
}

const char *tl_vis(const char *s, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    size_t o = 0, keep = 0; /* keep: the length that still leaves room for "..." */
    while (p < end) {
        char esc[8];
        size_t used, elen = escape_at(p, (size_t)(end - p), 0, esc, &used);
        size_t plen = elen ? elen : used;
        if (o + plen + 1 > cap) { /* does not fit: cut on a whole piece */
            o = keep;
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(out + o, elen ? esc : (const char *)p, plen);
        o += plen;
        if (o + 4 <= cap) keep = o;
        p += used;
    }
    out[o] = '\0';
    return out;
}

/* text[0..len) on f with visible escapes, keeping one final newline when
 * keep_newline; prefix before it as it is. */
static void write_visible(FILE *f, const char *prefix, const char *text, size_t len, bool keep_newline)
{
    struct tl_buf out = {0};
    bool newline = keep_newline && len && text[len - 1] == '\n';
    tl_buf_puts(&out, prefix);
    tl_vis_append(&out, text, len - newline, 0);
    if (newline) tl_buf_putc(&out, '\n');
    if (!out.oom) fwrite(out.data, 1, out.len, f);
    else fputs("tasklens: (a message lost: out of memory)\n", f);
    tl_buf_free(&out);
}

/* vprintf into *msg (small, else allocated); the text and its length. */
static const char *format(char *small, size_t cap, struct tl_buf *msg, size_t *len, const char *fmt,
                          va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, cap, fmt, ap);
    const char *text = small;
    if (n < 0) n = 0;
    if ((size_t)n >= cap) {
        if (tl_buf_reserve(msg, (size_t)n)) {
            vsnprintf(msg->data, (size_t)n + 1, fmt, again);
            text = msg->data;
        } else n = (int)cap - 1; /* out of memory: the part that fit */
    }
    va_end(again);
    *len = (size_t)n;
    return text;
}

void tl_eprintf(const char *fmt, ...)
{
    char small[1024];
    struct tl_buf msg = {0};
    size_t len;
    va_list ap;
    va_start(ap, fmt);
    const char *text = format(small, sizeof small, &msg, &len, fmt, ap);
    va_end(ap);
    write_visible(stderr, "", text, len, true);
    tl_buf_free(&msg);
}

void tl_vprintln(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
    char small[1024];
    struct tl_buf msg = {0};
    size_t len;
    const char *text = format(small, sizeof small, &msg, &len, fmt, ap);
    write_visible(f, prefix, text, len, false);
    fputc('\n', f);
    tl_buf_free(&msg);
}
