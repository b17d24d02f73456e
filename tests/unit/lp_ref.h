/* Line protocol's tag-value escaping, one byte at a time: the reference the
 * encoder's test and fuzz target hold it to. NULL when the value cannot be
 * written (a newline, or a trailing backslash); out needs 2 strlen(s) + 1. */
#ifndef TL_LP_REF_H
#define TL_LP_REF_H

#include <string.h>

static inline const char *lp_ref_escape(const char *s, char *out)
{
    char *o = out;
    size_t n = strlen(s);
    if (n && s[n - 1] == '\\') return NULL;
    for (; *s; s++) {
        if (*s == '\n' || *s == '\r') return NULL;
        if (*s == ',' || *s == ' ' || *s == '=') *o++ = '\\';
        *o++ = *s;
    }
    *o = '\0';
    return out;
}

#endif
