/* The `task` point encoder against plain reference code:
 *   tag escaping    every length 0..40, every special at every position,
 *                   and strings that end right before an unreadable page
 *                   (the vector scan must not read past it);
 *   the value memo  a stream of records encoded with one encoder state
 *                   equals each record encoded on its own;
 *   numbers         every field reads back as the record's value;
 *   histograms      each bucket point's lo/hi tags are its vmrange's two
 *                   halves, bracket the values counted in it, and the
 *                   counts add up to the window's count. */
#include "check.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/aggregate.h"
#include "core/buf.h"
#include "core/numfmt.h"
#include "core/record.h"
#include "lp_ref.h"
#include "sinks/lineproto.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void init_task(struct tl_record *r)
{
    tl_record_init(r, TL_REC_TASK);
    r->source = "wq";
    r->workflow = "1@2024-01-01T00:00:00Z";
    r->host = "10.0.0.1";
    r->result = "SUCCESS";
    r->task_id = 7;
    r->attempt = 1;
    r->time_ns = 1700000000000000000LL;
    tl_record_set(r, TL_M_WALL_TIME_S, 1.5);
}

/* The category tag as encoded, or NULL when the point was refused. */
static const char *encoded_category(const char *cat, char *out, size_t cap)
{
    struct tl_record r;
    init_task(&r);
    r.category = cat;
    struct tl_buf b = {0};
    static struct tl_lp_stats st;
    int ok = tl_lp_task(&b, &r, &st);
    const char *res = NULL;
    if (ok) {
        tl_buf_putc(&b, '\0');
        const char *p = strstr(b.data, ",category="), *e = p ? strstr(p, ",host=") : NULL;
        if (p && e && (size_t)(e - p - 10) < cap) {
            memcpy(out, p + 10, (size_t)(e - p - 10));
            out[e - p - 10] = '\0';
            res = out;
        }
    }
    tl_buf_free(&b);
    return res;
}

static void test_escaping(void)
{
    const char specials[] = {',', ' ', '=', '\\', '\n', '\r', 'a', (char)0xC3};
    char s[64], got[160], want[160];
    int bad = 0, n_cases = 0;
    for (int len = 1; len <= 40; len++)
        for (int pos = 0; pos < len; pos++)
            for (size_t k = 0; k < sizeof specials; k++) {
                for (int i = 0; i < len; i++) s[i] = (char)('a' + i % 26);
                s[pos] = specials[k];
                s[len] = '\0';
                const char *w = lp_ref_escape(s, want), *g = encoded_category(s, got, sizeof got);
                n_cases++;
                if ((w == NULL) != (g == NULL) || (w && strcmp(w, g))) {
                    if (bad++ < 5)
                        fprintf(stderr, "escape len %d pos %d char %d: got %s want %s\n", len, pos,
                                specials[k], g ? g : "(refused)", w ? w : "(refused)");
                }
            }
    CHECK_EQ_INT(bad, 0);
    CHECK(n_cases > 6000);

    /* an attempt that was not its task's last carries retried=true, after
     * every other tag; a final one does not */
    {
        struct tl_record r;
        init_task(&r);
        r.category = "c";
        struct tl_buf b = {0};
        struct tl_lp_stats st0 = {0};
        r.final = true;
        CHECK_EQ_INT(tl_lp_task(&b, &r, &st0), 1);
        tl_buf_putc(&b, '\0');
        CHECK(b.data && !strstr(b.data, "retried") && strstr(b.data, ",final=true "));
        b.len = 0;
        r.final = false;
        CHECK_EQ_INT(tl_lp_task(&b, &r, &st0), 1);
        tl_buf_putc(&b, '\0');
        CHECK(b.data && strstr(b.data, ",workflow=1@2024-01-01T00:00:00Z,retried=true wall_time_s=1.5,") &&
              strstr(b.data, ",final=false "));
        tl_buf_free(&b);
    }

    /* a task's own key is a string field, quote and backslash escaped; one
     * holding a newline is left out (the point is still written) */
    {
        struct tl_record r;
        init_task(&r);
        r.category = "c";
        r.final = true;
        struct tl_buf b = {0};
        struct tl_lp_stats st0 = {0};
        r.task_key = "('f-1', 0, \"a\\b\")";
        CHECK_EQ_INT(tl_lp_task(&b, &r, &st0), 1);
        tl_buf_putc(&b, '\0');
        CHECK(b.data && strstr(b.data, ",task_key=\"('f-1', 0, \\\"a\\\\b\\\")\",final=true "));
        b.len = 0;
        r.task_key = "a\nb";
        CHECK_EQ_INT(tl_lp_task(&b, &r, &st0), 1);
        tl_buf_putc(&b, '\0');
        CHECK(b.data && !strstr(b.data, "task_key"));
        tl_buf_free(&b);
    }

    /* an extra tag: key and value escaped alike; a newline refuses the point */
    {
        struct tl_record r;
        init_task(&r);
        r.category = "c";
        r.n_tags = 1;
        r.tags[0].key = "k ey";
        r.tags[0].value = "v,a=l\\x";
        struct tl_buf b = {0};
        struct tl_lp_stats st0 = {0};
        CHECK_EQ_INT(tl_lp_task(&b, &r, &st0), 1);
        tl_buf_putc(&b, '\0');
        CHECK(b.data && strstr(b.data, ",k\\ ey=v\\,a\\=l\\x,retried=true ") != NULL);
        b.len = 0;
        r.tags[0].value = "two\nlines";
        CHECK_EQ_INT(tl_lp_task(&b, &r, &st0), 0);
        CHECK_EQ_INT(b.len, 0);
        CHECK_EQ_INT(st0.rejected_unwritable, 1);
        tl_buf_free(&b);
    }

    /* strings ending just before a page that cannot be read */
    long page = sysconf(_SC_PAGESIZE);
    char *mem = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(mem != MAP_FAILED);
    if (mem == MAP_FAILED) return;
    CHECK(mprotect(mem + page, (size_t)page, PROT_NONE) == 0);
    int guard_bad = 0;
    for (int len = 1; len <= 20; len++) {
        char *str = mem + page - len - 1;
        for (int i = 0; i < len; i++) str[i] = (char)('k' + i % 10);
        str[len / 2] = ',';
        str[len] = '\0';
        const char *w = lp_ref_escape(str, want), *g = encoded_category(str, got, sizeof got);
        guard_bad += !w || !g || strcmp(w, g);
    }
    CHECK_EQ_INT(guard_bad, 0);
    munmap(mem, (size_t)page * 2);
}

/* Random values of the kinds a real stream has: times in us, sizes in
 * bytes or MB, zeros, full-precision doubles, tiny and huge ones, and
 * some too long (24 characters) for the encoder to remember. */
static double value(void)
{
    uint64_t u = next();
    switch (u % 9) {
    case 0: return (double)(u >> 40) / 1e6;
    case 1: return (double)((u >> 50) * 1048576);
    case 2: return 0.0;
    case 3: return -0.0;
    case 4: return (double)(u >> 44) / 1e3 * 1048576;
    case 5: return ldexp((double)(u >> 11), -(int)(u >> 58) - 40);
    case 6: return (double)(u >> 12) * 1e-12;
    case 7: return -ldexp(1.0 + (double)(u >> 60) / 3.0, -1000); /* 16 of them, recurring */
    default: return (double)(u >> 3) / 7.0;
    }
}

static void test_memo(void)
{
    struct tl_lp_stats shared = {0};
    struct tl_buf stream = {0}, alone = {0};
    int differ = 0, unreadable = 0, fields = 0, refused = 0;
    /* tag values: prefixes of each other, escapes, lengths around the tag
     * memo's 62 bytes, and one that cannot be written */
    char x62[63], x63[64], x70[71];
    memset(x62, 'x', 62), x62[62] = '\0';
    memset(x63, 'x', 63), x63[63] = '\0';
    memset(x70, 'x', 70), x70[70] = '\0';
    const char *pool[] = {"a", "ab", "abc", "abcd", "a b", "a,b", "", NULL, x62, x63, x70,
                          "host-1", "host-12", "\u00e9t\u00e9", "end\\"};
    const int npool = (int)(sizeof pool / sizeof *pool);
    for (int i = 0; i < 20000; i++) {
        struct tl_record r;
        init_task(&r);
        /* each value in a fresh allocation of its own size */
        char *tags[5] = {0};
        for (int t = 0; t < 5; t++) {
            const char *v = pool[next() % (uint64_t)(npool - (next() % 50 != 0))];
            tags[t] = v ? strdup(v) : NULL;
        }
        r.category = tags[0], r.host = tags[1], r.result = tags[2], r.source = tags[3],
        r.workflow = tags[4];
        r.task_id = i;
        for (int m = 0; m < TL_M_COUNT; m++) {
            if (next() % 3 == 0) continue;
            /* a few metrics repeat often, as limits and sizes do */
            double v = (m % 4 == 0 && i % 5) ? 42.25 : value();
            if (next() % 50 == 0) v = NAN;
            tl_record_set(&r, (enum tl_metric)m, v);
        }
        struct tl_lp_stats fresh = {0};
        stream.len = alone.len = 0;
        int wrote = tl_lp_task(&stream, &r, &shared);
        if (wrote != tl_lp_task(&alone, &r, &fresh) || stream.len != alone.len ||
            memcmp(stream.data, alone.data, stream.len))
            differ++;
        for (int t = 0; t < 5; t++) free(tags[t]);
        if (!wrote) {
            refused++;
            continue;
        }
        /* every float field reads back as the value */
        tl_buf_putc(&stream, '\0');
        for (int m = 0; m < TL_M_COUNT; m++) {
            if (!tl_record_has(&r, (enum tl_metric)m) || !isfinite(r.v[m])) continue;
            char key[64];
            snprintf(key, sizeof key, "%c%s=", ' ', tl_metric_info[m].name);
            const char *p = strstr(stream.data, key);
            if (!p) {
                key[0] = ',';
                p = strstr(stream.data, key);
            }
            fields++;
            if (!p || strtod(p + strlen(key), NULL) != r.v[m]) unreadable++;
        }
    }
    CHECK_EQ_INT(differ, 0);
    CHECK_EQ_INT(unreadable, 0);
    CHECK(refused > 100 && refused < 2000); /* "end\\" as any of five tags, 1 in 50 */
    CHECK(fields > 300000);
    tl_buf_free(&stream);
    tl_buf_free(&alone);
}

/* Values that 15 or fewer significant digits represent print exactly as
 * the shortest %.Ng does (fixed notation from 1e-4 on, like %g). */
static void test_short_decimals(void)
{
    int differ = 0, n = 0;
    char buf[64], ref[64];
    for (int i = 0; i < 200000; i++) {
        uint64_t u = next();
        int digits = 1 + (int)(u % 15), scale = (int)((u >> 8) % 24) - 8;
        double v = (double)((u >> 16) % 1000000000000000ULL % (uint64_t)pow(10, digits)) /
                   pow(10, digits - 1) * pow(10, scale);
        if (u & (1 << 5)) v = -v;
        if (v == 0 || fabs(v) >= 1e15 || fabs(v) < 1e-8 || v == floor(v)) continue;
        int prec = 1;
        for (; prec <= 17; prec++) {
            snprintf(ref, sizeof ref, "%.*g", prec, v);
            if (strtod(ref, NULL) == v) break;
        }
        if (prec > 15) continue;
        n++;
        tl_fmt_double(buf, sizeof buf, v);
        if (strcmp(buf, ref)) {
            if (differ++ < 5) fprintf(stderr, "%.17g: got %s, %%.%dg gives %s\n", v, buf, prec, ref);
        }
    }
    CHECK(n > 80000);
    CHECK_EQ_INT(differ, 0);
    const struct {
        double v;
        const char *s;
    } cases[] = {{0.001, "0.001"}, {0.1, "0.1"},     {1e-5, "1e-05"},   {1.5e-8, "1.5e-08"},
                 {9.99e-5, "9.99e-05"}, {123.456, "123.456"}, {0.000347, "0.000347"},
                 {99999999999999.9, "99999999999999.9"}, {-2.5e-7, "-2.5e-07"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tl_fmt_double(buf, sizeof buf, cases[i].v);
        CHECK_STR(buf, cases[i].s);
    }
    /* the wide writer into a buffer of exactly its room, checked by ASan */
    char *wide = malloc(TL_FMT_WIDE);
    CHECK_EQ_INT(tl_fmt_double_wide(wide, -123456789012345.67), 19);
    free(wide);
}

/* A closed window's task_histogram points, as the sinks write them. */
struct hist_out {
    struct tl_buf b;
    struct tl_lp_stats st;
};

static void on_hist_window(void *ctx, const struct tl_agg_window *w)
{
    struct hist_out *h = ctx;
    static const char *const by[] = {"category"};
    if (!w->cumulative) tl_lp_histogram(&h->b, w, by, 1, "60s", "t", &h->st);
}

/* The value of tag `key` in a point's tag section [p, end), or "" */
static const char *tag_of(const char *p, const char *end, const char *key, char *out, size_t cap)
{
    char pat[32];
    snprintf(pat, sizeof pat, ",%s=", key);
    const char *t = strstr(p, pat);
    out[0] = '\0';
    if (!t || t >= end) return out;
    t += strlen(pat);
    size_t n = strcspn(t, ", ");
    if (n < cap) memcpy(out, t, n), out[n] = '\0';
    return out;
}

static void test_histogram_bounds(void)
{
    static struct hist_out h;
    struct tl_agg_opts o;
    tl_agg_opts_default(&o);
    o.nmetrics = 1;
    o.metrics[0] = TL_M_WALL_TIME_S;
    o.window_ns = 60000000000LL;
    struct tl_agg *a = tl_agg_new(&o, on_hist_window, &h);
    const int64_t t0 = 1700000040000000000LL;
    double vals[400];
    int nv = 0;
    for (int i = 0; i < 400; i++) { /* 1e-6 .. 1e6, a few negatives and zeros */
        double v = pow(10, -6 + 12.0 * (double)(next() % 100000) / 100000.0);
        if (i % 37 == 0) v = -v;
        if (i % 101 == 0) v = 0;
        vals[nv++] = v;
        struct tl_record r;
        init_task(&r);
        r.category = "c";
        r.final = true;
        r.time_ns = t0 + i;
        tl_record_set(&r, TL_M_WALL_TIME_S, v);
        tl_agg_add(a, &r);
    }
    tl_agg_close_window(a);
    tl_buf_putc(&h.b, '\0');
    long long counted = 0, window_count = -1;
    int points = 0, bad = 0;
    for (const char *line = h.b.data; *line; line = strchr(line, '\n') + 1) {
        const char *sp = strchr(line, ' ');
        char vr[96], lo[48], hi[48], want[104];
        if (strstr(line, " bucket=") != sp) {
            const char *c = strstr(line, " count=");
            if (c) window_count = atoll(c + 7);
            continue;
        }
        tag_of(line, sp, "vmrange", vr, sizeof vr);
        tag_of(line, sp, "lo", lo, sizeof lo);
        tag_of(line, sp, "hi", hi, sizeof hi);
        snprintf(want, sizeof want, "%s...%s", lo, hi);
        bad += strcmp(vr, want) != 0 || !(strtod(lo, NULL) < strtod(hi, NULL));
        long long n = atoll(sp + 8);
        int inside = 0; /* values in [lo, hi], within the labels' rounding */
        double l = strtod(lo, NULL), u = strtod(hi, NULL), slack = 1e-4 * fmax(fabs(l), fabs(u));
        for (int i = 0; i < nv; i++) inside += vals[i] >= l - slack && vals[i] <= u + slack;
        bad += inside < n;
        counted += n;
        points++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(points > 100);
    CHECK_EQ_INT(counted, nv);
    CHECK_EQ_INT(window_count, nv);
    printf("  histogram bounds: %d bucket points, lo/hi = vmrange's halves, %lld values\n", points,
           counted);
    tl_agg_free(a);
    tl_buf_free(&h.b);
}

/* A failed attempt carries its cause and failed=true (tags) (the glossary's
 * predicate, also for a SUCCESS with a non-zero exit); the rest neither,
 * and the encoder's memory of the last result never carries one over. */
static void test_failed_fields(void)
{
    static const struct {
        const char *result;
        int exit_code; /* -999: none */
        const char *want; /* NULL: no failed field */
    } cases[] = {
        {"SUCCESS", 0, NULL},
        {"SUCCESS", 1, ",cause=task_error,failed=true wall_time_s"},
        {"SUCCESS", 0, NULL},
        {"FAILED", 137, ",cause=memory,failed=true wall_time_s"},
        {"FAILED", -999, ",cause=unknown,failed=true wall_time_s"},
        {"LIBRARY_EXIT", -1, NULL},
        {"FORSAKEN", -999, ",cause=lost_worker,failed=true wall_time_s"},
        {"COMPLETED", 0, NULL},
        {"CANCELED", -1, NULL}, /* cancelled: counted apart, never failed */
        {"ABORTED", -999, NULL},
    };
    struct tl_lp_stats st = {0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct tl_record r;
        init_task(&r);
        r.category = "c";
        r.final = true;
        r.result = cases[i].result;
        r.has_exit_code = cases[i].exit_code != -999;
        r.exit_code = r.has_exit_code ? cases[i].exit_code : 0;
        struct tl_buf b = {0};
        CHECK_EQ_INT(tl_lp_task(&b, &r, &st), 1);
        tl_buf_putc(&b, '\0');
        if (cases[i].want) CHECK(b.data && strstr(b.data, cases[i].want));
        else CHECK(b.data && !strstr(b.data, "failed=") && !strstr(b.data, "cause="));
        tl_buf_free(&b);
    }
}

int main(void)
{
    test_failed_fields();
    test_escaping();
    test_memo();
    test_short_decimals();
    test_histogram_bounds();
    return check_done("test_lineproto");
}
