/* The Chrome trace-event parser's private header: what its layers share
 * (the design is in chrome.c's opening comment). Split by layer, as Fluent
 * Bit's in_tail/ is:
 *
 *   chrome.c   the container (the array or object around the events, read
 *              in any split) and the plugin
 *   event.c    numbers, the lenient scanner that finds where an event ends,
 *              and the strict parser of one event
 *   records.c  what an event means: durations (X, B/E), samples (C, i),
 *              metadata (M), and the records they make
 *   flows.c    flow events (s/t/f, v2's bind_id) bound to the slices they
 *              join: the dependencies, when the consumer wants them
 *
 * The JSON cursor helpers below are inline: they run for every byte of
 * every event. */
#ifndef TL_PARSERS_CHROME_INTERNAL_H
#define TL_PARSERS_CHROME_INTERNAL_H

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/intern.h"
#include "core/numfmt.h"
#include "parsers/jscan.h"
#include "parsers/parser.h"

struct chrome_config {
    const char *category;
    const char *sample_args;
    size_t max_event;
    long long max_open;
    size_t max_names;
    size_t max_flow_bytes; /* what binding flow events may hold (flows.c) */
};

#define DEFAULT_SAMPLE_ARGS                                                                        \
    "cpu,memory,num_fds,host_net_io.*,host_disk_io.*,host_cpu.*,gpu_*,gpu-*,"                     \
    "Total Allocated,Total Reserved,Bytes"

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

/* ---------------------------------------------------------------- events */

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
    /* The flow keys, valid only when flow_keys is set: the parser clears
     * what is above and these only for an event that has one (clearing 56
     * more bytes an event cost 0.3 % of the Kineto trace's summary). */
    bool flow_keys;
    bool flow_in, flow_out;  /* v2 flows: this slice ends a flow, starts one */
    struct span bp, bind_id; /* binding point ("e": the enclosing slice); v2's flow id */
};

#define KEY_IS(s, n, lit) ((n) == sizeof lit - 1 && !memcmp((s), lit, sizeof lit - 1))

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

/* Flows (flows.c), held only when the consumer wants edges: each slice's
 * thread and times, and each flow point, until the input ends. */
struct flow_slice {
    int64_t start, end;
    uint64_t ordinal; /* its task id */
    int32_t thread;
};

struct flow_point {
    int64_t ts;
    uint64_t seq;   /* input order */
    uint64_t slice; /* the ordinal of the slice it binds to; 0: none (yet) */
    int32_t flow;   /* interned (cat, name, id), or v2's bind_id */
    int32_t thread;
    char ph;        /* s, t or f */
    bool enclosing; /* binds to the slice around ts (else the next one to start) */
};

struct chrome_flows {
    bool on;
    struct flow_slice *s;
    size_t ns, caps;
    struct flow_point *p;
    size_t np, capp;
    struct tl_intern *ids;
    struct tl_buf depends; /* an edge record's list */
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
    struct chrome_flows flows;
};

/* ---------------------------------------------------------------- across the layers */

/* records.c */
void chrome_reject(struct chrome_state *st, uint64_t line, enum tl_reject why, const char *detail);
void chrome_handle_event(struct chrome_state *st, const struct event *evp);

/* flows.c; the callers test flows.on */
bool chrome_flows_open(struct chrome_state *st);
void chrome_flows_slice(struct chrome_state *st, const struct event *ev, int64_t start, int64_t end, uint64_t ordinal);
void chrome_flows_v2(struct chrome_state *st, const struct event *ev, int64_t start, uint64_t ordinal);
void chrome_flows_point(struct chrome_state *st, const struct event *ev);
void chrome_flows_finish(struct chrome_state *st);
void chrome_flows_close(struct chrome_state *st);

/* event.c */
bool chrome_us_to_ns(const char *s, size_t n, int64_t *out);
bool chrome_to_double(const char *s, size_t n, double *out);
size_t chrome_vscan_run(struct chrome_state *st, struct vscan *v, const char *p, size_t n,
                        bool *done);
bool chrome_jword(struct jp *j, const char *w, size_t n);
bool chrome_jskip(struct jp *j, int depth);
const char *chrome_decode(const char *s, size_t n, bool esc, char *out, size_t cap);
bool chrome_parse_event(struct jp *jj, struct event *ev);

#endif
