/* Points -> Prometheus remote-write series: see remote_write.h.
 *
 *   WriteRequest { repeated TimeSeries timeseries = 1; }
 *   TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
 *   Label        { string name = 1; string value = 2; }
 *   Sample       { double value = 1; int64 timestamp = 2; }   (ms)
 *
 * A WriteRequest is its TimeSeries fields one after another, so a batch is
 * the series of its points concatenated. Each point's series are kept in a
 * frame -- 0x01, u32 length (little-endian), the series -- so the engine
 * can count points and cut a batch between them; the wire (wire.c) drops
 * the frame headers when it sends. */
#include "sinks/prom/remote_write.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sinks/lineproto.h"

#define MAX_LABELS 32
#define NAME_CAP 256
#define FRAME_MAGIC 0x01
#define FRAME_HEADER 5

struct label {
    char name[NAME_CAP];
    size_t nlen;
    const char *value;
    size_t vlen;
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

/* A field as a sample: numbers as they are, booleans 0 / 1; strings and
 * floats that are not finite have none. */
static bool sample_value(const struct tl_point_field *f, double *v)
{
    switch (f->type) {
    case TL_FIELD_FLOAT:
        *v = f->v.f;
        return isfinite(*v);
    case TL_FIELD_INT:
        *v = (double)f->v.i;
        return true;
    case TL_FIELD_BOOL:
        *v = f->v.b;
        return true;
    case TL_FIELD_STRING:
        break;
    }
    return false;
}

struct rw_state {
    uint64_t refused; /* points with more tags than a series carries */
};

static int rw_point(struct tl_buf *out, const struct tl_point *p, void *state)
{
    struct rw_state *st = state;
    if (p->ntags >= MAX_LABELS) {
        st->refused++;
        return 0;
    }
    /* the tags sorted once; each field's __name__ goes in at its place */
    struct label labels[MAX_LABELS + 1];
    int n = p->ntags;
    for (int i = 0; i < n; i++) {
        labels[i].nlen = sanitize(labels[i].name, p->tags[i].key, strlen(p->tags[i].key), false);
        labels[i].value = p->tags[i].value;
        labels[i].vlen = strlen(p->tags[i].value);
    }
    qsort(labels, (size_t)n, sizeof *labels, cmp_label);
    int at = 0;
    while (at < n && strcmp(labels[at].name, "__name__") < 0) at++;
    memmove(labels + at + 1, labels + at, (size_t)(n - at) * sizeof *labels);
    struct label *name = &labels[at];
    memcpy(name->name, "__name__", 9);
    name->nlen = 8;
    char clean[NAME_CAP];
    name->value = clean;

    size_t frame = out->len;
    tl_buf_append(out, "\x01\0\0\0\0", FRAME_HEADER);
    int64_t ms = p->time_ns / 1000000;
    size_t mlen = strlen(p->measurement);
    for (int i = 0; i < p->nfields; i++) {
        double v;
        if (!sample_value(&p->fields[i], &v)) continue;
        char full[NAME_CAP * 2];
        int fn = snprintf(full, sizeof full, "%.*s_%s", (int)mlen, p->measurement, p->fields[i].key);
        name->vlen = sanitize(clean, full, fn > 0 && (size_t)fn < sizeof full ? (size_t)fn : sizeof full - 1, true);
        put_series(out, labels, n + 1, v, ms);
    }
    if (out->oom) return 0;
    size_t len = out->len - frame - FRAME_HEADER;
    if (!len) { /* no number: nothing for this store */
        out->len = frame;
        return 0;
    }
    for (int i = 0; i < 4; i++) out->data[frame + 1 + i] = (char)(len >> (8 * i));
    return 1;
}

static uint32_t frame_len(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[1] | (uint32_t)u[2] << 8 | (uint32_t)u[3] << 16 | (uint32_t)u[4] << 24;
}

bool tl_rw_framed(const char *data, size_t len)
{
    return len && data[0] == FRAME_MAGIC;
}

static uint32_t rw_count(const char *data, size_t len)
{
    if (!tl_rw_framed(data, len)) return tl_codec_lineproto.count(data, len);
    uint32_t n = 0;
    for (size_t off = 0; off + FRAME_HEADER <= len; off += FRAME_HEADER + frame_len(data + off)) n++;
    return n;
}

static size_t rw_split(const char *data, size_t len)
{
    if (!tl_rw_framed(data, len)) return tl_codec_lineproto.split(data, len);
    size_t best = len, off = 0;
    while (off + FRAME_HEADER <= len) {
        size_t next = off + FRAME_HEADER + frame_len(data + off);
        if (next >= len) break;
        if (best == len || (next > len / 2 ? next - len / 2 : len / 2 - next) <
                               (best > len / 2 ? best - len / 2 : len / 2 - best))
            best = next;
        off = next;
    }
    return best;
}

static uint64_t rw_refused(const void *state)
{
    return ((const struct rw_state *)state)->refused;
}

const struct tl_codec tl_codec_remote_write = {
    .name = "remote write",
    .state_size = sizeof(struct rw_state),
    .point = rw_point,
    .refused = rw_refused,
    .refused_why = "a point with more than 31 tags cannot be a remote-write series",
    .count = rw_count,
    .split = rw_split,
};

void tl_rw_unframe(const char *data, size_t len, struct tl_buf *out)
{
    for (size_t off = 0; off + FRAME_HEADER <= len;) {
        size_t n = frame_len(data + off);
        if (off + FRAME_HEADER + n > len) break;
        tl_buf_append(out, data + off + FRAME_HEADER, n);
        off += FRAME_HEADER + n;
    }
}
