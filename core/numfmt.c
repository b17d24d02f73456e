#include "numfmt.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |m| with `decimals` digits after the point ("0.00123" style), sign first. */
static size_t put_fixed(char *buf, int64_t m, int decimals)
{
    char digits[24];
    int n = 0;
    bool neg = m < 0;
    uint64_t u = neg ? (uint64_t)(-m) : (uint64_t)m;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n <= decimals) digits[n++] = '0'; /* at least one digit before the point */
    char *p = buf;
    if (neg) *p++ = '-';
    for (int i = n - 1; i >= 0; i--) {
        *p++ = digits[i];
        if (i == decimals && decimals) *p++ = '.';
    }
    *p = '\0';
    return (size_t)(p - buf);
}

size_t tl_fmt_double(char *buf, size_t cap, double v)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                                 1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};
    if (isnan(v)) return (size_t)snprintf(buf, cap, "nan");
    if (isinf(v)) return (size_t)snprintf(buf, cap, v < 0 ? "-inf" : "inf");
    if (v == 0) return (size_t)snprintf(buf, cap, signbit(v) ? "-0" : "0");
    double a = fabs(v);
    /* Integers that a double holds exactly print without exponent. */
    if (v == floor(v) && a < 1e17) {
        if (a < 9.2e18) return put_fixed(buf, (int64_t)v, 0);
        return (size_t)snprintf(buf, cap, "%.0f", v);
    }
    /* Fixed notation (where %g would use it too): the fewest decimals k such
     * that round(v 10^k) / 10^k reads back as v. Both operands of that
     * division are exact doubles, so its result is the correctly rounded
     * value of the decimal -- equal to v exactly when the decimal round-trips.
     * The first such k gives the shortest digits. */
    if (a >= 1e-4 && a < 1e15 && cap >= 32) {
        for (int k = 1; k <= 17; k++) {
            double m = v * p10[k];
            if (fabs(m) >= 9007199254740992.0) break;
            int64_t mi = (int64_t)(m < 0 ? m - 0.5 : m + 0.5);
            if ((double)mi / p10[k] == v) return put_fixed(buf, mi, k);
        }
    }
    /* If some representation of <= 15 digits reads back as v, then v is
     * within half a double ulp of it -- far inside half a unit of the 15th
     * digit -- so %.15g prints exactly those digits, and %g strips the zeros
     * that pad it: the shortest. Otherwise 16 or 17 digits are needed.
     * (The old loop over every precision cost up to 17 printf + strtod.)
     * Subnormals carry fewer than 53 bits, so that argument does not hold
     * for them: every precision is tried (they are rare). */
    for (int prec = a < DBL_MIN ? 1 : 15; prec <= 17; prec++) {
        int n = snprintf(buf, cap, "%.*g", prec, v);
        double back;
        if (prec == 17 || (tl_parse_double(buf, buf + n, &back) && back == v)) return (size_t)n;
    }
    return 0; /* not reached */
}

/* Eight ASCII digits at once (SWAR); false if any byte is not a digit. */
static inline bool parse8(const char *p, uint64_t *out)
{
    uint64_t v;
    memcpy(&v, p, 8);
    /* every byte in '0'..'9': high nibble 3, and adding 6 keeps it 3 */
    if (((v & 0xF0F0F0F0F0F0F0F0ULL) | ((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL)) !=
        0x3030303030303030ULL)
        return false;
    v -= 0x3030303030303030ULL; /* little-endian: first digit in the low byte */
    v = (v * 10) + (v >> 8);
    v = (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
         (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
        32;
    *out = v;
    return true;
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
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Timestamps are 16 digits, pids and ids a few: take 8 at a time. */
    while (end - p >= 8) {
        uint64_t eight;
        if (!parse8(p, &eight)) return false;
        v = v * 100000000ULL + eight;
        p += 8;
    }
#endif
    for (; p < end; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9) return false;
        v = v * 10 + d;
    }
    if (v > (uint64_t)INT64_MAX) return false;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

static bool parse_special(const char *p, size_t n, double *out)
{
    if ((n == 3 && !memcmp(p, "nan", 3)) || (n == 4 && !memcmp(p, "-nan", 4))) {
        *out = NAN;
        return true;
    }
    if (n == 3 && !memcmp(p, "inf", 3)) {
        *out = INFINITY;
        return true;
    }
    if (n == 4 && !memcmp(p, "-inf", 4)) {
        *out = -INFINITY;
        return true;
    }
    return false;
}

/* JSON number grammar: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?
 *
 * Fast path (Clinger): when the significant digits fit in 2^53 and the
 * decimal exponent is within +-22, both the digits and 10^|e| are exact
 * doubles, so one IEEE multiply or divide gives the correctly rounded
 * result -- the same double strtod returns. Everything else (long mantissas,
 * large exponents) goes to strtod. rmsummary numbers such as
 * 1680551947.961445 or 0.000569 all take the fast path. */
const char *tl_scan_double(const char *p, const char *end, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    if (p >= end) return NULL;
    const char *s = p;
    bool neg = false;
    if (*s == '-') {
        neg = true;
        s++;
    }
    if (s >= end || (unsigned)(*s - '0') > 9) {
        /* nan, inf, -inf: cctools prints them with %g, the JSON is then invalid */
        const char *e = s;
        while (e < end && e - p < 4 && *e >= 'a' && *e <= 'z') e++;
        return parse_special(p, (size_t)(e - p), out) ? e : NULL;
    }
    if (*s == '0' && s + 1 < end && (unsigned)(s[1] - '0') <= 9) return NULL; /* 007 */
    uint64_t m = 0;
    int sig = 0, exp10 = 0;
    bool exact = true; /* all digits fit in m */
    for (; s < end && (unsigned)(*s - '0') <= 9; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (sig < 19) {
            m = m * 10 + d;
            sig += m != 0;
        } else {
            exp10++;
            exact = exact && d == 0;
        }
    }
    if (s < end && *s == '.') {
        s++;
        if (s >= end || (unsigned)(*s - '0') > 9) return NULL;
        for (; s < end && (unsigned)(*s - '0') <= 9; s++) {
            unsigned d = (unsigned)(*s - '0');
            if (sig < 19) {
                m = m * 10 + d;
                sig += m != 0;
                exp10--;
            } else {
                exact = exact && d == 0;
            }
        }
    }
    if (s < end && (*s == 'e' || *s == 'E')) {
        s++;
        bool eneg = false;
        if (s < end && (*s == '+' || *s == '-')) eneg = *s++ == '-';
        if (s >= end || (unsigned)(*s - '0') > 9) return NULL;
        int e = 0;
        for (; s < end && (unsigned)(*s - '0') <= 9; s++)
            if (e < 100000) e = e * 10 + (*s - '0');
        exp10 += eneg ? -e : e;
    }
    if (exact && m <= (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
        double d = (double)m;
        d = exp10 < 0 ? d / pow10[-exp10] : d * pow10[exp10];
        *out = neg ? -d : d;
        return s;
    }
    size_t n = (size_t)(s - p);
    if (n > 400) return NULL; /* no real number is this long */
    char tmp[401];
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    *out = strtod(tmp, NULL);
    return s;
}

bool tl_parse_double(const char *p, const char *end, double *out)
{
    return tl_scan_double(p, end, out) == end;
}
