/* Following a file: see follow.h.
 *
 * The state is the file read now -- a plain descriptor (the live file, or a
 * rotated one found by identity) or a decoder over a rotated file found by
 * content -- the identity (dev, ino) it had when opened, the offset read so
 * far, its first bytes and the bytes just before the offset (the content
 * identity a checkpoint stores). Every read that reaches the end of the
 * live file checks the path: another inode there means rotation, a size
 * below our offset means truncation; the next read after such an end first
 * checks that the bytes before the offset are still there (truncated and
 * written past the old offset meanwhile). Appends in steady state are plain
 * reads; the checks cost a stat and a 4 KiB pread per wake-up. */
#include "core/clock.h"
#include "ingest/follow.h"

#include "core/intern.h"
#include "ingest/reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TAIL_BYTES 4096
#define HEAD_BYTES 4096
#define QUIET_MS_DEFAULT 1000

struct tl_follow {
    char *path;
    char *name;    /* basename, for inotify events */
    char *rotated; /* glob of rotated names */
    int quiet_ms;  /* < 0: leave a rotated-away file at its end at once */
    int ino_fd;    /* inotify, -1 if unavailable */
    struct tl_follow_stats st;

    /* the file read now: fd, or rd (a rotated file through its decoder) */
    int fd;
    struct tl_reader *rd;
    char *pend; /* rd: decoded bytes past the offset, read ahead (HEAD_BYTES) */
    size_t pend_len, pend_off;
    bool live;     /* fd is the file that was at the path (not a rotated one) */
    uint64_t dev, ino, offset;
    bool last_was_newline; /* of the bytes delivered from the current file */
    bool pending_newline;  /* owed before the next file's bytes */
    char head[HEAD_BYTES]; /* its first bytes, as delivered */
    uint32_t head_len;
    char tail[TAIL_BYTES]; /* the bytes just before offset, as delivered */
    uint32_t tail_len;
    bool check_tail; /* the live file's end was reached: verify before reading on */

    /* a rotation seen: the file now at the path, held while the old drains */
    bool rotated_away;
    int next_fd;
    int64_t quiet_since_ms; /* the file being left last grew */

    /* rotated files to read whole before the path, oldest first */
    char **chain;
    int nchain, ichain;
};

/* ---------------------------------------------------------------- content memory */

/* A new current file: nothing of it delivered yet. */
static void forget_content(struct tl_follow *f)
{
    f->offset = 0;
    f->head_len = f->tail_len = 0;
    f->last_was_newline = true;
    f->check_tail = false;
    f->pend_len = f->pend_off = 0;
}

/* Bytes delivered from the current file: into its head (first bytes) and
 * tail (the last TAIL_BYTES before the offset). */
static void remember(struct tl_follow *f, const char *p, size_t n)
{
    if (f->head_len < HEAD_BYTES) {
        size_t k = HEAD_BYTES - f->head_len < n ? HEAD_BYTES - f->head_len : n;
        memcpy(f->head + f->head_len, p, k);
        f->head_len += (uint32_t)k;
    }
    if (n >= TAIL_BYTES) {
        memcpy(f->tail, p + n - TAIL_BYTES, TAIL_BYTES);
        f->tail_len = TAIL_BYTES;
    } else {
        size_t keep = f->tail_len + n > TAIL_BYTES ? TAIL_BYTES - n : f->tail_len;
        memmove(f->tail, f->tail + f->tail_len - keep, keep);
        memcpy(f->tail + keep, p, n);
        f->tail_len = (uint32_t)(keep + n);
    }
}

/* A plain file entered at offset: its head and tail read back from it. */
static bool load_content(struct tl_follow *f, int fd, uint64_t offset)
{
    size_t h = offset < HEAD_BYTES ? (size_t)offset : HEAD_BYTES;
    size_t t = offset < TAIL_BYTES ? (size_t)offset : TAIL_BYTES;
    if (pread(fd, f->head, h, 0) != (ssize_t)h ||
        pread(fd, f->tail, t, (off_t)(offset - t)) != (ssize_t)t)
        return false;
    f->head_len = (uint32_t)h;
    f->tail_len = (uint32_t)t;
    return true;
}

/* Hash of the up to TAIL_BYTES before offset in fd; false on a short read. */
static bool tail_hash(int fd, uint64_t offset, uint64_t *h)
{
    char buf[TAIL_BYTES];
    size_t n = offset < TAIL_BYTES ? (size_t)offset : TAIL_BYTES;
    ssize_t r = pread(fd, buf, n, (off_t)(offset - n));
    if (r != (ssize_t)n) return false;
    *h = tl_hash_bytes(buf, n);
    return true;
}

/* Does fd hold the checkpointed bytes: long enough, same tail (and head,
 * when the checkpoint has one)? */
static bool holds_position(int fd, const struct tl_follow_pos *at)
{
    struct stat st;
    uint64_t h;
    if (fstat(fd, &st) || at->offset > (uint64_t)st.st_size || !tail_hash(fd, at->offset, &h) ||
        h != at->tail_hash)
        return false;
    if (!at->head_len) return true;
    char head[HEAD_BYTES];
    return pread(fd, head, at->head_len, 0) == (ssize_t)at->head_len &&
           tl_hash_bytes(head, at->head_len) == at->head_hash;
}

/* ---------------------------------------------------------------- rotated files */

/* The rotated names, as paths: the glob (relative to the path's directory),
 * regular files only, not the file now at the path; *n of them, or NULL. */
static char **rotated_files(const struct tl_follow *f, size_t *n)
{
    char pat[PATH_MAX];
    size_t dlen = (size_t)(f->name - f->path);
    if (f->rotated[0] == '/') snprintf(pat, sizeof pat, "%s", f->rotated);
    else snprintf(pat, sizeof pat, "%.*s%s", (int)dlen, f->path, f->rotated);
    glob_t g;
    *n = 0;
    if (glob(pat, 0, NULL, &g)) return NULL;
    struct stat live;
    bool have_live = stat(f->path, &live) == 0;
    char **out = calloc(g.gl_pathc + 1, sizeof *out);
    for (size_t i = 0; out && i < g.gl_pathc; i++) {
        struct stat st;
        if (stat(g.gl_pathv[i], &st) || !S_ISREG(st.st_mode) ||
            (have_live && st.st_ino == live.st_ino && st.st_dev == live.st_dev))
            continue;
        if ((out[*n] = strdup(g.gl_pathv[i]))) (*n)++;
    }
    globfree(&g);
    return out;
}

/* n entries, some of which may have been taken (set to NULL). */
static void free_list(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

/* Reads exactly n decoded bytes (fewer only at the end of the stream). */
static size_t read_full(struct tl_reader *r, char *buf, size_t n, bool *failed)
{
    size_t have = 0;
    char err[128];
    while (have < n) {
        size_t got = 0;
        if (tl_reader_read(r, buf + have, n - have, &got, err, sizeof err)) {
            *failed = true;
            break;
        }
        if (!got) break;
        have += got;
    }
    return have;
}

/* The first bytes of a rotated file, decoded: a hash of up to want bytes. */
static bool head_of(const char *path, uint32_t want, uint64_t *h, uint32_t *len)
{
    struct tl_reader *r;
    char err[256];
    if (tl_reader_open(path, &r, err, sizeof err)) return false;
    char buf[HEAD_BYTES];
    bool failed = false;
    size_t n = read_full(r, buf, want, &failed);
    tl_reader_close(r);
    *h = tl_hash_bytes(buf, n);
    *len = (uint32_t)n;
    return !failed;
}

/* Whether path, decoded, holds the checkpointed content: the same first
 * bytes and the same bytes before the offset. Then f reads it from there. */
static bool enter_if_holds(struct tl_follow *f, const char *path, const struct tl_follow_pos *at)
{
    struct tl_reader *r;
    char err[256];
    struct stat st;
    if (stat(path, &st) || tl_reader_open(path, &r, err, sizeof err)) return false;
    forget_content(f);
    bool failed = false;
    char buf[HEAD_BYTES];
    size_t n = read_full(r, buf, at->head_len, &failed);
    bool ok = !failed && n == at->head_len && tl_hash_bytes(buf, n) == at->head_hash;
    if (ok && at->offset < n) { /* the head reaches past the offset: keep the rest */
        remember(f, buf, (size_t)at->offset);
        if (!f->pend && !(f->pend = malloc(HEAD_BYTES))) ok = false;
        f->pend_len = ok ? n - (size_t)at->offset : 0;
        if (ok) memcpy(f->pend, buf + at->offset, f->pend_len);
    } else if (ok) {
        remember(f, buf, n);
    }
    char *chunk = ok ? malloc(TL_READ_CHUNK) : NULL;
    uint64_t pos = n;
    while (ok && chunk && pos < at->offset) {
        size_t want = at->offset - pos < TL_READ_CHUNK ? (size_t)(at->offset - pos) : TL_READ_CHUNK;
        size_t got = read_full(r, chunk, want, &failed);
        if (failed || got < want) ok = false;
        remember(f, chunk, got);
        pos += got;
    }
    free(chunk);
    ok = ok && tl_hash_bytes(f->tail, f->tail_len) == at->tail_hash;
    if (!ok) {
        tl_reader_close(r);
        forget_content(f);
        return false;
    }
    f->rd = r;
    f->live = false;
    f->dev = (uint64_t)st.st_dev;
    f->ino = (uint64_t)st.st_ino;
    f->offset = at->offset;
    f->last_was_newline = !at->mid_line;
    f->quiet_since_ms = tl_mono_ms();
    const char *base = strrchr(path, '/');
    snprintf(f->st.rotated_name, sizeof f->st.rotated_name, "%s", base ? base + 1 : path);
    f->st.rotated_compressed = strcmp(tl_reader_codec(r), "plain") != 0;
    return true;
}

/* The checkpointed content among the rotated files, by content. */
static bool find_by_content(struct tl_follow *f, const struct tl_follow_pos *at, char **found)
{
    if (!at->head_len) return false; /* an old checkpoint: no content identity */
    size_t n;
    char **files = rotated_files(f, &n);
    bool ok = false;
    for (size_t i = 0; i < n && !ok; i++) {
        uint64_t h;
        uint32_t len;
        if (!head_of(files[i], at->head_len, &h, &len) || len != at->head_len || h != at->head_hash)
            continue;
        if ((ok = enter_if_holds(f, files[i], at))) *found = strdup(files[i]);
    }
    free_list(files, n);
    return ok;
}

struct chain_entry {
    char *path;
    struct timespec mtime;
    uint64_t head;
};

static int by_mtime(const void *a, const void *b)
{
    const struct chain_entry *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* Files rotated after the one we resume in (`old`): rotated names last
 * written after it, oldest first, compressed ones too (gzip and zstd keep
 * the mtime). One file in two forms (`f.1` and `f.1.gz` while logrotate
 * compresses) is read once: entries with the same first bytes as one
 * before them, or as the old file, are left out. */
static void find_chain(struct tl_follow *f, const char *old)
{
    struct stat os;
    if (stat(old, &os)) return;
    uint64_t old_head;
    uint32_t old_len;
    if (!head_of(old, HEAD_BYTES, &old_head, &old_len)) old_len = 0;
    size_t n;
    char **files = rotated_files(f, &n);
    struct chain_entry *c = calloc(n ? n : 1, sizeof *c);
    int k = 0;
    for (size_t i = 0; c && i < n; i++) {
        struct stat st;
        uint32_t len;
        if (stat(files[i], &st) || (st.st_ino == os.st_ino && st.st_dev == os.st_dev) ||
            by_mtime(&(struct chain_entry){NULL, st.st_mtim, 0}, &(struct chain_entry){NULL, os.st_mtim, 0}) < 0)
            continue;
        c[k] = (struct chain_entry){files[i], st.st_mtim, 0};
        if (!head_of(files[i], HEAD_BYTES, &c[k].head, &len)) {
            f->st.chain_skipped++; /* said by the caller; its bytes are a gap */
            f->st.gaps++;
            continue;
        }
        if (len && len == old_len && c[k].head == old_head) continue; /* the old file again */
        files[i] = NULL; /* owned by the chain now */
        k++;
    }
    if (k > 1) qsort(c, (size_t)k, sizeof *c, by_mtime);
    f->chain = k ? calloc((size_t)k, sizeof *f->chain) : NULL;
    for (int i = 0; i < k; i++) {
        bool dup = false; /* c[j].path is NULL for entries left out */
        for (int j = 0; j < i && !dup; j++) dup = c[j].path && c[j].head == c[i].head;
        if (dup || !f->chain) {
            free(c[i].path);
            c[i].path = NULL;
            continue;
        }
        f->chain[f->nchain++] = c[i].path;
    }
    f->st.chain_files = (uint64_t)f->nchain;
    free(c);
    free_list(files, n);
}

/* Opens the next file of the chain through its decoder; false when done. */
static bool next_in_chain(struct tl_follow *f)
{
    while (f->ichain < f->nchain) {
        const char *p = f->chain[f->ichain++];
        struct stat st;
        char err[256];
        if (stat(p, &st) || tl_reader_open(p, &f->rd, err, sizeof err)) {
            f->st.chain_skipped++;
            f->st.gaps++;
            continue;
        }
        forget_content(f);
        f->live = false;
        f->dev = (uint64_t)st.st_dev;
        f->ino = (uint64_t)st.st_ino;
        return true;
    }
    return false;
}

/* The old file, renamed while we were not running: a file in the path's
 * directory with the checkpointed identity and bytes. Opens it into f. */
static bool find_by_identity(struct tl_follow *f, const struct tl_follow_pos *at, char **found)
{
    char dir[PATH_MAX];
    size_t dlen = (size_t)(f->name - f->path);
    if (dlen) snprintf(dir, sizeof dir, "%.*s", (int)dlen, f->path);
    else snprintf(dir, sizeof dir, "./");
    DIR *d = opendir(dir);
    if (!d) return false;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, 0) || !S_ISREG(st.st_mode) ||
            (uint64_t)st.st_ino != at->ino || (uint64_t)st.st_dev != at->dev)
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        if (holds_position(fd, at) && load_content(f, fd, at->offset)) {
            f->fd = fd;
            f->live = false;
            f->dev = at->dev;
            f->ino = at->ino;
            f->quiet_since_ms = tl_mono_ms();
            snprintf(f->st.rotated_name, sizeof f->st.rotated_name, "%s", e->d_name);
            size_t n = strlen(dir) + strlen(e->d_name) + 1;
            if ((*found = malloc(n))) snprintf(*found, n, "%s%s", dir, e->d_name);
            closedir(d);
            return true;
        }
        close(fd);
    }
    closedir(d);
    return false;
}

/* ---------------------------------------------------------------- opening */

static int open_path(struct tl_follow *f)
{
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    forget_content(f);
    f->fd = fd;
    f->live = true;
    f->dev = (uint64_t)st.st_dev;
    f->ino = (uint64_t)st.st_ino;
    return 0;
}

/* Resumes at a checkpointed position: the same file, or its rest wherever
 * rotation put it, or -- not found -- a gap and the path from 0. */
static void resume(struct tl_follow *f, int opened, const struct tl_follow_pos *at)
{
    if (opened == 0 && at->dev == f->dev && at->ino == f->ino && holds_position(f->fd, at) &&
        load_content(f, f->fd, at->offset)) {
        f->st.resume = TL_RESUME_SAME;
        f->offset = at->offset;
        f->last_was_newline = !at->mid_line;
        lseek(f->fd, (off_t)f->offset, SEEK_SET);
        return;
    }
    int fresh = f->fd;
    f->fd = -1;
    char *found = NULL;
    if (find_by_identity(f, at, &found) || find_by_content(f, at, &found)) {
        /* even at offset 0: its bytes are still unread */
        if (fresh >= 0) close(fresh); /* reopened once the old file is done */
        f->st.resume = TL_RESUME_ROTATED;
        f->offset = at->offset;
        f->last_was_newline = !at->mid_line;
        if (f->fd >= 0) lseek(f->fd, (off_t)f->offset, SEEK_SET);
        if (found) find_chain(f, found);
        free(found);
        return;
    }
    f->fd = fresh;
    if (fresh >= 0) forget_content(f);
    f->st.resume = TL_RESUME_REPLACED;
    f->pending_newline = at->mid_line; /* the parser holds a partial line */
    f->st.gaps++;
    f->st.gap_bytes += at->size > at->offset ? at->size - at->offset : 0;
}

static void watch_directory(struct tl_follow *f)
{
    f->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (f->ino_fd < 0) return;
    char dir[PATH_MAX];
    size_t dlen = (size_t)(f->name - f->path);
    if (dlen) snprintf(dir, sizeof dir, "%.*s", dlen > 1 ? (int)dlen - 1 : 1, f->path);
    else snprintf(dir, sizeof dir, ".");
    if (inotify_add_watch(f->ino_fd, dir,
                          IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                              IN_CLOSE_WRITE | IN_ATTRIB) < 0) {
        close(f->ino_fd);
        f->ino_fd = -1; /* polling fallback */
    }
}

/* The default glob of rotated names: the path, its glob characters
 * escaped, then anything. */
static char *default_rotated(const char *name)
{
    size_t n = strlen(name);
    char *g = malloc(2 * n + 2), *o = g;
    if (!g) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (strchr("*?[]\\", name[i])) *o++ = '\\';
        *o++ = name[i];
    }
    *o++ = '*';
    *o = '\0';
    return g;
}

enum tl_err tl_follow_open(const char *path, const struct tl_follow_opts *opts,
                           const struct tl_follow_pos *at, struct tl_follow **out, char *err,
                           size_t errlen)
{
    struct tl_follow *f = calloc(1, sizeof *f);
    if (!f) return TL_ERR_NOMEM;
    f->fd = f->next_fd = f->ino_fd = -1;
    f->path = strdup(path);
    const char *slash = f->path ? strrchr(f->path, '/') : NULL;
    f->name = slash ? (char *)slash + 1 : f->path;
    f->rotated = opts && opts->rotated && *opts->rotated ? strdup(opts->rotated)
                                                          : f->path ? default_rotated(f->name) : NULL;
    f->quiet_ms = !opts || !opts->quiet_ms ? QUIET_MS_DEFAULT : opts->quiet_ms;
    f->last_was_newline = true;
    if (!f->path || !f->rotated) {
        tl_follow_close(f);
        return TL_ERR_NOMEM;
    }
    int opened = open_path(f);
    if (opened && errno != ENOENT) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        tl_follow_close(f);
        return TL_ERR_OPEN;
    }
    if (at) {
        resume(f, opened, at);
    } else if (opened == 0 && opts && opts->from_end) {
        struct stat st;
        if (fstat(f->fd, &st) == 0 && load_content(f, f->fd, (uint64_t)st.st_size)) {
            f->offset = (uint64_t)st.st_size;
            lseek(f->fd, (off_t)f->offset, SEEK_SET);
        }
    }
    watch_directory(f);
    *out = f;
    return TL_OK;
}

void tl_follow_close(struct tl_follow *f)
{
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    if (f->next_fd >= 0) close(f->next_fd);
    if (f->rd) tl_reader_close(f->rd);
    if (f->ino_fd >= 0) close(f->ino_fd);
    for (int i = 0; i < f->nchain; i++) free(f->chain[i]);
    free(f->chain);
    free(f->pend);
    free(f->rotated);
    free(f->path);
    free(f);
}

bool tl_follow_uses_inotify(const struct tl_follow *f)
{
    return f->ino_fd >= 0;
}

int tl_follow_fd(const struct tl_follow *f)
{
    return f->ino_fd;
}

/* ---------------------------------------------------------------- reading */

/* Leaves the current file; a newline is owed if it ended mid-line. */
static void leave_file(struct tl_follow *f)
{
    if (f->fd >= 0) close(f->fd);
    if (f->rd) tl_reader_close(f->rd);
    f->fd = -1;
    f->rd = NULL;
    if (!f->last_was_newline) f->pending_newline = true;
}

/* Delivers the newline owed after a file that ended mid-line, if any. */
static bool give_owed_newline(struct tl_follow *f, char *buf, size_t *got)
{
    if (!f->pending_newline) return false;
    buf[0] = '\n';
    *got = 1;
    f->pending_newline = false;
    return true;
}

/* The file now at the path, held since the rotation was seen, becomes the
 * one read (from 0). */
static void take_next(struct tl_follow *f)
{
    struct stat st;
    int fd = f->next_fd;
    f->next_fd = -1;
    f->rotated_away = false;
    if (fstat(fd, &st)) {
        close(fd);
        return;
    }
    forget_content(f);
    f->fd = fd;
    f->live = true;
    f->dev = (uint64_t)st.st_dev;
    f->ino = (uint64_t)st.st_ino;
}

/* The live file lost the content before our offset (copytruncate; written
 * past the old offset before we looked, or not). Its rest is read from a
 * copy among the rotated files when there is one; then the file from 0. */
static void truncated(struct tl_follow *f)
{
    f->st.truncations++;
    struct tl_follow_pos at = {f->dev, f->ino, f->offset, tl_hash_bytes(f->tail, f->tail_len),
                               !f->last_was_newline, tl_hash_bytes(f->head, f->head_len),
                               f->head_len, f->offset};
    int live = f->fd;
    f->fd = -1;
    char *found = NULL;
    if (at.head_len && find_by_content(f, &at, &found)) {
        f->st.copies_found++;
        f->next_fd = live; /* after the copy's rest */
        lseek(live, 0, SEEK_SET);
        f->quiet_since_ms = 0;
        free(found);
        return;
    }
    f->fd = live;
    if (!f->last_was_newline) f->pending_newline = true;
    forget_content(f);
    f->live = true;
    lseek(live, 0, SEEK_SET);
}

/* After the live file's end was reached: are the bytes before the offset
 * still the ones delivered? (A 4 KiB pread per wake-up.) */
static bool content_kept(struct tl_follow *f)
{
    char now[TAIL_BYTES];
    return pread(f->fd, now, f->tail_len, (off_t)(f->offset - f->tail_len)) == (ssize_t)f->tail_len &&
           !memcmp(now, f->tail, f->tail_len);
}

/* One read from the current file: > 0 bytes, 0 at its end, < 0 on error. */
static ssize_t read_current(struct tl_follow *f, char *buf, size_t cap)
{
    if (f->rd) {
        if (f->pend_off < f->pend_len) {
            size_t n = f->pend_len - f->pend_off < cap ? f->pend_len - f->pend_off : cap;
            memcpy(buf, f->pend + f->pend_off, n);
            f->pend_off += n;
            return (ssize_t)n;
        }
        size_t got = 0;
        char err[128];
        if (tl_reader_read(f->rd, buf, cap, &got, err, sizeof err)) {
            f->st.chain_skipped++; /* decoded as far as it goes; the rest is a gap */
            f->st.gaps++;
            return 0;
        }
        return (ssize_t)got;
    }
    ssize_t n;
    do n = read(f->fd, buf, cap);
    while (n < 0 && errno == EINTR);
    return n;
}

/* At the end of the live file: rotated (the path names another file),
 * truncated, or just caught up. True when something changed that the next
 * loop turn reads. */
static bool live_end(struct tl_follow *f)
{
    struct stat ps, fs;
    if (stat(f->path, &ps)) return false; /* gone (mid-rotation): keep waiting */
    if ((uint64_t)ps.st_ino != f->ino || (uint64_t)ps.st_dev != f->dev) {
        f->st.rotations++; /* drained until quiet, then the new file */
        f->rotated_away = true;
        f->live = false;
        f->quiet_since_ms = tl_mono_ms();
        int fd = open(f->path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && (fstat(fd, &fs) || !S_ISREG(fs.st_mode))) {
            close(fd);
            fd = -1;
        }
        f->next_fd = fd; /* -1: opened (and its errors counted) when switching */
        return true;
    }
    if (fstat(f->fd, &fs) == 0 && (uint64_t)fs.st_size < f->offset) {
        truncated(f);
        return true;
    }
    f->check_tail = f->tail_len > 0;
    f->st.lag = 0;
    return false;
}

/* The next file to read after the current one ended: the chain, then the
 * file held since the rotation, then the path. False: nothing to read. */
static bool open_next(struct tl_follow *f)
{
    if (next_in_chain(f)) return true;
    if (f->next_fd >= 0) {
        take_next(f);
        return true;
    }
    f->rotated_away = false;
    if (open_path(f) == 0) return true;
    if (errno != ENOENT) {
        f->st.reopen_errors++; /* rotated into something we cannot read */
        f->st.reopen_errno = errno;
    }
    return false;
}

enum tl_err tl_follow_read(struct tl_follow *f, char *buf, size_t cap, size_t *got)
{
    *got = 0;
    if (cap == 0) return TL_OK;
    if (give_owed_newline(f, buf, got)) return TL_OK;
    for (int turn = 0; turn < 4 + f->nchain; turn++) {
        if (f->fd < 0 && !f->rd && !open_next(f)) return TL_OK;
        if (f->check_tail && f->live) {
            struct stat fs;
            if (fstat(f->fd, &fs) == 0 && (uint64_t)fs.st_size > f->offset) {
                f->check_tail = false;
                if (!content_kept(f)) {
                    truncated(f); /* rewritten past the old offset before we looked */
                    if (give_owed_newline(f, buf, got)) return TL_OK;
                    continue;
                }
            }
        }
        ssize_t n = read_current(f, buf, cap);
        if (n < 0) return TL_ERR_IO;
        if (n > 0) {
            remember(f, buf, (size_t)n);
            f->offset += (uint64_t)n;
            f->st.bytes += (uint64_t)n;
            f->last_was_newline = buf[n - 1] == '\n';
            if (!f->live) f->quiet_since_ms = tl_mono_ms();
            *got = (size_t)n;
            return TL_OK;
        }
        if (f->live) {
            if (!live_end(f)) return TL_OK;
            if (give_owed_newline(f, buf, got)) return TL_OK;
            continue;
        }
        /* the end of a file that is not at the path any more: a decoded
         * one is whole; a plain one is left once it has been quiet (its
         * writer may not have reopened yet) */
        if (!f->rd && f->quiet_ms >= 0 && tl_mono_ms() - f->quiet_since_ms < f->quiet_ms) return TL_OK;
        leave_file(f);
        if (give_owed_newline(f, buf, got)) return TL_OK;
    }
    return TL_OK;
}

void tl_follow_wait(struct tl_follow *f, int timeout_ms)
{
    if (f->ino_fd < 0) {
        usleep((useconds_t)(timeout_ms < 250 ? timeout_ms : 250) * 1000); /* poll */
        return;
    }
    struct pollfd p = {f->ino_fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) > 0) {
        char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        while (read(f->ino_fd, events, sizeof events) > 0) {
        } /* drain: any event means "look again" */
    }
}

struct tl_follow_pos tl_follow_position(const struct tl_follow *f)
{
    struct tl_follow_pos p = {f->dev, f->ino, f->offset, 0, !f->last_was_newline, 0, 0, f->offset};
    p.tail_hash = tl_hash_bytes(f->tail, f->tail_len);
    p.head_hash = tl_hash_bytes(f->head, f->head_len);
    p.head_len = f->head_len;
    struct stat st;
    if (f->fd >= 0 && !f->rd && fstat(f->fd, &st) == 0) {
        p.size = (uint64_t)st.st_size;
        /* the first bytes, read or not, name the file better than none */
        char head[HEAD_BYTES];
        size_t h = p.size < HEAD_BYTES ? (size_t)p.size : HEAD_BYTES;
        if (h > f->head_len && pread(f->fd, head, h, 0) == (ssize_t)h) {
            p.head_hash = tl_hash_bytes(head, h);
            p.head_len = (uint32_t)h;
        }
    }
    return p;
}

uint64_t tl_follow_reopen_errors(const struct tl_follow *f, int *why)
{
    *why = f->st.reopen_errno;
    return f->st.reopen_errors;
}

uint64_t tl_follow_gaps(const struct tl_follow *f)
{
    return f->st.gaps;
}

struct tl_follow_stats tl_follow_stats(const struct tl_follow *f)
{
    struct tl_follow_stats st = f->st;
    struct stat s;
    if (f->fd >= 0 && fstat(f->fd, &s) == 0 && (uint64_t)s.st_size > f->offset)
        st.lag = (uint64_t)s.st_size - f->offset;
    return st;
}

/* A `type: file` source follows a growing plain-text log. Anything else
 * there -- a FIFO, a device, a directory, a gzip or zstd file -- would stall
 * or be read as garbage, so it is refused with what to use instead. A file
 * that does not exist yet is fine: it is waited for. */
bool tl_followable(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st)) return true;
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file (%s); a `type: file` source follows a log "
                 "file (use `type: fifo` for a named pipe, `type: stdin` for a pipe, `type: dir` for a "
                 "directory)", path,
                 S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory" : "a device");
        return false;
    }
    unsigned char m[4] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    ssize_t n = fd >= 0 ? read(fd, m, sizeof m) : 0;
    if (fd >= 0) close(fd);
    bool gz = n >= 2 && m[0] == 0x1f && m[1] == 0x8b;
    bool zst = n == 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd;
    if (gz || zst) {
        snprintf(err, errlen, "%s: %s-compressed; a `type: file` source follows a plain-text log "
                 "(read compressed files with a `type: dir` source, or `tasklens lines FILE`)",
                 path, gz ? "gzip" : "zstd");
        return false;
    }
    return true;
}
