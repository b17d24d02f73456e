/* The glossary in code: see glossary.h. */
#include "core/glossary.h"

#include <string.h>

#include "core/record.h"

bool tl_result_ok(const char *result)
{
    static const char *const ok[] = {"SUCCESS", "Success", "NO_WORK", "exec_done", "memo_done",
                                     "COMPLETED", "CACHED"};
    if (!result) return false;
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strcmp(result, ok[i])) return true;
    return false;
}

enum tl_verdict tl_attempt_verdict(const char *result, bool has_exit_code, int32_t exit_code)
{
    enum tl_verdict by_exit = has_exit_code && exit_code != 0 ? TL_VERDICT_FAILED : TL_VERDICT_OK;
    if (!result || tl_result_ok(result)) return by_exit; /* SUCCESS: one compare */
    if (tl_result_library(result) || tl_result_cancelled(result)) return TL_VERDICT_APART;
    return strcmp(result, "(none)") ? TL_VERDICT_FAILED : by_exit;
}

bool tl_attempt_failed(const char *result, bool has_exit_code, int32_t exit_code)
{
    return tl_attempt_verdict(result, has_exit_code, exit_code) == TL_VERDICT_FAILED;
}

bool tl_result_cached(const char *result)
{
    return result && !strcmp(result, "CACHED");
}

bool tl_result_cancelled(const char *result)
{
    static const char *const said[] = {"CANCELED", "CANCELLED", "ABORTED", "TaskKilled"};
    if (!result) return false;
    for (size_t i = 0; i < sizeof said / sizeof *said; i++)
        if (!strcmp(result, said[i])) return true;
    return false;
}

bool tl_result_library(const char *result)
{
    return result && !strcmp(result, "LIBRARY_EXIT");
}

static const char *const cause_names[TL_CAUSE_COUNT] = {
    "", "memory", "time_limit", "disk", "lost_worker", "missing_input", "task_error", "unknown",
};
static const char *const cause_labels[TL_CAUSE_COUNT] = {
    "", "memory", "time limit", "disk", "lost worker", "missing input", "task error", "unknown",
};

const char *tl_cause_name(enum tl_cause c)
{
    return (unsigned)c < TL_CAUSE_COUNT ? cause_names[c] : "";
}

const char *tl_cause_label(enum tl_cause c)
{
    return (unsigned)c < TL_CAUSE_COUNT ? cause_labels[c] : "";
}

/* A result that names its cause, whatever the exit code says. */
static enum tl_cause cause_of_result(const char *res)
{
    static const struct {
        const char *result;
        enum tl_cause cause;
    } said[] = {
        {"MAX_WALL_TIME", TL_CAUSE_TIME},        {"MAX_END_TIME", TL_CAUSE_TIME},
        {"TIMEOUT", TL_CAUSE_TIME},              {"DISK_ALLOC_FULL", TL_CAUSE_DISK},
        {"SANDBOX_EXHAUSTION", TL_CAUSE_DISK},   {"OUT_OF_MEMORY", TL_CAUSE_MEMORY},
        {"OOM", TL_CAUSE_MEMORY},                {"FORSAKEN", TL_CAUSE_LOST_WORKER},
        {"REQUEUED", TL_CAUSE_LOST_WORKER},      {"ExecutorLostFailure", TL_CAUSE_LOST_WORKER},
        {"NODE_FAIL", TL_CAUSE_LOST_WORKER},     {"INPUT_MISSING", TL_CAUSE_MISSING_INPUT},
        {"FIXED_LOCATION_MISSING", TL_CAUSE_MISSING_INPUT},
        {"MISSING_LIBRARY", TL_CAUSE_MISSING_INPUT},
        {"FetchFailed", TL_CAUSE_MISSING_INPUT}, {"dep_fail", TL_CAUSE_MISSING_INPUT},
        {"OUTPUT_MISSING", TL_CAUSE_TASK_ERROR}, {"STDOUT_MISSING", TL_CAUSE_TASK_ERROR},
        {"ExceptionFailure", TL_CAUSE_TASK_ERROR},
    };
    for (size_t i = 0; i < sizeof said / sizeof *said; i++)
        if (!strcmp(res, said[i].result)) return said[i].cause;
    return TL_CAUSE_NONE;
}

/* RESOURCE_EXHAUSTION: the limit the monitor says was exceeded. */
static enum tl_cause cause_of_exhaustion(const struct tl_record *r)
{
    if (tl_record_has(r, TL_M_LIMIT_MEMORY_BYTES)) return TL_CAUSE_MEMORY;
    if (tl_record_has(r, TL_M_LIMIT_WALL_TIME_S)) return TL_CAUSE_TIME;
    if (tl_record_has(r, TL_M_LIMIT_DISK_BYTES)) return TL_CAUSE_DISK;
    return TL_CAUSE_UNKNOWN; /* a limit, and the log does not say which */
}

/* Exit 143 (SIGTERM) is a time limit when the attempt ran 90 % or more of
 * the time it was given; otherwise something else stopped it. */
static bool near_time_limit(const struct tl_record *r)
{
    double limit = tl_record_has(r, TL_M_LIMIT_WALL_TIME_S) ? r->v[TL_M_LIMIT_WALL_TIME_S]
                   : tl_record_has(r, TL_M_REQ_WALL_TIME_S) ? r->v[TL_M_REQ_WALL_TIME_S]
                                                             : 0;
    return limit > 0 && tl_record_has(r, TL_M_WALL_TIME_S) && r->v[TL_M_WALL_TIME_S] >= 0.9 * limit;
}

static enum tl_cause cause_of_exit(const struct tl_record *r)
{
    switch (r->exit_code) {
    case 137: return TL_CAUSE_MEMORY; /* SIGKILL: what a memory limit sends */
    case 140: return TL_CAUSE_TIME;   /* the batch systems' run-time limit */
    case 143: return near_time_limit(r) ? TL_CAUSE_TIME : TL_CAUSE_TASK_ERROR;
    default: return r->exit_code > 0 ? TL_CAUSE_TASK_ERROR : TL_CAUSE_UNKNOWN;
    }
}

enum tl_cause tl_failure_cause(const struct tl_record *r)
{
    if (!tl_attempt_failed(r->result, r->has_exit_code, r->exit_code)) return TL_CAUSE_NONE;
    const char *res = r->result;
    if (res && !strcmp(res, "RESOURCE_EXHAUSTION")) return cause_of_exhaustion(r);
    enum tl_cause c = res ? cause_of_result(res) : TL_CAUSE_NONE;
    if (c != TL_CAUSE_NONE) return c;
    if (r->has_exit_code && r->exit_code != 0) return cause_of_exit(r);
    return TL_CAUSE_UNKNOWN;
}

const struct tl_term tl_glossary[] = {
    {"task", "one unit of work as its system counts it; its figures are its last attempt's"},
    {"attempt", "one try of a task; a retry is another attempt of the same task"},
    {"succeeded", "a task whose last attempt did not fail"},
    {"failed", "a result its system calls a failure, or a recorded non-zero exit code"},
    {"cause", "why a failed attempt failed, when its input says: memory, time limit, disk, "
              "lost worker, missing input, task error, unknown"},
    {"cancelled", "stopped by the workflow or its user before it finished; neither failed nor "
                  "succeeded"},
    {"cached", "a task an earlier run did (Nextflow CACHED); counted apart"},
    {"retried", "attempts beyond a task's first"},
    {"open", "a task still waiting or running when the input ends"},
    {"library instance", "a TaskVine library (LIBRARY_EXIT); not a task, counted apart"},
    {"function call", "a TaskVine task run inside a library; its resources are not measured"},
    {"measured", "a value the input recorded; absent is never 0"},
    {"wall-hours", "the sum of this run's tasks' wall times, in hours (cached tasks apart)"},
    {"core-hours", "allocated (else requested) cores x wall time, summed over this run's tasks, in hours"},
    {"CPU-hours", "the sum of this run's tasks' CPU times (user + system), in hours"},
    {"allocated cores", "the cores the system gave an attempt, else the cores it asked for"},
    {"used cores", "CPU time / wall time"},
    {"waste", "allocated minus used, over the attempt's wall time"},
    {"saves", "the unused allocation a recommendation removes, never below zero"},
    {"costs", "the allocation a recommendation adds where it asks for more than was allocated"},
    {"makespan", "first submission to last end of this run's timed tasks"},
    {"untimed attempt", "an attempt whose input records no time; never on a timeline"},
    {"slot time", "the longer of a task's wall time and its CPU time over its cores"},
    {"rate", "attempts ended per minute over min(window, the run's age)"},
    {"% of request", "what an attempt used over what it asked for: CPU time / wall / cpus, peak memory / "
                     "memory, wall time / time limit"},
    {"first allocation", "what a task's first attempt asks for; a retry after a resource kill asks for more"},
    {"allocated core-hours", "cores asked for x wall time over every attempt, retries and kills included"},
    {"allocated GiB-hours", "memory asked for x wall time over every attempt, retries and kills included"},
    {"replay", "the observed run done again under changed settings, before anyone runs them: advise tries "
               "memory and retries attempt by attempt; path reschedules the tasks on the slots"},
    {"killed for good", "a success the settings would kill on every attempt they allow"},
    {"critical path", "from the task that ended last, back through the dependency that ended last (else the task "
                      "that freed its worker); its steps tile the makespan"},
    {"deps", "on the critical path: from the step before to this step's submission -- dependencies, or the "
             "workflow not yet asking"},
    {"queue", "on the critical path: submitted, waiting for a worker or slot"},
    {"retries", "on the critical path: the time in a step's earlier attempts"},
    {"compute", "on the critical path: the running time of the attempt that counted"},
    {"bound", "the makespan with unlimited workers: the critical path method over the dependencies"},
    {"slack", "how much later a task could end without lengthening the bound"},
    {"waves", "a category's tasks over the most of them that ran at once"},
    {"straggler", "a task that ran longer than Q3 + 1.5 IQR of its category's running times"},
};
const size_t tl_glossary_count = sizeof tl_glossary / sizeof *tl_glossary;
