/* Work Queue / TaskVine: the resources JSON scanner. cctools writes every
 * resources object as {"key":[value,"unit"],...}; one pass over the bytes
 * fills a task's measured, allocated or requested resources, units through
 * the one cctools table (cctools_units.h).
 *
 * A header of static functions, included by events.c alone: the scanner
 * runs on every task line and is inlined with its target a constant, as it
 * was when the parser was one file (an exported scanner cost 0.2 % more
 * instructions on a Work Queue summary, callgrind). */
#ifndef TL_PARSERS_WQ_SCAN_H
#define TL_PARSERS_WQ_SCAN_H

#include "parsers/wq/wq_internal.h"

/* ---------------------------------------------------------------- JSON */



/* Keys are few and short: dispatch on the length, then memcmp against the
 * two or three names of that length. */
static enum jkey json_key_lookup(const char *k, size_t n)
{
#define KEY(name, key)                                                                             \
    if (!memcmp(k, name, n)) return key
    switch (n) {
    case 3: KEY("end", K_NONE); break;
    case 4:
        KEY("disk", K_DISK);
        KEY("gpus", K_GPUS);
        break;
    case 5: KEY("cores", K_CORES); break;
    case 6: KEY("memory", K_MEMORY); break;
    case 8: KEY("cpu_time", K_CPU_TIME); break;
    case 9:
        KEY("wall_time", K_WALL_TIME);
        KEY("bandwidth", K_BANDWIDTH);
        KEY("cores_avg", K_CORES_AVG);
        break;
    case 10:
        KEY("bytes_read", K_BYTES_READ);
        KEY("bytes_sent", K_BYTES_SENT);
        break;
    case 11:
        KEY("swap_memory", K_SWAP_MEMORY);
        KEY("total_files", K_TOTAL_FILES);
        break;
    case 12: KEY("machine_cpus", K_MACHINE_CPUS); break;
    case 13:
        KEY("bytes_written", K_BYTES_WRITTEN);
        KEY("wq_input_size", K_INPUT_SIZE);
        KEY("wq_input_time", K_INPUT_TIME);
        break;
    case 14:
        KEY("virtual_memory", K_VIRTUAL_MEMORY);
        KEY("bytes_received", K_BYTES_RECEIVED);
        KEY("wq_output_size", K_OUTPUT_SIZE);
        KEY("wq_output_time", K_OUTPUT_TIME);
        KEY("size_input_mgr", K_INPUT_SIZE);
        KEY("time_input_mgr", K_INPUT_TIME);
        break;
    case 15:
        KEY("total_processes", K_TOTAL_PROCESSES);
        KEY("vine_input_size", K_INPUT_SIZE);
        KEY("vine_input_time", K_INPUT_TIME);
        KEY("size_output_mgr", K_OUTPUT_SIZE);
        KEY("time_output_mgr", K_OUTPUT_TIME);
        KEY("time_worker_end", K_WORKER_END);
        break;
    case 16:
        KEY("context_switches", K_CONTEXT_SWITCHES);
        KEY("vine_output_size", K_OUTPUT_SIZE);
        KEY("vine_output_time", K_OUTPUT_TIME);
        break;
    case 17: KEY("time_worker_start", K_WORKER_START); break;
    case 24: KEY("max_concurrent_processes", K_MAX_CONCURRENT_PROCESSES); break;
    }
    return K_NONE;
#undef KEY
}


/* What each key measures, for its unit (cctools_units.h): a table, one
 * load per value (a switch here cost 0.2 % of a Work Queue summary). */
static const uint8_t key_kinds[] = {
    [K_MEMORY] = TL_CCTOOLS_BYTES, [K_VIRTUAL_MEMORY] = TL_CCTOOLS_BYTES,
    [K_SWAP_MEMORY] = TL_CCTOOLS_BYTES, [K_DISK] = TL_CCTOOLS_BYTES,
    [K_BYTES_READ] = TL_CCTOOLS_BYTES, [K_BYTES_WRITTEN] = TL_CCTOOLS_BYTES,
    [K_BYTES_RECEIVED] = TL_CCTOOLS_BYTES, [K_BYTES_SENT] = TL_CCTOOLS_BYTES,
    [K_INPUT_SIZE] = TL_CCTOOLS_BYTES, [K_OUTPUT_SIZE] = TL_CCTOOLS_BYTES,
    [K_WALL_TIME] = TL_CCTOOLS_SECONDS, [K_CPU_TIME] = TL_CCTOOLS_SECONDS,
    [K_INPUT_TIME] = TL_CCTOOLS_SECONDS, [K_OUTPUT_TIME] = TL_CCTOOLS_SECONDS,
    [K_WORKER_START] = TL_CCTOOLS_SECONDS, [K_WORKER_END] = TL_CCTOOLS_SECONDS,
    [K_BANDWIDTH] = TL_CCTOOLS_COUNT, [K_GPUS] = TL_CCTOOLS_COUNT, [K_CORES] = TL_CCTOOLS_COUNT,
    [K_CORES_AVG] = TL_CCTOOLS_COUNT, [K_MACHINE_CPUS] = TL_CCTOOLS_COUNT,
    [K_CONTEXT_SWITCHES] = TL_CCTOOLS_COUNT, [K_MAX_CONCURRENT_PROCESSES] = TL_CCTOOLS_COUNT,
    [K_TOTAL_PROCESSES] = TL_CCTOOLS_COUNT, [K_TOTAL_FILES] = TL_CCTOOLS_COUNT,
};

/* A value in its unit to canonical; NaN (rejected by store_value, counted)
 * for a unit its key cannot have. */
static inline __attribute__((always_inline)) double canonical_value(enum jkey key, double v, const char *u, size_t n)
{
    enum tl_cctools_kind kind = (enum tl_cctools_kind)key_kinds[key];
    if (n == 2 && u[0] == 'M' && u[1] == 'B' && kind == TL_CCTOOLS_BYTES) /* the most common */
        return whole_bytes(v * 1048576.0);
    double f = tl_cctools_unit(kind, u, n);
    if (!f) return NAN;
    return f >= 1024.0 ? whole_bytes(v * f) : v * f; /* KB, MB, GB: see mib_bytes */
}

/* The record metric of each key (worker start/end are times of day, kept apart). */
static const int8_t wq_to_metric[] = {
    [K_WALL_TIME] = TL_M_WALL_TIME_S,
    [K_CPU_TIME] = TL_M_CPU_TIME_S,
    [K_MEMORY] = TL_M_MAX_RSS_BYTES,
    [K_VIRTUAL_MEMORY] = TL_M_VIRTUAL_MEMORY_BYTES,
    [K_SWAP_MEMORY] = TL_M_SWAP_BYTES,
    [K_DISK] = TL_M_DISK_BYTES,
    [K_BYTES_READ] = TL_M_BYTES_READ,
    [K_BYTES_WRITTEN] = TL_M_BYTES_WRITTEN,
    [K_BYTES_RECEIVED] = TL_M_BYTES_RECEIVED,
    [K_BYTES_SENT] = TL_M_BYTES_SENT,
    [K_BANDWIDTH] = TL_M_BANDWIDTH_MBPS,
    [K_GPUS] = TL_M_GPUS,
    [K_CORES] = TL_M_CORES,
    [K_CORES_AVG] = TL_M_CORES_AVG,
    [K_MACHINE_CPUS] = TL_M_MACHINE_CPUS,
    [K_CONTEXT_SWITCHES] = TL_M_CONTEXT_SWITCHES,
    [K_MAX_CONCURRENT_PROCESSES] = TL_M_MAX_CONCURRENT_PROCESSES,
    [K_TOTAL_PROCESSES] = TL_M_TOTAL_PROCESSES,
    [K_TOTAL_FILES] = TL_M_TOTAL_FILES,
    [K_INPUT_SIZE] = TL_M_INPUT_BYTES,
    [K_OUTPUT_SIZE] = TL_M_OUTPUT_BYTES,
    [K_INPUT_TIME] = TL_M_INPUT_TIME_S,
    [K_OUTPUT_TIME] = TL_M_OUTPUT_TIME_S,
    [K_WORKER_START] = -1,
    [K_WORKER_END] = -1,
};
_Static_assert(TL_M_WALL_TIME_S < WQ_NMETRICS && TL_M_CPU_TIME_S < WQ_NMETRICS &&
                   TL_M_MAX_RSS_BYTES < WQ_NMETRICS && TL_M_VIRTUAL_MEMORY_BYTES < WQ_NMETRICS &&
                   TL_M_SWAP_BYTES < WQ_NMETRICS && TL_M_DISK_BYTES < WQ_NMETRICS &&
                   TL_M_BYTES_READ < WQ_NMETRICS && TL_M_BYTES_WRITTEN < WQ_NMETRICS &&
                   TL_M_BYTES_RECEIVED < WQ_NMETRICS && TL_M_BYTES_SENT < WQ_NMETRICS &&
                   TL_M_BANDWIDTH_MBPS < WQ_NMETRICS && TL_M_GPUS < WQ_NMETRICS &&
                   TL_M_CORES < WQ_NMETRICS && TL_M_CORES_AVG < WQ_NMETRICS &&
                   TL_M_MACHINE_CPUS < WQ_NMETRICS && TL_M_CONTEXT_SWITCHES < WQ_NMETRICS &&
                   TL_M_MAX_CONCURRENT_PROCESSES < WQ_NMETRICS && TL_M_TOTAL_PROCESSES < WQ_NMETRICS &&
                   TL_M_TOTAL_FILES < WQ_NMETRICS && TL_M_INPUT_BYTES < WQ_NMETRICS &&
                   TL_M_OUTPUT_BYTES < WQ_NMETRICS && TL_M_INPUT_TIME_S < WQ_NMETRICS &&
                   TL_M_OUTPUT_TIME_S < WQ_NMETRICS,
               "a measured attempt keeps Work Queue's metrics only (struct measured)");

static void store_measured(struct measured *m, enum jkey key, double v)
{
    if (key == K_WORKER_START) {
        m->worker_start = v;
        return;
    }
    if (key == K_WORKER_END) {
        m->worker_end = v;
        return;
    }
    int metric = wq_to_metric[key];
    m->v[metric] = v;
    m->present |= (uint64_t)1 << metric;
}

static void store_box(struct box *b, enum jkey key, double v)
{
    int i;
    switch (key) {
    case K_CORES: i = BOX_CORES; break;
    case K_MEMORY: i = BOX_MEMORY; break;
    case K_DISK: i = BOX_DISK; break;
    case K_GPUS: i = BOX_GPUS; break;
    case K_WALL_TIME: i = BOX_WALL; break;
    default: return;
    }
    b->v[i] = v;
    b->present |= (uint8_t)(1u << i);
}

/* A known key whose value is not a number (a string, true, null, an
 * object): the line is rejected for it, as for a negative value, rather
 * than the resource vanishing from the task without a word. */
static inline void not_a_number(enum jkey k, struct bad_value *bad)
{
    if (!bad->n++) {
        bad->key = k;
        bad->v = NAN;
    }
}

/* Stores a value read for key k unless no measurement can have it (negative,
 * past the double range): that one goes to *bad, and its line is rejected.
 * Checked here, once per value read, rather than per value of every record
 * emitted (callgrind, Colmena log, `lines`: +0.3 % against +1.8 %). */
static inline void store_value(enum json_target target, struct measured *m, struct box *b,
                               enum jkey k, double v, struct bad_value *bad)
{
    if (__builtin_expect(!tl_value_possible(v), 0)) {
        if (!bad->n++) {
            bad->key = k;
            bad->v = v;
        }
    } else if (target == J_MEASURED) {
        store_measured(m, k, v);
    } else {
        store_box(b, k, v);
    }
}

/* Scans a JSON string starting at the opening quote; returns the position
 * after the closing quote, or NULL. Escapes are skipped, not decoded (keys
 * and units in rmsummary JSON never need decoding). */
static inline __attribute__((always_inline)) const char *json_string(const char *p, const char *end,
                                                                   struct span *s)
{
    const char *b = ++p; /* past the opening quote */
    for (;;) {
        p = tl_find_quote_or_backslash(p, end);
        if (p >= end) return NULL;
        if (*p == '"') break;
        p += 2; /* backslash and the escaped byte */
    }
    s->p = b;
    s->n = (size_t)(p - b);
    return p + 1;
}

/* Steps over a number without converting it (values of keys we ignore). */
static const char *json_skip_number(const char *p, const char *end)
{
    const char *b = p;
    while (p < end && ((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == '.' ||
                       *p == 'e' || *p == 'E' || (*p >= 'a' && *p <= 'z')))
        p++;
    return p > b ? p : NULL;
}

/* Skips any JSON value (for keys we do not use), with a depth bound. */
static const char *json_skip(const char *p, const char *end, int depth)
{
    if (p >= end || depth > 32) return NULL;
    if (*p == '"') {
        struct span s;
        return json_string(p, end, &s);
    }
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = skip_spaces(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                if (p >= end || *p != '"') return NULL;
                struct span k;
                p = json_string(p, end, &k);
                if (!p) return NULL;
                p = skip_spaces(p, end);
                if (p >= end || *p != ':') return NULL;
                p = skip_spaces(p + 1, end);
            }
            p = json_skip(p, end, depth + 1);
            if (!p) return NULL;
            p = skip_spaces(p, end);
            if (p >= end) return NULL;
            if (*p == close) return p + 1;
            if (*p != ',') return NULL;
            p = skip_spaces(p + 1, end);
        }
    }
    if (end - p >= 4 && (!memcmp(p, "true", 4) || !memcmp(p, "null", 4))) return p + 4;
    if (end - p >= 5 && !memcmp(p, "false", 5)) return p + 5;
    return json_skip_number(p, end);
}

/* Whether the n (8-16) bytes at p are t's (t zero-padded to 16 bytes); 16
 * bytes must be readable at p. Two word compares, no loop. */
static inline bool bytes16_are(const char *p, const char *t, unsigned n)
{
    uint64_t a, b, x, y;
    memcpy(&a, p, 8);
    memcpy(&b, p + 8, 8);
    memcpy(&x, t, 8);
    memcpy(&y, t + 8, 8);
    uint64_t mb = n >= 16 ? ~0ULL : n <= 8 ? 0 : (1ULL << (8 * (n - 8))) - 1;
    return a == x && ((b ^ y) & mb) == 0;
}

/* The four members nearly every rmsummary, allocation and worker box
 * holds, as every cctools release spells them: key, bracket and unit
 * matched as whole words, so neither string is searched or looked up. */
static const struct common_member {
    char text[16]; /* "key":[ */
    char unit[16]; /* ,"unit"] */
    uint8_t n, un;
    enum jkey key;
    double factor;
} common_members[] = {
    {"\"cores\":[", ",\"cores\"]", 9, 9, K_CORES, 1.0},
    {"\"disk\":[", ",\"MB\"]", 8, 6, K_DISK, 1048576.0},
    {"\"memory\":[", ",\"MB\"]", 10, 6, K_MEMORY, 1048576.0},
    {"\"gpus\":[", ",\"gpus\"]", 8, 8, K_GPUS, 1.0},
};

/* Whether the c->un bytes at ne are c's unit (,"MB"] ...) and a ',' or
 * '}' follows: a word compare and at most one byte more. */
static inline bool unit_is(const char *ne, const char *end, const struct common_member *c)
{
    if (end - ne < 8 || end - ne < c->un + 1) return false;
    uint64_t a, x;
    memcpy(&a, ne, 8);
    memcpy(&x, c->unit, 8);
    uint64_t mask = c->un >= 8 ? ~0ULL : (1ULL << (8 * c->un)) - 1;
    if ((a ^ x) & mask || (c->un > 8 && ne[8] != c->unit[8])) return false;
    return ne[c->un] == ',' || ne[c->un] == '}';
}

/* Parses one rmsummary JSON object {"key":[value,"unit"],...} at p, storing
 * the known keys into m (J_MEASURED) or b (J_BOX). Returns the position after
 * the closing brace, or NULL when malformed. Impossible values are left out
 * and counted in *bad, for the caller to reject the line. */
static inline const char *scan_resources(const char *p, const char *end, enum json_target target,
                                         struct measured *m, struct box *b, struct bad_value *bad)
{
    if (p >= end || *p != '{') return NULL;
    p = skip_spaces(p + 1, end);
    if (p < end && *p == '}') return p + 1;
    for (;;) {
        /* cores, disk, memory, gpus first (see common_members) */
        if (end - p >= 16) {
            const struct common_member *c;
            switch (p[1]) {
            case 'c': c = &common_members[0]; break;
            case 'd': c = &common_members[1]; break;
            case 'm': c = &common_members[2]; break;
            case 'g': c = &common_members[3]; break;
            default: c = NULL;
            }
            double v;
            const char *ne;
            if (c && bytes16_are(p, c->text, c->n) && (ne = tl_scan_decimal(p + c->n, end, &v)) &&
                unit_is(ne, end, c)) {
                if (target != J_IGNORE) {
                    v = c->factor >= 1024.0 ? whole_bytes(v * c->factor) : v * c->factor;
                    store_value(target, m, b, c->key, v, bad);
                }
                if (ne[c->un] == '}') return ne + c->un + 1;
                p = skip_spaces(ne + c->un + 1, end);
                continue;
            }
        }
        /* The form every cctools release writes, "key":[number,"unit"]
         * with no spaces, straight through; anything else (spaces, a bare
         * number, an exponent, escapes, other values) from the member's
         * start in the general steps below, which accept the same. */
        if (p < end && *p == '"') {
            const char *ke = tl_find_quote_or_backslash(p + 1, end);
            if (end - ke > 3 && ke[0] == '"' && ke[1] == ':' && ke[2] == '[') {
                size_t kn = (size_t)(ke - p - 1);
                enum jkey k = kn && target != J_IGNORE ? json_key_lookup(p + 1, kn) : K_NONE;
                double v = 0;
                const char *ne;
                if (k == K_NONE) { /* not stored: digits[.digits] stepped over (the general
                                    * steps below skip any number of such a key) */
                    ne = tl_skip_digits(ke + 3, end);
                    if (ne == ke + 3) ne = NULL;
                    else if (ne < end && *ne == '.') ne = tl_skip_digits(ne + 1, end);
                } else {
                    ne = tl_scan_decimal(ke + 3, end, &v);
                }
                if (ne && end - ne > 2 && ne[0] == ',' && ne[1] == '"') {
                    const char *ub = ne + 2, *ue = tl_find_quote_or_backslash(ub, end);
                    if (end - ue > 2 && ue[0] == '"' && ue[1] == ']' && (ue[2] == ',' || ue[2] == '}')) {
                        if (k != K_NONE)
                            store_value(target, m, b, k, canonical_value(k, v, ub, (size_t)(ue - ub)),
                                        bad);
                        if (ue[2] == '}') return ue + 3;
                        p = skip_spaces(ue + 3, end);
                        continue;
                    }
                }
            }
        }
        if (p >= end || *p != '"') return NULL;
        struct span key;
        p = json_string(p, end, &key);
        if (!p) return NULL;
        p = skip_spaces(p, end);
        if (p >= end || *p != ':') return NULL;
        p = skip_spaces(p + 1, end);
        if (p >= end) return NULL;
        enum jkey k = key.n ? json_key_lookup(key.p, key.n) : K_NONE;
        if (k == K_NONE || target == J_IGNORE) {
            p = json_skip(p, end, 1);
            if (!p) return NULL;
            goto next;
        }
        double v = 0;
        bool have = false;
        struct span unit = {"", 0};
        if (*p == '[') {
            /* [value, "unit"] -- the form every release writes */
            p = skip_spaces(p + 1, end);
            if (p < end && (*p == '-' || *p == 'n' || *p == 'i' || (*p >= '0' && *p <= '9'))) {
                p = tl_scan_double(p, end, &v);
                if (!p) return NULL;
                have = true;
                p = skip_spaces(p, end);
                if (p < end && *p == ',') {
                    p = skip_spaces(p + 1, end);
                    if (p >= end || *p != '"') return NULL;
                    p = json_string(p, end, &unit);
                    if (!p) return NULL;
                    p = skip_spaces(p, end);
                }
                if (p >= end || *p != ']') return NULL;
                p++;
            } else {
                p = json_skip(p - 1, end, 1); /* back to '[' */
                if (!p) return NULL;
                not_a_number(k, bad); /* ["12", "MB"], [true, ...] */
            }
        } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            p = tl_scan_double(p, end, &v);
            if (!p) return NULL;
            have = true;
        } else {
            p = json_skip(p, end, 1);
            if (!p) return NULL;
            not_a_number(k, bad); /* "12", true, null, {...} */
        }
        if (have) /* nan, inf, negatives, unknown units too: store_value sorts them out */
            store_value(target, m, b, k, canonical_value(k, v, unit.p, unit.n), bad);
    next:
        p = skip_spaces(p, end);
        if (p >= end) return NULL;
        if (*p == '}') return p + 1;
        if (*p != ',') return NULL;
        p = skip_spaces(p + 1, end);
    }
}

#endif
