#include "core/numfmt.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

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

/* Eight ASCII digits of u < 10^8, zero-padded, the first digit in the
 * lowest byte: both halves of four digits, then their pairs, then single
 * digits, each split in parallel lanes of one word (x / 100 = x 5243 >>
 * 19 for x < 10^4, y / 10 = y 103 >> 10 for y < 100; the products stay
 * inside their lanes). */
static inline uint64_t digits8(uint32_t u)
{
    uint64_t v = (uint64_t)(u / 10000) | ((uint64_t)(u % 10000) << 32);
    uint64_t q = ((v * 5243) >> 19) & UINT64_C(0x0000007F0000007F);
    v = q | ((v - q * 100) << 16);
    q = ((v * 103) >> 10) & UINT64_C(0x000F000F000F000F);
    v = q | ((v - q * 10) << 8);
    return v + UINT64_C(0x3030303030303030);
}

static inline void store8(char *p, uint32_t u)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t d = digits8(u);
    memcpy(p, &d, 8);
#else
    for (int i = 7; i >= 0; i--, u /= 10) p[i] = (char)('0' + u % 10);
#endif
}

/* The digits of u, zero-padded to 24, in s[0..24); s[24..48) zeros too
 * (copied along by the wide writers below, then cut off by the NUL). */
static inline void digits24(char s[48], uint64_t u)
{
    memset(s, '0', 48);
    if (u < UINT64_C(100000000)) {
        store8(s + 16, (uint32_t)u);
    } else if (u < UINT64_C(10000000000000000)) {
        store8(s + 16, (uint32_t)(u % 100000000));
        store8(s + 8, (uint32_t)(u / 100000000));
    } else {
        store8(s + 16, (uint32_t)(u % 100000000));
        store8(s + 8, (uint32_t)(u / 100000000 % 100000000));
        store8(s, (uint32_t)(u / UINT64_C(10000000000000000)));
    }
}

/* u (negative if neg) with `decimals` <= 21 digits after the point
 * ("0.00123" style), NUL-terminated: at most 1 + 20 + 1 + 21 + 1 bytes.
 * Wide: buf has TL_FMT_WIDE bytes of room, and bytes after the NUL may be
 * overwritten -- fixed-size copies, no branch per digit and no division
 * by a variable power of ten. */
static __attribute__((noinline)) size_t put_fixed_long(char *buf, bool neg, uint64_t u,
                                                      int decimals)
{
    char s[48];
    digits24(s, u);
    char *p = buf;
    *p = '-';
    p += neg;
    int n = count_digits(u);
    if (n <= decimals) n = decimals + 1;
    const char *src = s + 24 - n;
    memcpy(p, src, 24);
    if (decimals) {
        int whole = n - decimals;
        p[whole] = '.';
        memcpy(p + whole + 1, src + whole, 24);
        n++;
    }
    p[n] = '\0';
    return (size_t)(p + n - buf);
}

static inline __attribute__((always_inline)) size_t put_fixed(char *buf, bool neg, uint64_t u,
                                                           int decimals)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (u < UINT64_C(100000000) && decimals < 8) { /* most: one word of digits */
        char *p = buf;
        *p = '-';
        p += neg;
        int n = count_digits(u);
        if (n <= decimals) n = decimals + 1;
        uint64_t d = digits8((uint32_t)u) >> (8 * (8 - n)); /* the last n digits */
        memcpy(p, &d, 8);
        if (decimals) {
            int whole = n - decimals;
            p[whole] = '.';
            d >>= 8 * whole;
            memcpy(p + whole + 1, &d, 8);
            n++;
        }
        p[n] = '\0';
        return (size_t)(p + n - buf);
    }
    if (u < UINT64_C(10000000000000000) && decimals < 9) { /* 9..16 digits: two words */
        char *p = buf;
        *p = '-';
        p += neg;
        uint32_t top = (uint32_t)(u / 100000000);
        int nt = count_digits(top), n = nt + 8;
        u128 d = ((u128)digits8((uint32_t)(u % 100000000)) << 64 | digits8(top)) >> (8 * (8 - nt));
        memcpy(p, &d, 16);
        if (decimals) {
            int whole = n - decimals;
            p[whole] = '.';
            d >>= 8 * whole;
            memcpy(p + whole + 1, &d, 16);
            n++;
        }
        p[n] = '\0';
        return (size_t)(p + n - buf);
    }
#endif
    return put_fixed_long(buf, neg, u, decimals);
}

size_t tl_fmt_i64_wide(char *buf, int64_t v)
{
    bool neg = v < 0;
    uint64_t u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    if (u < 10) { /* attempts, exit codes, flags */
        buf[0] = '-';
        buf[neg] = (char)('0' + u);
        buf[neg + 1] = '\0';
        return (size_t)neg + 1;
    }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (u >= UINT64_C(100000000)) { /* nanosecond times and the like: the top, then 8 + 8 */
        char *p = buf;
        *p = '-';
        p += neg;
        uint64_t top = u / 100000000;
        int n = 0;
        if (top >= UINT64_C(100000000)) {
            uint64_t t = top / 100000000; /* < 10^4 */
            n = count_digits(t);
            uint64_t d = digits8((uint32_t)t) >> (8 * (8 - n));
            memcpy(p, &d, 8);
            top %= 100000000;
            store8(p + n, (uint32_t)top);
            n += 8;
        } else {
            n = count_digits(top);
            uint64_t d = digits8((uint32_t)top) >> (8 * (8 - n));
            memcpy(p, &d, 8);
        }
        store8(p + n, (uint32_t)(u % 100000000));
        n += 8;
        p[n] = '\0';
        return (size_t)(p + n - buf);
    }
#endif
    return put_fixed(buf, neg, u, 0);
}

size_t tl_fmt_i64(char *buf, int64_t v)
{
    char tmp[TL_FMT_WIDE];
    size_t n = tl_fmt_i64_wide(tmp, v);
    memcpy(buf, tmp, n + 1);
    return n;
}

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

static __attribute__((noinline)) size_t fmt_fixed_exact(char *buf, bool neg, uint64_t m, int e,
                                                       int kmin)
{
    uint64_t l = (m << 2) - (m == UINT64_C(1) << 52 ? 1 : 2), h = (m << 2) + 2;
    int s = 2 - e; /* 5..70 for this range */
    struct fixed_bounds fb = {((u128)1 << s) - 1, s, !(m & 1)};
    u128 lo, hi, L = l, H = h;
    int k = kmin;
    if (k > 1) { /* none with fewer decimals: 16 or 17 digits, one or two steps */
        while (k < 21 && !has_integer(&fb, l * pow10_128(k), h * pow10_128(k), &lo, &hi)) k++;
        has_integer(&fb, l * pow10_128(k), h * pow10_128(k), &lo, &hi);
        goto found;
    }
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

/* The common case, a non-integer a = |v| in [1e-8, 1e15) that some
 * decimal of at most 15 significant digits reads back as (times in us,
 * sizes in MB): K decimals bring a to x = a 10^K in [1e14, 1e15). There
 * the decimals that read back as a form an interval of width
 * ulp(a) 10^K <= x 2^-52 < 0.23, and fl(x) is within 2^-4 of x, so the
 * only integer that can lie in it is n = round(fl(x)). Whether it does is
 * one exact test: n < 2^53 and 10^K (K <= 22) are doubles, so n / 10^K in
 * IEEE arithmetic is correctly rounded -- the double strtod gives for
 * "n e-K" (Clinger) -- and equals a exactly when n is a valid decimal.
 * The valid integer at fewer decimals k, if any, times 10^(K-k) is valid
 * at K, so it is n with its trailing zeros stripped: the shortest, the
 * same digits as %.15g and the exact search below. 0 when no 15-digit
 * decimal exists (then 16 or 17 digits are needed, and *kmin is set to
 * K + 1: the exact search starts there). e2: a's binary exponent. */
static size_t fmt_15(char *buf, bool neg, double a, int e2, int *kmin)
{
    static const double p10d[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                    1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    /* floor(e2 log10 2) <= floor(log10 a) <= that + 1 */
    int K = 14 - ((e2 * 78913) >> 18);
    if (K < 0 || K > 22) return 0;
    double x = a * p10d[K];
    if (x >= 1e15) {
        if (--K < 0) return 0;
        x = a * p10d[K];
    }
    uint64_t n = (uint64_t)(x + 0.5);
    if ((double)n / p10d[K] != a) {
        *kmin = K + 1;
        return 0;
    }
    if (n == UINT64_C(1000000000000000)) { /* x rounded up to 10^15: the same decimal */
        n /= 10;
        K--;
    }
    /* n has 15 digits, the first at 10^E */
    int E = 14 - K;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* D[0..15): the digits as bytes of one 128-bit word; D[15] = 0 */
    uint64_t whi = digits8((uint32_t)(n / 100000000)), wlo = digits8((uint32_t)(n % 100000000));
    u128 D = (u128)(whi >> 8) | ((u128)wlo << 56);
    /* trailing zeros: the '0' bytes at the top, below D[15] */
    u128 z = D ^ (((u128)UINT64_C(0x30303030303030) << 64) | UINT64_C(0x3030303030303030));
    uint64_t zhi = (uint64_t)(z >> 64);
    int tz = (zhi ? __builtin_clzll(zhi) : 64 + __builtin_clzll((uint64_t)z)) / 8 - 1;
    int nsig = 15 - tz, len;
    char *p = buf;
    *p = '-';
    p += neg;
    if (E >= 0) { /* ddd.ddd: E + 1 <= 14 whole digits (a is no integer) */
        int w = E + 1;
        memcpy(p, &D, 16);
        p[w] = '.';
        u128 rest = D >> (8 * w);
        memcpy(p + w + 1, &rest, 16);
        len = nsig + 1;
    } else if (E >= -4) { /* 0.000ddd */
        memcpy(p, "0.000000", 8);
        memcpy(p + 1 - E, &D, 16);
        len = 1 - E + nsig;
    } else { /* %g's exponent form: d[.ddd]e-XX */
        p[0] = (char)D;
        p[1] = '.';
        u128 rest = D >> 8;
        memcpy(p + 2, &rest, 16);
        len = nsig > 1 ? nsig + 1 : 1;
        p[len++] = 'e';
        p[len++] = '-';
        p[len++] = '0'; /* E is -5 .. -8 here */
        p[len++] = (char)('0' - E);
    }
    p[len] = '\0';
    return (size_t)(p + len - buf);
#else
    int k = K; /* strip the trailing zeros: at most 14 (n >= 10^14, k >= 1) */
    while (k > 1 && n % 10 == 0) {
        n /= 10;
        k--;
    }
    if (E >= -4) return put_fixed(buf, neg, n, k);
    char tmp[TL_FMT_WIDE]; /* %g's exponent form via printf: rare */
    snprintf(tmp, sizeof tmp, "%.*e", count_digits(n) - 1, neg ? -a : a);
    size_t len = strlen(tmp);
    memcpy(buf, tmp, len + 1);
    return len;
#endif
}

/* What the paths above leave: nan, inf, magnitudes below 1e-8 or from
 * 1e15 on that are no integers below 1e17, and 16- or 17-digit values
 * below 1e-4. If some representation of <= 15 digits reads back as v,
 * then v is within half a double ulp of it -- far inside half a unit of
 * the 15th digit -- so %.15g prints exactly those digits, and %g strips
 * the zeros that pad it: the shortest. Otherwise 16 or 17 digits are
 * needed. Subnormals carry fewer than 53 bits, so that argument does not
 * hold for them: every precision is tried (they are rare). */
static __attribute__((noinline, cold)) size_t fmt_printf(char *buf, double v)
{
    if (isnan(v) || isinf(v))
        return (size_t)snprintf(buf, TL_FMT_WIDE, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
    for (int prec = fabs(v) < DBL_MIN ? 1 : 15; prec <= 17; prec++) {
        int n = snprintf(buf, TL_FMT_WIDE, "%.*g", prec, v);
        double back;
        if (prec == 17 || (tl_parse_double(buf, buf + n, &back) && back == v)) return (size_t)n;
    }
    return 0; /* not reached */
}

size_t tl_fmt_double_wide(char *buf, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    bool neg = bits >> 63;
    int biased = (int)((bits >> 52) & 0x7ff);
    if (biased == 0x7ff) return fmt_printf(buf, v);
    if (!(bits << 1)) { /* +-0 */
        size_t n = 0;
        if (neg) buf[n++] = '-';
        buf[n++] = '0';
        buf[n] = '\0';
        return n;
    }
    double a = fabs(v);
    uint64_t u; /* fixed notation: u 10^-k */
    int k = 0;
    if (biased) { /* normal: v = m 2^e */
        uint64_t m = (bits & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
        int e = biased - 1075;
        /* Integers that a double holds exactly print without exponent. */
        if (e >= 0 && a < 1e17) {
            u = m << e;
            goto fixed;
        }
        if (e < 0 && e > -53 && !(m & ((UINT64_C(1) << -e) - 1))) {
            u = m >> -e;
            goto fixed;
        }
        /* Times in us (most of what the parsers produce): a = u / 10^6 for
         * an integer u < 10^15, which then is the shortest decimal (the
         * argument of fmt_15), printed as fmt_15 would, without its
         * general digit shuffling. */
        if (a >= 1e-4 && a < 1e9) {
            u = (uint64_t)(a * 1e6 + 0.5);
            if ((double)u / 1e6 == a) {
                for (k = 6; u % 10 == 0; k--) u /= 10; /* a is no integer: u % 10^6 != 0 */
                goto fixed;
            }
        }
        int kmin = 1;
        if (a >= 1e-8 && a < 1e15) {
            size_t n = fmt_15(buf, neg, a, biased - 1023, &kmin);
            if (n) return n;
        }
        /* Fixed notation, where %g would use it too. */
        if (e < 0 && a >= 1e-4 && a < 1e15) return fmt_fixed_exact(buf, neg, m, e, kmin);
    }
    return fmt_printf(buf, v);
fixed: /* one place, so that put_fixed is inlined once */
    return put_fixed(buf, neg, u, k);
}

size_t tl_fmt_double(char *buf, size_t cap, double v)
{
    if (cap >= TL_FMT_WIDE) return tl_fmt_double_wide(buf, v);
    char tmp[TL_FMT_WIDE];
    size_t n = tl_fmt_double_wide(tmp, v); /* at most 24 characters */
    if (n >= cap) n = cap ? cap - 1 : 0;
    if (cap) {
        memcpy(buf, tmp, n);
        buf[n] = '\0';
    }
    return n;
}

const double tl_pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

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
    /* Timestamps are 16 digits, pids 10 or 11: eight at a time, and the
     * last k < 8 as the top of the word that ends at end (its low bytes,
     * digits already taken, masked to leading zeros). */
    if (end - p >= 8) {
        const uint64_t zeros = 0x3030303030303030ULL;
        uint64_t w;
        for (; end - p >= 8; p += 8) {
            memcpy(&w, p, 8);
            if (tl_swar_nondigits(w)) return false;
            v = v * 100000000ULL + tl_swar_value8(w - zeros);
        }
        unsigned k = (unsigned)(end - p);
        if (k) {
            static const uint64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
            uint64_t keep = ~0ULL << (64 - 8 * k);
            memcpy(&w, end - 8, 8);
            if (tl_swar_nondigits(w) & keep) return false;
            v = v * pow10[k] + tl_swar_value8((w - zeros) & keep);
        }
        if (v > (uint64_t)INT64_MAX) return false;
        *out = neg ? -(int64_t)v : (int64_t)v;
        return true;
    }
#endif
    for (; p < end; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9) return false;
        v = v * 10 + d;
    }
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
const char *tl_scan_decimal_exp(const char *q, const char *end, uint64_t m, long e10, bool neg,
                                double *out)
{
    const char *x = q + 1, *xs;
    bool eneg = false;
    if (x < end && (*x == '-' || *x == '+')) eneg = *x++ == '-';
    long e = 0;
    unsigned d;
    for (xs = x; x < end && (d = (unsigned)(*x - '0')) <= 9 && x - xs < 3; x++) e = e * 10 + d;
    if (x == xs || (x < end && (unsigned)(*x - '0') <= 9)) return NULL;
    e10 += eneg ? -e : e;
    if (e10 < -22 || e10 > 22) return NULL;
    double v = e10 < 0 ? (double)m / tl_pow10_exact[-e10] : (double)m * tl_pow10_exact[e10];
    *out = neg ? -v : v;
    return x;
}

const char *tl_scan_double(const char *p, const char *end, double *out)
{
    const char *q = tl_scan_decimal(p, end, out);
    if (q) return q;
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
        d = exp10 < 0 ? d / tl_pow10_exact[-exp10] : d * tl_pow10_exact[exp10];
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

size_t tl_fmt_fixed1(char *buf, size_t cap, double v)
{
    if (!(fabs(v) < 0x1p48) || cap < 20) return (size_t)snprintf(buf, cap, "%.1f", v);
    double p = v * 10, e = fma(v, 10, -p); /* v * 10 == p + e exactly */
    double r = nearbyint(p);                /* ties to even */
    if (fabs(p - r) == 0.5 && e != 0) r = e > 0 ? p + 0.5 : p - 0.5; /* p a tie the exact product is not */
    uint64_t tenths = (uint64_t)fabs(r);
    char *o = buf;
    if (signbit(v)) *o++ = '-'; /* as printf: -0.04 is "-0.0" */
    o += tl_fmt_i64(o, (int64_t)(tenths / 10));
    *o++ = '.';
    *o++ = (char)('0' + tenths % 10);
    *o = '\0';
    return (size_t)(o - buf);
}

size_t tl_fmt_grouped(char *buf, uint64_t v)
{
    char d[24];
    int n = snprintf(d, sizeof d, "%llu", (unsigned long long)v), at = 0;
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0) buf[at++] = ',';
        buf[at++] = d[i];
    }
    buf[at] = '\0';
    return (size_t)at;
}

/* The significant digits of v's shortest round-trip form (no leading or
 * trailing zeros) into dig, and X with v = d1.d2d3... x 10^X. */
static int shortest_digits(double v, char *dig, int *X)
{
    char s[TL_FMT_WIDE];
    size_t n = tl_fmt_double_wide(s, fabs(v));
    int nd = 0, point = -1, exp10 = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '.') point = nd;
        else if (c == 'e') {
            exp10 = atoi(s + i + 1);
            break;
        } else if (c != '0' || nd) dig[nd++] = c;
        else if (point >= 0) exp10--; /* a zero after the point, before any digit */
    }
    int int_digits = point >= 0 ? point : nd;
    /* leading zeros of an integer part ("0.5") were never digits */
    while (nd && dig[nd - 1] == '0') nd--;
    *X = int_digits - 1 + exp10;
    return nd;
}

size_t tl_fmt_sig(char *buf, size_t cap, double v, int sig)
{
    /* subnormals carry fewer digits than 15: their shortest form is no %.15g */
    if (!isfinite(v) || fabs(v) < DBL_MIN || sig < 1 || sig > 15 || cap < 32)
        return (size_t)snprintf(buf, cap, "%.*g", sig, v);
    char dig[40];
    int X, nd = shortest_digits(v, dig, &X);
    if (nd > sig) { /* round to sig digits: a tie in the shortest form is not the exact value's */
        bool tail = false;
        for (int i = sig + 1; i < nd; i++) tail |= dig[i] != '0';
        if (dig[sig] == '5' && !tail) return (size_t)snprintf(buf, cap, "%.*g", sig, v);
        bool up = dig[sig] >= '5';
        nd = sig;
        for (int i = sig - 1; up && i >= 0; i--) {
            if (dig[i] == '9') {
                dig[i] = '0';
            } else {
                dig[i]++;
                up = false;
            }
        }
        if (up) { /* 9.99 -> 10.0 */
            memmove(dig + 1, dig, (size_t)nd);
            dig[0] = '1';
            X++;
        }
        while (nd > 1 && dig[nd - 1] == '0') nd--;
    }
    char *p = buf;
    if (v < 0) *p++ = '-';
    if (X < -4 || X >= sig) { /* d.ddde+XX */
        *p++ = dig[0];
        if (nd > 1) {
            *p++ = '.';
            memcpy(p, dig + 1, (size_t)nd - 1);
            p += nd - 1;
        }
        *p++ = 'e';
        *p++ = X < 0 ? '-' : '+';
        int a = X < 0 ? -X : X;
        if (a >= 100) *p++ = (char)('0' + a / 100);
        *p++ = (char)('0' + a / 10 % 10);
        *p++ = (char)('0' + a % 10);
    } else if (X >= 0) { /* ddd.ddd */
        for (int i = 0; i <= X; i++) *p++ = i < nd ? dig[i] : '0';
        if (nd > X + 1) {
            *p++ = '.';
            memcpy(p, dig + X + 1, (size_t)(nd - X - 1));
            p += nd - X - 1;
        }
    } else { /* 0.000ddd */
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -X - 1; i++) *p++ = '0';
        memcpy(p, dig, (size_t)nd);
        p += nd;
    }
    *p = '\0';
    return (size_t)(p - buf);
}
