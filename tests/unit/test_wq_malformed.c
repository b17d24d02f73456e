/* Bad input never stops a run, and nothing valid around it is lost.
 *
 * A log of valid lifecycles with every kind of damage wedged between them:
 * a truncated line, bad JSON, an unknown record, binary garbage, a 10 MB
 * line, NUL bytes, a non-numeric timestamp. CRLF line endings are not
 * damage: those lines must parse. Each rejected line is reported once, with
 * its line number and reason, and every valid task still comes out. */
#include "check.h"
#include "collect.h"
#include "core/aggregate.h"

#include "core/buf.h"
#include "core/numfmt.h"

#include <math.h>
#include <stdlib.h>

static void add_task(struct tl_buf *b, int id, const char *eol)
{
    tl_buf_printf(b, "17000000%02d000000 42 TASK %d WAITING cat FIRST_RESOURCES {}%s", id, id, eol);
    tl_buf_printf(b, "17000000%02d100000 42 TASK %d RUNNING 10.0.0.1:9  FIRST_RESOURCES "
                     "{\"cores\":[1,\"cores\"]}%s", id, id, eol);
    tl_buf_printf(b, "17000000%02d200000 42 TASK %d WAITING_RETRIEVAL 10.0.0.1:9 %s", id, id, eol);
    tl_buf_printf(b, "17000000%02d300000 42 TASK %d RETRIEVED SUCCESS  0  {} "
                     "{\"memory\":[%d,\"MB\"]}%s", id, id, id, eol);
    tl_buf_printf(b, "17000000%02d400000 42 TASK %d DONE SUCCESS  0  {} {\"memory\":[%d,\"MB\"]}%s",
                  id, id, id, eol);
}

/* The numbers of transfers and cache updates a consumer does not use are
 * validated without being converted: each verdict must be tl_parse_double's.
 * Tokens: edge cases, then random ones over digits, '.', '-', 'e', '+'. A
 * token is the size of a TRANSFER line and the first of a cache update's
 * numbers ("name X 4116": an X that is no number leaves one, rejected). */
static void test_transfer_numbers(void)
{
    static const char *edge[] = {"0", "00", "-0", "007", "0.5", "00.5", "-007", "1.", ".5", "1.5",
                                 "-1.5", "-", "--1", "1-", "1e5", "1E+5", "1e", "1e-", "2.5e-3",
                                 "nan", "inf", "-inf", "infinity", "12x", "1.2.3", "0.000",
                                 "123456789012345678901234567890", "0.00000000000000000000000012345",
                                 "1e289", "1e290", "1.5e307", "1e308", "1e309", "-1e400"};
    struct tl_buf tok[2200];
    int ntok = 0;
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
        tok[ntok] = (struct tl_buf){0};
        tl_buf_puts(&tok[ntok++], edge[i]);
    }
    /* past 400 bytes tl_parse_double converts only what it can exactly */
    for (int len = 399; len <= 402; len++)
        for (int form = 0; form < 3; form++) {
            struct tl_buf *t = &tok[ntok++];
            *t = (struct tl_buf){0};
            tl_buf_puts(t, form == 2 ? "-1" : "1");
            while (t->len < (size_t)len - (form == 1 ? 2 : 0)) tl_buf_puts(t, "0");
            if (form == 1) tl_buf_puts(t, ".5");
        }
    srand(7);
    static const char alphabet[] = "0123456789000.-e+";
    while (ntok < 2200) {
        struct tl_buf *t = &tok[ntok++];
        *t = (struct tl_buf){0};
        int n = 1 + rand() % 12;
        for (int i = 0; i < n; i++) {
            char c = alphabet[rand() % (int)(sizeof alphabet - 1)];
            tl_buf_append(t, &c, 1);
        }
    }
    struct tl_buf b = {0};
    tl_buf_puts(&b, "1700000000000000 42 MANAGER START\n");
    int bad = 0, impossible = 0;
    for (int i = 0; i < ntok; i++) {
        double v;
        tl_buf_append(&tok[i], "", 1); /* NUL after the token, not counted */
        tok[i].len--;
        bool ok = tl_parse_double(tok[i].data, tok[i].data + tok[i].len, &v);
        bad += ok ? 0 : 2;
        impossible += ok && (signbit(v) || !(v < 0x1p960)) ? 2 : 0; /* -1, -0, nan, inf, 1e300 */
        tl_buf_printf(&b, "1700000001000000 42 TRANSFER INPUT 1 1 %s 0.1 f\n", tok[i].data);
        tl_buf_printf(&b, "1700000001000001 42 WORKER worker-1 CACHE_UPDATE name %s 4116\n", tok[i].data);
    }
    CHECK(bad > 400 && bad < 2 * ntok - 400); /* both verdicts well represented */
    CHECK(impossible > 100);
    const struct tl_parser *wq = tl_parser_find("wq");
    uint64_t records = 0;
    for (int s = 0; s < 2; s++) {
        struct collected c = {0};
        struct tl_parser_inst inst;
        const struct tl_parse_stats *st =
            parse_buffer_kinds(wq, b.data, b.len, 4096, s ? TL_AGG_KINDS : 0, &c, &inst);
        CHECK_EQ_INT(st->rejected, bad + impossible);
        CHECK_EQ_INT(st->rejected_by[TL_REJ_BAD_FIELDS], bad);
        CHECK_EQ_INT(st->rejected_by[TL_REJ_BAD_VALUE], impossible);
        if (!s) records = st->records;
        CHECK_EQ_INT(st->records, records);
        CHECK(records > (uint64_t)(2 * ntok - bad)); /* each valid line, and more */
        tl_parser_inst_free(&inst);
        collected_free(&c);
    }
    for (int i = 0; i < ntok; i++) tl_buf_free(&tok[i]);
    tl_buf_free(&b);
}

int main(void)
{
    test_transfer_numbers();
    struct tl_buf b = {0};
    uint64_t line = 0;
    uint64_t expect_line[32];
    int expect_why[32];
    int nexp = 0;
#define BAD(text, why)                                                                             \
    do {                                                                                           \
        tl_buf_puts(&b, text);                                                                     \
        line++;                                                                                    \
        expect_line[nexp] = line;                                                                  \
        expect_why[nexp++] = why;                                                                  \
    } while (0)

    tl_buf_puts(&b, "1700000000000000 42 MANAGER START\n");
    line++;
    add_task(&b, 1, "\n");
    line += 5;
    BAD("1700000001000000 42 TASK 9 RETRIEVED SUCCESS  0  {} {\"wq_output_time\":[0.0005\n",
        TL_REJ_BAD_JSON); /* truncated line */
    BAD("1700000001000001 42 TASK 9 RUNNING 10.0.0.1:9  FIRST_RESOURCES {\"cores\":[1,cores]}\n",
        TL_REJ_BAD_JSON);
    BAD("1700000001000002 42 FROBNICATE 1 2 3\n", TL_REJ_UNKNOWN);
    /* worker transfers and cache updates: validated whether or not their
     * records are asked for */
    tl_buf_puts(&b, "1700000001000003 42 WORKER worker-1 CACHE-UPDATE file-a 17089 4116 1700000001000000\n");
    line++;
    BAD("1700000001000004 42 WORKER worker-1 CACHE_UPDATE file-b 12x 4116\n", TL_REJ_BAD_FIELDS);
    BAD("1700000001000005 42 WORKER worker-1 TRANSFER\n", TL_REJ_BAD_FIELDS);
    BAD("1700000001000006 42 WORKER worker-1 SNEEZE\n", TL_REJ_BAD_FIELDS);
    BAD("1700000001000007 42 WORKER worker-1 10.0.0.1:9 SNEEZE\n", TL_REJ_UNKNOWN);
    BAD("1700000001000008 42 TRANSFER INPUT 1 1 x 0.1 f\n", TL_REJ_BAD_FIELDS);
    BAD("\x7f\x45\x4c\x46\x02\x01\x01\xff\xfe garbage \x01\x02\n", TL_REJ_BAD_PREFIX);
    add_task(&b, 2, "\r\n"); /* CRLF: valid */
    line += 5;
    /* a 10 MB line */
    tl_buf_puts(&b, "1700000002000000 42 TASK 3 WAITING ");
    for (int i = 0; i < 10 * 1024 * 1024 / 64; i++)
        tl_buf_puts(&b, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    BAD(" FIRST_RESOURCES {}\n", TL_REJ_LINE_TOO_LONG);
    tl_buf_append(&b, "1700000002000001 42 TASK 3 WAITING c\0t FIRST_RESOURCES {}\n", 58);
    line++;
    expect_line[nexp] = line;
    expect_why[nexp++] = TL_REJ_NUL_BYTE;
    BAD("17OOOOOOO2000002 42 TASK 3 WAITING cat FIRST_RESOURCES {}\n", TL_REJ_BAD_PREFIX);
    BAD("1700000002000003 42 TASK\n", TL_REJ_BAD_FIELDS);
    BAD("1700000002000004 42 TASK 4 DONE SUCCESS  zero  {} {}\n", TL_REJ_BAD_FIELDS);
    add_task(&b, 3, "\n");
    line += 5;
    /* values no measurement has: rejected with their line, the task kept */
    tl_buf_puts(&b, "1700000003000000 42 TASK 5 WAITING cat FIRST_RESOURCES {}\n"
                    "1700000003100000 42 TASK 5 RUNNING 10.0.0.1:9  FIRST_RESOURCES {}\n");
    line += 2;
    BAD("1700000003200000 42 TASK 5 DONE SUCCESS  0  {} "
        "{\"wall_time\":[-1.5,\"s\"],\"memory\":[1e400,\"MB\"],\"cores\":[1,\"cores\"]}\n",
        TL_REJ_BAD_VALUE);
    BAD("1700000003300000 42 WORKER worker-1 RESOURCES {\"cores\":[-4,\"cores\"]}\n",
        TL_REJ_BAD_VALUE); /* built for the run's state whether asked for or not */
    tl_buf_puts(&b, "1700000009000000 42 MANAGER END\n");
    line++;

    const struct tl_parser *wq = tl_parser_find("wq");
    static const size_t steps[] = {0, 1, 4096};
    uint64_t records_all = 0;
    for (int s = 0; s < 6; s++) {
        /* every piece size, with all record kinds and with the aggregator's
         * (as `summary` asks): the same rejects and counts either way */
        uint32_t kinds = s < 3 ? 0 : TL_AGG_KINDS;
        struct collected c = {0};
        struct tl_parser_inst inst;
        const struct tl_parse_stats *st =
            parse_buffer_kinds(wq, b.data, b.len, steps[s % 3], kinds, &c, &inst);
        CHECK_EQ_INT(st->lines, line);
        if (!kinds) records_all = st->records;
        CHECK_EQ_INT(st->records, records_all);
        size_t others = 0;
        for (size_t i = 0; i < c.n; i++) others += !(TL_AGG_KINDS & TL_KIND(c.recs[i].kind));
        if (kinds) CHECK_EQ_INT(others, 0);
        else CHECK(others >= 4); /* manager start, end, a transfer, workflow */
        CHECK_EQ_INT(st->rejected, nexp);
        CHECK_EQ_INT(c.nrejects, nexp);
        for (int i = 0; i < nexp && i < (int)c.nrejects; i++) {
            CHECK_EQ_INT(c.reject_lines[i], expect_line[i]);
            CHECK_EQ_INT(c.reject_why[i], expect_why[i]);
        }
        CHECK_EQ_INT(st->rejected_by[TL_REJ_BAD_JSON], 2);
        CHECK_EQ_INT(st->rejected_by[TL_REJ_BAD_FIELDS], 6);
        CHECK_EQ_INT(st->rejected_by[TL_REJ_UNKNOWN], 2);
        CHECK_EQ_INT(st->rejected_by[TL_REJ_LINE_TOO_LONG], 1);
        CHECK_EQ_INT(st->rejected_by[TL_REJ_NUL_BYTE], 1);
        CHECK_EQ_INT(st->rejected_by[TL_REJ_BAD_VALUE], 2);
        int done = 0;
        for (size_t i = 0; i < c.n; i++) {
            const struct tl_record *r = &c.recs[i];
            if (r->kind == TL_REC_TASK && r->task_id == 5) {
                CHECK(!tl_record_has(r, TL_M_WALL_TIME_S) && !tl_record_has(r, TL_M_MAX_RSS_BYTES));
                CHECK_NEAR(r->v[TL_M_CORES], 1, 0);
                continue;
            }
            CHECK(!tl_record_bad_values(r));
            if (r->kind != TL_REC_TASK || !r->final) continue;
            done++;
            CHECK_STR(r->category, "cat"); /* CRLF did not leak into names */
            CHECK_STR(r->host, "10.0.0.1");
            CHECK_NEAR(r->v[TL_M_MAX_RSS_BYTES], r->task_id * 1048576.0, 0);
        }
        CHECK_EQ_INT(done, 3);
        tl_parser_inst_free(&inst);
        collected_free(&c);
    }
    tl_buf_free(&b);
    return check_done("test_wq_malformed");
}
