/* The files of a directory tree, in name order (dirlist.c). */
#ifndef TL_INGEST_DIRLIST_H
#define TL_INGEST_DIRLIST_H

#include <stdbool.h>
#include <stddef.h>

/* A list of paths (owned), and the directories that could not be read
 * while it was made: how many, and the first as "PATH: reason". */
struct tl_file_list {
    char **paths;
    size_t n, cap;
    size_t unreadable;
    char first_unreadable[512];
};

bool tl_file_list_add(struct tl_file_list *fl, const char *path);
void tl_file_list_free(struct tl_file_list *fl);

/* Appends the files under dir (recursively, symlinks not followed) in name
 * order: those `want` takes by name (hidden directories walked too), or,
 * with want NULL, every file not hidden. false when a directory could not
 * be read (counted in fl, for the caller to say: tl_file_list_problem);
 * what could be read is listed. */
bool tl_dir_list(struct tl_file_list *fl, const char *dir, bool (*want)(const char *name));

/* tl_dir_list's files one at a time, in the same order, as the walk finds
 * them (a directory's entries sorted, a subdirectory's name read with its
 * '/'): each(ctx, path) for each, path valid during the call; false from
 * it stops the walk. fl holds only the problems (tl_file_list_problem). */
bool tl_dir_walk(struct tl_file_list *fl, const char *dir, bool (*want)(const char *name),
                 bool (*each)(void *ctx, const char *path), void *ctx);

/* "DIR: Permission denied (and 2 more directories not read)" into buf, or
 * NULL when every directory was read. */
const char *tl_file_list_problem(const struct tl_file_list *fl, char *buf, size_t cap);

#endif
