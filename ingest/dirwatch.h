/* A directory whose files are each read once, as they appear.
 *
 * For inputs that arrive as many small files (LSST writes one metadata file
 * per quantum): every regular file under the directory (recursively, if
 * asked) is handed out once, when it has settled -- not modified for
 * settle_ms, so a file still being written is not read half. Hidden files
 * (`.name`) and temporary ones (`*.tmp`) are skipped.
 *
 * inotify on every directory wakes the caller and triggers a rescan; without
 * inotify (or past the watch limit) the caller's periodic call rescans.
 * What was handed out is remembered by path, size, mtime and identity
 * (device and inode), and can be saved in a checkpoint, so a restart does
 * not read a file twice; a file renamed since (Spark's app.inprogress ->
 * app) is the same file, not a new one; one that grew is handed out again
 * as grown (tl_dirwatch_grown: the caller reads only what is new, or says
 * why it cannot); one only touched (the same size, another mtime: touch,
 * cp -p, rsync -a, a restore) is not handed out again.
 * Each directory and file is met once per scan, whatever symlinks lead to
 * it again. A file the caller could not read is handed out again at later
 * scans (after a chmod, say) and is not saved as read. */
#ifndef TL_DIRWATCH_H
#define TL_DIRWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"

struct tl_dirwatch;

/* match: a glob for file names (fnmatch; NULL or "*": every file). */
enum tl_err tl_dirwatch_open(const char *dir, bool recursive, long settle_ms, const char *match,
                             struct tl_dirwatch **out, char *err, size_t errlen);
void tl_dirwatch_close(struct tl_dirwatch *w);
/* The next settled file not handed out before (path valid until the next
 * call), or NULL when there is none now. The file counts as handed out. */
const char *tl_dirwatch_next(struct tl_dirwatch *w);
/* Whether the file handed out last was handed out before and has grown
 * since (the same identity, a larger size). */
bool tl_dirwatch_grown(const struct tl_dirwatch *w);
/* The identity of the file handed out last (device, inode, birth), the
 * same after a rename; 0 when unknown. */
uint64_t tl_dirwatch_id(const struct tl_dirwatch *w);
/* The file handed out last could not be read: hand it out again at later
 * scans. Returns whether it could not be read the time before either (so
 * the caller says it once). */
bool tl_dirwatch_failed(struct tl_dirwatch *w);
/* inotify descriptor to poll (-1: none); consume with tl_dirwatch_events. */
int tl_dirwatch_fd(const struct tl_dirwatch *w);
void tl_dirwatch_events(struct tl_dirwatch *w);
/* Files handed out so far. */
uint64_t tl_dirwatch_count(const struct tl_dirwatch *w);
/* Files waiting to settle, at the last scan. */
uint64_t tl_dirwatch_pending(const struct tl_dirwatch *w);

enum tl_err tl_dirwatch_save(const struct tl_dirwatch *w, struct tl_buf *out);
enum tl_err tl_dirwatch_restore(struct tl_dirwatch *w, const uint8_t *p, size_t len);

#endif
