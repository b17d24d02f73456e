/* A directory read file by file: see dirwatch.h.
 *
 * State: the set of files handed out (path -> size, mtime, and whether it
 * could not be read, to try again), a queue of
 * settled files found by the last scan and not handed out yet, and an
 * inotify descriptor watching every directory. A scan walks the tree with
 * openat/fstatat; it runs when inotify said something changed, when files
 * were waiting to settle, and at least every few seconds (a missed event,
 * a watch limit reached). A scan visits each directory once and each file
 * once, whatever symlinks lead to them again (by device and inode): a link
 * to a parent directory is not a loop that multiplies every file. */
#include "core/clock.h"
#include "ingest/dirwatch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/bytes.h"
#include "core/intern.h"
#include "core/path.h"
#include "core/map64.h"

#define MAX_DEPTH 32
#define RESCAN_MS 5000
#define SAVED_WITH_IDS (UINT64_C(1) << 62) /* in the saved count: each entry has its identity */

struct seen {
    char *path;
    uint64_t size;
    int64_t mtime_ns;
    uint64_t id; /* hash of (device, inode): a renamed file is the same file; 0: unknown */
    bool failed; /* could not be read: tried again at the next scans, not saved */
};

struct tl_dirwatch {
    char *dir;
    bool recursive;
    long settle_ms;
    char *match;
    int ino_fd;
    struct tl_map64 index; /* hash(path) -> seen index + 1 (collisions chain by probing) */
    struct tl_map64 by_id; /* file identity -> seen index + 1 */
    struct seen *seen;
    size_t nseen, cap_seen;
    char **queue;
    size_t nqueue, qhead, cap_queue;
    struct tl_map64 visited; /* this scan: hash(dev, ino) of directories and files met */
    bool dirty;        /* inotify said something changed */
    int64_t last_scan; /* ms */
    uint64_t pending;
    char current[PATH_MAX];
    bool current_failed_before; /* the file handed out last could not be read last time */
    bool current_grown;         /* ... was handed out before, and has grown since */
};

/* Index of path in seen, or -1. Keys are hash(path) with linear re-hash
 * on collision (different path under the same key). */
static long seen_find(const struct tl_dirwatch *w, const char *path, uint64_t *key_out)
{
    uint64_t key = tl_hash_bytes(path, strlen(path));
    for (;; key = tl_mix64(key + 1)) {
        if (key == TL_MAP64_EMPTY) continue;
        uint64_t *v = tl_map64_get(&w->index, key);
        if (!v) {
            if (key_out) *key_out = key;
            return -1;
        }
        if (!strcmp(w->seen[*v - 1].path, path)) {
            if (key_out) *key_out = key;
            return (long)(*v - 1);
        }
    }
}

/* A file's identity: device, inode and, where the file system keeps it,
 * birth time (an inode freed by a delete and reused by a new file is not
 * the old file); never TL_MAP64_EMPTY nor 0. */
static uint64_t file_id(const char *path, const struct stat *st)
{
    uint64_t born = (uint64_t)tl_file_birth_ns(path);
    uint64_t id = tl_mix64(tl_mix64((uint64_t)st->st_dev * 0x9E3779B97F4A7C15ULL ^ (uint64_t)st->st_ino) ^ born);
    return id == TL_MAP64_EMPTY || id == 0 ? 1 : id;
}

/* The entry of a file handed out under another name (renamed since, as
 * Spark renames app.inprogress to app): it now goes by path. -1: none. */
static long seen_renamed(struct tl_dirwatch *w, uint64_t id, const char *path)
{
    uint64_t *v = id ? tl_map64_get(&w->by_id, id) : NULL;
    if (!v) return -1;
    long i = (long)*v - 1;
    struct stat st;
    if (!stat(w->seen[i].path, &st) && file_id(w->seen[i].path, &st) == id) return -1; /* a hard link */
    uint64_t key;
    char *p = strdup(path);
    if (!p) return -1;
    /* the old name's key stays: it leads to an entry of another path now,
     * which seen_find passes over, as any collision */
    free(w->seen[i].path);
    w->seen[i].path = p;
    seen_find(w, path, &key);
    tl_map64_put(&w->index, key, (uint64_t)i + 1);
    return i;
}

static bool seen_put(struct tl_dirwatch *w, const char *path, uint64_t size, int64_t mtime, uint64_t id)
{
    uint64_t key;
    long i = seen_find(w, path, &key);
    if (i >= 0) {
        w->seen[i].size = size;
        w->seen[i].mtime_ns = mtime;
        w->seen[i].id = id;
        if (id) tl_map64_put(&w->by_id, id, (uint64_t)i + 1);
        return true;
    }
    if (w->nseen == w->cap_seen) {
        size_t cap = w->cap_seen ? w->cap_seen * 2 : 64;
        struct seen *s = realloc(w->seen, cap * sizeof *s);
        if (!s) return false;
        w->seen = s;
        w->cap_seen = cap;
    }
    char *p = strdup(path);
    if (!p || !tl_map64_put(&w->index, key, w->nseen + 1)) {
        free(p);
        return false;
    }
    if (id) tl_map64_put(&w->by_id, id, w->nseen + 1);
    w->seen[w->nseen++] = (struct seen){p, size, mtime, id, false};
    return true;
}

/* true the first time this scan meets the directory or file (dev, ino). */
static bool first_visit(struct tl_dirwatch *w, const struct stat *st)
{
    uint64_t key = tl_mix64((uint64_t)st->st_dev * 0x9E3779B97F4A7C15ULL ^ (uint64_t)st->st_ino);
    if (key == TL_MAP64_EMPTY) key++;
    if (tl_map64_get(&w->visited, key)) return false;
    tl_map64_put(&w->visited, key, 1);
    return true;
}

static void queue_push(struct tl_dirwatch *w, const char *path)
{
    for (size_t i = w->qhead; i < w->nqueue; i++)
        if (!strcmp(w->queue[i], path)) return;
    if (w->nqueue == w->cap_queue) {
        size_t cap = w->cap_queue ? w->cap_queue * 2 : 64;
        char **q = realloc(w->queue, cap * sizeof *q);
        if (!q) return;
        w->queue = q;
        w->cap_queue = cap;
    }
    char *p = strdup(path);
    if (p) w->queue[w->nqueue++] = p;
}

static void scan_dir(struct tl_dirwatch *w, const char *dir, int depth, int64_t now)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct stat dst;
    if (fstat(dirfd(d), &dst) || !first_visit(w, &dst)) { /* met through another link */
        closedir(d);
        return;
    }
    if (w->ino_fd >= 0)
        inotify_add_watch(w->ino_fd, dir, IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY);
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        size_t nl = strlen(n);
        if (n[0] == '.' || (nl > 4 && !strcmp(n + nl - 4, ".tmp"))) continue;
        struct stat st;
        if (fstatat(dirfd(d), n, &st, 0)) continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, n) >= (int)sizeof path) continue;
        if (S_ISDIR(st.st_mode)) {
            if (w->recursive && depth < MAX_DEPTH) scan_dir(w, path, depth + 1, now);
            continue;
        }
        if (!S_ISREG(st.st_mode) || (w->match && fnmatch(w->match, n, 0))) continue;
        if (!first_visit(w, &st)) continue; /* the same file by another path */
        int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        long i = seen_find(w, path, NULL);
        if (i < 0) i = seen_renamed(w, file_id(path, &st), path); /* app.inprogress -> app */
        /* handed out already, and the same size: the same document, whatever
         * its mtime says (touch, cp -p, rsync, a restore do not make it new) */
        if (i >= 0 && !w->seen[i].failed && w->seen[i].size == (uint64_t)st.st_size) continue;
        if (now - mtime < (int64_t)w->settle_ms * 1000000) {
            w->pending++; /* still being written, perhaps */
            continue;
        }
        queue_push(w, path);
    }
    closedir(d);
}

static void scan(struct tl_dirwatch *w)
{
    w->pending = 0;
    w->dirty = false;
    w->last_scan = tl_mono_ms();
    tl_map64_free(&w->visited);
    scan_dir(w, w->dir, 0, tl_wall_ns());
    tl_map64_free(&w->visited);
}

enum tl_err tl_dirwatch_open(const char *dir, bool recursive, long settle_ms, const char *match,
                             struct tl_dirwatch **out, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: %s", dir, S_ISDIR(st.st_mode) ? strerror(errno) : "not a directory");
        return TL_ERR_OPEN;
    }
    struct tl_dirwatch *w = calloc(1, sizeof *w);
    if (!w || !(w->dir = strdup(dir))) {
        free(w);
        return TL_ERR_NOMEM;
    }
    size_t l = strlen(w->dir);
    while (l > 1 && w->dir[l - 1] == '/') w->dir[--l] = '\0';
    w->recursive = recursive;
    w->settle_ms = settle_ms;
    if (match && strcmp(match, "*") && !(w->match = strdup(match))) {
        tl_dirwatch_close(w);
        return TL_ERR_NOMEM;
    }
    w->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    w->dirty = true;
    *out = w;
    return TL_OK;
}

void tl_dirwatch_close(struct tl_dirwatch *w)
{
    if (!w) return;
    if (w->ino_fd >= 0) close(w->ino_fd);
    for (size_t i = 0; i < w->nseen; i++) free(w->seen[i].path);
    for (size_t i = w->qhead; i < w->nqueue; i++) free(w->queue[i]);
    free(w->seen);
    free(w->queue);
    free(w->match);
    tl_map64_free(&w->index);
    tl_map64_free(&w->by_id);
    tl_map64_free(&w->visited);
    free(w->dir);
    free(w);
}

const char *tl_dirwatch_next(struct tl_dirwatch *w)
{
    if (w->qhead == w->nqueue) {
        w->qhead = w->nqueue = 0;
        int64_t t = tl_mono_ms();
        if (w->dirty || (w->pending && t - w->last_scan >= w->settle_ms / 2) ||
            t - w->last_scan >= RESCAN_MS)
            scan(w);
        if (w->qhead == w->nqueue) return NULL;
    }
    char *p = w->queue[w->qhead++];
    snprintf(w->current, sizeof w->current, "%s", p);
    free(p);
    struct stat st;
    long before = seen_find(w, w->current, NULL);
    w->current_grown = false;
    if (stat(w->current, &st) == 0) {
        /* the same file, longer than when it was handed out: grown */
        uint64_t id = file_id(w->current, &st);
        w->current_grown = before >= 0 && !w->seen[before].failed && w->seen[before].id == id &&
                           (uint64_t)st.st_size > w->seen[before].size;
        seen_put(w, w->current, (uint64_t)st.st_size,
                 (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, id);
    }
    long i = seen_find(w, w->current, NULL);
    w->current_failed_before = i >= 0 && w->seen[i].failed;
    if (i >= 0) w->seen[i].failed = false; /* handed out: read, unless the caller says otherwise */
    return w->current;
}

bool tl_dirwatch_grown(const struct tl_dirwatch *w)
{
    return w->current_grown;
}

uint64_t tl_dirwatch_id(const struct tl_dirwatch *w)
{
    long i = seen_find(w, w->current, NULL);
    return i >= 0 ? w->seen[i].id : 0;
}

bool tl_dirwatch_failed(struct tl_dirwatch *w)
{
    long i = seen_find(w, w->current, NULL);
    if (i >= 0) w->seen[i].failed = true;
    return w->current_failed_before;
}

int tl_dirwatch_fd(const struct tl_dirwatch *w)
{
    return w->ino_fd;
}

void tl_dirwatch_events(struct tl_dirwatch *w)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (w->ino_fd >= 0 && read(w->ino_fd, buf, sizeof buf) > 0) w->dirty = true;
}

uint64_t tl_dirwatch_count(const struct tl_dirwatch *w)
{
    return w->nseen;
}

uint64_t tl_dirwatch_pending(const struct tl_dirwatch *w)
{
    return w->pending + (w->nqueue - w->qhead);
}

enum tl_err tl_dirwatch_save(const struct tl_dirwatch *w, struct tl_buf *b)
{
    uint64_t n = 0;
    for (size_t i = 0; i < w->nseen; i++) n += !w->seen[i].failed;
    tl_put_varint(b, n | SAVED_WITH_IDS); /* states before identities had none */
    for (size_t i = 0; i < w->nseen; i++) {
        if (w->seen[i].failed) continue; /* not read: a restart tries it again */
        tl_put_str(b, w->seen[i].path);
        tl_put_varint(b, w->seen[i].size);
        tl_put_varint(b, tl_zigzag(w->seen[i].mtime_ns));
        tl_put_varint(b, w->seen[i].id);
    }
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

enum tl_err tl_dirwatch_restore(struct tl_dirwatch *w, const uint8_t *p, size_t len)
{
    const uint8_t *end = p + len;
    uint64_t n, size, mt, id = 0;
    if (!tl_get_varint(&p, end, &n)) return TL_ERR_CORRUPT;
    bool ids = n & SAVED_WITH_IDS;
    n &= ~SAVED_WITH_IDS;
    if (n > len) return TL_ERR_CORRUPT;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t sl;
        char path[PATH_MAX];
        if (!tl_get_str(&p, end, PATH_MAX - 1, &s, &sl) || !tl_get_varint(&p, end, &size) ||
            !tl_get_varint(&p, end, &mt) || (ids && !tl_get_varint(&p, end, &id)) ||
            id == TL_MAP64_EMPTY)
            return TL_ERR_CORRUPT;
        memcpy(path, s, sl);
        path[sl] = '\0';
        if (!seen_put(w, path, size, tl_unzigzag(mt), id)) return TL_ERR_NOMEM;
    }
    return p == end ? TL_OK : TL_ERR_CORRUPT;
}
