/* Following a file as it grows, like `tail -F`.
 *
 * Reads appended bytes in large chunks; notices
 *   - rotation: the path now names another file (rename + create, by inode):
 *     the old file is read to its end first, then the new one from 0;
 *   - truncation (copytruncate): the file became shorter than what was read:
 *     reading restarts at 0;
 *   - a file that does not exist yet, or disappears: it is waited for.
 * When a file is left (rotation, truncation) after a last line that had no
 * newline, a newline is delivered so the next file's first line does not
 * glue onto it.
 *
 * Waiting uses inotify on the file's directory (creation, rename, writes);
 * where inotify is unavailable it sleeps and polls.
 *
 * The position (device, inode, offset, and a hash of the 4 KiB before the
 * offset) is what a checkpoint stores. Opening at a position resumes there
 * when the file at the path is still that file (same identity, long
 * enough, same bytes before the offset); when it was rotated away while we
 * were down, the old file is looked for in the same directory by its
 * identity and read to its end first, then any files rotated after it
 * (named after the path, newer, oldest first); when it was replaced (an inode number
 * reused, a file rewritten), the new file is read from the start. */
#ifndef TL_FOLLOW_H
#define TL_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct tl_follow_pos {
    uint64_t dev, ino, offset;
    uint64_t tail_hash; /* of the up to 4 KiB before offset */
    bool mid_line;      /* the byte before offset is not a newline */
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
    uint64_t chain_files;   /* rotated more than once: files read between */
    uint64_t chain_skipped; /* ... compressed ones that could not be read */
};

struct tl_follow;

/* from_end: skip what the file holds now. at (optional): resume there when
 * the file at path is still that device and inode (else from the start). */
enum tl_err tl_follow_open(const char *path, bool from_end, const struct tl_follow_pos *at,
                           struct tl_follow **out, char *err, size_t errlen);
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
bool tl_follow_uses_inotify(const struct tl_follow *f);
/* The inotify descriptor, to poll several files at once (then call
 * tl_follow_wait(f, 0) to consume its events); -1 when polling. */
int tl_follow_fd(const struct tl_follow *f);

#endif
