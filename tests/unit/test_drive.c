/* Unit tests of the parsers' one door (parsers/drive.c): the same records
 * whatever the split of the bytes; first bytes held until a probe is sure,
 * and saved and restored while held (a checkpoint taken when a followed
 * file showed only "# tim"); input no parser recognizes refused with a
 * reason; an empty input read as nothing; Kafka messages of no known format
 * rejected one by one, the stream recognized by the next; one reject budget
 * shared by two inputs. Reads the bundled real cctools log
 * (tests/data/wq/demo-cctools-9.9.log). */
#include "check.h"
#include "collect.h"
#include "core/buf.h"
#include "parsers/drive.h"

struct tally {
    size_t tasks, records;
    double wall_sum;
};

static void count(void *ctx, const struct tl_record *r)
{
    struct tally *t = ctx;
    t->records++;
    if (r->kind == TL_REC_TASK) {
        t->tasks++;
        if (tl_record_has(r, TL_M_WALL_TIME_S)) t->wall_sum += r->v[TL_M_WALL_TIME_S];
    }
}

static struct tl_reject_budget quiet_budget = {.max = 0, .quiet = true};

/* A budget's say: counts the lines told instead of printing them. */
static void count_said(void *ctx, const char *line)
{
    (void)line;
    (*(int *)ctx)++;
}

static struct tl_drive_cfg cfg_for(struct tally *t, const struct tl_parser *named)
{
    return (struct tl_drive_cfg){.parser = named, .record = count, .record_ctx = t,
                                 .budget = &quiet_budget};
}

/* The log through a drive in pieces of `step` bytes. */
static struct tally feed_in_steps(const char *log, size_t len, size_t step)
{
    struct tally t = {0};
    struct tl_drive_cfg c = cfg_for(&t, NULL);
    struct tl_drive d;
    tl_drive_init(&d, &c, "demo.log");
    for (size_t at = 0; at < len; at += step)
        CHECK_EQ_INT(tl_drive_feed(&d, log + at, at + step <= len ? step : len - at), TL_OK);
    CHECK_EQ_INT(tl_drive_finish(&d), TL_OK);
    CHECK_STR(tl_drive_parser(&d) ? tl_drive_parser(&d)->name : NULL, "wq");
    tl_drive_free(&d);
    return t;
}

/* Five bytes in, saved while held, restored into a new drive, the rest fed. */
static struct tally resume_while_held(const char *log, size_t len)
{
    struct tally t = {0};
    struct tl_drive_cfg c = cfg_for(&t, NULL);
    struct tl_drive a, b;
    tl_drive_init(&a, &c, "demo.log");
    CHECK_EQ_INT(tl_drive_feed(&a, log, 5), TL_OK);
    CHECK(tl_drive_parser(&a) == NULL); /* "# tim": no probe is sure yet */
    struct tl_buf saved = {0};
    CHECK_EQ_INT(tl_drive_save(&a, &saved), TL_OK);
    CHECK_EQ_INT(saved.len, 5);
    tl_drive_free(&a);
    tl_drive_init(&b, &c, "demo.log");
    CHECK_EQ_INT(tl_drive_restore(&b, "", (const uint8_t *)saved.data, saved.len), TL_OK);
    CHECK_EQ_INT(tl_drive_feed(&b, log + 5, len - 5), TL_OK);
    CHECK_EQ_INT(tl_drive_finish(&b), TL_OK);
    tl_buf_free(&saved);
    tl_drive_free(&b);
    return t;
}

static void unrecognized(void)
{
    struct tally t = {0};
    struct tl_drive_cfg c = cfg_for(&t, NULL);
    struct tl_drive d;
    tl_drive_init(&d, &c, "notes.txt");
    char junk[1024];
    memset(junk, 'x', sizeof junk);
    junk[sizeof junk - 1] = '\n';
    enum tl_err rc = TL_OK;
    for (int i = 0; i < 100 && !rc; i++) rc = tl_drive_feed(&d, junk, sizeof junk);
    CHECK_EQ_INT(rc, TL_ERR_FORMAT); /* refused once 64 KiB came and no probe was sure */
    CHECK(strstr(d.error, "notes.txt: format not recognized") != NULL);
    CHECK_EQ_INT(t.records, 0);
    tl_drive_free(&d);

    /* a short input that ends unrecognized */
    tl_drive_init(&d, &c, "short.txt");
    CHECK_EQ_INT(tl_drive_feed(&d, "hello\n", 6), TL_OK); /* held: more may come */
    CHECK_EQ_INT(tl_drive_finish(&d), TL_ERR_FORMAT);
    tl_drive_free(&d);

    /* nothing at all: zero lines, no error */
    tl_drive_init(&d, &c, "empty.log");
    CHECK_EQ_INT(tl_drive_finish(&d), TL_OK);
    CHECK_EQ_INT(tl_drive_stats(&d).lines, 0);
    tl_drive_free(&d);
}

static void messages(const char *log, size_t len)
{
    struct tally t = {0};
    int said = 0;
    struct tl_reject_budget budget = {.max = 1, .say = count_said, .ctx = &said};
    struct tl_drive_cfg c = cfg_for(&t, NULL);
    c.budget = &budget;
    struct tl_drive d;
    tl_drive_init(&d, &c, "topic");
    CHECK_EQ_INT(tl_drive_message(&d, "hello\n", 6), TL_OK); /* rejected, said, counted */
    CHECK(tl_drive_parser(&d) == NULL);
    CHECK_EQ_INT(d.unrecognized, 1);
    CHECK_EQ_INT(said, 1);
    /* the log as messages of whole lines */
    const char *p = log, *end = log + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        CHECK_EQ_INT(tl_drive_message(&d, p, n), TL_OK);
        p += n;
    }
    CHECK_EQ_INT(tl_drive_finish(&d), TL_OK);
    struct tally whole = feed_in_steps(log, len, len);
    CHECK_EQ_INT(t.tasks, whole.tasks);
    tl_drive_free(&d);
}

static void one_budget(void)
{
    int said = 0;
    struct tl_reject_budget budget = {.max = 3, .say = count_said, .ctx = &said};
    struct tally t = {0};
    struct tl_drive_cfg c = cfg_for(&t, tl_parser_find("wq"));
    c.budget = &budget;
    for (int k = 0; k < 2; k++) { /* two inputs, each with 4 bad lines */
        struct tl_drive d;
        tl_drive_init(&d, &c, k ? "b.log" : "a.log");
        const char *bad = "1 2 NOT A RECORD\n1 2 NOT A RECORD\n1 2 NOT A RECORD\n1 2 NOT A RECORD\n";
        tl_drive_feed(&d, bad, strlen(bad));
        tl_drive_finish(&d);
        CHECK_EQ_INT(tl_drive_stats(&d).rejected, 4);
        tl_drive_free(&d);
    }
    CHECK_EQ_INT(budget.told, 3); /* three lines in all, not three per input */
    CHECK_EQ_INT(said, 3);
    CHECK_EQ_INT(budget.untold, 5);
}

int main(void)
{
    const char *dir = getenv("TL_TEST_DATA");
    char path[4096];
    snprintf(path, sizeof path, "%s/wq/demo-cctools-9.9.log", dir ? dir : "tests/data");
    size_t len;
    char *log = slurp(path, &len);
    if (!log) check_skip("the bundled demo log is not readable");
    struct tally whole = feed_in_steps(log, len, len);
    CHECK_EQ_INT(whole.tasks, 207); /* the log's task attempts */
    size_t steps[] = {1, 7, 4096, 65536};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        struct tally t = feed_in_steps(log, len, steps[i]);
        CHECK_EQ_INT(t.tasks, whole.tasks);
        CHECK_EQ_INT(t.records, whole.records);
        CHECK(t.wall_sum == whole.wall_sum);
    }
    struct tally r = resume_while_held(log, len);
    CHECK_EQ_INT(r.tasks, whole.tasks);
    CHECK_EQ_INT(r.records, whole.records);
    unrecognized();
    messages(log, len);
    one_budget();
    free(log);
    return check_done("test_drive");
}
