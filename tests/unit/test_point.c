/* The point model (core/point.h) against its encoders, on every real input
 * in ../shared/<format>/samples:
 *   fast paths   the line-protocol codec writes task points and histogram
 *                buckets straight from records and sketches (sinks/codec.h);
 *                each must be byte for byte what the generic encoder
 *                writes of the built point (tl_point_task,
 *                tl_point_histogram) -- for every task record of every
 *                sample and every closed 60 s window of its wall times;
 *   remote write each task point becomes one series per field that is a
 *                number (floats finite, integers, booleans), and none for
 *                strings -- counted independently in the encoded frame. */
#include "check.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/aggregate.h"
#include "core/point.h"
#include "pipeline/batch.h"
#include "sinks/lineproto.h"
#include "sinks/sink.h"

struct compare {
    const char *file;
    struct tl_lp_stats fast, generic; /* each path its own memos */
    struct tl_verdict_memo verdict;
    struct tl_buf a, b, rw;
    void *rw_state;
    struct tl_point point;
    struct tl_buf parts[TL_AGG_MAX_KEYS];
    struct tl_agg *agg;
    long tasks, buckets, differ, series, series_want;
};

static bool same(const struct tl_buf *a, const struct tl_buf *b)
{
    return a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));
}

/* The TimeSeries (field 1 of a WriteRequest) in one frame: 0x01, u32 length, series. */
static long series_in(const struct tl_buf *rw)
{
    long n = 0;
    const unsigned char *p = (const unsigned char *)rw->data + 5, *end = (const unsigned char *)rw->data + rw->len;
    while (rw->len > 5 && p < end && *p == 0x0a) {
        p++;
        uint64_t len = 0;
        for (int shift = 0; p < end; shift += 7) {
            len |= (uint64_t)(*p & 0x7f) << shift;
            if (!(*p++ & 0x80)) break;
        }
        p += len;
        n++;
    }
    return n;
}

static long numeric_fields(const struct tl_point *p)
{
    long n = 0;
    for (int i = 0; i < p->nfields; i++) {
        const struct tl_point_field *f = &p->fields[i];
        n += f->type == TL_FIELD_INT || f->type == TL_FIELD_BOOL || (f->type == TL_FIELD_FLOAT && isfinite(f->v.f));
    }
    return n;
}

/* The prometheus sink's codec, as the runtime finds it: through the registry. */
static const struct tl_codec *remote_write(void)
{
    return tl_sink_find("prometheus")->codec;
}

static void on_record(void *ctx, const struct tl_record *r)
{
    struct compare *c = ctx;
    if (r->kind != TL_REC_TASK) return;
    c->a.len = c->b.len = c->rw.len = 0;
    tl_lp_task(&c->a, r, &c->fast);
    tl_point_task(&c->point, r, &c->verdict);
    tl_lp_point(&c->b, &c->point, &c->generic);
    if (!same(&c->a, &c->b) && c->differ++ < 3)
        fprintf(stderr, "%s: task point differs:\n  fast    %.*s  generic %.*s", c->file, (int)c->a.len,
                c->a.data ? c->a.data : "", (int)c->b.len, c->b.data ? c->b.data : "");
    remote_write()->point(&c->rw, &c->point, c->rw_state);
    c->series += series_in(&c->rw);
    c->series_want += numeric_fields(&c->point);
    c->tasks++;
    tl_agg_add(c->agg, r);
}

static void generic_bucket(void *ctx, const struct tl_point *p)
{
    struct compare *c = ctx;
    tl_lp_point(&c->b, p, &c->generic);
}

static void on_window(void *ctx, const struct tl_agg_window *w)
{
    struct compare *c = ctx;
    static const char *const by[] = {"category", "source"};
    if (w->cumulative) return;
    c->a.len = c->b.len = 0;
    uint64_t refused = 0;
    tl_lp_histogram(&c->a, w, by, 2, "60s", "i-1", &c->fast);
    c->buckets += tl_point_histogram(w, by, 2, "60s", "i-1", c->parts, generic_bucket, c, &refused);
    if (!same(&c->a, &c->b) && c->differ++ < 3)
        fprintf(stderr, "%s: histogram points differ:\n%.*s---\n%.*s", c->file, (int)c->a.len,
                c->a.data ? c->a.data : "", (int)c->b.len, c->b.data ? c->b.data : "");
}

static bool is_sample(const char *name)
{
    const char *dot = strrchr(name, '.');
    return name[0] != '.' && strncmp(name, "SOURCES", 7) &&
           !(dot && (!strcmp(dot, ".md") || !strcmp(dot, ".txt") || !strcmp(dot, ".sha256")));
}

static void compare_file(const char *path, struct compare *total)
{
    static struct compare c;
    memset(&c, 0, sizeof c);
    c.file = path;
    c.rw_state = calloc(1, remote_write()->state_size);
    struct tl_agg_opts o;
    tl_agg_opts_default(&o);
    o.nmetrics = 1;
    o.metrics[0] = TL_M_WALL_TIME_S;
    o.window_ns = 60000000000LL;
    o.by[0] = "category";
    o.by[1] = "source";
    o.nby = 2;
    c.agg = tl_agg_new(&o, on_window, &c);
    struct tl_input_opts io = {.quiet = true, .max_reports = 0};
    struct tl_summary_input info = {0};
    tl_read_input(path, &io, on_record, &c, &info);
    tl_agg_close_window(c.agg);
    tl_input_info_free(&info);
    total->tasks += c.tasks;
    total->buckets += c.buckets;
    total->differ += c.differ;
    total->series += c.series;
    total->series_want += c.series_want;
    tl_agg_free(c.agg);
    tl_buf_free(&c.a);
    tl_buf_free(&c.b);
    tl_buf_free(&c.rw);
    for (int i = 0; i < TL_AGG_MAX_KEYS; i++) tl_buf_free(&c.parts[i]);
    free(c.rw_state);
}

static void walk(const char *dir, struct compare *total, int *files)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_sample(e->d_name)) continue;
        char path[8192];
        snprintf(path, sizeof path, "%.4000s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st)) continue;
        if (S_ISDIR(st.st_mode)) walk(path, total, files);
        else if (S_ISREG(st.st_mode)) {
            compare_file(path, total);
            (*files)++;
        }
    }
    closedir(d);
}

int main(void)
{
    const char *shared = getenv("TL_SHARED_DIR");
    char root[4096];
    snprintf(root, sizeof root, "%s", shared ? shared : "../shared");
    DIR *d = opendir(root);
    if (!d) {
        snprintf(root + strlen(root), sizeof root - strlen(root), " not found");
        check_skip(root);
    }
    static struct compare total;
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char samples[8192];
        snprintf(samples, sizeof samples, "%s/%s/samples", root, e->d_name);
        if (e->d_name[0] != '.') walk(samples, &total, &files);
    }
    closedir(d);
    printf("  %d real inputs: %ld task points and %ld histogram points, fast path = generic; "
           "%ld remote-write series for %ld numeric fields\n",
           files, total.tasks, total.buckets, total.series, total.series_want);
    CHECK(files >= 50);
    CHECK(total.tasks > 100000);
    CHECK(total.buckets > 1000);
    CHECK_EQ_INT(total.differ, 0);
    CHECK_EQ_INT(total.series, total.series_want);
    return check_done("test_point");
}
