/* The parser against every real log in ../shared/wq/samples.
 *
 * For each file:
 *  - 0 rejected lines;
 *  - the parser's per-kind line counts equal (a) a naive, independent count
 *    made here by splitting each line on whitespace, and (b) the numbers in
 *    the table of shared/wq/samples/SOURCES.md, copied below;
 *  - final results per name equal the table's;
 *  - feeding the file in 1-byte, 7-byte and 64 KiB pieces gives exactly the
 *    same records as feeding it whole.
 * And for Parsl_dnpc__transaction_log, the mean WAITING -> RUNNING time of
 * its 50 tasks equals dnpc's own expected output to 1e-6 s. */
#include "check.h"
#include "collect.h"
#include "core/aggregate.h"

#include <stdint.h>

/* -1: the table does not state this number (then only the naive count is
 * compared). Order follows the parser's counters that the table covers. */
struct expect {
    const char *file;
    long start, end, waiting, ready, running, wret, retrieved, done;
    long conn, res, disc, w_transfer, w_cache, t_in, t_out, library;
    const char *results; /* "SUCCESS=50" etc., final results, sorted by name */
};

static const struct expect samples[] = {
    {"Parsl_dnpc__transaction_log", 1, 1, 50, 0, 50, 50, 50, 50, 1, 1, 1, 0, 0, 150, 100, 0,
     "SUCCESS=50"},
    {"BarrySlyDelgado_SC_TaskVineHEP_AD__wq_1j_run-1_tr", 4, 3, 404, 0, 317, 309, 309, 309, 4, 4,
     2, 0, 0, 1332, 618, 0, "SUCCESS=309"},
    {"ccl_taskvine-logs__colmena_wq.txn.log", 1, 1, 1228, 0, 1228, 1228, 1228, 1228, 102, 102, 102,
     0, 0, 3684, 1228, 0, "SUCCESS=1228"},
    {"ccl_taskvine-logs__blast_caching_700_workers_run_1_tr.log", 1, 1, 2004, 0, 2004, -1, -1,
     2000, 1108, 3172, 1108, 0, 6396, 4804, 0, 0, "SUCCESS=2000"},
    {"ccl_taskvine-logs__serverless_paper_200_workers_2000_tasks_transactions", 1, 1, 2430, 0,
     2422, 1992, 1992, 2298, 471, 2738, 475, 2734, 616, 0, 0, 630, "SUCCESS=1992 UNKNOWN=306"},
    {"ccl_taskvine-logs__taskvine_paper_colmena_transactions_peer_enabled", 1, 1, 1237, 0, 1237,
     -1, -1, 1228, 131, 1652, 131, 7710, 5020, 0, 0, 0, "SUCCESS=1228"},
    {"ccl_taskvine-example-logs__lnni_transactions", 1, 0, 0, 1500, 690, 429, 430, 430, 183, 561,
     33, 567, 935, 0, 0, 460, "LIBRARY_EXIT=198 SUCCESS=231 UNKNOWN=1"},
    {"ccl_taskvine-report-tool__test_example_transactions", 1, 1, 0, 28, 28, 28, 28, 28, 1, 1, 1,
     31, 28, 0, 0, 0, "SUCCESS=28"},
};

/* Parser counter names, in struct expect order. */
static const char *const counter_for[] = {
    "MANAGER START",   "MANAGER END",      "TASK WAITING",         "TASK READY",
    "TASK RUNNING",    "TASK WAITING_RETRIEVAL", "TASK RETRIEVED",  "TASK DONE",
    "WORKER CONNECTION", "WORKER RESOURCES", "WORKER DISCONNECTION", "WORKER TRANSFER",
    "WORKER CACHE_UPDATE", "TRANSFER INPUT", "TRANSFER OUTPUT",     "LIBRARY",
};
#define NCOUNTERS (sizeof counter_for / sizeof *counter_for)

/* Independent count: whitespace split, look at fixed word positions. */
static void naive_count(const char *buf, size_t len, long out[NCOUNTERS])
{
    memset(out, 0, NCOUNTERS * sizeof *out);
    char *copy = malloc(len + 1);
    memcpy(copy, buf, len);
    copy[len] = '\0';
    char *save_line = NULL;
    for (char *line = strtok_r(copy, "\n", &save_line); line;
         line = strtok_r(NULL, "\n", &save_line)) {
        if (line[0] == '#') continue;
        char *w[8] = {0};
        int n = 0;
        char *save = NULL;
        for (char *t = strtok_r(line, " \r", &save); t && n < 8; t = strtok_r(NULL, " \r", &save))
            w[n++] = t;
        if (n < 3) continue;
        const char *kind = w[2];
        if (!strcmp(kind, "MANAGER") || !strcmp(kind, "MASTER")) {
            const char *ev = n > 3 && (w[3][0] < '0' || w[3][0] > '9') ? w[3] : (n > 4 ? w[4] : "");
            if (!strcmp(ev, "START")) out[0]++;
            if (!strcmp(ev, "END")) out[1]++;
        } else if (!strcmp(kind, "TASK") && n > 4) {
            const char *s = w[4];
            if (!strcmp(s, "WAITING")) out[2]++;
            else if (!strcmp(s, "READY")) out[3]++;
            else if (!strcmp(s, "RUNNING")) out[4]++;
            else if (!strcmp(s, "WAITING_RETRIEVAL")) out[5]++;
            else if (!strcmp(s, "RETRIEVED")) out[6]++;
            else if (!strcmp(s, "DONE")) out[7]++;
        } else if (!strcmp(kind, "WORKER") && n > 4) {
            for (int i = 4; i <= 5 && i < n; i++) {
                if (!strcmp(w[i], "CONNECTION")) out[8]++;
                else if (!strcmp(w[i], "DISCONNECTION")) out[10]++;
                else continue;
                break;
            }
            if (!strcmp(w[4], "RESOURCES")) out[9]++;
            if (!strcmp(w[4], "TRANSFER")) out[11]++;
            if (!strcmp(w[4], "CACHE_UPDATE") || !strcmp(w[4], "CACHE-UPDATE")) out[12]++;
        } else if (!strcmp(kind, "TRANSFER") && n > 3) {
            if (!strcmp(w[3], "INPUT")) out[13]++;
            if (!strcmp(w[3], "OUTPUT")) out[14]++;
        } else if (!strcmp(kind, "LIBRARY") || !strcmp(kind, "DUTY")) {
            out[15]++;
        }
    }
    free(copy);
}

static uint64_t counter(const struct tl_parser *p, void *state, const char *name)
{
    struct tl_counter c[TL_MAX_COUNTERS];
    size_t n = p->counters(state, c, TL_MAX_COUNTERS);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c[i].name, name)) return c[i].value;
    return UINT64_MAX;
}

/* "A=1 B=2" of final results, names sorted */
static void results_of(const struct collected *c, char *out, size_t cap)
{
    const char *names[64];
    long counts[64];
    int n = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct tl_record *r = &c->recs[i];
        if (r->kind != TL_REC_TASK || !r->final) continue;
        int j;
        for (j = 0; j < n; j++)
            if (!strcmp(names[j], r->result)) break;
        if (j == n && n < 64) {
            names[n] = r->result;
            counts[n++] = 0;
        }
        counts[j]++;
    }
    for (int i = 1; i < n; i++) /* sort by name */
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
            long x = counts[j];
            counts[j] = counts[j - 1];
            counts[j - 1] = x;
        }
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s=%ld", i ? " " : "", names[i],
                 counts[i]);
}

static int record_differs(const struct tl_record *a, const struct tl_record *b)
{
#define SEQ(x, y) ((x) == (y) || ((x) && (y) && !strcmp((x), (y))))
    if (a->kind != b->kind || a->task_id != b->task_id || a->attempt != b->attempt ||
        a->final != b->final || a->time_ns != b->time_ns || memcmp(a->present, b->present, sizeof a->present) ||
        a->line != b->line || a->exit_code != b->exit_code)
        return 1;
    if (!SEQ(a->category, b->category) || !SEQ(a->worker, b->worker) || !SEQ(a->host, b->host) ||
        !SEQ(a->result, b->result) || !SEQ(a->workflow, b->workflow) || !SEQ(a->state, b->state))
        return 1;
    for (int m = 0; m < TL_M_COUNT; m++)
        if (tl_record_has(a, (enum tl_metric)m) && memcmp(&a->v[m], &b->v[m], sizeof(double)))
            return 1;
    return 0;
#undef SEQ
}

static void check_sample(const struct tl_parser *wq, const char *dir, const struct expect *e)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, e->file);
    size_t len;
    char *buf = slurp(path, &len);
    CHECK(buf != NULL);
    if (!buf) return;
    struct collected c = {0};
    struct tl_parser_inst inst;
    const struct tl_parse_stats *st = parse_buffer(wq, buf, len, 0, &c, &inst);
    printf("%s: %llu lines, %llu records, %llu rejected\n", e->file,
           (unsigned long long)st->lines, (unsigned long long)st->records,
           (unsigned long long)st->rejected);
    CHECK_EQ_INT(st->rejected, 0);

    long naive[NCOUNTERS];
    naive_count(buf, len, naive);
    const long *table = &e->start;
    for (size_t i = 0; i < NCOUNTERS; i++) {
        uint64_t got = counter(wq, inst.state, counter_for[i]);
        if ((long)got != naive[i] || (table[i] >= 0 && (long)got != table[i]))
            fprintf(stderr, "  %s: %s parser %llu, naive %ld, SOURCES.md %ld\n", e->file,
                    counter_for[i], (unsigned long long)got, naive[i], table[i]);
        CHECK_EQ_INT(got, naive[i]);
        if (table[i] >= 0) CHECK_EQ_INT(got, table[i]);
    }
    char res[512];
    results_of(&c, res, sizeof res);
    CHECK_STR(res, e->results);
    uint64_t lines = st->lines;
    tl_parser_inst_free(&inst);

    static const size_t steps[] = {1, 7, 65536};
    for (size_t s = 0; s < 3; s++) {
        struct collected c2 = {0};
        struct tl_parser_inst inst2;
        parse_buffer(wq, buf, len, steps[s], &c2, &inst2);
        CHECK_EQ_INT(c2.n, c.n);
        size_t diffs = 0;
        for (size_t i = 0; i < c.n && i < c2.n; i++) diffs += record_differs(&c.recs[i], &c2.recs[i]);
        if (diffs) fprintf(stderr, "  %s: %zu records differ with %zu-byte pieces\n", e->file, diffs, steps[s]);
        CHECK_EQ_INT(diffs, 0);
        tl_parser_inst_free(&inst2);
        collected_free(&c2);
    }
    /* asked for the aggregator's kinds only (as `summary` asks): the same
     * lines, records counted and rejects, and exactly the records of those
     * kinds, identical and in the same order */
    {
        struct collected ca = {0};
        struct tl_parser_inst ia;
        const struct tl_parse_stats *sa =
            parse_buffer_kinds(wq, buf, len, 65536, TL_AGG_KINDS, &ca, &ia);
        CHECK_EQ_INT(sa->lines, lines);
        CHECK_EQ_INT(sa->records, c.n);
        CHECK_EQ_INT(sa->rejected, 0);
        size_t j = 0, diffs = 0, others = 0;
        for (size_t i = 0; i < c.n; i++) {
            if (!(TL_AGG_KINDS & TL_KIND(c.recs[i].kind))) {
                others++;
                continue;
            }
            if (j >= ca.n || record_differs(&c.recs[i], &ca.recs[j])) diffs++;
            j++;
        }
        CHECK_EQ_INT(ca.n, j);
        CHECK_EQ_INT(diffs, 0);
        CHECK(others > 0); /* worker, workflow, manager records were left out */
        tl_parser_inst_free(&ia);
        collected_free(&ca);
    }
    /* checkpoints: after every piece, save the state, throw the parser
     * away and continue in a new one restored from the bytes -- the records
     * must be the same as in one uninterrupted pass */
    {
        struct collected c3 = {0};
        struct tl_emit emit = {collect_record, collect_reject, &c3, 0};
        struct tl_parser_inst in3;
        tl_parser_inst_init(&in3, wq);
        tl_parser_inst_open(&in3, &emit, NULL, 0);
        struct tl_buf saved = {0};
        size_t restores = 0, step = 65521;
        for (size_t off = 0; off < len; off += step) {
            wq->feed(in3.state, buf + off, len - off < step ? len - off : step);
            saved.len = 0;
            CHECK_EQ_INT(wq->save(in3.state, &saved), TL_OK);
            tl_parser_inst_free(&in3);
            tl_parser_inst_init(&in3, wq);
            tl_parser_inst_open(&in3, &emit, NULL, 0);
            enum tl_err rc = wq->restore(in3.state, (const uint8_t *)saved.data, saved.len);
            CHECK_EQ_INT(rc, TL_OK);
            restores += rc == TL_OK;
        }
        wq->finish(in3.state);
        CHECK_EQ_INT(wq->stats(in3.state)->lines, lines);
        CHECK_EQ_INT(c3.n, c.n);
        size_t diffs = 0;
        for (size_t i = 0; i < c.n && i < c3.n; i++) diffs += record_differs(&c.recs[i], &c3.recs[i]);
        if (diffs) fprintf(stderr, "  %s: %zu records differ across %zu restores\n", e->file, diffs, restores);
        CHECK_EQ_INT(diffs, 0);
        /* a damaged state is refused, never half-used */
        if (saved.len > 8) {
            struct tl_parser_inst bad;
            tl_parser_inst_init(&bad, wq);
            tl_parser_inst_open(&bad, &emit, NULL, 0);
            CHECK(wq->restore(bad.state, (const uint8_t *)saved.data, saved.len - 3) != TL_OK);
            tl_parser_inst_free(&bad);
        }
        tl_buf_free(&saved);
        tl_parser_inst_free(&in3);
        collected_free(&c3);
    }
    collected_free(&c);
    free(buf);
}

/* dnpc's "Mean times for most common event sequence": the RUNNING row's
 * cumulative mean is the mean WAITING -> RUNNING time. */
static void check_dnpc_queue_time(const struct tl_parser *wq, const char *dir)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/Parsl_dnpc__list_event_sequences.out.expected", dir);
    size_t len;
    char *exp = slurp(path, &len);
    CHECK(exp != NULL);
    if (!exp) return;
    double expected = NAN;
    for (char *line = strtok(exp, "\n"); line; line = strtok(NULL, "\n")) {
        double cumul, inter;
        char name[128];
        if (sscanf(line, " %lf %lf %127s", &cumul, &inter, name) == 3 &&
            !strcmp(name, "workqueue.task/RUNNING"))
            expected = cumul;
    }
    free(exp);
    CHECK(expected == expected);
    snprintf(path, sizeof path, "%s/Parsl_dnpc__transaction_log", dir);
    char *buf = slurp(path, &len);
    if (!buf) return;
    struct collected c = {0};
    struct tl_parser_inst inst;
    parse_buffer(wq, buf, len, 0, &c, &inst);
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < c.n; i++)
        if (c.recs[i].kind == TL_REC_TASK && c.recs[i].final &&
            tl_record_has(&c.recs[i], TL_M_QUEUE_TIME_S)) {
            sum += c.recs[i].v[TL_M_QUEUE_TIME_S];
            n++;
        }
    CHECK_EQ_INT(n, 50);
    printf("dnpc mean WAITING->RUNNING: expected %.9f, tasklens %.9f\n", expected, sum / n);
    CHECK(fabs(sum / n - expected) <= 1e-6);
    tl_parser_inst_free(&inst);
    collected_free(&c);
    free(buf);
}

int main(void)
{
    const char *shared = getenv("TL_SHARED_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/wq/samples", shared ? shared : "../shared");
    FILE *probe = fopen(dir, "r");
    if (!probe) {
        snprintf(dir + strlen(dir), sizeof dir - strlen(dir), " not found");
        check_skip(dir);
    }
    fclose(probe);
    const struct tl_parser *wq = tl_parser_find("wq");
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) check_sample(wq, dir, &samples[i]);
    check_dnpc_queue_time(wq, dir);
    return check_done("test_wq_corpus");
}
