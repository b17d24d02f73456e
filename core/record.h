/* The normalized resource record.
 *
 * Every parser turns what it reads into struct tl_record: one per finished
 * task attempt, plus worker / manager events and resource samples. Units are
 * canonical and spelled in the metric names (seconds, bytes, counts), so the
 * rest of the program never converts again.
 *
 * Absent is not zero: each metric has a bit in `present`. A task that was
 * never measured has no max_rss_bytes, not max_rss_bytes = 0.
 *
 * Strings are borrowed: they stay valid while the callback that received the
 * record runs (parsers hand out interned names). Consumers that keep a record
 * copy what they need. */
#ifndef TL_RECORD_H
#define TL_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <math.h>

enum tl_unit {
    TL_UNIT_SECONDS, TL_UNIT_BYTES, TL_UNIT_COUNT, TL_UNIT_MBPS, TL_UNIT_JOULES, TL_UNIT_WATTS,
    TL_UNIT_KG, TL_UNIT_PERCENT
};

/* X(enum suffix, name, unit, help). The order is the canonical output order. */
#define TL_METRICS(X)                                                                              \
    X(WALL_TIME_S, "wall_time_s", TL_UNIT_SECONDS, "wall time of the attempt (measured; else worker/lifecycle)") \
    X(CPU_TIME_S, "cpu_time_s", TL_UNIT_SECONDS, "CPU time (user + system)")                        \
    X(USER_TIME_S, "user_time_s", TL_UNIT_SECONDS, "user CPU time")                                  \
    X(SYSTEM_TIME_S, "system_time_s", TL_UNIT_SECONDS, "system CPU time")                            \
    X(QUEUE_TIME_S, "queue_time_s", TL_UNIT_SECONDS, "waiting/ready -> running")                    \
    X(EXEC_TIME_S, "exec_time_s", TL_UNIT_SECONDS, "running -> waiting_retrieval (lifecycle)")      \
    X(RETRIEVAL_TIME_S, "retrieval_time_s", TL_UNIT_SECONDS, "waiting_retrieval -> retrieved")      \
    X(INIT_TIME_S, "init_time_s", TL_UNIT_SECONDS, "initialization CPU time before the run")        \
    X(MAX_RSS_BYTES, "max_rss_bytes", TL_UNIT_BYTES, "peak resident memory")                        \
    X(VIRTUAL_MEMORY_BYTES, "virtual_memory_bytes", TL_UNIT_BYTES, "peak virtual memory")           \
    X(SWAP_BYTES, "swap_bytes", TL_UNIT_BYTES, "peak swap")                                         \
    X(DISK_BYTES, "disk_bytes", TL_UNIT_BYTES, "peak sandbox disk use")                             \
    X(BYTES_READ, "bytes_read", TL_UNIT_BYTES, "bytes read from files")                             \
    X(BYTES_WRITTEN, "bytes_written", TL_UNIT_BYTES, "bytes written to files")                      \
    X(BYTES_SENT, "bytes_sent", TL_UNIT_BYTES, "bytes sent over the network")                       \
    X(BYTES_RECEIVED, "bytes_received", TL_UNIT_BYTES, "bytes received over the network")           \
    X(INPUT_BYTES, "input_bytes", TL_UNIT_BYTES, "input files sent by the manager")                 \
    X(OUTPUT_BYTES, "output_bytes", TL_UNIT_BYTES, "output files fetched by the manager")           \
    X(INPUT_TIME_S, "input_time_s", TL_UNIT_SECONDS, "time to send inputs")                         \
    X(OUTPUT_TIME_S, "output_time_s", TL_UNIT_SECONDS, "time to fetch outputs")                     \
    X(CORES, "cores", TL_UNIT_COUNT, "peak cores used (measured)")                                  \
    X(CORES_AVG, "cores_avg", TL_UNIT_COUNT, "average cores used (measured)")                       \
    X(GPUS, "gpus", TL_UNIT_COUNT, "GPUs used (measured)")                                          \
    X(CONTEXT_SWITCHES, "context_switches", TL_UNIT_COUNT, "context switches")                      \
    X(INVOL_CONTEXT_SWITCHES, "involuntary_context_switches", TL_UNIT_COUNT,                        \
      "involuntary context switches (when counted apart)")                                         \
    X(MINOR_PAGE_FAULTS, "minor_page_faults", TL_UNIT_COUNT, "minor page faults")                   \
    X(MAJOR_PAGE_FAULTS, "major_page_faults", TL_UNIT_COUNT, "major page faults")                   \
    X(BLOCK_INPUTS, "block_inputs", TL_UNIT_COUNT, "block input operations")                        \
    X(BLOCK_OUTPUTS, "block_outputs", TL_UNIT_COUNT, "block output operations")                     \
    X(TOTAL_PROCESSES, "total_processes", TL_UNIT_COUNT, "processes started")                       \
    X(MAX_CONCURRENT_PROCESSES, "max_concurrent_processes", TL_UNIT_COUNT, "peak concurrent processes") \
    X(TOTAL_FILES, "total_files", TL_UNIT_COUNT, "files in the sandbox")                            \
    X(MACHINE_CPUS, "machine_cpus", TL_UNIT_COUNT, "CPUs of the machine the task ran on")           \
    X(BANDWIDTH_MBPS, "bandwidth_mbps", TL_UNIT_MBPS, "peak network bandwidth (Mbit/s)")            \
    X(REQ_CORES, "req_cores", TL_UNIT_COUNT, "cores requested")                                     \
    X(REQ_MEMORY_BYTES, "req_memory_bytes", TL_UNIT_BYTES, "memory requested")                      \
    X(REQ_DISK_BYTES, "req_disk_bytes", TL_UNIT_BYTES, "disk requested")                            \
    X(REQ_GPUS, "req_gpus", TL_UNIT_COUNT, "GPUs requested")                                        \
    X(ALLOC_CORES, "alloc_cores", TL_UNIT_COUNT, "cores allocated")                                 \
    X(ALLOC_MEMORY_BYTES, "alloc_memory_bytes", TL_UNIT_BYTES, "memory allocated")                  \
    X(ALLOC_DISK_BYTES, "alloc_disk_bytes", TL_UNIT_BYTES, "disk allocated")                        \
    X(ALLOC_GPUS, "alloc_gpus", TL_UNIT_COUNT, "GPUs allocated")                                    \
    X(LIMIT_CORES, "limit_cores", TL_UNIT_COUNT, "cores limit that was exceeded")                   \
    X(LIMIT_MEMORY_BYTES, "limit_memory_bytes", TL_UNIT_BYTES, "memory limit that was exceeded")    \
    X(LIMIT_DISK_BYTES, "limit_disk_bytes", TL_UNIT_BYTES, "disk limit that was exceeded")          \
    X(LIMIT_WALL_TIME_S, "limit_wall_time_s", TL_UNIT_SECONDS, "wall time limit that was exceeded") \
    X(SAMPLE_VALUE, "value", TL_UNIT_COUNT, "value of a resource sample")                         \
    X(TASKS_WAITING, "tasks_waiting", TL_UNIT_COUNT, "workflow: tasks waiting to run")               \
    X(TASKS_RUNNING, "tasks_running", TL_UNIT_COUNT, "workflow: tasks dispatched, not returned")     \
    X(TASKS_DONE, "tasks_done", TL_UNIT_COUNT, "workflow: tasks finished that did not fail (glossary)")              \
    X(TASKS_FAILED, "tasks_failed", TL_UNIT_COUNT, "workflow: tasks whose last attempt failed (glossary)")             \
    X(WORKERS, "workers", TL_UNIT_COUNT, "workflow: workers connected")                              \
    X(WORKER_CORES, "cores_total", TL_UNIT_COUNT, "workflow: cores of the connected workers")          \
    /* appended last: parser states saved with fewer metrics keep their indices */               \
    X(JVM_GC_TIME_S, "jvm_gc_time_s", TL_UNIT_SECONDS, "JVM garbage collection time (Spark)")       \
    X(PEAK_EXECUTION_MEMORY_BYTES, "peak_execution_memory_bytes", TL_UNIT_BYTES,                   \
      "peak execution memory: Spark's shuffles, aggregations and joins")                         \
    X(STORAGE_READ_BYTES, "storage_read_bytes", TL_UNIT_BYTES,                                      \
      "bytes fetched from storage (read_bytes of /proc/PID/io: not page-cache hits)")           \
    X(STORAGE_WRITTEN_BYTES, "storage_written_bytes", TL_UNIT_BYTES,                                \
      "bytes sent to storage (write_bytes of /proc/PID/io)")                                    \
    X(USS_BYTES, "uss_bytes", TL_UNIT_BYTES, "peak unique set size: memory only the task holds")   \
    X(PSS_BYTES, "pss_bytes", TL_UNIT_BYTES, "peak proportional set size: shared pages split")     \
    X(REQ_WALL_TIME_S, "req_wall_time_s", TL_UNIT_SECONDS, "wall time requested")                  \
    X(HITS, "hits", TL_UNIT_COUNT, "times a profiled line ran (line_profiler)")                   \
    X(ENERGY_J, "energy_j", TL_UNIT_JOULES, "energy consumed, CPU + GPU + RAM, as measured")       \
    X(EMISSIONS_KG, "emissions_kg", TL_UNIT_KG, "CO2-equivalent emitted, as measured")             \
    X(CPU_ENERGY_J, "cpu_energy_j", TL_UNIT_JOULES, "energy of the CPUs")                          \
    X(GPU_ENERGY_J, "gpu_energy_j", TL_UNIT_JOULES, "energy of the GPUs")                          \
    X(RAM_ENERGY_J, "ram_energy_j", TL_UNIT_JOULES, "energy of the memory")                        \
    X(CPU_POWER_W, "cpu_power_w", TL_UNIT_WATTS, "mean power of the CPUs")                          \
    X(GPU_POWER_W, "gpu_power_w", TL_UNIT_WATTS, "mean power of the GPUs")                          \
    X(RAM_POWER_W, "ram_power_w", TL_UNIT_WATTS, "mean power of the memory")                        \
    X(CPU_UTILIZATION, "cpu_utilization_percent", TL_UNIT_PERCENT, "mean CPU use of the machine (%)") \
    X(GPU_UTILIZATION, "gpu_utilization_percent", TL_UNIT_PERCENT, "mean GPU use (%)")              \
    X(RAM_UTILIZATION, "ram_utilization_percent", TL_UNIT_PERCENT, "mean memory use of the machine (%)") \
    X(RAM_USED_BYTES, "ram_used_bytes", TL_UNIT_BYTES, "mean memory in use on the machine")        \
    X(MACHINE_MEMORY_BYTES, "machine_memory_bytes", TL_UNIT_BYTES, "memory of the machine")

enum tl_metric {
#define TL_METRIC_ENUM(e, n, u, h) TL_M_##e,
    TL_METRICS(TL_METRIC_ENUM)
#undef TL_METRIC_ENUM
        TL_M_COUNT
};

/* The presence mask: TL_MASK_WORDS words of 64 bits, metric m at bit m & 63
 * of word m >> 6. Loops over present metrics walk the words in turn. */
#define TL_MASK_WORDS 2
_Static_assert(TL_M_COUNT <= 64 * TL_MASK_WORDS, "metric presence mask is TL_MASK_WORDS words");

struct tl_metric_info {
    const char *name;
    enum tl_unit unit;
    const char *help;
    size_t name_len;
};

extern const struct tl_metric_info tl_metric_info[TL_M_COUNT];

/* Metric by name, or -1. */
int tl_metric_by_name(const char *name, size_t len);

/* "wall_time_s,max_rss_bytes" into out[] (room for TL_M_COUNT); the count,
 * or 0 with err saying which name is unknown and listing the known ones. */
int tl_metric_list(const char *list, int *out, char *err, size_t errlen);

/* The longest name (category, host, result, ...) a saved state takes back:
 * names are kept whole, bounded by each parser's own line and document
 * limits; this only bounds what a damaged checkpoint can ask for. */
#define TL_SAVED_NAME_MAX ((size_t)64 << 20)

#define TL_NO_TIME INT64_MIN

enum tl_record_kind {
    TL_REC_TASK,      /* a finished task attempt */
    TL_REC_TASK_OPEN, /* a task still unfinished at end of input (censored) */
    TL_REC_WORKER,    /* worker connection / disconnection / resources */
    TL_REC_MANAGER,   /* manager start / end */
    TL_REC_TRANSFER,  /* a file transfer */
    TL_REC_SAMPLE,    /* a resource sample (counter, instant) */
    TL_REC_WORKFLOW,  /* a workflow's state: queue, running, done, workers */
    TL_REC_EDGE,      /* dependencies stated apart from the tasks (Chrome flow events, known
                       * once the trace ends): task_id waited for the tasks in depends */
    TL_REC_KIND_COUNT
};
#define TL_KIND(k) (1u << (k)) /* a kind's bit in a kind mask */

const char *tl_record_kind_str(enum tl_record_kind k);

/* Extra tags (data ids such as band, visit, detector). */
#define TL_MAX_EXTRA_TAGS 12
struct tl_tag {
    const char *key;
    const char *value;
};

struct tl_record {
    enum tl_record_kind kind;
    const char *source;   /* parser name: "wq", "lsst", "chrome" */
    const char *workflow; /* manager pid@start, LSST run, trace file */
    const char *category; /* WQ category, LSST task label, trace event name */
    const char *host;     /* host name or address, NULL if unknown */
    const char *worker;   /* worker id, NULL if unknown */
    const char *result;   /* SUCCESS, SIGNAL, ... ; NULL if none */
    const char *state;    /* open tasks: last state; events: what happened */
    const char *task_key; /* a task's own string id (DASF: the Dask key), NULL if none */
    const char *name;     /* the task as its system shows it (Nextflow: `align (sampleA)`), NULL if none */
    const char *tag;      /* what sets the task apart in its category (Nextflow's tag,
                           * Snakemake's wildcards), NULL if none */
    const char *depends;  /* the task ids it waited for, comma-separated, as its input names them
                           * (Parsl's task_depends); NULL when the input records none */
    int64_t task_id;      /* -1 if none */
    int32_t attempt;      /* 1-based; 0 if unknown */
    int32_t exit_code;
    bool has_exit_code;
    bool final; /* the task's last attempt (WQ: the DONE line) */
    int64_t time_ns;   /* event time (task end) in ns since the Unix epoch; 0 if unknown */
    bool time_from_file; /* time_ns is the input file's (its modification time stands in
                          * for a record that has none): never a timeline, a makespan */
    int64_t start_ns;  /* a task attempt's start in ns since the epoch (a trace's own clock
                        * for Chrome), as its source writes it (a start time, or a span's end
                        * and duration); TL_NO_TIME if it does not (0 is a time: a trace's) */
    uint64_t line;     /* input line that completed the record */
    uint64_t present[TL_MASK_WORDS]; /* metric m's bit set when v[m] holds a value */
    double v[TL_M_COUNT];
    int n_tags;
    struct tl_tag tags[TL_MAX_EXTRA_TAGS];
};

void tl_record_init(struct tl_record *r, enum tl_record_kind kind);

static inline void tl_record_set(struct tl_record *r, enum tl_metric m, double value)
{
    r->v[m] = value;
    r->present[m >> 6] |= (uint64_t)1 << (m & 63);
}

static inline void tl_record_unset(struct tl_record *r, enum tl_metric m)
{
    r->present[m >> 6] &= ~((uint64_t)1 << (m & 63));
}

static inline bool tl_record_has(const struct tl_record *r, enum tl_metric m)
{
    return (r->present[m >> 6] >> (m & 63)) & 1;
}

/* The value of metric m, NAN when the record has none (absent is not zero). */
static inline double tl_record_value(const struct tl_record *r, enum tl_metric m)
{
    return tl_record_has(r, m) ? r->v[m] : NAN;
}
/* Seconds since the epoch as a log writes them (a double), in ns rounded to
 * the microsecond those clocks count; 0 (unknown) when not a number or
 * outside what int64 ns hold (years 1678..2262): a damaged input's 1e300
 * must not overflow. */
static inline int64_t tl_epoch_ns_of_seconds(double s)
{
    return s > -9.2e9 && s < 9.2e9 ? (int64_t)llround(s * 1e6) * 1000 : 0;
}

/* Whether s seconds since the epoch is a time a workflow tool can have
 * written: 2000-01-01 to 2200-01-01. A log's -5 or 1e300 is damage, not a
 * task that ran in 1969 (parsers reject it with file:line). */
static inline bool tl_epoch_plausible(double s)
{
    return s >= 946684800.0 && s < 7258118400.0;
}

/* t + s seconds, in ns (s may be negative); 0 (unknown) when s is not a
 * number or the sum leaves int64 ns: damaged durations must not overflow. */
static inline int64_t tl_ns_plus_seconds(int64_t t, double s)
{
    int64_t d, out;
    if (!(s > -9.2e9 && s < 9.2e9)) return 0;
    d = (int64_t)llround(s * 1e9);
    return __builtin_add_overflow(t, d, &out) ? 0 : out;
}

/* Whether a resource value is one a measurement can have: not negative (-0
 * included: no tool writes it), not NaN, not past the double range (a number
 * such as 1e400 reads as inf). One integer compare: +0 .. +max are exactly
 * the doubles whose bits, unsigned, lie below inf's. */
static inline bool tl_value_possible(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u < UINT64_C(0x7ff0000000000000);
}

/* Whether a present metric holds a value no measurement can have: negative,
 * NaN or infinite (a number past the double range reads as inf). A sample
 * value may be negative (counters are free-form), not infinite. Parsers test
 * each record before they emit it. */
bool tl_record_bad_values_slow(const struct tl_record *r);
static inline bool tl_record_bad_values(const struct tl_record *r)
{
    /* One max over the bits tells whether any value needs a look (see
     * tl_value_possible). */
    uint64_t worst = 0;
    for (int w = 0; w < TL_MASK_WORDS; w++)
        for (uint64_t bits = r->present[w]; bits; bits &= bits - 1) {
            uint64_t u;
            memcpy(&u, &r->v[w * 64 + __builtin_ctzll(bits)], sizeof u);
            worst = u > worst ? u : worst;
        }
    return __builtin_expect(worst < UINT64_C(0x7ff0000000000000), 1) ? false : tl_record_bad_values_slow(r);
}

/* Unsets the metrics with impossible values and writes them into detail as
 * "wall_time_s=-1.5 max_rss_bytes=inf", for the parser's reject: the task
 * still counts, its impossible values do not. */
void tl_record_drop_values(struct tl_record *r, char *detail, size_t cap);

/* Both at once, for a parser about to emit r: true (detail filled) when
 * values were dropped and the parser has a reject to report. */
static inline bool tl_record_drop_bad_values(struct tl_record *r, char *detail, size_t cap)
{
    if (__builtin_expect(!tl_record_bad_values(r), 1)) return false;
    tl_record_drop_values(r, detail, cap);
    return true;
}

/* Value of a tag by name: the fixed tags (source, workflow, category, host,
 * worker, result) and then the extra tags. NULL when absent. */
const char *tl_record_tag(const struct tl_record *r, const char *key);

/* A tag name resolved once (for code that asks every record for the same
 * tags): the field it names, or TL_TAG_OTHER for the record's extra tags. */
enum tl_tag_field {
    TL_TAG_CATEGORY, TL_TAG_HOST, TL_TAG_WORKFLOW, TL_TAG_SOURCE, TL_TAG_WORKER, TL_TAG_RESULT,
    TL_TAG_OTHER
};
enum tl_tag_field tl_tag_field(const char *key);
/* tl_record_tag(r, key) for f == tl_tag_field(key), without the name compares. */
static inline const char *tl_record_tag_at(const struct tl_record *r, enum tl_tag_field f,
                                           const char *key)
{
    switch (f) {
    case TL_TAG_CATEGORY: return r->category;
    case TL_TAG_HOST: return r->host;
    case TL_TAG_WORKFLOW: return r->workflow;
    case TL_TAG_SOURCE: return r->source;
    case TL_TAG_WORKER: return r->worker;
    case TL_TAG_RESULT: return r->result;
    case TL_TAG_OTHER: break;
    }
    for (int i = 0; i < r->n_tags; i++)
        if (!strcmp(r->tags[i].key, key)) return r->tags[i].value;
    return NULL;
}

#endif
