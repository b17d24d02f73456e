/* Chrome trace events: what each means. Durations (X, and B/E pairs per
 * thread), samples (C counters, i/I instants with numeric args), metadata
 * (M: process and thread names), and the records they make. */
#include "parsers/chrome/chrome_internal.h"

/* ---------------------------------------------------------------- errors */

void chrome_reject(struct chrome_state *st, uint64_t line, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, line, why, detail);
}

/* ---------------------------------------------------------------- names and threads */

static bool ids_grow(struct chrome_state *st, int32_t id)
{
    if ((size_t)id < st->nids) return true;
    size_t n = st->nids ? st->nids : 64;
    while (n <= (size_t)id) n *= 2;
    int32_t *pn = realloc(st->proc_name, n * sizeof *pn);
    if (!pn) return false;
    st->proc_name = pn;
    int32_t *tn = realloc(st->thread_name, n * sizeof *tn);
    if (!tn) return false;
    st->thread_name = tn;
    struct thread *th = realloc(st->threads, n * sizeof *th);
    if (!th) return false;
    st->threads = th;
    for (size_t i = st->nids; i < n; i++) {
        pn[i] = tn[i] = -1;
        th[i] = (struct thread){0};
    }
    st->nids = n;
    return true;
}

/* The key text of a pid, or of a (pid, tid) pair: each part its type and
 * length before its text, so no byte of a name can stand for another part
 * (texts past 511 bytes are refused before, names_too_long). */
static size_t ident_key(char *out, size_t cap, const struct ident *pid, const struct ident *tid)
{
    size_t o = 0;
    const struct ident *parts[2] = {pid, tid};
    for (int k = 0; k < (tid ? 2 : 1); k++) {
        const struct ident *id = parts[k];
        if (k && id->type == 0) id = pid; /* a missing tid is the pid (Perfetto) */
        if (o + 4 >= cap) break;
        size_t n = id->text.set ? id->text.n : 0;
        if (n > cap - o - 4) n = cap - o - 4;
        out[o++] = id->type ? id->type : 'n';
        out[o++] = (char)(n >> 8);
        out[o++] = (char)(n & 0xff);
        if (n) memcpy(out + o, id->text.s, n);
        o += n;
    }
    return o;
}

static int32_t key_id(struct chrome_state *st, const struct ident *pid, const struct ident *tid,
                      bool insert)
{
    char k[600];
    size_t n = ident_key(k, sizeof k, pid, tid);
    int32_t id = insert ? tl_intern(st->names, k, n) : tl_intern_find(st->names, k, n);
    if (id >= 0 && !ids_grow(st, id)) return -1;
    return id;
}

static const char *host_of(struct chrome_state *st, const struct event *ev)
{
    int32_t id = key_id(st, &ev->pid, NULL, false);
    if (id >= 0 && st->proc_name[id] >= 0) return tl_intern_str(st->names, st->proc_name[id]);
    if (ev->pid.type == 's' && ev->pid.text.n) /* DASF and Ray write host names as pids */
        return chrome_decode(ev->pid.text.s, ev->pid.text.n, ev->pid.text.esc, st->host_buf,
                      sizeof st->host_buf);
    return NULL;
}

static const char *worker_of(struct chrome_state *st, const struct event *ev)
{
    int32_t id = key_id(st, &ev->pid, &ev->tid, false);
    if (id >= 0 && st->thread_name[id] >= 0) return tl_intern_str(st->names, st->thread_name[id]);
    if (ev->tid.type == 's' && ev->tid.text.n)
        return chrome_decode(ev->tid.text.s, ev->tid.text.n, ev->tid.text.esc, st->worker_buf,
                      sizeof st->worker_buf);
    return NULL;
}

/* ---------------------------------------------------------------- records */

/* host_of and worker_of, through the cache in st->who. */
static void who_of(struct chrome_state *st, const struct event *ev, const char **host, const char **worker)
{
    char k[600];
    size_t n = ident_key(k, sizeof k, &ev->pid, &ev->tid);
    bool fits = n <= sizeof st->who[0].key;
    if (fits)
        for (int i = 0; i < st->who_n; i++) {
            const struct who *w = &st->who[i];
            if (w->n == n && !memcmp(w->key, k, n)) {
                *host = w->host;
                *worker = w->worker;
                return;
            }
        }
    *host = host_of(st, ev);
    *worker = worker_of(st, ev);
    if (!fits || *host == st->host_buf || *worker == st->worker_buf) return;
    struct who *w = &st->who[st->who_next];
    st->who_next = (st->who_next + 1) % 4;
    if (st->who_n < 4) st->who_n++;
    memcpy(w->key, k, n);
    w->n = n;
    w->host = *host;
    w->worker = *worker;
}

static void base_record(struct chrome_state *st, struct tl_record *r, enum tl_record_kind kind,
                        const struct event *ev)
{
    tl_record_init(r, kind);
    r->source = "chrome";
    r->workflow = st->workflow;
    who_of(st, ev, &r->host, &r->worker);
    r->line = st->ev_line;
}

static const char *category_of(struct chrome_state *st, const struct span *name, const struct span *cat)
{
    const struct span *s = st->by_cat ? cat : name;
    if (!s->set) return st->by_cat ? "(no cat)" : "(no name)";
    return chrome_decode(s->s, s->n, s->esc, st->cat_buf, sizeof st->cat_buf);
}

static void emit_duration(struct chrome_state *st, const struct event *ev, const char *category,
                          int64_t start_ns, int64_t dur_ns, uint64_t ordinal)
{
    struct tl_record r;
    base_record(st, &r, TL_REC_TASK, ev);
    r.category = category;
    r.task_id = (int64_t)ordinal;
    r.attempt = 1;
    r.final = true;
    r.time_ns = start_ns + dur_ns;
    r.start_ns = start_ns;
    tl_record_set(&r, TL_M_WALL_TIME_S, (double)dur_ns / 1e9);
    st->counters[CC_DURATIONS]++;
    st->stats.records++;
    st->emit.record(st->emit.ctx, &r);
}

static void do_complete(struct chrome_state *st, const struct event *ev)
{
    if (ev->has_ts && !ev->has_dur && !ev->bad_dur) {
        /* Chrome writes the slice still running when tracing stopped
         * without a dur: an open task, not bad data */
        struct tl_record r;
        base_record(st, &r, TL_REC_TASK_OPEN, ev);
        r.category = category_of(st, &ev->name, &ev->cat);
        r.state = "open";
        r.task_id = (int64_t)st->ordinal;
        r.attempt = 1;
        r.time_ns = ev->ts;
        st->counters[CC_OPEN_AT_END]++;
        st->stats.records++;
        st->emit.record(st->emit.ctx, &r);
        return;
    }
    if (!ev->has_ts || !ev->has_dur) {
        chrome_reject(st, st->ev_line, TL_REJ_BAD_FIELDS,
               ev->bad_ts || ev->bad_dur ? "X event with a ts or dur that is not a number"
                                         : "X event without ts");
        return;
    }
    if (ev->dur < 0) {
        chrome_reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "X event with a negative dur");
        return;
    }
    if (ev->ts > INT64_MAX - ev->dur) {
        chrome_reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "X event ending beyond int64 ns");
        return;
    }
    emit_duration(st, ev, category_of(st, &ev->name, &ev->cat), ev->ts, ev->dur, st->ordinal);
    if (st->flows.on) { /* the callers test `on`: a call an event cost 0.1 % of the Kineto summary */
        chrome_flows_slice(st, ev, ev->ts, ev->ts + ev->dur, st->ordinal);
        chrome_flows_v2(st, ev, ev->ts, st->ordinal);
    }
}

static void do_begin(struct chrome_state *st, const struct event *ev)
{
    if (!ev->has_ts) {
        chrome_reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "B event without a numeric ts");
        return;
    }
    if (st->open_total >= st->cfg.max_open) {
        chrome_reject(st, st->ev_line, TL_REJ_LIMIT, "max_open B events reached");
        return;
    }
    int32_t tid = key_id(st, &ev->pid, &ev->tid, true);
    const char *cat = category_of(st, &ev->name, &ev->cat);
    int32_t name = tl_intern(st->names, cat, strlen(cat));
    if (tid < 0 || name < 0) {
        chrome_reject(st, st->ev_line, TL_REJ_LIMIT, "max_names reached");
        return;
    }
    struct thread *t = &st->threads[tid];
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 8;
        struct open_b *v = realloc(t->v, cap * sizeof *v);
        if (!v) {
            chrome_reject(st, st->ev_line, TL_REJ_LIMIT, "out of memory for open B events");
            return;
        }
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (struct open_b){name, ev->ts, st->ev_line, st->ordinal};
    st->open_total++;
    if (st->flows.on) chrome_flows_v2(st, ev, ev->ts, st->ordinal);
}

static void do_end(struct chrome_state *st, const struct event *ev)
{
    int32_t tid = key_id(st, &ev->pid, &ev->tid, false);
    struct thread *t = tid >= 0 ? &st->threads[tid] : NULL;
    if (!t || !t->n) {
        st->counters[CC_UNMATCHED_END]++;
        return;
    }
    if (!ev->has_ts) {
        chrome_reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "E event without a numeric ts");
        return; /* the B stays open: a later E may close it */
    }
    struct open_b b = t->v[--t->n];
    st->open_total--;
    const char *name = tl_intern_str(st->names, b.name);
    if (ev->name.set && !st->by_cat) {
        /* catapult closes the open slice anyway ("titles do not match") */
        const char *en = chrome_decode(ev->name.s, ev->name.n, ev->name.esc, st->tmp, sizeof st->tmp);
        if (*en && strcmp(en, name)) st->counters[CC_NON_NESTED_END]++;
    }
    if (ev->ts < b.ts_ns) {
        chrome_reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "E event before its B");
        return;
    }
    emit_duration(st, ev, name, b.ts_ns, ev->ts - b.ts_ns, b.ordinal);
    if (st->flows.on) chrome_flows_slice(st, ev, b.ts_ns, ev->ts, b.ordinal);
}

/* Globs are mostly plain names or "prefix*": those skip fnmatch. */
static bool glob_match(const struct glob *g, const char *key, size_t keylen)
{
    if (g->lit && key[0] != g->s[0]) return false; /* the usual answer, at once */
    switch (g->kind) {
    case G_EXACT: return keylen == g->lit && !memcmp(g->s, key, keylen);
    case G_PREFIX: return keylen >= g->lit && !memcmp(g->s, key, g->lit);
    default: return !fnmatch(g->s, key, 0);
    }
}

static bool sample_key_wanted(const struct chrome_state *st, const char *key)
{
    if (st->all_args) return true;
    if (st->nglobs > 64) {
        size_t n = strlen(key);
        for (int i = 0; i < st->nglobs; i++)
            if (glob_match(&st->globs[i], key, n)) return true;
        return false;
    }
    uint64_t cand = st->glob_first[(unsigned char)key[0]];
    if (!cand) return false; /* the usual answer: no glob starts with this byte */
    size_t n = strlen(key);
    for (; cand; cand &= cand - 1)
        if (glob_match(&st->globs[__builtin_ctzll(cand)], key, n)) return true;
    return false;
}

/* One sample of the event into r: built on the event's first sample
 * (*ready false), then only the series and the value change. */
static void emit_sample(struct chrome_state *st, const struct event *ev, struct tl_record *r,
                        bool *ready, const char *series, double v)
{
    if (!*ready) {
        base_record(st, r, TL_REC_SAMPLE, ev);
        r->task_id = -1;
        r->time_ns = ev->ts;
        *ready = true;
    }
    r->category = series;
    tl_record_set(r, TL_M_SAMPLE_VALUE, v);
    if (__builtin_expect(tl_record_bad_values(r) != 0, 0)) { /* a number past the double range */
        chrome_reject(st, st->ev_line, TL_REJ_BAD_VALUE, series);
        return;
    }
    st->counters[CC_SAMPLES]++;
    st->stats.records++;
    st->emit.record(st->emit.ctx, r);
}

/* Walks args' top-level members: cb(key, value span, value is a string). */
typedef void (*arg_cb)(struct chrome_state *st, const struct event *ev, const char *key,
                       const char *v, size_t n, bool is_str, void *ctx);

static void each_arg(struct chrome_state *st, const struct event *ev, arg_cb cb, void *ctx)
{
    if (!ev->args.set) return;
    struct jp j = {ev->args.s, ev->args.s + ev->args.n, 0};
    ws(&j);
    if (j.p >= j.e || *j.p != '{') return; /* "__stripped__" and the like */
    j.p++;
    for (;;) {
        ws(&j);
        const char *k, *v;
        size_t kn, vn;
        bool kesc, vesc;
        if (!jstr(&j, &k, &kn, &kesc)) return;
        ws(&j);
        if (j.p >= j.e || *j.p != ':') return;
        j.p++;
        ws(&j);
        char key[256];
        chrome_decode(k, kn, kesc, key, sizeof key);
        if (j.p < j.e && *j.p == '"') {
            if (!jstr(&j, &v, &vn, &vesc)) return;
            cb(st, ev, key, v, vn, true, ctx);
        } else if (j.p < j.e && ((*j.p >= '0' && *j.p <= '9') || *j.p == '-')) {
            if (!jnum(&j, &v, &vn)) return;
            cb(st, ev, key, v, vn, false, ctx);
        } else if (!chrome_jskip(&j, 1)) {
            return;
        }
        ws(&j);
        if (j.p < j.e && *j.p == ',') {
            j.p++;
            continue;
        }
        return;
    }
}

struct series_ctx {
    const char *prefix; /* "name" or "name[id]" */
    const char *suffix; /* " (cuda:0)" or "" */
    size_t prefix_n, suffix_n;
    bool strings_ok; /* counters take numeric strings */
    bool rec_ready;  /* rec holds the event's host, worker and time */
    struct tl_record rec;
};

/* One sample: the series "prefix key suffix" and its value. */
static void emit_series(struct chrome_state *st, const struct event *ev, struct series_ctx *c,
                        const char *key, double d)
{
    size_t a = c->prefix_n, b = strlen(key), k = c->suffix_n;
    if (a + b + k + 2 > sizeof st->series) return;
    char *o = st->series;
    memcpy(o, c->prefix, a);
    o[a] = ' ';
    memcpy(o + a + 1, key, b);
    memcpy(o + a + 1 + b, c->suffix, k + 1);
    emit_sample(st, ev, &c->rec, &c->rec_ready, st->series, d);
}

/* Whether an arg is a sample: counters take every number and numeric
 * string; instant events the numbers whose key a sample_args glob takes. */
static bool sample_value(struct chrome_state *st, bool counter, const char *key, const char *v,
                         size_t n, bool is_str, double *d)
{
    if (is_str && !counter) return false;
    if (!counter && !sample_key_wanted(st, key)) return false;
    return chrome_to_double(v, n, d);
}

static void series_sample(struct chrome_state *st, const struct event *ev, const char *key,
                          const char *v, size_t n, bool is_str, void *vctx)
{
    struct series_ctx *c = vctx;
    double d;
    if (sample_value(st, c->strings_ok, key, v, n, is_str, &d)) emit_series(st, ev, c, key, d);
}

/* One walk of args gathers what an instant or counter event holds: the
 * device of a PyTorch [memory] event (CPU and every GPU share one stream,
 * so the device goes into the series name, or their distributions would
 * be mixed) and the samples, up to max of them; past that `overflow`,
 * and the samples are taken in a second walk. */
struct sample {
    char key[256];
    double v;
};

struct gather {
    bool counter;
    long long device_type, device_id;
    bool has_type, has_id;
    struct sample *s;
    int n, max;
    bool overflow;
};

static void gather_one(struct chrome_state *st, const struct event *ev, const char *key,
                       const char *v, size_t n, bool is_str, void *vctx)
{
    (void)ev;
    struct gather *g = vctx;
    double d;
    /* the key first: of the seven args of a [memory] event two name the device */
    if (!g->counter && !is_str && key[0] == 'D') {
        bool type = !strcmp(key, "Device Type");
        if ((type || !strcmp(key, "Device Id")) && chrome_to_double(v, n, &d) && fabs(d) < 1e18) {
            if (type) {
                g->device_type = (long long)d;
                g->has_type = true;
            } else {
                g->device_id = (long long)d;
                g->has_id = true;
            }
        }
    }
    if (g->overflow || !sample_value(st, g->counter, key, v, n, is_str, &d)) return;
    if (g->n == g->max) {
        g->overflow = true;
        return;
    }
    struct sample *x = &g->s[g->n++];
    size_t kn = strlen(key); /* below 256: chrome_decode() cut it */
    memcpy(x->key, key, kn + 1);
    x->v = d;
}

static void do_samples(struct chrome_state *st, const struct event *ev, bool counter)
{
    if (!ev->has_ts) {
        chrome_reject(st, st->ev_line, TL_REJ_BAD_FIELDS,
               counter ? "C event without a numeric ts" : "instant event without a numeric ts");
        return;
    }
    char prefix[4096 + 600], suffix[64] = "";
    const char *name = ev->name.set ? chrome_decode(ev->name.s, ev->name.n, ev->name.esc, st->cat_buf,
                                             sizeof st->cat_buf)
                                    : "(no name)";
    size_t np = strlen(name); /* chrome_decode() keeps it below sizeof st->cat_buf */
    memcpy(prefix, name, np + 1);
    if (counter && ev->id.set) {
        char id[512];
        snprintf(prefix + np, sizeof prefix - np, "[%s]",
                 chrome_decode(ev->id.s, ev->id.n, ev->id.esc, id, sizeof id));
    }
    struct sample samples[32];
    struct gather g = {.counter = counter, .s = samples, .max = 32};
    each_arg(st, ev, gather_one, &g);
    if (!counter && g.has_type) {
        /* " (cpu)", " (cuda:ID)", " (device TYPE:ID)": once per event, no printf */
        char *p = suffix;
        if (g.device_type == 0) {
            memcpy(p, " (cpu)", 7);
        } else {
            if (g.device_type == 1) {
                memcpy(p, " (cuda:", 7);
                p += 7;
            } else {
                memcpy(p, " (device ", 9);
                p += 9;
                p += tl_fmt_i64(p, g.device_type);
                *p++ = ':';
            }
            p += tl_fmt_i64(p, g.has_id ? g.device_id : 0);
            memcpy(p, ")", 2);
        }
    }
    struct series_ctx c = {.prefix = prefix, .suffix = suffix, .prefix_n = strlen(prefix),
                           .suffix_n = strlen(suffix), .strings_ok = counter};
    if (g.overflow) { /* more than 32 samples: all of them from a second walk */
        each_arg(st, ev, series_sample, &c);
        return;
    }
    for (int i = 0; i < g.n; i++) emit_series(st, ev, &c, samples[i].key, samples[i].v);
}

struct meta_ctx {
    struct span name;
};

static void meta_name(struct chrome_state *st, const struct event *ev, const char *key,
                      const char *v, size_t n, bool is_str, void *vctx)
{
    (void)st;
    (void)ev;
    struct meta_ctx *c = vctx;
    if (is_str && !strcmp(key, "name")) c->name = (struct span){v, n, false, true};
}

static void do_metadata(struct chrome_state *st, const struct event *ev)
{
    if (!ev->name.set || ev->name.esc) return;
    bool proc = KEY_IS(ev->name.s, ev->name.n, "process_name");
    bool thread = KEY_IS(ev->name.s, ev->name.n, "thread_name");
    if (!proc && !thread) return;
    struct meta_ctx c = {{0}};
    each_arg(st, ev, meta_name, &c);
    if (!c.name.set) return;
    /* the raw text may hold escapes: decode it (meta_name cannot tell) */
    bool esc = memchr(c.name.s, '\\', c.name.n) != NULL;
    const char *text = chrome_decode(c.name.s, c.name.n, esc, st->tmp, sizeof st->tmp);
    int32_t key = key_id(st, &ev->pid, proc ? NULL : &ev->tid, true);
    int32_t name = tl_intern(st->names, text, strlen(text));
    if (key < 0 || name < 0) {
        chrome_reject(st, st->ev_line, TL_REJ_LIMIT, "max_names reached");
        return;
    }
    if (proc) st->proc_name[key] = name;
    else st->thread_name[key] = name;
    st->who_n = st->who_next = 0; /* a host or worker may have a new name */
}

static void count_phase(struct chrome_state *st, char ph)
{
    const char *at = ph ? memchr(phase_letters, ph, NPHASE) : NULL;
    st->counters[at ? at - phase_letters : CC_OTHER_PHASE]++;
}

/* Whether a name the event's records would carry is longer than the
 * buffers that hold it (4,095 bytes of JSON text for a name or cat, 511 for
 * a pid or tid written as a string): such an event is refused, never read
 * with its name cut, where two long names would become one category. */
static bool names_too_long(const struct chrome_state *st, const struct event *ev)
{
    const struct span *s = st->by_cat ? &ev->cat : &ev->name;
    return (s->set && s->n >= sizeof st->cat_buf) || (ev->name.set && ev->name.n >= sizeof st->cat_buf) ||
           (ev->pid.type == 's' && ev->pid.text.n >= sizeof st->host_buf) ||
           (ev->tid.type == 's' && ev->tid.text.n >= sizeof st->worker_buf);
}

/* The phases whose names become record tags (strchr on a literal cost 20
 * instructions an event, 0.26 % of the Kineto trace's summary). */
static inline bool names_kept(char ph)
{
    switch (ph) {
    case 'X': case 'B': case 'E': case 'i': case 'I': case 'C': return true;
    default: return false;
    }
}

/* One parsed event (by pointer: a copy of it cost 7 instructions an event
 * on the Kineto trace, callgrind). */
void chrome_handle_event(struct chrome_state *st, const struct event *ev)
{
    st->stats.lines++;
    if (!ev->nkeys) {
        st->counters[CC_EMPTY]++; /* JAX/XLA end traceEvents with {} */
        return;
    }
    st->ordinal++;
    if (!ev->has_ph) {
        st->counters[CC_NO_PH]++;
        chrome_reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "event without ph");
        return;
    }
    count_phase(st, ev->ph);
    if (names_kept(ev->ph) && names_too_long(st, ev)) {
        chrome_reject(st, st->ev_line, TL_REJ_LIMIT, "a name, cat, pid or tid past its length limit "
                                                     "(4,095 bytes; 511 for pid and tid)");
        return;
    }
    switch (ev->ph) {
    case 'X': do_complete(st, ev); break;
    case 'B': do_begin(st, ev); break;
    case 'E': do_end(st, ev); break;
    case 'i':
    case 'I': do_samples(st, ev, false); break;
    case 'C': do_samples(st, ev, true); break;
    case 'M': do_metadata(st, ev); break;
    case 's':
    case 't':
    case 'f':
        if (st->flows.on) chrome_flows_point(st, ev);
        break;
    default: break; /* counted above */
    }
}
