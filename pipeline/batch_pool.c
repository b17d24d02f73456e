/* Many inputs of a batch command parsed on several threads, used in
 * order on the calling thread (batch.h, tl_read_inputs).
 *
 * A lister thread walks the inputs into jobs, one per file (a directory
 * gives one per file under it, in name order, as its walk finds them; a
 * directory a format writes in parts one for all of them), so parsing
 * starts with the first file found. Worker threads take jobs in order,
 * each with a drive and parser of its own, and write what the job yields
 * -- records (packed, core/record_pack.h), messages, rejected lines -- into
 * the job's stream of blocks. The calling thread replays the streams in
 * job order: records to the command's callback, messages to stderr,
 * rejected lines through the run's one budget. The command sees exactly
 * the sequence it sees reading the inputs one by one, so its output is the
 * same byte for byte, whatever the threads.
 *
 * A command that aggregates (opts->parts: summary) gets a part for each
 * file of PART_MIN_BYTES or more, filled on the worker and merged in job
 * order; on one thread too (inline_), so its sums are the same to the last
 * bit. One file with more than one thread is parsed on a worker beside the
 * calling thread (single); one file on one thread is read as it always was.
 *
 * Memory is bounded: a worker whose job is not the one being replayed
 * stops while the blocks waiting exceed HELD_PER_THREAD per thread (a part
 * waiting to be merged counts PART_WEIGHT: 4 per thread); the job being
 * replayed holds at most QUEUED_MAX blocks. Workers share no parser state;
 * the pool's lock guards all they share. */
#include "pipeline/batch.h"
#include "pipeline/batch_input.h"

#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/record_pack.h"
#include "core/term.h"

#define BLOCK_BYTES (128u * 1024)             /* a block is handed on past this */
#define SPARE_MAX 16                          /* blocks kept for reuse */
#define CHUNK_JOBS 1024                       /* jobs are allocated this many at a time */
#define MAX_CHUNKS 262144                     /* 268 M files in one run */
#define QUEUED_MAX 8                          /* blocks the replayed job may hold */
#define HELD_PER_THREAD ((size_t)4 << 20)     /* bytes other jobs may hold, per thread */
#define PART_WEIGHT ((size_t)1 << 20)         /* a part waiting counts this much of it */
#define PART_MIN_BYTES ((off_t)1 << 20)       /* a smaller file's records go to the whole */

/* EV_JOB: a job's messages begin (kept while its directory is listed) */
enum event { EV_RECORD = 1, EV_TEXT, EV_REJECT, EV_REJECTS, EV_JOB };

struct block {
    struct block *next;
    struct tl_buf buf;
};

struct pool;

struct job {
    struct pool *pool;
    size_t index;
    const char *path;
    char *own_path; /* a directory's file: its path, held here */
    char *const *rest; /* parts after path, NULL-terminated */
    bool in_dir;
    /* the stream: under pool->lock */
    struct block *first, *last;
    int queued;
    bool done;
    /* the worker's until done */
    struct tl_buf cur;
    struct tl_reject_budget budget;
    enum tl_err rc;
    struct tl_summary_input info;
    void *part; /* opts->parts: the file's aggregate */
};

struct input {
    const char *path;
    enum tl_batch_kind kind;   /* known before the threads start */
    const struct tl_parser *whole; /* TL_BATCH_PARTS: the format */
    struct tl_file_list fl; /* a directory's files, or its parts */
    enum tl_err listed;     /* a directory or parts that could not be listed */
    struct tl_buf said;     /* what listing it said (EV_TEXT events) */
    size_t first, njobs;    /* its jobs, once known */
    bool known;             /* listed: under pool->lock */
};

struct pool {
    const struct tl_input_opts *opts;
    pthread_mutex_t lock;
    pthread_cond_t ready, room, work;
    struct job **chunks;      /* [MAX_CHUNKS]: a chunk never moves once made */
    size_t njobs, next, head; /* listed; next to take; the one being replayed */
    bool listed_all;
    bool stopping; /* every input replayed: what is left (out of memory) is not waited for */
    /* what the calling thread waits for, so nothing else wakes it: a
     * block or the end of job `head`, or the next file of a listing */
    enum { WAIT_NONE, WAIT_JOB, WAIT_LISTING } waiting;
    size_t held, limit;
    bool oom;
    bool inline_; /* one thread: each job read when its turn comes, said at once */
    bool single;  /* one file, parsed beside the thread that uses its records */
    struct block *spare; /* replayed blocks, their room kept: a fresh one faults its pages in */
    int nspare;
};

/* The calling thread waits (under the lock) for what it names. */
static void wait_ready(struct pool *pl, int what)
{
    pl->waiting = what;
    pthread_cond_wait(&pl->ready, &pl->lock);
    pl->waiting = WAIT_NONE;
}

/* --- the workers' side ------------------------------------------------- */

static void put_event(struct tl_buf *b, enum event e, const char *text)
{
    tl_buf_putc(b, (char)e);
    if (!text) return;
    uint32_t n = (uint32_t)strlen(text);
    tl_buf_append(b, &n, sizeof n);
    tl_buf_append(b, text, (size_t)n + 1);
}

/* A replayed block's room for the job's next one, if one is kept (under
 * the lock). */
static void take_spare(struct pool *pl, struct job *j)
{
    struct block *s = pl->spare;
    if (!s) return;
    pl->spare = s->next;
    pl->nspare--;
    j->cur = s->buf;
    j->cur.len = 0;
    free(s);
}

/* The job must wait before it writes more (under the lock): the replayed
 * job holds QUEUED_MAX blocks, or the others hold the pool's limit. */
static bool stream_full(const struct pool *pl, const struct job *j)
{
    return j->index == pl->head ? j->queued >= QUEUED_MAX : pl->held > pl->limit;
}

/* Hands the job's current block on (and takes a spare one for the next);
 * waits while the stream is full. */
static void publish(struct job *j, bool last)
{
    struct pool *pl = j->pool;
    struct block *b = NULL;
    bool lost = false;
    if (j->cur.len || j->cur.oom) {
        b = malloc(sizeof *b);
        if (b) b->buf = j->cur, b->next = NULL;
        else tl_buf_free(&j->cur), lost = true;
        j->cur = (struct tl_buf){0};
    }
    pthread_mutex_lock(&pl->lock);
    if (!last) take_spare(pl, j);
    if (b) {
        if (j->last) j->last->next = b;
        else j->first = b;
        j->last = b;
        j->queued++;
        pl->held += b->buf.cap;
    }
    pl->oom |= lost;
    if (last && j->part) pl->held += PART_WEIGHT; /* until merged */
    if (last) j->done = true;
    if (pl->waiting == WAIT_JOB && j->index == pl->head) pthread_cond_signal(&pl->ready);
    bool idle = pl->opts->idle != NULL; /* the command's work while the calling thread catches up */
    while (!last && !pl->stopping && stream_full(pl, j)) {
        if (idle) {
            pthread_mutex_unlock(&pl->lock);
            idle = pl->opts->idle(pl->opts->idle_ctx);
            pthread_mutex_lock(&pl->lock);
            continue; /* the room may have come meanwhile, its signal to no one: look again */
        }
        pthread_cond_wait(&pl->room, &pl->lock);
        idle = pl->opts->idle != NULL;
    }
    pthread_mutex_unlock(&pl->lock);
}

static void after_event(struct job *j)
{
    if (j->cur.len >= BLOCK_BYTES) publish(j, false);
}

static void keep_record(void *ctx, const struct tl_record *r)
{
    struct job *j = ctx;
    tl_buf_putc(&j->cur, EV_RECORD);
    tl_record_pack(&j->cur, r);
    after_event(j);
}

static void keep_text(void *ctx, const char *msg)
{
    struct job *j = ctx;
    put_event(&j->cur, EV_TEXT, msg);
    after_event(j);
}

static void keep_reject(void *ctx, const char *line)
{
    struct job *j = ctx;
    put_event(&j->cur, EV_REJECT, line);
    after_event(j);
}

static void keep_rejects(void *ctx, const struct tl_drive *d)
{
    struct job *j = ctx;
    struct tl_parse_stats st = tl_drive_stats(d);
    tl_buf_putc(&j->cur, EV_REJECTS);
    tl_buf_append(&j->cur, &st, sizeof st);
    put_event(&j->cur, EV_TEXT, d->name ? d->name : "stdin");
    after_event(j);
}

/* Whether a file gets a part of its own (opts->parts): one of 1 MiB or
 * more; a smaller one's records are replayed into the whole in order (a
 * datastore's quanta, one record a file: a part would cost 20x the
 * record). Decided from the file alone, so every reading decides the same. */
static bool wants_part(const struct tl_input_opts *o, const struct job *j)
{
    struct stat st;
    return o->parts && !stat(j->path, &st) && S_ISREG(st.st_mode) && st.st_size >= PART_MIN_BYTES;
}

static void run_job(struct job *j)
{
    const struct tl_input_opts *o = j->pool->opts;
    j->budget = (struct tl_reject_budget){.max = o->budget ? o->budget->max : o->max_reports,
                                          .quiet = o->quiet, .say = keep_reject, .ctx = j};
    struct tl_batch_voice v = {.text = keep_text, .rejects = keep_rejects, .budget = &j->budget,
                               .ctx = j, .progress = j->pool->single};
    pthread_mutex_lock(&j->pool->lock);
    take_spare(j->pool, j);
    pthread_mutex_unlock(&j->pool->lock);
    bool part = wants_part(o, j);
    if (part && !(j->part = o->parts->open(o->parts->ctx))) {
        j->rc = TL_ERR_NOMEM; /* said, as every input that is not read */
        char msg[PATH_MAX + 64];
        snprintf(msg, sizeof msg, "tasklens: %s: %s\n", j->path, tl_strerror(TL_ERR_NOMEM));
        keep_text(j, msg);
    } else {
        void (*to)(void *, const struct tl_record *) = part ? o->parts->record : keep_record;
        j->rc = tl_batch_read_file(j->path, j->rest, o, to, part ? j->part : (void *)j, &j->info,
                                   j->in_dir, &v);
    }
    publish(j, true);
}

static struct job *job_at(struct pool *pl, size_t k)
{
    return &pl->chunks[k / CHUNK_JOBS][k % CHUNK_JOBS];
}

static void *worker(void *arg)
{
    struct pool *pl = arg;
    pthread_mutex_lock(&pl->lock);
    for (;;) {
        if (pl->stopping) {
            break;
        } else if (pl->next == pl->njobs) {
            if (pl->listed_all) break;
            pthread_cond_wait(&pl->work, &pl->lock);
        } else if (pl->next != pl->head && pl->held > pl->limit) {
            pthread_cond_wait(&pl->room, &pl->lock);
        } else {
            struct job *j = job_at(pl, pl->next++);
            pthread_mutex_unlock(&pl->lock);
            run_job(j);
            pthread_mutex_lock(&pl->lock);
        }
    }
    pthread_mutex_unlock(&pl->lock);
    return NULL;
}

/* --- the calling thread's side ----------------------------------------- */

struct replay {
    void (*on_record)(void *ctx, const struct tl_record *r);
    void *ctx;
    struct tl_reject_budget *budget; /* the run's, or the job's own */
    bool told_any;
    bool lost; /* records left out: out of memory */
    /* a directory's files replayed while it is still listed: their messages
     * kept until what listing it says is said first */
    bool defer;
    struct tl_buf deferred;
    struct tl_record rec;
};

static const char *take_text(const char *p, const char **text)
{
    uint32_t n;
    memcpy(&n, p, sizeof n);
    *text = p + sizeof n;
    return *text + n + 1;
}

/* A message event at p, kept for later; where the next event starts. */
static const char *defer_event(struct replay *rp, const char *p)
{
    const char *at = p - 1, *text;
    p = take_text(*at == EV_REJECTS ? p + sizeof(struct tl_parse_stats) + 1 : p, &text);
    tl_buf_append(&rp->deferred, at, (size_t)(p - at));
    return p;
}

static void replay_block(struct replay *rp, const char *p, const char *end)
{
    while (p < end) {
        const char *text;
        if (rp->defer && *p != EV_RECORD) {
            p = defer_event(rp, p + 1);
            continue;
        }
        switch ((enum event)*p++) {
        case EV_JOB:
            rp->told_any = false;
            break;
        case EV_RECORD:
            p = tl_record_unpack(p, &rp->rec);
            rp->on_record(rp->ctx, &rp->rec);
            break;
        case EV_TEXT:
            p = take_text(p, &text);
            tl_eprintf("%s", text);
            break;
        case EV_REJECT:
            p = take_text(p, &text);
            if (tl_reject_budget_tell(rp->budget, text)) rp->told_any = true;
            break;
        case EV_REJECTS: {
            struct tl_parse_stats st;
            memcpy(&st, p, sizeof st);
            p = take_text(p + sizeof st + 1, &text);
            tl_reject_budget_input(rp->budget, text, &st, rp->told_any);
            break;
        }
        default: return; /* cannot happen: the stream is ours */
        }
    }
}

/* One thread: job i read now, said at once, its part merged. */
static enum tl_err read_job(struct pool *pl, size_t i, struct replay *rp,
                            struct tl_summary_input *info)
{
    struct job *j = job_at(pl, i);
    const struct tl_input_parts *parts = pl->opts->parts;
    bool wanted = wants_part(pl->opts, j);
    void *part = wanted ? parts->open(parts->ctx) : NULL;
    if (wanted && !part) {
        memset(info, 0, sizeof *info);
        info->path = j->path;
        tl_eprintf("tasklens: %s: out of memory\n", j->path);
        return TL_ERR_NOMEM;
    }
    enum tl_err rc = tl_batch_read_file(j->path, j->rest, pl->opts, part ? parts->record : rp->on_record,
                                        part ? part : rp->ctx, info, j->in_dir, NULL);
    if (part) parts->merge(parts->ctx, part);
    return rc;
}

/* Replays job i's stream as it comes (or reads it, on one thread); its
 * status and info. */
static enum tl_err replay_job(struct pool *pl, size_t i, struct replay *rp,
                              struct tl_summary_input *info)
{
    if (pl->inline_) return read_job(pl, i, rp, info);
    pthread_mutex_lock(&pl->lock);
    struct job *j = job_at(pl, i);
    pthread_mutex_unlock(&pl->lock);
    struct tl_reject_budget own = {.max = pl->opts->max_reports, .quiet = pl->opts->quiet};
    rp->budget = pl->opts->budget ? pl->opts->budget : &own;
    rp->told_any = false;
    if (rp->defer) tl_buf_putc(&rp->deferred, EV_JOB);
    pthread_mutex_lock(&pl->lock);
    pl->head = i;
    pthread_cond_broadcast(&pl->room);
    for (;;) {
        while (!j->first && !j->done) wait_ready(pl, WAIT_JOB);
        struct block *b = j->first;
        if (!b) break;
        j->first = b->next;
        if (!j->first) j->last = NULL;
        j->queued--;
        pl->held -= b->buf.cap;
        pthread_cond_broadcast(&pl->room);
        pthread_mutex_unlock(&pl->lock);
        if (b->buf.oom) rp->lost = true; /* cut where memory ran out: not replayed */
        else replay_block(rp, b->buf.data, b->buf.data + b->buf.len);
        pthread_mutex_lock(&pl->lock);
        if (pl->nspare < SPARE_MAX && !b->buf.oom) {
            b->next = pl->spare;
            pl->spare = b;
            pl->nspare++;
        } else {
            tl_buf_free(&b->buf);
            free(b);
        }
    }
    rp->lost |= pl->oom;
    pthread_mutex_unlock(&pl->lock);
    rp->budget->untold += j->budget.untold;
    *info = j->info;
    if (j->part) {
        pl->opts->parts->merge(pl->opts->parts->ctx, j->part);
        j->part = NULL;
        pthread_mutex_lock(&pl->lock);
        pl->held -= PART_WEIGHT;
        pthread_cond_broadcast(&pl->room);
        pthread_mutex_unlock(&pl->lock);
    }
    if (rp->lost) { /* said even when the job failed: what it said may be in what was lost */
        tl_eprintf("tasklens: %s: out of memory passing its records on: some are left out\n", j->path);
        return j->rc ? j->rc : TL_ERR_NOMEM;
    }
    return j->rc;
}

/* --- listing ----------------------------------------------------------- */

static void keep_said(void *ctx, const char *msg)
{
    put_event(ctx, EV_TEXT, msg);
}

/* A job for path (copied when own), told to the workers; false when out of
 * memory or past MAX_CHUNKS. */
static bool add_job(struct pool *pl, const char *path, char *const *rest, bool in_dir, bool own)
{
    size_t k = pl->njobs; /* the lister alone changes it */
    if (k / CHUNK_JOBS >= MAX_CHUNKS) return false;
    struct job *chunk = pl->chunks[k / CHUNK_JOBS];
    if (!chunk && !(chunk = calloc(CHUNK_JOBS, sizeof *chunk))) return false;
    struct job *j = &chunk[k % CHUNK_JOBS];
    *j = (struct job){.pool = pl, .index = k, .path = path, .rest = rest, .in_dir = in_dir};
    if (own && !(j->path = j->own_path = strdup(path))) return false;
    pthread_mutex_lock(&pl->lock);
    pl->chunks[k / CHUNK_JOBS] = chunk;
    pl->njobs++;
    pthread_cond_signal(&pl->work);
    if (pl->waiting == WAIT_LISTING) pthread_cond_signal(&pl->ready);
    pthread_mutex_unlock(&pl->lock);
    return true;
}

static bool add_dir_file(void *ctx, const char *path)
{
    return add_job(ctx, path, NULL, true, true);
}

/* Listing ran out of memory: said as it is replayed, straight (a message
 * kept in a buffer for it could itself find no memory). */
static enum tl_err say_listing_nomem(void)
{
    tl_eprintf("tasklens: out of memory listing the inputs\n");
    return TL_ERR_NOMEM;
}

/* An input's jobs, its listing's messages kept for its turn. */
static void list_input(struct pool *pl, struct input *in)
{
    struct tl_batch_voice v = {.text = keep_said, .ctx = &in->said};
    pthread_mutex_lock(&pl->lock); /* the calling thread reads it as the files come */
    in->first = pl->njobs;
    pthread_mutex_unlock(&pl->lock);
    bool ok = true;
    if (in->kind == TL_BATCH_DIR) {
        in->listed = tl_dir_walk(&in->fl, in->path, NULL, add_dir_file, pl) ? TL_OK : TL_ERR_IO;
        tl_batch_say_unreadable(&in->fl, &v);
        ok = in->fl.unreadable || !in->listed; /* else the walk stopped: out of memory */
    } else if (in->kind == TL_BATCH_PARTS) {
        in->listed = tl_batch_list_parts(in->whole, in->path, &in->fl, &v);
        if (!in->listed) ok = add_job(pl, in->fl.paths[0], in->fl.paths + 1, false, false);
    } else {
        ok = add_job(pl, in->path, NULL, false, false);
    }
    if (!ok || in->said.oom) { /* said when replayed (say_listing_nomem): no buffer to hold it */
        in->listed = TL_ERR_NOMEM;
        tl_buf_free(&in->said);
    }
    pthread_mutex_lock(&pl->lock);
    in->njobs = pl->njobs - in->first;
    in->known = true;
    pthread_cond_broadcast(&pl->ready);
    pthread_mutex_unlock(&pl->lock);
}

struct listing {
    struct pool *pl;
    struct input *ins;
    int n;
};

static void *lister(void *arg)
{
    struct listing *ls = arg;
    for (int i = 0; i < ls->n; i++) list_input(ls->pl, &ls->ins[i]);
    pthread_mutex_lock(&ls->pl->lock);
    ls->pl->listed_all = true;
    pthread_cond_broadcast(&ls->pl->work);
    pthread_mutex_unlock(&ls->pl->lock);
    return NULL;
}

/* How many of a directory's files are listed so far, waiting for one more
 * than `have` (under the lock); *known: all are. */
static size_t dir_listed(struct pool *pl, const struct input *in, size_t have, bool *known)
{
    pthread_mutex_lock(&pl->lock);
    while (!in->known && pl->njobs - in->first <= have) wait_ready(pl, WAIT_LISTING);
    *known = in->known;
    size_t n = in->known ? in->njobs : pl->njobs - in->first;
    pthread_mutex_unlock(&pl->lock);
    return n;
}

/* Listed: what listing said first, then the messages kept meanwhile. */
static void say_deferred(struct replay *rp, const struct input *in)
{
    if (!rp->defer) return;
    rp->defer = false;
    if (in->said.len) replay_block(rp, in->said.data, in->said.data + in->said.len);
    if (rp->deferred.len) replay_block(rp, rp->deferred.data, rp->deferred.data + rp->deferred.len);
    rp->deferred.len = 0;
}

/* A directory replayed while it is listed: its files as they are found,
 * their messages kept until the listing's own are said. */
static enum tl_err replay_dir_listing(struct pool *pl, struct input *in, struct replay *rp,
                                      struct tl_summary_input *info)
{
    memset(info, 0, sizeof *info);
    info->path = in->path;
    struct tl_batch_dir bd = {0};
    rp->defer = true;
    bool known = false;
    for (size_t f = 0, n; f < (n = dir_listed(pl, in, f, &known)) || !known;) {
        if (known) say_deferred(rp, in);
        struct tl_summary_input one;
        enum tl_err r = replay_job(pl, in->first + f++, rp, &one);
        tl_batch_dir_add(&bd, one.path, r, &one, info);
    }
    say_deferred(rp, in);
    if (in->listed == TL_ERR_NOMEM) return say_listing_nomem();
    if (!bd.rc) bd.rc = in->listed;
    return tl_batch_dir_end(&bd, in->path, in->njobs, pl->opts, info, NULL);
}

/* Input i, replayed: what listing it said, then its jobs (on one thread,
 * listed now). */
static enum tl_err replay_input(struct pool *pl, struct input *in, struct replay *rp,
                                struct tl_summary_input *info)
{
    if (pl->inline_ && !in->known) list_input(pl, in);
    if (!pl->inline_ && pl->opts->budget && in->kind == TL_BATCH_DIR)
        return replay_dir_listing(pl, in, rp, info);
    pthread_mutex_lock(&pl->lock);
    while (!in->known) wait_ready(pl, WAIT_LISTING);
    pthread_mutex_unlock(&pl->lock);
    if (in->said.len) replay_block(rp, in->said.data, in->said.data + in->said.len);
    memset(info, 0, sizeof *info);
    if (in->listed == TL_ERR_NOMEM) {
        info->path = in->path;
        return say_listing_nomem();
    }
    if (in->kind == TL_BATCH_FILE) return replay_job(pl, in->first, rp, info);
    if (in->kind == TL_BATCH_PARTS) {
        enum tl_err rc = in->listed ? in->listed : replay_job(pl, in->first, rp, info);
        info->path = in->path;
        return rc;
    }
    info->path = in->path;
    struct tl_batch_dir bd = {0};
    for (size_t f = 0; f < in->njobs; f++) {
        struct tl_summary_input one;
        enum tl_err r = replay_job(pl, in->first + f, rp, &one);
        tl_batch_dir_add(&bd, one.path, r, &one, info);
    }
    if (!bd.rc) bd.rc = in->listed; /* a file's failure says more than the listing's */
    return tl_batch_dir_end(&bd, in->path, in->njobs, pl->opts, info, NULL);
}

/* --- the door ---------------------------------------------------------- */

/* A file's reading allocates and frees a few hundred KiB (its read
 * buffers, a part), which malloc maps and unmaps (past 128 KiB) or gives
 * back at the heap's top, to fault it in again for the next file: 3 brk
 * and 7 page faults a file, 20,000 LSST files 0.76 s -> 1.2 s; with the
 * jobs' 3.5 MB chunks too, a threshold of 1 MiB left --threads 2 at 0.60 s,
 * 4 MiB at 0.51 s. Blocks under 4 MiB come from the heap and up to 8 MiB
 * free stays in the process (setting one turns malloc's own tuning of the
 * other off); larger blocks are still given back at once. */
static void keep_freed_heap(void)
{
    mallopt(M_TRIM_THRESHOLD, 8 << 20);
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
}

int tl_batch_threads(void)
{
    cpu_set_t set;
    if (!sched_getaffinity(0, sizeof set, &set)) return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static enum tl_err read_serially(char *const *paths, int n, const struct tl_input_opts *opts,
                                 void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                                 tl_input_done done, void *dctx)
{
    enum tl_err worst = TL_OK;
    for (int i = 0; i < n; i++) {
        struct tl_summary_input info;
        enum tl_err rc = tl_read_input(paths[i], opts, on_record, ctx, &info);
        if (rc && !worst) worst = rc;
        done(dctx, i, rc, &info);
    }
    return worst;
}

static void free_inputs(struct input *ins, int n)
{
    for (int i = 0; i < n; i++) {
        tl_file_list_free(&ins[i].fl);
        tl_buf_free(&ins[i].said);
    }
    free(ins);
}

/* The inputs replayed in order while the workers parse them. */
static enum tl_err replay_all(struct pool *pl, struct input *ins, int n,
                              void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                              tl_input_done done, void *dctx)
{
    struct replay rp = {.on_record = on_record, .ctx = ctx};
    enum tl_err worst = TL_OK;
    for (int i = 0; i < n; i++) {
        struct tl_summary_input info;
        enum tl_err rc = replay_input(pl, &ins[i], &rp, &info);
        if (rc && !worst) worst = rc;
        done(dctx, i, rc, &info);
    }
    tl_buf_free(&rp.deferred);
    return worst;
}

/* The pool's threads: a lister and `threads` workers (none when reading on
 * the calling thread alone); how many started in *started. */
static void start(struct pool *pl, struct listing *ls, int threads, pthread_t *tid, int *started)
{
    *started = 0;
    if (pl->inline_) return;
    if (pthread_create(&tid[0], NULL, lister, ls)) {
        pl->inline_ = true;
        return;
    }
    *started = 1;
    while (*started <= threads && !pthread_create(&tid[*started], NULL, worker, pl)) (*started)++;
    if (*started == 1) { /* no worker: read on this thread, the listing done first */
        pthread_join(tid[0], NULL);
        *started = 0;
        pl->inline_ = true;
    }
}

static void free_pool(struct pool *pl)
{
    for (size_t k = 0; k < pl->njobs; k++) {
        struct job *j = job_at(pl, k);
        for (struct block *b = j->first, *next; b; b = next) { /* never replayed: out of memory */
            next = b->next;
            tl_buf_free(&b->buf);
            free(b);
        }
        tl_buf_free(&j->cur);
        free(j->own_path);
    }
    for (size_t c = 0; c < MAX_CHUNKS && pl->chunks[c]; c++) free(pl->chunks[c]);
    free(pl->chunks);
    while (pl->spare) {
        struct block *b = pl->spare;
        pl->spare = b->next;
        tl_buf_free(&b->buf);
        free(b);
    }
    pthread_cond_destroy(&pl->work);
    pthread_cond_destroy(&pl->room);
    pthread_cond_destroy(&pl->ready);
    pthread_mutex_destroy(&pl->lock);
}

enum tl_err tl_read_inputs(char *const *paths, int n, const struct tl_input_opts *opts,
                           void (*on_record)(void *ctx, const struct tl_record *r), void *ctx,
                           tl_input_done done, void *dctx)
{
    int threads = opts->threads > 0 ? opts->threads : tl_batch_threads();
    if (threads > TL_BATCH_MAX_THREADS - 1) threads = TL_BATCH_MAX_THREADS - 1;
    const struct tl_parser *whole;
    bool one_file = n == 1 && tl_batch_kind(paths[0], &whole) == TL_BATCH_FILE;
    /* one file: parsed on a thread of its own while this one uses its
     * records (a part would be the whole: the records go to on_record) */
    struct tl_input_opts whole_file;
    bool pipelined = one_file && threads > 1 && on_record;
    /* records in order on one thread, or one file on one: read as it always was */
    if ((threads == 1 && !opts->parts) || (one_file && !pipelined))
        return read_serially(paths, n, opts, on_record, ctx, done, dctx);
    if (pipelined) {
        whole_file = *opts;
        whole_file.parts = NULL;
        opts = &whole_file;
        threads = 1;
    }
    if (opts->parts && !one_file) keep_freed_heap();
    struct input *ins = calloc((size_t)n, sizeof *ins);
    struct pool pl = {.opts = opts, .limit = HELD_PER_THREAD * (size_t)threads,
                      .inline_ = threads == 1 && !pipelined, .single = pipelined,
                      .chunks = calloc(MAX_CHUNKS, sizeof *pl.chunks)};
    if (!ins || !pl.chunks) { /* out of memory: one by one, as it always was */
        free(ins);
        free(pl.chunks);
        return read_serially(paths, n, opts, on_record, ctx, done, dctx);
    }
    for (int i = 0; i < n; i++) {
        ins[i].path = paths[i];
        ins[i].kind = tl_batch_kind(paths[i], &ins[i].whole);
    }
    pthread_mutex_init(&pl.lock, NULL);
    pthread_cond_init(&pl.ready, NULL);
    pthread_cond_init(&pl.room, NULL);
    pthread_cond_init(&pl.work, NULL);
    struct listing ls = {&pl, ins, n};
    pthread_t tid[TL_BATCH_MAX_THREADS];
    int started;
    start(&pl, &ls, threads, tid, &started);
    enum tl_err rc = replay_all(&pl, ins, n, on_record, ctx, done, dctx);
    pthread_mutex_lock(&pl.lock);
    pl.stopping = true;
    pthread_cond_broadcast(&pl.room);
    pthread_cond_broadcast(&pl.work);
    pthread_mutex_unlock(&pl.lock);
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    free_pool(&pl);
    free_inputs(ins, n);
    return rc;
}
