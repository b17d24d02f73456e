/* The rows `tasklens path` reads (path.h): attempts appended as they are
 * read (no lookup: the report reads its million records on the thread
 * that writes the page), then, once every record is in, folded into one
 * row per task -- grouped by (workflow, task id) with a radix sort -- and
 * their dependencies resolved to row indices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/glossary.h"
#include "core/map64.h"
#include "insights/path_impl.h"

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

/* "12, 13,14" into dependency keys of workflow wf, each through put();
 * ids that are not integers are counted, not kept. */
static void each_dep(struct tl_path_input *in, int32_t wf, const char *s, bool (*put)(struct tl_path_input *, uint64_t, void *),
                     void *ctx)
{
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
        if (!put(in, key, ctx)) {
            in->oom = true;
            return;
        }
    }
}

static bool put_dep(struct tl_path_input *in, uint64_t key, void *ctx)
{
    if (!grow((void **)&in->dep, &in->capdep, in->ndep + 1, sizeof *in->dep)) return false;
    in->dep[in->ndep++] = key;
    ((struct tl_path_attempt *)ctx)->ndeps++;
    return true;
}

static bool put_late(struct tl_path_input *in, uint64_t key, void *ctx)
{
    if (!grow((void **)&in->late, &in->caplate, in->nlate + 2, sizeof *in->late)) return false;
    in->late[in->nlate++] = *(const uint64_t *)ctx;
    in->late[in->nlate++] = key;
    return true;
}

/* An edge record: task_id waited for the tasks in depends. */
static void add_edges(struct tl_path_input *in, const struct tl_record *r)
{
    int32_t wf = tl_names_id(&in->wfs, r->workflow, &in->oom);
    uint64_t to;
    if (in->oom || !r->depends) return;
    if (!task_key(wf, r->task_id, &to)) {
        in->bad_deps++;
        return;
    }
    each_dep(in, wf, r->depends, put_late, &to);
}

/* The attempt's times in seconds after the input's origin (so a
 * difference of two keeps the nanoseconds the record has: an epoch time in
 * a double keeps 0.24 us): end, start, submission. */
static void attempt_times(struct tl_path_input *in, const struct tl_record *r, struct tl_path_attempt *at)
{
    double wall = tl_record_value(r, TL_M_WALL_TIME_S), queue = tl_record_value(r, TL_M_QUEUE_TIME_S);
    if (!in->origin_ns) in->origin_ns = r->time_ns;
    at->end = (double)(r->time_ns - in->origin_ns) / 1e9;
    at->start = r->start_ns != TL_NO_TIME ? (double)(r->start_ns - in->origin_ns) / 1e9
                : isfinite(wall)           ? at->end - wall
                                           : at->end;
    at->submit = isfinite(queue) ? at->start - queue : at->start;
    at->submit_recorded = isfinite(queue);
}

void tl_path_add(void *ctx, const struct tl_record *r)
{
    struct tl_path_input *in = ctx;
    if (r->kind == TL_REC_EDGE && !in->oom) add_edges(in, r);
    if (r->kind != TL_REC_TASK || in->oom) return;
    if (r->time_from_file || !r->time_ns) {
        in->untimed++;
        return;
    }
    if (tl_result_cached(r->result)) { /* an earlier run's: not in this run's makespan */
        in->cached++;
        return;
    }
    if (!grow((void **)&in->a, &in->capa, in->na + 1, sizeof *in->a)) {
        in->oom = true;
        return;
    }
    struct tl_path_attempt *at = &in->a[in->na++];
    at->id = r->task_id;
    at->wf = tl_names_id(&in->wfs, r->workflow, &in->oom);
    at->cat = tl_names_id(&in->cats, r->category, &in->oom);
    at->worker = r->worker ? tl_names_id(&in->workers, r->worker, &in->oom) : -1;
    at->final = r->final;
    at->ndeps = 0;
    attempt_times(in, r, at);
    at->dep_at = (uint32_t)in->ndep;
    if (r->depends) each_dep(in, at->wf, r->depends, put_dep, at);
}

/* ------------------------------------------------------------ folding */

/* Attempt a into task t: the counted attempt is the final one, else the one
 * that ended last; attempts come in input order. */
static void fold(struct tl_path_task *t, const struct tl_path_attempt *a)
{
    t->attempts++;
    t->submit_recorded |= a->submit_recorded;
    t->held += a->end - a->start;
    if (a->submit < t->submit) t->submit = a->submit;
    if (a->final || (!t->final_seen && a->end >= t->end)) {
        t->launch = a->submit;
        t->start = a->start;
        t->end = a->end;
        t->final_seen |= a->final;
        if (a->worker >= 0) t->worker = a->worker;
        t->cat = a->cat;
    }
    if (a->ndeps && !t->ndeps) t->dep_at = a->dep_at, t->ndeps = a->ndeps;
}

static void task_open(struct tl_path_task *t, const struct tl_path_attempt *a)
{
    memset(t, 0, sizeof *t);
    t->id = a->id;
    t->wf = a->wf;
    t->cat = a->cat;
    t->worker = a->worker;
    t->end = -INFINITY;
    t->submit = INFINITY;
}

/* task_of[attempt]: its task, numbered in the order of first attempts. */
static bool group(struct tl_path_input *in, uint32_t *task_of)
{
    struct tl_path_kv *k = malloc((in->na + 1) * sizeof *k);
    if (!k) return false;
    size_t nk = 0;
    for (size_t i = 0; i < in->na; i++) {
        uint64_t key;
        task_of[i] = UINT32_MAX;
        if (task_key(in->a[i].wf, in->a[i].id, &key)) k[nk++] = (struct tl_path_kv){key, (uint32_t)i};
    }
    bool ok = !nk || tl_path_radix(k, nk);
    for (size_t j = 0; ok && j < nk;) { /* a group's attempts point at its first one */
        size_t e = j;
        while (e < nk && k[e].key == k[j].key) task_of[k[e++].v] = k[j].v;
        j = e;
    }
    free(k);
    if (!ok) return false;
    in->n = 0;
    for (size_t i = 0; i < in->na; i++) { /* first attempts number the tasks */
        if (task_of[i] == UINT32_MAX || task_of[i] == i) task_of[i] = (uint32_t)in->n++ | 0x80000000u;
        else task_of[i] = task_of[task_of[i]];
    }
    for (size_t i = 0; i < in->na; i++) task_of[i] &= 0x7fffffffu;
    return true;
}

static bool fold_all(struct tl_path_input *in)
{
    uint32_t *task_of = malloc((in->na + 1) * sizeof *task_of);
    bool ok = task_of && in->na < 0x7fffffffu && group(in, task_of);
    in->t = ok ? malloc((in->n + 1) * sizeof *in->t) : NULL;
    ok = ok && in->t;
    size_t opened = 0;
    for (size_t i = 0; ok && i < in->na; i++) {
        struct tl_path_task *t = &in->t[task_of[i]];
        if (task_of[i] == opened) task_open(t, &in->a[i]), opened++;
        fold(t, &in->a[i]);
    }
    free(task_of);
    return ok;
}

/* The edges stated apart (in->late) joined to their dependents' lists:
 * each task's dependencies stay one run of in->dep, its own first. */
static bool merge_late(struct tl_path_input *in, const struct tl_map64 *by_key)
{
    size_t *at = calloc(in->n + 1, sizeof *at);
    uint32_t *to = malloc((in->nlate / 2 + 1) * sizeof *to);
    uint64_t *dep = malloc((in->ndep + in->nlate / 2 + 1) * sizeof *dep);
    bool ok = at && to && dep;
    for (size_t e = 0; ok && e < in->nlate / 2; e++) {
        const uint64_t *t = tl_map64_get(by_key, in->late[2 * e]);
        to[e] = t ? (uint32_t)(*t - 1) : TL_PATH_NONE;
        if (t) at[*t - 1]++;
        else in->unresolved++; /* the dependent is not a finished task */
    }
    for (size_t i = 0, o = 0; ok && i < in->n; i++) { /* at[i]: where task i's late edges go */
        struct tl_path_task *t = &in->t[i];
        if (t->ndeps) memcpy(dep + o, in->dep + t->dep_at, t->ndeps * sizeof *dep);
        size_t extra = at[i];
        t->flow_deps = extra > 0;
        t->dep_at = (uint32_t)o;
        at[i] = o + t->ndeps;
        t->ndeps += (uint32_t)extra;
        o += t->ndeps;
    }
    for (size_t e = 0; ok && e < in->nlate / 2; e++)
        if (to[e] != TL_PATH_NONE) dep[at[to[e]]++] = in->late[2 * e + 1];
    if (ok) {
        free(in->dep);
        in->dep = dep;
        in->ndep = in->capdep = 0;
        for (size_t i = 0; i < in->n; i++) in->ndep += in->t[i].ndeps;
        dep = NULL;
    }
    free(at);
    free(to);
    free(dep);
    free(in->late);
    in->late = NULL;
    return ok;
}

/* Dependency keys to task indices. */
static bool resolve(struct tl_path_input *in)
{
    if (!in->ndep && !in->nlate) return true;
    struct tl_map64 by_key = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < in->n; i++) {
        uint64_t key;
        if (task_key(in->t[i].wf, in->t[i].id, &key)) ok = tl_map64_put(&by_key, key, i + 1);
    }
    if (ok && in->nlate) ok = merge_late(in, &by_key);
    for (size_t i = 0; ok && i < in->ndep; i++) {
        uint64_t *at = tl_map64_get(&by_key, in->dep[i]);
        in->dep[i] = at ? *at - 1 : TL_PATH_NONE;
        in->unresolved += !at;
    }
    tl_map64_free(&by_key);
    return ok;
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

/* A slice a flow leads to (a kernel, from the runtime call that launched
 * it) was submitted by the slice the flow comes from: without a recorded
 * submission it counts as submitted when the last of those ended, so its
 * wait after that is queue (the kernel waiting for its stream), not deps.
 * A stage parent (Spark) says no such thing: the driver submits the next
 * stage when it chooses. */
static void submitted_by_flows(struct tl_path_input *in)
{
    for (size_t i = 0; i < in->n; i++) {
        struct tl_path_task *t = &in->t[i];
        if (!t->flow_deps || t->submit_recorded) continue;
        double ready = -INFINITY;
        for (uint32_t e = 0; e < t->ndeps; e++) {
            uint64_t d = in->dep[t->dep_at + e];
            if (d != TL_PATH_NONE && d != i && in->t[d].end > ready) ready = in->t[d].end;
        }
        if (!(ready < t->submit)) continue;
        t->submit = ready;
        if (t->attempts == 1) t->launch = ready;
    }
}

bool tl_path_done(struct tl_path_input *in)
{
    if (in->oom || !fold_all(in) || !resolve(in)) return !(in->oom = true);
    submitted_by_flows(in);
    free(in->a); /* folded: the tasks hold what the path needs */
    in->a = NULL;
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
    free(in->a);
    free(in->t);
    free(in->dep);
    free(in->late);
    tl_names_free(&in->cats);
    tl_names_free(&in->wfs);
    tl_names_free(&in->workers);
}
