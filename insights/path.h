/* Where a run's makespan went (`tasklens path`, issue 59): the observed
 * critical path, its split into compute and waits, the bound with unlimited
 * workers (CPM) and each task's slack, what-ifs, waves and stragglers. A
 * library that prints nothing; docs/path.md defines every number.
 *
 * The rows: one per task (its attempts folded in), keyed by (workflow, task
 * id); the attempt that counted is the task's final one (else the one that
 * ended last). Dependencies are task ids as the input names them (Parsl's
 * task_depends, with the task or in an edge record: Chrome flows); inputs
 * without them get the observed path from worker slots instead. */
#ifndef TL_INSIGHTS_PATH_H
#define TL_INSIGHTS_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/map64.h"
#include "insights/insights.h"

#define TL_PATH_NONE UINT32_MAX

struct tl_path_task {
    int64_t id;          /* as the input names it; -1 none */
    /* times: s after in->origin_ns */
    double submit;       /* first attempt's submission (its start where none is recorded) */
    double launch;       /* the counted attempt's submission */
    double start, end;   /* the counted attempt's run */
    double held;         /* running time of every attempt: what the task held a slot for */
    int32_t cat, wf, worker; /* worker -1: unknown */
    uint32_t attempts;
    uint32_t dep_at, ndeps; /* its dependencies: in->dep[dep_at .. dep_at + ndeps) */
    bool final_seen;
    bool submit_recorded; /* an attempt's input recorded its submission (a queue time) */
    bool flow_deps;       /* dependencies from edge records (Chrome flows: they submitted it) */
};

/* An attempt as read: kept apart until tl_path_done folds them into tasks
 * (off the reading thread: the report runs it on a thread of its own). */
struct tl_path_attempt {
    int64_t id;
    double submit, start, end;
    int32_t cat, wf, worker;
    uint32_t dep_at, ndeps;
    bool final, submit_recorded;
};

struct tl_path_input {
    struct tl_path_attempt *a;
    size_t na, capa;
    struct tl_path_task *t; /* once done: the tasks, in the order of their first attempt */
    size_t n;
    uint64_t *dep; /* while reading: (workflow, id) keys; once done: task indices (TL_PATH_NONE: not in the input) */
    size_t ndep, capdep;
    uint64_t *late; /* edges stated apart from their tasks (TL_REC_EDGE): (dependent, dependency) key pairs */
    size_t nlate, caplate;
    struct tl_names cats, wfs, workers;
    int64_t origin_ns; /* the first record's end: what task times count from */
    size_t untimed, cached, unresolved, bad_deps;
    bool oom;
};

/* A record callback (ctx = struct tl_path_input *): keeps task attempts and
 * edge records (TL_REC_EDGE). */
void tl_path_add(void *ctx, const struct tl_record *r);
/* All records are in: dependencies resolved, names in byte order. false
 * when out of memory. */
bool tl_path_done(struct tl_path_input *in);
void tl_path_input_free(struct tl_path_input *in);

/* The tiles of a step: what its part of the makespan was spent on. */
enum tl_path_part { TL_PART_DEPS, TL_PART_RETRIES, TL_PART_QUEUE, TL_PART_COMPUTE, TL_NPARTS };
extern const char *const tl_path_part_name[TL_NPARTS]; /* deps_s, retries_s, queue_s, compute_s */

struct tl_path_step {
    uint32_t task;
    double part[TL_NPARTS]; /* they tile [predecessor's end (or the run's start), this end] */
    double slack;
};

struct tl_path_cat {
    int32_t cat;
    size_t steps;
    double part[TL_NPARTS];
};

struct tl_path_whatif {
    int32_t cat; /* -1: one more slot */
    double cpm_s, replay_s;
};

struct tl_path_wave {
    int32_t cat;
    size_t tasks, slots, stragglers;
    double waves, last_wave; /* tasks / slots; the last wave's fill (1: full) */
    double median_s, fence_s; /* running time: median; straggler above (NAN: under 4 tasks) */
};

struct tl_path_run {
    int32_t wf;
    size_t tasks, edges;
    double t0, t1, makespan;
    struct tl_path_step *steps;
    size_t nsteps;
    double part[TL_NPARTS];
    struct tl_path_cat *cats; /* along the path, most time first */
    size_t ncats;
    double cpm_s;          /* the bound: unlimited workers */
    size_t zero_slack;     /* tasks on a critical path of the bound */
    size_t unordered;      /* tasks in a dependency cycle: left out of the bound */
    size_t slots;          /* the most attempts that ran at once */
    double replay_s;       /* the observed schedule replayed on `slots` */
    struct tl_path_whatif *whatifs;
    size_t nwhatifs;
    struct tl_path_wave *waves; /* per category, byte order */
    size_t nwaves;
    uint32_t *stragglers; /* the slowest against their category, slowest first */
    size_t nstragglers;
};

struct tl_path_opts {
    double faster;        /* what-if: a category this many times faster (2) */
    size_t whatifs;       /* categories tried (5) */
    size_t stragglers;    /* listed (10) */
    bool waves;           /* waves and stragglers too (the report shows neither) */
};

struct tl_path_result {
    struct tl_path_run *runs;
    size_t nruns;
    double *slack; /* by task */
    bool oom;
};

bool tl_path_analyze(const struct tl_path_input *in, const struct tl_path_opts *o, struct tl_path_result *res);
void tl_path_result_free(struct tl_path_result *res);

#endif
