/* What pipeline/batch.c (one input read on the calling thread) and
 * pipeline/batch_pool.c (many inputs' files parsed on threads, used in
 * order on the calling thread) share: a file read through the door with
 * its messages sent to a voice, and a directory's files merged into one
 * input. Private to the pipeline room. */
#ifndef TL_PIPELINE_BATCH_INPUT_H
#define TL_PIPELINE_BATCH_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "ingest/dirlist.h"
#include "parsers/drive.h"
#include "pipeline/batch.h"

/* Where one file's messages go when it is not read on the thread that
 * says them: each message whole, its rejected lines through `budget` (the
 * file's own), and, where the count line of its rejects would be said, a
 * call to `rejects` (the thread that says them decides it with the run's
 * budget). NULL voice: stderr now, the run's budget. */
struct tl_batch_voice {
    void (*text)(void *ctx, const char *msg);
    void (*rejects)(void *ctx, const struct tl_drive *d);
    struct tl_reject_budget *budget;
    void *ctx;
    bool progress; /* the progress line of a large input (opts->progress) is this thread's to draw */
};

/* path, then the files of `rest` (NULL-terminated; may be NULL) as one
 * stream through one parser. in_dir: a file of no known format is left for
 * the directory to count. */
enum tl_err tl_batch_read_file(const char *path, char *const *rest, const struct tl_input_opts *opts,
                               void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                               struct tl_summary_input *info, bool in_dir,
                               const struct tl_batch_voice *v);

/* How an input is read: a file (or '-'), a directory of files, or a
 * directory a format writes in parts (*whole: that format). */
enum tl_batch_kind { TL_BATCH_FILE, TL_BATCH_DIR, TL_BATCH_PARTS };
enum tl_batch_kind tl_batch_kind(const char *path, const struct tl_parser **whole);

/* The files of a directory, merged into its one input in name order. */
struct tl_batch_dir {
    size_t unknown, failed;
    const char *first_unknown[3];
    struct tl_counter *counters;
    size_t ncounters;
    const char *counters_format;
    enum tl_err rc;
};
/* One file's result (`one`, freed here) into the directory's info. */
void tl_batch_dir_add(struct tl_batch_dir *bd, const char *file, enum tl_err rc,
                      struct tl_summary_input *one, struct tl_summary_input *info);
/* After the last file: the directory's lines (unknown files, failures),
 * through v; its status. */
enum tl_err tl_batch_dir_end(struct tl_batch_dir *bd, const char *dir, size_t nfiles,
                             const struct tl_input_opts *opts, struct tl_summary_input *info,
                             const struct tl_batch_voice *v);

/* The parts of a directory format p wrote, in its order, NULL-terminated
 * in fl (fl->n of them); TL_ERR_FORMAT (said through v) when it has none,
 * TL_ERR_IO when it cannot be listed (said). */
enum tl_err tl_batch_list_parts(const struct tl_parser *p, const char *dir, struct tl_file_list *fl,
                                const struct tl_batch_voice *v);

/* A listing's unreadable directories, said once through v. */
void tl_batch_say_unreadable(const struct tl_file_list *fl, const struct tl_batch_voice *v);

/* A message through v (NULL: stderr now, as tl_eprintf). */
void tl_batch_say(const struct tl_batch_voice *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
