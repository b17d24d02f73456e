/* ingest/follow: tail -F semantics, step by step in one process (so the
 * order of writer and reader is exact): appends, partial lines, a file that
 * appears later, --from end, resuming at a position, rename rotation with
 * data still arriving in the old file, copytruncate, and 10 rounds of each
 * rotation with every line read exactly once, in order. */
#include "check.h"

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "ingest/follow.h"

static char dir[] = "/tmp/tl-follow-XXXXXX";
/* step by step in one process: a rotated-away file is left at its end at
 * once (quiet_ms < 0); the quiet wait has its own test */
static const struct tl_follow_opts now_opts = {.quiet_ms = -1};
static const struct tl_follow_opts end_opts = {.from_end = true, .quiet_ms = -1};
static char path[256];

/* Everything available now, appended to out. */
static void drain(struct tl_follow *f, struct tl_buf *out)
{
    char buf[7]; /* tiny reads: exercise the edges */
    for (int i = 0; i < 100000; i++) {
        size_t got;
        CHECK_EQ_INT(tl_follow_read(f, buf, sizeof buf, &got), TL_OK);
        if (!got) return;
        tl_buf_append(out, buf, got);
    }
}

static void append(const char *p, const char *text)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
}

static void basics(void)
{
    struct tl_buf out = {0};
    struct tl_follow *f;
    char err[256];
    unlink(path);
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, NULL, &f, err, sizeof err), TL_OK); /* not there yet */
    drain(f, &out);
    CHECK_EQ_INT(out.len, 0);
    append(path, "a\nb\n");
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "a\nb\n");
    append(path, "c");
    drain(f, &out);
    append(path, "\n");
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "a\nb\nc\n");
    struct tl_follow_pos pos = tl_follow_position(f);
    CHECK_EQ_INT(pos.offset, 6);
    tl_follow_close(f);

    /* resume at the saved position; and --from end */
    append(path, "d\n");
    out.len = 0;
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, &pos, &f, err, sizeof err), TL_OK);
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "d\n");
    tl_follow_close(f);
    out.len = 0;
    CHECK_EQ_INT(tl_follow_open(path, &end_opts, NULL, &f, err, sizeof err), TL_OK);
    drain(f, &out);
    CHECK_EQ_INT(out.len, 0);
    append(path, "e\n");
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "e\n");
    /* a position of another file (inode) is not trusted: start over */
    tl_follow_close(f);
    struct tl_follow_pos other = pos;
    other.ino += 12345;
    out.len = 0;
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, &other, &f, err, sizeof err), TL_OK);
    CHECK_EQ_INT(tl_follow_stats(f).resume, TL_RESUME_REPLACED);
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "a\nb\nc\nd\ne\n");
    tl_follow_close(f);
    /* the same inode with other bytes before the offset (rewritten in
     * place): not the checkpointed content, so from the start */
    struct tl_follow_pos same = pos;
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, &same, &f, err, sizeof err), TL_OK);
    CHECK_EQ_INT(tl_follow_stats(f).resume, TL_RESUME_SAME);
    tl_follow_close(f);
    int fd = open(path, O_WRONLY);
    CHECK(pwrite(fd, "X", 1, 0) == 1);
    close(fd);
    out.len = 0;
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, &same, &f, err, sizeof err), TL_OK);
    CHECK_EQ_INT(tl_follow_stats(f).resume, TL_RESUME_REPLACED);
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "X\nb\nc\nd\ne\n");
    tl_follow_close(f);
    tl_buf_free(&out);
}

/* Rotated while we were down: the old file's rest, then the new file. And a
 * position in the middle of a line resumes there (no newline invented). */
static void resume_after_rotation(void)
{
    struct tl_buf out = {0};
    struct tl_follow *f;
    char err[256], old[300];
    unlink(path);
    append(path, "one\ntw");
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, NULL, &f, err, sizeof err), TL_OK);
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "one\ntw");
    struct tl_follow_pos pos = tl_follow_position(f);
    CHECK(pos.mid_line);
    tl_follow_close(f);
    append(path, "o\nthree\n");
    snprintf(old, sizeof old, "%s.1", path);
    CHECK(rename(path, old) == 0);
    append(path, "four\n");
    out.len = 0;
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, &pos, &f, err, sizeof err), TL_OK);
    CHECK_EQ_INT(tl_follow_stats(f).resume, TL_RESUME_ROTATED);
    CHECK(strstr(tl_follow_stats(f).rotated_name, ".1") != NULL);
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "o\nthree\nfour\n");
    tl_follow_close(f);
    /* rotated twice while down: the old file's rest, the one rotated after
     * it, then the path */
    char old2[300];
    snprintf(old2, sizeof old2, "%s.2", path);
    usleep(20000); /* later mtimes */
    CHECK(rename(path, old2) == 0);
    append(path, "five\n");
    out.len = 0;
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, &pos, &f, err, sizeof err), TL_OK);
    CHECK_EQ_INT(tl_follow_stats(f).resume, TL_RESUME_ROTATED);
    CHECK_EQ_INT(tl_follow_stats(f).chain_files, 1);
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "o\nthree\nfour\nfive\n");
    tl_follow_close(f);
    unlink(old2);
    /* a position at offset 0 (checkpointed before anything was read), then
     * rotated: the old file is still found, and read whole */
    unlink(old);
    unlink(path);
    append(path, "");
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, NULL, &f, err, sizeof err), TL_OK);
    struct tl_follow_pos zero = tl_follow_position(f);
    tl_follow_close(f);
    append(path, "early\n");
    CHECK(rename(path, old) == 0);
    append(path, "late\n");
    out.len = 0;
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, &zero, &f, err, sizeof err), TL_OK);
    CHECK_EQ_INT(tl_follow_stats(f).resume, TL_RESUME_ROTATED);
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "early\nlate\n");
    tl_follow_close(f);
    unlink(path);
    append(path, "four\n");
    /* the old file gone as well: the new one from its start, after the
     * newline the parser's partial line is owed */
    unlink(old);
    out.len = 0;
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, &pos, &f, err, sizeof err), TL_OK);
    CHECK_EQ_INT(tl_follow_stats(f).resume, TL_RESUME_REPLACED);
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "\nfour\n");
    tl_follow_close(f);
    unlink(path);
    tl_buf_free(&out);
}

static void rotations(void)
{
    struct tl_buf out = {0}, want = {0};
    struct tl_follow *f;
    char err[256], old[300], line[64];
    unlink(path);
    append(path, "");
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, NULL, &f, err, sizeof err), TL_OK);
    int n = 0;
    for (int round = 0; round < 10; round++) {
        /* rename + create, while the writer still appends to the old file */
        snprintf(line, sizeof line, "line %d\n", n++);
        append(path, line);
        tl_buf_puts(&want, line);
        drain(f, &out);
        snprintf(old, sizeof old, "%s.%d", path, round);
        int wfd = open(path, O_WRONLY | O_APPEND);
        CHECK(rename(path, old) == 0);
        snprintf(line, sizeof line, "line %d\n", n++); /* late write to the old file */
        CHECK(write(wfd, line, strlen(line)) > 0);
        close(wfd);
        tl_buf_puts(&want, line);
        snprintf(line, sizeof line, "line %d\n", n++);
        append(path, line); /* the new file */
        tl_buf_puts(&want, line);
        drain(f, &out);

        /* copytruncate: copy away, truncate, then write on */
        snprintf(line, sizeof line, "line %d\n", n++);
        append(path, line);
        tl_buf_puts(&want, line);
        drain(f, &out);
        CHECK(truncate(path, 0) == 0);
        drain(f, &out); /* notices the shrink */
        snprintf(line, sizeof line, "line %d\n", n++);
        append(path, line);
        tl_buf_puts(&want, line);
        drain(f, &out);
        unlink(old);
    }
    CHECK_EQ_INT(out.len, want.len);
    CHECK(out.len == want.len && memcmp(out.data, want.data, out.len) == 0);
    struct tl_follow_stats st = tl_follow_stats(f);
    CHECK_EQ_INT(st.rotations, 10);
    CHECK_EQ_INT(st.truncations, 10);
    tl_follow_close(f);

    /* a rotation right after a partial line: the line is closed, not glued */
    out.len = 0;
    unlink(path);
    append(path, "partial");
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, NULL, &f, err, sizeof err), TL_OK);
    drain(f, &out);
    snprintf(old, sizeof old, "%s.p", path);
    rename(path, old);
    append(path, "next\n");
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "partial\nnext\n");
    unlink(old);
    tl_follow_close(f);
    tl_buf_free(&out);
    tl_buf_free(&want);
}

/* The content identity: a compressed rotation found by content, one file in
 * two forms read once, the gap's byte count, the quiet wait. */
static void by_content(void)
{
    struct tl_buf out = {0};
    struct tl_follow *f;
    char err[256], cmd[2048];
    unlink(path);
    append(path, "one\ntwo\n");
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, NULL, &f, err, sizeof err), TL_OK);
    drain(f, &out);
    append(path, "three\n"); /* unread at the position */
    struct tl_follow_pos pos = tl_follow_position(f);
    CHECK_EQ_INT(pos.offset, 8);
    CHECK_EQ_INT(pos.size, 14);
    CHECK_EQ_INT(pos.head_len, 14); /* the first bytes, read or not */
    tl_follow_close(f);
    /* rotated, compressed, and -- while logrotate works -- present in both
     * forms: read once */
    append(path, "four\n");
    snprintf(cmd, sizeof cmd, "mv %s %s.1 && gzip -k %s.1 && touch -r %s.1 %s.1.gz", path, path, path,
             path, path);
    CHECK(system(cmd) == 0);
    usleep(20000);
    append(path, "five\n");
    snprintf(cmd, sizeof cmd, "mv %s %s.0 && gzip %s.0", path, path, path); /* rotated again */
    CHECK(system(cmd) == 0);
    append(path, "six\n");
    out.len = 0;
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, &pos, &f, err, sizeof err), TL_OK);
    struct tl_follow_stats st = tl_follow_stats(f);
    CHECK_EQ_INT(st.resume, TL_RESUME_ROTATED);
    CHECK_EQ_INT(st.chain_files, 1); /* path.0.gz; path.1.gz is path.1 again */
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "three\nfour\nfive\nsix\n");
    tl_follow_close(f);
    /* gone for good: the gap is counted with the bytes known unread */
    snprintf(cmd, sizeof cmd, "rm -f %s.1 %s.1.gz %s.0.gz", path, path, path);
    CHECK(system(cmd) == 0);
    out.len = 0;
    CHECK_EQ_INT(tl_follow_open(path, &now_opts, &pos, &f, err, sizeof err), TL_OK);
    st = tl_follow_stats(f);
    CHECK_EQ_INT(st.resume, TL_RESUME_REPLACED);
    CHECK_EQ_INT(st.gaps, 1);
    CHECK_EQ_INT(st.gap_bytes, 6); /* "three\n" */
    drain(f, &out);
    CHECK_STR(tl_buf_cstr(&out), "six\n");
    tl_follow_close(f);

    /* the quiet wait: the renamed file written for 0.3 s more */
    unlink(path);
    append(path, "a\n");
    struct tl_follow_opts quiet = {.quiet_ms = 150};
    CHECK_EQ_INT(tl_follow_open(path, &quiet, NULL, &f, err, sizeof err), TL_OK);
    out.len = 0;
    drain(f, &out);
    char old[300];
    snprintf(old, sizeof old, "%s.q", path);
    CHECK(rename(path, old) == 0);
    append(path, "new\n");
    for (int i = 0; i < 3; i++) {
        drain(f, &out);
        append(old, "late\n");
        usleep(100000);
    }
    for (int i = 0; i < 10; i++) {
        drain(f, &out);
        usleep(50000);
    }
    CHECK_STR(tl_buf_cstr(&out), "a\nlate\nlate\nlate\nnew\n");
    tl_follow_close(f);
    unlink(old);
    unlink(path);
    tl_buf_free(&out);
}

static void waiting(void)
{
    struct tl_follow *f;
    char err[256];
    CHECK_EQ_INT(tl_follow_open(path, &end_opts, NULL, &f, err, sizeof err), TL_OK);
    printf("  inotify: %s\n", tl_follow_uses_inotify(f) ? "yes" : "no (polling)");
    append(path, "x\n"); /* an event is pending: wait returns at once */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    tl_follow_wait(f, 3000);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
    CHECK(ms < 1000);
    tl_follow_close(f);
}

int main(void)
{
    if (!mkdtemp(dir)) check_skip("no temp dir");
    snprintf(path, sizeof path, "%s/transactions", dir);
    basics();
    resume_after_rotation();
    rotations();
    by_content();
    waiting();
    unlink(path);
    rmdir(dir);
    return check_done("test_follow");
}
