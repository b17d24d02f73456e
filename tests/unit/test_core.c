/* core/: the fast paths must equal their slow references bit for bit.
 *   tl_parse_double == strtod          (Clinger fast path + fallback)
 *   tl_parse_i64    == strtoll         (8 digits at a time)
 *   tl_sort_doubles == qsort           (radix sort)
 *   tl_fmt_double   round-trips and is shortest
 *   tl_quantile_sorted == numpy.quantile on hand-computed cases
 *   tl_map64 after random inserts/deletes == a plain array */
#include "check.h"
#include "core/glossary.h"
#include "core/buf.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/dynlib.h"
#include "core/intern.h"
#include "core/map64.h"
#include "core/numfmt.h"
#include "core/quantile.h"
#include "parsers/jscan.h"
#include "core/summary.h"

static bool parse_i64_str(const char *s, int64_t *v)
{
    return tl_parse_i64(s, s + strlen(s), v);
}

static bool parse_double_str(const char *s, double *v)
{
    return tl_parse_double(s, s + strlen(s), v);
}

static const uint64_t p10_u64[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
                                   1000000000, 10000000000, 100000000000, 1000000000000,
                                   10000000000000, 100000000000000, 1000000000000000};

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_parse_double(void)
{
    static const char *const fixed[] = {
        "0", "-0", "1", "0.000569", "7.499999999999999e-05", "4.482269287109375e-05",
        "1680551947.961445", "0.01606845855712891", "1.59924e+09", "5e-05", "123.137485",
        "9007199254740993", "1e23", "1e-400", "1.7976931348623157e308", "2.2250738585072014e-308",
        "12345678901234567890", "0.1", "3.14159265358979323846264338327950288", "1E5", "-2.5e-3",
        "4.9406564584124654e-324", "100000000000000000000000", "0.30000000000000004"};
    int mismatches = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        double a, b = strtod(fixed[i], NULL);
        CHECK(tl_parse_double(fixed[i], fixed[i] + strlen(fixed[i]), &a));
        if (memcmp(&a, &b, sizeof a)) {
            mismatches++;
            fprintf(stderr, "parse %s: %.17g != strtod %.17g\n", fixed[i], a, b);
        }
    }
    char buf[64];
    for (int i = 0; i < 200000; i++) {
        uint64_t r = next();
        int kind = (int)(r % 5);
        if (kind == 4) { /* exponents: both cases, signs, in and past 10^+-22 */
            int e10 = (int)(next() % 61) - 30;
            const char *mark = e10 >= 0 && next() % 2 ? "E+" : next() % 2 ? "e" : "E";
            snprintf(buf, sizeof buf, "%llu.%llu%s%d", (unsigned long long)(next() % 100000),
                     (unsigned long long)(next() % 1000000000000ULL), mark, e10);
        } else if (kind == 0) snprintf(buf, sizeof buf, "%.*f", (int)(next() % 10), (double)(next() % 100000000000ULL) / 1000.0);
        else if (kind == 1) snprintf(buf, sizeof buf, "%.17g", (double)(next() >> 11) * 0x1p-53 * 1e10);
        else if (kind == 2) snprintf(buf, sizeof buf, "%.16g", ldexp((double)(next() >> 11), (int)(next() % 200) - 100));
        else snprintf(buf, sizeof buf, "%lld.%06lld", (long long)(1.6e9 + next() % 100000000), (long long)(next() % 1000000));
        double a, b = strtod(buf, NULL);
        if (!tl_parse_double(buf, buf + strlen(buf), &a) || memcmp(&a, &b, sizeof a)) {
            if (mismatches++ < 5) fprintf(stderr, "parse %s: %.17g != strtod %.17g\n", buf, a, b);
        }
        /* inside a line, as in rmsummary JSON: the eight-digit fast path */
        size_t n = strlen(buf);
        char line[96];
        snprintf(line, sizeof line, "%s,\"MB\"],\"wall_time\":[1,\"s\"]}", buf);
        const char *e = tl_scan_double(line, line + strlen(line), &a);
        if (e != line + n || memcmp(&a, &b, sizeof a)) {
            if (mismatches++ < 5) fprintf(stderr, "scan %s: %.17g != strtod %.17g\n", line, a, b);
        }
    }
    /* short numbers as rmsummary writes them, each alone in a buffer of its
     * exact size (no terminator: ASan sees any read past the end), and
     * followed by the JSON around them */
    for (int i = 0; i < 200000; i++) {
        int kind = (int)(next() % 5);
        if (kind == 0) snprintf(buf, sizeof buf, "%llu", (unsigned long long)(next() % 1000000));
        else if (kind == 1) snprintf(buf, sizeof buf, "%.6f", (double)(next() % 100000000) / 1e6);
        else if (kind == 2) snprintf(buf, sizeof buf, "-%.*f", (int)(next() % 17), (double)(next() % 1000));
        else if (kind == 3) snprintf(buf, sizeof buf, "%.*g", 1 + (int)(next() % 19), (double)(next() >> 11) * 0x1p-40);
        else snprintf(buf, sizeof buf, "%llu", (unsigned long long)(next() >> (next() % 64)));
        size_t n = strlen(buf);
        double a, b = strtod(buf, NULL);
        char *exact = malloc(n);
        memcpy(exact, buf, n);
        if (!tl_parse_double(exact, exact + n, &a) || memcmp(&a, &b, sizeof a)) {
            if (mismatches++ < 5) fprintf(stderr, "parse (exact buffer) %s: %.17g != strtod %.17g\n", buf, a, b);
        }
        free(exact);
        char line[96];
        snprintf(line, sizeof line, "%s,\"MB\"]}", buf);
        const char *e = tl_scan_double(line, line + strlen(line), &a);
        if (e != line + n || memcmp(&a, &b, sizeof a)) {
            if (mismatches++ < 5) fprintf(stderr, "scan %s: %.17g != strtod %.17g\n", line, a, b);
        }
    }
    /* fixed ones inside a line too, and what must stop or fail there */
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        char line[96];
        snprintf(line, sizeof line, "%s,\"cores\"]}", fixed[i]);
        double a, b = strtod(fixed[i], NULL);
        const char *e = tl_scan_double(line, line + strlen(line), &a);
        if (e != line + strlen(fixed[i]) || memcmp(&a, &b, sizeof a)) {
            mismatches++;
            fprintf(stderr, "scan %s: %.17g != strtod %.17g\n", line, a, b);
        }
    }
    static const char *const bad_in_line[] = {"01,\"MB\"]}    ", "5.,\"MB\"]}     ", "-,\"MB\"]}        ",
                                              "-01234567,\"s\"]}", "12345678.,\"s\"]}   ",
                                              "00000000000000000000001,\"s\"]}"};
    for (size_t i = 0; i < sizeof bad_in_line / sizeof *bad_in_line; i++) {
        double a;
        const char *l = bad_in_line[i];
        const char *e = tl_scan_double(l, l + strlen(l), &a);
        CHECK(e == NULL || *e != ',');
    }
    /* leading zeros of a fraction do not count against the fast path's 19
     * digits (cctools writes MiB as 0.0002737045288085938); more than 19
     * digits after them, or a fraction past 10^-22, leave it to the
     * general path. Each in a buffer of its exact size. */
    static const struct {
        const char *s;
        bool fast;
    } zeros[] = {
        {"0.0002737045288085938", true}, {"0.004117965698242188", true},
        {"-0.00000000000000000001234567890123456789", false}, {"0.0000123456789012345", true},
        {"0.1234567890123456789", false} /* 19 digits, past 2^53 */,
        {"0.12345678901234567891", false}, {"0.0000000000000000000000", true}, {"0.00000000000000000000000", false},
        {"0.0000000000000000000000012", false}, {"0.0000000000000000000001", true},
        {"0.00000000000000000000001", false}, {"10.000000000000000001", false},
        {"0.000000000000000000001e5", true},
    };
    for (size_t i = 0; i < sizeof zeros / sizeof *zeros; i++) {
        size_t n = strlen(zeros[i].s);
        char *exact = malloc(n);
        memcpy(exact, zeros[i].s, n);
        double a = -1, b = strtod(zeros[i].s, NULL), c = -1;
        const char *e = tl_scan_decimal(exact, exact + n, &a);
        if ((e != NULL) != zeros[i].fast) fprintf(stderr, "fast path %s: %s\n", zeros[i].s, e ? "taken" : "not taken");
        CHECK((e != NULL) == zeros[i].fast);
        if (e) CHECK(e == exact + n && !memcmp(&a, &b, sizeof a));
        CHECK(tl_parse_double(exact, exact + n, &c) && !memcmp(&c, &b, sizeof c));
        free(exact);
    }
    CHECK_EQ_INT(mismatches, 0);
    static const char *const bad[] = {"", "-", ".5", "5.", "1e", "01", "0x10", "1.2.3", "--1", "1e+", " 1", "infinity"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        double a;
        CHECK(!tl_parse_double(bad[i], bad[i] + strlen(bad[i]), &a));
    }
    double a;
    CHECK(parse_double_str("nan", &a) && a != a);
    CHECK(parse_double_str("-inf", &a) && isinf(a) && a < 0);
}

static void test_parse_i64(void)
{
    char buf[32];
    int mismatches = 0;
    for (int i = 0; i < 100000; i++) {
        long long v = (long long)(next() >> (next() % 64));
        if (next() & 1) v = -v;
        snprintf(buf, sizeof buf, "%lld", v);
        int64_t got;
        if (!tl_parse_i64(buf, buf + strlen(buf), &got) || got != v) mismatches++;
    }
    CHECK_EQ_INT(mismatches, 0);
    int64_t v;
    CHECK(parse_i64_str("1680774973462610", &v) && v == 1680774973462610LL);
    CHECK(!parse_i64_str("16807749734626x0", &v));
    CHECK(!parse_i64_str("1680774:73462610", &v));
    CHECK(!parse_i64_str("9223372036854775808", &v));
    CHECK(!tl_parse_i64("", "", &v));
    CHECK(!parse_i64_str("-", &v));
    /* every non-digit byte at every position of a 16-digit time is refused
     * (the eight-byte test once let '.', '+', '-' and 0x1A-0x1F through) */
    int accepted = 0;
    for (int pos = 0; pos < 16; pos++)
        for (int c = 1; c < 256; c++) {
            if (c >= '0' && c <= '9') continue;
            if (pos == 0 && c == '-') continue;
            char t[17];
            memcpy(t, "1680774973462610", 17);
            t[pos] = (char)c;
            accepted += tl_parse_i64(t, t + 16, &v);
        }
    CHECK_EQ_INT(accepted, 0);
    CHECK(!parse_i64_str("1713205.72901464", &v));
}

/* The word-at-a-time number scanners read past a number's end: numbers
 * cut out of longer digit runs (a length mask that lets a byte through
 * reads a wrong digit), and numbers ending right before an unreadable page
 * (a read past the page faults). */
static void test_number_edges(void)
{
    static const char *const runs[] = {"1234567890123456789012345", "1234.56789012345678901234",
                                       "0.00012345678901234567890", "-98765432.1098765432109876",
                                       "12345678.123456789e3", "7.5e-3"};
    int bad = 0;
    for (size_t r = 0; r < sizeof runs / sizeof *runs; r++)
        for (size_t n = 1; n <= strlen(runs[r]); n++) {
            char tmp[32];
            memcpy(tmp, runs[r], n);
            tmp[n] = '\0';
            char *e;
            double a, b = strtod(tmp, &e);
            bool ok = tl_parse_double(runs[r], runs[r] + n, &a);
            bool valid = e == tmp + n && tmp[n - 1] != '.'; /* JSON has no "1." */
            if (ok != valid || (ok && memcmp(&a, &b, sizeof a))) {
                if (bad++ < 5) fprintf(stderr, "prefix %s: ok %d (want %d) %.17g != %.17g\n", tmp, ok, valid, a, b);
            }
            int64_t v;
            errno = 0;
            long long want = strtoll(tmp, &e, 10);
            valid = e == tmp + n && !errno && e != tmp;
            ok = tl_parse_i64(runs[r], runs[r] + n, &v);
            if (ok != valid || (ok && v != want)) {
                if (bad++ < 5) fprintf(stderr, "prefix %s: i64 ok %d (want %d)\n", tmp, ok, valid);
            }
        }
    CHECK_EQ_INT(bad, 0);

    long page = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED);
    if (map == MAP_FAILED) return;
    CHECK(mprotect(map + page, (size_t)page, PROT_NONE) == 0);
    static const char *const nums[] = {"7", "42", "1234567", "12345678", "123456789", "1713205453132552",
                                       "-1", "0.5", "3.14159", "1.355993270874023", "0.000569",
                                       "1680551947.961445", "-12345678.87654321"};
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
        size_t n = strlen(nums[i]);
        char *at = map + page - n; /* the last byte of the page */
        memcpy(at, nums[i], n);
        double a, b = strtod(nums[i], NULL);
        CHECK(tl_parse_double(at, at + n, &a) && !memcmp(&a, &b, sizeof a));
        CHECK(tl_scan_double(at, at + n, &a) == at + n);
        int64_t v;
        if (!strchr(nums[i], '.')) CHECK(tl_parse_i64(at, at + n, &v) && v == strtoll(nums[i], NULL, 10));
    }
    munmap(map, (size_t)page * 2);
}

/* The JSON scanners' vector and SWAR steps against a byte loop: every
 * length to 40, the byte sought at every position (and none), in buffers
 * of exactly that size (the sanitizer build catches a read past them). */
static void test_jscan(void)
{
    int bad = 0, runs = 0;
    for (int n = 0; n <= 40; n++)
        for (int pos = -1; pos < n; pos++)
            for (int c = 0; c < 256; c += (pos < 0 ? 256 : 1)) {
                char *b = malloc((size_t)n + 1);
                memset(b, 'a', (size_t)n);
                if (pos >= 0) b[pos] = (char)c;
                const char *want = b;
                while (want < b + n && *want != '"' && *want != '\\') want++;
                bad += tl_find_quote_or_backslash(b, b + n) != want;
                want = b;
                while (want < b + n && *want != ' ') want++;
                bad += tl_find_space(b, b + n) != want;
                memset(b, '7', (size_t)n);
                if (pos >= 0) b[pos] = (char)c;
                want = b;
                while (want < b + n && *want >= '0' && *want <= '9') want++;
                bad += tl_skip_digits(b, b + n) != want;
                runs++;
                free(b);
            }
    CHECK(runs > 200000);
    CHECK_EQ_INT(bad, 0);
}

/* Fills a[0..n) with pattern k: random of mixed sign and magnitude,
 * sorted, reversed, one value, two values, organ pipe, sawtooth. */
static void sort_input(double *a, size_t n, int k)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next();
        double x = r % 3 == 0 ? -(double)(r % 1000) / 7 : ldexp((double)(r >> 20), (int)(r % 60) - 40);
        if (r % 17 == 0) x = 0;
        switch (k) {
        case 1: x = (double)i; break;
        case 2: x = (double)(n - i); break;
        case 3: x = 4.25; break;
        case 4: x = (double)(r & 1); break;
        case 5: x = (double)(i < n / 2 ? i : n - i); break;
        case 6: x = (double)(i % 7); break;
        }
        a[i] = x;
    }
}

static void test_sort(void)
{
    /* both sides of the radix threshold (1024) and of the insertion runs (16) */
    static const size_t sizes[] = {0, 1, 2, 16, 17, 100, 255, 256, 1000, 1023, 1024, 5000, 100000};
    size_t checked = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int k = 0; k < 7; k++)
            for (int depth = -1; depth <= 2; depth++) { /* -1: tl_sort_doubles; else the budget */
                size_t n = sizes[s];
                double *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
                sort_input(a, n, k);
                memcpy(b, a, n * sizeof *a);
                if (depth < 0) tl_sort_doubles(a, n);
                else tl_sort_doubles_budget(a, n, depth);
                qsort(b, n, sizeof *b, cmp);
                size_t diff = 0; /* by value: -0 and +0 may trade places */
                for (size_t i = 0; i < n; i++) diff += a[i] != b[i];
                CHECK_EQ_INT(diff, 0);
                checked += n;
                free(a);
                free(b);
            }
    CHECK(checked > 3000000);
    /* -0 before +0, negative NaN first, positive NaN last: the keys' order,
     * the same on both paths */
    for (size_t n = 8; n <= 4096; n *= 8) {
        double *a = malloc(n * sizeof *a);
        for (size_t i = 0; i < n; i++) a[i] = i % 4 == 0 ? 0.0 : i % 4 == 1 ? -0.0 : (double)(n - i);
        a[3] = -NAN;
        a[5] = NAN;
        a[6] = -INFINITY;
        a[7] = INFINITY;
        tl_sort_doubles(a, n);
        CHECK(isnan(a[0]) && signbit(a[0]));
        CHECK(a[1] == -INFINITY);
        CHECK(isnan(a[n - 1]) && !signbit(a[n - 1]));
        CHECK(a[n - 2] == INFINITY);
        size_t z = 0;
        while (z < n && !(a[z] == 0)) z++;
        size_t neg = 0, bad = 0;
        for (size_t i = z; i < n && a[i] == 0; i++) {
            if (signbit(a[i])) bad += neg != i - z; /* every -0 before the first +0 */
            neg += signbit(a[i]) != 0;
        }
        CHECK(neg > 0);
        CHECK_EQ_INT(bad, 0);
        free(a);
    }
}

static void test_fmt(void)
{
    char buf[40];
    struct {
        double v;
        const char *s;
    } cases[] = {{0, "0"}, {1, "1"}, {0.01, "0.01"}, {0.32, "0.32"}, {0.1 + 0.2, "0.30000000000000004"},
                 {1e-05, "1e-05"}, {6.013421097, "6.013421097"}, {1680774973462610.0, "1680774973462610"},
                 {-2.5, "-2.5"}, {1e300, "1e+300"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tl_fmt_double(buf, sizeof buf, cases[i].v);
        CHECK_STR(buf, cases[i].s);
    }
    /* round-trips, and is the shortest: the reference tries every precision */
    int bad = 0, longer = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t u = next();
        double v;
        if (i % 2) memcpy(&v, &u, sizeof v);
        else v = (double)(u % 100000000) / pow(10, (double)(u >> 60)); /* few digits */
        if (!isfinite(v)) continue;
        size_t n = tl_fmt_double(buf, sizeof buf, v);
        if (strtod(buf, NULL) != v) bad++;
        char ref[40];
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(ref, sizeof ref, "%.*g", prec, v);
            if (strtod(ref, NULL) == v) break;
        }
        size_t ref_digits = strcspn(ref, "e") - (strchr(ref, '.') != NULL) - (ref[0] == '-');
        size_t digits = strcspn(buf, "e") - (strchr(buf, '.') != NULL) - (buf[0] == '-');
        if (v == floor(v) && fabs(v) < 1e17) continue; /* integers print in full */
        if (digits > ref_digits) longer++;
        (void)n;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(longer, 0);
    /* fixed notation, computed exactly in integers: every binade from 1e-4
     * to 1e15 at full precision, with the mantissas at a binade's edges
     * (the gap below the smallest is half as wide) */
    int fixed_bad = 0, fixed_longer = 0, fixed_differ = 0, fixed_n = 0;
    for (int i = 0; i < 300000; i++) {
        uint64_t u = next();
        double v = ldexp(1.0 + (double)(u >> 12) / 4503599627370496.0, (int)(u % 64) - 14);
        if (i % 7 == 0) v = ldexp(1.0, (int)(u % 64) - 14);
        if (i % 7 == 1) v = nextafter(ldexp(1.0, (int)(u % 64) - 14), 0);
        if (i % 7 == 2) v = nextafter(ldexp(1.0, (int)(u % 64) - 14), INFINITY);
        if (u & 1) v = -v;
        if (fabs(v) < 1e-4 || fabs(v) >= 1e15 || v == floor(v)) continue;
        fixed_n++;
        tl_fmt_double(buf, sizeof buf, v);
        if (strtod(buf, NULL) != v || strchr(buf, 'e')) fixed_bad++;
        char ref[40];
        int prec = 1;
        for (; prec <= 17; prec++) {
            snprintf(ref, sizeof ref, "%.*g", prec, v);
            if (strtod(ref, NULL) == v) break;
        }
        const char *sig = buf + strspn(buf, "-0."); /* leading zeros are not digits */
        size_t digits = strlen(sig) - (strchr(sig, '.') != NULL);
        if (digits > (size_t)prec) fixed_longer++;
        if (strtod(ref, NULL) == v && strcmp(ref, buf)) fixed_differ++;
    }
    CHECK(fixed_n > 250000);
    CHECK_EQ_INT(fixed_bad, 0);
    CHECK_EQ_INT(fixed_longer, 0);
    /* %g gives the correctly rounded digits; so does the nearest candidate,
     * except where the rounded one falls outside the interval (then ours is
     * shorter still): rare */
    CHECK(fixed_differ < fixed_n / 1000);
    const struct {
        double v;
        const char *s;
    } fixed[] = {{0.1, "0.1"},
                 {0.3, "0.3"},
                 {0.1 + 0.2, "0.30000000000000004"},
                 {0.9999999999999999, "0.9999999999999999"},
                 {1.0000000000000002, "1.0000000000000002"},
                 {0.0001, "0.0001"},
                 {0.00012345678901234567, "0.00012345678901234567"},
                 {-123456789012345.67, "-123456789012345.67"},
                 {6.56086254119873 * 1048576, "6879562.999999999"},
                 {152.201556, "152.201556"},
                 {5e-324 + 0.5, "0.5"}};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        tl_fmt_double(buf, sizeof buf, fixed[i].v);
        CHECK_STR(buf, fixed[i].s);
    }
    /* times in us (whole, decimal and below one second; 1 to 15 digits):
     * exactly the shortest %g, which prints them all in fixed notation */
    int us_differ = 0, us_n = 0;
    for (int i = 0; i < 300000; i++) {
        uint64_t u = next();
        uint64_t n = u % p10_u64[1 + (int)((u >> 59) % 15)];
        double v = (double)n / 1e6;
        if (u & 1) v = -v;
        if (fabs(v) < 1e-4 || v == floor(v)) continue;
        us_n++;
        tl_fmt_double(buf, sizeof buf, v);
        char ref[40];
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(ref, sizeof ref, "%.*g", prec, v);
            if (strtod(ref, NULL) == v) break;
        }
        if (strcmp(ref, buf) && us_differ++ < 5) fprintf(stderr, "us %s != %%g %s\n", buf, ref);
    }
    CHECK(us_n > 200000);
    CHECK_EQ_INT(us_differ, 0);
    /* a subnormal has fewer bits: 13 digits read back, not 15 */
    CHECK_EQ_INT(tl_fmt_double(buf, sizeof buf, -7.4213685044278369e-311), 20);
    CHECK_STR(buf, "-7.421368504428e-311");
}

/* Integers: every power of ten and its neighbours, the extremes, and
 * random values of every length, against printf. */
static void test_fmt_i64(void)
{
    char buf[TL_FMT_WIDE], ref[32];
    int bad = 0, n = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t u = next();
        int64_t v;
        if (i < 19 * 6) {
            int64_t p = 1;
            for (int k = 0; k < i / 6; k++) p *= 10;
            int64_t d[] = {p - 1, p, p + 1, -(p - 1), -p, -(p + 1)};
            v = d[i % 6];
        } else if (i < 19 * 6 + 4) {
            int64_t ends[] = {INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1};
            v = ends[i - 19 * 6];
        } else {
            v = (int64_t)(u >> (u % 64)); /* every length */
            if (u & 1) v = -v;
        }
        size_t len = i % 2 ? tl_fmt_i64_wide(buf, v) : tl_fmt_i64(buf, v);
        snprintf(ref, sizeof ref, "%lld", (long long)v);
        bad += len != strlen(ref) || strcmp(buf, ref);
        n++;
    }
    CHECK_EQ_INT(n, 200000);
    CHECK_EQ_INT(bad, 0);
}

/* Values from numpy 1.24: np.quantile(x, q) (method="linear"). */
static void test_quantile(void)
{
    double x[] = {1, 2, 3, 4, 10};
    CHECK_NEAR(tl_quantile_sorted(x, 5, 0), 1, 0);
    CHECK_NEAR(tl_quantile_sorted(x, 5, 1), 10, 0);
    CHECK_NEAR(tl_quantile_sorted(x, 5, 0.5), 3, 0);
    CHECK_NEAR(tl_quantile_sorted(x, 5, 0.95), 8.799999999999999, 0);
    CHECK_NEAR(tl_quantile_sorted(x, 5, 0.32), 2.2800000000000002, 0);
    CHECK_NEAR(tl_quantile_sorted(x, 5, 0.68), 3.7200000000000002, 0);
    CHECK_NEAR(tl_quantile_sorted(x, 5, 0.01), 1.04, 0);
    double one[] = {42};
    CHECK_NEAR(tl_quantile_sorted(one, 1, 0.99), 42, 0);
    CHECK(isnan(tl_quantile_sorted(one, 0, 0.5)));
    double q[16];
    CHECK_EQ_INT(tl_parse_quantile_list("0,0.01,0.5,1", q, 16), 4);
    CHECK_EQ_INT(tl_parse_quantile_list("0.5,1.5", q, 16), -1);
    CHECK_EQ_INT(tl_parse_quantile_list("0.5,", q, 16), 1);
    CHECK_EQ_INT(tl_parse_quantile_list("x", q, 16), -1);
}

static void test_map64(void)
{
    enum { N = 5000 };
    static uint64_t ref[N]; /* 0 = absent, else value */
    struct tl_map64 m = {0};
    for (int i = 0; i < 200000; i++) {
        uint64_t k = next() % N;
        if (next() % 3) {
            uint64_t v = next() | 1;
            CHECK(tl_map64_put(&m, k * 0x10001, v));
            ref[k] = v;
        } else {
            bool had = ref[k] != 0;
            CHECK(tl_map64_del(&m, k * 0x10001) == had);
            ref[k] = 0;
        }
    }
    size_t n = 0, wrong = 0;
    for (uint64_t k = 0; k < N; k++) {
        uint64_t *v = tl_map64_get(&m, k * 0x10001);
        if (ref[k]) n++;
        if ((v == NULL) != (ref[k] == 0) || (v && *v != ref[k])) wrong++;
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(m.n, n);
    tl_map64_free(&m);
}

static void test_intern(void)
{
    struct tl_intern *in = tl_intern_new(1000);
    int32_t a = tl_intern(in, "alpha", 5), b = tl_intern(in, "beta", 4);
    CHECK(a >= 0 && b >= 0 && a != b);
    CHECK_EQ_INT(tl_intern(in, "alpha", 5), a);
    CHECK_STR(tl_intern_str(in, a), "alpha");
    CHECK_EQ_INT(tl_intern_find(in, "gamma", 5), -1);
    char name[32];
    int32_t last = 0;
    for (int i = 0; i < 200 && last >= 0; i++) {
        snprintf(name, sizeof name, "name-%d", i);
        last = tl_intern(in, name, strlen(name));
    }
    CHECK(last == -1); /* the byte limit holds */
    CHECK_STR(tl_intern_str(in, a), "alpha");
    tl_intern_free(in);
}

/* The loader behind libcurl and librdkafka: a missing library and a
 * missing symbol are reported by name; a present one resolves and runs. */
static void test_dynlib(void)
{
    char err[256] = "";
    CHECK(tl_dynlib_open("libtasklens-no-such-library.so.7", err, sizeof err) == NULL);
    CHECK(strstr(err, "libtasklens-no-such-library.so.7") != NULL);
    void *h = tl_dynlib_open("libc.so.6", err, sizeof err);
    CHECK(h != NULL);
    if (!h) return;
    size_t (*len)(const char *) = NULL;
    CHECK(tl_dynlib_sym(h, "libc.so.6", "strlen", &len, err, sizeof err));
    CHECK(len && len("four") == 4);
    void (*none)(void) = NULL;
    CHECK(!tl_dynlib_sym(h, "libc.so.6", "tl_no_such_function", &none, err, sizeof err));
    CHECK(none == NULL && strstr(err, "tl_no_such_function") && strstr(err, "libc.so.6"));
}

/* tl_hash_bytes reads the tail of a string in one or two loads: the same
 * hash as taking its bytes one at a time, at every length and alignment,
 * and nothing outside the string read (the copy ends at a page's end
 * under ASan, which flags any load past it). */
static uint64_t hash_bytewise(const unsigned char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w = 0;
        for (int i = 0; i < 8; i++) w |= (uint64_t)s[i] << (8 * i);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++) w |= (uint64_t)s[i] << (8 * i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return h;
}

static void test_hash_tail(void)
{
    unsigned char src[64];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)(0x80 + i * 37); /* all bytes differ */
    int bad = 0;
    for (size_t n = 0; n <= 40; n++)
        for (size_t off = 0; off < 8; off++) {
            unsigned char *copy = malloc(n ? n : 1); /* exactly n bytes: ASan sees any overread */
            memcpy(copy, src + off, n);
            if (tl_hash_bytes(copy, n) != hash_bytewise(src + off, n)) bad++;
            free(copy);
        }
    CHECK_EQ_INT(bad, 0);
}

/* Durations in tables roll over units cleanly: from 0.1 us to 100,000 h,
 * each boundary approached from both sides, the cell never holds an
 * exponent (999.7 us once printed as 1e+03us), fits 7 characters below
 * 1000 h, and reads back to within the 3 digits it shows. */
static void test_human_seconds(void)
{
    static const struct {
        const char *unit;
        double s;
    } units[] = {{"us", 1e-6}, {"ms", 1e-3}, {"min", 60}, {"s", 1}, {"h", 3600}};
    int bad = 0;
    for (double v = 1e-7; v < 3.6e8; v *= 1.0007) {
        for (int side = -1; side <= 1; side++) {
            double x = v * (1 + side * 1e-12);
            char cell[32];
            tl_summary_human(cell, sizeof cell, x, TL_UNIT_SECONDS);
            char *end;
            double num = strtod(cell, &end);
            double scale = 0;
            for (size_t u = 0; u < sizeof units / sizeof *units && !scale; u++)
                if (!strcmp(end, units[u].unit)) scale = units[u].s;
            bool ok = !strchr(cell, 'e') && scale && (strlen(cell) <= 7 || x >= 999.5 * 3600) &&
                      fabs(num * scale - x) <= 0.005 * x;
            if (!ok && bad++ < 5) printf("%.17g s printed as '%s'\n", x, cell);
        }
    }
    CHECK_EQ_INT(bad, 0);
}

/* JSON strings of input names: valid UTF-8 is kept byte for byte, every
 * byte of anything else becomes U+FFFD, so the document always decodes. */
static void test_json_string_utf8(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "\"plain\""},
        {"q\"b\\n\n\x01", "\"q\\\"b\\\\n\\n\\u0001\""},
        {"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""}, /* é € 😀 */
        {"a\xff" "b", "\"a\xef\xbf\xbd" "b\""},                        /* not a lead byte */
        {"\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\""},           /* overlong '/' */
        {"\xe0\x80\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* overlong, 3 bytes */
        {"\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* a surrogate */
        {"\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* > U+10FFFF */
        {"x\xc3", "\"x\xef\xbf\xbd\""},                           /* cut at the end */
        {"\xe2\x82" "A", "\"\xef\xbf\xbd\xef\xbf\xbd" "A\""},          /* cut before an ASCII byte */
        {"\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\""},                /* U+10FFFF itself */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct tl_buf b = {0};
        tl_buf_put_json_string(&b, cases[i].in);
        CHECK_STR(tl_buf_cstr(&b), cases[i].out);
        tl_buf_free(&b);
    }
}

/* One attempt for the cause table: result, exit code (INT32_MIN: none),
 * and optionally a metric set. */
static enum tl_cause cause_of(const char *result, int32_t exit_code, int metric, double v)
{
    struct tl_record r;
    memset(&r, 0, sizeof r);
    r.kind = TL_REC_TASK;
    r.result = result;
    r.has_exit_code = exit_code != INT32_MIN;
    r.exit_code = r.has_exit_code ? exit_code : 0;
    if (metric >= 0) tl_record_set(&r, (enum tl_metric)metric, v);
    return tl_failure_cause(&r);
}

static enum tl_cause cause_of_143(double wall, double limit)
{
    struct tl_record r;
    memset(&r, 0, sizeof r);
    r.kind = TL_REC_TASK;
    r.result = "FAILED";
    r.has_exit_code = true;
    r.exit_code = 143;
    tl_record_set(&r, TL_M_WALL_TIME_S, wall);
    tl_record_set(&r, TL_M_REQ_WALL_TIME_S, limit);
    return tl_failure_cause(&r);
}

/* The glossary's causes, one case per rule, and every term of tl_glossary[]
 * defined in docs/glossary.md. */
static void test_glossary(void)
{
    CHECK_EQ_INT(cause_of("SUCCESS", 0, -1, 0), TL_CAUSE_NONE);
    CHECK_EQ_INT(cause_of("LIBRARY_EXIT", -1, -1, 0), TL_CAUSE_NONE);
    CHECK_EQ_INT(cause_of("CACHED", 0, -1, 0), TL_CAUSE_NONE);
    CHECK_EQ_INT(cause_of("SUCCESS", 1, -1, 0), TL_CAUSE_TASK_ERROR);
    CHECK_EQ_INT(cause_of("RESOURCE_EXHAUSTION", INT32_MIN, TL_M_LIMIT_MEMORY_BYTES, 5e7), TL_CAUSE_MEMORY);
    CHECK_EQ_INT(cause_of("RESOURCE_EXHAUSTION", INT32_MIN, TL_M_LIMIT_WALL_TIME_S, 60), TL_CAUSE_TIME);
    CHECK_EQ_INT(cause_of("RESOURCE_EXHAUSTION", INT32_MIN, TL_M_LIMIT_DISK_BYTES, 1e9), TL_CAUSE_DISK);
    CHECK_EQ_INT(cause_of("RESOURCE_EXHAUSTION", INT32_MIN, -1, 0), TL_CAUSE_UNKNOWN);
    CHECK_EQ_INT(cause_of("FAILED", 137, -1, 0), TL_CAUSE_MEMORY);
    CHECK_EQ_INT(cause_of("FAILED", 140, -1, 0), TL_CAUSE_TIME);
    CHECK_EQ_INT(cause_of_143(95, 100), TL_CAUSE_TIME);
    CHECK_EQ_INT(cause_of_143(10, 100), TL_CAUSE_TASK_ERROR);
    CHECK_EQ_INT(cause_of("MAX_WALL_TIME", INT32_MIN, -1, 0), TL_CAUSE_TIME);
    CHECK_EQ_INT(cause_of("FORSAKEN", INT32_MIN, -1, 0), TL_CAUSE_LOST_WORKER);
    CHECK_EQ_INT(cause_of("REQUEUED", INT32_MIN, -1, 0), TL_CAUSE_LOST_WORKER);
    CHECK_EQ_INT(cause_of("ExecutorLostFailure", INT32_MIN, -1, 0), TL_CAUSE_LOST_WORKER);
    CHECK_EQ_INT(cause_of("INPUT_MISSING", INT32_MIN, -1, 0), TL_CAUSE_MISSING_INPUT);
    CHECK_EQ_INT(cause_of("dep_fail", INT32_MIN, -1, 0), TL_CAUSE_MISSING_INPUT);
    CHECK_EQ_INT(cause_of("ABORTED", INT32_MIN, -1, 0), TL_CAUSE_NONE); /* cancelled: not failed */
    CHECK_EQ_INT(cause_of("CANCELED", -1, -1, 0), TL_CAUSE_NONE);
    CHECK(tl_result_cancelled("TaskKilled") && !tl_result_cancelled("FAILED"));
    CHECK_EQ_INT(cause_of("ExceptionFailure", INT32_MIN, -1, 0), TL_CAUSE_TASK_ERROR);
    CHECK_EQ_INT(cause_of("FAILED", INT32_MIN, -1, 0), TL_CAUSE_UNKNOWN);
    CHECK_EQ_INT(cause_of("UNKNOWN", -1, -1, 0), TL_CAUSE_UNKNOWN);
    CHECK_EQ_INT(cause_of(NULL, INT32_MIN, -1, 0), TL_CAUSE_NONE);
    /* the systems' own successes are never failures (Spark, Parsl, LSST's NoWorkFound) */
    CHECK_EQ_INT(cause_of("Success", INT32_MIN, -1, 0), TL_CAUSE_NONE);
    CHECK_EQ_INT(cause_of("exec_done", INT32_MIN, -1, 0), TL_CAUSE_NONE);
    CHECK_EQ_INT(cause_of("memo_done", INT32_MIN, -1, 0), TL_CAUSE_NONE);
    CHECK_EQ_INT(cause_of("NO_WORK", INT32_MIN, -1, 0), TL_CAUSE_NONE);
    CHECK(tl_attempt_verdict("LIBRARY_EXIT", true, -1) == TL_VERDICT_APART);
    CHECK(tl_attempt_verdict("(none)", true, 2) == TL_VERDICT_FAILED);
    CHECK(tl_attempt_verdict("(none)", false, 0) == TL_VERDICT_OK);
    for (int c = 1; c < TL_CAUSE_COUNT; c++) CHECK(tl_cause_name((enum tl_cause)c)[0]);

    const char *data = getenv("TL_TEST_DATA");
    if (!data) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/../../docs/glossary.md", data);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) return;
    static char doc[1 << 16];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = 0;
    fclose(f);
    for (size_t i = 0; i < tl_glossary_count; i++) {
        char row[128];
        snprintf(row, sizeof row, "\n| %s |", tl_glossary[i].term); /* a row of its table */
        if (!strstr(doc, row)) fprintf(stderr, "docs/glossary.md has no row for '%s'\n", tl_glossary[i].term);
        CHECK(strstr(doc, row) != NULL);
    }
}

/* The i-th value a formatter is checked against snprintf on: the fixed
 * cases first, then xorshift64 draws -- every `anyof`-th any finite double
 * at all, the others as `shaped` makes them. False: a draw to skip. */
static bool nth_test_double(int i, const double *fixed, int nfixed, uint64_t *bits, int anyof,
                            double (*shaped)(uint64_t bits, int i), double *v)
{
    if (i < nfixed) {
        *v = fixed[i];
        return true;
    }
    *bits ^= *bits << 13, *bits ^= *bits >> 7, *bits ^= *bits << 17;
    if (i % anyof == 0) {
        memcpy(v, bits, sizeof *v);
        return isfinite(*v);
    }
    *v = shaped(*bits, i);
    return true;
}

/* Few digits, as measurements are: ties in the shortest form. */
static double few_digits(uint64_t bits, int i)
{
    (void)i;
    double v = (double)(bits % 100000) / pow(10, (double)((bits >> 20) % 12)) * pow(10, (double)((bits >> 30) % 8));
    return bits >> 63 ? -v : v;
}

/* Hundredths and thousandths (ties in the decimal, not in binary), or
 * where a drawing's coordinates fall. */
static double decimals_or_coordinates(uint64_t bits, int i)
{
    if (i % 4 != 1) return (double)(bits >> 11) / 0x1p53 * 1400 - 100;
    double v = (double)(bits % 2000000) / (i % 8 == 1 ? 100 : 1000);
    return bits >> 63 ? -v : v;
}

/* tl_fmt_sig against snprintf("%.*g") itself: every magnitude, ties in the
 * shortest form (0.125, 2.675, 9.995), carries (9.9999 -> 10), the
 * exponent switch at 1e-5 and 10^sig, and 300,000 random doubles. */
static void test_fmt_sig(void)
{
    static const double fixed[] = {0.125,  2.675,   9.995, 999.5,  0.9995, 1e-5,    9.9999e-5, 1e-4,  123456,
                                   999.4,  1000,    0.001, 1e21,   1e-300, 5e-324,  1.7e308,   -2.5,  -0.00314,
                                   59.97,  59.949,  0.5,   1.5,    2.5,    1e15,    123.456,   4.2e-7, 100,
                                   1.0005, 1.00049, 3.14159265358979, 2.0 / 3, 0.1 + 0.2, 1e100, 6.02214076e23};
    uint64_t bits = 0x2545F4914F6CDD1DULL;
    int differ = 0, n = 0;
    char got[64], want[64];
    const int nfixed = (int)(sizeof fixed / sizeof *fixed);
    for (int i = 0; i < 300000 + nfixed; i++) {
        double v;
        if (!nth_test_double(i, fixed, nfixed, &bits, 3, few_digits, &v)) continue;
        for (int sig = 1; sig <= 6; sig++) {
            tl_fmt_sig(got, sizeof got, v, sig);
            snprintf(want, sizeof want, "%.*g", sig, v);
            n++;
            if (strcmp(got, want) && differ++ < 5)
                fprintf(stderr, "%.17g %%.%dg: got %s, printf %s\n", v, sig, got, want);
        }
    }
    CHECK_EQ_INT(differ, 0);
    CHECK(n > 1500000);
}

/* tl_fmt_fixed1 against snprintf("%.1f"): exact ties both ways (0.25,
 * 0.75, -0.25), products that round onto a tie (0.15, 0.45: below it,
 * 1.05: above), negative values that round to zero, the 2^48 switch,
 * 400,000 random doubles of every size and of a drawing's size. */
static void test_fmt_fixed1(void)
{
    static const double fixed[] = {0.25, 0.75, -0.25, -0.75, 0.15, 0.45, 1.05, 2.675, 0.05, -0.05, -0.04, -0.0,
                                   0.0, 1e-300, -1e-300, 0.95, 9.95, 99.95, 999.95, 0x1p48, -0x1p48, 0x1p48 - 0.5,
                                   1e300, 123.45, 1099.95, 4.2e-7, 5e-324, 0.05000000000000001};
    uint64_t bits = 0x9E3779B97F4A7C15ULL;
    int differ = 0, n = 0;
    char got[400], want[400];
    const int nfixed = (int)(sizeof fixed / sizeof *fixed);
    for (int i = 0; i < 400000 + nfixed; i++) {
        double v;
        if (!nth_test_double(i, fixed, nfixed, &bits, 4, decimals_or_coordinates, &v)) continue;
        tl_fmt_fixed1(got, sizeof got, v);
        snprintf(want, sizeof want, "%.1f", v);
        n++;
        if (strcmp(got, want) && differ++ < 5) fprintf(stderr, "%.17g %%.1f: got %s, printf %s\n", v, got, want);
    }
    CHECK_EQ_INT(differ, 0);
    CHECK(n > 350000);
}

int main(void)
{
    test_glossary();
    test_fmt_sig();
    test_fmt_fixed1();
    test_json_string_utf8();
    test_human_seconds();
    test_hash_tail();
    test_parse_double();
    test_parse_i64();
    test_number_edges();
    test_sort();
    test_jscan();
    test_fmt();
    test_fmt_i64();
    test_quantile();
    test_map64();
    test_intern();
    test_dynlib();
    return check_done("test_core");
}
