/* Counters by name: see counter.h. */
#include "core/counter.h"

#include <string.h>

size_t tl_counters_fill(struct tl_counter *out, size_t max, const char *const *names, const uint64_t *values,
                        size_t n)
{
    size_t k = n < max ? n : max;
    for (size_t i = 0; i < k; i++) out[i] = (struct tl_counter){names[i], values[i], false};
    return k;
}

size_t tl_counters_merge(struct tl_counter *sum, size_t n, size_t max, const struct tl_counter *one, size_t m)
{
    for (size_t j = 0; j < m; j++) {
        size_t at = 0;
        while (at < n && strcmp(sum[at].name, one[j].name)) at++;
        if (at < n) sum[at].value += one[j].value;
        else if (n < max) sum[n++] = one[j];
    }
    return n;
}

uint64_t tl_counter_value(const struct tl_counter *c, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c[i].name, name)) return c[i].value;
    return 0;
}
