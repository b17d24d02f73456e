/* Chrome trace-event files (shared/formats/chrome-trace.md): durations and
 * resource samples, streaming, in bounded memory.
 *
 * Two layers. The container scanner is a byte-level state machine that
 * survives any split of the input: it accepts the array form `[ev, ...]`
 * and the object form `{..., "traceEvents": [ev, ...], ...}` with the
 * events array anywhere among keys whose values it skips without keeping
 * them (a multi-megabyte `systemTraceEvents` costs no memory). Inside the
 * array it finds where each event object ends with a small lenient scanner
 * (depth, inside-string, escape), then parses that one event strictly, in
 * place when it lies whole in the fed buffer and from a carry buffer when
 * it straddles two feeds. An event larger than max_event is skipped (not
 * kept) and reported. So memory is one event plus the tables below, never
 * the file.
 *
 * The event parser reads only the keys it needs (ph, name, cat, ts, dur,
 * pid, tid, id, id2, args; bp, bind_id, flow_in, flow_out for flows) and
 * skips the rest. Times are decimal
 * microseconds turned into integer nanoseconds digit by digit: epoch
 * microseconds with a fraction do not fit a double at ns resolution.
 *
 *   X          -> a task record: wall_time_s = dur, category = name (or cat)
 *   B / E      -> the same, paired on a stack per (pid, tid); an E with an
 *                 empty stack is counted; a B open at the end, like an X
 *                 without dur (the slice running when tracing stopped),
 *                 is a TASK_OPEN record
 *   i / I      -> resource samples from numeric args whose key matches
 *                 sample_args (DASF "Resource Usage", PyTorch "[memory]")
 *   C          -> one sample per numeric (or numeric string) series
 *   M          -> process_name / thread_name: host / worker of later events
 *   s / t / f  -> dependencies between slices, when the consumer wants
 *                 edges (flows.c)
 *   everything else is counted by phase and skipped.
 * A sample is a TL_REC_SAMPLE whose category is its series name
 * ("[memory] Total Allocated (cuda:0)", "SurfacePool CachedBytes"), so the
 * aggregator gives each series its distribution.
 *
 * Container leniency follows what real producers force (Perfetto's and
 * catapult's importers): leading whitespace, trailing commas, `{}` elements,
 * and an array form that never got its closing `]` (catapult's own writer
 * appends events forever); a half-written last event is dropped and
 * reported. An object form that never closes (a crashed PyTorch run) keeps
 * every complete event and is reported as truncated. */
#include "parsers/chrome/chrome_internal.h"
#include "core/term.h"

static const struct tl_option chrome_options[] = {
    {"category", TL_OPT_STRING, "name", "what names a duration's category: name or cat",
     offsetof(struct chrome_config, category)},
    {"sample_args", TL_OPT_LIST, DEFAULT_SAMPLE_ARGS,
     "instant-event args taken as resource samples: comma-separated globs (* = every numeric arg)",
     offsetof(struct chrome_config, sample_args)},
    {"max_event", TL_OPT_SIZE, "4M", "largest single event kept (bytes); larger ones are skipped",
     offsetof(struct chrome_config, max_event)},
    {"max_open", TL_OPT_INT, "1000000", "B events open at once, all threads together",
     offsetof(struct chrome_config, max_open)},
    {"max_names", TL_OPT_SIZE, "64M", "bytes of remembered names (B events, pids, threads)",
     offsetof(struct chrome_config, max_names)},
    {"max_flow_bytes", TL_OPT_SIZE, "2G",
     "memory for binding flow events to slices (`path`, `report`: 32 bytes a slice, 40 a flow point); "
     "past it the trace's dependencies are left out, said",
     offsetof(struct chrome_config, max_flow_bytes)},
    {0},
};

static const char *const counter_names[CC_COUNT] = {
    "ph_X", "ph_B", "ph_E", "ph_i", "ph_I", "ph_C", "ph_M", "ph_b", "ph_n", "ph_e",
    "ph_s", "ph_t", "ph_f", "ph_S", "ph_T", "ph_p", "ph_F", "ph_N", "ph_O", "ph_D",
    "ph_P", "ph_R", "ph_c", "ph_v", "ph_V", "ph_(", "ph_)", "ph_=",
    "ph_other", "no_ph", "empty_events", "non_object_elements", "durations", "samples",
    "unmatched_end", "non_nested_end", "open", "unterminated_array",
};
_Static_assert(sizeof counter_names / sizeof *counter_names == CC_COUNT, "one name per counter");

/* ---------------------------------------------------------------- container */

static bool blank(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static void ignore_rest(struct chrome_state *st, const char *why)
{
    chrome_reject(st, st->line, TL_REJ_BAD_DOCUMENT, why);
    st->cs = C_IGNORE;
}

static void start_event_carry(struct chrome_state *st, const char *p, size_t n)
{
    st->carry.len = 0;
    if (n > st->cfg.max_event) {
        st->cs = C_EVENT_DROP;
        return;
    }
    tl_buf_append(&st->carry, p, n);
    st->cs = C_EVENT;
}

/* An event whose end the lenient scanner found: [p, p + n) whole (its
 * lines already counted), or NULL when it was over max_event. */
static void event_done(struct chrome_state *st, const char *p, size_t n)
{
    struct jp j = {p, p ? p + n : p, 0};
    struct event ev;
    if (!p || n > st->cfg.max_event) {
        st->stats.lines++;
        chrome_reject(st, st->ev_line, TL_REJ_TOO_LARGE, "event over max_event");
    } else if (!chrome_parse_event(&j, &ev) || j.p != p + n) {
        st->stats.lines++;
        chrome_reject(st, st->ev_line, TL_REJ_BAD_JSON, "event is not valid JSON");
    } else {
        chrome_handle_event(st, &ev);
    }
}

static void after_array(struct chrome_state *st)
{
    st->cs = st->object_form ? C_OBJ_KEY : C_DONE;
}

static enum tl_err chrome_feed(void *state, const char *buf, size_t len)
{
    struct chrome_state *st = state;
    size_t i = 0;
    bool done;
    while (i < len) {
        char c = buf[i];
        switch (st->cs) {
        case C_START:
            if (blank(c)) {
                st->line += c == '\n';
                i++;
            } else if (c == '[') {
                st->object_form = false;
                st->saw_events_array = true;
                st->cs = C_ARR;
                i++;
            } else if (c == '{') {
                st->object_form = true;
                st->cs = C_OBJ_KEY;
                i++;
            } else if (i == 0 && st->line == 1 && len >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) {
                i += 3; /* a UTF-8 byte order mark */
            } else {
                ignore_rest(st, "not a trace: it must start with [ or {");
            }
            break;
        case C_OBJ_KEY:
            if (blank(c)) {
                st->line += c == '\n';
                i++;
            } else if (c == ',') {
                i++;
            } else if (c == '}') {
                st->cs = C_DONE;
                i++;
            } else if (c == '"') {
                st->keylen = 0;
                st->key_esc = false;
                st->vs = (struct vscan){0};
                st->vs.started = st->vs.in_str = true;
                st->cs = C_OBJ_KEYSTR;
                i++;
            } else {
                ignore_rest(st, "the top-level object is not valid JSON");
            }
            break;
        case C_OBJ_KEYSTR: {
            size_t b = i;
            size_t used = chrome_vscan_run(st, &st->vs, buf + i, len - i, &done);
            size_t keep = done ? used - 1 : used; /* not the closing quote */
            for (size_t k = 0; k < keep; k++) {
                if (buf[b + k] == '\\') st->key_esc = true;
                if (st->keylen < sizeof st->key) st->key[st->keylen] = buf[b + k];
                st->keylen++;
            }
            i += used;
            if (done) st->cs = C_OBJ_COLON;
            break;
        }
        case C_OBJ_COLON:
            if (blank(c)) {
                st->line += c == '\n';
                i++;
            } else if (c == ':') {
                st->cs = C_OBJ_VALUE;
                i++;
            } else {
                ignore_rest(st, "the top-level object is not valid JSON");
            }
            break;
        case C_OBJ_VALUE:
            if (blank(c)) {
                st->line += c == '\n';
                i++;
                break;
            }
            if (!st->key_esc && st->keylen == 11 && !memcmp(st->key, "traceEvents", 11)) {
                if (c == '[') {
                    st->saw_events_array = true;
                    st->cs = C_ARR;
                    i++;
                    break;
                }
                chrome_reject(st, st->line, TL_REJ_BAD_DOCUMENT, "traceEvents is not an array");
            }
            st->vs = (struct vscan){0};
            st->cs = C_OBJ_SKIP;
            break;
        case C_OBJ_SKIP:
            i += chrome_vscan_run(st, &st->vs, buf + i, len - i, &done);
            if (done) st->cs = C_OBJ_KEY;
            break;
        case C_ARR:
            if (blank(c)) {
                st->line += c == '\n';
                i++;
            } else if (c == ',') {
                i++;
            } else if (c == ']') {
                i++;
                after_array(st);
            } else if (c == '{') {
                /* The common case: the whole event is in this buffer, and
                 * valid; parse it in place. Otherwise the lenient scanner
                 * says whether it is cut (carry it) or bad (skip it). */
                st->ev_line = st->line;
                struct jp j = {buf + i, buf + len, 0};
                struct event ev;
                if (chrome_parse_event(&j, &ev) && (size_t)(j.p - (buf + i)) <= st->cfg.max_event) {
                    st->line += j.nl;
                    i = (size_t)(j.p - buf);
                    chrome_handle_event(st, &ev);
                    break;
                }
                st->vs = (struct vscan){0};
                size_t used = chrome_vscan_run(st, &st->vs, buf + i, len - i, &done);
                if (done) event_done(st, buf + i, used);
                else start_event_carry(st, buf + i, used);
                i += used;
            } else {
                st->counters[CC_NON_OBJECT]++;
                st->vs = (struct vscan){0};
                st->cs = C_ELEM_SKIP;
            }
            break;
        case C_EVENT: {
            size_t used = chrome_vscan_run(st, &st->vs, buf + i, len - i, &done);
            if (st->carry.len + used > st->cfg.max_event) {
                st->carry.len = 0;
                st->cs = C_EVENT_DROP;
            } else {
                tl_buf_append(&st->carry, buf + i, used);
                if (st->carry.oom) return TL_ERR_NOMEM;
            }
            i += used;
            if (done && st->cs == C_EVENT) {
                event_done(st, st->carry.data, st->carry.len);
                st->carry.len = 0;
                st->cs = C_ARR;
            } else if (done) {
                event_done(st, NULL, 0);
                st->cs = C_ARR;
            }
            break;
        }
        case C_EVENT_DROP:
            i += chrome_vscan_run(st, &st->vs, buf + i, len - i, &done);
            if (done) {
                event_done(st, NULL, 0);
                st->cs = C_ARR;
            }
            break;
        case C_ELEM_SKIP:
            i += chrome_vscan_run(st, &st->vs, buf + i, len - i, &done);
            if (done) st->cs = C_ARR;
            break;
        case C_DONE:
            if (blank(c)) {
                st->line += c == '\n';
                i++;
            } else {
                ignore_rest(st, "data after the end of the trace");
            }
            break;
        case C_IGNORE: return TL_OK;
        }
    }
    return TL_OK;
}

/* ---------------------------------------------------------------- plugin */

static void reset_container(struct chrome_state *st)
{
    st->cs = C_START;
    st->object_form = st->saw_events_array = false;
    st->carry.len = 0;
    st->line = 1;
    st->vs = (struct vscan){0};
    for (size_t i = 0; i < st->nids; i++) st->threads[i].n = 0;
    st->open_total = 0;
}

static enum tl_err chrome_finish(void *state)
{
    struct chrome_state *st = state;
    switch (st->cs) {
    case C_EVENT:
    case C_EVENT_DROP:
        st->stats.lines++;
        chrome_reject(st, st->ev_line, TL_REJ_TRUNCATED, "half-written last event dropped");
        if (!st->object_form) st->counters[CC_UNTERMINATED]++;
        else chrome_reject(st, st->line, TL_REJ_TRUNCATED, "trace object never closed");
        break;
    case C_ARR:
    case C_ELEM_SKIP:
        if (!st->object_form) {
            st->counters[CC_UNTERMINATED]++; /* legal: writers append forever */
            break;
        }
        /* fall through */
    case C_OBJ_KEY:
    case C_OBJ_KEYSTR:
    case C_OBJ_COLON:
    case C_OBJ_VALUE:
    case C_OBJ_SKIP:
        chrome_reject(st, st->line, TL_REJ_TRUNCATED, "trace object never closed");
        break;
    case C_DONE:
        if (st->object_form && !st->saw_events_array)
            chrome_reject(st, st->line, TL_REJ_NO_RESOURCES, "no traceEvents array");
        break;
    case C_START:
    case C_IGNORE: break;
    }
    /* B events never closed: reported as open tasks */
    for (size_t id = 0; id < st->nids; id++) {
        struct thread *t = &st->threads[id];
        for (uint32_t k = 0; k < t->n; k++) {
            struct tl_record r;
            tl_record_init(&r, TL_REC_TASK_OPEN);
            r.source = "chrome";
            r.workflow = st->workflow;
            r.category = tl_intern_str(st->names, t->v[k].name);
            r.state = "open";
            r.task_id = (int64_t)t->v[k].ordinal;
            r.attempt = 1;
            r.time_ns = t->v[k].ts_ns;
            r.line = t->v[k].line;
            st->counters[CC_OPEN_AT_END]++;
            st->stats.records++;
            st->emit.record(st->emit.ctx, &r);
        }
    }
    chrome_flows_finish(st);
    reset_container(st);
    return TL_OK;
}

static void chrome_close(void *state)
{
    struct chrome_state *st = state;
    if (!st) return;
    for (size_t i = 0; i < st->nids; i++) free(st->threads[i].v);
    free(st->threads);
    free(st->proc_name);
    free(st->thread_name);
    tl_intern_free(st->names);
    chrome_flows_close(st);
    tl_buf_free(&st->carry);
    for (int i = 0; i < st->nglobs; i++) free(st->globs[i].s);
    free(st->globs);
    free(st);
}

static enum tl_err chrome_validate(const void *config, const char **key, char *err, size_t errcap)
{
    const char *category = ((const struct chrome_config *)config)->category;
    if (!strcmp(category, "name") || !strcmp(category, "cat")) return TL_OK;
    *key = "category";
    snprintf(err, errcap, "chrome.category is name or cat, not '%s'", category);
    return TL_ERR_USAGE;
}

static enum tl_err chrome_open(void **state, const void *config, const struct tl_emit *emit, char *err, size_t errcap)
{
    struct chrome_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct chrome_config *)config;
    st->emit = *emit;
    st->by_cat = !strcmp(st->cfg.category, "cat");
    st->names = tl_intern_new(st->cfg.max_names);
    if (!st->names || !chrome_flows_open(st)) {
        chrome_close(st);
        return TL_ERR_NOMEM;
    }
    const char *p = st->cfg.sample_args ? st->cfg.sample_args : "";
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 1 && *p == '*') st->all_args = true;
        else if (n) {
            struct glob *g = realloc(st->globs, (size_t)(st->nglobs + 1) * sizeof *g);
            if (!g) {
                chrome_close(st);
                return TL_ERR_NOMEM;
            }
            st->globs = g;
            g = &st->globs[st->nglobs];
            g->s = strndup(p, n);
            if (!g->s) {
                chrome_close(st);
                return TL_ERR_NOMEM;
            }
            g->lit = strcspn(g->s, "*?[\\");
            g->kind = !g->s[g->lit]                             ? G_EXACT
                      : g->s[g->lit] == '*' && !g->s[g->lit + 1] ? G_PREFIX
                                                                 : G_FNMATCH;
            for (int c = 0; c < 256 && st->nglobs < 64; c++)
                if (!g->lit || (unsigned char)g->s[0] == c) st->glob_first[c] |= UINT64_C(1) << st->nglobs;
            st->nglobs++;
        }
        p += n;
        if (*p == ',') p++;
    }
    snprintf(st->workflow, sizeof st->workflow, "trace");
    reset_container(st);
    *state = st;
    return TL_OK;
}

/* The workflow tag: the trace's file name. */
static void chrome_set_name(void *state, const char *name)
{
    struct chrome_state *st = state;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    snprintf(st->workflow, sizeof st->workflow, "%s", base && *base && strcmp(base, "-") ? base : "trace");
}

static const struct tl_parse_stats *chrome_stats(const void *state)
{
    return &((const struct chrome_state *)state)->stats;
}

static size_t chrome_counters(const void *state, struct tl_counter *out, size_t max)
{
    const struct chrome_state *st = state;
    return tl_counters_fill(out, max, counter_names, st->counters, CC_COUNT);
}

/* `[` then an object with "ph", or `{` with "traceEvents" (or a first
 * event with "ph": the array form of one event per line). */
static int chrome_probe(const char *buf, size_t len)
{
    size_t n = len < 65536 ? len : 65536, i = 0;
    if (n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) i = 3;
    while (i < n && blank(buf[i])) i++;
    if (i >= n) return 0;
    if (buf[i] == '{' && memmem(buf, n, "\"traceEvents\"", 13)) return 95;
    if (buf[i] == '[' && memmem(buf, n, "\"ph\"", 4)) return 90;
    if (buf[i] == '[') {
        size_t j = i + 1;
        while (j < n && blank(buf[j])) j++;
        if (j == n || buf[j] == ']') return 20; /* an empty trace (or nothing yet) */
    }
    return 0;
}

const struct tl_parser tl_parser_chrome = {
    .name = "chrome",
    .help = "Chrome trace-event JSON (array or object form): durations, counters, samples",
    .probe = chrome_probe,
    .config_size = sizeof(struct chrome_config),
    .options = chrome_options,
    .validate = chrome_validate,
    .open = chrome_open,
    .feed = chrome_feed,
    .finish = chrome_finish,
    .close = chrome_close,
    .stats = chrome_stats,
    .counters = chrome_counters,
    .set_name = chrome_set_name,
    .messages = TL_MSG_EVENTS,
};
