/* libFuzzer target for the sketch and aggregator deserializers: corrupt or
 * truncated bytes must give an error, never a crash, a leak or an overread;
 * whatever is accepted must answer queries and re-serialize. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/aggregate.h"
#include "core/sketch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    if (mode % 3 == 0) {
        const uint8_t *p = data;
        struct tl_sketch s;
        if (tl_sketch_deserialize(&s, &p, data + size) == TL_OK) {
            if (p > data + size) abort();
            for (double q = 0; q <= 1; q += 0.125) (void)tl_sketch_quantile(&s, q);
            tl_sketch_add(&s, 1.5);
            struct tl_buf b = {0};
            tl_sketch_serialize(&s, &b);
            tl_buf_free(&b);
            tl_sketch_free(&s);
        }
    } else if (mode % 3 == 1) {
        struct tl_sketch *v;
        size_t n;
        if (tl_sketches_unpack(data, size, &v, &n) == TL_OK) {
            for (size_t i = 0; i < n; i++) {
                (void)tl_sketch_quantile(&v[i], 0.5);
                if (i && tl_sketch_merge(&v[0], &v[i]) == TL_OK) (void)tl_sketch_quantile(&v[0], 0.99);
                tl_sketch_free(&v[i]);
            }
            free(v);
        }
    } else {
        struct tl_agg_opts o;
        tl_agg_opts_default(&o);
        struct tl_agg *a = tl_agg_new(&o, NULL, NULL);
        if (a && tl_agg_restore(a, data, size) == TL_OK) {
            struct tl_buf b = {0};
            tl_agg_serialize(a, &b);
            tl_buf_free(&b);
        }
        tl_agg_free(a);
    }
    return 0;
}
