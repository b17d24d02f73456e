/* libFuzzer target for the writers a name leaves tasklens through
 * (core/term.h, core/quote.h) and the aggregator's group keys. The input is
 * a name (any bytes; a NUL ends it, as in every C string a parser hands on).
 * Aborts when:
 *   - tl_vis_append's text holds a C0 or C1 control, DEL, a bidi or line
 *     separator code point, or is not UTF-8, or tl_vis_needed disagrees
 *     with whether anything was escaped;
 *   - tl_vis cuts off the middle of an escape or a character;
 *   - tl_quote_yaml accepts a name that is not UTF-8, or writes a raw
 *     control, line break code point or unescaped quote inside the scalar;
 *   - tl_quote_groovy writes anything but printable ASCII, or a quote that
 *     ends the string early; tl_quote_comment writes a line break;
 *   - a group key of (name, name + "x") and (absent, name) does not read
 *     back the same values (a name forging another field). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/aggregate.h"
#include "core/buf.h"
#include "core/quote.h"
#include "core/term.h"
#include "core/utf8.h"

static bool forbidden(uint32_t cp)
{
    return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
           cp == 0x200f || cp == 0x61c || cp == 0xfeff;
}

/* Every code point of s[0..n) passes ok; false when not UTF-8. */
static bool all_code_points(const char *s, size_t n, bool (*bad)(uint32_t))
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        uint32_t cp = 0;
        int len = tl_utf8_len(p, (size_t)(end - p), &cp);
        if (!len || bad(cp)) return false;
        p += len;
    }
    return true;
}

static void terminal(const char *name, size_t n)
{
    struct tl_buf b = {0};
    tl_vis_append(&b, name, n, 0);
    if (b.oom) return;
    if (!all_code_points(b.data ? b.data : "", b.len, forbidden)) abort();
    bool changed = b.len != n || (n && memcmp(b.data, name, n));
    if (changed != tl_vis_needed(name, n, 0)) abort();
    char small[24];
    tl_vis(name, small, sizeof small);
    size_t sl = strlen(small);
    if (sl >= sizeof small || !all_code_points(small, sl, forbidden)) abort();
    /* a cut keeps a prefix of the whole text, then "..." */
    const char *whole = b.data ? b.data : "";
    if (sl > 3 && !strcmp(small + sl - 3, "...") && b.len > sl - 3 && memcmp(small, whole, sl - 3)) abort();
    if (!(sl > 3 && !strcmp(small + sl - 3, "...")) && (sl != b.len || memcmp(small, whole, sl))) abort();
    tl_buf_free(&b);
}

static bool yaml_raw_bad(uint32_t cp)
{
    return forbidden(cp) || cp == 0x85 || cp == 0xfffe || cp == 0xffff;
}

static void yaml(const char *name)
{
    struct tl_buf b = {0};
    bool ok = tl_quote_yaml(&b, name);
    if (ok != tl_utf8_valid(name)) abort();
    if (ok && !b.oom) {
        if (b.len < 2 || b.data[0] != '"' || b.data[b.len - 1] != '"') abort();
        if (!all_code_points(b.data, b.len, yaml_raw_bad)) abort();
        for (size_t i = 1; i + 1 < b.len; i++) { /* a quote inside is escaped */
            if (b.data[i] == '\\') i++;
            else if (b.data[i] == '"') abort();
        }
    }
    tl_buf_free(&b);
}

static void groovy(const char *name)
{
    struct tl_buf b = {0};
    bool ok = tl_quote_groovy(&b, name);
    if (ok && !b.oom) {
        if (b.len < 2 || b.data[0] != '\'' || b.data[b.len - 1] != '\'') abort();
        for (size_t i = 1; i + 1 < b.len; i++) {
            unsigned char c = (unsigned char)b.data[i];
            if (c < 0x20 || c >= 0x7f) abort();
            if (c == '\\') i++;
            else if (c == '\'') abort();
        }
    }
    tl_buf_free(&b);
    tl_quote_comment(&b, name);
    if (!b.oom && (memchr(b.data ? b.data : "", '\n', b.len) || memchr(b.data ? b.data : "", '\r', b.len)))
        abort();
    tl_buf_free(&b);
}

static void keys(const char *name)
{
    struct tl_agg_opts o;
    tl_agg_opts_default(&o);
    o.window_ns = 0;
    o.nby = 2;
    o.by[0] = "category";
    o.by[1] = "host";
    struct tl_agg *a = tl_agg_new(&o, NULL, NULL);
    if (!a) return;
    size_t n = strlen(name);
    char *second = malloc(n + 2);
    if (!second) {
        tl_agg_free(a);
        return;
    }
    memcpy(second, name, n);
    memcpy(second + n, "x", 2);
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.final = true;
    r.time_ns = 1;
    tl_record_set(&r, TL_M_WALL_TIME_S, 1);
    const char *cats[2] = {name, NULL}, *hosts[2] = {second, name};
    for (int i = 0; i < 2; i++) {
        r.category = cats[i];
        r.host = hosts[i];
        tl_agg_add(a, &r);
    }
    struct tl_buf part = {0};
    if (tl_agg_ngroups(a) != 2) abort();
    for (size_t i = 0; i < 2; i++) {
        const char *key = tl_agg_group(a, i)->key;
        const char *c = tl_agg_key_part(key, 0, &part);
        if (cats[i] ? !c || strcmp(c, cats[i]) : c != NULL) abort();
        const char *h = tl_agg_key_part(key, 1, &part);
        if (!h || strcmp(h, hosts[i])) abort();
    }
    tl_buf_free(&part);
    free(second);
    tl_agg_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 1);
    if (!name) return 0;
    memcpy(name, data, size);
    name[size] = '\0';
    size_t n = strlen(name);
    terminal(name, n);
    yaml(name);
    groovy(name);
    keys(name);
    free(name);
    return 0;
}
