/* Bad input never stops a run, and nothing valid around it is lost.
 *
 * A log of valid lifecycles with every kind of damage wedged between them:
 * a truncated line, bad JSON, an unknown record, binary garbage, a 10 MB
 * line, NUL bytes, a non-numeric timestamp. CRLF line endings are not
 * damage: those lines must parse. Each rejected line is reported once, with
 * its line number and reason, and every valid task still comes out. */
#include "check.h"
#include "aggregate.h"
#include "collect.h"

#include "buf.h"

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

int main(void)
{
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
        int done = 0;
        for (size_t i = 0; i < c.n; i++) {
            const struct tl_record *r = &c.recs[i];
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
