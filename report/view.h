/* What the report's tables share (html.c, baseline.c): a summary's groups
 * seen as a table reads them -- in `summary`'s order, found by name -- and
 * the cells every per-category table writes the same way. Only the
 * report's drawing includes it. */
#ifndef TL_REPORT_VIEW_H
#define TL_REPORT_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/map64.h"
#include "core/summary.h"
#include "report/report.h"
#include "report/svg.h"

struct tl_intern;
struct tl_sketch;

/* The four distributions' names as the tables head them ("wall time"). */
extern const char *const tl_report_dist_label[TL_REPORT_NDIST];

/* A summary's groups, in the order `summary` prints them, each with its
 * category whole, and indexes from a name (and from a normalized name, for
 * the baseline) to its place: a lookup is a hash, not a walk of every
 * group, so a page of many categories is not quadratic in them. */
struct view {
    struct tl_summary *s;
    struct tl_agg_group **g;
    size_t n;
    struct tl_intern *names;      /* name -> id == place in g */
    struct tl_map64 place;        /* a group's address -> its place in g */
    struct tl_intern *normalized; /* normalized name -> id; first place in norm_at */
    size_t *norm_at;
};

/* indexed: by category (the run's and the baseline's groups); false: no
 * memory. */
bool tl_view_open(struct view *v, struct tl_summary *s, bool indexed);
void tl_view_close(struct view *v);
/* g's category, whole. */
const char *tl_view_name(const struct view *v, const struct tl_agg_group *g);
/* The group of a category, or NULL (an indexed view). */
struct tl_agg_group *tl_view_find(const struct view *v, const char *name);
/* The baseline's group for a category of the run: the same name, or with
 * --exact-names off (the default) the same normalized name. */
struct tl_agg_group *tl_view_baseline_group(const struct tl_report_page *pg, struct view *base, const char *name);
/* The baseline's distributions of a category: those of the baseline group
 * its table row is compared with (tl_view_baseline_group), found by that
 * group's name -- by hash, where a scan of every baseline name (normalized
 * again per plot) made a page of n categories against n baseline ones
 * quadratic. */
const struct tl_report_group *tl_view_baseline_dists(const struct tl_report_page *pg, struct view *base,
                                                     const char *name);
/* A group's sketch of metric m, its quantile q (NAN: none), whether it is
 * approximate (past the exact limit). */
struct tl_sketch *tl_view_metric(const struct view *v, const struct tl_agg_group *g, enum tl_metric m);
double tl_view_quantile(struct tl_sketch *k, double q);
bool tl_view_approx(const struct tl_sketch *k);

/* A table cell with its exact value (data-v, tooltip) and human text. */
void tl_cell_num(FILE *o, double v, enum tl_unit unit, bool approx, const char *attrs);
void tl_cell_count(FILE *o, uint64_t n, const char *what);
/* A table row for a summary group, opened with its name. */
void tl_cell_group_row(FILE *o, const struct view *v, const struct tl_agg_group *g);
/* A group's tasks, attempts, open tasks, wall-hours and core-hours, as
 * cells, and their heads linked to the glossary. */
void tl_cell_group_counts(FILE *o, const struct tl_agg_group *g);
void tl_cell_counts_head(FILE *o);

/* Per category and metric, p50 and p95 against the baseline's (baseline.c);
 * false: no memory for it. */
bool tl_report_baseline_section(FILE *o, const struct tl_report_page *pg, const struct view *v, struct view *base);

#endif
