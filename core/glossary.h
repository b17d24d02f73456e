/* The glossary in code: the predicates behind the words a person reads.
 *
 * "failed", "cached", "library instance" and a failed attempt's cause are
 * decided here and nowhere else, so the report, `top`, `summary`, `advise`,
 * the line protocol and the Grafana panels (which read the `failed` and
 * `cause` fields this module decides) count the same attempts. Each term is
 * defined once for people in docs/glossary.md; tl_glossary[] lists the terms
 * so a test can hold the two together. */
#ifndef TL_GLOSSARY_H
#define TL_GLOSSARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/record.h"

/* Whether a result means the attempt did its work: SUCCESS (Work Queue,
 * LSST, Snakemake, codecarbon, line_profiler), Success (Spark), NO_WORK
 * (LSST's NoWorkFound), exec_done and memo_done (Parsl), COMPLETED and
 * CACHED (Nextflow; a cached task did its work in an earlier run).
 * Everything else is a failure of some kind. */
bool tl_result_ok(const char *result);

/* "failed": an attempt failed when its result is one its system calls a
 * failure, or when it records a non-zero exit code (a Work Queue task whose
 * command exited 1 is SUCCESS to Work Queue, failed to its user). An attempt
 * with neither a result nor an exit code did not fail, nor did a cancelled
 * one or a library instance. */
bool tl_attempt_failed(const char *result, bool has_exit_code, int32_t exit_code);
/* The same verdict with "apart" told from "did not fail", in one pass (a
 * success result costs one compare: what the parsers and the aggregator see
 * most). */
enum tl_verdict {
    TL_VERDICT_OK,     /* did not fail */
    TL_VERDICT_FAILED, /* the glossary's failed */
    TL_VERDICT_APART   /* a library instance or a cancelled attempt: neither */
};
enum tl_verdict tl_attempt_verdict(const char *result, bool has_exit_code, int32_t exit_code);

/* The verdict of a stream of records, remembering the last result's (the
 * parsers hand out interned results: one pointer compare a record where
 * the strcmps cost 1 % of `summary`, callgrind). cached: the last result is
 * Nextflow's CACHED. Zeroed means empty. */
struct tl_verdict_memo {
    const char *result;
    enum tl_verdict v;
    bool cached;
};
static inline enum tl_verdict tl_verdict_of(struct tl_verdict_memo *m, const struct tl_record *r);
/* "cached": a task an earlier run did (Nextflow's CACHED under -resume).
 * Counted apart: never in this run's makespan, CPU time or success rate. */
bool tl_result_cached(const char *result);
/* "cancelled": stopped by the workflow or its user before it finished
 * (Work Queue's CANCELED, Nextflow's ABORTED, Spark's TaskKilled). Neither
 * failed nor succeeded: counted apart, as Nextflow's report counts aborted. */
bool tl_result_cancelled(const char *result);
/* "library instance": a TaskVine library's end (LIBRARY_EXIT). A library
 * serves the workflow's function calls and is not one of its tasks --
 * counted apart, never a failed task nor a success. */
bool tl_result_library(const char *result);

/* The one name of an absent category (or host, or result) on every surface:
 * the report, `top`, `summary`'s table, `advise` and `plan`. JSON says null. */
#define TL_ABSENT_NAME "(none)"

/* "allocated cores": what the system gave the attempt, else what it asked
 * for (Nextflow's cpus, a Work Queue request without an allocation); 0 when
 * the input records neither. Core-hours are these x wall time. */
static inline double tl_allocated_cores(const struct tl_record *r)
{
    if (tl_record_has(r, TL_M_ALLOC_CORES)) return r->v[TL_M_ALLOC_CORES];
    return tl_record_has(r, TL_M_REQ_CORES) ? r->v[TL_M_REQ_CORES] : 0;
}

/* Why a failed attempt failed, when its input says. The order is the order
 * tables list them in. */
enum tl_cause {
    TL_CAUSE_NONE,          /* the attempt did not fail */
    TL_CAUSE_MEMORY,        /* memory limit: RESOURCE_EXHAUSTION over memory, exit 137 (SIGKILL), OOM */
    TL_CAUSE_TIME,          /* time limit: MAX_WALL_TIME, exit 140, exit 143 at >= 90 % of the limit */
    TL_CAUSE_DISK,          /* disk: RESOURCE_EXHAUSTION over disk, DISK_ALLOC_FULL */
    TL_CAUSE_LOST_WORKER,   /* the worker or executor went away (FORSAKEN, REQUEUED, ExecutorLost) */
    TL_CAUSE_MISSING_INPUT, /* an input or a dependency was not there (INPUT_MISSING, dep_fail) */
    TL_CAUSE_TASK_ERROR,    /* the task's own error: a non-zero exit, an exception, missing outputs */
    TL_CAUSE_UNKNOWN,       /* failed, and the input records nothing that says why */
    TL_CAUSE_COUNT
};
/* The cause's one name on every surface: JSON keys, the line protocol's
 * cause field, the report and `top` ("memory", "time_limit", ...). */
const char *tl_cause_name(enum tl_cause c);
/* The same for a sentence: "time limit", "lost worker", ... */
const char *tl_cause_label(enum tl_cause c);
/* The cause of r's failure; TL_CAUSE_NONE when r did not fail. */
enum tl_cause tl_failure_cause(const struct tl_record *r);

static inline enum tl_verdict tl_verdict_of(struct tl_verdict_memo *m, const struct tl_record *r)
{
    if (__builtin_expect(r->result != m->result, 0)) { /* zeroed: a NULL result's verdict, OK */
        m->result = r->result;
        m->v = tl_attempt_verdict(r->result, false, 0);
        m->cached = m->v == TL_VERDICT_OK && tl_result_cached(r->result);
    }
    if (m->v == TL_VERDICT_OK && r->has_exit_code && r->exit_code != 0) return TL_VERDICT_FAILED;
    return m->v;
}

/* One term a person reads, with the one-line sense docs/glossary.md gives. */
struct tl_term {
    const char *term;
    const char *sense;
};
extern const struct tl_term tl_glossary[];
extern const size_t tl_glossary_count;

#endif
