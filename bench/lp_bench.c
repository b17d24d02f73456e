/* Line-protocol encoder alone: `task` points per second for a realistic
 * record (a monitored TaskVine task: 30 metrics, 5 tags), best of 5.
 *   lp_bench [N] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lineproto.h"

#include "bench.h"

int main(int argc, char **argv)
{
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
            tl_lp_task(&b, &r, &st);
            if (b.len > (1 << 20)) {
                bytes += b.len;
                b.len = 0;
            }
        }
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    printf("encoder: %.2f M task points/s (%ld points, best of 5; ~%zu bytes/point)\n",
           n / best / 1e6, n, bytes / ((size_t)n * 5));
    tl_buf_free(&b);
    return 0;
}
