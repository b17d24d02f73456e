/* ingest/reader: compression by magic bytes, concatenated members/frames,
 * and truncated streams that yield what decoded before reporting the error. */
#include "check.h"

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "ingest/reader.h"

static char tmpdir[] = "/tmp/tl-reader-XXXXXX";

static void write_file(const char *name, const void *p, size_t n, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    fwrite(p, 1, n, f);
    fclose(f);
}

static size_t gz(const char *in, size_t n, unsigned char *out, size_t cap)
{
    z_stream z = {0};
    deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    size_t got = cap - z.avail_out;
    deflateEnd(&z);
    return got;
}

/* Reads the whole file through the reader; returns the error, fills out. */
static enum tl_err read_all(const char *path, char *out, size_t cap, size_t *len, const char **codec)
{
    struct tl_reader *r;
    char err[256];
    enum tl_err rc = tl_reader_open(path, &r, err, sizeof err);
    if (rc) return rc;
    *codec = tl_reader_codec(r);
    *len = 0;
    char buf[1000]; /* small reads exercise the buffer edges */
    for (;;) {
        size_t got;
        rc = tl_reader_read(r, buf, sizeof buf, &got, err, sizeof err);
        if (rc || got == 0) break;
        if (*len + got <= cap) memcpy(out + *len, buf, got);
        *len += got;
    }
    tl_reader_close(r);
    return rc;
}

int main(void)
{
    if (!mkdtemp(tmpdir)) check_skip("cannot make a temp dir");
    size_t n = 300000;
    char *text = malloc(n);
    for (size_t i = 0; i < n; i++) text[i] = (char)('a' + (i * 7919 % 26));
    for (size_t i = 80; i < n; i += 81) text[i] = '\n';
    size_t cap = 2 * n + 1024;
    unsigned char *comp = malloc(cap);
    char *out = malloc(2 * n);
    char path[512];
    size_t len;
    const char *codec;

    write_file("plain.log", text, n, path, sizeof path);
    CHECK_EQ_INT(read_all(path, out, 2 * n, &len, &codec), TL_OK);
    CHECK_EQ_INT(len, n);
    CHECK(memcmp(out, text, n) == 0);
    CHECK_STR(codec, "plain");

    /* gzip, named .txt: the magic decides */
    size_t gl = gz(text, n, comp, cap);
    write_file("log.txt", comp, gl, path, sizeof path);
    CHECK_EQ_INT(read_all(path, out, 2 * n, &len, &codec), TL_OK);
    CHECK_EQ_INT(len, n);
    CHECK(memcmp(out, text, n) == 0);
    CHECK_STR(codec, "gzip");

    /* two gzip members back to back (cat a.gz b.gz) */
    size_t half = n / 2;
    size_t g1 = gz(text, half, comp, cap);
    size_t g2 = gz(text + half, n - half, comp + g1, cap - g1);
    write_file("cat.gz", comp, g1 + g2, path, sizeof path);
    CHECK_EQ_INT(read_all(path, out, 2 * n, &len, &codec), TL_OK);
    CHECK_EQ_INT(len, n);
    CHECK(memcmp(out, text, n) == 0);

    /* truncated gzip: everything decodable arrives, then TL_ERR_DECODE */
    write_file("cut.gz", comp, g1 / 2, path, sizeof path);
    CHECK_EQ_INT(read_all(path, out, 2 * n, &len, &codec), TL_ERR_DECODE);
    CHECK(len > 0 && len < half);
    CHECK(memcmp(out, text, len) == 0);

    /* zstd, two frames */
    size_t z1 = ZSTD_compress(comp, cap, text, half, 3);
    size_t z2 = ZSTD_compress(comp + z1, cap - z1, text + half, n - half, 3);
    write_file("log.zst", comp, z1 + z2, path, sizeof path);
    CHECK_EQ_INT(read_all(path, out, 2 * n, &len, &codec), TL_OK);
    CHECK_EQ_INT(len, n);
    CHECK(memcmp(out, text, n) == 0);
    CHECK_STR(codec, "zstd");

    write_file("cut.zst", comp, z1 + z2 / 2, path, sizeof path);
    CHECK_EQ_INT(read_all(path, out, 2 * n, &len, &codec), TL_ERR_DECODE);
    CHECK(len >= half && len < n);
    CHECK(memcmp(out, text, len) == 0);

    /* zstd magic followed by junk */
    write_file("bad.zst", "\x28\xb5\x2f\xfd not a frame header at all", 31, path, sizeof path);
    CHECK_EQ_INT(read_all(path, out, 2 * n, &len, &codec), TL_ERR_DECODE);

    /* empty and tiny files */
    write_file("empty", "", 0, path, sizeof path);
    CHECK_EQ_INT(read_all(path, out, 2 * n, &len, &codec), TL_OK);
    CHECK_EQ_INT(len, 0);
    write_file("tiny", "\x1f", 1, path, sizeof path);
    CHECK_EQ_INT(read_all(path, out, 2 * n, &len, &codec), TL_OK);
    CHECK_EQ_INT(len, 1);

    struct tl_reader *r;
    char err[256];
    CHECK_EQ_INT(tl_reader_open("/nonexistent/x", &r, err, sizeof err), TL_ERR_OPEN);
    CHECK(strstr(err, "/nonexistent/x") != NULL);
    CHECK_EQ_INT(tl_reader_open(tmpdir, &r, err, sizeof err), TL_ERR_OPEN);

    const char *names[] = {"plain.log", "log.txt", "cat.gz", "cut.gz", "log.zst", "cut.zst",
                           "bad.zst", "empty", "tiny"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        unlink(path);
    }
    rmdir(tmpdir);
    free(text);
    free(comp);
    free(out);
    return check_done("test_reader");
}
