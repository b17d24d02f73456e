/* A small but real Work Queue manager, linked against Debian's
 * coop-computing-tools-dev (libwork_queue.a), used by the end-to-end tests
 * and to generate the bundled sample log.
 *
 *   wq_manager LOG EXPECTED.tsv [NWORKERS]
 *
 * Starts NWORKERS (default 2) `work_queue_worker` processes on 127.0.0.1,
 * runs >= 200 tasks in 5 categories with the resource monitor on: quick
 * successes, CPU loops, tasks exiting non-zero, a category whose name has a
 * space, one task that exceeds its memory limit and holds the memory ~12 s
 * (cctools samples memory every few seconds), and one task that is
 * cancelled. It writes the transaction log to LOG and, for every task, what
 * the manager saw through the API to EXPECTED.tsv:
 *     category <TAB> task id <TAB> result <TAB> exit code
 * Workers are stopped before it exits, whatever happens.
 *
 *   wq_manager --apply LOG CATEGORIES.json|- [NWORKERS]
 *
 * The memory workload issue 57's test applies `advise --emit wq` to: in
 * category "mem", 6 tasks that hold little memory for 5 s and 2 that hold
 * 300 MB for 8 s. With "-", as people run it: every task allocated 1000 MB
 * (mode FIXED). With the file, read by cctools' own JSON reader (jx) and
 * applied as its header says: category-steady-n-tasks 0, mode MAX, the
 * category's maximum, its first allocation guess, autolabel off. */
#include <cctools/work_queue.h>
#include <cctools/jx.h>
#include <cctools/rmsummary.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 8
static pid_t workers[MAX_WORKERS];
static int nworkers;

static void stop_workers(void)
{
    for (int i = 0; i < nworkers; i++)
        if (workers[i] > 0) kill(workers[i], SIGTERM);
    for (int i = 0; i < nworkers; i++)
        if (workers[i] > 0) waitpid(workers[i], NULL, 0);
    nworkers = 0;
}

static void on_signal(int sig)
{
    stop_workers();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void start_worker(int port, const char *scratch)
{
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        execlp("work_queue_worker", "work_queue_worker", "--cores", "2", "--memory", "2000",
               "--disk", "4000", "--timeout", "120", "--workdir", scratch, "127.0.0.1", portstr,
               (char *)NULL);
        perror("exec work_queue_worker");
        _exit(127);
    }
    workers[nworkers++] = pid;
}

static struct work_queue_task *make(const char *cmd, const char *category)
{
    struct work_queue_task *t = work_queue_task_create(cmd);
    work_queue_task_specify_category(t, category);
    work_queue_task_specify_cores(t, 1);
    return t;
}

/* A manager on any free port writing its transaction log to log, with the
 * resource monitor on, its files under a new scratch (a mkdtemp template);
 * NULL when either fails (said). */
static struct work_queue *open_manager(const char *log, char *scratch)
{
    if (!mkdtemp(scratch)) {
        perror("mkdtemp");
        return NULL;
    }
    struct work_queue *q = work_queue_create(0);
    if (!q) {
        fprintf(stderr, "work_queue_create failed\n");
        return NULL;
    }
    work_queue_specify_transactions_log(q, log);
    char monitor_dir[64];
    snprintf(monitor_dir, sizeof monitor_dir, "%s/monitor", scratch);
    work_queue_enable_monitoring(q, monitor_dir, 1);
    return q;
}

struct jx *jx_parse_file(const char *name); /* cctools' reader; its header is not installed */

/* A JSON object of resources as the Python API builds its rmsummary from
 * a dict: each key set to its number. */
static struct rmsummary *resources(struct jx *o)
{
    struct rmsummary *s = rmsummary_create(-1);
    void *it = NULL;
    const char *k;
    while ((k = jx_iterate_keys(o, &it))) {
        struct jx *v = jx_lookup(o, k);
        if (v && v->type == JX_INTEGER) rmsummary_set(s, k, (double)v->u.integer_value);
    }
    return s;
}

/* The categories of an `advise --emit wq` file applied to q as the file says. */
static int apply_categories(struct work_queue *q, const char *path)
{
    struct jx *doc = jx_parse_file(path);
    struct jx *cats = doc ? jx_lookup(doc, "categories") : NULL;
    if (!cats) {
        fprintf(stderr, "wq_manager: %s: no categories\n", path);
        return -1;
    }
    work_queue_tune(q, "category-steady-n-tasks", 0);
    void *it = NULL;
    const char *name;
    while ((name = jx_iterate_keys(cats, &it))) {
        struct jx *c = jx_lookup(cats, name), *first = jx_lookup(c, "first"), *max = jx_lookup(c, "max");
        struct rmsummary *rf = resources(first), *rm = resources(max);
        work_queue_specify_category_mode(q, name, WORK_QUEUE_ALLOCATION_MODE_MAX);
        work_queue_specify_category_max_resources(q, name, rm);
        work_queue_specify_category_first_allocation_guess(q, name, rf);
        void *jt = NULL;
        const char *res;
        while ((res = jx_iterate_keys(first, &jt))) work_queue_enable_category_resource(q, name, res, 0);
        rmsummary_delete(rf);
        rmsummary_delete(rm);
    }
    jx_delete(doc);
    return 0;
}

/* --apply: the memory workload, as people run it or with advise's settings. */
static int apply_main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: wq_manager --apply LOG CATEGORIES.json|- [NWORKERS]\n");
        return 2;
    }
    int want = argc > 4 ? atoi(argv[4]) : 2;
    if (want < 1 || want > MAX_WORKERS) want = 2;
    char scratch[] = "/tmp/tl-wq-XXXXXX";
    struct work_queue *q = open_manager(argv[2], scratch);
    if (!q) return 1;
    if (strcmp(argv[3], "-") && apply_categories(q, argv[3]) < 0) return 1;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    atexit(stop_workers);
    for (int i = 0; i < want; i++) start_worker(work_queue_port(q), scratch);
    for (int i = 0; i < 8; i++) {
        struct work_queue_task *t = make(i % 4 == 3 ? "(head -c 300000000 /dev/zero; sleep 8) | tail -n 1 > /dev/null"
                                                    : "sleep 5", "mem");
        if (!strcmp(argv[3], "-")) work_queue_task_specify_memory(t, 1000);
        work_queue_submit(q, t);
    }
    int done = 0, ok = 0;
    time_t deadline = time(NULL) + 240;
    while (!work_queue_empty(q) && time(NULL) < deadline) {
        struct work_queue_task *t = work_queue_wait(q, 5);
        if (!t) continue;
        done++;
        ok += t->result == WORK_QUEUE_RESULT_SUCCESS && t->return_status == 0;
        work_queue_task_delete(t);
    }
    work_queue_delete(q);
    stop_workers();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", scratch);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", scratch);
    fprintf(stderr, "wq_manager --apply: %d of 8 tasks done, %d succeeded\n", done, ok);
    return done == 8 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--apply")) return apply_main(argc, argv);
    if (argc < 3) {
        fprintf(stderr, "usage: wq_manager LOG EXPECTED.tsv [NWORKERS]\n");
        return 2;
    }
    int want = argc > 3 ? atoi(argv[3]) : 2;
    if (want < 1 || want > MAX_WORKERS) want = 2;
    FILE *exp = fopen(argv[2], "w");
    if (!exp) {
        perror(argv[2]);
        return 1;
    }
    char scratch[] = "/tmp/tl-wq-XXXXXX";
    struct work_queue *q = open_manager(argv[1], scratch);
    if (!q) return 1;
    int port = work_queue_port(q);

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    atexit(stop_workers);
    for (int i = 0; i < want; i++) start_worker(port, scratch);

    int submitted = 0;
    /* The memory hog first, so it overlaps the rest: 300 MB held ~12 s by
     * `tail` waiting for the end of a line that never comes, limit 50 MB. */
    struct work_queue_task *hog =
        make("(head -c 300000000 /dev/zero; sleep 12) | tail -n 1 > /dev/null", "hog");
    work_queue_task_specify_memory(hog, 50);
    work_queue_task_specify_max_retries(hog, 1);
    work_queue_submit(q, hog);
    submitted++;
    for (int i = 0; i < 70; i++, submitted++) work_queue_submit(q, make("true", "short"));
    for (int i = 0; i < 50; i++, submitted++)
        work_queue_submit(q, make("i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done", "compute"));
    for (int i = 0; i < 45; i++, submitted++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "exit %d", 1 + i % 3);
        work_queue_submit(q, make(cmd, "failing"));
    }
    for (int i = 0; i < 40; i++, submitted++)
        work_queue_submit(q, make("echo hello world", "odd name"));
    struct work_queue_task *victim = make("sleep 60", "sleeper");
    int victim_id = work_queue_submit(q, victim);
    submitted++;

    int collected = 0;
    time_t deadline = time(NULL) + 300;
    while (!work_queue_empty(q) && time(NULL) < deadline) {
        if (victim && collected >= 20) {
            struct work_queue_task *c = work_queue_cancel_by_taskid(q, victim_id);
            if (c) {
                fprintf(exp, "%s\t%d\tCANCELED\t\n", c->category, c->taskid);
                work_queue_task_delete(c);
                collected++;
            }
            victim = NULL;
        }
        struct work_queue_task *t = work_queue_wait(q, 5);
        if (!t) continue;
        fprintf(exp, "%s\t%d\t%s\t%d\n", t->category, t->taskid, work_queue_result_str(t->result),
                t->return_status);
        work_queue_task_delete(t);
        collected++;
    }
    fclose(exp);
    int ok = work_queue_empty(q);
    work_queue_delete(q);
    stop_workers();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", scratch);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", scratch);
    fprintf(stderr, "wq_manager: %d tasks submitted, %d collected%s\n", submitted, collected,
            ok ? "" : " (DEADLINE HIT)");
    return ok && collected == submitted ? 0 : 1;
}
