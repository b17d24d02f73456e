/* Chrome trace events: numbers (microseconds to nanoseconds exactly), the
 * lenient scanner that finds where an event ends whatever it holds, and
 * the strict parser of one event's fields. */
#include "parsers/chrome/chrome_internal.h"

/* ---------------------------------------------------------------- numbers */

/* Decimal microseconds (a JSON number, or a numeric string's content) to
 * integer nanoseconds without going through double: up to 19 significant
 * digits are kept as an integer with a decimal exponent, then scaled,
 * rounding half away from zero like Perfetto's llround(v * 1000). */
bool chrome_us_to_ns(const char *s, size_t n, int64_t *out)
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
bool chrome_to_double(const char *s, size_t n, double *out)
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
size_t chrome_vscan_run(struct chrome_state *st, struct vscan *v, const char *p, size_t n,
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

bool chrome_jword(struct jp *j, const char *w, size_t n)
{
    if ((size_t)(j->e - j->p) < n || memcmp(j->p, w, n)) return false;
    j->p += n;
    return true;
}

bool chrome_jskip(struct jp *j, int depth)
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
                                                                      : chrome_jskip(j, depth + 1);
            if (!ok) return false;
            int more = jnext(j, close);
            if (more < 0) return false;
            if (!more) return true;
        }
    }
    case 't': return chrome_jword(j, "true", 4);
    case 'f': return chrome_jword(j, "false", 5);
    case 'n': return chrome_jword(j, "null", 4);
    case 'N': return chrome_jword(j, "NaN", 3); /* Python's json writes these */
    case 'I': return chrome_jword(j, "Infinity", 8);
    case '-':
        if (chrome_jword(j, "-Infinity", 9)) return true;
        return jnum(j, NULL, NULL);
    default: return jnum(j, NULL, NULL);
    }
}

/* Decodes a JSON string's raw content into out (NUL-terminated, cut at
 * cap - 1 bytes on a character boundary). */
const char *chrome_decode(const char *s, size_t n, bool esc, char *out, size_t cap)
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
        return chrome_jword(j, "null", 4);
    } else if (!jnum(j, &s, &n)) {
        return chrome_jskip(j, 1); /* an object or array: not a time */
    }
    if (chrome_us_to_ns(s, n, ns)) *has = true;
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
        return chrome_jword(j, "null", 4);
    }
    if (jnum(j, &id->text.s, &id->text.n)) {
        id->type = 'i';
        id->text.set = true;
        return true;
    }
    return chrome_jskip(j, 1);
}

static bool parse_span_string(struct jp *j, struct span *sp)
{
    if (j->p < j->e && *j->p == '"') {
        sp->set = true;
        return jstr(j, &sp->s, &sp->n, &sp->esc);
    }
    sp->set = false;
    return chrome_jskip(j, 1);
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
    return chrome_jskip(j, 1);
}


/* Parses one event object starting at j->p; on success j->p is just past
 * its closing brace. False when it is not valid JSON -- or when [p, e)
 * ends before the event does (the caller tells the two apart). */
/* A JSON boolean: true or false (anything else is skipped as false). */
static bool parse_bool(struct jp *j, bool *v)
{
    if (j->p < j->e && *j->p == 't') return (*v = true), chrome_jword(j, "true", 4);
    *v = false;
    return chrome_jskip(j, 1);
}

/* The keys of flow events (bp) and of v2 flows on slices (bind_id, flow_in,
 * flow_out); any other key is skipped. Tried after the keys every event
 * has, so they cost an event nothing it does not hold. */
static bool parse_flow_key(struct jp *j, const char *k, size_t kn, struct event *ev)
{
    bool flow = KEY_IS(k, kn, "bp") || KEY_IS(k, kn, "bind_id") || KEY_IS(k, kn, "flow_in") || KEY_IS(k, kn, "flow_out");
    if (!flow) return chrome_jskip(j, 1);
    if (!ev->flow_keys) {
        ev->flow_keys = true;
        ev->flow_in = ev->flow_out = false;
        ev->bp = ev->bind_id = (struct span){0};
    }
    if (KEY_IS(k, kn, "bp")) return parse_span_string(j, &ev->bp);
    if (KEY_IS(k, kn, "bind_id")) return parse_id(j, &ev->bind_id, false);
    if (KEY_IS(k, kn, "flow_in")) return parse_bool(j, &ev->flow_in);
    return parse_bool(j, &ev->flow_out);
}

bool chrome_parse_event(struct jp *jj, struct event *ev)
{
    memset(ev, 0, offsetof(struct event, flow_keys) + 1);
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
        if (kesc) ok = chrome_jskip(&j, 1);
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
            ok = chrome_jskip(&j, 1);
            ev->args = (struct span){b, (size_t)(j.p - b), false, true};
        } else ok = parse_flow_key(&j, k, kn, ev);
        if (!ok) return false;
        int more = jnext(&j, '}');
        if (more < 0) return false;
        if (more) continue;
        *jj = j;
        return true;
    }
}
