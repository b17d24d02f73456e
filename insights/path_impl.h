/* What path.c (the observed path) and path_model.c (the bound, replays,
 * waves) share. Private to insights/. */
#ifndef TL_INSIGHTS_PATH_IMPL_H
#define TL_INSIGHTS_PATH_IMPL_H

#include "insights/path.h"

struct path_ctx {
    const struct tl_path_input *in;
    const struct tl_path_opts *o;
    double *slack;            /* by task */
    uint32_t *pos_e, *pos_w;  /* by task: its position in its run's by-end and by-worker orders */
    size_t *at;               /* run w's rows: order[at[w] .. at[w + 1]) */
    uint32_t *order;
    /* the graph (tl_path_graph) */
    uint32_t *succ_at, *succ; /* task i's successors: succ[succ_at[i] .. succ_at[i + 1]) */
    uint32_t *indeg;          /* resolved dependencies */
    uint32_t *topo;           /* a topological order, each run's tasks together: run w's from topo_at[w] */
    size_t *topo_at;
    double *ef;               /* earliest finish in the bound; then scratch for the what-ifs */
    double *run_end;          /* by run: the bound's last finish */
    size_t *run_unordered;    /* by run: tasks in a dependency cycle */
    uint32_t *scratch;        /* by task: replay's dependencies left */
};

/* The successors, a topological order, earliest finishes and every task's
 * slack. */
bool tl_path_graph(struct path_ctx *c);
void tl_path_graph_free(struct path_ctx *c);
/* The run's bound (cpm_s, zero_slack, unordered). */
bool tl_path_bound(const struct path_ctx *c, const uint32_t *rows, size_t m, struct tl_path_run *r);
/* The run's waves per category and its stragglers. */
bool tl_path_waves(const struct path_ctx *c, const uint32_t *rows, size_t m, struct tl_path_run *r);
/* The run's slots, replay and what-ifs. */
bool tl_path_whatifs(const struct path_ctx *c, const uint32_t *rows, size_t m, struct tl_path_run *r);

/* key + value pairs sorted by key, ties in their order: a stable LSD
 * radix sort, a byte a pass, passes where every key has the same byte
 * skipped (ids fill the low bytes). false: no memory. */
struct tl_path_kv {
    uint64_t key;
    uint32_t v;
};
bool tl_path_radix(struct tl_path_kv *k, size_t n);

/* rows[0..n) sorted by the double at byte offset `at` of their tasks
 * (end, start, submit), ties in their order: a stable LSD radix sort of the
 * doubles' bits, 8 passes (qsort_r with a comparator took 0.3 s of the
 * report's million tasks). false: no memory. */
bool tl_path_sort_rows(const struct tl_path_task *t, uint32_t *rows, size_t n, size_t at);
/* v[0..n) ascending, the same way. */
bool tl_path_sort_doubles(double *v, size_t n);

struct run_sort {
    uint32_t *by_e, *by_w, *seg_lo; /* seg_lo[j]: where by_w[j]'s worker's tasks begin */
};

#endif
