/* Paths that name an input whatever way it was written. A followed file
 * may not exist yet, so realpath() alone is not enough: its directory is
 * resolved and its name appended, and the same file named as a.log, ./a.log
 * or through a symlink is one input (and one checkpoint section). */
#include "core/path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *tl_canonical_path(const char *path)
{
    char *r = realpath(path, NULL);
    if (r) return r;
    const char *slash = strrchr(path, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    char *d = realpath(*dir ? dir : "/", NULL);
    if (!d) return strdup(path);
    size_t n = strlen(d) + strlen(slash ? slash + 1 : path) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s", strcmp(d, "/") ? d : "", slash ? slash + 1 : path);
    free(d);
    return out;
}

bool tl_dir_writable(const char *path, bool is_dir, char *why, size_t cap)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    if (!is_dir) {
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        else snprintf(dir, sizeof dir, ".");
    }
    struct stat st;
    while (stat(dir, &st) && errno == ENOENT) { /* the nearest existing parent */
        char *slash = strrchr(dir, '/');
        if (!slash) {
            snprintf(dir, sizeof dir, ".");
            break;
        }
        *slash = '\0';
        if (!dir[0]) snprintf(dir, sizeof dir, "/");
    }
    if (access(dir, W_OK)) {
        snprintf(why, cap, "%.400s: %s", dir, strerror(errno));
        return false;
    }
    return true;
}


int64_t tl_file_mtime_ns(const char *path)
{
    struct stat sb;
    if (!path || stat(path, &sb) || !S_ISREG(sb.st_mode)) return 0;
    return (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
}

int64_t tl_file_birth_ns(const char *path)
{
    struct statx sx;
    if (!path || statx(AT_FDCWD, path, 0, STATX_BTIME, &sx) || !(sx.stx_mask & STATX_BTIME) ||
        !S_ISREG(sx.stx_mode))
        return 0;
    return (int64_t)sx.stx_btime.tv_sec * 1000000000 + sx.stx_btime.tv_nsec;
}

void tl_sync_dir_of(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

bool tl_out_open(struct tl_out_file *o, const char *path, char *err, size_t cap)
{
    *o = (struct tl_out_file){0};
    if (!strcmp(path, "-")) {
        o->f = stdout;
        return true;
    }
    struct stat target;
    if (stat(path, &target) == 0 && !S_ISREG(target.st_mode)) { /* a device or a FIFO: no rename */
        if (!(o->f = fopen(path, "w")) || !(o->path = strdup(path))) {
            snprintf(err, cap, "%s: %s", path, strerror(errno));
            if (o->f) fclose(o->f);
            *o = (struct tl_out_file){0};
            return false;
        }
        return true;
    }
    /* a symlink stays one: the file it points to is replaced */
    char *real = realpath(path, NULL);
    if (real) path = real;
    size_t n = strlen(path) + sizeof ".tasklens-XXXXXX";
    o->path = strdup(path);
    free(real);
    path = o->path ? o->path : "";
    o->tmp = malloc(n);
    if (!o->path || !o->tmp) {
        snprintf(err, cap, "%s: %s", path, strerror(ENOMEM));
        goto fail;
    }
    snprintf(o->tmp, n, "%s.tasklens-XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        goto fail;
    }
    mode_t mask = umask(0); /* the mode a plain fopen would give: 0666 less the umask */
    umask(mask);
    if (stat(path, &target) == 0) fchmod(fd, target.st_mode & 07777); /* an existing file keeps its mode */
    else fchmod(fd, 0666 & ~mask);
    if (!(o->f = fdopen(fd, "w"))) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        close(fd);
        unlink(o->tmp);
        goto fail;
    }
    return true;
fail:
    free(o->path);
    free(o->tmp);
    *o = (struct tl_out_file){0};
    return false;
}

bool tl_out_commit(struct tl_out_file *o, int write_errno, char *err, size_t cap)
{
    if (!o->f && !o->tmp) return false;
    int e = write_errno;
    if (o->f && fflush(o->f) && !e) e = errno;
    if (!o->tmp) { /* stdout, or a device or FIFO written directly */
        if (o->f && o->f != stdout && fclose(o->f) && !e) e = errno;
        if (e) snprintf(err, cap, "%s: %s", o->path ? o->path : "stdout", strerror(e));
        free(o->path);
        *o = (struct tl_out_file){0};
        return !e;
    }
    if (o->f) {
        if (fsync(fileno(o->f)) && !e) e = errno;
        if (fclose(o->f) && !e) e = errno;
        o->f = NULL;
    } else if (!e) { /* written by someone else through its path: made durable here */
        int fd = open(o->tmp, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fsync(fd)) e = errno;
        if (fd >= 0) close(fd);
    }
    if (!e && rename(o->tmp, o->path)) e = errno;
    if (!e) tl_sync_dir_of(o->path);
    else {
        unlink(o->tmp);
        snprintf(err, cap, "%s: %s (the file is as it was)", o->path, strerror(e));
    }
    free(o->path);
    free(o->tmp);
    *o = (struct tl_out_file){0};
    return !e;
}
