/* Counters by name: the one form in which parsers, sources and sinks say
 * what they counted.
 *
 * A plugin fills an array of struct tl_counter (its `counters` callback:
 * parsers/parser.h, pipeline/source.h, sinks/sink.h); the runtime sums them
 * by name over plugins (the status line, `--stats`, the `tasklens`
 * self-metrics point), the batch commands show a parser's in `summary
 * --format json`. A parser keeps its counters as an enum-indexed array with
 * a table of names, and hands them on with tl_counters_fill. */
#ifndef TL_CORE_COUNTER_H
#define TL_CORE_COUNTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tl_counter {
    const char *name;
    uint64_t value;
    bool self; /* also a field of the `tasklens` self-metrics point */
};

/* The counters a plugin hands on at most (Chrome has 38). */
#define TL_MAX_COUNTERS 64

/* n counters from a table of names and an array of values into out (at
 * most max); their count. */
size_t tl_counters_fill(struct tl_counter *out, size_t max, const char *const *names, const uint64_t *values,
                        size_t n);
/* Adds the m counters of one to the sums in sum (n of them, at most max):
 * one of a name already there is added to it, a new name appended, in the
 * order first seen. Returns the new n. */
size_t tl_counters_merge(struct tl_counter *sum, size_t n, size_t max, const struct tl_counter *one, size_t m);
/* The value of the counter called name (0 when none is). */
uint64_t tl_counter_value(const struct tl_counter *c, size_t n, const char *name);

#endif
