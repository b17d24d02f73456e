/* Line-protocol encoder alone: `task` points per second, best of 5.
 *   lp_bench [N]          N copies of one monitored TaskVine task (29 float
 *                         fields, 3 integers, 5 tags): the heavy case
 *   lp_bench wq FILE      every finished attempt of a real log, parsed once
 *                         and kept (the parser stays open: its names too) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lineproto.h"
#include "parser.h"

#include "bench.h"

/* One point into b; a full MiB of output is counted and dropped. */
static inline void encode(struct tl_buf *b, const struct tl_record *r, struct tl_lp_stats *st,
                          size_t *bytes)
{
    tl_lp_task(b, r, st);
    if (b->len > (1 << 20)) {
        *bytes += b->len;
        b->len = 0;
    }
}

struct kept {
    struct tl_record *r;
    size_t n, cap;
};

static void keep(void *ctx, const struct tl_record *r)
{
    struct kept *k = ctx;
    if (r->kind != TL_REC_TASK) return;
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 4096;
        k->r = realloc(k->r, k->cap * sizeof *k->r);
        if (!k->r) exit(1);
    }
    k->r[k->n++] = *r;
}

static int from_file(const char *parser, const char *path)
{
    const struct tl_parser *p = tl_parser_find(parser);
    if (!p) return 2;
    size_t n;
    char *buf = bench_slurp(path, &n);
    struct kept k = {0};
    struct tl_parser_inst inst;
    struct tl_emit emit = {keep, NULL, &k, TL_KIND(TL_REC_TASK)};
    if (tl_parser_inst_init(&inst, p) || tl_parser_inst_open(&inst, &emit)) return 1;
    for (size_t off = 0; off < n; off += 256 * 1024)
        p->feed(inst.state, buf + off, n - off < 256 * 1024 ? n - off : 256 * 1024);
    p->finish(inst.state);
    struct tl_buf b = {0};
    struct tl_lp_stats st = {0};
    double best = 1e9;
    size_t bytes = 0;
    for (int round = 0; round < 5; round++) {
        double t0 = bench_now();
        bytes = 0;
        for (size_t i = 0; i < k.n; i++) {
            encode(&b, &k.r[i], &st, &bytes);
        }
        bytes += b.len;
        b.len = 0;
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    printf("encoder: %.2f M task points/s (%zu points of %s, best of 5; %.0f bytes/point, %.0f MB/s)\n",
           k.n / best / 1e6, k.n, path, (double)bytes / (double)(k.n ? k.n : 1), bytes / best / 1e6);
    tl_parser_inst_free(&inst);
    tl_buf_free(&b);
    free(k.r);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2) return from_file(argv[1], argv[2]);
    long n = argc > 1 ? atol(argv[1]) : 5000000;
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.source = "wq";
    r.workflow = "4080849@2023-04-03T19:58:40Z";
    r.category = "evaluate_mpnn";
    r.host = "10.32.89.1";
    r.result = "SUCCESS";
    r.task_id = 13;
    r.attempt = 1;
    r.has_exit_code = true;
    r.final = true;
    r.time_ns = 1680552100353550000LL;
    const double v[] = {152.201556, 404.906039, 4.22, 152.3, 0.17, 0, 1125 * 1048576.0,
                        3540 * 1048576.0, 0, 6107 * 1048576.0, 6339 * 1048576.0, 5028 * 1048576.0,
                        0, 0, 6.56086254119873 * 1048576, 3.353212356567383 * 1048576, 0.01652,
                        0.177033, 2.66, 2.66, 0, 156243, 46, 26, 109857, 24, 0};
    for (int m = 0; m < (int)(sizeof v / sizeof *v); m++) tl_record_set(&r, (enum tl_metric)m, v[m]);
    tl_record_set(&r, TL_M_ALLOC_CORES, 4);
    tl_record_set(&r, TL_M_ALLOC_MEMORY_BYTES, 4000 * 1048576.0);
    struct tl_buf b = {0};
    struct tl_lp_stats st = {0};
    double best = 1e9;
    size_t bytes = 0;
    for (int round = 0; round < 5; round++) {
        double t0 = bench_now();
        for (long i = 0; i < n; i++) {
            r.task_id = i;
            encode(&b, &r, &st, &bytes);
        }
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    printf("encoder: %.2f M task points/s (%ld points, best of 5; ~%zu bytes/point)\n",
           n / best / 1e6, n, bytes / ((size_t)n * 5));
    tl_buf_free(&b);
    return 0;
}
