/* Work Queue / TaskVine: checkpoints. */
#include "parsers/wq/wq_internal.h"

/* ---------------------------------------------------------------- checkpoint
 *
 * The state as bytes: counters, the partial line, every interned name in id
 * order (restoring them in order gives the same ids, so everything that
 * holds an id stays valid), the runs with their worker maps, and the open
 * tasks. Tasks and their measurements are written as the structs they are,
 * behind a layout signature: a checkpoint from a build whose structs differ
 * is refused as corrupt rather than misread. Free lists are not saved; the
 * restored tables are dense. */

#define WQ_SAVE_MAGIC "WQS2" /* 2: runs carry ended/quiet */

static void put_map(struct tl_buf *b, const struct tl_map64 *m)
{
    tl_put_varint(b, m->n);
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key != TL_MAP64_EMPTY) {
            tl_put_varint(b, m->slots[i].key);
            tl_put_varint(b, m->slots[i].val);
        }
}

static bool get_map(const uint8_t **p, const uint8_t *end, struct tl_map64 *m)
{
    uint64_t n, k, v;
    if (!tl_get_varint(p, end, &n) || n > (uint64_t)(end - *p) / 2) return false;
    for (uint64_t i = 0; i < n; i++)
        if (!tl_get_varint(p, end, &k) || !tl_get_varint(p, end, &v) || k == TL_MAP64_EMPTY ||
            !tl_map64_put(m, k, v))
            return false;
    return true;
}

/* Keys below kmax and values below vmax (UINT64_MAX: anything). */
static bool map_within(const struct tl_map64 *m, uint64_t kmax, uint64_t vmax)
{
    for (size_t i = 0; i < m->cap; i++) {
        const struct tl_map64_slot *sl = &m->slots[i];
        if (sl->key == TL_MAP64_EMPTY) continue;
        if ((kmax != UINT64_MAX && sl->key >= kmax) || (vmax != UINT64_MAX && sl->val >= vmax))
            return false;
    }
    return true;
}

static uint64_t wq_layout(void)
{
    return (uint64_t)sizeof(struct task) << 32 | (uint64_t)sizeof(struct measured) << 16 |
           (uint64_t)(WQ_NMETRICS << 8 | WQC_COUNT);
}

/* A state saved when the record had fewer metrics (new ones are appended to
 * TL_METRICS, so the old ones keep their index and presence bit): the same
 * task and counters, and a `struct measured` whose value array was shorter
 * by whole doubles. *old_metrics: how many it had. */
static bool wq_layout_older(uint64_t u, unsigned *old_metrics)
{
    uint64_t task = u >> 32, meas = (u >> 16) & 0xffff, m = (u >> 8) & 0xff, c = u & 0xff;
    if (task != sizeof(struct task) || c != WQC_COUNT || m >= WQ_NMETRICS || !m) return false;
    if (meas != sizeof(struct measured) - (WQ_NMETRICS - m) * sizeof(double)) return false;
    *old_metrics = (unsigned)m;
    return true;
}

/* A saved `struct measured` of an older layout into m: its values, then the
 * fields after the array, which keep their layout. */
static void measured_from_older(struct measured *m, const uint8_t *p, unsigned old_metrics)
{
    size_t head = offsetof(struct measured, v) + old_metrics * sizeof(double);
    size_t tail = sizeof *m - offsetof(struct measured, worker_start);
    memset(m, 0, sizeof *m);
    memcpy(m, p, head);
    memcpy((char *)m + offsetof(struct measured, worker_start), p + head, tail);
}

enum tl_err wq_save(const void *state, struct tl_buf *b)
{
    const struct wq_state *st = state;
    tl_buf_append(b, WQ_SAVE_MAGIC, 4);
    tl_put_varint(b, wq_layout());
    tl_parse_stats_put(b, &st->stats);
    for (int i = 0; i < WQC_COUNT; i++) tl_put_varint(b, st->counters[i]);
    tl_put_varint(b, st->partial.len);
    tl_buf_append(b, st->partial.data, st->partial.len);
    tl_put_u8(b, (uint8_t)(st->skipping | st->family_ab << 1));
    size_t nnames = tl_intern_count(st->names);
    tl_put_varint(b, nnames);
    for (size_t i = 0; i < nnames; i++) {
        size_t n = tl_intern_len(st->names, (int32_t)i);
        tl_put_varint(b, n);
        tl_buf_append(b, tl_intern_str(st->names, (int32_t)i), n);
    }
    tl_put_varint(b, st->nruns);
    for (size_t i = 0; i < st->nruns; i++) {
        const struct run *r = &st->runs[i];
        tl_put_varint(b, tl_zigzag(r->pid));
        tl_put_varint(b, tl_zigzag(r->start_us));
        tl_put_varint(b, (uint64_t)r->workflow);
        for (int k = 0; k < 4; k++) tl_put_varint(b, tl_zigzag(r->by_state[k]));
        tl_put_varint(b, r->done);
        tl_put_varint(b, r->failed);
        tl_put_varint(b, tl_zigzag(r->workers));
        tl_put_f64(b, r->cores);
        tl_put_varint(b, tl_zigzag(r->last_emit_sec));
        tl_put_u8(b, (uint8_t)(r->ended | r->quiet << 1));
        put_map(b, &r->addr_to_worker);
        put_map(b, &r->worker_to_addr);
        put_map(b, &r->worker_cores);
    }
    put_map(b, &st->pid_to_run);
    put_map(b, &st->host_of);
    tl_put_varint(b, st->open.n);
    for (size_t i = 0; i < st->open.cap; i++) {
        if (st->open.slots[i].key == TL_MAP64_EMPTY) continue;
        const struct task *t = &st->tasks[st->open.slots[i].val];
        tl_buf_append(b, t, sizeof *t);
        if (t->measured) tl_buf_append(b, &st->meas[t->measured - 1], sizeof(struct measured));
    }
    for (size_t i = 0; i < 64; i++) tl_put_varint(b, st->recent_closed[i]);
    tl_put_varint(b, st->recent_next);
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

static bool get_i64(const uint8_t **p, const uint8_t *end, int64_t *x)
{
    uint64_t u;
    if (!tl_get_varint(p, end, &u)) return false;
    *x = tl_unzigzag(u);
    return true;
}

/* The runs, with their worker maps. */
static enum tl_err restore_runs(struct wq_state *st, const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp;
    uint64_t n;
    if (!tl_get_varint(&p, end, &n) || n > (uint64_t)(end - p)) return TL_ERR_CORRUPT;
    if (n) {
        st->runs = calloc((size_t)n, sizeof *st->runs);
        if (!st->runs) return TL_ERR_NOMEM;
        st->cap_runs = (size_t)n;
    }
    for (uint64_t i = 0; i < n; i++) {
        struct run *r = &st->runs[i];
        st->nruns = (size_t)i + 1; /* so close frees the maps of a partial restore */
        uint64_t wf;
        if (!get_i64(&p, end, &r->pid) || !get_i64(&p, end, &r->start_us) ||
            !tl_get_varint(&p, end, &wf) || wf >= tl_intern_count(st->names))
            return TL_ERR_CORRUPT;
        r->workflow = (int32_t)wf;
        for (int k = 0; k < 4; k++)
            if (!get_i64(&p, end, &r->by_state[k])) return TL_ERR_CORRUPT;
        uint8_t rflags;
        if (!tl_get_varint(&p, end, &r->done) || !tl_get_varint(&p, end, &r->failed) ||
            !get_i64(&p, end, &r->workers) || !tl_get_f64(&p, end, &r->cores) ||
            !get_i64(&p, end, &r->last_emit_sec) || !tl_get_u8(&p, end, &rflags) || rflags > 3 ||
            !get_map(&p, end, &r->addr_to_worker) || !get_map(&p, end, &r->worker_to_addr) ||
            !get_map(&p, end, &r->worker_cores))
            return TL_ERR_CORRUPT;
        r->ended = rflags & 1;
        r->quiet = rflags >> 1;
    }
    *pp = p;
    return TL_OK;
}

/* Every index and name id of the maps points inside what was restored. */
static bool maps_within(const struct wq_state *st)
{
    uint64_t nnames = tl_intern_count(st->names);
    if (!map_within(&st->pid_to_run, UINT64_MAX, st->nruns) ||
        !map_within(&st->host_of, nnames, nnames))
        return false;
    for (size_t i = 0; i < st->nruns; i++) {
        const struct run *r = &st->runs[i];
        if (!map_within(&r->addr_to_worker, nnames, nnames) ||
            !map_within(&r->worker_to_addr, nnames, nnames) ||
            !map_within(&r->worker_cores, nnames, UINT64_MAX))
            return false;
    }
    return true;
}

/* The open tasks, each with its measurements (in an older layout: fewer
 * metrics, translated). */
static enum tl_err restore_tasks(struct wq_state *st, const uint8_t **pp, const uint8_t *end,
                                 unsigned old_metrics)
{
    const uint8_t *p = *pp;
    size_t meas_size = sizeof(struct measured) - (WQ_NMETRICS - old_metrics) * sizeof(double);
    uint64_t n;
    if (!tl_get_varint(&p, end, &n) || n > (uint64_t)(end - p) / sizeof(struct task) ||
        (long long)n > st->cfg.max_open_tasks)
        return TL_ERR_CORRUPT;
    for (uint64_t i = 0; i < n; i++) {
        struct task t;
        if ((size_t)(end - p) < sizeof t) return TL_ERR_CORRUPT;
        memcpy(&t, p, sizeof t);
        p += sizeof t;
        int32_t names = (int32_t)tl_intern_count(st->names);
        if (t.run >= st->nruns || t.state > ST_RETRIEVED || t.category >= names ||
            t.worker >= names || t.host >= names || t.result >= names)
            return TL_ERR_CORRUPT;
        /* task_new counts the task as WAITING: the saved counts already hold it */
        struct task *nt = wq_task_new(st, t.run, t.id);
        if (!nt) return TL_ERR_CORRUPT;
        st->runs[t.run].by_state[ST_WAITING]--;
        bool has_meas = t.measured != 0;
        t.measured = 0;
        t.next_free = 0;
        *nt = t;
        if (has_meas) {
            if ((size_t)(end - p) < meas_size) return TL_ERR_CORRUPT;
            struct measured *m = wq_measured_get(st, nt);
            if (!m) return TL_ERR_NOMEM;
            measured_from_older(m, p, old_metrics);
            m->next_free = 0;
            p += meas_size;
        }
    }
    *pp = p;
    return TL_OK;
}

enum tl_err wq_restore(void *state, const uint8_t *p, size_t len)
{
    struct wq_state *st = state;
    const uint8_t *end = p + len;
    uint64_t u, n;
    if (len < 4 || memcmp(p, WQ_SAVE_MAGIC, 4)) return TL_ERR_CORRUPT;
    p += 4;
    unsigned old_metrics = WQ_NMETRICS;
    if (!tl_get_varint(&p, end, &u) || (u != wq_layout() && !wq_layout_older(u, &old_metrics)))
        return TL_ERR_CORRUPT;
    if (!tl_parse_stats_get(&p, end, &st->stats)) return TL_ERR_CORRUPT;
    for (int i = 0; i < WQC_COUNT; i++)
        if (!tl_get_varint(&p, end, &st->counters[i])) return TL_ERR_CORRUPT;
    if (!tl_get_varint(&p, end, &n) || n > (uint64_t)(end - p) || n > st->cfg.max_line)
        return TL_ERR_CORRUPT;
    st->partial.len = 0;
    tl_buf_append(&st->partial, p, (size_t)n);
    p += n;
    uint8_t flags;
    if (!tl_get_u8(&p, end, &flags)) return TL_ERR_CORRUPT;
    st->skipping = flags & 1;
    st->family_ab = (flags >> 1) & 1;
    if (!tl_get_varint(&p, end, &n)) return TL_ERR_CORRUPT;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t sl;
        if (!tl_get_str(&p, end, SIZE_MAX, &s, &sl) ||
            tl_intern(st->names, s, sl) != (int32_t)i)
            return TL_ERR_CORRUPT; /* over max_names, or a duplicate */
    }
    enum tl_err rc = restore_runs(st, &p, end);
    if (rc) return rc;
    if (!get_map(&p, end, &st->pid_to_run) || !get_map(&p, end, &st->host_of) || !maps_within(st))
        return TL_ERR_CORRUPT;
    if ((rc = restore_tasks(st, &p, end, old_metrics))) return rc;
    for (size_t i = 0; i < 64; i++)
        if (!tl_get_varint(&p, end, &st->recent_closed[i])) return TL_ERR_CORRUPT;
    if (!tl_get_varint(&p, end, &u)) return TL_ERR_CORRUPT;
    st->recent_next = (unsigned)u;
    st->last_run = 0;
    st->last_result = -1;
    return p == end ? TL_OK : TL_ERR_CORRUPT;
}
