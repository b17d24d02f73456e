/* Names on a terminal. A name is bytes someone else wrote; printed as they
 * are, an ESC sequence in a category or a file name moves the cursor, clears
 * the screen, sets the clipboard (OSC 52) or opens a link (OSC 8), and a
 * bidirectional override shows the line in another order than its bytes.
 * Everything a terminal would act on is shown instead as a visible escape,
 * as less and git do:
 *
 *   C0 controls and DEL   \n \r \t, else \x1b
 *   C1 controls, bidi controls, line and paragraph separators, BOM,
 *   U+FFFE/U+FFFF         \u0085 \u202e \u2028 ...
 *   a byte that is not UTF-8   \xff
 *
 * Everything else, UTF-8 letters included, is kept. Every message tasklens
 * writes to stderr goes through tl_eprintf, and every name in a table,
 * `top`'s screen and `check` through tl_vis. */
#ifndef TL_TERM_H
#define TL_TERM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/buf.h"

enum {
    /* a backslash is written \\ as well, so the escapes read back
     * unambiguously (and a \u in a comment cannot become a Java/Groovy
     * unicode escape) */
    TL_VIS_BACKSLASH = 1,
};

/* Whether a terminal or a bidi algorithm acts on code point cp (C1
 * controls, bidi marks and overrides, line and paragraph separators, BOM,
 * U+FFFE/U+FFFF): shown escaped here, escaped in YAML too (quote.c). */
bool tl_term_active(uint32_t cp);

/* Appends s[0..n) with visible escapes. */
void tl_vis_append(struct tl_buf *b, const char *s, size_t n, unsigned flags);
/* Whether s[0..n) holds anything tl_vis_append would escape. */
bool tl_vis_needed(const char *s, size_t n, unsigned flags);
/* s with visible escapes in out (cap >= 8), cut on a whole escape or
 * character with "..." when it does not fit; returns out. */
const char *tl_vis(const char *s, char *out, size_t cap);

/* A message on stderr, every control character in it shown as a visible
 * escape but one newline at its end. A message of several lines is several
 * calls. */
void tl_eprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One line on f: prefix as it is, then the message with every control
 * character (a newline too) shown as a visible escape, then a newline. */
void tl_vprintln(FILE *f, const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
