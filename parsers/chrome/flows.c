/* Chrome flow events: the dependencies a trace states between its slices.
 *
 * A flow is a chain of points with one id -- `s` (start), `t` (steps), `f`
 * (finish), matched by (cat, name, id) and ordered by time, as the trace
 * viewers match them (Kineto writes each `f` before its `s`). Each point
 * binds to a slice on its own thread: `s` and `t` to the innermost slice
 * around their ts, `f` to the next slice that starts at or after its ts,
 * or, with "bp": "e", to the one around it. v2 flows name the slice
 * directly: an X or B event with `bind_id` and `flow_out` starts a flow,
 * with `flow_in` ends one. A point's slice depends on the previous point's
 * slice: the kernel on the launch that queued it, the next step of a
 * command buffer on the last.
 *
 * A point binds only once every slice is known (the slice around it may
 * come later in the file), so this is the one part of the parser that holds
 * the input: 32 bytes a slice, 40 a flow point, and only when the consumer
 * asks for edges (tl_emit_wants_edges: `path`, `report`). At the input's
 * end the edges leave as TL_REC_EDGE records, one per dependent slice. A
 * point that binds to no slice passes its flow on from the point before it;
 * an `f` or `t` with no earlier point in the trace makes no edge (its start
 * lies before the trace began). */
#include "parsers/chrome/chrome_internal.h"

struct edge {
    uint64_t to, from;
};

static void flows_free(struct chrome_flows *f)
{
    free(f->s);
    free(f->p);
    f->s = NULL;
    f->p = NULL;
    f->ns = f->caps = f->np = f->capp = 0;
}

/* Out of memory, or past max_flow_bytes: no edges from this input, said once. */
static void give_up(struct chrome_state *st, const char *why)
{
    flows_free(&st->flows);
    st->flows.on = false;
    chrome_reject(st, st->ev_line, TL_REJ_LIMIT, why);
}

#define NO_MEMORY "out of memory for flow events: the trace's dependencies are left out"
#define OVER_LIMIT "flow events need more than chrome.max_flow_bytes: the trace's dependencies are left out"

/* Room for one more of n (size bytes each) in *v; false, with the reason,
 * when memory or max_flow_bytes runs out. The arrays of both kinds count. */
static bool grow(struct chrome_state *st, void **v, size_t *cap, size_t n, size_t size, const char **why)
{
    if (n < *cap) return true;
    const struct chrome_flows *f = &st->flows;
    size_t c = *cap ? *cap * 2 : 1024;
    size_t held = f->caps * sizeof *f->s + f->capp * sizeof *f->p - *cap * size;
    if (held + c * size > st->cfg.max_flow_bytes) {
        *why = OVER_LIMIT;
        return false;
    }
    *why = NO_MEMORY;
    void *q = realloc(*v, c * size);
    if (!q) return false;
    *v = q;
    *cap = c;
    return true;
}

bool chrome_flows_open(struct chrome_state *st)
{
    st->flows.on = tl_emit_wants_edges(&st->emit);
    if (!st->flows.on) return true;
    st->flows.ids = tl_intern_new(st->cfg.max_names);
    return st->flows.ids != NULL;
}

void chrome_flows_close(struct chrome_state *st)
{
    flows_free(&st->flows);
    tl_intern_free(st->flows.ids);
    tl_buf_free(&st->flows.depends);
}

/* A part of a thread's identity as the trace viewers key it: the number
 * 25738 and the string "25738" are one thread (Kineto writes a slice's tid
 * as a string and its flow's as a number). */
static size_t thread_part(char *o, const struct ident *id)
{
    size_t n = id->text.set ? id->text.n : 0;
    bool digits = id->type == 's' && n && n <= 20 && !id->text.esc;
    for (size_t i = 0; digits && i < n; i++) digits = id->text.s[i] >= '0' && id->text.s[i] <= '9';
    o[0] = digits ? 'i' : id->type ? id->type : 'n';
    if (n > 511) n = 511; /* longer ones are refused before (names_too_long) */
    memcpy(o + 1, &n, sizeof n);
    if (n) memcpy(o + 1 + sizeof n, id->text.s, n);
    return 1 + sizeof n + n;
}

/* The thread of (pid, tid), a missing tid being the pid's; -1 past max_names. */
static int32_t flow_thread(struct chrome_flows *f, const struct ident *pid, const struct ident *tid)
{
    char k[2 * (1 + sizeof(size_t) + 511) + 1];
    size_t o = 0;
    k[o++] = '3';
    o += thread_part(k + o, pid);
    o += thread_part(k + o, tid->type ? tid : pid);
    return tl_intern(f->ids, k, o);
}

void chrome_flows_slice(struct chrome_state *st, const struct event *ev, int64_t start, int64_t end, uint64_t ordinal)
{
    struct chrome_flows *f = &st->flows;
    int32_t thread = flow_thread(f, &ev->pid, &ev->tid);
    if (thread < 0) return;
    const char *why;
    if (!grow(st, (void **)&f->s, &f->caps, f->ns, sizeof *f->s, &why)) {
        give_up(st, why);
        return;
    }
    f->s[f->ns++] = (struct flow_slice){start, end, ordinal, thread};
}

static void add_point(struct chrome_state *st, struct flow_point pt)
{
    struct chrome_flows *f = &st->flows;
    const char *why;
    if (!grow(st, (void **)&f->p, &f->capp, f->np, sizeof *f->p, &why)) {
        give_up(st, why);
        return;
    }
    f->p[f->np++] = pt;
}

/* A flow's identity: a tag byte, then each part's length and text, so no
 * byte of one part can stand for another. -1: past max_names. */
static int32_t flow_id(struct chrome_flows *f, char tag, const struct span *const *parts, int n)
{
    char k[3 * 4096 + 64];
    size_t o = 0;
    k[o++] = tag;
    for (int i = 0; i < n; i++) {
        size_t len = parts[i]->set ? parts[i]->n : 0;
        if (len > 4096) return -1;
        memcpy(k + o, &len, sizeof len);
        o += sizeof len;
        if (len) memcpy(k + o, parts[i]->s, len);
        o += len;
    }
    return tl_intern(f->ids, k, o);
}

void chrome_flows_v2(struct chrome_state *st, const struct event *ev, int64_t start, uint64_t ordinal)
{
    if (!ev->flow_keys || !ev->bind_id.set || !(ev->flow_in || ev->flow_out)) return;
    const struct span *parts[] = {&ev->bind_id};
    int32_t id = flow_id(&st->flows, '2', parts, 1);
    if (id < 0) return;
    /* a slice that ends one flow and starts the next: in before out */
    if (ev->flow_in) add_point(st, (struct flow_point){start, ordinal * 2, ordinal, id, -1, 'f', true});
    if (ev->flow_out) add_point(st, (struct flow_point){start, ordinal * 2 + 1, ordinal, id, -1, 's', true});
}

void chrome_flows_point(struct chrome_state *st, const struct event *ev)
{
    if (!ev->has_ts || !ev->id.set) return;
    int32_t thread = flow_thread(&st->flows, &ev->pid, &ev->tid);
    if (thread < 0) return;
    const struct span *parts[] = {&ev->cat, &ev->name, &ev->id};
    int32_t id = flow_id(&st->flows, '1', parts, 3);
    if (id < 0) return;
    bool enclosing = ev->ph != 'f' || (ev->flow_keys && ev->bp.set && ev->bp.n == 1 && ev->bp.s[0] == 'e');
    add_point(st, (struct flow_point){ev->ts, st->ordinal * 2, 0, id, thread, ev->ph, enclosing});
}

/* ------------------------------------------------------------ binding */

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

/* Slices by thread, then start; at one start the longest first, so the
 * innermost of a nest comes last. */
static int cmp_slice(const void *a, const void *b)
{
    const struct flow_slice *x = a, *y = b;
    int c = CMP(x->thread, y->thread);
    if (!c) c = CMP(x->start, y->start);
    if (!c) c = CMP(y->end, x->end);
    return c ? c : CMP(x->ordinal, y->ordinal);
}

static int cmp_point_time(const void *a, const void *b)
{
    const struct flow_point *x = a, *y = b;
    int c = CMP(x->thread, y->thread);
    if (!c) c = CMP(x->ts, y->ts);
    return c ? c : CMP(x->seq, y->seq);
}

static int cmp_point_flow(const void *a, const void *b)
{
    const struct flow_point *x = a, *y = b;
    int c = CMP(x->flow, y->flow);
    if (!c) c = CMP(x->ts, y->ts);
    return c ? c : CMP(x->seq, y->seq);
}

static int cmp_edge(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    int c = CMP(x->to, y->to);
    return c ? c : CMP(x->from, y->from);
}

/* The first of s[lo, hi) that starts at or after ts. */
static size_t first_from(const struct flow_slice *s, size_t lo, size_t hi, int64_t ts)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].start < ts) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The points p[a, b) of one thread, in time order, against its slices
 * s[lo, hi): the slices that have begun are stacked, the innermost on top;
 * those over before a point are popped; the top is the slice around it. */
static void bind_thread(const struct flow_slice *s, size_t lo, size_t hi, struct flow_point *p, size_t a, size_t b,
                        size_t *stack)
{
    size_t top = 0, j = lo;
    for (size_t k = a; k < b; k++) {
        int64_t ts = p[k].ts;
        for (; j < hi && s[j].start <= ts; j++) {
            while (top && s[stack[top - 1]].end < s[j].start) top--;
            stack[top++] = j;
        }
        while (top && s[stack[top - 1]].end < ts) top--;
        if (p[k].enclosing) {
            p[k].slice = top ? s[stack[top - 1]].ordinal : 0;
        } else {
            size_t n = first_from(s, lo, hi, ts);
            p[k].slice = n < hi ? s[n].ordinal : 0;
        }
    }
}

/* Every point not bound yet (s/t/f) to its slice. */
static bool bind(struct chrome_flows *f)
{
    size_t *stack = malloc((f->ns + 1) * sizeof *stack);
    if (!stack) return false;
    if (f->ns) qsort(f->s, f->ns, sizeof *f->s, cmp_slice); /* qsort(NULL, 0, ...) is undefined */
    qsort(f->p, f->np, sizeof *f->p, cmp_point_time); /* v2's points (thread -1) first: bound already */
    size_t lo = 0;
    for (size_t a = 0; a < f->np;) {
        size_t b = a;
        int32_t th = f->p[a].thread;
        while (b < f->np && f->p[b].thread == th) b++;
        if (th >= 0) {
            while (lo < f->ns && f->s[lo].thread < th) lo++;
            size_t hi = lo;
            while (hi < f->ns && f->s[hi].thread == th) hi++;
            bind_thread(f->s, lo, hi, f->p, a, b, stack);
            lo = hi;
        }
        a = b;
    }
    free(stack);
    return true;
}

/* Each flow's points in time order, into edges (dependent, dependency). */
static struct edge *chain(struct chrome_flows *f, size_t *n)
{
    qsort(f->p, f->np, sizeof *f->p, cmp_point_flow);
    struct edge *e = malloc((f->np + 1) * sizeof *e);
    if (!e) return NULL;
    *n = 0;
    uint64_t prev = 0;
    for (size_t k = 0; k < f->np; k++) {
        const struct flow_point *pt = &f->p[k];
        if (!k || pt->flow != f->p[k - 1].flow) prev = 0;
        if (pt->ph == 's') {
            prev = pt->slice;
            continue;
        }
        if (pt->slice) { /* else bound to nothing: a step passes the flow on from prev */
            if (prev && prev != pt->slice) e[(*n)++] = (struct edge){pt->slice, prev};
            prev = pt->slice;
        }
        if (pt->ph == 'f') prev = 0;
    }
    if (*n) qsort(e, *n, sizeof *e, cmp_edge);
    return e;
}

/* One TL_REC_EDGE per dependent slice. Edges are relations, not records:
 * stats.records does not count them. */
static void emit_edges(struct chrome_state *st, const struct edge *e, size_t n)
{
    struct tl_buf *b = &st->flows.depends;
    for (size_t i = 0; i < n;) {
        b->len = 0;
        size_t j = i;
        for (; j < n && e[j].to == e[i].to; j++)
            if (j == i || e[j].from != e[j - 1].from)
                tl_buf_printf(b, "%s%llu", b->len ? "," : "", (unsigned long long)e[j].from);
        tl_buf_putc(b, '\0');
        if (!b->oom) {
            struct tl_record r;
            tl_record_init(&r, TL_REC_EDGE);
            r.source = "chrome";
            r.workflow = st->workflow;
            r.task_id = (int64_t)e[i].to;
            r.depends = (const char *)b->data;
            st->emit.record(st->emit.ctx, &r);
        }
        i = j;
    }
}

void chrome_flows_finish(struct chrome_state *st)
{
    struct chrome_flows *f = &st->flows;
    if (f->on && f->np) {
        size_t n = 0;
        struct edge *e = bind(f) ? chain(f, &n) : NULL;
        if (!e) give_up(st, NO_MEMORY);
        else emit_edges(st, e, n);
        free(e);
    }
    flows_free(f);
    f->on = f->ids && tl_emit_wants_edges(&st->emit); /* the next input starts afresh */
}
