/* The Chrome trace parser: a fixture whose every record is worked out by
 * hand (tests/data/chrome/edge.json), exact µs -> ns conversion, truncated
 * containers, and byte-split independence: each real sample in
 * ../shared/chrome/samples fed in 1-, 7- and 64 KiB pieces gives the same
 * records, rejects and counters as fed whole. */
#include <dirent.h>
#include <stdint.h>

#include "check.h"
#include "collect.h"
#include "ingest/reader.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BY_FEATURE 1
#endif
#endif
#ifndef ASAN_BY_FEATURE
#define ASAN_BY_FEATURE 0
#endif

static const struct tl_parser *chrome(void)
{
    return tl_parser_find("chrome");
}

/* ---------------------------------------------------------------- a digest of everything emitted */

struct digest {
    uint64_t h;
    size_t records, rejects;
};

static void mix(struct digest *d, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) d->h = (d->h ^ s[i]) * 0x100000001b3ULL;
}

static void mix_str(struct digest *d, const char *s)
{
    mix(d, s ? s : "\x01(null)", s ? strlen(s) + 1 : 8);
}

static bool digest_lines = true; /* off where only whitespace differs */

static void digest_record(void *ctx, const struct tl_record *r)
{
    struct digest *d = ctx;
    d->records++;
    mix(d, &r->kind, sizeof r->kind);
    mix_str(d, r->category);
    mix_str(d, r->host);
    mix_str(d, r->worker);
    mix_str(d, r->workflow);
    mix(d, &r->time_ns, sizeof r->time_ns);
    mix(d, &r->task_id, sizeof r->task_id);
    mix_str(d, r->depends);
    if (digest_lines) mix(d, &r->line, sizeof r->line);
    mix(d, &r->present, sizeof r->present);
    for (int m = 0; m < TL_M_COUNT; m++)
        if (tl_record_has(r, (enum tl_metric)m)) mix(d, &r->v[m], sizeof r->v[m]);
}

static void digest_reject(void *ctx, uint64_t line, enum tl_reject why, const char *detail)
{
    struct digest *d = ctx;
    d->rejects++;
    mix(d, &line, sizeof line);
    mix(d, &why, sizeof why);
    mix_str(d, detail);
}

/* Feeds buf in pieces of `chunk` bytes (0 = whole) and digests the output,
 * counters included, and the edges its flows make. */
static struct digest run_chunked(const char *buf, size_t len, size_t chunk)
{
    struct digest d = {0xcbf29ce484222325ULL, 0, 0};
    struct tl_emit emit = {digest_record, digest_reject, &d, ~0u};
    struct tl_parser_inst inst;
    if (tl_parser_inst_init(&inst, chrome()) || tl_parser_inst_open(&inst, &emit, NULL, 0)) {
        CHECK(!"open");
        return d;
    }
    inst.p->set_name(inst.state, "x/trace.json");
    if (!chunk) chunk = len ? len : 1;
    for (size_t off = 0; off < len; off += chunk)
        inst.p->feed(inst.state, buf + off, len - off < chunk ? len - off : chunk);
    inst.p->finish(inst.state);
    struct tl_counter cs[TL_MAX_COUNTERS];
    size_t n = inst.p->counters(inst.state, cs, TL_MAX_COUNTERS);
    for (size_t i = 0; i < n; i++) {
        mix_str(&d, cs[i].name);
        mix(&d, &cs[i].value, sizeof cs[i].value);
    }
    tl_parser_inst_free(&inst);
    return d;
}

static char *slurp_decoded(const char *path, size_t *len)
{
    struct tl_reader *r;
    char err[256];
    if (tl_reader_open(path, &r, err, sizeof err)) return NULL;
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (cap - n < TL_READ_CHUNK) buf = realloc(buf, cap *= 2);
        size_t got;
        if (tl_reader_read(r, buf + n, cap - n, &got, err, sizeof err) || !got) break;
        n += got;
    }
    tl_reader_close(r);
    *len = n;
    return buf;
}

static void check_chunk_invariance(const char *name, const char *buf, size_t len, bool bytewise)
{
    struct digest whole = run_chunked(buf, len, 0);
    static const size_t chunks[] = {1, 7, 65536};
    for (size_t k = 0; k < sizeof chunks / sizeof *chunks; k++) {
        if (chunks[k] == 1 && !bytewise) continue;
        struct digest d = run_chunked(buf, len, chunks[k]);
        check_count++;
        if (d.h != whole.h || d.records != whole.records || d.rejects != whole.rejects) {
            check_failures++;
            fprintf(stderr, "%s in %zu-byte pieces: %zu records %zu rejects, whole: %zu %zu\n",
                    name, chunks[k], d.records, d.rejects, whole.records, whole.rejects);
        }
    }
}

/* ---------------------------------------------------------------- collect everything */

struct run {
    struct collected c;
    struct tl_counter counters[TL_MAX_COUNTERS];
    size_t ncounters;
};

static uint64_t counter(const struct run *r, const char *name)
{
    for (size_t i = 0; i < r->ncounters; i++)
        if (!strcmp(r->counters[i].name, name)) return r->counters[i].value;
    fprintf(stderr, "no counter %s\n", name);
    return UINT64_MAX;
}

/* text through the parser, with option `opt` set to `val` when opt is set */
static void run_text_opt(struct run *out, const char *text, size_t len, const char *opt,
                         const char *val)
{
    memset(out, 0, sizeof *out);
    struct tl_emit emit = {collect_record, collect_reject, &out->c, 0};
    struct tl_parser_inst inst;
    char err[128];
    if (tl_parser_inst_init(&inst, chrome())) return;
    if ((opt && tl_options_set(chrome()->options, inst.config, opt, val, err, sizeof err)) ||
        tl_parser_inst_open(&inst, &emit, NULL, 0)) {
        tl_parser_inst_free(&inst);
        return;
    }
    inst.p->feed(inst.state, text, len);
    inst.p->finish(inst.state);
    out->ncounters = inst.p->counters(inst.state, out->counters, TL_MAX_COUNTERS);
    tl_parser_inst_free(&inst);
}

static void run_text(struct run *out, const char *text, size_t len)
{
    run_text_opt(out, text, len, NULL, NULL);
}

static const struct tl_record *find(const struct run *r, enum tl_record_kind kind, const char *category)
{
    for (size_t i = 0; i < r->c.n; i++)
        if (r->c.recs[i].kind == kind && r->c.recs[i].category &&
            !strcmp(r->c.recs[i].category, category))
            return &r->c.recs[i];
    fprintf(stderr, "no record %s\n", category);
    return NULL;
}

static uint64_t line_of(const char *text, const char *needle)
{
    const char *at = strstr(text, needle);
    uint64_t line = 1;
    for (const char *p = text; at && p < at; p++) line += *p == '\n';
    return at ? line : 0;
}

static void test_edge_fixture(void)
{
    char path[1024];
    const char *data = getenv("TL_TEST_DATA");
    snprintf(path, sizeof path, "%s/chrome/edge.json", data ? data : "tests/data");
    size_t len;
    char *text = slurp(path, &len);
    CHECK(text != NULL);
    if (!text) return;
    text = realloc(text, len + 1);
    text[len] = '\0';
    check_chunk_invariance("edge.json", text, len, true);

    struct run r;
    run_text(&r, text, len);
    CHECK_EQ_INT(counter(&r, "ph_X"), 5);
    CHECK_EQ_INT(counter(&r, "ph_B"), 3);
    CHECK_EQ_INT(counter(&r, "ph_E"), 3);
    CHECK_EQ_INT(counter(&r, "ph_I"), 1);
    CHECK_EQ_INT(counter(&r, "ph_i"), 1);
    CHECK_EQ_INT(counter(&r, "ph_C"), 1);
    CHECK_EQ_INT(counter(&r, "ph_M"), 2);
    CHECK_EQ_INT(counter(&r, "ph_s"), 1);
    CHECK_EQ_INT(counter(&r, "durations"), 5);
    CHECK_EQ_INT(counter(&r, "samples"), 8);
    CHECK_EQ_INT(counter(&r, "open"), 2);
    CHECK_EQ_INT(counter(&r, "unmatched_end"), 1);
    CHECK_EQ_INT(counter(&r, "empty_events"), 1);
    CHECK_EQ_INT(counter(&r, "non_object_elements"), 1);
    CHECK_EQ_INT(counter(&r, "no_ph"), 1);
    CHECK_EQ_INT(counter(&r, "unterminated_array"), 0);
    CHECK_EQ_INT(r.c.n, 5 + 8 + 2);
    CHECK_EQ_INT(r.c.nrejects, 2);
    if (r.c.nrejects == 2) {
        CHECK_EQ_INT(r.c.reject_why[0], TL_REJ_BAD_FIELDS);
        CHECK_EQ_INT(r.c.reject_lines[0], line_of(text, "\"bad ts\""));
        CHECK_EQ_INT(r.c.reject_why[1], TL_REJ_BAD_FIELDS);
        CHECK_EQ_INT(r.c.reject_lines[1], line_of(text, "\"no phase\""));
    }

    /* "1769627046285342.0123456" µs: 19 digits kept, the rest rounds down */
    const struct tl_record *x = find(&r, TL_REC_TASK, "multi line");
    if (x) {
        CHECK_EQ_INT(x->time_ns, 1769627046285342012LL + 1500);
        CHECK(x->v[TL_M_WALL_TIME_S] == 1500 / 1e9);
        CHECK_STR(x->host, "host-a");
        CHECK_STR(x->worker, "worker \"two\"");
        CHECK_STR(x->workflow, "trace");
        CHECK_EQ_INT(x->line, line_of(text, "\"multi line\"") - 1); /* the line of its '{' */
    }
    x = find(&r, TL_REC_TASK, "caf\xC3\xA9 \xF0\x9F\x98\x80");
    if (x) {
        CHECK_EQ_INT(x->time_ns, 10000 + 2500000);
        CHECK(x->v[TL_M_WALL_TIME_S] == 2500000 / 1e9);
        CHECK_STR(x->host, "node-7"); /* a string pid names its host */
        CHECK(x->worker == NULL);
    }
    x = find(&r, TL_REC_TASK, "inner");
    if (x) CHECK(x->v[TL_M_WALL_TIME_S] == 20000 / 1e9);
    x = find(&r, TL_REC_TASK, "outer");
    if (x) {
        CHECK(x->v[TL_M_WALL_TIME_S] == 100000 / 1e9);
        CHECK_EQ_INT(x->time_ns, 200000);
    }
    x = find(&r, TL_REC_TASK, "first char");
    if (x) CHECK(x->v[TL_M_WALL_TIME_S] == 0);
    CHECK(find(&r, TL_REC_TASK_OPEN, "never closed") != NULL);
    CHECK(find(&r, TL_REC_TASK_OPEN, "no dur") != NULL);

    static const struct {
        const char *series;
        double v;
    } samples[] = {
        {"Resource Usage cpu", 12.5},
        {"Resource Usage memory", 1048576},
        {"Resource Usage host_net_io.read_bps", 10},
        {"[memory] Bytes (cuda:0)", -512},
        {"[memory] Total Allocated (cuda:0)", 4096},
        {"[memory] Total Reserved (cuda:0)", 8192},
        {"ctr[0x44] value", 0.75},
        {"ctr[0x44] other", 3},
    };
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        x = find(&r, TL_REC_SAMPLE, samples[i].series);
        if (x) CHECK(x->v[TL_M_SAMPLE_VALUE] == samples[i].v);
    }
    x = find(&r, TL_REC_SAMPLE, "Resource Usage cpu");
    if (x) {
        CHECK_STR(x->host, "c096");
        CHECK_EQ_INT(x->time_ns, 500000);
    }
    collected_free(&r.c);
    free(text);
}

/* ts as text -> the record's time (dur 0), or -1 when rejected. */
static int64_t time_of(const char *ts)
{
    char ev[256];
    snprintf(ev, sizeof ev, "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":%s,\"dur\":0}]", ts);
    struct run r;
    run_text(&r, ev, strlen(ev));
    int64_t t = r.c.n == 1 ? r.c.recs[0].time_ns : -1;
    collected_free(&r.c);
    return t;
}

/* Instant-event samples: the device (from any member) names every series,
 * whether args are walked once (up to 32 members) or twice (more). */
static void test_sample_args(void)
{
    for (int extra = 0; extra <= 40; extra += 40) {
        char ev[4096];
        int o = snprintf(ev, sizeof ev,
                         "[{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1,\"pid\":1,\"tid\":1,"
                         "\"args\":{\"Bytes\":512,\"Total Allocated\":\"7\",\"x\":{\"y\":1}");
        for (int i = 0; i < extra; i++) o += snprintf(ev + o, sizeof ev - (size_t)o, ",\"pad%d\":%d", i, i);
        snprintf(ev + o, sizeof ev - (size_t)o,
                 ",\"Device Type\":1,\"Device Id\":3,\"gpu_util\":0.5}}]");
        struct run r;
        run_text(&r, ev, strlen(ev));
        const struct tl_record *b = find(&r, TL_REC_SAMPLE, "[memory] Bytes (cuda:3)");
        const struct tl_record *g = find(&r, TL_REC_SAMPLE, "[memory] gpu_util (cuda:3)");
        CHECK(b && b->v[TL_M_SAMPLE_VALUE] == 512);
        CHECK(g && g->v[TL_M_SAMPLE_VALUE] == 0.5);
        /* a string is no instant-event sample; pad* and the Device keys match no glob */
        CHECK_EQ_INT(counter(&r, "samples"), 2);
        collected_free(&r.c);
    }
}

/* B/E pairs that overlap without nesting (B a, B b, E a, E b): each E closes
 * the innermost open B on its thread (the trace-event rule, as catapult
 * does), and the E whose name differs is counted as non-nested. */
static void test_overlapping_be(void)
{
    static const char ev[] =
        "[{\"name\":\"a\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":1},"
        "{\"name\":\"b\",\"ph\":\"B\",\"ts\":2,\"pid\":1,\"tid\":1},"
        "{\"name\":\"a\",\"ph\":\"E\",\"ts\":3,\"pid\":1,\"tid\":1},"
        "{\"name\":\"b\",\"ph\":\"E\",\"ts\":4,\"pid\":1,\"tid\":1},"
        "{\"name\":\"c\",\"ph\":\"B\",\"ts\":5,\"pid\":1,\"tid\":2},"
        "{\"name\":\"c\",\"ph\":\"E\",\"ts\":9,\"pid\":1,\"tid\":2}]";
    struct run r;
    run_text(&r, ev, strlen(ev));
    const struct tl_record *a = find(&r, TL_REC_TASK, "a"), *b = find(&r, TL_REC_TASK, "b"),
                           *c = find(&r, TL_REC_TASK, "c");
    CHECK(b && b->v[TL_M_WALL_TIME_S] == 1e-6); /* E a closed b, opened at 2 */
    CHECK(a && a->v[TL_M_WALL_TIME_S] == 3e-6); /* E b closed a, opened at 1 */
    CHECK(c && c->v[TL_M_WALL_TIME_S] == 4e-6);
    CHECK_EQ_INT(counter(&r, "non_nested_end"), 2);
    CHECK_EQ_INT(r.c.nrejects, 0);
    collected_free(&r.c);
}

/* Ray's timeline (ray.timeline()): a string pid (the node's address), a
 * string tid ("worker:<hex>"), fractional microsecond ts and dur. */
static void test_ray_timeline(void)
{
    static const char ev[] =
        "[{\"cat\":\"task::f\",\"name\":\"task::f\",\"pid\":\"127.0.0.1\",\"tid\":\"worker:0ab3\","
        "\"ts\":1700000000123456.7,\"dur\":1234.5,\"ph\":\"X\",\"cname\":\"generic_work\","
        "\"args\":{\"task_id\":\"c8ef\"}},"
        "{\"cat\":\"task::g\",\"name\":\"task::g\",\"pid\":\"127.0.0.1\",\"tid\":\"worker:77cd\","
        "\"ts\":1700000000200000.25,\"dur\":0.5,\"ph\":\"X\"}]";
    struct run r;
    run_text(&r, ev, strlen(ev));
    const struct tl_record *f = find(&r, TL_REC_TASK, "task::f"), *g = find(&r, TL_REC_TASK, "task::g");
    CHECK(f && f->v[TL_M_WALL_TIME_S] == 0.0012345);
    CHECK(f && f->time_ns == 1700000000124691200); /* the end, to the ns */
    CHECK(f && f->host && !strcmp(f->host, "127.0.0.1"));
    CHECK(f && f->worker && !strcmp(f->worker, "worker:0ab3"));
    CHECK(g && g->v[TL_M_WALL_TIME_S] == 5e-7);
    CHECK(g && g->time_ns == 1700000000200000750);
    CHECK_EQ_INT(r.c.nrejects, 0);
    collected_free(&r.c);
}

/* A counter may go below zero; past the double range (1e400 reads as inf)
 * it is no value: rejected with its line, the event's other samples kept. */
static void test_sample_range(void)
{
    static const char ev[] = "[{\"ph\":\"C\",\"name\":\"c\",\"ts\":1,\"pid\":1,"
                             "\"args\":{\"x\":1e400,\"y\":-3,\"z\":-1e999}}]";
    struct run r;
    run_text(&r, ev, strlen(ev));
    const struct tl_record *y = find(&r, TL_REC_SAMPLE, "c y");
    CHECK(y && y->v[TL_M_SAMPLE_VALUE] == -3);
    CHECK(!find(&r, TL_REC_SAMPLE, "c x") && !find(&r, TL_REC_SAMPLE, "c z"));
    CHECK_EQ_INT(r.c.nrejects, 2);
    CHECK_EQ_INT(r.c.reject_why[0], TL_REJ_BAD_VALUE);
    CHECK_EQ_INT(r.c.reject_lines[0], 1);
    CHECK_EQ_INT(counter(&r, "samples"), 1);
    collected_free(&r.c);
}

/* Which instant-event args are samples, for each kind of glob: a literal
 * name, "prefix*", a glob that opens with a wildcard (it can match any
 * first byte), fnmatch's other forms, and more globs than the first-byte
 * index holds (65 and on are all tried). */
static void test_sample_globs(void)
{
    static const char ev[] =
        "[{\"ph\":\"i\",\"name\":\"m\",\"ts\":1,\"args\":{\"Bytes\":1,\"XBytes\":2,"
        "\"gpu_x\":3,\"Total Reserved\":4,\"memory\":5,\"mem\":6,\"other\":7,\"g3\":8,"
        "\"last\":9,\"Mem\":10}}]";
    static const struct {
        const char *globs;
        const char *want; /* the sampled keys' values, in order */
    } cases[] = {
        {"*Bytes,gpu_*,Total?Reserved,mem", "1 2 3 4 6"},
        {"mem*", "5 6"},
        {"[Mm]em", "6 10"},
        {"*", "1 2 3 4 5 6 7 8 9 10"},
        {"", ""},
        {"nothing,zz*", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct run r;
        run_text_opt(&r, ev, strlen(ev), "sample_args", cases[i].globs);
        char got[128] = "";
        size_t o = 0;
        for (size_t k = 0; k < r.c.n && o < sizeof got - 8; k++)
            if (r.c.recs[k].kind == TL_REC_SAMPLE)
                o += (size_t)snprintf(got + o, sizeof got - o, "%s%g", o ? " " : "",
                                      r.c.recs[k].v[TL_M_SAMPLE_VALUE]);
        if (strcmp(got, cases[i].want))
            printf("sample_args \"%s\": got \"%s\", want \"%s\"\n", cases[i].globs, got, cases[i].want);
        CHECK_STR(got, cases[i].want);
        collected_free(&r.c);
    }
    /* 70 globs: g0..g68 and "last", the 70th */
    char many[1024];
    size_t o = 0;
    for (int i = 0; i < 69; i++) o += (size_t)snprintf(many + o, sizeof many - o, "g%d,", i);
    snprintf(many + o, sizeof many - o, "last");
    struct run r;
    run_text_opt(&r, ev, strlen(ev), "sample_args", many);
    CHECK_EQ_INT(counter(&r, "samples"), 2);
    CHECK(find(&r, TL_REC_SAMPLE, "m g3") != NULL);
    CHECK(find(&r, TL_REC_SAMPLE, "m last") != NULL);
    collected_free(&r.c);
}

/* More samples than one walk of args keeps (32): every one still comes
 * out, named with the device that follows them. */
static void test_many_samples(void)
{
    char ev[8192];
    int o = snprintf(ev, sizeof ev, "[{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1,\"args\":{");
    for (int i = 0; i < 40; i++) o += snprintf(ev + o, sizeof ev - (size_t)o, "\"k%d\":%d,", i, i);
    o += snprintf(ev + o, sizeof ev - (size_t)o,
                  "\"s\":\"5\",\"Device Type\":1,\"Device Id\":3}},"
                  "{\"ph\":\"C\",\"name\":\"ctr\",\"ts\":2,\"args\":{");
    for (int i = 0; i < 40; i++) o += snprintf(ev + o, sizeof ev - (size_t)o, "%s\"c%d\":\"%d\"", i ? "," : "", i, i);
    snprintf(ev + o, sizeof ev - (size_t)o, "}}]");
    for (int star = 0; star < 2; star++) {
        struct run r;
        run_text_opt(&r, ev, strlen(ev), "sample_args", star ? "*" : "k*");
        /* k0..k39 (and with "*" the two Device numbers; never the string
         * "5" of an instant event), then the counter's 40 numeric strings */
        CHECK_EQ_INT(counter(&r, "samples"), 40 + 2 * star + 40);
        int named = 0;
        for (size_t i = 0; i < r.c.n; i++) {
            const struct tl_record *x = &r.c.recs[i];
            if (x->kind != TL_REC_SAMPLE || strncmp(x->category, "[memory] ", 9)) continue;
            size_t n = strlen(x->category);
            named += n > 9 && !strcmp(x->category + n - 9, " (cuda:3)");
        }
        CHECK_EQ_INT(named, 40 + 2 * star);
        const struct tl_record *k39 = find(&r, TL_REC_SAMPLE, "[memory] k39 (cuda:3)");
        CHECK(k39 && k39->v[TL_M_SAMPLE_VALUE] == 39);
        const struct tl_record *c39 = find(&r, TL_REC_SAMPLE, "ctr c39");
        CHECK(c39 && c39->v[TL_M_SAMPLE_VALUE] == 39);
        collected_free(&r.c);
    }
}

/* An event's host and worker come from its pid and tid, named or not by
 * metadata events at any point, and are remembered for the last few keys:
 * what a record says must be what the names were when it was read. */
static void test_hosts_workers(void)
{
    static const char ev[] =
        "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":1},"
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"hostA\"}},"
        "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":2,\"ts\":2,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"b2\",\"pid\":1,\"tid\":2,\"ts\":2,\"dur\":1},"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"w1\"}},"
        "{\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":2,\"ts\":3,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"c2\",\"pid\":1,\"tid\":2,\"ts\":3,\"dur\":1},"
        /* renamed to a name the table already holds */
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"w1\"}},"
        "{\"ph\":\"X\",\"name\":\"d\",\"pid\":1,\"tid\":2,\"ts\":4,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"d2\",\"pid\":1,\"tid\":2,\"ts\":4,\"dur\":1},"
        /* string pids are host names; they alternate */
        "{\"ph\":\"X\",\"name\":\"e\",\"pid\":\"nodeX\",\"tid\":2,\"ts\":5,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"f\",\"pid\":\"nodeY\",\"tid\":2,\"ts\":6,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"g\",\"pid\":\"nodeX\",\"tid\":2,\"ts\":7,\"dur\":1},"
        /* six keys in turn, more than are remembered, then the first again */
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":3,\"args\":{\"name\":\"w3\"}},"
        "{\"ph\":\"X\",\"name\":\"h\",\"pid\":1,\"tid\":3,\"ts\":8,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"i\",\"pid\":1,\"tid\":4,\"ts\":8,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"j\",\"pid\":1,\"tid\":5,\"ts\":8,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":6,\"ts\":8,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"l\",\"pid\":1,\"tid\":7,\"ts\":8,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"m\",\"pid\":1,\"tid\":3,\"ts\":8,\"dur\":1},"
        /* a key too long to remember */
        "{\"ph\":\"X\",\"name\":\"n\",\"pid\":\"a-host-name-that-is-longer-than-forty-eight-bytes.example.org\","
        "\"tid\":2,\"ts\":9,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"o\",\"pid\":\"a-host-name-that-is-longer-than-forty-eight-bytes.example.org\","
        "\"tid\":2,\"ts\":9,\"dur\":1}]";
    static const struct {
        const char *name, *host, *worker;
    } want[] = {
        {"a", NULL, NULL},       {"b", "hostA", NULL},   {"c", "hostA", "w1"}, {"d", "w1", "w1"},
        {"b2", "hostA", NULL},   {"c2", "hostA", "w1"},  {"d2", "w1", "w1"},
        {"e", "nodeX", NULL},    {"f", "nodeY", NULL},   {"g", "nodeX", NULL}, {"h", "w1", "w3"},
        {"i", "w1", NULL},       {"j", "w1", NULL},      {"k", "w1", NULL},    {"l", "w1", NULL},
        {"m", "w1", "w3"},
        {"n", "a-host-name-that-is-longer-than-forty-eight-bytes.example.org", NULL},
        {"o", "a-host-name-that-is-longer-than-forty-eight-bytes.example.org", NULL},
    };
    struct run r;
    run_text(&r, ev, strlen(ev));
    CHECK_EQ_INT(r.c.nrejects, 0);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const struct tl_record *x = find(&r, TL_REC_TASK, want[i].name);
        CHECK(x != NULL);
        if (!x) continue;
        bool host_ok = want[i].host ? x->host && !strcmp(x->host, want[i].host) : !x->host;
        bool worker_ok = want[i].worker ? x->worker && !strcmp(x->worker, want[i].worker) : !x->worker;
        if (!host_ok || !worker_ok)
            printf("event %s: host %s worker %s, want %s %s\n", want[i].name, x->host ? x->host : "-",
                   x->worker ? x->worker : "-", want[i].host ? want[i].host : "-",
                   want[i].worker ? want[i].worker : "-");
        CHECK(host_ok);
        CHECK(worker_ok);
    }
    collected_free(&r.c);
}

static void test_exact_times(void)
{
    CHECK_EQ_INT(time_of("1699014078000000.0"), 1699014078000000000LL);
    CHECK_EQ_INT(time_of("4203669604595.407"), 4203669604595407LL);
    CHECK_EQ_INT(time_of("\"200.5\""), 200500);
    CHECK_EQ_INT(time_of("1.0005"), 1001); /* half away from zero, as llround */
    CHECK_EQ_INT(time_of("1.0004999"), 1000);
    CHECK_EQ_INT(time_of("1e3"), 1000000);
    CHECK_EQ_INT(time_of("2.5E-1"), 250);
    CHECK_EQ_INT(time_of("0.0004"), 0);
    CHECK_EQ_INT(time_of("9223372036854775.807"), INT64_MAX);
    CHECK_EQ_INT(time_of("9223372036854775.808"), -1); /* beyond int64 ns: rejected */
    CHECK_EQ_INT(time_of("\"1.5e\""), -1);
    CHECK_EQ_INT(time_of("\"\""), -1);
    CHECK_EQ_INT(time_of("null"), -1);
    /* Integers of 1-19 digits (16 and fewer are read a word at a time,
     * the rest digit by digit), leading zeros, and each as the event's
     * last member, where fewer than eight bytes follow it. */
    for (int last = 0; last <= 1; last++) {
        for (int nd = 1; nd <= 19; nd++) {
            for (int form = 0; form < 3; form++) {
                char num[24];
                for (int i = 0; i < nd; i++)
                    num[i] = form == 0 ? "1234567890123456789"[i] : form == 1 ? '9' : i == nd - 1 ? '7' : '0';
                num[nd] = '\0';
                unsigned long long v = strtoull(num, NULL, 10);
                int64_t want = v <= (unsigned long long)(INT64_MAX / 1000) ? (int64_t)v * 1000 : -1;
                int64_t got;
                if (last) {
                    char ev[128];
                    snprintf(ev, sizeof ev, "[{\"ph\":\"X\",\"name\":\"a\",\"dur\":0,\"ts\":%s}]", num);
                    struct run r;
                    run_text(&r, ev, strlen(ev));
                    got = r.c.n == 1 ? r.c.recs[0].time_ns : -1;
                    collected_free(&r.c);
                } else {
                    got = time_of(num);
                }
                if (got != want) fprintf(stderr, "  ts %s%s\n", num, last ? " (last)" : "");
                CHECK_EQ_INT(got, want);
            }
        }
    }
    /* what follows the digits makes them part of a longer number */
    CHECK_EQ_INT(time_of("1669783687464181.5"), 1669783687464181500LL);
    CHECK_EQ_INT(time_of("16697836874641.5e2"), 1669783687464150000LL);
    CHECK_EQ_INT(time_of("12345678E1"), 123456780000LL);
    CHECK_EQ_INT(time_of("12345678-1"), -1);
    CHECK_EQ_INT(time_of("-1669783687464181"), -1669783687464181000LL);
    /* 2^64 k + 5 for k = 6, 543, 5422: 21, 23 and 24 digits that wrap to 5 µs */
    CHECK_EQ_INT(time_of("110680464442257309701"), -1);
    CHECK_EQ_INT(time_of("10016582032024286527493"), -1);
    CHECK_EQ_INT(time_of("100018246367653188861957"), -1);
}

static void test_containers(void)
{
    struct run r;
    /* array without its ']' (catapult's writer): fine, no reject */
    const char *t1 = "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2},\n";
    run_text(&r, t1, strlen(t1));
    CHECK_EQ_INT(r.c.n, 1);
    CHECK_EQ_INT(r.c.nrejects, 0);
    CHECK_EQ_INT(counter(&r, "unterminated_array"), 1);
    collected_free(&r.c);
    /* a half-written last event: dropped, reported on its line */
    const char *t2 = "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2},\n{\"ph\":\"X\",\"na";
    run_text(&r, t2, strlen(t2));
    CHECK_EQ_INT(r.c.n, 1);
    CHECK_EQ_INT(r.c.nrejects, 1);
    if (r.c.nrejects == 1) {
        CHECK_EQ_INT(r.c.reject_why[0], TL_REJ_TRUNCATED);
        CHECK_EQ_INT(r.c.reject_lines[0], 2);
    }
    collected_free(&r.c);
    /* an object form that never closed (a crashed profiler): events kept */
    const char *t3 = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2}";
    run_text(&r, t3, strlen(t3));
    CHECK_EQ_INT(r.c.n, 1);
    CHECK_EQ_INT(r.c.nrejects, 1);
    if (r.c.nrejects == 1) CHECK_EQ_INT(r.c.reject_why[0], TL_REJ_TRUNCATED);
    collected_free(&r.c);
    /* not a trace */
    const char *t4 = "hello\n";
    run_text(&r, t4, strlen(t4));
    CHECK_EQ_INT(r.c.n, 0);
    CHECK_EQ_INT(r.c.nrejects, 1);
    if (r.c.nrejects == 1) CHECK_EQ_INT(r.c.reject_why[0], TL_REJ_BAD_DOCUMENT);
    collected_free(&r.c);
    /* invalid JSON inside one event: that event only */
    const char *t5 = "[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"name\":\"a\" \"oops\"},"
                     "{\"ph\":\"X\",\"name\":\"b\",\"ts\":1,\"dur\":2}]";
    run_text(&r, t5, strlen(t5));
    CHECK_EQ_INT(r.c.n, 1);
    CHECK_EQ_INT(r.c.nrejects, 1);
    if (r.c.nrejects == 1) CHECK_EQ_INT(r.c.reject_why[0], TL_REJ_BAD_JSON);
    collected_free(&r.c);
    /* nesting deeper than the parser follows: rejected, the run goes on */
    char deep[2048] = "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"name\":\"d\",\"args\":";
    for (int i = 0; i < 200; i++) strcat(deep, "[");
    for (int i = 0; i < 200; i++) strcat(deep, "]");
    strcat(deep, "},{\"ph\":\"X\",\"name\":\"ok\",\"ts\":1,\"dur\":1}]");
    run_text(&r, deep, strlen(deep));
    CHECK_EQ_INT(r.c.n, 1);
    CHECK_EQ_INT(r.c.nrejects, 1);
    collected_free(&r.c);
    /* an object without traceEvents */
    const char *t6 = "{\"a\": 1}";
    run_text(&r, t6, strlen(t6));
    CHECK_EQ_INT(r.c.nrejects, 1);
    if (r.c.nrejects == 1) CHECK_EQ_INT(r.c.reject_why[0], TL_REJ_NO_RESOURCES);
    collected_free(&r.c);
}

/* Whitespace between tokens in every legal place and form gives the same
 * records: compact, ": " and ", " (read in one test each), space before a
 * colon or comma, several spaces, tabs, CRLF and indented lines; in the
 * members the parser reads and in args it skips. Structure that is wrong
 * stays wrong however it is spaced. */
static void test_spacing(void)
{
    /* C: between key and value, S: after a value, O: after an opener */
    static const char tmpl[] =
        "[{O\"ph\"C\"X\"S\"name\"C\"n\"S\"cat\"C\"c\"S\"pid\"C1S\"tid\"C2S\"ts\"C10S"
        "\"dur\"C5S\"args\"C{O\"a\"C[O1S2S{O\"b\"C\"x\"}S[O]S{O}]S\"c\"Cnull}}]";
    static const struct {
        const char *c, *s, *o;
    } forms[] = {
        {":", ",", ""},           {": ", ", ", ""},          {" : ", " , ", " "},
        {":  ", ",  ", "  "},     {":\t", ",\t", "\t"},      {" :\n  ", "\r\n    ,\r\n  ", "\n      "},
        {"\n:\n", ",\n", "\n"},  {": ", ",\n        ", "\n    "},
    };
    digest_lines = false;
    struct digest first = {0};
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
        char text[1024];
        size_t n = 0;
        for (const char *t = tmpl; *t; t++) {
            const char *put = *t == 'C' ? forms[f].c : *t == 'S' ? forms[f].s : *t == 'O' ? forms[f].o : NULL;
            if (put) n += (size_t)snprintf(text + n, sizeof text - n, "%s", put);
            else text[n++] = *t;
        }
        struct digest d = run_chunked(text, n, 0);
        CHECK_EQ_INT(d.records, 1);
        CHECK_EQ_INT(d.rejects, 0);
        if (f == 0) first = d;
        else if (d.h != first.h) {
            CHECK(!"whitespace changed a record");
            fprintf(stderr, "  form %zu: %.*s\n", f, (int)n, text);
        }
    }
    digest_lines = true;
    static const char *const bad[] = {
        "[{\"ph\" \"X\",\"ts\":1,\"dur\":1}]",        /* no colon */
        "[{\"ph\"::\"X\",\"ts\":1,\"dur\":1}]",       /* two */
        "[{\"ph\": : \"X\",\"ts\":1,\"dur\":1}]",
        "[{\"ph\":\"X\",,\"ts\":1,\"dur\":1}]",       /* two commas */
        "[{\"ph\":\"X\", ,\"ts\":1,\"dur\":1}]",
        "[{\"ph\":\"X\" \"ts\":1,\"dur\":1}]",        /* no comma */
        "[{\"ph\":\"X\",\"ts\":1,\"dur\":1, }]",      /* trailing comma */
        "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"args\":{\"a\" 1}}]",
        "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"args\":{\"a\":1,}}]",
        "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"args\":[1,,2]}]",
        "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"args\":[1 2]}]",
        "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"args\":[1,\x01 2]}]", /* not whitespace */
        "[{\"ph\":\x01\"X\",\"ts\":1,\"dur\":1}]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct run r;
        run_text(&r, bad[i], strlen(bad[i]));
        CHECK_EQ_INT(r.c.n, 0);
        CHECK_EQ_INT(r.c.nrejects, 1);
        if (r.c.n || r.c.nrejects != 1) fprintf(stderr, "  accepted: %s\n", bad[i]);
        collected_free(&r.c);
    }
}

/* An event bigger than max_event is skipped without being kept. */
/* A name longer than the 4096-byte buffer is refused, never cut: two long
 * names cut to the same prefix would become one category (issue 55). The
 * event is rejected (limit) and counted; a name that fits is read whole,
 * with escapes in it or not. */
static void test_long_names(void)
{
    size_t cap = 4096, len = 0;
    char *text = malloc(5 * cap + 512);
    const char *a = "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"name\":\"\\\"";
    len += (size_t)sprintf(text + len, "%s", a);
    memset(text + len, 'a', cap - 3);
    len += cap - 3;
    len += (size_t)sprintf(text + len, "\u00e9tail\"},{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"name\":\"");
    memset(text + len, 'b', cap - 2);
    len += cap - 2;
    len += (size_t)sprintf(text + len, "\u00e9tail\"},{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"name\":\"");
    memset(text + len, 'c', cap - 100);
    len += cap - 100;
    len += (size_t)sprintf(text + len, "\\n\"}]");
    struct run r;
    run_text(&r, text, len);
    CHECK_EQ_INT(r.c.n, 1); /* the one that fits */
    CHECK(r.c.n == 1 && strlen(r.c.recs[0].category) == cap - 100 + 1 && r.c.recs[0].category[0] == 'c');
    CHECK_EQ_INT(r.c.nrejects, 2);
    CHECK(r.c.nrejects == 2 && r.c.reject_why[0] == TL_REJ_LIMIT && r.c.reject_why[1] == TL_REJ_LIMIT);
    collected_free(&r.c);
    free(text);
}

static void test_max_event(void)
{
    struct digest d = {0xcbf29ce484222325ULL, 0, 0};
    struct tl_emit emit = {digest_record, digest_reject, &d, 0};
    struct tl_parser_inst inst;
    CHECK(!tl_parser_inst_init(&inst, chrome()));
    char err[128];
    CHECK(!tl_options_set(chrome()->options, inst.config, "max_event", "1K", err, sizeof err));
    CHECK(!tl_parser_inst_open(&inst, &emit, NULL, 0));
    const char *head = "[{\"ph\":\"X\",\"name\":\"big\",\"ts\":1,\"dur\":1,\"args\":{\"s\":\"";
    inst.p->feed(inst.state, head, strlen(head));
    char pad[4096];
    memset(pad, 'x', sizeof pad);
    for (int i = 0; i < 4; i++) inst.p->feed(inst.state, pad, sizeof pad);
    const char *tail = "\"}},{\"ph\":\"X\",\"name\":\"small\",\"ts\":1,\"dur\":1}]";
    inst.p->feed(inst.state, tail, strlen(tail));
    inst.p->finish(inst.state);
    CHECK_EQ_INT(d.records, 1);
    CHECK_EQ_INT(d.rejects, 1);
    CHECK_EQ_INT(inst.p->stats(inst.state)->rejected_by[TL_REJ_TOO_LARGE], 1);
    tl_parser_inst_free(&inst);
}

static void test_real_samples(void)
{
    const char *shared = getenv("TL_SHARED_DIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/chrome/samples", shared ? shared : "../shared");
    DIR *dp = opendir(dir);
    if (!dp) {
        printf("SKIP real samples: %s absent\n", dir);
        return;
    }
    struct dirent *de;
    int files = 0;
    while ((de = readdir(dp))) {
        const char *n = de->d_name;
        size_t nl = strlen(n);
        if (!(nl > 5 && !strcmp(n + nl - 5, ".json")) && !(nl > 8 && !strcmp(n + nl - 8, ".json.gz")))
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, n);
        size_t len;
        char *buf = slurp_decoded(path, &len);
        CHECK(buf != NULL);
        if (!buf) continue;
#if defined(__SANITIZE_ADDRESS__) || ASAN_BY_FEATURE
        bool bytewise = len < (4u << 20); /* 1-byte feeds of 50 MB are minutes under ASan */
#else
        bool bytewise = true;
#endif
        check_chunk_invariance(n, buf, len, bytewise);
        printf("%-70s %10zu bytes%s\n", n, len, bytewise ? "" : " (1-byte pieces skipped)");
        free(buf);
        files++;
    }
    closedir(dp);
    CHECK(files >= 8);
}

/* ---------------------------------------------------------------- flows */

struct edges {
    char s[256];
    size_t tasks;
};

static void edge_record(void *ctx, const struct tl_record *r)
{
    struct edges *e = ctx;
    if (r->kind == TL_REC_TASK) e->tasks++;
    if (r->kind != TL_REC_EDGE) return;
    size_t n = strlen(e->s);
    snprintf(e->s + n, sizeof e->s - n, "%lld<-%s;", (long long)r->task_id, r->depends);
}

static struct edges flow_edges(const char *json, uint32_t kinds, size_t chunk)
{
    struct edges e = {"", 0};
    struct tl_emit emit = {edge_record, NULL, &e, kinds};
    struct tl_parser_inst inst;
    if (tl_parser_inst_init(&inst, chrome()) || tl_parser_inst_open(&inst, &emit, NULL, 0)) {
        CHECK(!"open");
        return e;
    }
    size_t len = strlen(json);
    for (size_t off = 0; off < len; off += chunk)
        inst.p->feed(inst.state, json + off, len - off < chunk ? len - off : chunk);
    inst.p->finish(inst.state);
    tl_parser_inst_free(&inst);
    return e;
}

/* Every way a flow binds (docs/path.md): s in a nest binds to the
 * innermost slice (3, not 2), t to the B/E slice around it on a thread
 * whose tid is a string where the flow's is a number, f without bp to
 * the next slice (written before its s), a lone f to nothing, v2's
 * bind_id; edges only for a consumer that names them. */
static void test_flows(void)
{
    static const char json[] =
        "{\"traceEvents\": [\n"
        "{\"ph\": \"f\", \"id\": 7, \"cat\": \"c\", \"name\": \"n\", \"pid\": 3, \"tid\": 3, \"ts\": 61},\n"
        "{\"ph\": \"X\", \"name\": \"outer\", \"pid\": 1, \"tid\": \"1\", \"ts\": 0, \"dur\": 100},\n"
        "{\"ph\": \"X\", \"name\": \"inner\", \"pid\": 1, \"tid\": \"1\", \"ts\": 10, \"dur\": 20},\n"
        "{\"ph\": \"s\", \"id\": 7, \"cat\": \"c\", \"name\": \"n\", \"pid\": 1, \"tid\": 1, \"ts\": 15},\n"
        "{\"ph\": \"B\", \"name\": \"mid\", \"pid\": 2, \"tid\": \"2\", \"ts\": 40},\n"
        "{\"ph\": \"t\", \"id\": 7, \"cat\": \"c\", \"name\": \"n\", \"pid\": 2, \"tid\": 2, \"ts\": 45},\n"
        "{\"ph\": \"E\", \"pid\": 2, \"tid\": \"2\", \"ts\": 60},\n"
        "{\"ph\": \"X\", \"name\": \"last\", \"pid\": 3, \"tid\": \"3\", \"ts\": 70, \"dur\": 40},\n"
        "{\"ph\": \"f\", \"id\": 99, \"cat\": \"c\", \"name\": \"n\", \"pid\": 3, \"tid\": 3, \"ts\": 0, \"bp\": \"e\"},\n"
        "{\"ph\": \"X\", \"name\": \"v2src\", \"pid\": 4, \"tid\": \"4\", \"ts\": 0, \"dur\": 5, "
        "\"bind_id\": \"0xa\", \"flow_out\": true},\n"
        "{\"ph\": \"X\", \"name\": \"v2dst\", \"pid\": 5, \"tid\": \"5\", \"ts\": 50, \"dur\": 55, "
        "\"bind_id\": \"0xa\", \"flow_in\": true}]}\n";
    uint32_t want = TL_KIND(TL_REC_TASK) | TL_KIND(TL_REC_EDGE);
    for (size_t chunk = 1; chunk <= sizeof json; chunk *= 3) {
        struct edges e = flow_edges(json, want, chunk);
        CHECK_STR(e.s, "5<-3;8<-5;11<-10;");
        CHECK_EQ_INT(e.tasks, 6);
    }
    struct edges all = flow_edges(json, 0, sizeof json);
    CHECK_STR(all.s, ""); /* kinds 0 (a daemon): no edges, nothing held */
}

int main(void)
{
    test_flows();
    test_edge_fixture();
    test_exact_times();
    test_sample_args();
    test_sample_range();
    test_overlapping_be();
    test_ray_timeline();
    test_sample_globs();
    test_many_samples();
    test_hosts_workers();
    test_containers();
    test_spacing();
    test_long_names();
    test_max_event();
    test_real_samples();
    printf("%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}
