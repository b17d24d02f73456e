#include "numfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t tl_fmt_double(char *buf, size_t cap, double v)
{
    if (isnan(v)) return (size_t)snprintf(buf, cap, "nan");
    if (isinf(v)) return (size_t)snprintf(buf, cap, v < 0 ? "-inf" : "inf");
    if (v == 0) return (size_t)snprintf(buf, cap, signbit(v) ? "-0" : "0");
    /* Integers that a double holds exactly print without exponent. */
    if (v == floor(v) && fabs(v) < 1e17) return (size_t)snprintf(buf, cap, "%.0f", v);
    for (int prec = 1; prec <= 17; prec++) {
        int n = snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return (size_t)n;
    }
    return (size_t)snprintf(buf, cap, "%.17g", v);
}

bool tl_parse_i64(const char *p, const char *end, int64_t *out)
{
    bool neg = false;
    if (p < end && *p == '-') {
        neg = true;
        p++;
    }
    if (p >= end || end - p > 19) return false;
    uint64_t v = 0;
    for (; p < end; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9) return false;
        v = v * 10 + d;
    }
    if (v > (uint64_t)INT64_MAX) return false;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

bool tl_parse_double(const char *p, const char *end, double *out)
{
    size_t n = (size_t)(end - p);
    if (n == 0 || n > 64) return false;
    /* Fast path: plain integers, the most common value in rmsummary JSON. */
    int64_t iv;
    if (n <= 15 && tl_parse_i64(p, end, &iv)) {
        *out = (double)iv;
        return true;
    }
    char tmp[65];
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    if (!strcmp(tmp, "nan") || !strcmp(tmp, "-nan")) {
        *out = NAN;
        return true;
    }
    if (!strcmp(tmp, "inf")) {
        *out = INFINITY;
        return true;
    }
    if (!strcmp(tmp, "-inf")) {
        *out = -INFINITY;
        return true;
    }
    /* JSON grammar: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? -- strtod alone would
     * also take hex, "infinity" and leading spaces. */
    const char *s = tmp;
    if (*s == '-') s++;
    if (!(*s >= '0' && *s <= '9')) return false;
    if (*s == '0' && s[1] >= '0' && s[1] <= '9') return false;
    while (*s >= '0' && *s <= '9') s++;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9')) return false;
        while (*s >= '0' && *s <= '9') s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!(*s >= '0' && *s <= '9')) return false;
        while (*s >= '0' && *s <= '9') s++;
    }
    if (*s) return false;
    *out = strtod(tmp, NULL);
    return true;
}
