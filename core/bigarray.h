/* Growing the large arrays the batch commands keep per attempt (report's
 * rows, spans, distributions; advise's rows): a realloc that doubles, and,
 * once a block is large, a request that the kernel back it with huge pages.
 *
 * Why: a million-attempt report touches ~500 MB of fresh memory, and with
 * 4 KiB pages the first touches of those pages were an eighth of its time
 * (perf: exc_page_fault 11.9 %). Transparent huge pages are "madvise" on
 * Debian's default kernels, so a block is only backed by 2 MiB pages when
 * asked. The request is advice: where it is refused nothing changes. */
#ifndef TL_BIGARRAY_H
#define TL_BIGARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define TL_BIGARRAY_HUGE ((size_t)8 << 20) /* blocks from here on ask for huge pages */

/* Asks that the whole 2 MiB pages inside [p, p + bytes) be huge pages. */
static inline void tl_bigarray_advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), b = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (b > a) madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* Room for n + 1 elements of size bytes in *v (capacity *cap, doubled as
 * needed); false when out of memory (*v unchanged). */
static inline bool tl_bigarray_grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return true;
    size_t c = *cap ? *cap * 2 : 64;
    void *p = realloc(*v, c * size);
    if (!p) return false;
    if (c * size >= TL_BIGARRAY_HUGE) tl_bigarray_advise(p, c * size);
    *v = p;
    *cap = c;
    return true;
}

#endif
