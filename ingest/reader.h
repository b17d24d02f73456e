/* Byte sources for batch input: a file path, or "-" for stdin.
 *
 * Compression is recognised by magic bytes, never by name: zstd frames
 * (28 B5 2F FD) go through libzstd's streaming decoder, gzip members (1F 8B)
 * through zlib (concatenated members and frames are both followed). Reads are
 * large (256 KiB) so the parser, not the kernel, sets the pace.
 *
 * A truncated or corrupt compressed stream first yields everything that did
 * decode, then TL_ERR_DECODE: nothing readable is thrown away. */
#ifndef TL_READER_H
#define TL_READER_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define TL_READ_CHUNK (256 * 1024)

struct tl_reader;

enum tl_err tl_reader_open(const char *path, struct tl_reader **out, char *err, size_t errlen);
/* Reads up to cap decoded bytes into buf. *got == 0 with TL_OK means end of
 * input. On error, err (if given) names the cause. */
enum tl_err tl_reader_read(struct tl_reader *r, char *buf, size_t cap, size_t *got, char *err,
                           size_t errlen);
/* "plain", "gzip" or "zstd". */
const char *tl_reader_codec(const struct tl_reader *r);
/* Bytes of the underlying file consumed so far, and its size (0 if unknown);
 * for progress. */
uint64_t tl_reader_raw_offset(const struct tl_reader *r);
/* A regular file's modification time (ns since the epoch) when opened; 0
 * for anything else. */
int64_t tl_reader_mtime_ns(const struct tl_reader *r);
/* A batch command reads a file as long as it was when opened: a file that
 * still grows is read to that size, and the read that would find its end
 * is saved (a datastore's 20,000 small files: 20,000 system calls). */
void tl_reader_size_at_open(struct tl_reader *r);
uint64_t tl_reader_raw_size(const struct tl_reader *r);
void tl_reader_close(struct tl_reader *r);

#endif
