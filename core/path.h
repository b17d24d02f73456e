/* Paths (path.c): the canonical name of an input, and whether a place can
 * be written to. */
#ifndef TL_PATH_H
#define TL_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* realpath, or for a file not there yet its directory's realpath and its
 * name; malloc'ed, NULL when out of memory. */
char *tl_canonical_path(const char *path);

/* Whether the directory a file at `path` would be in (is_dir: path itself)
 * is writable, or creatable under its nearest existing parent; false with
 * the reason in why. */
bool tl_dir_writable(const char *path, bool is_dir, char *why, size_t cap);

/* A file's modification time in ns since the epoch; 0 when it cannot be
 * read (stdin, a pipe, gone). */
int64_t tl_file_mtime_ns(const char *path);
/* Its birth time, where the file system keeps one (statx); 0 otherwise:
 * unlike the modification time, it stays as the file grows, and a new
 * file in a reused inode has another. */
int64_t tl_file_birth_ns(const char *path);

/* An output file written whole or not at all: the bytes go to a temporary
 * file beside it (same directory, so the rename cannot cross a file
 * system), which is flushed, fsync'ed and renamed over the path, and the
 * directory fsync'ed. A failure at any step (a full disk, a short write, a
 * read-only directory) leaves the previous file as it was and the reason,
 * naming the file, in err. "-" is stdout, written directly, and so is a
 * target that exists and is not a regular file (/dev/full, a FIFO). */
struct tl_out_file {
    FILE *f;
    char *path, *tmp; /* tmp NULL: stdout, or a target that is not a regular
                       * file (a device, a FIFO), written directly */
};
/* false with the reason in err */
bool tl_out_open(struct tl_out_file *o, const char *path, char *err, size_t cap);
/* Flush, fsync, rename; when write_errno is set (an error seen while
 * writing), only clean up. f may have been closed and set to NULL by a
 * caller that had the temporary file written through its path (o->tmp).
 * false with the reason in err. */
bool tl_out_commit(struct tl_out_file *o, int write_errno, char *err, size_t cap);
/* fsync a file's directory, so a rename in it is durable */
void tl_sync_dir_of(const char *path);

#endif
