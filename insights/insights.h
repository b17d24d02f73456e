/* What the task records say about sizing, capacity and energy, per category:
 * the computations behind `tasklens advise | plan | energy` (and the HTML
 * report's advice), as a library that prints nothing. The manual
 * (docs/advise.md, plan.md, energy.md) documents every formula; the
 * commands (cli/cmd_advise.c,
 * cmd_plan.c, cmd_energy.c) format these results as tables, JSON or line
 * protocol.
 *
 * Every number is exact, not sketched: the records are kept as one compact
 * row per finished attempt (about 130 bytes) -- these are batch questions
 * over one run. */
#ifndef TL_INSIGHTS_H
#define TL_INSIGHTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/intern.h"
#include "core/record.h"

#define TL_GIB 1073741824.0

/* ------------------------------------------------------------ the rows */

/* The values a row keeps, NAN when the record had none. */
enum tl_row_value {
    TL_V_WALL, TL_V_CPU, TL_V_CORES, TL_V_MEM, TL_V_DISK, TL_V_REQ_CORES, TL_V_REQ_MEM,
    TL_V_REQ_DISK, TL_V_ALLOC_CORES, TL_V_ALLOC_MEM, TL_V_ALLOC_DISK, TL_V_LIM_CORES,
    TL_V_LIM_MEM, TL_V_LIM_DISK, TL_V_ENERGY, TL_V_EMISSIONS, TL_V_READ, TL_V_REQ_TIME, TL_NV
};

struct tl_task_row {
    double v[TL_NV];
    int32_t cat, wf;
    bool exhausted, final;
    bool failed; /* a result that is not a success, or a nonzero exit code */
    bool cached; /* done by an earlier run (Nextflow's CACHED): not this run's work */
    bool library; /* a TaskVine library instance (LIBRARY_EXIT): not a task */
    bool cancelled; /* stopped by the workflow or its user: neither failed nor succeeded */
    bool killed_mem; /* failed for memory (exit 137, RESOURCE_EXHAUSTION over memory): used >= its limit */
    bool killed_time; /* failed for its time limit (MAX_WALL_TIME, exit 140) */
};

/* Distinct names (categories, workflows): interned while reading, ids in
 * first-seen order; tl_task_rows_done renumbers them in byte order. */
struct tl_names {
    struct tl_intern *in;
    const char **s; /* by id, once done */
    size_t n;
    const char *last; /* the name interned last (its interned copy): most records repeat it */
    int32_t last_id;
};

/* The id of name s (NULL or "" is the glossary's absent name), interned
 * on first sight; *oom set when it cannot be. */
int32_t tl_names_id(struct tl_names *nm, const char *s, bool *oom);
/* All names are in: nm->s in byte order; returns new id by old id
 * (malloc'ed, the caller renumbers what holds ids and frees it), NULL with
 * *oom set. */
int32_t *tl_names_sort(struct tl_names *nm, bool *oom);
void tl_names_free(struct tl_names *nm);

struct tl_task_rows {
    struct tl_task_row *r;
    size_t n, cap;
    struct tl_names cats, wfs;
    int64_t newest_ns;
    uint64_t process_wide_rss; /* LSST quanta whose max RSS is their process's (summary.h) */
    bool oom;
    /* once done: the rows of category c, in input order, are
     * r[by_cat[at[c]]] .. r[by_cat[at[c + 1] - 1]] (so each category's
     * computation reads its rows only, and sums in the same order) */
    size_t *at, *by_cat;
};

/* A record callback (ctx = struct tl_task_rows *): keeps task attempts. */
void tl_task_rows_add(void *ctx, const struct tl_record *r);
/* All records are in: names in byte order (every output lists them so,
 * whatever the input order). false when out of memory. */
bool tl_task_rows_done(struct tl_task_rows *rs);
void tl_task_rows_free(struct tl_task_rows *rs);
/* The id of category `name` once done (a binary search of the sorted
 * names), or -1. */
int32_t tl_task_rows_category(const struct tl_task_rows *rs, const char *name);
/* Sorted finite values of column c for the rows of category cat (cat < 0:
 * all) into vals (room for every row); the count. */
size_t tl_task_rows_column(const struct tl_task_rows *rs, int32_t cat, int c, double *vals);
/* The q quantile (linear interpolation) of n sorted values; NAN when none. */
double tl_quantile_or_nan(const double *v, size_t n, double q);

/* ------------------------------------------------------------ advise */

enum tl_resource { TL_RES_CORES, TL_RES_MEM, TL_RES_DISK, TL_NRES };
extern const char *const tl_res_name[TL_NRES];       /* cores, memory, disk */
extern const char *const tl_res_waste_unit[TL_NRES];  /* core-hours, GiB-hours */

struct tl_advise_opts {
    double quantile;           /* of use the recommendation covers (0.95) */
    double margin;             /* times that, for memory and disk (1.2) */
    double round[TL_NRES];     /* granularity: cores, bytes, bytes */
    /* --quantile was given: an emitted time limit follows the quantile (and
     * says how many observed successes it would kill) instead of covering
     * the longest successful attempt (issue 57 point 1) */
    bool quantile_given;
};
void tl_advise_opts_default(struct tl_advise_opts *o);

struct tl_advice {
    size_t n_used, n_waste, exceed;
    double req, alloc, used_p50, used_q, used_max, rec;
    double waste, waste_rec; /* over the rows with allocation, use and wall time */
    /* memory only: attempts killed for memory are censored -- they used at
     * least the limit they died at. killed: how many; unmeasured: those
     * with no memory recorded (left out of the quantile); floor: the largest
     * limit one died at (NAN: no limit recorded), which the recommendation
     * exceeds by the margin; rec_is_floor: the floor, not the survivors'
     * quantile, set the recommendation. */
    size_t killed, unmeasured;
    double floor;
    bool rec_is_floor;
};

/* What the recommendation saves against the allocation, never below zero;
 * and what it costs instead, when it asks for more than was allocated
 * (the hog's 50 MiB allocation under its 293 MiB use: the cost buys the
 * failures it avoids). NAN without the rows to say. */
static inline double tl_advice_saves(const struct tl_advice *a)
{
    return a->n_waste ? (a->waste > a->waste_rec ? a->waste - a->waste_rec : 0) : __builtin_nan("");
}
static inline double tl_advice_costs(const struct tl_advice *a)
{
    return a->n_waste ? (a->waste_rec > a->waste ? a->waste_rec - a->waste : 0) : __builtin_nan("");
}

struct tl_cat_advice {
    size_t attempts, tasks;
    struct tl_advice a[TL_NRES];
    size_t exhausted, avoided; /* RESOURCE_EXHAUSTION attempts; those the recommendation covers */
    double ex_core_h, ex_gib_h, ex_wall_h;
};

/* The advice for category cat; tmp has room for tl_advise_tmp_len(rs)
 * doubles (the columns of the category with most rows). */
size_t tl_advise_tmp_len(const struct tl_task_rows *rs);
void tl_advise_category(const struct tl_task_rows *rs, int32_t cat, const struct tl_advise_opts *o,
                        double *tmp, struct tl_cat_advice *ca);

/* ------------------------------------------------------------ plan */

struct tl_node {
    char spec[64]; /* as given: cores=128,mem=512GiB */
    double cores, mem;
};

/* The time a task holds its slot: by default the longer of its wall time
 * and its CPU time spread over the slot's cores (CPU time alone charged a
 * 4-core slot 12.6 minutes for tasks whose wall p95 was 5.6); or CPU time,
 * or wall time, as asked. */
enum tl_plan_time { TL_PLAN_SLOT, TL_PLAN_CPU, TL_PLAN_WALL };

struct tl_plan_opts {
    double quantile;     /* of time and memory (0.95) */
    double scale;        /* observed task counts times this (1) */
    double cores_per_task; /* 0: observed allocation, else request, else 1 */
    enum tl_plan_time time; /* what a task holds its slot for (below) */
};

struct tl_cat_plan {
    double tasks, t_q, m_q, cpt;
    enum tl_plan_time time_is; /* what t_q is: slot, CPU or wall time */
};

/* A category on a node type. */
struct tl_plan_fit {
    double by_cores, by_mem, jobs, hours; /* hours NAN when it does not fit */
    const char *binds;                    /* cores, memory or both */
};

/* The category's plan inputs; tmp has room for every row. */
void tl_plan_category(const struct tl_task_rows *rs, int32_t cat, const struct tl_plan_opts *o,
                      double *tmp, struct tl_cat_plan *p);
void tl_plan_fit(const struct tl_node *nd, const struct tl_cat_plan *p, struct tl_plan_fit *f);

/* ------------------------------------------------------------ energy */

struct tl_power {
    double w_core, w_gib, pue, g_kwh;
};

struct tl_energy {
    size_t attempts, no_cpu, no_mem;
    double cpu_kwh, mem_kwh; /* before PUE */
    /* what the records themselves say (codecarbon's energy_consumed and
     * emissions), beside the estimate, never mixed into it */
    size_t measured;
    double measured_kwh, measured_kg;
};

void tl_power_default(struct tl_power *pw);
void tl_energy_add(struct tl_energy *e, const struct tl_task_row *r, const struct tl_power *pw);

#endif
