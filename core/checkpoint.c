/* Checkpoints: see checkpoint.h. */
#include "core/checkpoint.h"
#include "core/path.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/bytes.h"
#include "core/zframe.h"

#define CKPT_MAGIC "TLCP"
#define CKPT_VERSION 1
#define CKPT_HEADER 9
#define CKPT_MAX_RAW (1ULL << 34) /* 16 GiB: far above any real state */

bool tl_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        c += w;
        n -= (size_t)w;
    }
    return true;
}

/* fsync the directory holding path, so the rename itself is durable. */
int tl_lock_dir(const char *dir, const char *what, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        snprintf(err, errlen, "%s %s is in use by another tasklens%s%s%s", what, dir,
                 *pid ? " (pid " : "", pid, *pid ? ")" : "");
        close(fd);
        return -1;
    }
    char line[32];
    int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, line, (size_t)n, 0) == n) { /* the pid is a hint only */
    }
    return fd;
}

enum tl_err tl_write_atomic(const char *path, const void *data, size_t len, char *err,
                            size_t errlen)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return TL_ERR_USAGE;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return TL_ERR_IO;
    }
    bool ok = tl_write_all(fd, data, len) && fsync(fd) == 0;
    int saved = errno;
    close(fd);
    if (!ok || rename(tmp, path)) {
        if (ok) saved = errno;
        snprintf(err, errlen, "%s: %s", ok ? path : tmp, strerror(saved));
        unlink(tmp);
        return TL_ERR_IO;
    }
    tl_sync_dir_of(path);
    return TL_OK;
}

enum tl_err tl_ckpt_save(const char *path, const struct tl_ckpt_section *s, size_t n, char *err,
                         size_t errlen)
{
    struct tl_buf raw = {0}, file = {0};
    tl_put_varint(&raw, n);
    for (size_t i = 0; i < n; i++) {
        tl_put_str(&raw, s[i].name);
        tl_put_varint(&raw, s[i].len);
        tl_buf_append(&raw, s[i].data, s[i].len);
    }
    tl_buf_append(&file, CKPT_MAGIC, 4);
    tl_put_u8(&file, CKPT_VERSION);
    tl_buf_append(&file, "\0\0\0\0", 4); /* CRC, filled in below */
    enum tl_err rc = raw.oom ? TL_ERR_NOMEM : tl_zframe_append(&file, raw.data, raw.len);
    tl_buf_free(&raw);
    if (!rc && file.oom) rc = TL_ERR_NOMEM;
    if (rc) {
        snprintf(err, errlen, "checkpoint: %s", tl_strerror(rc));
        tl_buf_free(&file);
        return rc;
    }
    uint32_t crc = (uint32_t)crc32(0, (const Bytef *)file.data + CKPT_HEADER,
                                   (uInt)(file.len - CKPT_HEADER));
    for (int i = 0; i < 4; i++) file.data[5 + i] = (char)(crc >> (8 * i));
    rc = tl_write_atomic(path, file.data, file.len, err, errlen);
    tl_buf_free(&file);
    return rc;
}

static enum tl_err read_file(const char *path, uint8_t **data, size_t *len, char *err,
                             size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return errno == ENOENT ? TL_ERR_OPEN : TL_ERR_IO;
    }
    struct stat st;
    if (fstat(fd, &st) || st.st_size < CKPT_HEADER) {
        close(fd);
        snprintf(err, errlen, "%s: too short to be a checkpoint", path);
        return TL_ERR_CORRUPT;
    }
    uint8_t *d = malloc((size_t)st.st_size);
    size_t got = 0;
    while (d && got < (size_t)st.st_size) {
        ssize_t r = read(fd, d + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (!d || got != (size_t)st.st_size) {
        free(d);
        snprintf(err, errlen, "%s: %s", path, d ? "short read" : "out of memory");
        return d ? TL_ERR_IO : TL_ERR_NOMEM;
    }
    *data = d;
    *len = got;
    return TL_OK;
}

enum tl_err tl_ckpt_load(const char *path, struct tl_ckpt *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    uint8_t *file;
    size_t flen;
    enum tl_err rc = read_file(path, &file, &flen, err, errlen);
    if (rc) return rc;
    uint32_t crc = 0;
    for (int i = 0; i < 4; i++) crc |= (uint32_t)file[5 + i] << (8 * i);
    if (memcmp(file, CKPT_MAGIC, 4) || file[4] != CKPT_VERSION ||
        (uint32_t)crc32(0, file + CKPT_HEADER, (uInt)(flen - CKPT_HEADER)) != crc) {
        free(file);
        snprintf(err, errlen, "%s: not a tasklens checkpoint of this version, or damaged (CRC)",
                 path);
        return TL_ERR_CORRUPT;
    }
    size_t rawlen;
    rc = tl_zframe_decode(file + CKPT_HEADER, flen - CKPT_HEADER, CKPT_MAX_RAW, &c->blob, &rawlen);
    free(file);
    if (rc) {
        snprintf(err, errlen, "%s: does not decode", path);
        return TL_ERR_CORRUPT;
    }
    const uint8_t *p = c->blob, *end = c->blob + rawlen;
    uint64_t n;
    if (!tl_get_varint(&p, end, &n) || n > TL_CKPT_MAX_SECTIONS) goto corrupt;
    c->sections = calloc(n ? n : 1, sizeof *c->sections);
    c->name_lens = calloc(n ? n : 1, sizeof *c->name_lens);
    if (!c->sections || !c->name_lens) {
        tl_ckpt_free(c);
        snprintf(err, errlen, "%s: out of memory", path);
        return TL_ERR_NOMEM;
    }
    for (uint64_t i = 0; i < n; i++) {
        struct tl_ckpt_section *s = &c->sections[i];
        const char *name;
        size_t nlen;
        uint64_t len;
        if (!tl_get_str(&p, end, 255, &name, &nlen) || !tl_get_varint(&p, end, &len) ||
            (uint64_t)(end - p) < len)
            goto corrupt;
        s->name = name;
        s->data = p;
        s->len = (size_t)len;
        c->name_lens[i] = nlen;
        p += len;
    }
    c->nsections = (size_t)n;
    return TL_OK;
corrupt:
    tl_ckpt_free(c);
    snprintf(err, errlen, "%s: sections are damaged", path);
    return TL_ERR_CORRUPT;
}

const struct tl_ckpt_section *tl_ckpt_find(const struct tl_ckpt *c, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < c->nsections; i++)
        if (c->name_lens[i] == n && !memcmp(c->sections[i].name, name, n)) return &c->sections[i];
    return NULL;
}

void tl_ckpt_free(struct tl_ckpt *c)
{
    free(c->blob);
    free(c->sections);
    free(c->name_lens);
    memset(c, 0, sizeof *c);
}
