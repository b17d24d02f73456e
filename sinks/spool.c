/* The disk spool: see spool.h for the format and the guarantees. */
#include "sinks/spool.h"

#include "core/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define MAGIC_V1 "TLF1" /* older spools: no header CRC (still read) */
#define MAGIC_V2 "TLF2"
#define HEADER_V1 16
#define HEADER 20
#define MAX_FRAME (256u << 20)
#define SCAN_CHUNK (1u << 20)

struct segment {
    uint64_t seq;
    uint64_t size; /* valid bytes */
};

struct tl_spool {
    struct tl_spool_cfg cfg;
    char *dir;
    struct segment *segs;
    size_t nsegs, cap;
    uint64_t read_off;   /* in segs[0] */
    uint64_t next_seq;   /* for the next new segment: never reused, so `pos`
                            (segments below it are drained) stays true */
    int wfd;             /* the last segment, open for append; -1 none */
    bool dirty;          /* appended since the last fsync */
    bool new_segment;    /* a failed write could not be undone: append elsewhere */
    uint32_t peek_size;  /* frame size of the last peek, 0 = none */
    int lock_fd;         /* DIR/lock: one owner */
    struct tl_spool_stats st;
    struct tl_buf io;
    struct tl_buf scan;  /* resync reads */
    char error[4200 + 128]; /* the last write error: path and errno text */
};

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void seg_path(const struct tl_spool *sp, uint64_t seq, char *out, size_t cap)
{
    snprintf(out, cap, "%s/seg-%016llu.tls", sp->dir, (unsigned long long)seq);
}

static bool pread_all(int fd, void *buf, size_t n, uint64_t off)
{
    char *p = buf;
    while (n) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return true;
}

/* Reads and checks the frame at off; returns its total size, or 0 if the
 * frame is truncated or damaged (why in *why). payload gets the bytes.
 * A v2 header carries a CRC of its own first 16 bytes, so a flipped bit in
 * a length is caught before the length is believed. */
static uint32_t read_frame(int fd, uint64_t off, uint64_t size, struct tl_buf *payload,
                           uint32_t *raw_len, const char **why)
{
    unsigned char h[HEADER];
    uint64_t left = size - off;
    if (left < HEADER_V1 || !pread_all(fd, h, HEADER_V1, off)) {
        *why = "truncated frame header";
        return 0;
    }
    uint32_t hsize = HEADER_V1;
    if (!memcmp(h, MAGIC_V2, 4)) {
        if (left < HEADER || !pread_all(fd, h + HEADER_V1, 4, off + HEADER_V1)) {
            *why = "truncated frame header";
            return 0;
        }
        if ((uint32_t)crc32(0, h, HEADER_V1) != get32(h + HEADER_V1)) {
            *why = "damaged frame header";
            return 0;
        }
        hsize = HEADER;
    } else if (memcmp(h, MAGIC_V1, 4)) {
        *why = "bad frame magic";
        return 0;
    }
    uint32_t len = get32(h + 4), raw = get32(h + 8), crc = get32(h + 12);
    if (len > MAX_FRAME || raw > MAX_FRAME) {
        *why = "impossible frame length";
        return 0;
    }
    if (left - hsize < len) {
        *why = "truncated frame";
        return 0;
    }
    payload->len = 0;
    if (!tl_buf_reserve(payload, len) || !pread_all(fd, payload->data, len, off + hsize)) {
        *why = "unreadable frame";
        return 0;
    }
    payload->len = len;
    if ((uint32_t)crc32(0, (const Bytef *)payload->data, len) != crc) {
        *why = "CRC mismatch";
        return 0;
    }
    *raw_len = raw;
    return hsize + len;
}

/* The offset of the first intact frame at or after `from`, or `size` when
 * none follows: how reading gets past damage, so a broken frame costs only
 * its own bytes. Candidates are found by their magic and kept only when
 * their header (v2) and payload checksums hold. */
static uint64_t next_frame(struct tl_spool *sp, int fd, uint64_t from, uint64_t size)
{
    struct tl_buf payload = {0};
    uint64_t found = size;
    for (uint64_t base = from; base + 4 <= size && found == size;) {
        size_t n = (size_t)(size - base < SCAN_CHUNK ? size - base : SCAN_CHUNK);
        sp->scan.len = 0;
        if (!tl_buf_reserve(&sp->scan, n) || !pread_all(fd, sp->scan.data, n, base)) break;
        const char *p = sp->scan.data, *end = p + n;
        while (p + 4 <= end && (p = memmem(p, (size_t)(end - p), "TLF", 3))) {
            uint32_t raw;
            const char *why;
            if (p + 3 < end && (p[3] == '1' || p[3] == '2') &&
                read_frame(fd, base + (uint64_t)(p - sp->scan.data), size, &payload, &raw, &why)) {
                found = base + (uint64_t)(p - sp->scan.data);
                break;
            }
            p++;
        }
        if (n < SCAN_CHUNK) break;
        base += n - 3; /* a magic across the chunk boundary is seen in the next chunk */
    }
    tl_buf_free(&payload);
    return found;
}

static int cmp_seg(const void *a, const void *b)
{
    uint64_t x = ((const struct segment *)a)->seq, y = ((const struct segment *)b)->seq;
    return (x > y) - (x < y);
}

static bool push_seg(struct tl_spool *sp, uint64_t seq, uint64_t size)
{
    if (sp->nsegs == sp->cap) {
        size_t cap = sp->cap ? sp->cap * 2 : 8;
        struct segment *s = realloc(sp->segs, cap * sizeof *s);
        if (!s) return false;
        sp->segs = s;
        sp->cap = cap;
    }
    sp->segs[sp->nsegs++] = (struct segment){seq, size};
    return true;
}

static enum tl_err write_pos(struct tl_spool *sp)
{
    char path[4096], line[64], err[256];
    snprintf(path, sizeof path, "%s/pos", sp->dir);
    int n = snprintf(line, sizeof line, "%llu %llu\n",
                     (unsigned long long)(sp->nsegs ? sp->segs[0].seq : sp->next_seq),
                     (unsigned long long)(sp->nsegs ? sp->read_off : 0));
    return tl_write_atomic(path, line, (size_t)n, err, sizeof err);
}

/* Scans one segment from `from`: counts its intact frames (damage between
 * them is skipped here and reported when draining reaches it), and trims a
 * tail with no intact frame in it (a crash in the middle of a write). */
static void scan_segment(struct tl_spool *sp, struct segment *s, uint64_t from)
{
    char path[4096];
    seg_path(sp, s->seq, path, sizeof path);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        s->size = 0;
        return;
    }
    struct stat st;
    fstat(fd, &st);
    uint64_t size = (uint64_t)st.st_size, off = from;
    while (off < size) {
        uint32_t raw;
        const char *why = NULL;
        uint32_t n = read_frame(fd, off, size, &sp->io, &raw, &why);
        if (n) {
            off += n;
            sp->st.frames++;
            sp->st.bytes += n;
            continue;
        }
        uint64_t next = next_frame(sp, fd, off + 1, size);
        if (next < size) {
            off = next;
            continue;
        }
        tl_log(sp->cfg.log, TL_LOG_WARN, "spool %s:%llu: %s; the %llu bytes after it hold no "
                                         "intact frame and are removed",
                path, (unsigned long long)off, why, (unsigned long long)(size - off));
        sp->st.corrupt_frames++;
        sp->st.corrupt_bytes += size - off;
        if (ftruncate(fd, (off_t)off) == 0) fsync(fd);
        size = off;
    }
    s->size = size;
    close(fd);
}

enum tl_err tl_spool_open(const struct tl_spool_cfg *cfg, struct tl_spool **out, char *err,
                          size_t errlen)
{
    if (!cfg->dir || !*cfg->dir) {
        snprintf(err, errlen, "spool: no directory");
        return TL_ERR_USAGE;
    }
    if (mkdir(cfg->dir, 0750) && errno != EEXIST) {
        snprintf(err, errlen, "spool: %s: %s", cfg->dir, strerror(errno));
        return TL_ERR_IO;
    }
    int lock_fd = tl_lock_dir(cfg->dir, "spool directory", err, errlen);
    if (lock_fd < 0) return TL_ERR_OPEN;
    struct tl_spool *sp = calloc(1, sizeof *sp);
    if (!sp) {
        close(lock_fd);
        return TL_ERR_NOMEM;
    }
    sp->lock_fd = lock_fd;
    sp->cfg = *cfg;
    if (!sp->cfg.max_bytes) sp->cfg.max_bytes = 1ULL << 30;
    if (!sp->cfg.segment_bytes) sp->cfg.segment_bytes = 64ULL << 20;
    sp->dir = strdup(cfg->dir);
    sp->wfd = -1;
    DIR *d = opendir(cfg->dir);
    if (!d || !sp->dir) {
        snprintf(err, errlen, "spool: %s: %s", cfg->dir, strerror(errno));
        if (d) closedir(d);
        tl_spool_close(sp);
        return TL_ERR_IO;
    }
    for (struct dirent *e; (e = readdir(d));) {
        unsigned long long seq;
        char tail[8];
        if (sscanf(e->d_name, "seg-%16llu.%7s", &seq, tail) == 2 && !strcmp(tail, "tls"))
            push_seg(sp, seq, 0);
    }
    closedir(d);
    if (sp->nsegs > 1) qsort(sp->segs, sp->nsegs, sizeof *sp->segs, cmp_seg);
    /* where draining stopped */
    unsigned long long pos_seq = 0, pos_off = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/pos", cfg->dir);
    FILE *pf = fopen(path, "r");
    if (pf) {
        if (fscanf(pf, "%llu %llu", &pos_seq, &pos_off) != 2) pos_seq = pos_off = 0;
        fclose(pf);
    }
    size_t keep = 0;
    for (size_t i = 0; i < sp->nsegs; i++) {
        if (sp->segs[i].seq < pos_seq) { /* fully drained before a crash */
            seg_path(sp, sp->segs[i].seq, path, sizeof path);
            unlink(path);
            continue;
        }
        sp->segs[keep++] = sp->segs[i];
    }
    sp->nsegs = keep;
    sp->next_seq = pos_seq + 1;
    for (size_t i = 0; i < sp->nsegs; i++)
        if (sp->segs[i].seq >= sp->next_seq) sp->next_seq = sp->segs[i].seq + 1;
    for (size_t i = 0; i < sp->nsegs; i++) {
        uint64_t from = (i == 0 && sp->segs[0].seq == pos_seq) ? pos_off : 0;
        scan_segment(sp, &sp->segs[i], from);
        if (i == 0) sp->read_off = from <= sp->segs[0].size ? from : sp->segs[0].size;
    }
    *out = sp;
    return TL_OK;
}

/* Notes a write error (path and errno) for the sink's message. */
static enum tl_err write_error(struct tl_spool *sp, uint64_t seq, const char *what, int e)
{
    char path[4096];
    seg_path(sp, seq, path, sizeof path);
    snprintf(sp->error, sizeof sp->error, "%s %s: %s", what, path, strerror(e));
    return TL_ERR_IO;
}

const char *tl_spool_error(const struct tl_spool *sp)
{
    return sp->error;
}

enum tl_err tl_spool_sync(struct tl_spool *sp)
{
    if (sp->wfd >= 0 && sp->dirty) {
        if (fsync(sp->wfd)) return write_error(sp, sp->segs[sp->nsegs - 1].seq, "fsync", errno);
        sp->dirty = false;
    }
    return TL_OK;
}

void tl_spool_close(struct tl_spool *sp)
{
    if (!sp) return;
    tl_spool_sync(sp);
    if (sp->wfd >= 0) close(sp->wfd);
    if (sp->lock_fd >= 0) close(sp->lock_fd);
    free(sp->segs);
    free(sp->dir);
    tl_buf_free(&sp->io);
    tl_buf_free(&sp->scan);
    free(sp);
}

static void drop_first_segment(struct tl_spool *sp)
{
    char path[4096];
    seg_path(sp, sp->segs[0].seq, path, sizeof path);
    if (sp->nsegs == 1 && sp->wfd >= 0) {
        close(sp->wfd);
        sp->wfd = -1;
    }
    unlink(path);
    memmove(sp->segs, sp->segs + 1, (sp->nsegs - 1) * sizeof *sp->segs);
    sp->nsegs--;
    sp->read_off = 0;
}

/* drop_oldest: delete frames from the front until `need` more bytes fit. */
static void make_room(struct tl_spool *sp, uint64_t need)
{
    while (sp->st.bytes + need > sp->cfg.max_bytes && sp->st.frames) {
        struct tl_buf tmp = {0};
        uint32_t before = sp->peek_size;
        if (tl_spool_peek(sp, &tmp) != TL_OK) {
            tl_buf_free(&tmp);
            break;
        }
        sp->st.dropped_frames++;
        sp->st.dropped_bytes += sp->peek_size;
        tl_spool_pop(sp);
        sp->st.drained_frames--; /* a drop is not a delivery */
        sp->peek_size = before;
        tl_buf_free(&tmp);
    }
}

enum tl_err tl_spool_append(struct tl_spool *sp, const char *data, size_t len)
{
    size_t bound = ZSTD_compressBound(len);
    sp->io.len = 0;
    if (!tl_buf_reserve(&sp->io, HEADER + bound)) return TL_ERR_NOMEM;
    size_t z = ZSTD_compress(sp->io.data + HEADER, bound, data, len, 1);
    if (ZSTD_isError(z) || z > MAX_FRAME || len > MAX_FRAME) return TL_ERR_LIMIT;
    unsigned char *h = (unsigned char *)sp->io.data;
    memcpy(h, MAGIC_V2, 4);
    put32(h + 4, (uint32_t)z);
    put32(h + 8, (uint32_t)len);
    put32(h + 12, (uint32_t)crc32(0, (const Bytef *)sp->io.data + HEADER, (uInt)z));
    put32(h + 16, (uint32_t)crc32(0, h, 16));
    uint64_t frame = HEADER + z;
    if (sp->st.bytes + frame > sp->cfg.max_bytes) {
        if (!sp->cfg.drop_oldest) return TL_ERR_LIMIT; /* backpressure */
        make_room(sp, frame);
        if (sp->st.bytes + frame > sp->cfg.max_bytes) return TL_ERR_LIMIT;
        /* make_room used io: compress again */
        return tl_spool_append(sp, data, len);
    }
    struct segment *last = sp->nsegs ? &sp->segs[sp->nsegs - 1] : NULL;
    bool fresh = !last || last->size + frame > sp->cfg.segment_bytes || sp->new_segment;
    if (fresh || sp->wfd < 0) {
        if (sp->wfd >= 0) { /* closing a segment: make it durable */
            if (fsync(sp->wfd)) return write_error(sp, last->seq, "fsync", errno);
            close(sp->wfd);
            sp->wfd = -1;
        }
        if (fresh) {
            if (!push_seg(sp, sp->next_seq++, 0)) return TL_ERR_NOMEM;
            last = &sp->segs[sp->nsegs - 1];
            sp->new_segment = false;
        }
        char path[4096];
        seg_path(sp, last->seq, path, sizeof path);
        sp->wfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
        if (sp->wfd < 0) return write_error(sp, last->seq, "open", errno);
    }
    if (!tl_write_all(sp->wfd, sp->io.data, (size_t)frame)) {
        /* a short write (disk full, EIO): take the partial frame back, so
         * no later frame sits behind a broken one; if even that fails, the
         * next frame starts a new segment and reading resyncs past it */
        int e = errno;
        if (ftruncate(sp->wfd, (off_t)last->size)) sp->new_segment = true;
        return write_error(sp, last->seq, "write", e);
    }
    sp->dirty = true;
    last->size += frame;
    sp->st.bytes += frame;
    sp->st.frames++;
    sp->st.appended_frames++;
    return TL_OK;
}

/* Nothing left to read: whatever damage found after the scan made the
 * counts drift is forgotten here. */
static enum tl_err drained(struct tl_spool *sp)
{
    sp->st.frames = 0;
    sp->st.bytes = 0;
    return TL_ERR_LIMIT;
}

enum tl_err tl_spool_peek(struct tl_spool *sp, struct tl_buf *out)
{
    sp->peek_size = 0;
    while (sp->nsegs) {
        struct segment *s = &sp->segs[0];
        if (sp->read_off < s->size) break;
        if (sp->nsegs == 1) return drained(sp); /* the write segment, drained */
        drop_first_segment(sp);
        write_pos(sp);
    }
    if (!sp->nsegs) return drained(sp);
    char path[4096];
    seg_path(sp, sp->segs[0].seq, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return TL_ERR_IO;
    uint32_t raw;
    const char *why = NULL;
    uint32_t n = read_frame(fd, sp->read_off, sp->segs[0].size, &sp->io, &raw, &why);
    if (!n) {
        /* damage: skip to the next intact frame; it costs only its bytes */
        uint64_t next = next_frame(sp, fd, sp->read_off + 1, sp->segs[0].size);
        close(fd);
        tl_log(sp->cfg.log, TL_LOG_WARN, "spool %s:%llu: %s; %llu bytes skipped%s", path,
                (unsigned long long)sp->read_off, why, (unsigned long long)(next - sp->read_off),
                next < sp->segs[0].size ? ", reading on at the next intact frame" : " (the rest of the segment)");
        sp->st.corrupt_frames++;
        sp->st.corrupt_bytes += next - sp->read_off;
        sp->read_off = next;
        return tl_spool_peek(sp, out);
    }
    close(fd);
    out->len = 0;
    if (!tl_buf_reserve(out, raw)) return TL_ERR_NOMEM;
    size_t got = ZSTD_decompress(out->data, raw, sp->io.data, sp->io.len);
    if (ZSTD_isError(got) || got != raw) return TL_ERR_CORRUPT;
    out->len = raw;
    sp->peek_size = n;
    return TL_OK;
}

enum tl_err tl_spool_pop(struct tl_spool *sp)
{
    if (!sp->peek_size) return TL_ERR_INTERNAL;
    sp->read_off += sp->peek_size;
    sp->st.bytes -= sp->peek_size;
    sp->st.frames--;
    sp->st.drained_frames++;
    sp->peek_size = 0;
    if (sp->nsegs > 1 && sp->read_off >= sp->segs[0].size) drop_first_segment(sp);
    if (!sp->st.frames && sp->nsegs == 1 && sp->read_off >= sp->segs[0].size)
        drop_first_segment(sp); /* empty: give the disk back */
    return write_pos(sp);
}

struct tl_spool_stats tl_spool_stats(const struct tl_spool *sp)
{
    return sp->st;
}
