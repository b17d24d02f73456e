#include "ingest/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

enum codec { CODEC_PLAIN, CODEC_GZIP, CODEC_ZSTD };

struct tl_reader {
    int fd;
    bool own_fd;
    enum codec codec;
    bool raw_eof;
    bool stream_done; /* the last gzip member / zstd frame ended cleanly */
    unsigned char *raw;
    size_t raw_pos, raw_len; /* unread compressed (or plain) bytes in raw */
    uint64_t raw_offset, raw_size;
    int64_t mtime_ns;   /* a regular file's, from the fstat at open */
    bool size_at_open;  /* tl_reader_size_at_open: no read past raw_size */
    z_stream z;
    bool z_init;
    ZSTD_DStream *zd;
};

/* All the file held when opened is read, and the reader was told that is
 * the end (tl_reader_size_at_open). */
static bool at_size_at_open(const struct tl_reader *r)
{
    return r->size_at_open && r->raw_size && r->raw_offset >= r->raw_size;
}

static enum tl_err fill_raw(struct tl_reader *r, char *err, size_t errlen)
{
    if (r->raw_pos < r->raw_len || r->raw_eof) return TL_OK;
    if (at_size_at_open(r)) {
        r->raw_pos = r->raw_len = 0;
        r->raw_eof = true;
        return TL_OK;
    }
    ssize_t n;
    do n = read(r->fd, r->raw, TL_READ_CHUNK);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        if (err) snprintf(err, errlen, "read: %s", strerror(errno));
        return TL_ERR_IO;
    }
    r->raw_pos = 0;
    r->raw_len = (size_t)n;
    r->raw_offset += (uint64_t)n;
    if (n == 0) r->raw_eof = true;
    return TL_OK;
}

/* A compression tasklens does not decode, known by its magic bytes, with
 * what to do instead; NULL for anything else. Spark writes its event logs
 * with the codec of spark.eventLog.compression.codec: zstd (read here) by
 * default since 3.0, lz4 (LZ4BlockOutputStream), snappy (snappy-java) or
 * lzf before. */
static const char *other_codec(const unsigned char *m, size_t n)
{
    static const struct {
        const char *magic;
        size_t len;
        const char *say;
    } codecs[] = {
        {"LZ4Block", 8, "compressed with Spark's lz4 codec (LZ4Block), which tasklens does not "
                        "decode: have Spark write zstd (spark.eventLog.compression.codec=zstd) or "
                        "no compression, which tasklens reads"},
        {"\x04\x22\x4d\x18", 4, "an LZ4 frame, which tasklens does not decode: decompress it "
                                "first (lz4 -d), or write zstd or gzip, which tasklens reads"},
        {"\x82SNAPPY", 7, "compressed with Spark's snappy codec (snappy-java), which tasklens does "
                          "not decode: have Spark write zstd (spark.eventLog.compression.codec=zstd)"},
        {"\xff\x06\x00\x00sNaPpY", 10, "a snappy frame stream, which tasklens does not decode: "
                                         "write zstd or gzip instead, which tasklens reads"},
        {"ZV", 2, "compressed with Spark's lzf codec, which tasklens does not decode: have Spark "
                  "write zstd (spark.eventLog.compression.codec=zstd)"},
    };
    for (size_t i = 0; i < sizeof codecs / sizeof *codecs; i++)
        if (n >= codecs[i].len && !memcmp(m, codecs[i].magic, codecs[i].len) &&
            (codecs[i].len > 2 || (n > 2 && m[2] <= 1))) /* "ZV" then block type 0 or 1 */
            return codecs[i].say;
    return NULL;
}

enum tl_err tl_reader_open(const char *path, struct tl_reader **out, char *err, size_t errlen)
{
    struct tl_reader *r = calloc(1, sizeof *r);
    if (!r) return TL_ERR_NOMEM;
    r->raw = malloc(TL_READ_CHUNK);
    if (!r->raw) {
        free(r);
        return TL_ERR_NOMEM;
    }
    if (!strcmp(path, "-")) {
        r->fd = 0;
    } else {
        r->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (r->fd < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            free(r->raw);
            free(r);
            return TL_ERR_OPEN;
        }
        r->own_fd = true;
        struct stat st;
        if (fstat(r->fd, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                snprintf(err, errlen, "%s: is a directory", path);
                tl_reader_close(r);
                return TL_ERR_OPEN;
            }
            if (S_ISREG(st.st_mode)) {
                r->raw_size = (uint64_t)st.st_size;
                r->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
            }
        }
        /* a file read in one chunk gains nothing from read-ahead hints (a
         * datastore tree is thousands of such files) */
        if (!r->raw_size || r->raw_size > TL_READ_CHUNK)
            posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    /* Sniff the magic: read until we hold 4 bytes or the input ends. */
    enum tl_err rc = fill_raw(r, err, errlen);
    while (!rc && !r->raw_eof && r->raw_len < 4) {
        ssize_t n = read(r->fd, r->raw + r->raw_len, TL_READ_CHUNK - r->raw_len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        r->raw_len += (size_t)n;
        r->raw_offset += (uint64_t)n;
    }
    if (rc) {
        tl_reader_close(r);
        return rc;
    }
    const char *other = other_codec(r->raw, r->raw_len);
    if (other) {
        snprintf(err, errlen, "%s: %s", path ? path : "stdin", other);
        tl_reader_close(r);
        return TL_ERR_FORMAT;
    }
    const unsigned char *m = r->raw;
    if (r->raw_len >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) {
        r->codec = CODEC_ZSTD;
        r->zd = ZSTD_createDStream();
        if (!r->zd) {
            tl_reader_close(r);
            return TL_ERR_NOMEM;
        }
        ZSTD_initDStream(r->zd);
    } else if (r->raw_len >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
        r->codec = CODEC_GZIP;
        if (inflateInit2(&r->z, 15 + 16) != Z_OK) {
            tl_reader_close(r);
            return TL_ERR_NOMEM;
        }
        r->z_init = true;
    }
    *out = r;
    return TL_OK;
}

static enum tl_err read_plain(struct tl_reader *r, char *buf, size_t cap, size_t *got, char *err,
                              size_t errlen)
{
    if (r->raw_pos < r->raw_len) { /* bytes kept from sniffing */
        size_t n = r->raw_len - r->raw_pos;
        if (n > cap) n = cap;
        memcpy(buf, r->raw + r->raw_pos, n);
        r->raw_pos += n;
        *got = n;
        return TL_OK;
    }
    if (r->raw_eof || at_size_at_open(r)) {
        *got = 0;
        return TL_OK;
    }
    ssize_t n;
    do n = read(r->fd, buf, cap);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        if (err) snprintf(err, errlen, "read: %s", strerror(errno));
        return TL_ERR_IO;
    }
    if (n == 0) r->raw_eof = true;
    r->raw_offset += (uint64_t)n;
    *got = (size_t)n;
    return TL_OK;
}

static enum tl_err read_gzip(struct tl_reader *r, char *buf, size_t cap, size_t *got, char *err,
                             size_t errlen)
{
    *got = 0;
    while (*got == 0) {
        enum tl_err rc = fill_raw(r, err, errlen);
        if (rc) return rc;
        if (r->raw_pos == r->raw_len && r->raw_eof) {
            if (r->stream_done) return TL_OK;
            if (err) snprintf(err, errlen, "gzip stream is truncated");
            return TL_ERR_DECODE;
        }
        if (r->stream_done) {
            /* Another member follows (concatenated .gz); anything else is junk. */
            if (r->raw[r->raw_pos] != 0x1f) {
                if (err) snprintf(err, errlen, "trailing garbage after gzip data");
                return TL_ERR_DECODE;
            }
            inflateReset(&r->z);
            r->stream_done = false;
        }
        r->z.next_in = r->raw + r->raw_pos;
        r->z.avail_in = (uInt)(r->raw_len - r->raw_pos);
        r->z.next_out = (Bytef *)buf;
        r->z.avail_out = (uInt)cap;
        int zr = inflate(&r->z, Z_NO_FLUSH);
        r->raw_pos = r->raw_len - r->z.avail_in;
        *got = cap - r->z.avail_out;
        if (zr == Z_STREAM_END) {
            r->stream_done = true;
        } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
            if (*got) return TL_OK; /* deliver what decoded; the error repeats next call */
            if (err) snprintf(err, errlen, "gzip: %s", r->z.msg ? r->z.msg : "corrupt data");
            return TL_ERR_DECODE;
        }
    }
    return TL_OK;
}

static enum tl_err read_zstd(struct tl_reader *r, char *buf, size_t cap, size_t *got, char *err,
                             size_t errlen)
{
    *got = 0;
    while (*got == 0) {
        enum tl_err rc = fill_raw(r, err, errlen);
        if (rc) return rc;
        if (r->raw_pos == r->raw_len && r->raw_eof) {
            if (r->stream_done) return TL_OK;
            if (err) snprintf(err, errlen, "zstd stream is truncated");
            return TL_ERR_DECODE;
        }
        ZSTD_inBuffer in = {r->raw, r->raw_len, r->raw_pos};
        ZSTD_outBuffer outb = {buf, cap, 0};
        size_t zr = ZSTD_decompressStream(r->zd, &outb, &in);
        r->raw_pos = in.pos;
        *got = outb.pos;
        if (ZSTD_isError(zr)) {
            if (*got) return TL_OK;
            if (err) snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(zr));
            return TL_ERR_DECODE;
        }
        r->stream_done = (zr == 0);
    }
    return TL_OK;
}

enum tl_err tl_reader_read(struct tl_reader *r, char *buf, size_t cap, size_t *got, char *err,
                           size_t errlen)
{
    switch (r->codec) {
    case CODEC_GZIP: return read_gzip(r, buf, cap, got, err, errlen);
    case CODEC_ZSTD: return read_zstd(r, buf, cap, got, err, errlen);
    default: return read_plain(r, buf, cap, got, err, errlen);
    }
}

const char *tl_reader_codec(const struct tl_reader *r)
{
    static const char *const names[] = {"plain", "gzip", "zstd"};
    return names[r->codec];
}

uint64_t tl_reader_raw_offset(const struct tl_reader *r)
{
    return r->raw_offset;
}

int64_t tl_reader_mtime_ns(const struct tl_reader *r)
{
    return r->mtime_ns;
}

void tl_reader_size_at_open(struct tl_reader *r)
{
    r->size_at_open = true;
}

uint64_t tl_reader_raw_size(const struct tl_reader *r)
{
    return r->raw_size;
}

void tl_reader_close(struct tl_reader *r)
{
    if (!r) return;
    if (r->own_fd) close(r->fd);
    if (r->z_init) inflateEnd(&r->z);
    if (r->zd) ZSTD_freeDStream(r->zd);
    free(r->raw);
    free(r);
}
