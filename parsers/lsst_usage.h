/* LSST's ResourceUsageSummary table (lsst_usage.c), reproduced exactly:
 * one row per task label with
 *   task, quanta, integrated_runtime_hrs,
 *   mem_GB_p000 ... mem_GB_p100, runtime_s_p000 ..., walltime_s_p000 ...
 * at q = 0, .01, .05, .32, .5, .68, .95, .99, 1 with numpy's linear
 * interpolation (core/quantile.c), memory in GiB (bytes / 1024 / 1024 /
 * 1024), runtime = end - start CPU seconds, walltime = endUtc - prepUtc,
 * integrated_runtime_hrs = sum(runtime) / 3600 with numpy's pairwise sum.
 * Every quantum counts, NoWorkFound ones too (runtime 0). Rows are sorted
 * by label (pandas' pivot order). */
#ifndef TL_PARSERS_LSST_USAGE_H
#define TL_PARSERS_LSST_USAGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/record.h"

#define TL_LSST_NQ 9
extern const char *const tl_lsst_usage_qnames[TL_LSST_NQ]; /* "p000" ... "p100" */

struct tl_lsst_usage_row {
    const char *label;
    uint64_t quanta;
    double integrated_runtime_hrs;
    double mem_gb[TL_LSST_NQ], runtime_s[TL_LSST_NQ], walltime_s[TL_LSST_NQ]; /* NaN: no values */
};

struct tl_lsst_usage;

struct tl_lsst_usage *tl_lsst_usage_new(void);
/* A record callback (ctx = the table): each quantum's final record. */
void tl_lsst_usage_add(void *ctx, const struct tl_record *r);
uint64_t tl_lsst_usage_quanta(const struct tl_lsst_usage *u);
/* The rows, sorted by label (malloc'ed array; labels borrowed from u). */
size_t tl_lsst_usage_rows(struct tl_lsst_usage *u, struct tl_lsst_usage_row **out);
void tl_lsst_usage_free(struct tl_lsst_usage *u);

#endif
