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
 * pid, tid, id, id2, args) and skips the rest. Times are decimal
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
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "intern.h"
#include "jscan.h"
#include "numfmt.h"
#include "parser.h"

struct chrome_config {
    const char *category;
    const char *sample_args;
    size_t max_event;
    long long max_open;
    size_t max_names;
};

#define DEFAULT_SAMPLE_ARGS                                                                        \
    "cpu,memory,num_fds,host_net_io.*,host_disk_io.*,host_cpu.*,gpu_*,gpu-*,"                     \
    "Total Allocated,Total Reserved,Bytes"

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
    {0},
};

/* ---------------------------------------------------------------- counters */

/* Phases by letter; the rest of the counters after them. */
static const char phase_letters[] = "XBEiICMbnestfSTpFNODPRcvV()=";
#define NPHASE ((int)sizeof phase_letters - 1)
enum {
    CC_OTHER_PHASE = NPHASE,
    CC_NO_PH,
    CC_EMPTY,
    CC_NON_OBJECT,
    CC_DURATIONS,
    CC_SAMPLES,
    CC_UNMATCHED_END,
    CC_NON_NESTED_END, /* an E whose name is not the innermost open B's: pairs that overlap */
    CC_OPEN_AT_END,
    CC_UNTERMINATED,
    CC_COUNT
};
static const char *const counter_names[CC_COUNT] = {
    "ph_X", "ph_B", "ph_E", "ph_i", "ph_I", "ph_C", "ph_M", "ph_b", "ph_n", "ph_e",
    "ph_s", "ph_t", "ph_f", "ph_S", "ph_T", "ph_p", "ph_F", "ph_N", "ph_O", "ph_D",
    "ph_P", "ph_R", "ph_c", "ph_v", "ph_V", "ph_(", "ph_)", "ph_=",
    "ph_other", "no_ph", "empty_events", "non_object_elements", "durations", "samples",
    "unmatched_end", "non_nested_end", "open", "unterminated_array",
};
_Static_assert(sizeof counter_names / sizeof *counter_names == CC_COUNT, "one name per counter");

/* ---------------------------------------------------------------- state */

enum cstate {
    C_START,      /* before the first non-blank byte */
    C_OBJ_KEY,    /* top-level object: a key, ',' or '}' */
    C_OBJ_KEYSTR, /* inside a top-level key */
    C_OBJ_COLON,
    C_OBJ_VALUE,
    C_OBJ_SKIP, /* skipping the value of a key that is not traceEvents */
    C_ARR,      /* in the events array: an element, ',' or ']' */
    C_EVENT,    /* an event split across feeds: bytes go to carry */
    C_EVENT_DROP, /* an event over max_event: scanned, not kept */
    C_ELEM_SKIP,  /* a non-object element */
    C_DONE,       /* the container closed */
    C_IGNORE,     /* not a trace, or garbage after it: reported once */
};

/* Where a value ends, over any split: lenient (only strings and brackets
 * matter); the strict parse comes after. */
struct vscan {
    int depth;
    bool started, in_str, esc, scalar;
};

struct open_b { /* a B event waiting for its E */
    int32_t name;  /* interned, -1 without a name */
    int64_t ts_ns;
    uint64_t line, ordinal;
};

struct thread {
    struct open_b *v;
    uint32_t n, cap;
};

/* A sample_args glob, its literal head measured once: most are a plain
 * name ("Bytes") or a name and one trailing star ("gpu_*"). */
struct glob {
    char *s;
    size_t lit;         /* bytes before the first of * ? [ \ */
    enum { G_EXACT, G_PREFIX, G_FNMATCH } kind;
};

struct chrome_state {
    struct chrome_config cfg;
    struct tl_emit emit;
    struct tl_parse_stats stats;
    uint64_t counters[CC_COUNT];
    bool by_cat;
    struct glob *globs;
    int nglobs;
    bool all_args;
    /* For each first byte of a key, the globs that can match it: bit i
     * for globs[i] (those with a literal head starting with that byte, and
     * every one starting with a wildcard); past 64 globs, all are tried. */
    uint64_t glob_first[256];

    enum cstate cs;
    bool object_form;
    bool saw_events_array;
    struct vscan vs;
    char key[16];
    size_t keylen;
    bool key_esc;
    struct tl_buf carry;
    uint64_t line;      /* current line, 1-based */
    uint64_t ev_line;   /* line where the current event began */
    uint64_t ordinal;   /* events seen: task ids */

    /* pid, (pid, tid) and names, interned; per id: a name and a stack */
    struct tl_intern *names;
    int32_t *proc_name, *thread_name; /* by key id, -1 = none */
    struct thread *threads;
    size_t nids;
    long long open_total;

    char workflow[256];
    char cat_buf[4096], host_buf[512], worker_buf[512], series[8192], tmp[4096];
    /* The host and worker of the last few (pid, tid) keys: an event's are
     * nearly always those of one of the last four. They change only when a
     * metadata event names a process or thread (do_meta empties this);
     * results decoded into host_buf or worker_buf are not kept (the next
     * decode overwrites them). */
    struct who {
        char key[48];
        size_t n;
        const char *host, *worker;
    } who[4];
    int who_n, who_next;
};

/* ---------------------------------------------------------------- errors */

static void reject(struct chrome_state *st, uint64_t line, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, line, why, detail);
}

/* ---------------------------------------------------------------- numbers */

/* Decimal microseconds (a JSON number, or a numeric string's content) to
 * integer nanoseconds without going through double: up to 19 significant
 * digits are kept as an integer with a decimal exponent, then scaled,
 * rounding half away from zero like Perfetto's llround(v * 1000). */
static bool us_to_ns(const char *s, size_t n, int64_t *out)
{
    int64_t v;
    /* most: whole microseconds (16 digits for epoch times), exact in int64 */
    if (n && n <= 17 && s[0] != '+' && tl_parse_i64(s, s + n, &v) && v <= INT64_MAX / 1000 &&
        v >= -(INT64_MAX / 1000)) {
        *out = v * 1000;
        return true;
    }
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    uint64_t mant = 0;
    int digits = 0, exp10 = 0, first_dropped = -1;
    bool any = false;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        any = true;
        if (digits < 19) {
            mant = mant * 10 + (uint64_t)(s[i] - '0');
            if (mant) digits++;
        } else {
            exp10++;
            if (first_dropped < 0) first_dropped = s[i] - '0';
        }
    }
    if (i < n && s[i] == '.') {
        i++;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            any = true;
            if (digits < 19) {
                mant = mant * 10 + (uint64_t)(s[i] - '0');
                exp10--;
                if (mant) digits++;
            } else if (first_dropped < 0) {
                first_dropped = s[i] - '0';
            }
        }
    }
    if (!any) return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < n && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
        int e = 0;
        bool edig = false;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            edig = true;
            if (e < 10000) e = e * 10 + (s[i] - '0');
        }
        if (!edig) return false;
        exp10 += eneg ? -e : e;
    }
    if (i != n) return false;
    int k = exp10 + 3; /* µs -> ns */
    if (mant == 0) {
        *out = 0;
        return true;
    }
    if (k >= 0) {
        if (k == 0 && first_dropped >= 5) mant++;
        for (; k > 0; k--) {
            if (mant > (uint64_t)INT64_MAX / 10) return false;
            mant *= 10;
        }
        if (mant > (uint64_t)INT64_MAX) return false;
    } else {
        if (k < -19) {
            mant = 0;
        } else {
            uint64_t p = 1;
            for (int j = 0; j < -k; j++) p *= 10;
            uint64_t q = mant / p, r = mant % p;
            if (r >= p - r) q++;
            mant = q;
        }
        if (mant > (uint64_t)INT64_MAX) return false;
    }
    *out = neg ? -(int64_t)mant : (int64_t)mant;
    return true;
}

/* A counter's value: a JSON number or a numeric string ("0.75", "+10.5"). */
static bool to_double(const char *s, size_t n, double *out)
{
    /* integers (byte counts) are most values: no strtod for them */
    if (n && n < 16) {
        size_t i = s[0] == '-';
        int64_t v = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) v = v * 10 + (s[i] - '0');
        if (i == n && n > (size_t)(s[0] == '-')) {
            *out = (double)(s[0] == '-' ? -v : v);
            return true;
        }
    }
    char tmp[64];
    if (!n || n >= sizeof tmp) return false;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end;
    double v = strtod(tmp, &end); /* 1e400 is a number, inf: emit_sample rejects it */
    if (end != tmp + n) return false;
    /* strtod takes hex, inf and nan; JSON (and Perfetto) do not */
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789+-.eE", tmp[i])) return false;
    *out = v;
    return true;
}

/* ---------------------------------------------------------------- the lenient end scanner */

enum { K_PLAIN, K_OPEN, K_CLOSE, K_QUOTE, K_NL };
static const unsigned char kind_of[256] = {
    ['{'] = K_OPEN, ['['] = K_OPEN, ['}'] = K_CLOSE, [']'] = K_CLOSE, ['"'] = K_QUOTE, ['\n'] = K_NL,
};

/* Scans a value from its first byte; returns the bytes consumed and sets
 * *done when the value ended. A bare scalar ends before its delimiter. */
static size_t vscan_run(struct chrome_state *st, struct vscan *v, const char *p, size_t n,
                        bool *done)
{
    size_t i = 0;
    *done = false;
    if (!n) return 0;
    if (!v->started) {
        v->started = true;
        if (p[0] == '{' || p[0] == '[') {
            v->depth = 1;
            i = 1;
        } else if (p[0] == '"') {
            v->in_str = true;
            i = 1;
        } else {
            v->scalar = true; /* its first byte is part of it, even a stray ']' */
            i = 1;
        }
    }
    if (v->scalar) {
        for (; i < n; i++) {
            char c = p[i];
            if (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' ||
                c == '\t') {
                *done = true;
                return i;
            }
        }
        return n;
    }
    while (i < n) {
        if (v->in_str) {
            if (v->esc) {
                v->esc = false;
                i++;
                continue;
            }
            while (i < n && p[i] != '"' && p[i] != '\\') i++;
            if (i == n) return n;
            if (p[i++] == '\\') {
                v->esc = true;
                continue;
            }
            v->in_str = false;
            if (v->depth == 0) {
                *done = true;
                return i;
            }
            continue;
        }
        while (i < n && kind_of[(unsigned char)p[i]] == K_PLAIN) i++;
        if (i == n) return n;
        switch (kind_of[(unsigned char)p[i++]]) {
        case K_OPEN: v->depth++; break;
        case K_CLOSE:
            if (--v->depth <= 0) {
                *done = true;
                return i;
            }
            break;
        case K_QUOTE: v->in_str = true; break;
        case K_NL: st->line++; break;
        }
    }
    return n;
}

/* ---------------------------------------------------------------- the strict event parser */

#define MAX_DEPTH 64

struct jp {
    const char *p, *e;
    uint64_t nl; /* newlines passed (JSON allows them only between tokens) */
};

static inline void ws(struct jp *j)
{
    /* 1: JSON whitespace, 2: a newline */
    static const unsigned char kind[256] = {[' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\n'] = 3};
    while (j->p < j->e && kind[(unsigned char)*j->p]) {
        if (kind[(unsigned char)*j->p++] & 2) {
            j->nl++;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            /* a pretty-printed trace indents the next line: its spaces
             * eight at a time, the first other byte found by its bit */
            while (j->e - j->p >= 8) {
                uint64_t w;
                memcpy(&w, j->p, 8);
                w ^= UINT64_C(0x2020202020202020);
                if (w) {
                    j->p += __builtin_ctzll(w) >> 3;
                    break;
                }
                j->p += 8;
            }
#endif
        }
    }
}

/* The colon between a key and its value, with the whitespace around it;
 * ": " followed by the value, the way most writers put it, in one test. */
static inline __attribute__((always_inline)) bool jcolon(struct jp *j)
{
    const char *p = j->p;
    if (j->e - p >= 3 && p[0] == ':' && p[1] == ' ' && (unsigned char)p[2] > ' ') {
        j->p = p + 2;
        return true;
    }
    ws(j);
    if (j->p >= j->e || *j->p != ':') return false;
    j->p++;
    ws(j);
    return true;
}

/* After a member or element: 1 past a comma and the whitespace after it,
 * 0 past the closing bracket, -1 on anything else. */
static inline __attribute__((always_inline)) int jnext(struct jp *j, char close)
{
    const char *p = j->p;
    if (j->e - p >= 3 && p[0] == ',' && (unsigned char)p[1] >= ' ') {
        if ((unsigned char)p[1] > ' ') {
            j->p = p + 1;
            return 1;
        }
        if ((unsigned char)p[2] > ' ') {
            j->p = p + 2;
            return 1;
        }
    }
    ws(j);
    if (j->p >= j->e) return -1;
    if (*j->p == ',') {
        j->p++;
        ws(j);
        return 1;
    }
    if (*j->p != close) return -1;
    j->p++;
    return 0;
}

/* A string at j->p: its raw content [*s, *s + *n) and whether it holds escapes. */
static inline __attribute__((always_inline)) bool jstr(struct jp *j, const char **s, size_t *n, bool *esc)
{
    if (j->p >= j->e || *j->p != '"') return false;
    const char *p = ++j->p, *e = j->e;
    bool has_esc = false;
    for (;;) {
        p = tl_find_quote_or_backslash(p, e);
        if (p >= e) return false;
        if (*p == '"') break;
        has_esc = true; /* a backslash and the byte it escapes */
        p += 2;
    }
    if (s) *s = j->p;
    if (n) *n = (size_t)(p - j->p);
    if (esc) *esc = has_esc;
    j->p = p + 1;
    return true;
}

static inline __attribute__((always_inline)) bool jnum(struct jp *j, const char **s, size_t *n)
{
    const char *b = j->p, *p = b;
    for (;;) { /* runs of digits eight at a time, the rest of a number's bytes one by one */
        p = tl_skip_digits(p, j->e);
        if (p < j->e && (*p == '-' || *p == '+' || *p == '.' || *p == 'e' || *p == 'E')) p++;
        else break;
    }
    j->p = p;
    if (j->p == b) return false;
    if (s) *s = b;
    if (n) *n = (size_t)(j->p - b);
    return true;
}

static bool jword(struct jp *j, const char *w, size_t n)
{
    if ((size_t)(j->e - j->p) < n || memcmp(j->p, w, n)) return false;
    j->p += n;
    return true;
}

static bool jskip(struct jp *j, int depth)
{
    ws(j);
    if (j->p >= j->e) return false;
    switch (*j->p) {
    case '"': return jstr(j, NULL, NULL, NULL);
    case '{':
    case '[': {
        char close = *j->p == '{' ? '}' : ']';
        bool obj = close == '}';
        if (depth >= MAX_DEPTH) return false;
        j->p++;
        ws(j);
        if (j->p < j->e && *j->p == close) {
            j->p++;
            return true;
        }
        for (;;) {
            if (obj) {
                if (!jstr(j, NULL, NULL, NULL) || !jcolon(j)) return false;
            }
            /* strings and numbers here, the rest (and '-Infinity') one level down */
            bool ok = j->p < j->e && *j->p == '"' ? jstr(j, NULL, NULL, NULL)
                      : j->p < j->e && (unsigned)(*j->p - '0') <= 9 ? jnum(j, NULL, NULL)
                                                                      : jskip(j, depth + 1);
            if (!ok) return false;
            int more = jnext(j, close);
            if (more < 0) return false;
            if (!more) return true;
        }
    }
    case 't': return jword(j, "true", 4);
    case 'f': return jword(j, "false", 5);
    case 'n': return jword(j, "null", 4);
    case 'N': return jword(j, "NaN", 3); /* Python's json writes these */
    case 'I': return jword(j, "Infinity", 8);
    case '-':
        if (jword(j, "-Infinity", 9)) return true;
        return jnum(j, NULL, NULL);
    default: return jnum(j, NULL, NULL);
    }
}

/* Decodes a JSON string's raw content into out (NUL-terminated, cut at
 * cap - 1 bytes on a character boundary). */
static const char *decode(const char *s, size_t n, bool esc, char *out, size_t cap)
{
    size_t o = 0;
    if (!esc) {
        if (n >= cap) {
            n = cap - 1;
            while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--; /* whole UTF-8 chars */
        }
        memcpy(out, s, n);
        out[n] = '\0';
        return out;
    }
    for (size_t i = 0; i < n;) {
        char buf[4];
        size_t k = 1;
        if (s[i] != '\\' || i + 1 >= n) { /* up to the next escape in one copy */
            const char *bs = memchr(s + i + 1, '\\', n - i - 1);
            size_t run = (size_t)((bs ? bs : s + n) - (s + i));
            if (o + run >= cap) { /* what fits, in whole UTF-8 characters */
                run = cap - 1 - o;
                while (run > 0 && ((unsigned char)s[i + run] & 0xC0) == 0x80) run--;
                memcpy(out + o, s + i, run);
                o += run;
                break;
            }
            memcpy(out + o, s + i, run);
            o += run;
            i += run;
            continue;
        } else {
            char c = s[i + 1];
            i += 2;
            switch (c) {
            case 'n': buf[0] = '\n'; break;
            case 't': buf[0] = '\t'; break;
            case 'r': buf[0] = '\r'; break;
            case 'b': buf[0] = '\b'; break;
            case 'f': buf[0] = '\f'; break;
            case 'u': {
                unsigned cp = 0;
                int got = 0;
                for (; got < 4 && i < n; got++, i++) {
                    char h = s[i];
                    cp = cp * 16 + (unsigned)(h >= '0' && h <= '9'   ? h - '0'
                                              : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                              : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                                     : 0);
                }
                if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
                    unsigned lo = (unsigned)strtoul((char[5]){s[i + 2], s[i + 3], s[i + 4], s[i + 5], 0},
                                                    NULL, 16);
                    if (lo >= 0xDC00 && lo < 0xE000) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        i += 6;
                    }
                }
                if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD; /* lone surrogate */
                if (cp == 0) cp = 0xFFFD;                     /* no NUL inside C strings */
                if (cp < 0x80) {
                    buf[0] = (char)cp;
                } else if (cp < 0x800) {
                    buf[0] = (char)(0xC0 | cp >> 6);
                    buf[1] = (char)(0x80 | (cp & 0x3F));
                    k = 2;
                } else if (cp < 0x10000) {
                    buf[0] = (char)(0xE0 | cp >> 12);
                    buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    buf[2] = (char)(0x80 | (cp & 0x3F));
                    k = 3;
                } else {
                    buf[0] = (char)(0xF0 | cp >> 18);
                    buf[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
                    buf[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    buf[3] = (char)(0x80 | (cp & 0x3F));
                    k = 4;
                }
                break;
            }
            default: buf[0] = c; /* \" \\ \/ */
            }
        }
        if (o + k >= cap) break;
        memcpy(out + o, buf, k);
        o += k;
    }
    out[o] = '\0';
    return out;
}

struct span {
    const char *s;
    size_t n;
    bool esc, set;
};

/* pid / tid: an int, a string, null or absent; kept as its text with a
 * type letter, so 7 and "7" stay different threads. */
struct ident {
    char type; /* 0 absent, 'i' number, 's' string, 'n' null */
    struct span text;
};

struct event {
    char ph;
    bool has_ph;
    struct span name, cat, args, id;
    int64_t ts, dur;
    bool has_ts, has_dur, bad_ts, bad_dur;
    struct ident pid, tid;
    int nkeys;
};

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Whole microseconds of up to 16 digits (an epoch time in µs has 16),
 * converted while they are scanned: the end of the number, or NULL for
 * anything else (a sign, fraction, exponent, more digits, the buffer's
 * end), which us_to_ns then reads. */
static inline const char *whole_us(const char *p, const char *e, int64_t *ns)
{
    uint64_t v;
    const char *q = tl_digits_value(p, e, &v);
    if (q == p || q - p > 16 || q >= e) return NULL;
    char c = *q;
    if (c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+' || v > INT64_MAX / 1000) return NULL;
    *ns = (int64_t)v * 1000;
    return q;
}
#endif

static bool parse_time(struct jp *j, int64_t *ns, bool *has, bool *bad)
{
    const char *s;
    size_t n;
    *has = false;
    *bad = false;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const char *q = whole_us(j->p, j->e, ns);
    if (q) {
        j->p = q;
        *has = true;
        return true;
    }
#endif
    if (j->p < j->e && *j->p == '"') {
        bool esc;
        if (!jstr(j, &s, &n, &esc)) return false;
    } else if (j->p < j->e && *j->p == 'n') {
        return jword(j, "null", 4);
    } else if (!jnum(j, &s, &n)) {
        return jskip(j, 1); /* an object or array: not a time */
    }
    if (us_to_ns(s, n, ns)) *has = true;
    else *bad = true;
    return true;
}

static bool parse_ident(struct jp *j, struct ident *id)
{
    memset(id, 0, sizeof *id);
    if (j->p < j->e && *j->p == '"') {
        id->type = 's';
        id->text.set = true;
        return jstr(j, &id->text.s, &id->text.n, &id->text.esc);
    }
    if (j->p < j->e && *j->p == 'n') {
        id->type = 'n';
        return jword(j, "null", 4);
    }
    if (jnum(j, &id->text.s, &id->text.n)) {
        id->type = 'i';
        id->text.set = true;
        return true;
    }
    return jskip(j, 1);
}

static bool parse_span_string(struct jp *j, struct span *sp)
{
    if (j->p < j->e && *j->p == '"') {
        sp->set = true;
        return jstr(j, &sp->s, &sp->n, &sp->esc);
    }
    sp->set = false;
    return jskip(j, 1);
}

/* An `id`: a number or a string, kept as text; id2 {"local"|"global": id}. */
static bool parse_id(struct jp *j, struct span *sp, bool id2)
{
    if (id2 && j->p < j->e && *j->p == '{') {
        j->p++;
        ws(j);
        if (j->p < j->e && *j->p == '}') {
            j->p++;
            return true;
        }
        for (;;) {
            ws(j);
            if (!jstr(j, NULL, NULL, NULL)) return false;
            ws(j);
            if (j->p >= j->e || *j->p++ != ':') return false;
            ws(j);
            if (!parse_id(j, sp, false)) return false;
            ws(j);
            if (j->p < j->e && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->e && *j->p == '}') {
                j->p++;
                return true;
            }
            return false;
        }
    }
    if (j->p < j->e && *j->p == '"') {
        sp->set = true;
        return jstr(j, &sp->s, &sp->n, &sp->esc);
    }
    const char *b = j->p;
    if (jnum(j, &sp->s, &sp->n)) {
        sp->set = true;
        sp->esc = false;
        return true;
    }
    j->p = b;
    sp->set = false;
    return jskip(j, 1);
}

#define KEY_IS(s, n, lit) ((n) == sizeof lit - 1 && !memcmp((s), lit, sizeof lit - 1))

/* Parses one event object starting at j->p; on success j->p is just past
 * its closing brace. False when it is not valid JSON -- or when [p, e)
 * ends before the event does (the caller tells the two apart). */
static bool parse_event(struct jp *jj, struct event *ev)
{
    memset(ev, 0, sizeof *ev);
    struct jp j = *jj;
    if (j.p >= j.e || *j.p != '{') return false;
    j.p++;
    ws(&j);
    if (j.p < j.e && *j.p == '}') {
        j.p++;
        *jj = j;
        return true;
    }
    for (;;) {
        const char *k;
        size_t kn;
        bool kesc;
        if (!jstr(&j, &k, &kn, &kesc) || !jcolon(&j)) return false;
        ev->nkeys++;
        bool ok;
        if (kesc) ok = jskip(&j, 1);
        else if (KEY_IS(k, kn, "ph")) {
            struct span s = {0};
            ok = parse_span_string(&j, &s);
            ev->has_ph = s.set && s.n > 0;
            ev->ph = ev->has_ph ? s.s[0] : 0;
        } else if (KEY_IS(k, kn, "ts")) ok = parse_time(&j, &ev->ts, &ev->has_ts, &ev->bad_ts);
        else if (KEY_IS(k, kn, "dur")) ok = parse_time(&j, &ev->dur, &ev->has_dur, &ev->bad_dur);
        else if (KEY_IS(k, kn, "name")) ok = parse_span_string(&j, &ev->name);
        else if (KEY_IS(k, kn, "cat")) ok = parse_span_string(&j, &ev->cat);
        else if (KEY_IS(k, kn, "pid")) ok = parse_ident(&j, &ev->pid);
        else if (KEY_IS(k, kn, "tid")) ok = parse_ident(&j, &ev->tid);
        else if (KEY_IS(k, kn, "id")) ok = parse_id(&j, &ev->id, false);
        else if (KEY_IS(k, kn, "id2")) ok = parse_id(&j, &ev->id, true);
        else if (KEY_IS(k, kn, "args")) {
            const char *b = j.p;
            ok = jskip(&j, 1);
            ev->args = (struct span){b, (size_t)(j.p - b), false, true};
        } else ok = jskip(&j, 1);
        if (!ok) return false;
        int more = jnext(&j, '}');
        if (more < 0) return false;
        if (more) continue;
        *jj = j;
        return true;
    }
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

/* The key text of a pid, or of a (pid, tid) pair, in st->tmp. */
static size_t ident_key(char *out, size_t cap, const struct ident *pid, const struct ident *tid)
{
    size_t o = 0;
    const struct ident *parts[2] = {pid, tid};
    for (int k = 0; k < (tid ? 2 : 1); k++) {
        const struct ident *id = parts[k];
        if (k && id->type == 0) id = pid; /* a missing tid is the pid (Perfetto) */
        if (o + 2 >= cap) break;
        out[o++] = k ? '\x1f' : '\x1e';
        out[o++] = id->type ? id->type : 'n';
        size_t n = id->text.set ? id->text.n : 0;
        if (n > cap - o - 1) n = cap - o - 1;
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
        return decode(ev->pid.text.s, ev->pid.text.n, ev->pid.text.esc, st->host_buf,
                      sizeof st->host_buf);
    return NULL;
}

static const char *worker_of(struct chrome_state *st, const struct event *ev)
{
    int32_t id = key_id(st, &ev->pid, &ev->tid, false);
    if (id >= 0 && st->thread_name[id] >= 0) return tl_intern_str(st->names, st->thread_name[id]);
    if (ev->tid.type == 's' && ev->tid.text.n)
        return decode(ev->tid.text.s, ev->tid.text.n, ev->tid.text.esc, st->worker_buf,
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
    return decode(s->s, s->n, s->esc, st->cat_buf, sizeof st->cat_buf);
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
        reject(st, st->ev_line, TL_REJ_BAD_FIELDS,
               ev->bad_ts || ev->bad_dur ? "X event with a ts or dur that is not a number"
                                         : "X event without ts");
        return;
    }
    if (ev->dur < 0) {
        reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "X event with a negative dur");
        return;
    }
    if (ev->ts > INT64_MAX - ev->dur) {
        reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "X event ending beyond int64 ns");
        return;
    }
    emit_duration(st, ev, category_of(st, &ev->name, &ev->cat), ev->ts, ev->dur, st->ordinal);
}

static void do_begin(struct chrome_state *st, const struct event *ev)
{
    if (!ev->has_ts) {
        reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "B event without a numeric ts");
        return;
    }
    if (st->open_total >= st->cfg.max_open) {
        reject(st, st->ev_line, TL_REJ_LIMIT, "max_open B events reached");
        return;
    }
    int32_t tid = key_id(st, &ev->pid, &ev->tid, true);
    const char *cat = category_of(st, &ev->name, &ev->cat);
    int32_t name = tl_intern(st->names, cat, strlen(cat));
    if (tid < 0 || name < 0) {
        reject(st, st->ev_line, TL_REJ_LIMIT, "max_names reached");
        return;
    }
    struct thread *t = &st->threads[tid];
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 8;
        struct open_b *v = realloc(t->v, cap * sizeof *v);
        if (!v) {
            reject(st, st->ev_line, TL_REJ_LIMIT, "out of memory for open B events");
            return;
        }
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (struct open_b){name, ev->ts, st->ev_line, st->ordinal};
    st->open_total++;
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
        reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "E event without a numeric ts");
        return; /* the B stays open: a later E may close it */
    }
    struct open_b b = t->v[--t->n];
    st->open_total--;
    const char *name = tl_intern_str(st->names, b.name);
    if (ev->name.set && !st->by_cat) {
        /* catapult closes the open slice anyway ("titles do not match") */
        const char *en = decode(ev->name.s, ev->name.n, ev->name.esc, st->tmp, sizeof st->tmp);
        if (*en && strcmp(en, name)) st->counters[CC_NON_NESTED_END]++;
    }
    if (ev->ts < b.ts_ns) {
        reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "E event before its B");
        return;
    }
    emit_duration(st, ev, name, b.ts_ns, ev->ts - b.ts_ns, b.ordinal);
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
        reject(st, st->ev_line, TL_REJ_BAD_VALUE, series);
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
        decode(k, kn, kesc, key, sizeof key);
        if (j.p < j.e && *j.p == '"') {
            if (!jstr(&j, &v, &vn, &vesc)) return;
            cb(st, ev, key, v, vn, true, ctx);
        } else if (j.p < j.e && ((*j.p >= '0' && *j.p <= '9') || *j.p == '-')) {
            if (!jnum(&j, &v, &vn)) return;
            cb(st, ev, key, v, vn, false, ctx);
        } else if (!jskip(&j, 1)) {
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
    return to_double(v, n, d);
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
        if ((type || !strcmp(key, "Device Id")) && to_double(v, n, &d) && fabs(d) < 1e18) {
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
    size_t kn = strlen(key); /* below 256: decode() cut it */
    memcpy(x->key, key, kn + 1);
    x->v = d;
}

static void do_samples(struct chrome_state *st, const struct event *ev, bool counter)
{
    if (!ev->has_ts) {
        reject(st, st->ev_line, TL_REJ_BAD_FIELDS,
               counter ? "C event without a numeric ts" : "instant event without a numeric ts");
        return;
    }
    char prefix[4096 + 600], suffix[64] = "";
    const char *name = ev->name.set ? decode(ev->name.s, ev->name.n, ev->name.esc, st->cat_buf,
                                             sizeof st->cat_buf)
                                    : "(no name)";
    size_t np = strlen(name); /* decode() keeps it below sizeof st->cat_buf */
    memcpy(prefix, name, np + 1);
    if (counter && ev->id.set) {
        char id[512];
        snprintf(prefix + np, sizeof prefix - np, "[%s]",
                 decode(ev->id.s, ev->id.n, ev->id.esc, id, sizeof id));
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
    const char *text = decode(c.name.s, c.name.n, esc, st->tmp, sizeof st->tmp);
    int32_t key = key_id(st, &ev->pid, proc ? NULL : &ev->tid, true);
    int32_t name = tl_intern(st->names, text, strlen(text));
    if (key < 0 || name < 0) {
        reject(st, st->ev_line, TL_REJ_LIMIT, "max_names reached");
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

/* One parsed event. */
static void handle_event(struct chrome_state *st, const struct event *evp)
{
    const struct event ev = *evp;
    st->stats.lines++;
    if (!ev.nkeys) {
        st->counters[CC_EMPTY]++; /* JAX/XLA end traceEvents with {} */
        return;
    }
    st->ordinal++;
    if (!ev.has_ph) {
        st->counters[CC_NO_PH]++;
        reject(st, st->ev_line, TL_REJ_BAD_FIELDS, "event without ph");
        return;
    }
    count_phase(st, ev.ph);
    switch (ev.ph) {
    case 'X': do_complete(st, &ev); break;
    case 'B': do_begin(st, &ev); break;
    case 'E': do_end(st, &ev); break;
    case 'i':
    case 'I': do_samples(st, &ev, false); break;
    case 'C': do_samples(st, &ev, true); break;
    case 'M': do_metadata(st, &ev); break;
    default: break; /* counted above */
    }
}

/* ---------------------------------------------------------------- container */

static bool blank(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static void ignore_rest(struct chrome_state *st, const char *why)
{
    reject(st, st->line, TL_REJ_BAD_DOCUMENT, why);
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
        reject(st, st->ev_line, TL_REJ_TOO_LARGE, "event over max_event");
    } else if (!parse_event(&j, &ev) || j.p != p + n) {
        st->stats.lines++;
        reject(st, st->ev_line, TL_REJ_BAD_JSON, "event is not valid JSON");
    } else {
        handle_event(st, &ev);
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
            size_t used = vscan_run(st, &st->vs, buf + i, len - i, &done);
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
                reject(st, st->line, TL_REJ_BAD_DOCUMENT, "traceEvents is not an array");
            }
            st->vs = (struct vscan){0};
            st->cs = C_OBJ_SKIP;
            break;
        case C_OBJ_SKIP:
            i += vscan_run(st, &st->vs, buf + i, len - i, &done);
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
                if (parse_event(&j, &ev) && (size_t)(j.p - (buf + i)) <= st->cfg.max_event) {
                    st->line += j.nl;
                    i = (size_t)(j.p - buf);
                    handle_event(st, &ev);
                    break;
                }
                st->vs = (struct vscan){0};
                size_t used = vscan_run(st, &st->vs, buf + i, len - i, &done);
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
            size_t used = vscan_run(st, &st->vs, buf + i, len - i, &done);
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
            i += vscan_run(st, &st->vs, buf + i, len - i, &done);
            if (done) {
                event_done(st, NULL, 0);
                st->cs = C_ARR;
            }
            break;
        case C_ELEM_SKIP:
            i += vscan_run(st, &st->vs, buf + i, len - i, &done);
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
        reject(st, st->ev_line, TL_REJ_TRUNCATED, "half-written last event dropped");
        if (!st->object_form) st->counters[CC_UNTERMINATED]++;
        else reject(st, st->line, TL_REJ_TRUNCATED, "trace object never closed");
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
        reject(st, st->line, TL_REJ_TRUNCATED, "trace object never closed");
        break;
    case C_DONE:
        if (st->object_form && !st->saw_events_array)
            reject(st, st->line, TL_REJ_NO_RESOURCES, "no traceEvents array");
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
    tl_buf_free(&st->carry);
    for (int i = 0; i < st->nglobs; i++) free(st->globs[i].s);
    free(st->globs);
    free(st);
}

static enum tl_err chrome_open(void **state, const void *config, const struct tl_emit *emit)
{
    struct chrome_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct chrome_config *)config;
    st->emit = *emit;
    if (strcmp(st->cfg.category, "name") && strcmp(st->cfg.category, "cat")) {
        fprintf(stderr, "tasklens: chrome.category is name or cat, not '%s'\n", st->cfg.category);
        free(st);
        return TL_ERR_USAGE;
    }
    st->by_cat = !strcmp(st->cfg.category, "cat");
    st->names = tl_intern_new(st->cfg.max_names);
    if (!st->names) {
        free(st);
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

static size_t chrome_counters(const void *state, const char *const **names, const uint64_t **values)
{
    const struct chrome_state *st = state;
    *names = counter_names;
    *values = st->counters;
    return CC_COUNT;
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
    .open = chrome_open,
    .feed = chrome_feed,
    .finish = chrome_finish,
    .close = chrome_close,
    .stats = chrome_stats,
    .counters = chrome_counters,
    .set_name = chrome_set_name,
    .messages = TL_MSG_EVENTS,
};
