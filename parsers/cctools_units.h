/* cctools' units, one table for every parser that reads resource values
 * cctools writes as [value, "unit"] (rmsummary JSON: the Work Queue and
 * TaskVine transaction logs, resource_monitor summaries).
 *
 * cctools writes sizes in "MB" that are 2^20 bytes (MEGABYTE in
 * dttools/src/rmsummary.c), "GB" 2^30, "KB" 2^10; times in "s", "ms" or
 * "us"; a bare number is MB for a size and seconds for a time. Counts
 * (cores, files, processes, bandwidth in Mbps) carry units that name what
 * is counted and need no factor. A size or time in a unit this table does
 * not know is not guessed: its factor is 0 and the parser rejects the value
 * (counted, with file:line), as it does a negative one.
 *
 * Inline and branchy on purpose: it runs for every value of every task in
 * a Work Queue log ("MB" tested first, as the old private copy did; with
 * the Work Queue scanner's own "MB" shortcut it costs less than that copy,
 * bench/RESULTS.md's "The house"). */
#ifndef TL_PARSERS_CCTOOLS_UNITS_H
#define TL_PARSERS_CCTOOLS_UNITS_H

#include <stddef.h>

/* What a value measures; COUNT first, so a key a table leaves out counts. */
enum tl_cctools_kind { TL_CCTOOLS_COUNT, TL_CCTOOLS_BYTES, TL_CCTOOLS_SECONDS };

/* The factor from u (n bytes, not NUL-terminated) to bytes or seconds; 0
 * for a unit that is not one of the kind's. */
static inline double tl_cctools_unit(enum tl_cctools_kind kind, const char *u, size_t n)
{
    /* the units cctools writes most first, as the one before did: "MB", "s" */
    if (n == 2 && u[1] == 'B') {
        if (kind != TL_CCTOOLS_BYTES) return kind == TL_CCTOOLS_COUNT ? 1.0 : 0;
        switch (u[0]) {
        case 'M': return 1048576.0;
        case 'G': return 1073741824.0;
        case 'K': case 'k': return 1024.0;
        default: return 0;
        }
    }
    if (kind == TL_CCTOOLS_COUNT) return 1.0;
    if (n == 1)
        return u[0] == 's' ? kind == TL_CCTOOLS_SECONDS : u[0] == 'B' ? kind == TL_CCTOOLS_BYTES : 0;
    if (n == 0) return kind == TL_CCTOOLS_BYTES ? 1048576.0 : 1.0;
    if (n != 2 || u[1] != 's' || kind != TL_CCTOOLS_SECONDS) return 0;
    return u[0] == 'm' ? 1e-3 : u[0] == 'u' ? 1e-6 : 0;
}

#endif
