/* libFuzzer target for the disk spool's reader: a spool segment left by a
 * crash, a bad disk or a hostile hand must cost only its damaged frames --
 * never a crash, an overread, a hang or a frame that was not written.
 *
 * mode 0 (first byte even): the input is a segment file as found on disk.
 * mode 1 (odd): four frames are appended through tl_spool_append (payloads
 *         cut from the input), then the input's (offset, byte) pairs
 *         overwrite the segment; what drains must be a subset of the four
 *         payloads, in order.
 * In both, the spool is opened, drained to the end, appended to and
 * drained again. One directory per process, emptied between runs. */
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sinks/spool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void empty_dir(void)
{
    DIR *d = opendir(dir);
    if (!d) return;
    char path[512];
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

static struct tl_spool *open_spool(void)
{
    struct tl_spool_cfg cfg = {.dir = dir, .max_bytes = 1 << 20, .segment_bytes = 1 << 20};
    struct tl_spool *sp = NULL;
    char err[512];
    return tl_spool_open(&cfg, &sp, err, sizeof err) == TL_OK ? sp : NULL;
}

/* Drains every frame; in mode 1 each must be the next unseen payload. */
static void drain(struct tl_spool *sp, const uint8_t *const *want, const size_t *want_len, int nwant)
{
    struct tl_buf out = {0};
    int next = 0;
    for (int i = 0; i < 64 && tl_spool_peek(sp, &out) == TL_OK; i++) {
        if (want) {
            while (next < nwant && (want_len[next] != out.len || memcmp(want[next], out.data, out.len)))
                next++;
            if (next == nwant) abort(); /* a frame that was never written */
            next++;
        }
        tl_spool_pop(sp);
    }
    tl_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/tl-fuzz-spool-%d", (int)getpid());
        mkdir(dir, 0700);
    }
    if (!size) return 0;
    empty_dir();
    const uint8_t *want[4] = {0};
    size_t want_len[4] = {0};
    if (data[0] & 1) {
        struct tl_spool *sp = open_spool();
        if (!sp) return 0;
        size_t cut = (size - 1) / 8; /* the payloads: four slices of the first half */
        for (int i = 0; i < 4; i++) {
            want[i] = data + 1 + (size_t)i * cut;
            want_len[i] = cut;
            tl_spool_append(sp, (const char *)want[i], want_len[i]);
        }
        tl_spool_close(sp);
        char path[512];
        snprintf(path, sizeof path, "%s/seg-%016d.tls", dir, 1);
        int fd = open(path, O_RDWR);
        if (fd < 0) return 0;
        off_t end = lseek(fd, 0, SEEK_END);
        for (size_t i = 1 + 4 * cut; end > 0 && i + 2 < size; i += 3) {
            off_t at = (off_t)(((size_t)data[i] << 8 | data[i + 1]) % (size_t)end);
            if (pwrite(fd, &data[i + 2], 1, at) != 1) break;
        }
        close(fd);
    } else {
        char path[512];
        snprintf(path, sizeof path, "%s/seg-%016d.tls", dir, 1);
        FILE *f = fopen(path, "wb");
        if (!f) return 0;
        fwrite(data + 1, 1, size - 1, f);
        fclose(f);
    }
    struct tl_spool *sp = open_spool();
    if (!sp) return 0;
    drain(sp, data[0] & 1 ? want : NULL, want_len, 4);
    tl_spool_append(sp, "m f=1 1\n", 8);
    drain(sp, NULL, NULL, 0);
    tl_spool_close(sp);
    return 0;
}
