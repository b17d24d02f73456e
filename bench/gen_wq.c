/* Writes a synthetic Work Queue transaction log (WQ-E layout) to stdout:
 * N tasks over K categories, 64 in flight at a time, each with WAITING,
 * RUNNING, WAITING_RETRIEVAL, RETRIEVED (resource-monitor JSON) and DONE.
 * Values are lognormal per category. For memory and throughput tests at
 * sizes no real sample reaches.
 * SCALE stretches time (default 1: about 10 µs between lines; 1000 makes
 * 200k lines span half an hour, for windows and workflow points).
 *   gen_wq N [K] [SEED] [SCALE] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static double u01(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((rng >> 11) + 0.5) * 0x1p-53;
}
static double lognormal(double mu, double sigma)
{
    return exp(mu + sigma * sqrt(-2 * log(u01())) * cos(6.283185307179586 * u01()));
}

int main(int argc, char **argv)
{
    long long n = argc > 1 ? atoll(argv[1]) : 1000000;
    int k = argc > 2 ? atoi(argv[2]) : 8;
    if (argc > 3) rng ^= (unsigned long long)atoll(argv[3]) * 0x2545F4914F6CDD1DULL;
    long long sc = argc > 4 ? atoll(argv[4]) : 1;
    if (k < 1) k = 1;
    if (sc < 1) sc = 1;
    static char buf[1 << 20];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    long long t = 1700000000000000LL; /* µs */
    const int pid = 4242;
    printf("# time manager_pid MANAGER START|END\n\n%lld %d MANAGER START\n", t, pid);
    printf("%lld %d WORKER worker-0000000000000000000000000000aaaa 10.0.0.1:9000  CONNECTION\n", t, pid);
    for (long long base = 1; base <= n; base += 64) {
        long long end = base + 64 <= n + 1 ? base + 64 : n + 1;
        for (long long id = base; id < end; id++)
            printf("%lld %d TASK %lld WAITING cat%lld FIRST_RESOURCES {\"cores\":[1,\"cores\"]}\n", t += 7 * sc, pid, id, id % k);
        for (long long id = base; id < end; id++)
            printf("%lld %d TASK %lld RUNNING 10.0.0.1:9000  FIRST_RESOURCES {\"memory\":[4000,\"MB\"],\"disk\":[8000,\"MB\"],\"gpus\":[0,\"gpus\"],\"cores\":[4,\"cores\"]}\n", t += 11 * sc, pid, id);
        for (long long id = base; id < end; id++)
            printf("%lld %d TASK %lld WAITING_RETRIEVAL 10.0.0.1:9000 \n", t += 13 * sc, pid, id);
        for (long long id = base; id < end; id++) {
            double mu = 1.0 + (double)(id % k % 32) * 0.3; /* one of 32 shapes: e^(1 + 0.3 k) overflows for large k */
            double wall = lognormal(mu, 0.8);
            printf("%lld %d TASK %lld RETRIEVED SUCCESS  0  {} {\"wall_time\":[%.6f,\"s\"],\"cpu_time\":[%.6f,\"s\"],\"memory\":[%d,\"MB\"],\"disk\":[%d,\"MB\"],\"cores\":[%.3f,\"cores\"]}\n",
                   t += 17 * sc, pid, id, wall, wall * (0.5 + u01()), (int)lognormal(5, 1), (int)lognormal(3, 0.5), 0.5 + 3 * u01());
        }
        for (long long id = base; id < end; id++) printf("%lld %d TASK %lld DONE SUCCESS  0 \n", t += 3 * sc, pid, id);
    }
    printf("%lld %d MANAGER END\n", t + 1, pid);
    return 0;
}
