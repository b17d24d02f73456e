/* DASF profiler traces: `<name>-TracePlugin-<host>.msgpack` (a Dask worker
 * plugin) and `<name>-ResourceMonitor-<host>.msgpack` (the client's system
 * monitor), as dasf-core writes them since 2023 (../shared/dasf/samples/
 * SOURCES.md has the format, confirmed from dasf's code).
 *
 * Framing: no header; per event an 8-byte big-endian length, then one
 * msgpack map (a Chrome-like event: name, timestamp, duration, phase,
 * process_id, thread_id, args). Decoded with msgpack-c, one event at a
 * time, in any split of the bytes; an event longer than max_event is
 * rejected with its byte offset and the reader looks for the next plausible
 * header (length within bounds, then a map); a last event cut short is
 * rejected as truncated. Never an allocation larger than max_event.
 *
 * Records:
 *   - every `Compute` (X) event is a task, as DASF counts them (Dask
 *     computes some keys many times): category = args.name, task_key =
 *     args.key (a string, or the key's parts joined), wall_time_s =
 *     duration, time = the event's timestamp (when the task reached
 *     memory: its END), host = process_id, worker = thread_id,
 *     output_bytes = args.size;
 *   - instant events (`Managed Memory`, `Resource Usage`, ...) are samples,
 *     one per numeric arg: series "<event name> <arg>" (args.time, the wall
 *     clock, is the anchor below, not a sample);
 *   - B/E, which DASF declares but never writes, follow the Chrome rule: an
 *     E closes the innermost open B of its process and thread.
 *
 * Time: DASF's timestamps are time.monotonic() seconds. The offset to the
 * epoch is `args.time - timestamp` of a Resource Usage event of the same
 * input; for a TracePlugin file, of the first one in its ResourceMonitor
 * sibling (same directory, same name and host: read once, at set_name --
 * the one place a parser opens or looks at a file). Without either, the
 * trace is placed as if its first event happened when the file was created
 * (its birth time, else its modification time): a property of the file, so
 * reading it again, or again after a restart, places every event at the
 * same instant and InfluxDB keeps one point per task. Only an input with
 * no file (stdin, Kafka) falls back to the time it is read. Either is said
 * in the input report (counter time_anchor_fallback): never 1970. */
#include "parsers/parser.h"

#include "core/bytes.h"
#include "core/intern.h"
#include "core/path.h"

#include <math.h>
#include <stdarg.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct dasf_config {
    size_t max_event;
    long long max_open;
    const char *clock;
};

static const struct tl_option dasf_options[] = {
    {"max_event", TL_OPT_SIZE, "1M", "largest single event (bytes; DASF writes ~300); a longer length is damage",
     offsetof(struct dasf_config, max_event)},
    {"max_open", TL_OPT_INT, "100000", "B events open at once (DASF writes none)",
     offsetof(struct dasf_config, max_open)},
    {"clock", TL_OPT_STRING, "epoch",
     "epoch (mapped as described) or monotonic: the timestamps as DASF wrote them, for DASF's own "
     "per-second views (summary --dasf-task-balance)",
     offsetof(struct dasf_config, clock)},
    {0},
};

enum {
    DC_COMPUTE, DC_INSTANT, DC_SAMPLES, DC_PH_B, DC_PH_E, DC_OTHER_PHASE, DC_NON_NESTED_END,
    DC_UNMATCHED_END, DC_OPEN, DC_SKIPPED_BYTES, DC_ANCHOR_OWN, DC_ANCHOR_SIBLING,
    DC_ANCHOR_FALLBACK, DC_OFFSET_S, DC_COUNT
};
static const char *const counter_names[DC_COUNT] = {
    "compute", "instant", "samples", "ph_B", "ph_E", "ph_other", "non_nested_end",
    "unmatched_end", "open", "skipped_bytes", "time_anchor_resource_usage",
    "time_anchor_sibling", "time_anchor_fallback", "time_offset_s",
};

struct open_b {
    int32_t who;   /* interned "process\0thread" */
    int32_t name;  /* interned event name */
    double ts;
    uint64_t line;
};

struct dasf_state {
    struct dasf_config cfg;
    struct tl_emit emit;
    struct tl_parse_stats stats;
    uint64_t counters[DC_COUNT];
    struct tl_buf pending; /* the event being assembled: header + body */
    uint64_t offset;       /* input bytes consumed before `pending` */
    bool resync;           /* after a bad length: looking for a header */
    struct tl_buf replay;  /* bytes to read again after a damaged event (within one feed) */
    double anchor;         /* epoch - monotonic */
    int anchor_kind;       /* 0 none, else DC_ANCHOR_* */
    double file_born_s;    /* the input file's birth (else modification) time; 0: no file */
    struct tl_intern *names;
    bool monotonic; /* clock=monotonic: DASF's own seconds, unmapped */
    char workflow[256];
    struct tl_buf scratch; /* NUL-terminated strings of the event at hand */
    struct open_b *open;
    size_t nopen, capopen;
};

/* ---------------------------------------------------------------- helpers */

__attribute__((format(printf, 3, 4))) static void reject(struct dasf_state *st, enum tl_reject why,
                                                         const char *fmt, ...)
{
    char detail[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, st->stats.lines, why, detail);
}

static const msgpack_object *get(const msgpack_object *map, const char *key)
{
    if (!map || map->type != MSGPACK_OBJECT_MAP) return NULL;
    size_t n = strlen(key);
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == n && !memcmp(k->via.str.ptr, key, n))
            return &map->via.map.ptr[i].val;
    }
    return NULL;
}

static bool number(const msgpack_object *o, double *v)
{
    if (!o) return false;
    switch (o->type) {
    case MSGPACK_OBJECT_FLOAT64:
    case MSGPACK_OBJECT_FLOAT32: *v = o->via.f64; return true;
    case MSGPACK_OBJECT_POSITIVE_INTEGER: *v = (double)o->via.u64; return true;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: *v = (double)o->via.i64; return true;
    default: return false;
    }
}

/* A string value (or the parts of an array key, joined by ", ") into the
 * scratch buffer; the offset of its NUL-terminated copy, or -1. */
static long text(struct dasf_state *st, const msgpack_object *o)
{
    if (!o) return -1;
    long at = (long)st->scratch.len;
    if (o->type == MSGPACK_OBJECT_STR) {
        tl_buf_append(&st->scratch, o->via.str.ptr, o->via.str.size);
    } else if (o->type == MSGPACK_OBJECT_ARRAY) { /* a tuple key: ("name", 3, 0) */
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            const msgpack_object *e = &o->via.array.ptr[i];
            if (i) tl_buf_puts(&st->scratch, ", ");
            if (e->type == MSGPACK_OBJECT_STR) tl_buf_append(&st->scratch, e->via.str.ptr, e->via.str.size);
            else if (e->type == MSGPACK_OBJECT_POSITIVE_INTEGER) tl_buf_printf(&st->scratch, "%llu", (unsigned long long)e->via.u64);
            else if (e->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) tl_buf_printf(&st->scratch, "%lld", (long long)e->via.i64);
            else tl_buf_puts(&st->scratch, "?");
        }
    } else {
        return -1;
    }
    tl_buf_putc(&st->scratch, '\0');
    return st->scratch.oom ? -1 : at;
}

static const char *intern_text(struct dasf_state *st, const msgpack_object *o)
{
    if (!o || o->type != MSGPACK_OBJECT_STR) return NULL;
    int32_t id = tl_intern(st->names, o->via.str.ptr, o->via.str.size);
    return id >= 0 ? tl_intern_str(st->names, id) : NULL;
}

/* The offset from monotonic seconds to the epoch, choosing the fallback
 * (the first event read now) when no anchor came. */
static double epoch_offset(struct dasf_state *st, double ts)
{
    if (!st->anchor_kind) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        double at = st->file_born_s > 0 ? st->file_born_s : (double)now.tv_sec + now.tv_nsec * 1e-9;
        st->anchor = at - ts;
        st->anchor_kind = DC_ANCHOR_FALLBACK;
        st->counters[DC_ANCHOR_FALLBACK] = 1;
        st->counters[DC_OFFSET_S] = (uint64_t)llround(st->anchor);
    }
    return st->anchor;
}

static void set_anchor(struct dasf_state *st, double offset, int kind)
{
    if (st->anchor_kind == DC_ANCHOR_OWN || st->anchor_kind == DC_ANCHOR_SIBLING) return;
    if (st->anchor_kind == DC_ANCHOR_FALLBACK) return; /* records went out with it: keep one clock */
    st->anchor = offset;
    st->anchor_kind = kind;
    st->counters[kind] = 1;
    st->counters[DC_OFFSET_S] = (uint64_t)llround(offset);
}

static int64_t to_ns(struct dasf_state *st, double ts)
{
    double t = (ts + (st->monotonic ? 0 : epoch_offset(st, ts))) * 1e9;
    return t > 0 && t < 9.2e18 ? (int64_t)llround(t) : 0;
}

/* ---------------------------------------------------------------- events */

static void base(struct dasf_state *st, struct tl_record *r, enum tl_record_kind k,
                 const msgpack_object *ev, double ts)
{
    tl_record_init(r, k);
    r->source = "dasf";
    r->workflow = st->workflow;
    r->host = intern_text(st, get(ev, "process_id"));
    r->worker = intern_text(st, get(ev, "thread_id"));
    r->line = st->stats.lines;
    r->time_ns = to_ns(st, ts);
}

static void emit(struct dasf_state *st, struct tl_record *r)
{
    char detail[160];
    if (tl_record_drop_bad_values(r, detail, sizeof detail)) reject(st, TL_REJ_BAD_VALUE, "%s", detail);
    st->stats.records++;
    st->emit.record(st->emit.ctx, r);
}

static void task(struct dasf_state *st, const msgpack_object *ev, const char *category, double ts,
                 double dur, const msgpack_object *args)
{
    struct tl_record r;
    base(st, &r, TL_REC_TASK, ev, ts);
    r.category = category;
    r.task_id = (int64_t)st->stats.lines;
    r.attempt = 1;
    r.final = true;
    r.result = "SUCCESS";
    long key = text(st, get(args, "key"));
    r.task_key = key >= 0 ? st->scratch.data + key : NULL;
    tl_record_set(&r, TL_M_WALL_TIME_S, dur);
    if (r.time_ns && dur >= 0 && dur < 9.2e9) r.start_ns = r.time_ns - (int64_t)llround(dur * 1e9); /* the span's */
    double size;
    if (number(get(args, "size"), &size)) tl_record_set(&r, TL_M_OUTPUT_BYTES, size);
    if (tl_emit_wants(&st->emit, TL_REC_TASK)) emit(st, &r);
    else st->stats.records++;
}

/* An instant event's numeric args, each a sample "<name> <arg>". */
static void samples(struct dasf_state *st, const msgpack_object *ev, const msgpack_object *name,
                    double ts, const msgpack_object *args)
{
    if (!args || args->type != MSGPACK_OBJECT_MAP) return;
    struct tl_record r;
    base(st, &r, TL_REC_SAMPLE, ev, ts);
    for (uint32_t i = 0; i < args->via.map.size; i++) {
        const msgpack_object *k = &args->via.map.ptr[i].key;
        double v;
        if (k->type != MSGPACK_OBJECT_STR || !number(&args->via.map.ptr[i].val, &v)) continue;
        if (k->via.str.size == 4 && !memcmp(k->via.str.ptr, "time", 4)) continue; /* the anchor */
        size_t mark = st->scratch.len;
        tl_buf_append(&st->scratch, name->via.str.ptr, name->via.str.size);
        tl_buf_putc(&st->scratch, ' ');
        tl_buf_append(&st->scratch, k->via.str.ptr, k->via.str.size);
        tl_buf_putc(&st->scratch, '\0');
        if (st->scratch.oom) return;
        r.category = st->scratch.data + mark;
        tl_record_set(&r, TL_M_SAMPLE_VALUE, v);
        st->counters[DC_SAMPLES]++;
        if (tl_emit_wants(&st->emit, TL_REC_SAMPLE)) emit(st, &r);
        else st->stats.records++;
    }
}

/* "process\0thread" of an event, interned: whose B an E closes. */
static int32_t who(struct dasf_state *st, const msgpack_object *ev)
{
    size_t mark = st->scratch.len; /* text() appends each part NUL-terminated, a missing one nothing */
    text(st, get(ev, "process_id"));
    text(st, get(ev, "thread_id"));
    if (st->scratch.len == mark) return tl_intern(st->names, "", 0);
    return tl_intern(st->names, st->scratch.data + mark, st->scratch.len - mark);
}

static void begin(struct dasf_state *st, const msgpack_object *ev, const msgpack_object *name, double ts)
{
    st->counters[DC_PH_B]++;
    if ((long long)st->nopen >= st->cfg.max_open) return reject(st, TL_REJ_LIMIT, "max_open B events reached at byte %llu", (unsigned long long)st->offset);
    if (st->nopen == st->capopen) {
        size_t cap = st->capopen ? st->capopen * 2 : 16;
        struct open_b *o = realloc(st->open, cap * sizeof *o);
        if (!o) return reject(st, TL_REJ_LIMIT, "out of memory for B events at byte %llu", (unsigned long long)st->offset);
        st->open = o;
        st->capopen = cap;
    }
    int32_t nm = name && name->type == MSGPACK_OBJECT_STR ? tl_intern(st->names, name->via.str.ptr, name->via.str.size) : -1;
    st->open[st->nopen++] = (struct open_b){who(st, ev), nm, ts, st->stats.lines};
}

static void end(struct dasf_state *st, const msgpack_object *ev, const msgpack_object *name, double ts)
{
    st->counters[DC_PH_E]++;
    int32_t w = who(st, ev);
    for (size_t i = st->nopen; i-- > 0;) {
        if (st->open[i].who != w) continue;
        struct open_b b = st->open[i];
        memmove(&st->open[i], &st->open[i + 1], (st->nopen - i - 1) * sizeof *st->open);
        st->nopen--;
        const char *bn = b.name >= 0 ? tl_intern_str(st->names, b.name) : "(no name)";
        if (name && name->type == MSGPACK_OBJECT_STR &&
            (strlen(bn) != name->via.str.size || memcmp(bn, name->via.str.ptr, name->via.str.size)))
            st->counters[DC_NON_NESTED_END]++;
        if (ts < b.ts) return reject(st, TL_REJ_BAD_FIELDS, "E event before its B (byte %llu)", (unsigned long long)st->offset);
        task(st, ev, bn, ts, ts - b.ts, NULL);
        return;
    }
    st->counters[DC_UNMATCHED_END]++;
}

/* One decoded event. */
static void event(struct dasf_state *st, const msgpack_object *ev)
{
    st->scratch.len = 0;
    const msgpack_object *name = get(ev, "name"), *phase = get(ev, "phase"), *args = get(ev, "args");
    double ts;
    if (ev->type != MSGPACK_OBJECT_MAP || !phase || phase->type != MSGPACK_OBJECT_STR ||
        phase->via.str.size != 1 || !number(get(ev, "timestamp"), &ts) || !isfinite(ts))
        return reject(st, TL_REJ_BAD_FIELDS, "event at byte %llu without a phase or timestamp",
                      (unsigned long long)st->offset);
    double wall;
    if (name && name->type == MSGPACK_OBJECT_STR && name->via.str.size == 14 &&
        !memcmp(name->via.str.ptr, "Resource Usage", 14) && number(get(args, "time"), &wall))
        set_anchor(st, wall - ts, DC_ANCHOR_OWN);
    switch (phase->via.str.ptr[0]) {
    case 'X': {
        double dur;
        const char *category = intern_text(st, get(args, "name"));
        if (!category) category = intern_text(st, name);
        if (!number(get(ev, "duration"), &dur) || !category)
            return reject(st, TL_REJ_BAD_FIELDS, "X event at byte %llu without a duration or name",
                          (unsigned long long)st->offset);
        st->counters[DC_COMPUTE]++;
        return task(st, ev, category, ts, dur, args);
    }
    case 'I':
    case 'i':
        st->counters[DC_INSTANT]++;
        if (name && name->type == MSGPACK_OBJECT_STR) samples(st, ev, name, ts, args);
        return;
    case 'B': return begin(st, ev, name, ts);
    case 'E': return end(st, ev, name, ts);
    default: st->counters[DC_OTHER_PHASE]++; return;
    }
}

/* ---------------------------------------------------------------- framing */

static uint64_t be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

/* A plausible event header at p (9 bytes): a length within bounds, then a map. */
static bool plausible(const struct dasf_state *st, const unsigned char *p)
{
    uint64_t n = be64(p);
    return n > 0 && n <= st->cfg.max_event && ((p[8] & 0xf0) == 0x80 || p[8] == 0xde || p[8] == 0xdf);
}

/* Big-endian unsigned of w bytes. */
static uint64_t be(const unsigned char *p, int w)
{
    uint64_t v = 0;
    for (int i = 0; i < w; i++) v = v << 8 | p[i];
    return v;
}

/* Whether the n bytes hold one msgpack value whose containers declare no
 * more elements than there are bytes left (each takes one at least).
 * msgpack-c allocates what a header declares before it reads the
 * elements: an array32 header of 2^32 in a 20-byte event asked for 64 GiB
 * (fuzz_parser). After this walk, its allocations stay within a small
 * multiple of max_event, and within DASF_MAX_VALUES objects of 24 bytes
 * (DASF writes about 20 a event; 4 MB of nils in one event took 111 MB). */
#define DASF_MAX_VALUES 65536
static bool msgpack_sane(const unsigned char *p, size_t n)
{
    uint64_t pending = 1, values = 0;
    size_t i = 0;
    while (pending) {
        if (i >= n || ++values > DASF_MAX_VALUES) return false;
        unsigned t = p[i++];
        pending--;
        uint64_t skip = 0, items = 0;
        int w = 0;
        if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3) skip = 0;
        else if (t <= 0x8f) items = 2 * (t & 0x0f);
        else if (t <= 0x9f) items = t & 0x0f;
        else if (t <= 0xbf) skip = t & 0x1f;
        else if (t == 0xca) skip = 4;
        else if (t == 0xcb) skip = 8;
        else if (t >= 0xcc && t <= 0xcf) skip = 1u << (t - 0xcc);
        else if (t >= 0xd0 && t <= 0xd3) skip = 1u << (t - 0xd0);
        else if (t >= 0xd4 && t <= 0xd8) skip = 1 + (1u << (t - 0xd4));
        else {
            switch (t) {
            case 0xc4: case 0xd9: w = 1; break; /* bin8, str8 */
            case 0xc5: case 0xda: w = 2; break;
            case 0xc6: case 0xdb: w = 4; break;
            case 0xc7: w = 1; skip = 1; break;  /* ext: length, then a type byte */
            case 0xc8: w = 2; skip = 1; break;
            case 0xc9: w = 4; skip = 1; break;
            case 0xdc: case 0xdd: case 0xde: case 0xdf: w = t & 1 ? 4 : 2; break;
            default: return false;              /* 0xc1: never used */
            }
            if (n - i < (size_t)w) return false;
            uint64_t len = be(p + i, w);
            i += (size_t)w;
            if (t >= 0xdc) items = t >= 0xde ? 2 * len : len;
            else skip += len;
        }
        if (skip > n - i) return false;
        i += (size_t)skip;
        pending += items;
        if (pending > n - i) return false;
    }
    return i == n;
}

/* One event's body: read, or false when it is not one msgpack value of n
 * bytes (a damaged length: the caller looks for the next header inside). */
static bool decode(struct dasf_state *st, const char *body, size_t n)
{
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    msgpack_unpack_return rc = msgpack_sane((const unsigned char *)body, n)
                                   ? msgpack_unpack_next(&u, body, n, &off)
                                   : MSGPACK_UNPACK_PARSE_ERROR;
    bool ok = rc == MSGPACK_UNPACK_SUCCESS && off == n && u.data.type == MSGPACK_OBJECT_MAP;
    if (ok) {
        st->stats.lines++;
        event(st, &u.data);
    }
    msgpack_unpacked_destroy(&u);
    return ok;
}

/* A length within bounds whose body is no event (one flipped bit in a
 * length makes it swallow the events after it): said, and everything from
 * the header's second byte on is read again, looking for the next header,
 * so only the damaged event is lost (it was up to 678 events). */
static void damaged(struct dasf_state *st, const char *rest, size_t rest_len)
{
    st->stats.lines++;
    reject(st, TL_REJ_BAD_DOCUMENT, "event at byte %llu: not one msgpack value of %zu bytes; "
           "looking for the next event", (unsigned long long)st->offset, st->pending.len - 8);
    struct tl_buf again = {0};
    tl_buf_append(&again, st->pending.data + 1, st->pending.len - 1);
    tl_buf_append(&again, rest, rest_len);
    tl_buf_append(&again, st->replay.data, st->replay.len); /* what was still to be read again */
    tl_buf_free(&st->replay);
    st->replay = again;
    st->pending.len = 0;
    st->offset++;
    st->counters[DC_SKIPPED_BYTES]++;
    st->resync = true;
}

static enum tl_err feed_bytes(struct dasf_state *st, const char *buf, size_t len)
{
    while (len) {
        if (st->resync) { /* after damage: a byte at a time until a header fits */
            tl_buf_append(&st->pending, buf, 1);
            buf++;
            len--;
            if (st->pending.len < 9) continue;
            if (plausible(st, (const unsigned char *)st->pending.data)) {
                st->resync = false;
                continue;
            }
            memmove(st->pending.data, st->pending.data + 1, --st->pending.len);
            st->offset++;
            st->counters[DC_SKIPPED_BYTES]++;
            continue;
        }
        size_t want = 8;
        if (st->pending.len >= 8) {
            uint64_t n = be64((const unsigned char *)st->pending.data);
            if (n == 0 || n > st->cfg.max_event) {
                st->stats.lines++;
                reject(st, TL_REJ_TOO_LARGE, "length %llu at byte %llu is past max_event: looking for the next event",
                       (unsigned long long)n, (unsigned long long)st->offset);
                /* keep all but the first byte: the next header may start inside */
                memmove(st->pending.data, st->pending.data + 1, --st->pending.len);
                st->offset++;
                st->counters[DC_SKIPPED_BYTES]++;
                st->resync = true;
                continue;
            }
            want = 8 + (size_t)n;
        }
        size_t take = want - st->pending.len < len ? want - st->pending.len : len;
        tl_buf_append(&st->pending, buf, take);
        if (st->pending.oom) return TL_ERR_NOMEM;
        buf += take;
        len -= take;
        if (st->pending.len == want && want > 8) {
            if (!decode(st, st->pending.data + 8, want - 8)) {
                damaged(st, buf, len);
                return st->replay.oom ? TL_ERR_NOMEM : TL_OK;
            }
            st->offset += want;
            st->pending.len = 0;
        }
    }
    return TL_OK;
}

static enum tl_err dasf_feed(void *state, const char *buf, size_t len)
{
    struct dasf_state *st = state;
    enum tl_err rc = feed_bytes(st, buf, len);
    while (rc == TL_OK && st->replay.len) { /* bytes after a damaged event, read again */
        struct tl_buf again = st->replay;
        st->replay = (struct tl_buf){0};
        rc = feed_bytes(st, again.data, again.len);
        tl_buf_free(&again);
    }
    return rc;
}

static enum tl_err dasf_finish(void *state)
{
    struct dasf_state *st = state;
    if (st->pending.len) {
        uint64_t need = st->pending.len >= 8 ? 8 + be64((const unsigned char *)st->pending.data) : 8;
        st->stats.lines++;
        reject(st, TL_REJ_TRUNCATED, "the last event, at byte %llu, has %zu of its %llu bytes",
               (unsigned long long)st->offset, st->pending.len, (unsigned long long)need);
        st->offset += st->pending.len;
        st->pending.len = 0;
    }
    st->counters[DC_OPEN] = st->nopen;
    return TL_OK;
}

/* ---------------------------------------------------------------- sibling */

/* A TracePlugin file's clock anchor from its ResourceMonitor sibling: the
 * first Resource Usage event's args.time - timestamp. */
static void anchor_from_sibling(struct dasf_state *st, const char *path)
{
    const char *tp = strstr(path, "-TracePlugin-");
    if (!tp || strlen(path) > 4000) return;
    char sib[4200];
    snprintf(sib, sizeof sib, "%.*s-ResourceMonitor-%s", (int)(tp - path), path, tp + 13);
    FILE *f = fopen(sib, "rb");
    if (!f) return;
    unsigned char h[8];
    for (int i = 0; i < 64 && fread(h, 1, 8, f) == 8; i++) {
        uint64_t n = be64(h);
        if (!n || n > 65536) break;
        char body[65536];
        if (fread(body, 1, (size_t)n, f) != n) break;
        msgpack_unpacked u;
        msgpack_unpacked_init(&u);
        size_t off = 0;
        double ts, wall;
        const msgpack_object *name;
        bool got = msgpack_sane((const unsigned char *)body, (size_t)n) &&
                   msgpack_unpack_next(&u, body, (size_t)n, &off) == MSGPACK_UNPACK_SUCCESS &&
                   (name = get(&u.data, "name")) && name->type == MSGPACK_OBJECT_STR &&
                   name->via.str.size == 14 && !memcmp(name->via.str.ptr, "Resource Usage", 14) &&
                   number(get(&u.data, "timestamp"), &ts) && number(get(get(&u.data, "args"), "time"), &wall);
        msgpack_unpacked_destroy(&u);
        if (got) {
            set_anchor(st, wall - ts, DC_ANCHOR_SIBLING);
            break;
        }
    }
    fclose(f);
}

/* When the file came to be: its birth time, else its modification time
 * (core/path.h), in s; 0 when it is no regular file. */
static double file_born(const char *path)
{
    int64_t ns = tl_file_birth_ns(path);
    if (!ns) ns = tl_file_mtime_ns(path);
    return (double)ns / 1e9;
}

static void dasf_set_name(void *state, const char *name)
{
    struct dasf_state *st = state;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (!base || !*base || !strcmp(base, "-")) base = "dasf";
    /* the run's name: what precedes -TracePlugin- / -ResourceMonitor- */
    const char *cut = strstr(base, "-TracePlugin-");
    if (!cut) cut = strstr(base, "-ResourceMonitor-");
    snprintf(st->workflow, sizeof st->workflow, "%.*s", cut ? (int)(cut - base) : (int)strlen(base), base);
    if (name) anchor_from_sibling(st, name);
    if (name) st->file_born_s = file_born(name);
}

/* ---------------------------------------------------------------- checkpoints */

/* The state a followed trace resumes with: counts, the clock anchor, the
 * bytes of an event not complete yet. B events still open are not kept
 * (DASF writes none). */
#define DASF_SAVE_MAGIC "TLD1"

static enum tl_err dasf_save(const void *state, struct tl_buf *b)
{
    const struct dasf_state *st = state;
    tl_buf_append(b, DASF_SAVE_MAGIC, 4);
    tl_parse_stats_put(b, &st->stats);
    tl_counters_put(b, st->counters, DC_COUNT);
    tl_put_varint(b, st->offset);
    tl_put_u8(b, (uint8_t)(st->resync | st->anchor_kind << 1));
    tl_put_f64(b, st->anchor);
    tl_put_varint(b, st->pending.len);
    tl_buf_append(b, st->pending.data, st->pending.len);
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

static enum tl_err dasf_restore(void *state, const uint8_t *p, size_t len)
{
    struct dasf_state *st = state;
    const uint8_t *end = p + len;
    uint64_t n;
    uint8_t flags;
    if (len < 4 || memcmp(p, DASF_SAVE_MAGIC, 4)) return TL_ERR_CORRUPT;
    p += 4;
    if (!tl_parse_stats_get(&p, end, &st->stats) || !tl_counters_get(&p, end, st->counters, DC_COUNT))
        return TL_ERR_CORRUPT;
    if (!tl_get_varint(&p, end, &st->offset) || !tl_get_u8(&p, end, &flags) ||
        !tl_get_f64(&p, end, &st->anchor) || !tl_get_varint(&p, end, &n) || n > (uint64_t)(end - p) ||
        n > st->cfg.max_event + 8 || (flags >> 1) > DC_ANCHOR_FALLBACK ||
        ((flags >> 1) && (flags >> 1) < DC_ANCHOR_OWN) || !isfinite(st->anchor))
        return TL_ERR_CORRUPT;
    st->resync = flags & 1;
    st->anchor_kind = flags >> 1;
    st->pending.len = 0;
    tl_buf_append(&st->pending, p, (size_t)n);
    return st->pending.oom ? TL_ERR_NOMEM : TL_OK;
}

/* ---------------------------------------------------------------- plumbing */

static int dasf_probe(const char *buf, size_t len)
{
    if (len < 16) return 0;
    const unsigned char *p = (const unsigned char *)buf;
    uint64_t n = be64(p);
    if (n == 0 || n > (64u << 20) || !((p[8] & 0xf0) == 0x80 || p[8] == 0xde || p[8] == 0xdf)) return 0;
    size_t scan = len < 8 + n ? len : 8 + (size_t)n;
    return memmem(buf, scan, "\xa5phase", 6) && memmem(buf, scan, "\xa9timestamp", 10) ? 95 : 0;
}

static enum tl_err dasf_validate(const void *config, const char **key, char *err, size_t errcap)
{
    const char *clock = ((const struct dasf_config *)config)->clock;
    if (!strcmp(clock, "epoch") || !strcmp(clock, "monotonic")) return TL_OK;
    *key = "clock";
    snprintf(err, errcap, "dasf.clock is epoch or monotonic, not '%s'", clock);
    return TL_ERR_USAGE;
}

static enum tl_err dasf_open(void **state, const void *config, const struct tl_emit *emit, char *err, size_t errcap)
{
    struct dasf_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct dasf_config *)config;
    st->monotonic = !strcmp(st->cfg.clock, "monotonic");
    st->emit = *emit;
    st->names = tl_intern_new(64u << 20);
    snprintf(st->workflow, sizeof st->workflow, "dasf");
    if (!st->names) {
        free(st);
        return TL_ERR_NOMEM;
    }
    *state = st;
    return TL_OK;
}

static void dasf_close(void *state)
{
    struct dasf_state *st = state;
    if (!st) return;
    tl_buf_free(&st->pending);
    tl_buf_free(&st->replay);
    tl_buf_free(&st->scratch);
    tl_intern_free(st->names);
    free(st->open);
    free(st);
}

static const struct tl_parse_stats *dasf_stats(const void *state)
{
    return &((const struct dasf_state *)state)->stats;
}

static size_t dasf_counters(const void *state, struct tl_counter *out, size_t max)
{
    return tl_counters_fill(out, max, counter_names, ((const struct dasf_state *)state)->counters, DC_COUNT);
}

const struct tl_parser tl_parser_dasf = {
    .name = "dasf",
    .help = "DASF profiler traces (msgpack, 8-byte framed): Compute tasks, memory and resource samples",
    .probe = dasf_probe,
    .config_size = sizeof(struct dasf_config),
    .options = dasf_options,
    .validate = dasf_validate,
    .open = dasf_open,
    .feed = dasf_feed,
    .finish = dasf_finish,
    .close = dasf_close,
    .stats = dasf_stats,
    .counters = dasf_counters,
    .save = dasf_save,
    .restore = dasf_restore,
    .set_name = dasf_set_name,
    .messages = TL_MSG_STREAM,
};
