/* Exact quantiles of a sorted array by linear interpolation, computed the way
 * numpy.quantile(method="linear") -- and so pandas -- does, operation for
 * operation, so the numbers match those tools bit for bit rather than only
 * approximately: virtual index h = (n-1)q, and numpy's _lerp, which
 * interpolates from the upper neighbour when the weight is >= 0.5. */
#ifndef TL_QUANTILE_H
#define TL_QUANTILE_H

#include <stddef.h>

double tl_quantile_sorted(const double *sorted, size_t n, double q);
/* Ascending, -0 before +0; NaNs outside the infinities, by their sign bit. */
void tl_sort_doubles(double *v, size_t n);
/* The comparison sort alone with a quicksort depth budget (0: all
 * heapsort), so tests reach each of its paths. */
void tl_sort_doubles_budget(double *v, size_t n, int depth);

/* Parses "0,0.01,0.5,1" into out (at most max); returns the count, or -1
 * when a value is not a number in [0, 1]. */
int tl_parse_quantile_list(const char *s, double *out, int max);

/* The LSST ResourceUsageSummary quantiles: 0 .01 .05 .32 .5 .68 .95 .99 1. */
#define TL_DEFAULT_QUANTILES {0, 0.01, 0.05, 0.32, 0.5, 0.68, 0.95, 0.99, 1}
#define TL_DEFAULT_NQUANTILES 9

#endif
