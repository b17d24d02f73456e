#include "numfmt.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

static const uint64_t p10_64[20] = {
    UINT64_C(1),
    UINT64_C(10),
    UINT64_C(100),
    UINT64_C(1000),
    UINT64_C(10000),
    UINT64_C(100000),
    UINT64_C(1000000),
    UINT64_C(10000000),
    UINT64_C(100000000),
    UINT64_C(1000000000),
    UINT64_C(10000000000),
    UINT64_C(100000000000),
    UINT64_C(1000000000000),
    UINT64_C(10000000000000),
    UINT64_C(100000000000000),
    UINT64_C(1000000000000000),
    UINT64_C(10000000000000000),
    UINT64_C(100000000000000000),
    UINT64_C(1000000000000000000),
    UINT64_C(10000000000000000000),
};

/* Decimal digits in u (1 for 0): log10 from the bit length, corrected. */
static inline int count_digits(uint64_t u)
{
    int t = ((64 - __builtin_clzll(u | 1)) * 1233) >> 12;
    return t - ((u | 1) < p10_64[t]) + 1;
}

/* Exactly n <= 8 digits of u < 10^8 (zero-padded), ending just before
 * end; 32-bit arithmetic. */
static inline void put_digits_back32(char *end, uint32_t u, int n)
{
    for (; n >= 2; n -= 2) {
        uint32_t d = (u % 100) * 2;
        u /= 100;
        end -= 2;
        memcpy(end, digit_pairs + d, 2);
    }
    if (n) end[-1] = (char)('0' + u % 10);
}

/* Exactly n digits of u (zero-padded), ending just before end: eight at a
 * time in 32 bits. */
static inline void put_digits_back(char *end, uint64_t u, int n)
{
    while (n > 8) {
        put_digits_back32(end, (uint32_t)(u % 100000000), 8);
        u /= 100000000;
        end -= 8;
        n -= 8;
    }
    put_digits_back32(end, (uint32_t)u, n);
}

/* u (negative if neg) with `decimals` digits after the point ("0.00123"
 * style), NUL-terminated: at most 1 + 20 + 1 + 21 + 1 bytes. */
static size_t put_fixed(char *buf, bool neg, uint64_t u, int decimals)
{
    char *p = buf;
    if (neg) *p++ = '-';
    uint64_t whole = u, part = 0;
    if (decimals > 19) {
        whole = 0;
        part = u;
    } else if (decimals) {
        whole = u / p10_64[decimals];
        part = u - whole * p10_64[decimals];
    }
    int n = count_digits(whole);
    put_digits_back(p + n, whole, n);
    p += n;
    if (decimals) {
        *p++ = '.';
        put_digits_back(p + decimals, part, decimals);
        p += decimals;
    }
    *p = '\0';
    return (size_t)(p - buf);
}

size_t tl_fmt_i64(char *buf, int64_t v)
{
    return put_fixed(buf, v < 0, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, 0);
}

__extension__ typedef unsigned __int128 u128;

/* Shortest fixed notation for a finite, non-integer v = (-1)^neg m 2^e
 * with 1e-4 <= |v| < 1e15, exactly, in integers. The decimals that read
 * back as v are those within half an ulp of it on either side (the gap
 * below is half as wide when m is the smallest mantissa of its binade),
 * boundaries included when m is even (ties go to even). Scaled by 2^s,
 * s = 2 - e, the value and both bounds are integers below 2^55. For k = 1,
 * 2, ... decimals, the first k where an integer lies between the bounds
 * times 10^k gives the fewest digits; of those, the one nearest to v 10^k
 * (ties to even) is printed. Whether such an integer exists is monotone in
 * k (c at k gives 10c at k + 1): short decimals (the common case: times
 * in us, sizes in MB) are found by stepping k, long ones by bisection up
 * to the first k where the interval is at least 1 wide. Everything stays
 * below 2^55 * 10^21 < 2^125; k <= 21 always suffices (17 significant
 * digits from 10^-4 on). */
/* 10^k for k <= 21 */
static inline u128 pow10_128(int k)
{
    return k < 20 ? (u128)p10_64[k] : (u128)p10_64[19] * (k == 20 ? 10 : 100);
}

struct fixed_bounds {
    u128 mask;
    int s;
    bool even;
};

/* The integers [*lo, *hi] between the scaled bounds L and H (empty when
 * *lo > *hi). */
static inline bool has_integer(const struct fixed_bounds *fb, u128 L, u128 H, u128 *lo, u128 *hi)
{
    *lo = L >> fb->s;
    *hi = H >> fb->s;
    if ((L & fb->mask) != 0 || !fb->even) ++*lo; /* ceil, or strictly above */
    if ((H & fb->mask) == 0 && !fb->even) --*hi; /* strictly below */
    return *lo <= *hi;
}

static size_t fmt_fixed_exact(char *buf, bool neg, uint64_t m, int e)
{
    uint64_t l = (m << 2) - (m == UINT64_C(1) << 52 ? 1 : 2), h = (m << 2) + 2;
    int s = 2 - e; /* 5..70 for this range */
    struct fixed_bounds fb = {((u128)1 << s) - 1, s, !(m & 1)};
    u128 lo, hi, L = l, H = h;
    int k = 1;
    for (; k <= 6; k++) {
        L *= 10;
        H *= 10;
        if (has_integer(&fb, L, H, &lo, &hi)) goto found;
    }
    /* the interval is 2^(2-s) wide (at least half that below): from
     * 10^k >= 2^(s-1) on it holds an integer; log10(2) < 0.30103 */
    int khi = (int)((s - 1) * 0.30103) + 2;
    if (khi > 21) khi = 21;
    while (k < khi) { /* the first k in [k, khi] with an integer */
        int mid = (k + khi) / 2;
        if (has_integer(&fb, l * pow10_128(mid), h * pow10_128(mid), &lo, &hi)) khi = mid;
        else k = mid + 1;
    }
    has_integer(&fb, l * pow10_128(k), h * pow10_128(k), &lo, &hi);
found:;
    u128 V = (u128)(m << 2) * pow10_128(k);
    u128 c = V >> s, rem = V & fb.mask, half = (u128)1 << (s - 1);
    if (rem > half || (rem == half && (c & 1))) c++;
    if (c < lo) c = lo;
    if (c > hi) c = hi;
    return put_fixed(buf, neg, (uint64_t)c, k);
}

size_t tl_fmt_double(char *buf, size_t cap, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    bool neg = bits >> 63;
    int biased = (int)((bits >> 52) & 0x7ff);
    if (biased == 0x7ff) return (size_t)snprintf(buf, cap, isnan(v) ? "nan" : neg ? "-inf" : "inf");
    if (!(bits << 1) && cap >= 3) { /* +-0 */
        size_t n = 0;
        if (neg) buf[n++] = '-';
        buf[n++] = '0';
        buf[n] = '\0';
        return n;
    }
    double a = fabs(v);
    if (biased && cap >= 32) { /* normal: v = m 2^e */
        uint64_t m = (bits & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
        int e = biased - 1075;
        /* Integers that a double holds exactly print without exponent. */
        if (e >= 0 && a < 1e17) return put_fixed(buf, neg, m << e, 0);
        if (e < 0 && e > -53 && !(m & ((UINT64_C(1) << -e) - 1)))
            return put_fixed(buf, neg, m >> -e, 0);
        /* Fixed notation, where %g would use it too. */
        if (e < 0 && a >= 1e-4 && a < 1e15) return fmt_fixed_exact(buf, neg, m, e);
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
