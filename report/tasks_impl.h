/* What the report's task list (tasks.c) and the encoding of its rows'
 * data (tasks_data.c) share: the rows, the columns, and the blocks the data
 * is kept in while it is made on another thread. Only these two files
 * include it. */
#ifndef TL_REPORT_TASKS_IMPL_H
#define TL_REPORT_TASKS_IMPL_H

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "core/intern.h"

#define US 1e6 /* times travel in microseconds: a profiler's slices last a few */

struct trow {
    int64_t id;          /* the input's task id, -1 none */
    size_t label, tag;   /* offset + 1 into the text arena; 0: none */
    int32_t cat, status; /* interned */
    int32_t exit, attempt;
    bool has_exit, untimed;
    double end, wall, queue, cpu, rss, read, written, req_cores, req_mem, req_time, alloc_cores, alloc_mem;
};

/* The rows sit in chunks that never move, so a parsing thread may encode
 * the full ones while more are added (tl_report_tasks_idle). */
#define ROWS_SHIFT 12                   /* 4,096 rows a chunk */
#define ROWS_CHUNK ((size_t)1 << ROWS_SHIFT)
#define ROWS_CHUNKS ((size_t)1 << 19)   /* 2^31 rows at most */

struct tl_tasks_stream; /* the columns encoded as rows come (tasks_data.c) */

struct tl_report_tasks {
    struct trow **chunk; /* [ROWS_CHUNKS] */
    size_t n;
    _Atomic size_t ready; /* rows complete: stored (release) after each, read by the encoding thread */
    char *text; /* labels and tags, NUL-terminated */
    size_t ntext, captext;
    struct tl_intern *cats, *status;
    /* the last category and result kept (interned copies): most records
     * repeat the previous one, and a compare is cheaper than the hash */
    const char *last_cat, *last_status;
    uint32_t present; /* bit c: some row has column c */
    int32_t empty_status; /* the id of "" (no result): a column of those is not shown */
    int32_t last_cat_id, last_status_id;
    double first_submit; /* of the timed attempts, NAN while none is */
    bool has_label, has_tag, oom;
    struct encoding *enc; /* the data being written on another thread, or NULL */
    struct tl_tasks_stream *stream; /* NULL: the columns are encoded at the end */
    pthread_mutex_t stream_lock;    /* whoever encodes holds it: a parsing thread, then the encoding one */
};

static inline const struct trow *trow_at(const struct tl_report_tasks *t, size_t i)
{
    return &t->chunk[i >> ROWS_SHIFT][i & (ROWS_CHUNK - 1)];
}

/* When an attempt started and was submitted (the concurrency plot's rule:
 * end - wall time, then - queue time). */
static inline double start_of(const struct trow *w)
{
    return w->end - (isfinite(w->wall) ? w->wall : 0);
}

static inline double submit_of(const struct trow *w)
{
    return start_of(w) - (isfinite(w->queue) ? w->queue : 0);
}

/* The columns (times in us, cores in millicores, bytes as they are); what
 * was asked for (Nextflow's cpus, memory, time) and what was allocated
 * (Work Queue's) apart. */
enum col { C_CAT, C_STATUS, C_EXIT, C_ATTEMPT, C_ID, C_SUBMIT, C_QUEUE, C_WALL, C_CPU, C_RSS, C_READ, C_WRITTEN,
           C_REQ_CORES, C_REQ_MEM, C_REQ_TIME, C_ALLOC_CORES, C_ALLOC_MEM, C_COUNT };
extern const char *const tl_tasks_col_key[C_COUNT]; /* each column's name in the data */

#define ALL_COLUMNS ((1u << C_COUNT) - 1)

static inline bool column_present(const struct tl_report_tasks *t, int c)
{
    return (t->present >> c) & 1;
}

/* Blocks of output kept in order (the rows' data, made on another thread). */
struct tl_tasks_blocks {
    char **b;
    size_t *len, n, cap;
};

void tl_tasks_blocks_free(struct tl_tasks_blocks *kp);

/* The rows' data -- the script element holding the columns show[] names --
 * written to o, or kept in blocks; false when it could not be made whole
 * (no memory, a write that fell short). */
bool tl_tasks_data_write(FILE *o, const struct tl_report_tasks *t, double t0, const bool *show);
/* The same kept in blocks, taking the columns stream s encoded so far (NULL:
 * none) and encoding the rest. */
bool tl_tasks_data_keep(struct tl_tasks_blocks *out, const struct tl_report_tasks *t, double t0, const bool *show,
                        struct tl_tasks_stream *s);

/* Columns encoded as rows come: every number column but the submissions
 * (they count from the first, known at the end), in the runs the data is
 * written in. NULL without memory. */
struct tl_tasks_stream *tl_tasks_stream_new(void);
/* Rows [done, upto) encoded -- at most `most` of them; the rows no longer
 * change. Out of memory, the stream says so when the data is made. */
void tl_tasks_stream_feed(struct tl_tasks_stream *s, const struct tl_report_tasks *t, size_t upto, size_t most);
size_t tl_tasks_stream_done(const struct tl_tasks_stream *s);
void tl_tasks_stream_free(struct tl_tasks_stream *s);

#endif
