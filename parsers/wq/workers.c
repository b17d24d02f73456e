/* Work Queue / TaskVine: the lines about workers and transfers (events.c
 * holds the task state machine and the dispatch): a worker connecting,
 * its resources and host, its going away (with the tasks it held), and
 * file transfers. These lines are rare beside task lines, so their calls
 * into events.c's helpers are out of line; the task path keeps them inline. */
#include "parsers/wq/scan.h"
#include "parsers/wq/wq_internal.h"

enum worker_event { EV_CONNECTION, EV_DISCONNECTION, EV_RESOURCES, EV_TRANSFER, EV_CACHE_UPDATE, EV_NONE };

static enum worker_event worker_event(struct span w)
{
    switch (w.n) {
    case 8: return SPAN_IS(w, "TRANSFER") ? EV_TRANSFER : EV_NONE;
    case 9: return SPAN_IS(w, "RESOURCES") ? EV_RESOURCES : EV_NONE;
    case 10: return SPAN_IS(w, "CONNECTION") ? EV_CONNECTION : EV_NONE;
    case 12:
        return SPAN_IS(w, "CACHE_UPDATE") || SPAN_IS(w, "CACHE-UPDATE") ? EV_CACHE_UPDATE : EV_NONE;
    case 13: return SPAN_IS(w, "DISCONNECTION") ? EV_DISCONNECTION : EV_NONE;
    }
    return EV_NONE;
}

/* Whether a size or time as a transfer line writes it is one a transfer can
 * have: not negative, and below 2^960 (about 1e289), so that every unit
 * conversion (MiB, µs) keeps it finite. Judged as read, the same whether the
 * number is converted or only validated. */
static inline bool transfer_number_possible(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u < UINT64_C(0x7bf0000000000000); /* 2^960 */
}

/* Whether tl_parse_double takes exactly [p, end), without converting: the
 * plain form (0|[1-9]digits)[.digits] of up to 280 integer digits, which it
 * always takes, is checked here; anything else (a sign, exponents, nan,
 * longer) it is asked. *impossible: see transfer_number_possible. For
 * numbers that are validated, not used. */
static bool number_ok(const char *p, const char *end, bool *impossible)
{
    const char *q = tl_skip_digits(p, end);
    *impossible = false;
    if (q > p && !(*p == '0' && q - p > 1) && q - p <= 280) {
        if (q < end && *q == '.') {
            const char *f = q + 1;
            q = tl_skip_digits(f, end);
            if (q == f || end - p > 400) q = NULL; /* "1." */
        }
        if (q == end) return true;
    }
    double v;
    if (!tl_parse_double(p, end, &v)) return false;
    *impossible = !transfer_number_possible(v);
    return true;
}

/* The tail of a worker TRANSFER / CACHE_UPDATE line: a name (which may hold
 * spaces), then 2 or 3 numbers, taken from the right: [start] time size.
 * 7.5.1+ writes integer bytes and µs; 7.5.0 and earlier builds write %f MiB
 * and seconds. Each number is converted once. NULL, or the reject detail.
 * bytes NULL: the numbers are only validated (a consumer that does not use
 * the transfer), with the same verdicts: *impossible says whether the size
 * or the time is one no transfer has (negative, past the double range). */
static const char *transfer_numbers(const char *p, const char *end, double *bytes, double *secs,
                                    bool *impossible)
{
    struct span nums[3];
    double vals[3];
    bool imp[3];
    int n = 0;
    const char *e = end;
    struct span x;
    for (const char *before = e; n < 3 && last_word(p, &e, &x); before = e) {
        if (bytes ? !tl_parse_double(x.p, x.p + x.n, &vals[n]) : !number_ok(x.p, x.p + x.n, &imp[n])) {
            e = before; /* that word is the name: leave it */
            break;
        }
        nums[n++] = x;
    }
    if (n < 2) return "transfer size/time";
    if (skip_spaces(p, e) >= e) { /* the last number was the name after all */
        if (n == 2) return "transfer file name";
        n--;
    }
    if (!bytes) {
        *impossible = imp[n - 1] || imp[n - 2];
        return NULL;
    }
    double sz = vals[n - 1], tm = vals[n - 2];
    *impossible = !transfer_number_possible(sz) || !transfer_number_possible(tm);
    if (memchr(nums[n - 1].p, '.', nums[n - 1].n)) sz = mib_bytes(sz);
    else tm /= 1e6;
    *bytes = sz;
    *secs = tm;
    return NULL;
}

/* A worker left: its cores leave the run's count. */
static void worker_gone(struct wq_state *st, struct run *run, int32_t wid, struct tl_record *r,
                        const char *p, const char *end)
{
    st->counters[WQC_WORKER_DISCONNECTION]++;
    struct span reason;
    r->state = "DISCONNECTION";
    if (next_word(&p, end, &reason)) r->result = wq_name_of(st, wq_intern_span(st, reason));
    uint64_t *c = wid >= 0 ? tl_map64_get(&run->worker_cores, (uint64_t)wid) : NULL;
    if (c) {
        double cores;
        memcpy(&cores, c, sizeof cores);
        run->cores -= cores;
        run->workers--;
        tl_map64_del(&run->worker_cores, (uint64_t)wid);
    }
}

/* A worker's resources: its capacity (alloc_* of the worker record), its
 * cores in the run's count. false when the line was rejected. */
static bool worker_resources(struct wq_state *st, struct run *run, int32_t wid,
                             struct tl_record *r, const char *p, const char *end)
{
    st->counters[WQC_WORKER_RESOURCES]++;
    const char *j = skip_spaces(p, end);
    struct box b = {0};
    struct bad_value bad = {0};
    if (!scan_resources(j, end, J_BOX, NULL, &b, &bad)) {
        wq_reject(st, TL_REJ_BAD_JSON, "WORKER RESOURCES");
        return false;
    }
    if (bad.n) wq_reject_bad_values(st, &bad);
    r->state = "RESOURCES";
    uint64_t *c = wid >= 0 ? tl_map64_get(&run->worker_cores, (uint64_t)wid) : NULL;
    if (c && (b.present & (1u << BOX_CORES))) {
        double old;
        memcpy(&old, c, sizeof old);
        run->cores += b.v[BOX_CORES] - old;
        memcpy(c, &b.v[BOX_CORES], sizeof *c);
    }
    /* For worker records, alloc_* is the worker's total capacity. */
    wq_box_to_record(r, &b, TL_M_ALLOC_CORES, TL_M_ALLOC_MEMORY_BYTES, TL_M_ALLOC_DISK_BYTES,
                     TL_M_ALLOC_GPUS);
    return true;
}

/* The record's host: from the address on the line (remembered for the
 * worker), else the worker's last address. false when out of names. */
static bool worker_host(struct wq_state *st, struct run *run, int32_t wid, struct span addr,
                        struct tl_record *r)
{
    if (addr.p) {
        int32_t aid = wq_intern_span(st, addr);
        if (aid < 0) {
            wq_reject(st, TL_REJ_LIMIT, "too many names");
            return false;
        }
        r->host = wq_name_of(st, wq_host_of_addr(st, aid));
        if (wid >= 0) {
            if (!tl_map64_put(&run->addr_to_worker, (uint64_t)aid, (uint64_t)wid) ||
                !tl_map64_put(&run->worker_to_addr, (uint64_t)wid, (uint64_t)aid))
                st->nomem = true; /* its tasks' worker unknown: the input fails at its end */
        }
    } else if (wid >= 0) {
        uint64_t *a = tl_map64_get(&run->worker_to_addr, (uint64_t)wid);
        if (a) r->host = wq_name_of(st, wq_host_of_addr(st, (int32_t)*a));
    }
    return true;
}

void wq_parse_worker(struct wq_state *st, int64_t ts, int64_t pid, const char *p,
                     const char *end)
{
    struct span id, w;
    if (!next_word(&p, end, &id) || !next_word(&p, end, &w))
        return wq_reject(st, TL_REJ_BAD_FIELDS, "WORKER line too short");
    struct run *run = wq_run_for(st, pid, ts);
    if (!run) return wq_reject_no_run(st);
    bool null_id = SPAN_IS(id, "(null)");
    struct span addr = {NULL, 0};
    /* WQ layout: WORKER id host:port  CONNECTION|DISCONNECTION [reason] */
    enum worker_event ev = worker_event(w);
    if (ev == EV_NONE) {
        addr = w;
        if (!next_word(&p, end, &w)) return wq_reject(st, TL_REJ_BAD_FIELDS, "WORKER event missing");
        ev = worker_event(w);
        if (ev == EV_NONE) return wq_reject(st, TL_REJ_UNKNOWN, "WORKER event");
    }
    /* Transfers and cache updates: a third of a TaskVine log. Without an
     * address they change no state, so a consumer that does not use
     * transfer records gets them validated and counted only. */
    struct span dir = {"CACHE_UPDATE", 12};
    double xfer_bytes = 0, xfer_secs = 0;
    bool impossible = false; /* the transfer's size or time */
    if (ev == EV_TRANSFER || ev == EV_CACHE_UPDATE) {
        st->counters[ev == EV_TRANSFER ? WQC_WORKER_TRANSFER : WQC_WORKER_CACHE_UPDATE]++;
        if (ev == EV_TRANSFER && !next_word(&p, end, &dir))
            return wq_reject(st, TL_REJ_BAD_FIELDS, "TRANSFER direction");
        bool used = addr.p || tl_emit_wants(&st->emit, TL_REC_TRANSFER);
        const char *bad = transfer_numbers(p, end, used ? &xfer_bytes : NULL, &xfer_secs, &impossible);
        if (bad) return wq_reject(st, TL_REJ_BAD_FIELDS, bad);
        if (impossible) wq_reject(st, TL_REJ_BAD_VALUE, "transfer size or time");
        if (!used && wq_skip_kind(st, TL_REC_TRANSFER)) return;
    }
    struct tl_record *r = &st->rec;
    tl_record_init(r, TL_REC_WORKER);
    r->workflow = wq_name_of(st, run->workflow);
    r->time_ns = ts * 1000;
    int32_t wid = null_id ? -1 : wq_intern_span(st, id);
    r->worker = wq_name_of(st, wid);

    switch (ev) {
    case EV_CONNECTION:
        st->counters[WQC_WORKER_CONNECTION]++;
        if (!addr.p && !next_word(&p, end, &addr)) /* TaskVine: CONNECTION host:port */
            return wq_reject(st, TL_REJ_BAD_FIELDS, "CONNECTION without address");
        r->state = "CONNECTION";
        if (wid >= 0 && !tl_map64_get(&run->worker_cores, (uint64_t)wid)) {
            run->workers++;
            if (!tl_map64_put(&run->worker_cores, (uint64_t)wid, 0)) st->nomem = true; /* 0.0's bits */
        }
        break;
    case EV_DISCONNECTION:
        worker_gone(st, run, wid, r, p, end);
        break;
    case EV_RESOURCES:
        if (!worker_resources(st, run, wid, r, p, end)) return;
        break;
    case EV_TRANSFER:
    case EV_CACHE_UPDATE: {
        bool input = !SPAN_IS(dir, "OUTPUT");
        r->kind = TL_REC_TRANSFER;
        r->state = ev == EV_TRANSFER ? (input ? "INPUT" : "OUTPUT") : "CACHE_UPDATE";
        if (!impossible) {
            tl_record_set(r, input ? TL_M_INPUT_BYTES : TL_M_OUTPUT_BYTES, xfer_bytes);
            tl_record_set(r, input ? TL_M_INPUT_TIME_S : TL_M_OUTPUT_TIME_S, xfer_secs);
        }
        break;
    }
    case EV_NONE:
        break; /* not reached: rejected above */
    }
    if (!worker_host(st, run, wid, addr, r)) return;
    if (!r->worker && addr.p && !null_id) r->worker = wq_name_of(st, wq_intern_span(st, addr));
    if (wq_skip_kind(st, r->kind)) return;
    wq_emit(st, r);
}

/* WQ top-level: TRANSFER INPUT|OUTPUT taskid cache_flag MiB seconds name... */
void wq_parse_transfer(struct wq_state *st, int64_t ts, int64_t pid, const char *p,
                       const char *end)
{
    struct span dir, id, flag, size, secs;
    if (!next_word(&p, end, &dir) || !next_word(&p, end, &id) || !next_word(&p, end, &flag) ||
        !next_word(&p, end, &size) || !next_word(&p, end, &secs))
        return wq_reject(st, TL_REJ_BAD_FIELDS, "TRANSFER line too short");
    bool input = SPAN_IS(dir, "INPUT");
    if (!input && !SPAN_IS(dir, "OUTPUT")) return wq_reject(st, TL_REJ_BAD_FIELDS, "TRANSFER direction");
    int64_t task_id;
    double mib = 0, s = 0;
    bool used = tl_emit_wants(&st->emit, TL_REC_TRANSFER), imp_size = false, imp_secs = false;
    if (!span_i64(id, &task_id) ||
        !(used ? tl_parse_double(size.p, size.p + size.n, &mib) : number_ok(size.p, size.p + size.n, &imp_size)) ||
        !(used ? tl_parse_double(secs.p, secs.p + secs.n, &s) : number_ok(secs.p, secs.p + secs.n, &imp_secs)))
        return wq_reject(st, TL_REJ_BAD_FIELDS, "TRANSFER numbers");
    st->counters[input ? WQC_TRANSFER_INPUT : WQC_TRANSFER_OUTPUT]++;
    struct run *run = wq_run_for(st, pid, ts);
    if (!run) return wq_reject_no_run(st);
    if (used && (!transfer_number_possible(mib) || !transfer_number_possible(s))) imp_size = true;
    if (imp_size || imp_secs) wq_reject(st, TL_REJ_BAD_VALUE, "transfer size or time");
    if (wq_skip_kind(st, TL_REC_TRANSFER)) return;
    struct tl_record *r = &st->rec;
    tl_record_init(r, TL_REC_TRANSFER);
    r->workflow = wq_name_of(st, run->workflow);
    r->task_id = task_id;
    r->state = input ? "INPUT" : "OUTPUT";
    r->time_ns = ts * 1000;
    if (!imp_size) {
        tl_record_set(r, input ? TL_M_INPUT_BYTES : TL_M_OUTPUT_BYTES, mib_bytes(mib));
        tl_record_set(r, input ? TL_M_INPUT_TIME_S : TL_M_OUTPUT_TIME_S, s);
    }
    struct task *t = wq_task_find(st, wq_run_index(st, run), task_id);
    if (t) r->category = wq_name_of(st, t->category);
    wq_emit(st, r);
}
