/* Line protocol -> Prometheus remote-write WriteRequest: see remote_write.h.
 *
 *   WriteRequest { repeated TimeSeries timeseries = 1; }
 *   TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
 *   Label        { string name = 1; string value = 2; }
 *   Sample       { double value = 1; int64 timestamp = 2; }   (ms) */
#include "sinks/prom/remote_write.h"

#include <snappy-c.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LABELS 32
#define NAME_CAP 256

struct label {
    char name[NAME_CAP];
    size_t nlen;
    char *value; /* unescaped, in the line's scratch buffer */
    size_t vlen;
};

/* One line's pieces, unescaped. */
struct point {
    char meas[NAME_CAP];
    size_t mlen;
    struct label tags[MAX_LABELS];
    int ntags;
    int64_t time_ms;
};

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static void put_varint(struct tl_buf *b, uint64_t v)
{
    while (v >= 0x80) {
        tl_buf_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    tl_buf_putc(b, (char)v);
}

static void put_bytes_field(struct tl_buf *b, unsigned field, const char *p, size_t n)
{
    tl_buf_putc(b, (char)(field << 3 | 2));
    put_varint(b, n);
    tl_buf_append(b, p, n);
}

/* A Prometheus name: [a-zA-Z_:][a-zA-Z0-9_:]*; anything else becomes '_'. */
static size_t sanitize(char *out, const char *in, size_t n, bool colon)
{
    if (n > NAME_CAP - 2) n = NAME_CAP - 2;
    size_t o = 0;
    if (n && in[0] >= '0' && in[0] <= '9') out[o++] = '_';
    for (size_t i = 0; i < n; i++) {
        char c = in[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || (colon && c == ':');
        out[o++] = ok ? c : '_';
    }
    out[o] = '\0';
    return o;
}

/* Reads up to an unescaped stop character into out (unescaped, at most cap
 * bytes); returns the position of the stop (or end), NULL when longer.
 * InfluxDB's rules, which lineproto.c writes by: `\,` `\ ` `\=` are the
 * character, any other backslash is itself (`a\,b` is the name "a\" then an
 * escaped comma: "a\,b"), so every name arrives as a label byte for byte. */
static const char *read_token(const char *p, const char *end, const char *stops, char *out,
                              size_t cap, size_t *olen)
{
    size_t n = 0;
    while (p < end && !strchr(stops, *p)) {
        if (*p == '\\' && p + 1 < end && (p[1] == ',' || p[1] == ' ' || p[1] == '=')) p++;
        if (n == cap) return NULL;
        out[n++] = *p++;
    }
    *olen = n;
    return p;
}

/* Measurement and tags of one line; *fields at the first field. */
static bool read_head(const char *p, const char *end, struct point *pt, char *scratch,
                      const char **fields)
{
    char tmp[NAME_CAP];
    size_t n;
    p = read_token(p, end, ", ", pt->meas, NAME_CAP - 1, &pt->mlen);
    if (!p || !pt->mlen) return false;
    pt->ntags = 0;
    while (p < end && *p == ',') {
        if (pt->ntags == MAX_LABELS - 1) return false;
        struct label *l = &pt->tags[pt->ntags++];
        p = read_token(p + 1, end, "=", tmp, sizeof tmp, &n);
        if (!p || p == end) return false;
        l->nlen = sanitize(l->name, tmp, n, false);
        l->value = scratch; /* the scratch holds the whole line: values fit */
        p = read_token(p + 1, end, ", ", scratch, (size_t)(end - p), &l->vlen);
        if (!p) return false;
        scratch += l->vlen;
    }
    if (p == end || *p != ' ') return false;
    *fields = p + 1;
    return true;
}

static int cmp_label(const void *a, const void *b)
{
    return strcmp(((const struct label *)a)->name, ((const struct label *)b)->name);
}

/* One TimeSeries: labels (sorted, __name__ among them) and one sample. */
static void put_series(struct tl_buf *b, const struct label *labels, int n, double v, int64_t ms)
{
    size_t lsize[MAX_LABELS + 1], total = 0;
    for (int i = 0; i < n; i++) {
        lsize[i] = 1 + varint_len(labels[i].nlen) + labels[i].nlen + 1 + varint_len(labels[i].vlen) +
                   labels[i].vlen;
        total += 1 + varint_len(lsize[i]) + lsize[i];
    }
    size_t ssize = 9 + 1 + varint_len((uint64_t)ms);
    total += 1 + varint_len(ssize) + ssize;
    tl_buf_putc(b, 0x0a);
    put_varint(b, total);
    for (int i = 0; i < n; i++) {
        tl_buf_putc(b, 0x0a);
        put_varint(b, lsize[i]);
        put_bytes_field(b, 1, labels[i].name, labels[i].nlen);
        put_bytes_field(b, 2, labels[i].value, labels[i].vlen);
    }
    tl_buf_putc(b, 0x12);
    put_varint(b, ssize);
    tl_buf_putc(b, 0x09);
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; i++) tl_buf_putc(b, (char)(bits >> (8 * i)));
    tl_buf_putc(b, 0x10);
    put_varint(b, (uint64_t)ms);
}

/* A field's value as a number; false for strings and what does not read. */
static bool field_number(const char *v, size_t n, double *out)
{
    if (!n || v[0] == '"') return false;
    if (n == 4 && !memcmp(v, "true", 4)) return *out = 1, true;
    if (n == 5 && !memcmp(v, "false", 5)) return *out = 0, true;
    char tmp[64];
    if (n >= sizeof tmp) return false;
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    if (tmp[n - 1] == 'i' || tmp[n - 1] == 'u') tmp[n - 1] = '\0';
    char *end;
    *out = strtod(tmp, &end);
    return *end == '\0';
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

/* Every numeric field of one line as a series. Returns the series written. */
static uint64_t encode_line(const char *p, const char *end, struct tl_buf *out,
                            const char *measurements, bool *skipped)
{
    static __thread struct point pt;
    static __thread char scratch[1 << 16];
    const char *fields;
    *skipped = true;
    if (end - p >= (long)sizeof scratch || !read_head(p, end, &pt, scratch, &fields)) return 0;
    char want[NAME_CAP + 2];
    snprintf(want, sizeof want, ",%.*s,", (int)pt.mlen, pt.meas);
    char list[1024];
    snprintf(list, sizeof list, ",%s,", measurements);
    if (!strstr(list, want)) return 0;
    const char *fend = fields_end(fields, end);
    pt.time_ms = fend < end ? strtoll(fend + 1, NULL, 10) / 1000000 : 0;
    struct label labels[MAX_LABELS];
    int n = pt.ntags;
    memcpy(labels + 1, pt.tags, (size_t)n * sizeof *labels);
    uint64_t written = 0;
    for (const char *f = fields; f < fend;) {
        char key[NAME_CAP];
        size_t klen;
        f = read_token(f, fend, "=", key, sizeof key, &klen);
        if (!f || f >= fend) break;
        const char *v = ++f;
        bool quoted = false;
        while (f < fend && (quoted || *f != ',')) {
            if (*f == '\\' && f + 1 < fend) f++;
            else if (*f == '"') quoted = !quoted;
            f++;
        }
        double x;
        if (field_number(v, (size_t)(f - v), &x)) {
            char name[NAME_CAP * 3];
            size_t nn = (size_t)snprintf(name, sizeof name, "%.*s_%.*s", (int)pt.mlen, pt.meas,
                                         (int)klen, key);
            struct label *nl = &labels[0];
            memcpy(nl->name, "__name__", 9);
            nl->nlen = 8;
            char clean[NAME_CAP];
            nl->vlen = sanitize(clean, name, nn < sizeof name ? nn : sizeof name - 1, true);
            nl->value = clean;
            struct label sorted[MAX_LABELS];
            memcpy(sorted, labels, (size_t)(n + 1) * sizeof *sorted);
            qsort(sorted, (size_t)n + 1, sizeof *sorted, cmp_label);
            put_series(out, sorted, n + 1, x, pt.time_ms);
            written++;
        }
        if (f < fend) f++; /* the comma */
    }
    *skipped = written == 0;
    return written;
}

enum tl_err tl_rw_encode(const char *lp, size_t len, const char *measurements, struct tl_buf *out,
                         uint64_t *series, uint64_t *skipped)
{
    const char *p = lp, *end = lp + len;
    *series = *skipped = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p && *p != '#') {
            bool skip;
            *series += encode_line(p, le, out, measurements, &skip);
            *skipped += skip;
        }
        p = le + 1;
    }
    return out->oom ? TL_ERR_NOMEM : TL_OK;
}

enum tl_err tl_rw_snappy(const char *in, size_t len, struct tl_buf *out)
{
    size_t cap = snappy_max_compressed_length(len);
    out->len = 0;
    if (!tl_buf_reserve(out, cap)) return TL_ERR_NOMEM;
    size_t n = cap;
    if (snappy_compress(in, len, out->data, &n) != SNAPPY_OK) return TL_ERR_NOMEM;
    out->len = n;
    return TL_OK;
}

/* ------------------------------------------------------------ the wire */

static const char *const rw_headers[] = {"Content-Type: application/x-protobuf", "Content-Encoding: snappy",
                                         "X-Prometheus-Remote-Write-Version: 0.1.0", NULL};

static void rw_where(const struct tl_http_cfg *cfg, struct tl_buf *out)
{
    tl_buf_puts(out, " (remote write)");
}

static enum tl_err rw_body(const struct tl_http_cfg *cfg, const char *lp, size_t len, struct tl_buf *scratch,
                           struct tl_buf *out, bool *empty)
{
    uint64_t series = 0, skipped = 0;
    enum tl_err rc = tl_rw_encode(lp, len, cfg->measurements, scratch, &series, &skipped);
    if (!rc) rc = tl_rw_snappy(scratch->data ? scratch->data : "", scratch->len, out);
    *empty = !series;
    return rc;
}

/* 400 is partial (samples refused: out of order, duplicate); a 404 is a
 * wrong URL, not a database to create. */
static enum tl_http_result rw_classify(long status, const char *message)
{
    return status == 404 ? TL_HTTP_FATAL : tl_wire_classify_common(status);
}

static bool rw_explain(const struct tl_http_cfg *cfg, const char *where, enum tl_http_result res,
                       const struct tl_http_reply *r, char *out, size_t cap)
{
    if (r->status != 401 && r->status != 403) return false;
    snprintf(out, cap,
             "the remote-write store at %s refused the credentials (HTTP %ld: %s): fix the sink's `token` (or "
             "$PROM_TOKEN), or `user` and `password` (or $PROM_PASSWORD)",
             where, r->status, r->message);
    return true;
}

/* The URL as given (http://vm:8428/api/v1/write), a token as Bearer,
 * user/password as basic auth; `check` posts an empty request. */
const struct tl_wire tl_wire_remote_write = {
    .prefix = "prometheus",
    .store = "the remote-write store",
    .whole_url = true,
    .where = rw_where,
    .headers = rw_headers,
    .auth_scheme = "Bearer",
    .encode = rw_body,
    .classify = rw_classify,
    .explain = rw_explain,
};
