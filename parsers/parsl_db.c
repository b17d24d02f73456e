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
static double parse_time(const struct parsl_state *st, const unsigned char *s)
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

/* The finished tries, with their task's facts and their samples (each
 * task's last try from one grouped pass, joined: a correlated max per try
 * scans the try table, whose key starts with try_id, once per try -- 6.5 s
 * for 20,000 tries). Older
 * Parsl databases (and Parsl's own test databases) have no context-switch
 * columns: then they are NULL, absent from the records, not a refusal. */
#define QUERY_HEAD                                                                                 \
    "SELECT y.run_id, y.task_id, y.try_id, t.task_func_name, y.hostname, y.task_executor, "      \
    "       y.task_try_time_launched, y.task_try_time_running, y.task_try_time_returned, "       \
    "       m.last, "                                                                            \
    "       t.task_time_returned, "                                                              \
    "       (SELECT s.task_status_name FROM status s WHERE s.task_id = y.task_id AND "          \
    "          s.run_id = y.run_id AND s.try_id = y.try_id ORDER BY s.timestamp DESC LIMIT 1), " \
    "       r.n, r.rss, r.vms, r.cpu1 - r.cpu0, r.rd1 - r.rd0, r.wr1 - r.wr0, r.cs1 - r.cs0, "   \
    "       (SELECT w.time_completed FROM workflow w WHERE w.run_id = y.run_id), t.task_depends " \
    "FROM try y JOIN task t ON t.task_id = y.task_id AND t.run_id = y.run_id "                   \
    "JOIN (SELECT run_id, task_id, max(try_id) AS last FROM try GROUP BY run_id, task_id) m "     \
    "  ON m.task_id = y.task_id AND m.run_id = y.run_id "                                        \
    "LEFT JOIN (SELECT run_id, task_id, try_id, count(*) AS n, "                                 \
    "    max(psutil_process_memory_resident) AS rss, max(psutil_process_memory_virtual) AS vms, " \
    "    min(psutil_process_time_user + psutil_process_time_system) AS cpu0, "                  \
    "    max(psutil_process_time_user + psutil_process_time_system) AS cpu1, "                  \
    "    min(psutil_process_disk_read) AS rd0, max(psutil_process_disk_read) AS rd1, "          \
    "    min(psutil_process_disk_write) AS wr0, max(psutil_process_disk_write) AS wr1, "
#define QUERY_TAIL                                                                                 \
    "  FROM resource GROUP BY run_id, task_id, try_id) r "                                       \
    "  ON r.run_id = y.run_id AND r.task_id = y.task_id AND r.try_id = y.try_id "                \
    "WHERE y.task_try_time_returned IS NOT NULL "                                                \
    "ORDER BY y.task_try_time_returned, y.run_id, y.task_id, y.try_id"
static const char QUERY[] = QUERY_HEAD
    "    min(psutil_process_num_ctx_switches_voluntary + psutil_process_num_ctx_switches_involuntary) AS cs0, "
    "    max(psutil_process_num_ctx_switches_voluntary + psutil_process_num_ctx_switches_involuntary) AS cs1 "
    QUERY_TAIL;
static const char QUERY_NO_CS[] = QUERY_HEAD "    NULL AS cs0, NULL AS cs1 " QUERY_TAIL;
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

enum { C_RUN, C_TASK, C_TRY, C_APP, C_HOST, C_EXECUTOR, C_LAUNCHED, C_RUNNING, C_RETURNED,
       C_LAST_TRY, C_TASK_RETURNED, C_STATUS, C_SAMPLES, C_RSS, C_VMS, C_CPU, C_READ, C_WRITE,
       C_CS, C_RUN_DONE, C_DEPENDS };

/* The newest time the database holds (its clock while the workflow runs). */
static const char NEWEST[] =
    "SELECT max(m) FROM (SELECT max(timestamp) AS m FROM status "
    "UNION ALL SELECT max(timestamp) FROM resource)";

static void set_col(struct tl_record *r, sqlite3_stmt *q, int col, enum tl_metric m)
{
    if (sqlite3_column_type(q, col) != SQLITE_NULL) tl_record_set(r, m, sqlite3_column_double(q, col));
}

static uint64_t try_key(sqlite3_stmt *q)
{
    const void *run = sqlite3_column_text(q, C_RUN);
    uint64_t h = tl_hash_bytes(run ? run : "", (size_t)sqlite3_column_bytes(q, C_RUN));
    h ^= (uint64_t)sqlite3_column_int64(q, C_TASK) * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)sqlite3_column_int64(q, C_TRY) * 0xC2B2AE3D27D4EB4FULL;
    return h == TL_MAP64_EMPTY ? h - 1 : h;
}

/* One finished try, when whether it is its task's last is known -- and,
 * while its workflow runs, once `settle` seconds of the database's clock
 * have passed since it returned: the monitoring writes its last resource
 * samples after the try's return, and a try emitted is not emitted again. */
static void one_try(struct parsl_state *st, sqlite3_stmt *q, double newest)
{
    int64_t tr = sqlite3_column_int64(q, C_TRY), last = sqlite3_column_int64(q, C_LAST_TRY);
    bool task_done = sqlite3_column_type(q, C_TASK_RETURNED) != SQLITE_NULL;
    if (tr == last && !task_done) return; /* may still be retried: next read */
    bool run_done = sqlite3_column_type(q, C_RUN_DONE) != SQLITE_NULL;
    if (!run_done && st->cfg.settle > 0 &&
        !(parse_time(st, sqlite3_column_text(q, C_RETURNED)) + st->cfg.settle <= newest))
        return;
    uint64_t key = try_key(q);
    if (tl_map64_get(&st->emitted, key)) return;
    tl_map64_put(&st->emitted, key, 1);
    st->stats.lines++;
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.source = "parsl";
    r.workflow = intern_col(st, q, C_RUN);
    r.category = intern_col(st, q, C_APP);
    r.host = intern_col(st, q, C_HOST);
    r.worker = intern_col(st, q, C_EXECUTOR);
    r.result = intern_col(st, q, C_STATUS);
    r.task_id = sqlite3_column_int64(q, C_TASK);
    r.depends = (const char *)sqlite3_column_text(q, C_DEPENDS); /* "4,5,8": task ids of the run */
    r.attempt = (int32_t)tr + 1;
    r.final = tr == last;
    r.line = st->stats.lines;
    double launched = parse_time(st, sqlite3_column_text(q, C_LAUNCHED));
    double running = parse_time(st, sqlite3_column_text(q, C_RUNNING));
    double returned = parse_time(st, sqlite3_column_text(q, C_RETURNED));
    r.time_ns = tl_epoch_ns_of_seconds(returned);
    double start = isfinite(running) ? running : launched;
    if (isfinite(start)) r.start_ns = tl_epoch_ns_of_seconds(start);
    if (isfinite(start) && isfinite(returned)) tl_record_set(&r, TL_M_WALL_TIME_S, returned - start);
    if (isfinite(running) && isfinite(launched)) tl_record_set(&r, TL_M_QUEUE_TIME_S, running - launched);
    int64_t samples = sqlite3_column_int64(q, C_SAMPLES);
    if (samples > 0) {
        set_col(&r, q, C_RSS, TL_M_MAX_RSS_BYTES);
        set_col(&r, q, C_VMS, TL_M_VIRTUAL_MEMORY_BYTES);
        st->counters[PC_WITH_SAMPLES]++;
    }
    if (samples > 1) {
        set_col(&r, q, C_CPU, TL_M_CPU_TIME_S);
        set_col(&r, q, C_READ, TL_M_BYTES_READ);
        set_col(&r, q, C_WRITE, TL_M_BYTES_WRITTEN);
        set_col(&r, q, C_CS, TL_M_CONTEXT_SWITCHES);
    }
    st->counters[PC_TRIES]++;
    st->counters[PC_RETRIED] += tr > 0;
    char detail[160];
    if (tl_record_drop_bad_values(&r, detail, sizeof detail)) reject(st, TL_REJ_BAD_VALUE, detail);
    st->stats.records++;
    if (tl_emit_wants(&st->emit, r.kind)) st->emit.record(st->emit.ctx, &r);
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
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, has_ctx_switches(db) ? QUERY : QUERY_NO_CS, -1, &q, NULL);
    st->unreadable = rc != SQLITE_OK;
    if (rc != SQLITE_OK) {
        char detail[200];
        snprintf(detail, sizeof detail, "not a Parsl monitoring database: %s", sqlite3_errmsg(db));
        st->stats.lines++;
        reject(st, TL_REJ_BAD_DOCUMENT, detail);
    }
    while (q && (rc = sqlite3_step(q)) == SQLITE_ROW) one_try(st, q, newest);
    if (q && rc != SQLITE_DONE) {
        char detail[200];
        snprintf(detail, sizeof detail, "database read stopped: %s", sqlite3_errmsg(db));
        st->stats.lines++;
        reject(st, TL_REJ_BAD_DOCUMENT, detail);
    }
    sqlite3_finalize(q);
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

static enum tl_err parsl_open(void **state, const void *config, const struct tl_emit *emit)
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

static size_t parsl_counters(const void *state, const char *const **names, const uint64_t **values)
{
    *names = counter_names;
    *values = ((const struct parsl_state *)state)->counters;
    return PC_COUNT;
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
