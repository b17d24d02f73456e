/* The files of a directory tree, in name order (dirlist.c). */
#ifndef TL_INGEST_DIRLIST_H
#define TL_INGEST_DIRLIST_H

#include <stdbool.h>
#include <stddef.h>

/* A list of paths (owned). */
struct tl_file_list {
    char **paths;
    size_t n, cap;
};

bool tl_file_list_add(struct tl_file_list *fl, const char *path);
void tl_file_list_free(struct tl_file_list *fl);

/* Appends the files under dir (recursively, symlinks not followed) in name
 * order: those `want` takes by name (hidden directories walked too), or,
 * with want NULL, every file not hidden. false (said on stderr) when a
 * directory could not be read; what could be read is listed. */
bool tl_dir_list(struct tl_file_list *fl, const char *dir, bool (*want)(const char *name));

#endif
