/* The files of a directory tree, in name order: what a batch command reads
 * when it is given a directory (an LSST datastore, a folder of traces, a
 * rolling Spark event log). Which files belong to a format is the format's
 * knowledge (its parser's `member`, `dir_part`); this file only walks.
 *
 * A butler datastore holds tens of thousands of directories and files, so
 * the walk reads entries with getdents64 and trusts their d_type: no stat
 * per entry (31-40 k metadata files/s on a 20,000-file tree, bench/). */
#include "ingest/dirlist.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool tl_file_list_add(struct tl_file_list *fl, const char *path)
{
    if (fl->n == fl->cap) {
        size_t cap = fl->cap ? fl->cap * 2 : 1024;
        char **p = realloc(fl->paths, cap * sizeof *p);
        if (!p) return false;
        fl->paths = p;
        fl->cap = cap;
    }
    if (!(fl->paths[fl->n] = strdup(path))) return false;
    fl->n++;
    return true;
}

/* A directory that could not be read: counted, the first kept for the
 * caller to say (a library room never prints). */
static void unreadable(struct tl_file_list *fl, const char *path, int err)
{
    if (!fl->unreadable++) snprintf(fl->first_unreadable, sizeof fl->first_unreadable, "%s: %s", path, strerror(err));
}

const char *tl_file_list_problem(const struct tl_file_list *fl, char *buf, size_t cap)
{
    if (!fl->unreadable) return NULL;
    if (fl->unreadable == 1) snprintf(buf, cap, "%s", fl->first_unreadable);
    else snprintf(buf, cap, "%s (and %zu more directories not read)", fl->first_unreadable, fl->unreadable - 1);
    return buf;
}

/* Files under the directory fd (path: its name), recursively (symlinks not
 * followed): those `want` takes (hidden directories too), or every file
 * not hidden. A butler
 * datastore holds more directories than files, so this reads entries with
 * getdents64 and trusts their d_type (no opendir fstat, no stat per entry;
 * fstatat only where the filesystem does not say). */
static bool walk(struct tl_file_list *fl, int fd, char *path, size_t plen, int depth,
                 bool (*want)(const char *name))
{
    size_t cap = 32768, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return false;
    }
    for (;;) { /* every entry first: the fd is then free for the children */
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) break;
            buf = nb;
            cap *= 2;
        }
        ssize_t n = getdents64(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n < 0) unreadable(fl, path, errno);
            break;
        }
        len += (size_t)n;
    }
    bool ok = true;
    for (size_t off = 0; off < len;) {
        struct dirent64 *e = (struct dirent64 *)(buf + off);
        off += e->d_reclen;
        const char *name = e->d_name;
        if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
        size_t nl = strlen(name);
        if (plen + 1 + nl + 1 > PATH_MAX) continue;
        path[plen] = '/';
        memcpy(path + plen + 1, name, nl + 1);
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN) {
            struct stat st;
            if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW)) continue;
            type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
        }
        if (type == DT_DIR && depth < 64) {
            if (!want && name[0] == '.') continue;
            int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                unreadable(fl, path, errno);
                ok = false;
                continue;
            }
            ok &= walk(fl, sub, path, plen + 1 + nl, depth + 1, want);
        } else if (type == DT_REG && (want ? want(name) : name[0] != '.')) {
            ok &= tl_file_list_add(fl, path);
        }
    }
    path[plen] = '\0';
    free(buf);
    close(fd);
    return ok;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

bool tl_dir_list(struct tl_file_list *fl, const char *dir, bool (*want)(const char *name))
{
    size_t before = fl->n;
    char path[PATH_MAX];
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || strlen(dir) >= sizeof path) {
        unreadable(fl, dir, fd < 0 ? errno : ENAMETOOLONG);
        if (fd >= 0) close(fd);
        return false;
    }
    strcpy(path, dir);
    size_t plen = strlen(path);
    while (plen > 1 && path[plen - 1] == '/') path[--plen] = '\0'; /* "dir/" names files "dir/x" */
    bool ok = walk(fl, fd, path, plen, 0, want);
    if (fl->n > before) qsort(fl->paths + before, fl->n - before, sizeof *fl->paths, cmp_str);
    return ok;
}

void tl_file_list_free(struct tl_file_list *fl)
{
    for (size_t i = 0; i < fl->n; i++) free(fl->paths[i]);
    free(fl->paths);
    *fl = (struct tl_file_list){0};
}
