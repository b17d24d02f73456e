/* Paths (path.c): the canonical name of an input, and whether a place can
 * be written to. */
#ifndef TL_PATH_H
#define TL_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
