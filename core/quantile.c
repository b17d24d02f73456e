#include "quantile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double tl_quantile_sorted(const double *x, size_t n, double q)
{
    if (n == 0) return NAN;
    double h = (double)(n - 1) * q;
    double lo = floor(h);
    size_t i = (size_t)lo;
    if (i >= n - 1) return x[n - 1];
    double t = h - lo;
    double a = x[i], b = x[i + 1];
    double diff = b - a;
    return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

void tl_sort_doubles(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
}

int tl_parse_quantile_list(const char *s, double *out, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        double q = strtod(s, &end);
        if (end == s || !(q >= 0 && q <= 1) || n >= max) return -1;
        out[n++] = q;
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return n;
}
