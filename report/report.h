/* `tasklens report`: one self-contained HTML page (inline SVG, no fetch;
 * one inline script, the task table's) that shows a run: the summary
 * table, distributions, requested vs used, concurrency over time, every
 * task and its timeline, outliers, failures, rejected input.
 *
 * This header is what the page shows, as plain data; html.c draws it. The
 * numbers of the tables and the quantile marks are read from the summary's
 * own groups and sketches (core/summary.h), the ones `tasklens summary
 * --format json` prints, so the page says exactly what it says; the plots'
 * data is computed by model.c from the same records. Every number shown has its
 * exact value in a tooltip (SVG <title>, or a cell's title) and in a
 * data-v attribute the tests read. */
#ifndef TL_REPORT_H
#define TL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/record.h"
#include "insights/insights.h"
#include "core/summary.h"

/* The distributions drawn per group. */
#define TL_REPORT_NDIST 4
extern const enum tl_metric tl_report_dist_metric[TL_REPORT_NDIST]; /* wall, cpu, rss, queue */
#define TL_REPORT_NOUTLIERS 10

/* Sorted values of one metric over a group's tasks (final attempts, as the
 * summary counts them). */
struct tl_report_dist {
    double *v;
    size_t n;
};

struct tl_report_point {
    float x, y;
};

/* Allocated (else requested) against measured, one point per attempt;
 * sampled evenly beyond a cap, said on the page. */
struct tl_report_scatter {
    size_t total; /* attempts with both values */
    struct tl_report_point *p;
    size_t n;
    bool requested; /* x is the request (no allocation was recorded) */
};

/* `advise`'s view of one resource of a group (insights/advise.c). */
struct tl_report_advice {
    bool has;
    double used_q, rec, alloc, waste, waste_rec, exceed_fraction;
    size_t n_used, n_waste;
};

enum tl_report_res { TL_REPORT_CORES, TL_REPORT_MEM, TL_REPORT_NRES };

/* What attempts used as a percent of what they requested, as Nextflow's
 * report gives it (its cpuUsage, memUsage, timeUsage): the five numbers
 * and the mean over this run's attempts that recorded both. */
enum tl_report_usage_kind { TL_USAGE_CPU, TL_USAGE_MEM, TL_USAGE_TIME, TL_USAGE_COUNT };
struct tl_report_usage {
    size_t n;
    double min, q1, q2, q3, max, mean;
};

/* Spark's stage figures of a group: sums over its tasks' last attempts
 * (has: some attempt recorded JVM GC time; NAN: none recorded the metric). */
struct tl_report_stage {
    bool has;
    double run_s, gc_s, shuffle_read, shuffle_write, input, output;
};

struct tl_report_group {
    const char *name; /* the category ("(none)" when records had none) */
    struct tl_report_stage stage;
    struct tl_report_dist dist[TL_REPORT_NDIST];
    struct tl_report_scatter scatter[TL_REPORT_NRES];
    struct tl_report_advice advice[TL_REPORT_NRES];
    struct tl_cat_advice ca; /* `advise`'s whole view: cores, memory, disk */
    bool has_ca;
    size_t finals, failed; /* this run's tasks (last attempts), and those that failed for good */
    size_t cancelled;      /* this run's tasks cancelled (neither failed nor succeeded) */
    size_t cached;         /* tasks an earlier run did (Nextflow's CACHED): apart from finals */
    size_t libraries;      /* TaskVine library instances (LIBRARY_EXIT): apart from finals */
    double cpu_s;          /* CPU time of this run's tasks (last attempts; cached ones apart) */
    size_t with_cpu;       /* tasks that measured it */
    struct tl_report_usage usage[TL_USAGE_COUNT];
};

/* Over time, in bins from the first submission to the last end. */
struct tl_report_series {
    size_t nbins;
    double t0, dt; /* s since the epoch; bin width in s */
    double *waiting, *running, *cores; /* at each bin's start */
    double *done;                      /* finished by each bin's end */
    double *cores_connected;           /* from the log's workflow state; NAN when unknown */
    double total_tasks;
    double t_done[3]; /* s after t0 when 50, 90, 99 % of the tasks had finished */
};

/* A resource sample series (a Spark executor's memory, DASF's managed
 * memory): its values over time, every k-th past TL_REPORT_SERIES_POINTS,
 * with the count, min and max of all of them. */
#define TL_REPORT_SERIES_POINTS 600
#define TL_REPORT_MAX_SAMPLE_SERIES 12
struct tl_report_samples {
    const char *name;
    enum tl_unit unit; /* as its name says (tl_report_sample_unit); values x scale are in it */
    double scale;
    const struct tl_report_point *p; /* (s after the series' first, value) */
    size_t n;
    size_t count;
    double min, max;
};

struct tl_report_outlier {
    char id[200];      /* task id / key, data id, or event name with pid/tid */
    const char *group; /* its category */
    double value;
};

enum tl_report_rank { TL_RANK_WALL, TL_RANK_MEM, TL_RANK_RETRIES, TL_RANK_COUNT };

/* The unit of a sample series its name tells (samples.c): Spark's executor
 * metrics "...Memory" are bytes, "...GCTime" milliseconds (x 0.001 s);
 * anything else a count, as written (scale 1). */
enum tl_unit tl_report_sample_unit(const char *name, double *scale);

/* The section "Resource samples" (samples.c). */
struct tl_report_page;
void tl_report_samples_section(FILE *o, const struct tl_report_page *pg);
/* "Inputs" (glance.c): one row per input, the baseline's marked. */
void tl_report_inputs_section(FILE *o, const struct tl_report_page *pg);
/* "Over time" (timeline.c): the page's series drawn, one clock per run. */
void tl_report_time_section(FILE *o, const struct tl_report_page *pg);

/* Spark's stages (stages.c), when the run has them: per stage its tasks'
 * run time, JVM GC time and its share, shuffle read and write, input and
 * output, and the skew (longest task / median task). */
void tl_report_stages(FILE *o, const struct tl_report_page *pg);

/* Runs (workflows: a manager run, an LSST run, a trace) drawn on their own
 * time axes when an input holds several, or several inputs are given. */
#define TL_REPORT_MAX_RUNS 8

/* A timed source line (line_profiler's records: they carry `hits`). */
struct tl_report_line {
    const char *function; /* the category: "<file>:<first line>:<name>" */
    const char *code;     /* the source text, when the input showed it */
    long lineno;
    double hits, seconds;
    double function_s;    /* the function's total: the lines' sum */
};
#define TL_REPORT_MAX_LINES 200000 /* kept; more are counted */

/* Where profiled lines' code was read from, when the input held none. */
#define TL_REPORT_SOURCE_FILES 8
struct tl_report_sources {
    const char *files[TL_REPORT_SOURCE_FILES]; /* read, as found */
    size_t nfiles;
    size_t missing; /* functions whose file was not found */
    size_t changed; /* files modified after the newest input: their code may not be what ran */
};

/* An attempt that measured its energy (codecarbon): when it ended, what it
 * used and its mean power, for the emissions outliers and power over time. */
struct tl_report_energy_point {
    double end, wall, energy_j, kg, cpu_w, gpu_w, ram_w; /* NAN: not recorded */
    const char *category;
    char id[96]; /* its task id or key, as the input names it */
};
#define TL_REPORT_MAX_ENERGY_POINTS 100000 /* kept; more are counted */

/* Energy per category: tasklens's estimate (insights energy.c, its default
 * power model) and what the records measured (codecarbon). */
struct tl_report_energy {
    const char *name;
    struct tl_energy e;
};

struct tl_intern;
struct tl_report_tasks;
struct tl_report_where;

struct tl_report_page {
    const char *title;
    const char *generated; /* an ISO date, or NULL */
    const struct tl_summary_input *inputs;
    size_t ninputs;
    struct tl_summary *summary;   /* of the inputs: the tables' numbers are its own */
    struct tl_summary *workflows; /* the same by source and workflow, or NULL */
    struct tl_summary *baseline;  /* of the --baseline inputs, or NULL */
    const char *baseline_label;
    const struct tl_summary_input *baseline_inputs;
    size_t nbaseline_inputs;
    const struct tl_report_group *base_groups; /* the baseline's distributions, for overlays */
    size_t nbase_groups;
    const struct tl_intern *base_group_names; /* a name -> its place in base_groups */
    bool exact_names; /* match baseline categories by their exact names, not normalized */
    double threshold;          /* a quantile shift beyond it (fraction) is highlighted */
    struct tl_report_group *groups;
    size_t ngroups;
    const struct tl_intern *group_names; /* a name -> its place in groups */
    size_t untimed; /* attempts whose input records no time (Snakemake benchmarks): not on
                     * the timeline, not in the makespan */
    bool nextflow_without_requests; /* Nextflow tasks, none with cpus, memory or time: say which
                                     * trace.fields to add */
    size_t groups_drawn_cap;   /* plots for at most this many groups (most tasks first) */
    const int *extra;          /* more metrics for the summary table (--metrics) */
    size_t nextra;
    size_t scatter_cap;        /* points drawn per scatter */
    double advise_quantile;
    struct tl_report_series series; /* all tasks, from the first submission to the last end */
    struct tl_report_series runs[TL_REPORT_MAX_RUNS]; /* each run's own, most tasks first */
    const char *run_names[TL_REPORT_MAX_RUNS];
    size_t run_tasks[TL_REPORT_MAX_RUNS];
    size_t nruns, runs_more; /* drawn; and runs beyond TL_REPORT_MAX_RUNS, not drawn apart */
    struct tl_report_samples samples[TL_REPORT_MAX_SAMPLE_SERIES]; /* most samples first */
    size_t nsamples, samples_more, samples_constant;
    struct tl_report_outlier top[TL_RANK_COUNT][TL_REPORT_NOUTLIERS];
    size_t ntop[TL_RANK_COUNT];
    /* line profiles: the functions with the most time first, each's lines
     * in line order */
    const struct tl_report_line *lines;
    size_t nlines, lines_more;
    struct tl_report_sources sources;
    bool profile_only; /* every record a profiled line: no task-shaped section */
    /* energy, when some record measured it: per category, and the model */
    const struct tl_report_energy *energy;
    size_t nenergy;
    const struct tl_report_energy_point *energy_points; /* in input order */
    size_t nenergy_points, energy_points_more;
    struct tl_power power;
    struct tl_report_tasks *tasks; /* every attempt, for the task table and timeline (its section takes the
                                    * data tl_report_tasks_start began) */
    struct tl_report_where *where; /* the critical path (where.c), analyzed on a thread of its own */
};

/* What the field's tools measured (field.c): the line profile, as
 * line_profiler shows it with % Time, and the energy and CO2 codecarbon
 * measured beside tasklens's estimate. Nothing when the run has neither. */
void tl_report_line_profile(FILE *o, const struct tl_report_page *pg);
/* A line profile's card: inputs, functions, lines, hits, the costliest
 * function's total (in place of a run's tasks and attempts). */
void tl_report_profile_card(FILE *o, const struct tl_report_page *pg);
void tl_report_energy(FILE *o, const struct tl_report_page *pg);

/* Code for the profiled lines that hold none (source.c): read from the file
 * each function names, beside an input, one or two folders up, or in the
 * working directory; strings interned in store. */
void tl_report_line_sources(struct tl_report_line *lines, size_t n, const struct tl_report_page *pg,
                            struct tl_intern *store, struct tl_report_sources *src);

/* Use as % of the request (usage.c): per category CPU, memory and time as
 * Nextflow's report computes them, beside the raw values of the summary. */
void tl_report_usage(FILE *o, const struct tl_report_page *pg);
/* The usage of category k of rows (its attempts, cached and library ones
 * apart) into u; tmp has room for TL_USAGE_COUNT columns of its rows (as
 * tl_advise_tmp_len gives). */
void tl_report_usage_of(const struct tl_task_rows *rows, size_t k, double *tmp,
                        struct tl_report_usage u[TL_USAGE_COUNT]);

/* The first screen (glance.c): the run card and the categories ranked by
 * what right-sizing saves, each with its recommendation. */
void tl_report_glance(FILE *o, const struct tl_report_page *pg);

/* Categories side by side (strips.c): per drawn metric, a row per
 * category with its p5-p95, p32-p68 and p50, and memory's allocation. */
void tl_report_strips(FILE *o, const struct tl_report_page *pg);
/* The summary's task groups (sample series left out), those that cost
 * most core-hours first; *out to free. */
size_t tl_report_by_cost(struct tl_summary *s, struct tl_agg_group ***out);

/* A per-category table shows TL_REPORT_TOP rows, then at most
 * TL_REPORT_DETAILS_MAX collapsed (no script: <details>); past them the
 * page says how many it leaves to the command that lists them all (a page
 * of a million categories would be gigabytes; this keeps it to a few MB). */
#define TL_REPORT_TOP 20
#define TL_REPORT_DETAILS_MAX 1000
/* Opens the collapsed section of the `rest` rows past a table's top ones
 * ("the 29,980 other categories`order` (the first 1,000 of them)"), and
 * says how many rows it holds; the caller writes them, then closes it with
 * the line of how many it leaves off and that `cmd`, followed by `of`, has
 * them all (`what`: the rows' noun, "categories"). */
size_t tl_report_collapsed_open(FILE *o, size_t rest, const char *what, const char *order);
void tl_report_collapsed_close(FILE *o, size_t rest, const char *what, const char *cmd, const char *of);

/* A label that is a glossary term (core/glossary.h): a link to its entry in
 * the page's "Words on this page", with the sense as its tooltip. */
void tl_report_term(FILE *o, const char *term, const char *text);
/* The glossary at the foot of the page. */
void tl_report_words(FILE *o);
/* g's failed attempts by cause, with their counts (data-cause, data-v). */
void tl_report_causes(FILE *o, const struct tl_agg_group *g);

/* The page's style sheet (css.c). */
extern const char tl_report_css[];

/* Writes the page; TL_ERR_IO when out failed, TL_ERR_NOMEM. */
enum tl_err tl_report_write_html(const struct tl_report_page *page, FILE *out);

/* ------------------------------------------------------------ tasks (tasks.c) */

/* Every attempt as the task table shows it: kept from the records (names
 * copied), drawn as a searchable, sortable table and a timeline of waiting
 * and running. */
struct tl_report_tasks *tl_report_tasks_new(void);
/* "Where the time went" (where.c): the rows of `tasklens path`, its
 * analysis started on a thread at the model's finish, its section. */
struct tl_report_where *tl_report_where_new(void);
void tl_report_where_add(struct tl_report_where *w, const struct tl_record *r);
bool tl_report_where_oom(const struct tl_report_where *w);
void tl_report_where_start(struct tl_report_where *w);
/* false when the analysis could not be made (out of memory): the page is
 * not written without it. */
bool tl_report_where_section(FILE *o, const struct tl_report_page *pg);
void tl_report_where_free(struct tl_report_where *w);
void tl_report_tasks_add(struct tl_report_tasks *t, const struct tl_record *r);
bool tl_report_tasks_oom(const struct tl_report_tasks *t);
size_t tl_report_tasks_count(const struct tl_report_tasks *t);
void tl_report_tasks_free(struct tl_report_tasks *t);
/* Encodes a piece of the rows added so far (a parsing thread's idle work,
 * struct tl_input_opts's idle); true when there was some. Any thread, while
 * another adds rows. */
bool tl_report_tasks_idle(struct tl_report_tasks *t);
/* Starts writing the rows' data on a second thread (every row is in; what
 * tl_report_tasks_idle encoded is taken as it is); the section takes it.
 * Without a thread the section writes it itself. */
void tl_report_tasks_start(struct tl_report_tasks *t);
/* The section "Tasks": the table (its script draws the rows in view; the
 * first rows are plain HTML without it) and the timeline. false when the
 * rows' data or the timeline could not be written whole (out of memory). */
bool tl_report_tasks_section(FILE *o, const struct tl_report_page *pg);

/* ------------------------------------------------------------ model (model.c) */

struct tl_report_model;

/* The plots' data of `tasklens report` (this header), from the records:
 * per category the sorted values of the drawn metrics (tasks' last
 * attempts, as the summary counts them), allocated vs used per attempt,
 * `advise`'s view; concurrency over time; the outliers; with task_list,
 * every attempt for the task table (tasks.c). */
struct tl_report_model *tl_report_model_new(size_t scatter_cap, size_t nbins, bool task_list);
/* A record callback (ctx = the model). */
void tl_report_model_add(void *ctx, const struct tl_record *r);
/* The model's work for a parsing thread that waits for the records to be
 * taken (struct tl_input_opts's idle; ctx = the model): the task table's
 * rows encoded as they come. */
bool tl_report_model_idle(void *ctx);
/* Fills pg's groups, series and outliers (pointing into the model, which
 * must outlive pg). false when out of memory. */
bool tl_report_model_finish(struct tl_report_model *m, const struct tl_advise_opts *ao,
                            struct tl_report_page *pg);
void tl_report_model_free(struct tl_report_model *m);

#endif
