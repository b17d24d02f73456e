/* Parsl's monitoring database (monitoring.db, SQLite; the schema of
 * parsl/monitoring/db_manager.py): the whole file is fed, then opened in
 * memory (sqlite3_deserialize) and read with one query.
 *
 * Records: one per try (a task attempt) that has returned and whose task
 * has either returned or been tried again -- so whether the try is the
 * task's last is known (with `settle`, while the workflow runs, a few
 * seconds later: its last samples are written after its return):
 *   category = the app's name (task.task_func_name); task_id = task_id;
 *   attempt = try_id + 1; final = the task's last try; workflow = the
 *   run_id; host = try.hostname; worker = the executor's label;
 *   time = the try's return; wall_time_s = returned - running (running
 *   - launched when it never reported running: the whole try);
 *   queue_time_s = running - launched; result = the try's last status
 *   (exec_done, failed, fail_retryable, ...).
 *   The resource rows are psutil samples of the *worker process*, every
 *   resource_monitoring_interval seconds while the try runs (none for a
 *   try shorter than that: its resources are absent, not zero). A worker
 *   runs many tasks, so: max_rss_bytes and virtual_memory_bytes = the
 *   worker's peak while the try ran (an upper bound of the app's own);
 *   cpu_time_s, bytes_read, bytes_written, context_switches = the increase
 *   of its counters between the try's first and last sample (absent with
 *   one sample).
 * Times are Parsl's naive local datetimes, taken as UTC (option
 * utc_offset for a run elsewhere).
 *
 * The parser remembers the tries it emitted, so the same database fed again
 * (the `parsl` source polls a growing one) emits only the new ones.
 *
 * What SQLite reads is what counts: a database whose writer crashed mid
 * transaction leaves a hot `-journal` (the file alone holds half a
 * transaction), and one in WAL mode keeps its committed pages in `-wal`.
 * Then the bytes read and their sibling go to a private directory and
 * SQLite opens that copy, rolling the journal back or reading the WAL --
 * the original is never written. A database that cannot be read makes
 * the input fail (a non-zero exit), not only a rejected line. */
#include "parsers/parser.h"
#include "parsers/civil_time.h"

#include "core/bytes.h"
#include "core/cleanup.h"
#include "core/intern.h"
#include "core/map64.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

struct parsl_config {
    size_t max_db;
    double utc_offset; /* hours the run's clock was ahead of UTC */
    double settle;     /* s a try waits for its last samples (0: none) */
};

static const struct tl_option parsl_options[] = {
    {"max_db", TL_OPT_SIZE, "1G", "largest database read, its -wal or -journal included (it is held in memory)",
     offsetof(struct parsl_config, max_db)},
    {"utc_offset", TL_OPT_DOUBLE, "0",
     "hours the Parsl run's local clock was ahead of UTC (Parsl writes naive local times)",
     offsetof(struct parsl_config, utc_offset)},
    {"settle", TL_OPT_DOUBLE, "0",
     "seconds a returned try waits, while its workflow runs, for resource samples written after "
     "it (the `parsl` source sets 5); 0: at once", offsetof(struct parsl_config, settle)},
    {0},
};

enum { PC_TRIES, PC_RETRIED, PC_WITH_SAMPLES, PC_READS, PC_COUNT };
static const char *const counter_names[PC_COUNT] = {
    "tries", "tries_retried", "tries_with_samples", "database_reads",
};

struct parsl_state {
    struct parsl_config cfg;
    struct tl_emit emit;
    struct tl_parse_stats stats;
    uint64_t counters[PC_COUNT];
    struct tl_buf db;         /* the file so far */
    bool too_large;
    struct tl_map64 emitted;  /* hash of (run, task, try) -> 1 */
    struct tl_intern *names;  /* apps, runs, hosts, executors, statuses */
    char *path;               /* the input's file, for its -journal / -wal siblings */
    bool unreadable;          /* the last read found no database */
};

static void reject(struct parsl_state *st, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, st->stats.lines, why, detail);
}

static const char *intern_col(struct parsl_state *st, sqlite3_stmt *q, int col)
{
    const char *s = (const char *)sqlite3_column_text(q, col);
    if (!s) return NULL;
    int32_t id = tl_intern(st->names, s, (size_t)sqlite3_column_bytes(q, col));
    return id >= 0 ? tl_intern_str(st->names, id) : NULL;
}

/* "2026-11-25 09:03:48.545144" as seconds since the epoch; NAN if not one. */
static double parse_time_slow(const struct parsl_state *st, const unsigned char *s);

/* The form Parsl writes ("2026-11-25 09:03:48.545144") without sscanf,
 * which took a third of reading a million tries (the same double: the
 * fraction's digits over a power of ten, both exact, rounded once as
 * strtod rounds); anything else the slow way. */
static double parse_time(const struct parsl_state *st, const unsigned char *u)
{
    const char *s = (const char *)u;
    int c, yl, mo, d, h, mi, sec;
    if (!s || !(tl_two_digits(s, &c) && tl_two_digits(s + 2, &yl) && s[4] == '-' && tl_two_digits(s + 5, &mo) &&
                s[7] == '-' && tl_two_digits(s + 8, &d) && s[10] == ' ' && tl_two_digits(s + 11, &h) &&
                s[13] == ':' && tl_two_digits(s + 14, &mi) && s[16] == ':' && tl_two_digits(s + 17, &sec)) ||
        mo < 1 || mo > 12 || d < 1 || d > 31)
        return parse_time_slow(st, u);
    double frac = 0;
    const char *p = s + 19;
    if (*p == '.') {
        uint64_t digits = 0, scale = 1;
        for (p++; *p >= '0' && *p <= '9' && scale < 1000000000000000ULL; p++) digits = digits * 10 + (uint64_t)(*p - '0'), scale *= 10;
        if (*p >= '0' && *p <= '9') return parse_time_slow(st, u); /* more digits than exact: strtod's */
        frac = (double)digits / (double)scale;
    }
    int64_t t = tl_days_from_civil(c * 100 + yl, mo, d) * 86400 + (int64_t)h * 3600 + mi * 60 + sec;
    return (double)t + frac - st->cfg.utc_offset * 3600;
}

static double parse_time_slow(const struct parsl_state *st, const unsigned char *s)
{
    struct tm tm = {0};
    double frac = 0;
    int n = 0;
    if (!s || sscanf((const char *)s, "%d-%d-%d %d:%d:%d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                     &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
        return NAN;
    if (s[n] == '.') frac = strtod((const char *)s + n, NULL);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm) + frac - st->cfg.utc_offset * 3600;
}

/* The database is read with plain scans joined here (tasks, tries, the
 * latest status of each try, each try's resource samples grouped by
 * SQLite), then the tries sorted by their return: one query joining them
 * took SQLite 7.4 s for a million tries (automatic indexes, a correlated
 * status lookup per try, a sort of the wide rows), the scans 2 s. Older
 * Parsl databases (and Parsl's own test databases) have no context-switch
 * columns: then they are NULL, absent from the records, not a refusal. */
static const char TASKS[] =
    "SELECT t.run_id, t.task_id, t.task_func_name, t.task_time_returned IS NOT NULL, t.task_depends, "
    "       w.time_completed IS NOT NULL "
    "FROM task t LEFT JOIN workflow w ON w.run_id = t.run_id";
static const char TRIES[] =
    "SELECT run_id, task_id, try_id, hostname, task_executor, task_try_time_launched, "
    "       task_try_time_running, task_try_time_returned FROM try";
static const char STATUSES[] = "SELECT run_id, task_id, try_id, task_status_name, timestamp FROM status";
#define RESOURCES_HEAD                                                                             \
    "SELECT run_id, task_id, try_id, count(*), "                                                  \
    "    max(psutil_process_memory_resident), max(psutil_process_memory_virtual), "              \
    "    max(psutil_process_time_user + psutil_process_time_system) - "                          \
    "    min(psutil_process_time_user + psutil_process_time_system), "                           \
    "    max(psutil_process_disk_read) - min(psutil_process_disk_read), "                        \
    "    max(psutil_process_disk_write) - min(psutil_process_disk_write), "
static const char RESOURCES[] = RESOURCES_HEAD
    "    max(psutil_process_num_ctx_switches_voluntary + psutil_process_num_ctx_switches_involuntary) - "
    "    min(psutil_process_num_ctx_switches_voluntary + psutil_process_num_ctx_switches_involuntary) "
    "FROM resource GROUP BY run_id, task_id, try_id";
static const char RESOURCES_NO_CS[] = RESOURCES_HEAD "NULL FROM resource GROUP BY run_id, task_id, try_id";
static const char HAS_CS[] =
    "SELECT count(*) FROM pragma_table_info('resource') "
    "WHERE name IN ('psutil_process_num_ctx_switches_voluntary', "
    "'psutil_process_num_ctx_switches_involuntary')";

/* Whether the resource table has both context-switch columns. */
static bool has_ctx_switches(sqlite3 *db)
{
    sqlite3_stmt *q = NULL;
    bool yes = sqlite3_prepare_v2(db, HAS_CS, -1, &q, NULL) == SQLITE_OK &&
               sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 2;
    sqlite3_finalize(q);
    return yes;
}

/* The newest time the database holds (its clock while the workflow runs). */
static const char NEWEST[] =
    "SELECT max(m) FROM (SELECT max(timestamp) AS m FROM status "
    "UNION ALL SELECT max(timestamp) FROM resource)";

/* ---------------------------------------------------------------- tries */

/* A try as the scans find it. */
struct ptry {
    const char *run, *host, *executor, *status; /* interned */
    int64_t task, tr;
    double launched, running, returned, status_at;
    uint32_t task_at; /* its task in the read's tasks + 1; 0: no task row (left out) */
    bool returned_known; /* task_try_time_returned is not NULL */
    int64_t samples;
    double res[6]; /* rss, vms, cpu, read, written, context switches; NAN: NULL */
};

/* A task as the scans find it. */
struct ptask {
    const char *run, *app;
    int64_t task, last_try;
    bool returned, run_done;
    size_t deps; /* offset of its task_depends in the read's text + 1; 0: none */
};

struct read {
    struct ptask *t;
    size_t nt, capt;
    struct ptry *y;
    size_t ny, capy;
    struct tl_map64 task_at, try_at; /* verified hashes -> index + 1 */
    struct tl_buf text;              /* task_depends, each NUL-ended */
    bool oom;
};

static bool read_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return true;
    size_t c = *cap ? *cap * 2 : 1024;
    void *q = realloc(*p, c * size);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

/* The key of (run, task, try) a checkpoint holds for an emitted try: the
 * run's bytes hashed, as every version since the first wrote it. */
static uint64_t emitted_key(const char *run, int64_t task, int64_t tr)
{
    uint64_t h = tl_hash_bytes(run ? run : "", run ? strlen(run) : 0);
    h ^= (uint64_t)task * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)tr * 0xC2B2AE3D27D4EB4FULL;
    return h == TL_MAP64_EMPTY ? h - 1 : h;
}

/* Interned runs are one pointer each: the pointer, task and try hashed. */
static uint64_t slot_key(const char *run, int64_t task, int64_t tr)
{
    uint64_t h = tl_mix64((uint64_t)(uintptr_t)run ^ (uint64_t)task * 0x9E3779B97F4A7C15ULL ^
                          (uint64_t)(tr + 1) * 0xC2B2AE3D27D4EB4FULL);
    return h == TL_MAP64_EMPTY ? h - 1 : h;
}

/* The index + 1 of the task (tr < 0) or try whose key is k, verified (a
 * hash shared by two is probed past); 0: none. *free_key: where to put it. */
static size_t find(const struct read *rd, const char *run, int64_t task, int64_t tr, uint64_t *free_key)
{
    const struct tl_map64 *m = tr < 0 ? &rd->task_at : &rd->try_at;
    for (uint64_t k = slot_key(run, task, tr);; k = k + 1 == TL_MAP64_EMPTY ? 0 : k + 1) {
        uint64_t *v = tl_map64_get(m, k);
        if (!v) {
            *free_key = k;
            return 0;
        }
        bool same = tr < 0 ? rd->t[*v - 1].run == run && rd->t[*v - 1].task == task
                           : rd->y[*v - 1].run == run && rd->y[*v - 1].task == task && rd->y[*v - 1].tr == tr;
        if (same) return (size_t)*v;
    }
}

static double col_or_nan(sqlite3_stmt *q, int col)
{
    return sqlite3_column_type(q, col) == SQLITE_NULL ? NAN : sqlite3_column_double(q, col);
}

static void scan_tasks(struct parsl_state *st, sqlite3_stmt *q, struct read *rd)
{
    const char *run = intern_col(st, q, 0);
    int64_t task = sqlite3_column_int64(q, 1);
    uint64_t key;
    if (find(rd, run, task, -1, &key) || !read_grow((void **)&rd->t, &rd->capt, rd->nt + 1, sizeof *rd->t)) return;
    struct ptask *t = &rd->t[rd->nt];
    *t = (struct ptask){run, intern_col(st, q, 2), task, -1, sqlite3_column_int(q, 3) != 0,
                        sqlite3_column_int(q, 5) != 0, 0};
    const unsigned char *deps = sqlite3_column_text(q, 4);
    if (deps) {
        t->deps = rd->text.len + 1;
        tl_buf_append(&rd->text, deps, (size_t)sqlite3_column_bytes(q, 4) + 1);
    }
    rd->oom |= !tl_map64_put(&rd->task_at, key, ++rd->nt);
}

static void scan_tries(struct parsl_state *st, sqlite3_stmt *q, struct read *rd)
{
    const char *run = intern_col(st, q, 0);
    int64_t task = sqlite3_column_int64(q, 1), tr = sqlite3_column_int64(q, 2);
    uint64_t key, tkey;
    size_t at = find(rd, run, task, -1, &tkey);
    if (at && tr > rd->t[at - 1].last_try) rd->t[at - 1].last_try = tr;
    if (find(rd, run, task, tr, &key) || !read_grow((void **)&rd->y, &rd->capy, rd->ny + 1, sizeof *rd->y)) return;
    struct ptry *y = &rd->y[rd->ny];
    *y = (struct ptry){run, intern_col(st, q, 3), intern_col(st, q, 4), NULL, task, tr,
                       parse_time(st, sqlite3_column_text(q, 5)), parse_time(st, sqlite3_column_text(q, 6)),
                       sqlite3_column_type(q, 7) == SQLITE_NULL ? NAN : parse_time(st, sqlite3_column_text(q, 7)),
                       -INFINITY, (uint32_t)at, sqlite3_column_type(q, 7) != SQLITE_NULL, 0,
                       {NAN, NAN, NAN, NAN, NAN, NAN}};
    rd->oom |= !tl_map64_put(&rd->try_at, key, ++rd->ny);
}

/* A try's latest status (a later row of the same time wins, as the one
 * SQLite returned first among equals did before: either is the latest). */
static void scan_statuses(struct parsl_state *st, sqlite3_stmt *q, struct read *rd)
{
    const char *run = intern_col(st, q, 0);
    uint64_t key;
    size_t at = find(rd, run, sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2), &key);
    if (!at) return;
    double when = parse_time(st, sqlite3_column_text(q, 4));
    struct ptry *y = &rd->y[at - 1];
    if (!(when < y->status_at)) {
        y->status = intern_col(st, q, 3);
        y->status_at = isnan(when) ? y->status_at : when;
    }
}

static void scan_resources(struct parsl_state *st, sqlite3_stmt *q, struct read *rd)
{
    const char *run = intern_col(st, q, 0);
    uint64_t key;
    size_t at = find(rd, run, sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2), &key);
    if (!at) return;
    struct ptry *y = &rd->y[at - 1];
    y->samples = sqlite3_column_int64(q, 3);
    for (int i = 0; i < 6; i++) y->res[i] = col_or_nan(q, 4 + i);
}

/* Runs one scan; false (said) when the database cannot answer it. */
static bool scan(struct parsl_state *st, sqlite3 *db, const char *sql, struct read *rd,
                 void (*row)(struct parsl_state *, sqlite3_stmt *, struct read *))
{
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
    if (rc == SQLITE_OK)
        while (!rd->oom && (rc = sqlite3_step(q)) == SQLITE_ROW) row(st, q, rd);
    if (rc != SQLITE_DONE && !rd->oom) {
        char detail[200];
        snprintf(detail, sizeof detail, "%s: %s",
                 q ? "database read stopped" : "not a Parsl monitoring database",
                 sqlite3_errmsg(db));
        st->stats.lines++;
        reject(st, TL_REJ_BAD_DOCUMENT, detail);
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE;
}

/* Tries in the order the records go out: by return, then run, task, try. */
static int cmp_try(const void *pa, const void *pb)
{
    const struct ptry *a = pa, *b = pb;
    if (a->returned != b->returned) {
        if (isnan(a->returned) || isnan(b->returned)) return isnan(a->returned) - isnan(b->returned);
        return a->returned < b->returned ? -1 : 1;
    }
    int c = a->run == b->run ? 0 : strcmp(a->run ? a->run : "", b->run ? b->run : "");
    if (c) return c;
    if (a->task != b->task) return a->task < b->task ? -1 : 1;
    return (a->tr > b->tr) - (a->tr < b->tr);
}

static void set_res(struct tl_record *r, double v, enum tl_metric m)
{
    if (!isnan(v)) tl_record_set(r, m, v);
}

/* One finished try, when whether it is its task's last is known -- and,
 * while its workflow runs, once `settle` seconds of the database's clock
 * have passed since it returned: the monitoring writes its last resource
 * samples after the try's return, and a try emitted is not emitted again. */
static void one_try(struct parsl_state *st, const struct read *rd, const struct ptry *y, double newest)
{
    const struct ptask *t = &rd->t[y->task_at - 1];
    if (y->tr == t->last_try && !t->returned) return; /* may still be retried: next read */
    if (!t->run_done && st->cfg.settle > 0 && !(y->returned + st->cfg.settle <= newest)) return;
    uint64_t key = emitted_key(y->run, y->task, y->tr);
    if (tl_map64_get(&st->emitted, key)) return;
    tl_map64_put(&st->emitted, key, 1);
    st->stats.lines++;
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.source = "parsl";
    r.workflow = y->run;
    r.category = t->app;
    r.host = y->host;
    r.worker = y->executor;
    r.result = y->status;
    r.task_id = y->task;
    r.depends = t->deps ? (const char *)rd->text.data + t->deps - 1 : NULL; /* "4,5,8": task ids of the run */
    r.attempt = (int32_t)y->tr + 1;
    r.final = y->tr == t->last_try;
    r.line = st->stats.lines;
    r.time_ns = tl_epoch_ns_of_seconds(y->returned);
    double start = isfinite(y->running) ? y->running : y->launched;
    if (isfinite(start)) r.start_ns = tl_epoch_ns_of_seconds(start);
    if (isfinite(start) && isfinite(y->returned)) tl_record_set(&r, TL_M_WALL_TIME_S, y->returned - start);
    if (isfinite(y->running) && isfinite(y->launched)) tl_record_set(&r, TL_M_QUEUE_TIME_S, y->running - y->launched);
    if (y->samples > 0) {
        set_res(&r, y->res[0], TL_M_MAX_RSS_BYTES);
        set_res(&r, y->res[1], TL_M_VIRTUAL_MEMORY_BYTES);
        st->counters[PC_WITH_SAMPLES]++;
    }
    if (y->samples > 1) {
        set_res(&r, y->res[2], TL_M_CPU_TIME_S);
        set_res(&r, y->res[3], TL_M_BYTES_READ);
        set_res(&r, y->res[4], TL_M_BYTES_WRITTEN);
        set_res(&r, y->res[5], TL_M_CONTEXT_SWITCHES);
    }
    st->counters[PC_TRIES]++;
    st->counters[PC_RETRIED] += y->tr > 0;
    char detail[160];
    if (tl_record_drop_bad_values(&r, detail, sizeof detail)) reject(st, TL_REJ_BAD_VALUE, detail);
    st->stats.records++;
    if (tl_emit_wants(&st->emit, r.kind)) st->emit.record(st->emit.ctx, &r);
}

/* The scans, joined, and the returned tries of a task the database has,
 * emitted in order. false when the database could not be read whole. */
static bool read_tries(struct parsl_state *st, sqlite3 *db, double newest)
{
    struct read rd = {0};
    bool ok = scan(st, db, TASKS, &rd, scan_tasks) && scan(st, db, TRIES, &rd, scan_tries) &&
              scan(st, db, STATUSES, &rd, scan_statuses) &&
              scan(st, db, has_ctx_switches(db) ? RESOURCES : RESOURCES_NO_CS, &rd, scan_resources);
    if (rd.oom || rd.text.oom) {
        st->stats.lines++;
        reject(st, TL_REJ_LIMIT, "out of memory for the database");
        ok = false;
    }
    size_t n = 0;
    for (size_t i = 0; ok && i < rd.ny; i++) /* what the records are: returned, with a task row */
        if (rd.y[i].returned_known && rd.y[i].task_at) rd.y[n++] = rd.y[i];
    if (ok && n) qsort(rd.y, n, sizeof *rd.y, cmp_try);
    for (size_t i = 0; ok && i < n; i++) one_try(st, &rd, &rd.y[i], newest);
    free(rd.t);
    free(rd.y);
    tl_map64_free(&rd.task_at);
    tl_map64_free(&rd.try_at);
    tl_buf_free(&rd.text);
    return ok;
}

/* The sibling of the input that SQLite would read beside it ("-journal",
 * "-wal"), when it exists: its path, malloc'ed. */
static char *sibling(const struct parsl_state *st, const char *suffix)
{
    if (!st->path) return NULL;
    size_t n = strlen(st->path) + strlen(suffix) + 1;
    char *p = malloc(n);
    if (!p) return NULL;
    snprintf(p, n, "%s%s", st->path, suffix);
    if (access(p, F_OK) == 0) return p;
    free(p);
    return NULL;
}

static bool write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

/* A sibling copied in pieces (a WAL can be as large as the database:
 * never held whole). */
static bool copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char chunk[65536];
    size_t n;
    bool ok = in && out;
    while (ok && (n = fread(chunk, 1, sizeof chunk, in)) > 0) ok = fwrite(chunk, 1, n, out) == n;
    ok = ok && !ferror(in);
    if (in) fclose(in);
    if (out && fclose(out)) ok = false;
    return ok;
}

/* What a private copy holds: the database and what SQLite may make beside
 * it. */
static const char *const copy_names[] = {"monitoring.db", "monitoring.db-journal", "monitoring.db-wal",
                                         "monitoring.db-shm"};
#define COPY_PREFIX "tasklens-parsl-"

static void remove_copy_files(const char *dir)
{
    char p[4400];
    for (size_t i = 0; i < sizeof copy_names / sizeof *copy_names; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, copy_names[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* Private copies left by a process that a SIGKILL ended (its pid is in the
 * name, and no longer runs): removed, ours only. */
static void sweep_stale_copies(const char *tmp)
{
    DIR *d = opendir(tmp);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid;
        char rest[64];
        if (strncmp(e->d_name, COPY_PREFIX, strlen(COPY_PREFIX)) ||
            sscanf(e->d_name + strlen(COPY_PREFIX), "%ld-%63s", &pid, rest) != 2 || pid <= 0)
            continue;
        char dir[4300];
        snprintf(dir, sizeof dir, "%s/%s", tmp, e->d_name);
        struct stat st;
        if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* its process runs */
        remove_copy_files(dir);
    }
    closedir(d);
}

/* The bytes read and the journal or WAL beside them, in a private
 * directory (mode 0700, named with our pid; removed if a signal ends us,
 * swept at a later start if a SIGKILL did), opened there (SQLite rolls a
 * hot journal back, or reads the WAL, in the copy). dir: where, to remove
 * after. NULL when no sibling exists or the copy fails. */
static sqlite3 *open_private_copy(struct parsl_state *st, char *dir, size_t dircap, int *slots)
{
    char *journal = sibling(st, "-journal"), *wal = journal ? NULL : sibling(st, "-wal");
    /* the header's read/write versions are 2 in WAL mode: not for memory */
    bool wal_mode = st->db.len >= 20 && st->db.data[18] == 2 && st->db.data[19] == 2;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    sqlite3 *db = NULL;
    snprintf(dir, dircap, "%s/" COPY_PREFIX "%ld-XXXXXX", tmp, (long)getpid());
    if (journal || wal || wal_mode) sweep_stale_copies(tmp);
    if ((journal || wal || wal_mode) && mkdtemp(dir)) {
        char main_path[4200], side[4220];
        slots[0] = tl_cleanup_add(dir);
        for (size_t i = 0; i < sizeof copy_names / sizeof *copy_names; i++) {
            snprintf(main_path, sizeof main_path, "%s/%s", dir, copy_names[i]);
            slots[1 + i] = tl_cleanup_add(main_path);
        }
        snprintf(main_path, sizeof main_path, "%s/monitoring.db", dir);
        snprintf(side, sizeof side, "%s%s", main_path, journal ? "-journal" : "-wal");
        if (write_file(main_path, st->db.data, st->db.len) &&
            (!(journal || wal) || copy_file(journal ? journal : wal, side)) &&
            sqlite3_open_v2(main_path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
            sqlite3_close(db);
            db = NULL;
        }
    } else {
        dir[0] = '\0';
    }
    free(journal);
    free(wal);
    return db;
}

static void remove_private_copy(const char *dir, const int *slots)
{
    if (!dir[0]) return;
    remove_copy_files(dir);
    for (size_t i = 0; i <= sizeof copy_names / sizeof *copy_names; i++) tl_cleanup_forget(slots[i]);
}

/* The bytes fed, as a read-only database in memory: SQLite reads them
 * where they are (no copy: a 1 GiB database took 2 GiB). */
static sqlite3 *open_in_memory(struct parsl_state *st)
{
    sqlite3 *db = NULL;
    if (!st->db.len || sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    if (sqlite3_deserialize(db, "main", (unsigned char *)st->db.data, (sqlite3_int64)st->db.len,
                            (sqlite3_int64)st->db.len, SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

/* The database fed so far (with its journal or WAL), opened and read. */
static void read_db(struct parsl_state *st)
{
    sqlite3_stmt *q = NULL;
    char dir[4096];
    int slots[1 + sizeof copy_names / sizeof *copy_names];
    st->counters[PC_READS]++;
    sqlite3 *db = open_private_copy(st, dir, sizeof dir, slots);
    if (!db) db = open_in_memory(st);
    if (!db) {
        remove_private_copy(dir, slots);
        st->stats.lines++;
        st->unreadable = true;
        reject(st, TL_REJ_LIMIT, "out of memory for the database");
        return;
    }
    int rc = SQLITE_OK;
    double newest = NAN;
    if (rc == SQLITE_OK && (rc = sqlite3_prepare_v2(db, NEWEST, -1, &q, NULL)) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        newest = parse_time(st, sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    q = NULL;
    st->unreadable = !read_tries(st, db, newest);
    sqlite3_close(db);
    remove_private_copy(dir, slots);
}

/* ---------------------------------------------------------------- input */

static enum tl_err parsl_feed(void *state, const char *buf, size_t len)
{
    struct parsl_state *st = state;
    if (st->too_large) return TL_OK;
    if (st->db.len + len > st->cfg.max_db) {
        st->too_large = true;
        tl_buf_free(&st->db);
        return TL_OK;
    }
    tl_buf_append(&st->db, buf, len);
    return st->db.oom ? TL_ERR_NOMEM : TL_OK;
}

/* The bytes of the -wal (or -journal) SQLite would read with the database:
 * they count against max_db too (a WAL holds pages the database file does
 * not have yet). */
static size_t sibling_bytes(const struct parsl_state *st)
{
    char *p = sibling(st, "-wal");
    if (!p) p = sibling(st, "-journal");
    struct stat sb;
    size_t n = p && stat(p, &sb) == 0 ? (size_t)sb.st_size : 0;
    free(p);
    return n;
}

static enum tl_err parsl_finish(void *state)
{
    struct parsl_state *st = state;
    if (!st->too_large && st->db.len && st->db.len + sibling_bytes(st) > st->cfg.max_db) {
        st->stats.lines++;
        reject(st, TL_REJ_TOO_LARGE, "database and its -wal or -journal over max_db");
    } else if (st->too_large) {
        st->stats.lines++;
        reject(st, TL_REJ_TOO_LARGE, "database over max_db");
    } else if (st->db.len) {
        read_db(st);
    }
    st->db.len = 0;
    st->too_large = false;
    /* a database that cannot be read fails its input (a batch command exits
     * non-zero); the `parsl` source reads it again when it changes */
    return st->unreadable ? TL_ERR_DECODE : TL_OK;
}

/* ---------------------------------------------------------------- checkpoints */

#define PARSL_SAVE_MAGIC "TLP1"

/* What a restart needs: the tries emitted (the database is read again). */
static enum tl_err parsl_save(const void *state, struct tl_buf *b)
{
    const struct parsl_state *st = state;
    tl_buf_append(b, PARSL_SAVE_MAGIC, 4);
    tl_parse_stats_put(b, &st->stats);
    tl_counters_put(b, st->counters, PC_COUNT);
    tl_put_varint(b, st->emitted.n);
    for (size_t i = 0; i < st->emitted.cap; i++)
        if (st->emitted.slots[i].key != TL_MAP64_EMPTY) tl_put_varint(b, st->emitted.slots[i].key);
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

static enum tl_err parsl_restore(void *state, const uint8_t *p, size_t len)
{
    struct parsl_state *st = state;
    const uint8_t *end = p + len;
    uint64_t n, key;
    if (len < 4 || memcmp(p, PARSL_SAVE_MAGIC, 4)) return TL_ERR_CORRUPT;
    p += 4;
    if (!tl_parse_stats_get(&p, end, &st->stats) || !tl_counters_get(&p, end, st->counters, PC_COUNT) ||
        !tl_get_varint(&p, end, &n) || n > (uint64_t)(end - p))
        return TL_ERR_CORRUPT;
    for (uint64_t i = 0; i < n; i++) {
        if (!tl_get_varint(&p, end, &key) || key == TL_MAP64_EMPTY) return TL_ERR_CORRUPT;
        tl_map64_put(&st->emitted, key, 1);
    }
    return p == end ? TL_OK : TL_ERR_CORRUPT;
}

/* ---------------------------------------------------------------- plumbing */

static int parsl_probe(const char *buf, size_t len)
{
    return len >= 16 && !memcmp(buf, "SQLite format 3", 16) ? 60 : 0;
}

static enum tl_err parsl_open(void **state, const void *config, const struct tl_emit *emit, char *err, size_t errcap)
{
    struct parsl_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct parsl_config *)config;
    st->emit = *emit;
    if (!(st->names = tl_intern_new(64u << 20))) {
        free(st);
        return TL_ERR_NOMEM;
    }
    *state = st;
    return TL_OK;
}

static void parsl_set_name(void *state, const char *name)
{
    struct parsl_state *st = state;
    free(st->path);
    st->path = name && strcmp(name, "-") ? strdup(name) : NULL;
}

static void parsl_close(void *state)
{
    struct parsl_state *st = state;
    if (!st) return;
    free(st->path);
    tl_buf_free(&st->db);
    tl_map64_free(&st->emitted);
    tl_intern_free(st->names);
    free(st);
}

static const struct tl_parse_stats *parsl_stats(const void *state)
{
    return &((const struct parsl_state *)state)->stats;
}

static size_t parsl_counters(const void *state, struct tl_counter *out, size_t max)
{
    return tl_counters_fill(out, max, counter_names, ((const struct parsl_state *)state)->counters, PC_COUNT);
}

const struct tl_parser tl_parser_parsl = {
    .name = "parsl",
    .zoneless_times = true,
    .help = "Parsl monitoring databases (monitoring.db, SQLite): app tries with worker samples",
    .probe = parsl_probe,
    .config_size = sizeof(struct parsl_config),
    .options = parsl_options,
    .open = parsl_open,
    .feed = parsl_feed,
    .finish = parsl_finish,
    .close = parsl_close,
    .stats = parsl_stats,
    .counters = parsl_counters,
    .save = parsl_save,
    .restore = parsl_restore,
    .set_name = parsl_set_name,
    .messages = TL_MSG_DOCUMENT,
};
