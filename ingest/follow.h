/* Following a file as it grows, like `tail -F`.
 *
 * Reads appended bytes in large chunks; notices
 *   - rotation: the path now names another file (rename + create, by inode):
 *     the old file is read until it has been quiet for quiet_ms (a writer
 *     that has not reopened yet still appends to it), then the new one from
 *     0 -- the new one is opened when the rotation is seen, so a second
 *     rotation meanwhile loses nothing;
 *   - truncation (copytruncate): the file became shorter than what was read,
 *     or the bytes before the offset changed (truncated, then written past
 *     the old offset before we looked): the rest of the old content is read
 *     from its copy when one is found among the rotated files, then the
 *     file from 0;
 *   - a file that does not exist yet, or disappears: it is waited for.
 * When a file is left (rotation, truncation) after a last line that had no
 * newline, a newline is delivered so the next file's first line does not
 * glue onto it.
 *
 * Waiting uses inotify on the file's directory (creation, rename, writes);
 * where inotify is unavailable it sleeps and polls.
 *
 * The position (device, inode, offset, a hash of the up to 4 KiB before
 * the offset, a hash of the file's first bytes and its size) is what a
 * checkpoint stores. Opening at a position resumes there when the file at
 * the path is still that file (same identity, long enough, same bytes
 * before the offset). Otherwise the checkpointed content is looked for
 * among the rotated files (the glob `rotated`, by default the path followed
 * by anything: `f.log.1`, `f.log.1.gz`, `f.log-20261125.zst`): first by
 * identity (a plain rename), then by content, whatever the file became
 * (renamed, compressed with gzip or zstd, copied): its first bytes and the
 * bytes before the offset must match. It is read from the offset to its
 * end, then the files rotated after it (oldest first, compressed ones
 * decoded), then the path from 0. When it cannot be found the gap is
 * counted (stats.gaps, and the bytes known unread at the checkpoint in
 * stats.gap_bytes) and the path is read from the start. */
#ifndef TL_FOLLOW_H
#define TL_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

struct tl_follow_pos {
    uint64_t dev, ino, offset;
    uint64_t tail_hash; /* of the up to 4 KiB before offset */
    bool mid_line;      /* the byte before offset is not a newline */
    uint64_t head_hash; /* of the file's first head_len bytes (up to 4 KiB) */
    uint32_t head_len;  /* 0: unknown (a checkpoint from before it was kept) */
    uint64_t size;      /* the file's size when the position was taken */
};

enum tl_follow_resume {
    TL_RESUME_NONE,     /* no position given */
    TL_RESUME_SAME,     /* the same file, at the position */
    TL_RESUME_ROTATED,  /* the old file found under another name: its rest first */
    TL_RESUME_REPLACED, /* the file at the position is gone or changed: from 0 */
};

struct tl_follow_stats {
    uint64_t bytes, rotations, truncations;
    uint64_t reopen_errors; /* tries to open the file now at the path that failed (not ENOENT) */
    int reopen_errno;       /* ... and why the last one did */
    uint64_t lag; /* bytes in the file not yet read, at the last read */
    enum tl_follow_resume resume;
    char rotated_name[256]; /* TL_RESUME_ROTATED: the name the old file had */
    bool rotated_compressed; /* ... read through its decoder */
    uint64_t chain_files;   /* rotated more than once: files read between */
    uint64_t chain_skipped; /* ... that could not be opened or decoded whole */
    uint64_t copies_found;  /* truncations whose old content's rest came from its copy */
    uint64_t gaps;      /* content that could not be found: the checkpointed file, a chain file */
    uint64_t gap_bytes; /* ... bytes of it known unread (a lower bound) */
};

struct tl_follow_opts {
    bool from_end;       /* a first start skips what the file holds now */
    const char *rotated; /* glob of rotated names (relative: to the path's directory);
                          * NULL: the path followed by anything */
    int quiet_ms;        /* read a rotated-away file until quiet this long; 0: 1000; < 0: not */
};

struct tl_follow;

/* opts may be NULL (defaults). at (optional): resume there (see above). */
enum tl_err tl_follow_open(const char *path, const struct tl_follow_opts *opts,
                           const struct tl_follow_pos *at, struct tl_follow **out, char *err,
                           size_t errlen);
void tl_follow_close(struct tl_follow *f);
/* Reads what is available now: *got > 0 bytes, or 0 when there is nothing
 * new yet (never blocks). */
enum tl_err tl_follow_read(struct tl_follow *f, char *buf, size_t cap, size_t *got);
/* Sleeps until the file may have changed, or timeout_ms. */
void tl_follow_wait(struct tl_follow *f, int timeout_ms);
struct tl_follow_pos tl_follow_position(const struct tl_follow *f);
struct tl_follow_stats tl_follow_stats(const struct tl_follow *f);
/* stats.reopen_errors, and the errno of the last (*why), without copying the
 * whole stats: the run loop asks after every read. */
uint64_t tl_follow_reopen_errors(const struct tl_follow *f, int *why);
/* stats.gaps, for the same reason. */
uint64_t tl_follow_gaps(const struct tl_follow *f);
bool tl_follow_uses_inotify(const struct tl_follow *f);
/* The inotify descriptor, to poll several files at once (then call
 * tl_follow_wait(f, 0) to consume its events); -1 when polling. */
int tl_follow_fd(const struct tl_follow *f);

/* Whether a `type: file` source can follow path: false, with what to use
 * instead in err, for a FIFO, a device, a directory or a compressed file;
 * true for a regular file, and for one that does not exist yet. */
bool tl_followable(const char *path, char *err, size_t errlen);

#endif
