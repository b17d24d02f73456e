/* Following a file: see follow.h.
 *
 * The state is one open descriptor, the identity (dev, ino) it had when
 * opened, and the offset read so far. Every read that reaches the end of
 * the descriptor checks the path: another inode there means rotation, a
 * size below our offset means truncation. Checking only at end-of-data
 * keeps the common case (appends) to plain reads. */
#include "follow.h"

#include "intern.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

struct tl_follow {
    char *path;
    char *name; /* basename, for inotify events */
    int fd;
    uint64_t dev, ino, offset;
    bool last_was_newline; /* of the bytes delivered from the current file */
    bool pending_newline;  /* owed before the next file's bytes */
    int ino_fd;            /* inotify, -1 if unavailable */
    struct tl_follow_stats st;
    /* rotated while we were down more than once: the files rotated after
     * the checkpointed one, oldest first, read whole before the path */
    char **chain;
    int nchain, ichain;
};

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
    f->fd = fd;
    f->dev = (uint64_t)st.st_dev;
    f->ino = (uint64_t)st.st_ino;
    f->offset = 0;
    f->last_was_newline = true;
    return 0;
}

#define TAIL_BYTES 4096

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

/* Does fd hold the checkpointed bytes: long enough, same tail? */
static bool holds_position(int fd, const struct tl_follow_pos *at)
{
    struct stat st;
    uint64_t h;
    return fstat(fd, &st) == 0 && at->offset <= (uint64_t)st.st_size &&
           tail_hash(fd, at->offset, &h) && h == at->tail_hash;
}

struct chain_entry {
    char *name;
    struct timespec mtime;
};

static int by_mtime(const void *a, const void *b)
{
    const struct chain_entry *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* Files rotated after the one we resume in: same directory, named after
 * the path (`name.1`, `name-2026...`), not the path itself, last written
 * after the old file. Oldest first. Compressed ones cannot be followed and
 * are reported. */
static void find_chain(struct tl_follow *f, DIR *d, const char *old_name,
                       const struct stat *old)
{
    size_t blen = strlen(f->name);
    struct chain_entry *c = NULL;
    int n = 0, cap = 0;
    struct stat live;
    bool have_live = stat(f->path, &live) == 0;
    rewinddir(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (strncmp(e->d_name, f->name, blen) || !strcmp(e->d_name, f->name) ||
            !strcmp(e->d_name, old_name) || fstatat(dirfd(d), e->d_name, &st, 0) ||
            !S_ISREG(st.st_mode) || (have_live && st.st_ino == live.st_ino) ||
            st.st_ino == old->st_ino || by_mtime(&(struct chain_entry){NULL, st.st_mtim},
                                                 &(struct chain_entry){NULL, old->st_mtim}) < 0)
            continue;
        size_t nl = strlen(e->d_name);
        if ((nl > 3 && !strcmp(e->d_name + nl - 3, ".gz")) ||
            (nl > 4 && !strcmp(e->d_name + nl - 4, ".zst"))) {
            f->st.chain_skipped++;
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            struct chain_entry *nc = realloc(c, (size_t)cap * sizeof *c);
            if (!nc) break;
            c = nc;
        }
        if (!(c[n].name = strdup(e->d_name))) break;
        c[n++].mtime = st.st_mtim;
    }
    if (n > 1) qsort(c, (size_t)n, sizeof *c, by_mtime);
    f->chain = n ? malloc((size_t)n * sizeof *f->chain) : NULL;
    for (int i = 0; i < n; i++) {
        if (f->chain) f->chain[i] = c[i].name;
        else free(c[i].name);
    }
    f->nchain = f->chain ? n : 0;
    f->st.chain_files = (uint64_t)f->nchain;
    free(c);
}

/* Opens the next file of the chain at 0; false when the chain is done. */
static bool next_in_chain(struct tl_follow *f)
{
    while (f->ichain < f->nchain) {
        const char *name = f->chain[f->ichain++];
        char p[PATH_MAX];
        size_t dlen = (size_t)(f->name - f->path);
        snprintf(p, sizeof p, "%.*s%s", (int)dlen, f->path, name);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0) continue;
        if (fstat(fd, &st)) {
            close(fd);
            continue;
        }
        f->fd = fd;
        f->dev = (uint64_t)st.st_dev;
        f->ino = (uint64_t)st.st_ino;
        f->offset = 0;
        f->last_was_newline = true;
        return true;
    }
    return false;
}

/* The old file, rotated away while we were not running: a file in the
 * path's directory with the checkpointed identity. Opens it into f. */
static bool find_rotated(struct tl_follow *f, const struct tl_follow_pos *at)
{
    char dir[PATH_MAX];
    size_t dlen = (size_t)(f->name - f->path);
    if (dlen) snprintf(dir, sizeof dir, "%.*s", (int)dlen, f->path);
    else snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    if (!d) return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, 0) || !S_ISREG(st.st_mode) ||
            (uint64_t)st.st_ino != at->ino || (uint64_t)st.st_dev != at->dev)
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        if (holds_position(fd, at)) {
            f->fd = fd;
            f->dev = at->dev;
            f->ino = at->ino;
            snprintf(f->st.rotated_name, sizeof f->st.rotated_name, "%s", e->d_name);
            found = true;
            find_chain(f, d, e->d_name, &st);
        } else {
            close(fd);
        }
    }
    closedir(d);
    return found;
}

enum tl_err tl_follow_open(const char *path, bool from_end, const struct tl_follow_pos *at,
                           struct tl_follow **out, char *err, size_t errlen)
{
    struct tl_follow *f = calloc(1, sizeof *f);
    if (!f) return TL_ERR_NOMEM;
    f->path = strdup(path);
    f->fd = -1;
    f->ino_fd = -1;
    if (!f->path) {
        free(f);
        return TL_ERR_NOMEM;
    }
    const char *slash = strrchr(path, '/');
    f->name = slash ? f->path + (slash - path) + 1 : f->path;
    int opened = open_path(f);
    if (opened && errno != ENOENT) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        tl_follow_close(f);
        return TL_ERR_OPEN;
    }
    if (at) {
        if (opened == 0 && at->dev == f->dev && at->ino == f->ino && holds_position(f->fd, at)) {
            f->st.resume = TL_RESUME_SAME;
        } else {
            int fresh = f->fd;
            f->fd = -1;
            if (find_rotated(f, at)) { /* even at offset 0: its bytes are still unread */
                if (fresh >= 0) close(fresh); /* reopened once the old file is done */
                f->st.resume = TL_RESUME_ROTATED;
            } else {
                f->fd = fresh;
                f->st.resume = TL_RESUME_REPLACED;
            }
        }
        if (f->st.resume != TL_RESUME_REPLACED) {
            f->offset = at->offset;
            f->last_was_newline = !at->mid_line;
        } else {
            f->pending_newline = at->mid_line; /* the parser holds a partial line */
        }
    } else if (opened == 0 && from_end) {
        struct stat st;
        if (fstat(f->fd, &st) == 0) f->offset = (uint64_t)st.st_size;
    }
    if (f->fd >= 0) lseek(f->fd, (off_t)f->offset, SEEK_SET);
    /* inotify on the directory: sees the file appear, be renamed, be written */
    f->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (f->ino_fd >= 0) {
        char dir[PATH_MAX];
        if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) ? (int)(slash - path) : 1, path);
        else snprintf(dir, sizeof dir, ".");
        if (inotify_add_watch(f->ino_fd, dir,
                              IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                                  IN_CLOSE_WRITE | IN_ATTRIB) < 0) {
            close(f->ino_fd);
            f->ino_fd = -1; /* polling fallback */
        }
    }
    *out = f;
    return TL_OK;
}

void tl_follow_close(struct tl_follow *f)
{
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    if (f->ino_fd >= 0) close(f->ino_fd);
    for (int i = 0; i < f->nchain; i++) free(f->chain[i]);
    free(f->chain);
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

/* Leaves the current file; a newline is owed if it ended mid-line. */
static void leave_file(struct tl_follow *f)
{
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
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

enum tl_err tl_follow_read(struct tl_follow *f, char *buf, size_t cap, size_t *got)
{
    *got = 0;
    if (cap == 0) return TL_OK;
    if (give_owed_newline(f, buf, got)) return TL_OK;
    for (int attempt = 0; attempt < 3 + f->nchain; attempt++) {
        if (f->fd < 0 && !next_in_chain(f)) {
            if (open_path(f)) { /* not there (yet), or not readable: wait */
                if (errno != ENOENT) {
                    f->st.reopen_errors++; /* rotated into something we cannot read */
                    f->st.reopen_errno = errno;
                }
                return TL_OK;
            }
        }
        ssize_t n;
        do n = read(f->fd, buf, cap);
        while (n < 0 && errno == EINTR);
        if (n < 0) return TL_ERR_IO;
        if (n > 0) {
            f->offset += (uint64_t)n;
            f->st.bytes += (uint64_t)n;
            f->last_was_newline = buf[n - 1] == '\n';
            *got = (size_t)n;
            return TL_OK;
        }
        /* At the end of what the descriptor holds: is the path still ours? */
        struct stat ps, fs;
        if (f->ichain < f->nchain) { /* a rotated file: complete, on to the next */
            leave_file(f);
            if (give_owed_newline(f, buf, got)) return TL_OK;
            continue;
        }
        if (stat(f->path, &ps)) return TL_OK; /* gone (mid-rotation): keep waiting */
        if ((uint64_t)ps.st_ino != f->ino || (uint64_t)ps.st_dev != f->dev) {
            f->st.rotations++; /* the old file is read to its end: switch */
            leave_file(f);
            if (give_owed_newline(f, buf, got)) return TL_OK;
            continue;
        }
        if (fstat(f->fd, &fs) == 0 && (uint64_t)fs.st_size < f->offset) {
            f->st.truncations++; /* copytruncate: the content starts over */
            if (!f->last_was_newline) f->pending_newline = true;
            f->offset = 0;
            f->last_was_newline = true;
            lseek(f->fd, 0, SEEK_SET);
            if (give_owed_newline(f, buf, got)) return TL_OK;
            continue;
        }
        f->st.lag = 0;
        return TL_OK;
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
    struct tl_follow_pos p = {f->dev, f->ino, f->offset, 0, !f->last_was_newline};
    if (f->fd >= 0) tail_hash(f->fd, f->offset, &p.tail_hash);
    return p;
}

uint64_t tl_follow_reopen_errors(const struct tl_follow *f, int *why)
{
    *why = f->st.reopen_errno;
    return f->st.reopen_errors;
}

struct tl_follow_stats tl_follow_stats(const struct tl_follow *f)
{
    struct tl_follow_stats st = f->st;
    struct stat s;
    if (f->fd >= 0 && fstat(f->fd, &s) == 0 && (uint64_t)s.st_size > f->offset)
        st.lag = (uint64_t)s.st_size - f->offset;
    return st;
}
