/* Names in configuration languages (quote.h). */
#include "core/quote.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/term.h"
#include "core/utf8.h"

bool tl_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    while (p < end) {
        int n = tl_utf8_len(p, (size_t)(end - p), NULL);
        if (!n) return false;
        p += n;
    }
    return true;
}

/* A YAML escape for cp, or NULL when it may stand as it is (YAML 1.1 and
 * 1.2: printable, and not a line break). */
static const char *yaml_escape(uint32_t cp, char tmp[12])
{
    switch (cp) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case 0x85: return "\\N";
    case 0x2028: return "\\L";
    case 0x2029: return "\\P";
    }
    if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f)) {
        snprintf(tmp, 12, "\\x%02x", (unsigned)cp);
        return tmp;
    }
    if (tl_term_active(cp)) { /* what a terminal acts on (the C1 range is above) */
        snprintf(tmp, 12, "\\u%04x", (unsigned)cp);
        return tmp;
    }
    return NULL;
}

bool tl_quote_yaml(struct tl_buf *b, const char *s)
{
    if (!tl_utf8_valid(s)) return false;
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    tl_buf_putc(b, '"');
    while (p < end) {
        uint32_t cp = 0;
        int n = tl_utf8_len(p, (size_t)(end - p), &cp);
        char tmp[12];
        const char *esc = yaml_escape(cp, tmp);
        if (esc) tl_buf_puts(b, esc);
        else tl_buf_append(b, p, (size_t)n);
        p += n;
    }
    tl_buf_putc(b, '"');
    return true;
}

bool tl_quote_groovy(struct tl_buf *b, const char *s)
{
    if (!tl_utf8_valid(s)) return false;
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    tl_buf_putc(b, '\'');
    while (p < end) {
        uint32_t cp = 0;
        int n = tl_utf8_len(p, (size_t)(end - p), &cp);
        p += n;
        if (cp == '\'' || cp == '\\') {
            tl_buf_putc(b, '\\');
            tl_buf_putc(b, (char)cp);
        } else if (cp >= 0x20 && cp < 0x7f) {
            tl_buf_putc(b, (char)cp);
        } else if (cp < 0x10000) {
            tl_buf_printf(b, "\\u%04x", (unsigned)cp);
        } else { /* a surrogate pair, as Java strings hold it */
            uint32_t v = cp - 0x10000;
            tl_buf_printf(b, "\\u%04x\\u%04x", 0xd800 + (unsigned)(v >> 10), 0xdc00 + (unsigned)(v & 0x3ff));
        }
    }
    tl_buf_putc(b, '\'');
    return true;
}

void tl_quote_comment(struct tl_buf *b, const char *s)
{
    tl_vis_append(b, s, strlen(s), TL_VIS_BACKSLASH);
}
