/* The disk spool: where batches wait while a network sink's server cannot
 * take them (InfluxDB today; any sink that sends batches can own one).
 *
 * A directory of segment files `seg-<16 digits>.tls`, appended in order and
 * drained in order, owned by one process (an flock on DIR/lock). Each batch
 * is one frame:
 *
 *     "TLF2" | u32 payload length | u32 raw length | u32 CRC-32 of payload
 *     | u32 CRC-32 of the 16 bytes before it | payload (one zstd frame of
 *     the batch, in its sink's codec: line protocol for InfluxDB)
 *
 * all integers little-endian ("TLF1" frames, 16 bytes of header without
 * its own CRC, are still read). Writes are fsync'ed when a segment closes
 * and at most every second otherwise (tl_spool_sync). The read position is
 * kept in `pos` (segment, offset), replaced atomically (tmp, fsync, rename)
 * after each drained frame, so a restart resumes where draining stopped.
 *
 * Damage costs only itself: a frame whose header or payload fails its CRC
 * is skipped up to the next intact frame (found by its magic and checked
 * whole), reported with its segment, offset and size, and counted
 * (corrupt_frames, corrupt_bytes). A write that fails part-way (disk full,
 * EIO) is taken back (ftruncate), so no frame ever follows a partial one;
 * tl_spool_error says which file and why.
 *
 * Size is capped (max_bytes). When full, appends fail with TL_ERR_LIMIT so
 * the caller applies backpressure -- or, with drop_oldest, the oldest
 * frames are deleted and counted. */
#ifndef TL_SPOOL_H
#define TL_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/log.h"

struct tl_spool_cfg {
    const char *dir;
    uint64_t max_bytes;     /* default 1 GiB */
    uint64_t segment_bytes; /* default 64 MiB */
    bool drop_oldest;
    const struct tl_log *log; /* where damage found is said (NULL: stderr) */
};

struct tl_spool_stats {
    uint64_t bytes;          /* on disk, not yet drained */
    uint64_t frames;         /* not yet drained */
    uint64_t appended_frames, drained_frames;
    uint64_t dropped_frames, dropped_bytes; /* drop_oldest */
    uint64_t corrupt_frames, corrupt_bytes; /* found broken and skipped */
};

struct tl_spool;

/* Creates the directory if needed, takes its lock (TL_ERR_OPEN, err naming
 * the other owner, when another process holds it) and scans what is there.
 * A tail with no intact frame is reported on stderr (path:offset: what),
 * counted and trimmed. */
enum tl_err tl_spool_open(const struct tl_spool_cfg *cfg, struct tl_spool **out, char *err,
                          size_t errlen);
void tl_spool_close(struct tl_spool *sp); /* fsyncs */
enum tl_err tl_spool_append(struct tl_spool *sp, const char *data, size_t len);
/* The oldest frame, decompressed into out; TL_ERR_LIMIT when empty. */
enum tl_err tl_spool_peek(struct tl_spool *sp, struct tl_buf *out);
/* Forgets the frame peek returned (it was delivered). */
enum tl_err tl_spool_pop(struct tl_spool *sp);
enum tl_err tl_spool_sync(struct tl_spool *sp);
/* After TL_ERR_IO from append or sync: "write PATH: strerror" (no secrets). */
const char *tl_spool_error(const struct tl_spool *sp);
struct tl_spool_stats tl_spool_stats(const struct tl_spool *sp);

#endif
