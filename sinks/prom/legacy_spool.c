/* Spools written before the point model: line protocol, read back into
 * points once. See remote_write.h.
 *
 * Until the pipeline emitted points (core/point.h), every network sink
 * batched and spooled line protocol and the prometheus sink converted a
 * batch when it sent it. A spool such a tasklens left behind still holds
 * those frames; they are read here -- line protocol by InfluxDB's rules, as
 * tasklens wrote it: `\,` `\ ` `\=` are the character, any other backslash
 * is itself -- into points, encoded by the remote-write codec like any
 * other, and filtered by the sink's measurements as they were then. Nothing
 * new is ever written this way. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/point.h"
#include "sinks/prom/remote_write.h"

/* Reads up to an unescaped stop character into out (unescaped, NUL-ended,
 * at most cap - 1 bytes); the position of the stop (or end), NULL when
 * longer. */
static const char *read_token(const char *p, const char *end, const char *stops, char *out, size_t cap)
{
    size_t n = 0;
    while (p < end && !strchr(stops, *p)) {
        if (*p == '\\' && p + 1 < end && (p[1] == ',' || p[1] == ' ' || p[1] == '=')) p++;
        if (n + 1 >= cap) return NULL;
        out[n++] = *p++;
    }
    out[n] = '\0';
    return p;
}

/* A field's value as a number; false for strings and what does not read. */
static bool field_number(const char *v, size_t n, struct tl_point *p, const char *key)
{
    if (!n || v[0] == '"') return false;
    if (n == 4 && !memcmp(v, "true", 4)) return tl_point_bool(p, key, true), true;
    if (n == 5 && !memcmp(v, "false", 5)) return tl_point_bool(p, key, false), true;
    char tmp[64];
    if (n >= sizeof tmp) return false;
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    if (tmp[n - 1] == 'i' || tmp[n - 1] == 'u') tmp[n - 1] = '\0';
    char *end;
    double x = strtod(tmp, &end);
    if (*end) return false;
    tl_point_float(p, key, x);
    return true;
}

/* The field list's end (the space before the time), skipping quoted strings. */
static const char *fields_end(const char *p, const char *end)
{
    bool quoted = false;
    for (; p < end; p++) {
        if (*p == '\\' && p + 1 < end) p++;
        else if (*p == '"') quoted = !quoted;
        else if (*p == ' ' && !quoted) return p;
    }
    return end;
}

/* One line into p, its strings in scratch (as long as the line: they fit). */
static bool read_line(const char *s, const char *end, struct tl_point *p, char *scratch, size_t cap)
{
    char *w = scratch, *wend = scratch + cap;
    const char *q = read_token(s, end, ", ", w, (size_t)(wend - w));
    if (!q || !*w) return false;
    tl_point_start(p, w, 0);
    w += strlen(w) + 1;
    while (q < end && *q == ',') {
        char *key = w;
        q = read_token(q + 1, end, "=", key, (size_t)(wend - w));
        if (!q || q == end) return false;
        w += strlen(key) + 1;
        char *value = w;
        q = read_token(q + 1, end, ", ", value, (size_t)(wend - w));
        if (!q) return false;
        w += strlen(value) + 1;
        if (p->ntags == TL_POINT_MAX_TAGS) return false;
        tl_point_tag(p, key, value);
    }
    if (q == end || *q != ' ') return false;
    const char *f = q + 1, *fend = fields_end(f, end);
    p->time_ns = fend < end ? strtoll(fend + 1, NULL, 10) : 0;
    while (f < fend) {
        char *key = w;
        f = read_token(f, fend, "=", key, (size_t)(wend - w));
        if (!f || f >= fend) break;
        w += strlen(key) + 1;
        const char *v = ++f;
        bool quoted = false;
        while (f < fend && (quoted || *f != ',')) {
            if (*f == '\\' && f + 1 < fend) f++;
            else if (*f == '"') quoted = !quoted;
            f++;
        }
        field_number(v, (size_t)(f - v), p, key);
        if (f < fend) f++; /* the comma */
    }
    return true;
}

void tl_rw_legacy_encode(const char *lp, size_t len, const char *measurements, struct tl_buf *out)
{
    static __thread struct tl_point pt;
    static __thread char scratch[1 << 17];
    unsigned want = tl_point_measurement_mask(measurements);
    struct tl_buf framed = {0};
    void *state = calloc(1, tl_codec_remote_write.state_size);
    for (const char *p = lp, *end = lp + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p && *p != '#' && (size_t)(le - p) < sizeof scratch / 2 &&
            read_line(p, le, &pt, scratch, sizeof scratch)) {
            bool wanted = false;
            for (int m = 0; m < TL_MEAS_COUNT; m++)
                wanted |= (want >> m & 1) && !strcmp(pt.measurement, tl_measurement_name[m]);
            if (wanted && state) tl_codec_remote_write.point(&framed, &pt, state);
        }
        p = le + 1;
    }
    tl_rw_unframe(framed.data ? framed.data : "", framed.len, out);
    if (framed.oom || !state) out->oom = true;
    tl_buf_free(&framed);
    free(state);
}
