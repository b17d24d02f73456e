/* codecarbon's CSV output: `emissions.csv` (one row per tracker run,
 * appended) and the task files `emissions_<experiment>_<run_id>.csv` (one
 * row per task of the task API). Written by pandas: comma, a header, a
 * value quoted when it holds a comma or a quote. Facts from codecarbon
 * 3.3.2's output_methods/ and emissions_tracker.py, summed up in
 * ../shared/codecarbon/FORMAT.md. Columns by name: every set from 0.1
 * (12 columns, experiment_id first) and 1.0-1.2 (experiment_id second)
 * through 2.x (29-32) to 3.x (38) reads the same; experiment_id is the
 * task key where there is no run_id.
 *
 * Every row is one record, result SUCCESS:
 *   project_name -> category; a task row: "<project>/<task>", the
 *                   `_<uuid4>` codecarbon appends to a reused task name
 *                   removed (its first use has none)
 *   run_id (a task row: the task name) -> task key; the row's line -> task_id
 *   timestamp    -> the record's time (local time without an offset:
 *                   utc_offset says the zone), the start = time - duration
 *   duration     -> wall_time_s (in 3.3.2 the run row of a tracker that
 *                   used tasks covers only the time since the last
 *                   start_task: as written)
 *   energy_consumed, cpu_/gpu_/ram_energy (kWh) -> energy_j,
 *                   cpu_/gpu_/ram_energy_j (x 3.6e6)
 *   emissions (kg CO2eq) -> emissions_kg
 *   cpu_/gpu_/ram_power (W) -> cpu_/gpu_/ram_power_w
 *   cpu_/gpu_/ram_utilization_percent -> the same names
 *   ram_used_gb, ram_total_size (GiB: hardware.py divides by 1024^3) ->
 *                   ram_used_bytes, machine_memory_bytes
 *   cpu_count    -> machine_cpus
 * emissions_rate (emissions / duration), water, pue, wue and the location
 * and environment columns have no place in the record. */
#include "parsers/civil_time.h"
#include "parsers/parser.h"
#include "parsers/table.h"

#include "core/bytes.h"
#include "core/intern.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cc_config {
    size_t max_line;
    double utc_offset;
};

static const struct tl_option cc_options[] = {
    {"max_line", TL_OPT_SIZE, "1M", "longest line", offsetof(struct cc_config, max_line)},
    {"utc_offset", TL_OPT_DOUBLE, "0",
     "hours the clock of the machine codecarbon ran on was ahead of UTC: its timestamps carry no "
     "zone", offsetof(struct cc_config, utc_offset)},
    {0},
};

#define KWH_J 3.6e6
#define GIB 1073741824.0

/* Numeric columns: name, metric, scale. */
static const struct {
    const char *name;
    enum tl_metric metric;
    double scale;
} numeric[] = {
    {"duration", TL_M_WALL_TIME_S, 1},
    {"energy_consumed", TL_M_ENERGY_J, KWH_J},
    {"emissions", TL_M_EMISSIONS_KG, 1},
    {"cpu_energy", TL_M_CPU_ENERGY_J, KWH_J},
    {"gpu_energy", TL_M_GPU_ENERGY_J, KWH_J},
    {"ram_energy", TL_M_RAM_ENERGY_J, KWH_J},
    {"cpu_power", TL_M_CPU_POWER_W, 1},
    {"gpu_power", TL_M_GPU_POWER_W, 1},
    {"ram_power", TL_M_RAM_POWER_W, 1},
    {"cpu_utilization_percent", TL_M_CPU_UTILIZATION, 1},
    {"gpu_utilization_percent", TL_M_GPU_UTILIZATION, 1},
    {"ram_utilization_percent", TL_M_RAM_UTILIZATION, 1},
    {"ram_used_gb", TL_M_RAM_USED_BYTES, GIB},
    {"ram_total_size", TL_M_MACHINE_MEMORY_BYTES, GIB},
    {"cpu_count", TL_M_MACHINE_CPUS, 1},
};
#define NNUM (sizeof numeric / sizeof *numeric)

enum { CC_RUN_ROWS, CC_TASK_ROWS, CC_UUID_SUFFIXES, CC_COUNT };
static const char *const counter_names[CC_COUNT] = {"run_rows", "task_rows", "task_names_deduplicated"};

struct cc_state {
    struct cc_config cfg;
    struct tl_emit emit;
    struct tl_parse_stats stats;
    uint64_t counters[CC_COUNT];
    struct tl_table table;
    struct tl_table_cb cb;
    int num_col[NNUM];
    int c_project, c_task, c_run, c_time;
    struct tl_intern *names;
    char workflow[256];
};

static void reject(struct cc_state *st, uint64_t line, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, line, why, detail);
}

static const char *intern(struct cc_state *st, const char *s, size_t n)
{
    int32_t id = tl_intern(st->names, s, n);
    return id >= 0 ? tl_intern_str(st->names, id) : NULL;
}

/* The length of a task name without codecarbon's "_<uuid4>" suffix. */
static size_t task_name_len(const char *s, size_t n)
{
    static const char shape[] = "_xxxxxxxx-xxxx-4xxx-xxxx-xxxxxxxxxxxx";
    size_t k = sizeof shape - 1;
    if (n <= k) return n;
    const char *u = s + n - k;
    for (size_t i = 0; i < k; i++) {
        char c = u[i], want = shape[i];
        bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        if (want == 'x' ? !hex : c != want) return n;
    }
    return n - k;
}

static const char *category_of(struct cc_state *st, const char **task_key)
{
    size_t pn = 0, tn = 0;
    const char *p = tl_table_cell(&st->table, st->c_project, &pn);
    const char *t = tl_table_cell(&st->table, st->c_task, &tn);
    if (!p || !pn) p = "codecarbon", pn = 10; /* codecarbon's own default */
    if (!t) {
        size_t rn;
        const char *run = tl_table_cell(&st->table, st->c_run, &rn);
        *task_key = run && rn ? intern(st, run, rn) : NULL;
        st->counters[CC_RUN_ROWS]++;
        return intern(st, p, pn);
    }
    st->counters[CC_TASK_ROWS]++;
    *task_key = tn ? intern(st, t, tn) : NULL;
    size_t base = task_name_len(t, tn);
    if (base != tn) st->counters[CC_UUID_SUFFIXES]++;
    char cat[512];
    int k = snprintf(cat, sizeof cat, "%.*s/%.*s", (int)pn, p, (int)base, t);
    return intern(st, cat, (size_t)k < sizeof cat ? (size_t)k : sizeof cat - 1);
}

static void time_of(struct cc_state *st, uint64_t line, struct tl_record *r)
{
    size_t n;
    const char *s = tl_table_cell(&st->table, st->c_time, &n);
    if (!s || !n) return;
    char tmp[48];
    int64_t ns;
    snprintf(tmp, sizeof tmp, "%.*s", (int)(n < 47 ? n : 47), s);
    if (n >= sizeof tmp || !tl_parse_iso_time(tmp, &ns)) {
        reject(st, line, TL_REJ_BAD_FIELDS, "timestamp: not a date");
        return;
    }
    r->time_ns = tl_ns_plus_seconds(ns, -st->cfg.utc_offset * 3600);
    if (r->time_ns && tl_record_has(r, TL_M_WALL_TIME_S) && r->v[TL_M_WALL_TIME_S] >= 0 &&
        tl_ns_plus_seconds(r->time_ns, -r->v[TL_M_WALL_TIME_S]))
        r->start_ns = tl_ns_plus_seconds(r->time_ns, -r->v[TL_M_WALL_TIME_S]);
}

static void on_row(void *ctx, uint64_t line)
{
    struct cc_state *st = ctx;
    st->stats.lines = line;
    if (st->c_project < 0 && st->c_task < 0) {
        reject(st, line, TL_REJ_BAD_FIELDS, "the header has no project_name or task_name");
        return;
    }
    if (st->table.ncells != st->table.ncols) {
        char detail[96];
        snprintf(detail, sizeof detail, "%d values for %d columns", st->table.ncells, st->table.ncols);
        reject(st, line, TL_REJ_BAD_FIELDS, detail);
        return;
    }
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.source = "codecarbon";
    r.workflow = st->workflow;
    r.line = line;
    r.result = "SUCCESS";
    r.final = true;
    r.attempt = 1;
    r.task_id = (int64_t)line;
    r.category = category_of(st, &r.task_key);
    for (size_t i = 0; i < NNUM; i++) {
        size_t n;
        double v;
        const char *s = tl_table_cell(&st->table, st->num_col[i], &n);
        if (!s || !n) continue;
        if (tl_cell_number(s, n, &v)) tl_record_set(&r, numeric[i].metric, v * numeric[i].scale);
        else {
            char detail[96];
            snprintf(detail, sizeof detail, "%s: not a number", numeric[i].name);
            reject(st, line, TL_REJ_BAD_FIELDS, detail);
        }
    }
    time_of(st, line, &r);
    char detail[160];
    if (tl_record_drop_bad_values(&r, detail, sizeof detail)) reject(st, line, TL_REJ_BAD_VALUE, detail);
    st->stats.records++;
    if (tl_emit_wants(&st->emit, TL_REC_TASK)) st->emit.record(st->emit.ctx, &r);
}

static void on_header(void *ctx)
{
    struct cc_state *st = ctx;
    for (size_t i = 0; i < NNUM; i++) st->num_col[i] = tl_table_col(&st->table, numeric[i].name);
    st->c_project = tl_table_col(&st->table, "project_name");
    st->c_task = tl_table_col(&st->table, "task_name");
    st->c_run = tl_table_col(&st->table, "run_id");
    if (st->c_run < 0) st->c_run = tl_table_col(&st->table, "experiment_id"); /* 0.x and 1.x: the run's id */
    st->c_time = tl_table_col(&st->table, "timestamp");
}

static void on_unterminated(void *ctx, uint64_t line)
{
    reject(ctx, line, TL_REJ_TRUNCATED, "a quoted cell never closed");
}

static void on_too_long(void *ctx, uint64_t line)
{
    struct cc_state *st = ctx;
    st->stats.lines = line;
    reject(st, line, TL_REJ_LINE_TOO_LONG, "over max_line");
}

/* ---------------------------------------------------------------- plumbing */

static enum tl_err cc_feed(void *state, const char *buf, size_t len)
{
    struct cc_state *st = state;
    return tl_table_feed(&st->table, buf, len, &st->cb);
}

static enum tl_err cc_finish(void *state)
{
    struct cc_state *st = state;
    tl_table_finish(&st->table, &st->cb);
    st->stats.lines = st->table.lines;
    return TL_OK;
}

#define CC_SAVE_MAGIC "TLC1"

static enum tl_err cc_save(const void *state, struct tl_buf *b)
{
    const struct cc_state *st = state;
    tl_table_state_save(b, CC_SAVE_MAGIC, &st->stats, st->counters, CC_COUNT, &st->table);
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

static enum tl_err cc_restore(void *state, const uint8_t *p, size_t len)
{
    struct cc_state *st = state;
    const uint8_t *end = p + len;
    if (!tl_table_state_restore(&p, end, CC_SAVE_MAGIC, &st->stats, st->counters, CC_COUNT, &st->table, &st->cb))
        return TL_ERR_CORRUPT;
    return p == end ? TL_OK : TL_ERR_CORRUPT;
}

/* The header: timestamp,project_name,... (run rows) or
 * task_name,timestamp,project_name,... (task files), with duration and
 * emissions in it. */
static int cc_probe(const char *buf, size_t len)
{
    const char *nl = memchr(buf, '\n', len < 4096 ? len : 4096);
    if (!nl) return 0;
    size_t n = (size_t)(nl - buf);
    /* 2.x/3.x; their task files; 1.0-1.2 (experiment_id second); 0.x (first) */
    bool head = (n > 23 && !memcmp(buf, "timestamp,project_name,", 23)) ||
                (n > 33 && !memcmp(buf, "task_name,timestamp,project_name,", 33)) ||
                (n > 37 && !memcmp(buf, "timestamp,experiment_id,project_name,", 37)) ||
                (n > 37 && !memcmp(buf, "experiment_id,timestamp,project_name,", 37));
    return head && memmem(buf, n, ",duration,", 10) && memmem(buf, n, ",emissions,", 11) ? 95 : 0;
}

static void cc_set_name(void *state, const char *name)
{
    struct cc_state *st = state;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (base && *base && strcmp(base, "-")) snprintf(st->workflow, sizeof st->workflow, "%s", base);
}

static enum tl_err cc_validate(const void *config, const char **key, char *err, size_t errcap)
{
    double h = ((const struct cc_config *)config)->utc_offset;
    if (isfinite(h) && fabs(h) <= 24) return TL_OK;
    *key = "utc_offset";
    snprintf(err, errcap, "codecarbon.utc_offset is hours from UTC, -24 to 24, not %g", h);
    return TL_ERR_USAGE;
}

static enum tl_err cc_open(void **state, const void *config, const struct tl_emit *emit, char *err, size_t errcap)
{
    struct cc_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct cc_config *)config;
    st->emit = *emit;
    if (!(st->names = tl_intern_new(16u << 20))) {
        free(st);
        return TL_ERR_NOMEM;
    }
    tl_table_init(&st->table, ',', true, st->cfg.max_line);
    st->cb = (struct tl_table_cb){.header = on_header, .row = on_row, .too_long = on_too_long,
                                .unterminated = on_unterminated, .ctx = st};
    st->c_project = st->c_task = st->c_run = st->c_time = -1;
    for (size_t i = 0; i < NNUM; i++) st->num_col[i] = -1;
    snprintf(st->workflow, sizeof st->workflow, "codecarbon");
    *state = st;
    return TL_OK;
}

static void cc_close(void *state)
{
    struct cc_state *st = state;
    if (!st) return;
    tl_table_free(&st->table);
    tl_intern_free(st->names);
    free(st);
}

static const struct tl_parse_stats *cc_stats(const void *state)
{
    return &((const struct cc_state *)state)->stats;
}

static size_t cc_counters(const void *state, struct tl_counter *out, size_t max)
{
    return tl_counters_fill(out, max, counter_names, ((const struct cc_state *)state)->counters, CC_COUNT);
}

const struct tl_parser tl_parser_codecarbon = {
    .name = "codecarbon",
    .zoneless_times = true,
    .help = "codecarbon emissions.csv and task files: energy, CO2 and power per run or task",
    .probe = cc_probe,
    .config_size = sizeof(struct cc_config),
    .options = cc_options,
    .validate = cc_validate,
    .open = cc_open,
    .feed = cc_feed,
    .finish = cc_finish,
    .close = cc_close,
    .stats = cc_stats,
    .counters = cc_counters,
    .save = cc_save,
    .restore = cc_restore,
    .set_name = cc_set_name,
    .messages = TL_MSG_LINES,
    .file_time = true,
};
