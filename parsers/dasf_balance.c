/* DASF's own "Task balance" table (dasf.profile.analysis,
 * per_worker_task_balance), computed as DASF computes it: per whole second
 * of DASF's monotonic clock (int(timestamp)), and per worker, the `tasks`
 * of the last Managed Memory event written for it in that second -- file
 * order, which is DASF's batch order, not time order -- 0 where a worker
 * wrote none; a second in which no worker wrote one has no row. Format
 * knowledge, kept with the format; the cli prints it. */
#include "parsers/dasf_balance.h"

#include <stdlib.h>
#include <string.h>

#include "core/intern.h"
#include "core/map64.h"

struct tl_dasf_balance {
    struct tl_intern *workers;
    struct tl_map64 last; /* second << 16 | worker -> the value's bits */
    int64_t first, end;   /* seconds seen */
    bool any, oom;
};

void tl_dasf_balance_add(void *ctx, const struct tl_record *r)
{
    struct tl_dasf_balance *b = ctx;
    if (r->kind != TL_REC_SAMPLE || !r->worker || !r->category ||
        strcmp(r->category, "Managed Memory tasks"))
        return;
    int64_t sec = r->time_ns >= 0 ? r->time_ns / 1000000000 : -1;
    int32_t w = tl_intern(b->workers, r->worker, strlen(r->worker));
    if (sec < 0 || w < 0 || w >= 65536) {
        b->oom = w < 0;
        return;
    }
    uint64_t bits;
    double v = r->v[TL_M_SAMPLE_VALUE];
    memcpy(&bits, &v, sizeof bits);
    if (!tl_map64_put(&b->last, (uint64_t)sec << 16 | (uint64_t)w, bits)) b->oom = true;
    if (!b->any || sec < b->first) b->first = sec;
    if (!b->any || sec > b->end) b->end = sec;
    b->any = true;
}

struct tl_dasf_balance *tl_dasf_balance_new(void)
{
    struct tl_dasf_balance *b = calloc(1, sizeof *b);
    if (b && !(b->workers = tl_intern_new(1u << 20))) {
        free(b);
        return NULL;
    }
    return b;
}

bool tl_dasf_balance_failed(const struct tl_dasf_balance *b)
{
    return b->oom;
}

static int by_name(const void *x, const void *y, void *ctx)
{
    const struct tl_intern *in = ctx;
    return strcmp(tl_intern_str(in, *(const int32_t *)x), tl_intern_str(in, *(const int32_t *)y));
}

bool tl_dasf_balance_table(const struct tl_dasf_balance *b, struct tl_dasf_balance_table *t)
{
    memset(t, 0, sizeof *t);
    size_t nw = tl_intern_count(b->workers);
    int32_t *order = malloc((nw ? nw : 1) * sizeof *order);
    t->workers = malloc((nw ? nw : 1) * sizeof *t->workers);
    size_t span = b->any ? (size_t)(b->end - b->first + 1) : 0;
    t->seconds = malloc((span ? span : 1) * sizeof *t->seconds);
    t->tasks = malloc((span && nw ? span * nw : 1) * sizeof *t->tasks);
    if (!order || !t->workers || !t->seconds || !t->tasks) {
        free(order);
        tl_dasf_balance_table_free(t);
        return false;
    }
    for (size_t i = 0; i < nw; i++) order[i] = (int32_t)i;
    qsort_r(order, nw, sizeof *order, by_name, b->workers);
    for (size_t i = 0; i < nw; i++) t->workers[i] = tl_intern_str(b->workers, order[i]);
    t->nworkers = nw;
    for (int64_t s = b->first; b->any && s <= b->end; s++) {
        bool row = false;
        for (size_t i = 0; i < nw && !row; i++)
            row = tl_map64_get(&b->last, (uint64_t)s << 16 | (uint64_t)order[i]) != NULL;
        if (!row) continue;
        t->seconds[t->nrows] = s - b->first;
        for (size_t i = 0; i < nw; i++) {
            uint64_t *bits = tl_map64_get(&b->last, (uint64_t)s << 16 | (uint64_t)order[i]);
            double v = 0;
            if (bits) memcpy(&v, bits, sizeof v);
            t->tasks[t->nrows * nw + i] = v;
        }
        t->nrows++;
    }
    free(order);
    return true;
}

void tl_dasf_balance_table_free(struct tl_dasf_balance_table *t)
{
    free(t->workers);
    free(t->seconds);
    free(t->tasks);
    memset(t, 0, sizeof *t);
}

void tl_dasf_balance_free(struct tl_dasf_balance *b)
{
    if (!b) return;
    tl_map64_free(&b->last);
    tl_intern_free(b->workers);
    free(b);
}
