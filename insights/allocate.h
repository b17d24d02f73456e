/* What `advise` writes into a workflow system, per category, and its replay
 * against the observed attempts (issue 57 points 2, 4, 5).
 *
 * A memory (or disk) setting is a rule, not a number: a first allocation
 * and what each retry after a resource kill asks for, in the system's own
 * idiom -- Work Queue / TaskVine / Makeflow retry once at the category's
 * maximum; Nextflow and Snakemake ask for first x attempt; BPS for first x
 * 2^(attempt-1) (its memoryMultiplier). The last retry always covers the
 * largest attempt that succeeded (or the limit a memory death died at) x the
 * margin, so nothing that succeeded is killed for good. The first
 * allocation is the one with the least expected allocated resource-time
 * over the observed tasks, retries included (cctools' MIN_WASTE, for every
 * system), or the most tasks per worker-second (its MAX_THROUGHPUT), or the
 * quantile rule when the user asked for a quantile.
 *
 * The replay charges each observed task, attempt by attempt, what the rule
 * would have allocated: a killed attempt its whole wall time (an upper
 * bound: it dies when it crosses the limit). Prints nothing. */
#ifndef TL_INSIGHTS_ALLOCATE_H
#define TL_INSIGHTS_ALLOCATE_H

#include "insights/insights.h"

enum tl_system { TL_SYS_BPS, TL_SYS_WQ, TL_SYS_MAKEFLOW, TL_SYS_NEXTFLOW, TL_SYS_SNAKEMAKE, TL_NSYS };
extern const char *const tl_system_name[TL_NSYS]; /* bps, wq, makeflow, nextflow, snakemake */

enum tl_retry_kind {
    TL_RETRY_TO_MAX,        /* first, then the maximum (cctools' categories) */
    TL_RETRY_TIMES_ATTEMPT, /* first x attempt (Nextflow task.attempt, Snakemake attempt) */
    TL_RETRY_DOUBLING       /* first x 2^(attempt-1) (BPS memoryMultiplier: 2) */
};
enum tl_first_by { TL_FIRST_MIN_WASTE, TL_FIRST_MAX_THROUGHPUT, TL_FIRST_QUANTILE };
extern const char *const tl_first_by_name[3]; /* min_waste, max_throughput, quantile */

#define TL_MAX_RETRIES 3 /* retries a rule may take before its first ask grows */

/* One resource's rule; first NAN: not measured, left to the system. */
struct tl_rule {
    enum tl_retry_kind kind;
    double first, cover; /* cover: what the last attempt asks for (TO_MAX: the maximum) */
    int retries;
};
/* What attempt k (1-based) of a rule asks for. */
double tl_rule_ask(const struct tl_rule *r, int k);

/* A task's need of one resource and the time it held it. */
struct tl_need {
    double need, t;
};
/* Expected allocated resource-time of a rule over the needs, and what it
 * kills: attempts killed (each one retried while retries remain) and tasks
 * it can never run (needs over the cover: 0 by construction). */
struct tl_rule_cost {
    double res_h; /* resource-hours: bytes x h for memory and disk */
    size_t attempts, killed, lost;
};
struct tl_rule_cost tl_rule_cost(const struct tl_need *nd, size_t n, const struct tl_rule *r);

#define TL_NCAND 6
struct tl_candidate {
    double first;
    struct tl_rule_cost cost;
    const char *why; /* "min waste", "p50", ..., "the maximum" */
};
/* A category's choice for one resource under one system. */
struct tl_choice {
    struct tl_rule rule;
    enum tl_first_by by;
    double min_waste, max_throughput; /* the first allocations each mode picks */
    struct tl_rule_cost cost;          /* of the rule chosen */
    size_t n_needs, censored;          /* tasks the choice rests on; those that died at a limit */
    struct tl_candidate cand[TL_NCAND];
    int ncand;
    /* does the need scale with the input? Spearman's rank correlation of the
     * need with bytes read over the tasks that recorded both (NAN: fewer
     * than TL_MIN_SCALING of them, or all read the same) */
    double input_rho;
    size_t input_n;
};
#define TL_MIN_SCALING 10
/* The words for a rho: "scales with" (>= 0.7), "scales partly with" (>= 0.3), "falls with" (<= -0.3),
 * "does not follow" (the bytes it reads). */
const char *tl_scaling_words(double rho);

/* The settings one category is given: cores (NAN: left), memory and disk
 * rules, a time limit in seconds (NAN: none; Nextflow and Snakemake). */
struct tl_settings {
    double cores, time_s;
    /* where the system kills above a core limit (Work Queue, TaskVine and
     * Makeflow's resource monitor: above cores + TL_CORES_GRACE), the
     * category's maximum, which a retry asks for: the largest peak of a
     * success x margin, less the grace, rounded up; NAN elsewhere */
    double cores_max;
    struct tl_choice mem, disk;
    size_t time_succeeded, time_killed; /* successes with a wall time; those over time_s */
    /* attempts with cores used; those above cores (+ TL_CORES_GRACE where
     * cores_max is set: killed and retried there; else slowed, not killed) */
    size_t cores_measured, cores_over;
};
/* cctools' rmsummary_check_limits forgives a quarter core over the limit */
#define TL_CORES_GRACE 0.25
/* Does the system kill an attempt above its cores? */
bool tl_system_kills_cores(enum tl_system sys);

struct tl_pair {
    double x, y, rx, ry; /* values and their ranks */
};
/* Scratch for the computations: room for every row of the largest category. */
struct tl_alloc_scratch {
    struct tl_need *nd;
    double *v;
    struct tl_pair *pair;
};
bool tl_alloc_scratch_init(struct tl_alloc_scratch *s, size_t rows);
void tl_alloc_scratch_free(struct tl_alloc_scratch *s);

/* The settings for category cat (ca: its advice) under system sys; by:
 * how the first allocation is chosen. */
void tl_settings_for(enum tl_system sys, enum tl_first_by by, const struct tl_task_rows *rs, int32_t cat,
                     const struct tl_cat_advice *ca, const struct tl_advise_opts *o,
                     struct tl_alloc_scratch *sc, struct tl_settings *st);

/* The replay: the observed attempts (this run's, cached, cancelled and
 * library instances apart) against the settings. before: as they ran,
 * charged their allocation (else request) x wall time; after: each task
 * replayed attempt by attempt. A success needs its peak memory and disk and
 * its wall time; a memory death at least a step over its limit; any other
 * failure fails again, once, at the first allocation. */
struct tl_replay_side {
    size_t attempts, killed, failed;
    double core_h, gib_h; /* NAN when no attempt recorded the allocation */
    size_t no_cores, no_mem; /* attempts with no allocation or request recorded: left out of the hours */
};
struct tl_replay {
    size_t tasks, succeeded;
    size_t successes_lost; /* successes the settings would kill for good: 0 unless --quantile */
    size_t cores_kills;    /* replayed attempts killed above cores + TL_CORES_GRACE alone */
    struct tl_replay_side before, after;
};
void tl_replay_category(const struct tl_task_rows *rs, int32_t cat, const struct tl_settings *st,
                        struct tl_replay *rp);

#endif
