/* The rows `tasklens path` reads (path.h): one per task, its attempts
 * folded in, and its dependencies resolved to row indices once every
 * record is in. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/glossary.h"
#include "insights/path.h"

/* A (workflow, task id) key: exact for the ids inputs use (0 .. 2^44),
 * so two tasks never share one. */
#define ID_BITS 44
#define WF_LIMIT (1 << (64 - ID_BITS - 1))

static bool task_key(int32_t wf, int64_t id, uint64_t *key)
{
    if (id < 0 || id >= ((int64_t)1 << ID_BITS) || wf < 0 || wf >= WF_LIMIT) return false;
    *key = ((uint64_t)wf << ID_BITS) | (uint64_t)id;
    return true;
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return true;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * size);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

/* "12, 13,14" into dependency keys of workflow wf; ids that are not
 * integers are counted, not kept. */
static void add_deps(struct tl_path_input *in, struct tl_path_task *t, int32_t wf, const char *s)
{
    t->dep_at = (uint32_t)in->ndep;
    t->ndeps = 0;
    while (*s) {
        while (*s == ' ' || *s == ',' || *s == '\t') s++;
        if (!*s) break;
        char *end;
        long long id = strtoll(s, &end, 10);
        uint64_t key;
        if (end == s || (*end && *end != ',' && *end != ' ') || !task_key(wf, id, &key)) {
            in->bad_deps++;
            while (*s && *s != ',') s++;
            continue;
        }
        s = end;
        if (!grow((void **)&in->dep, &in->capdep, in->ndep + 1, sizeof *in->dep)) {
            in->oom = true;
            return;
        }
        in->dep[in->ndep++] = key;
        t->ndeps++;
    }
}

/* The attempt's times in seconds after the input's origin (so a
 * difference of two keeps the nanoseconds the record has: an epoch time in
 * a double keeps 0.24 us): end, start, submission. */
static void attempt_times(struct tl_path_input *in, const struct tl_record *r, double *submit, double *start,
                          double *end)
{
    double wall = tl_record_value(r, TL_M_WALL_TIME_S), queue = tl_record_value(r, TL_M_QUEUE_TIME_S);
    if (!in->origin_ns) in->origin_ns = r->time_ns;
    *end = (double)(r->time_ns - in->origin_ns) / 1e9;
    *start = r->start_ns != TL_NO_TIME ? (double)(r->start_ns - in->origin_ns) / 1e9
             : isfinite(wall)           ? *end - wall
                                        : *end;
    *submit = isfinite(queue) ? *start - queue : *start;
}

static struct tl_path_task *new_task(struct tl_path_input *in, const struct tl_record *r, int32_t wf)
{
    if (!grow((void **)&in->t, &in->cap, in->n + 1, sizeof *in->t)) {
        in->oom = true;
        return NULL;
    }
    struct tl_path_task *t = &in->t[in->n++];
    memset(t, 0, sizeof *t);
    t->id = r->task_id;
    t->wf = wf;
    t->cat = tl_names_id(&in->cats, r->category, &in->oom);
    t->worker = r->worker ? tl_names_id(&in->workers, r->worker, &in->oom) : -1;
    t->end = -INFINITY;
    t->submit = INFINITY;
    return t;
}

/* Folds attempt r into t: the counted attempt is the final one, else the
 * one that ended last. */
static void fold(struct tl_path_input *in, struct tl_path_task *t, const struct tl_record *r)
{
    double submit, start, end;
    attempt_times(in, r, &submit, &start, &end);
    t->attempts++;
    t->held += end - start;
    if (submit < t->submit) t->submit = submit;
    if (r->final || (!t->final_seen && end >= t->end)) {
        t->launch = submit;
        t->start = start;
        t->end = end;
        t->final_seen |= r->final;
        if (r->worker) t->worker = tl_names_id(&in->workers, r->worker, &in->oom);
        t->cat = tl_names_id(&in->cats, r->category, &in->oom);
    }
    if (r->depends && !t->ndeps) add_deps(in, t, t->wf, r->depends);
}

void tl_path_add(void *ctx, const struct tl_record *r)
{
    struct tl_path_input *in = ctx;
    if (r->kind != TL_REC_TASK || in->oom) return;
    if (r->time_from_file || !r->time_ns) {
        in->untimed++;
        return;
    }
    if (tl_result_cached(r->result)) { /* an earlier run's: not in this run's makespan */
        in->cached++;
        return;
    }
    int32_t wf = tl_names_id(&in->wfs, r->workflow, &in->oom);
    uint64_t key, *at = NULL;
    bool keyed = task_key(wf, r->task_id, &key);
    if (keyed) at = tl_map64_get(&in->by_key, key);
    struct tl_path_task *t = at ? &in->t[*at - 1] : new_task(in, r, wf);
    if (!t) return;
    if (keyed && !at && !tl_map64_put(&in->by_key, key, in->n)) in->oom = true;
    fold(in, t, r);
}

/* Dependency keys to row indices. */
static void resolve(struct tl_path_input *in)
{
    for (size_t i = 0; i < in->ndep; i++) {
        uint64_t *at = tl_map64_get(&in->by_key, in->dep[i]);
        in->dep[i] = at ? *at - 1 : TL_PATH_NONE;
        in->unresolved += !at;
    }
}

static void renumber(struct tl_path_input *in, const int32_t *cat, const int32_t *wf, const int32_t *worker)
{
    for (size_t i = 0; i < in->n; i++) {
        struct tl_path_task *t = &in->t[i];
        t->cat = cat[t->cat];
        t->wf = wf[t->wf];
        if (t->worker >= 0) t->worker = worker[t->worker];
    }
}

bool tl_path_done(struct tl_path_input *in)
{
    if (in->oom) return false;
    resolve(in);
    int32_t *cat = tl_names_sort(&in->cats, &in->oom), *wf = tl_names_sort(&in->wfs, &in->oom),
            *worker = tl_names_sort(&in->workers, &in->oom);
    if (!in->oom) renumber(in, cat, wf, worker);
    free(cat);
    free(wf);
    free(worker);
    return !in->oom;
}

void tl_path_input_free(struct tl_path_input *in)
{
    free(in->t);
    free(in->dep);
    tl_map64_free(&in->by_key);
    tl_names_free(&in->cats);
    tl_names_free(&in->wfs);
    tl_names_free(&in->workers);
}
