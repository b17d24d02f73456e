/* Allocations declared outside the log: the requests of an LSST BPS submit
 * YAML, which task metadata does not carry. `requestMemory` (MB, as
 * HTCondor counts them: MiB) and `requestCpus` per pipeline task label
 * under `pipetask:`, and at the top level as the default of every other
 * label (BPS's own defaults, 2048 MB and 1 CPU, when the file has none).
 * A record of a label gets them as its allocation (alloc_memory_bytes,
 * alloc_cores) when it has none, so waste and exceed fractions can be
 * computed for LSST as for Work Queue. */
#ifndef TL_REQUESTS_H
#define TL_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/record.h"

#define TL_BPS_DEFAULT_MEMORY_MB 2048
#define TL_BPS_DEFAULT_CPUS 1

struct tl_requests;

/* err names file:line and key. */
enum tl_err tl_requests_load(const char *path, struct tl_requests **out, char *err, size_t errlen);
void tl_requests_free(struct tl_requests *rq);
/* The request of a label; false when the label is not in the file (the
 * default was given). */
bool tl_requests_get(const struct tl_requests *rq, const char *label, double *bytes,
                     double *cores);
/* Sets r's allocation from its category's request where it has none;
 * false when the label fell back to the default (counted per label, see
 * tl_requests_defaulted). */
bool tl_requests_apply(struct tl_requests *rq, struct tl_record *r);
/* The labels that fell back to the default so far, comma-separated (for a
 * message; "" when none), and how many records they had. */
const char *tl_requests_defaulted(const struct tl_requests *rq, size_t *records);
/* The file's defaults, for messages. */
void tl_requests_defaults(const struct tl_requests *rq, double *mb, double *cpus);

#endif
