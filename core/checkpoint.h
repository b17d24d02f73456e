/* Checkpoints: a file of named sections, replaced atomically.
 *
 * `tasklens run` saves where each source is, the parser's state (open tasks,
 * a line split across reads) and the aggregator's sketches, so that a
 * restart after a crash neither loses nor counts twice. This file knows
 * nothing of those: it stores (name, bytes) sections, checks them, and
 * makes the replacement atomic:
 *
 *     write <path>.tmp, fsync it, rename over <path>, fsync the directory
 *
 * so a crash at any moment leaves either the old checkpoint or the new one,
 * never a mix. On disk:
 *
 *     "TLCP" | u8 version | u32 CRC-32 of the frame | zstd frame of
 *     [ varint count | count x (str name | varint len | bytes) ]
 *
 * A checkpoint that fails its CRC or does not decode is reported as
 * TL_ERR_CORRUPT; the caller decides (run refuses to start, naming it). */
#ifndef TL_CHECKPOINT_H
#define TL_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"

/* Sections in one checkpoint: the aggregator, and one per source (a glob
 * of thousands of files is thousands of sources). */
#define TL_CKPT_MAX_SECTIONS 65536

struct tl_ckpt_section {
    const char *name;
    const uint8_t *data;
    size_t len;
};

/* Writes the sections atomically to path. err gets what failed. */
enum tl_err tl_ckpt_save(const char *path, const struct tl_ckpt_section *s, size_t n, char *err,
                         size_t errlen);

/* A loaded checkpoint: sections point into blob. */
struct tl_ckpt {
    uint8_t *blob;
    size_t nsections;
    struct tl_ckpt_section *sections; /* names are not NUL-terminated */
    size_t *name_lens;
};

/* TL_ERR_OPEN when there is no checkpoint at path (a first start). */
enum tl_err tl_ckpt_load(const char *path, struct tl_ckpt *c, char *err, size_t errlen);
/* The section called name, or NULL. */
const struct tl_ckpt_section *tl_ckpt_find(const struct tl_ckpt *c, const char *name);
void tl_ckpt_free(struct tl_ckpt *c);

/* write(2) until everything is written (EINTR retried); false on error. */
bool tl_write_all(int fd, const void *p, size_t n);

/* One owner per directory: an exclusive flock on DIR/lock, held while the
 * returned descriptor stays open (close it to let go). -1 when another
 * process holds it or the file cannot be made; err says which, with the
 * owner's pid when it wrote one. */
int tl_lock_dir(const char *dir, const char *what, char *err, size_t errlen);

/* Writes len bytes to path atomically (tmp, fsync, rename, fsync dir). */
enum tl_err tl_write_atomic(const char *path, const void *data, size_t len, char *err,
                            size_t errlen);

#endif
