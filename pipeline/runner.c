/* The runtime of `tasklens run` (pipeline.h): one thread, one loop.
 *
 * Each source (source.h) gets a large read in turn and feeds its own
 * parser; records go to the output (task/workflow points, the aggregator);
 * at every flush interval the points are handed to the sinks with a
 * `tasklens` self-metrics point per input; every cumulative interval the
 * cumulative task_quantiles are written. When nothing is readable the loop
 * sleeps in poll() on the sources' descriptors and a signalfd.
 *
 * Checkpoints (checkpoint_dir): every checkpoint interval, and at exit,
 * everything produced so far is made durable first (sent with a 2xx, or
 * spooled and fsync'ed; files fsync'ed) and only then are the positions,
 * parser states and aggregator state written -- atomically, in one file. A
 * restart restores them and reads on from the positions, so after kill -9 at
 * any moment what InfluxDB holds converges to what an uninterrupted run
 * writes: points produced after the last checkpoint are produced again,
 * identically (task points have deterministic timestamps), and the
 * aggregator counts each record once because its state is the one that
 * matched the positions.
 *
 * Signals arrive through a signalfd, so there is no global flag: SIGINT and
 * SIGTERM stop reading, write the cumulative points, flush, checkpoint,
 * drain (bounded) and exit 0; SIGHUP reopens the files and reloads the
 * configuration file (sinks that changed are reopened, sources added or
 * dropped; aggregation settings need a restart). Open tasks stay open: a
 * followed log is not over when we stop.
 *
 * Checkpoint file sections: "agg" (the aggregator), and per input
 * "s:<hash of its identity>": u8 version | u8 its type's tag | what the
 * source's save wrote. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bytes.h"
#include "core/checkpoint.h"
#include "core/intern.h"
#include "core/path.h"
#include "core/term.h"
#include "pipeline/pipeline.h"
#include "pipeline/source.h"

#define CKPT_NAME "tasklens.ckpt"
#define SRC_CKPT_VERSION 2 /* 2: file positions carry their content identity */

struct tl_runtime {
    struct run_config cfg;
    const char *config_path; /* for SIGHUP */
    enum tl_log_level level;
    bool quiet;
    char host[256], instance[256], by_copy[1024];
    char *ckpt_dir; /* owned: outlives configuration reloads */
    struct tl_source *src[RUN_MAX_OPEN_SOURCES];
    int nsrc;
    struct tl_output out;
    struct tl_log log; /* the sinks' and the output's: tl_rt_log's level and prefix */
    char ckpt_path[4096];
    int lock_fd;
    char *buf;
    uint64_t checkpoints, checkpoints_deferred;
    bool closing; /* the run is over: a revoke only commits */
    const struct tl_view *view; /* `top`, NULL: none */
};

/* ---------------------------------------------------------------- for sources */

void tl_rt_log(const struct tl_runtime *R, enum tl_log_level lv, const char *fmt, ...)
{
    if (lv > R->level || (R->quiet && lv > TL_LOG_WARN)) return;
    va_list ap;
    va_start(ap, fmt);
    tl_vprintln(stderr, "tasklens run: ", fmt, ap);
    va_end(ap);
}

/* The runtime's logger as a handle, for the sinks and the output. */
static void log_write(void *ctx, enum tl_log_level lv, const char *msg)
{
    tl_rt_log(ctx, lv, "%s", msg);
}

bool tl_rt_quiet(const struct tl_runtime *R) { return R->quiet; }
char *tl_rt_buf(struct tl_runtime *R) { return R->buf; }
struct tl_output *tl_rt_output(struct tl_runtime *R) { return &R->out; }
struct tl_agg *tl_rt_aggregator(struct tl_runtime *R) { return R->out.agg; }

bool tl_rt_each_open_task(struct tl_runtime *R, void (*each)(void *ctx, const struct tl_record *r),
                          void *ctx)
{
    bool any = false;
    for (int i = 0; i < R->nsrc; i++)
        if (R->src[i]->type->open_tasks) any |= R->src[i]->type->open_tasks(R->src[i], each, ctx);
    return any;
}
const struct tl_cfg_doc *tl_rt_doc(const struct tl_runtime *R) { return &R->cfg.doc; }
const char *tl_rt_instance(const struct tl_runtime *R) { return R->instance; }
bool tl_rt_closing(const struct tl_runtime *R) { return R->closing; }

static void section_key(char *key, size_t cap, const char *id)
{
    snprintf(key, cap, "s:%016llx", (unsigned long long)tl_hash_bytes(id, strlen(id)));
}

static struct tl_source *source_new(struct tl_runtime *R, const struct src_settings *cfg,
                                    const char *path, const char *identity)
{
    struct tl_source *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->type = cfg->type;
    s->rt = R;
    s->cfg = *cfg;
    if (path && (!(s->path = strdup(path)) || !(s->canon = tl_canonical_path(path)))) {
        free(s->path);
        free(s);
        return NULL;
    }
    section_key(s->key, sizeof s->key, identity ? identity : s->canon);
    if (path && !identity) section_key(s->legacy_key, sizeof s->legacy_key, path);
    return s;
}

static void source_free(struct tl_source *s)
{
    if (!s) return;
    s->type->close(s);
    free(s->path);
    free(s->canon);
    free(s);
}

enum tl_err tl_rt_add_source(struct tl_runtime *R, const struct src_settings *cfg,
                             const char *path, const char *identity)
{
    if (path && !identity) { /* one input, however many ways it is named */
        char *canon = tl_canonical_path(path);
        bool dup = false;
        for (int j = 0; j < R->nsrc && canon; j++)
            dup |= R->src[j]->canon && !strcmp(R->src[j]->canon, canon);
        free(canon);
        if (dup) return TL_OK;
    }
    if (R->nsrc == RUN_MAX_OPEN_SOURCES) return TL_ERR_LIMIT;
    if (!(R->src[R->nsrc] = source_new(R, cfg, path, identity))) return TL_ERR_NOMEM;
    R->nsrc++;
    return TL_OK;
}

enum tl_err tl_rt_expand_glob(struct tl_runtime *R, const struct src_settings *sc)
{
    const char *path = tl_src_base(sc)->path;
    if (!path) return tl_rt_add_source(R, sc, NULL, NULL);
    glob_t g;
    int gr = glob(path, GLOB_NOSORT | GLOB_BRACE, NULL, &g);
    bool wild = strpbrk(path, "*?[{") != NULL;
    size_t n = gr == 0 ? g.gl_pathc : 0;
    if (!n && wild)
        tl_rt_log(R, TL_LOG_WARN, "%s: matches no file yet (looked again on SIGHUP)", path);
    enum tl_err rc = TL_OK;
    for (size_t k = 0; !rc && k < (n ? n : wild ? 0 : 1); k++) {
        rc = tl_rt_add_source(R, sc, n ? g.gl_pathv[k] : path, NULL);
        if (rc == TL_ERR_LIMIT)
            tl_rt_log(R, TL_LOG_ERROR, "%s: matches %zu files; a run follows at most %d sources "
                      "in all (split the glob over several runs)", path, n,
                      RUN_MAX_OPEN_SOURCES);
    }
    if (gr == 0) globfree(&g);
    return rc;
}

/* The configured entries into inputs (R->src). */
static enum tl_err sources_expand(struct tl_runtime *R, const struct run_config *c)
{
    for (int i = 0; i < c->nsrc; i++) {
        const struct src_settings *sc = &c->src[i];
        enum tl_err rc = sc->type->expand ? sc->type->expand(R, sc) : tl_rt_expand_glob(R, sc);
        if (rc) return rc;
    }
    return TL_OK;
}

/* ---------------------------------------------------------------- checkpoints */

/* True when everything produced so far is acknowledged and, with a
 * checkpoint_dir, saved with the state that produced it: only then may
 * Kafka offsets be committed. */
bool tl_rt_checkpoint(struct tl_runtime *R, const char *why)
{
    if (!tl_output_sync(&R->out)) {
        R->checkpoints_deferred++;
        tl_rt_log(R, TL_LOG_WARN, "checkpoint deferred: the output is not acknowledged yet");
        return false;
    }
    bool ok = true;
    if (R->ckpt_dir) {
        struct tl_buf agg = {0};
        struct tl_buf *srcs = calloc((size_t)R->nsrc + 1, sizeof *srcs);
        struct tl_ckpt_section *sec = calloc((size_t)R->nsrc + 1, sizeof *sec);
        size_t n = 0;
        enum tl_err rc = srcs && sec ? tl_agg_serialize(R->out.agg, &agg) : TL_ERR_NOMEM;
        if (sec) sec[n++] = (struct tl_ckpt_section){"agg", (const uint8_t *)agg.data, agg.len};
        int ns = 0;
        for (int i = 0; !rc && i < R->nsrc; i++) {
            struct tl_source *s = R->src[i];
            if (!s->type->ckpt_tag) continue; /* a pipe cannot be resumed */
            struct tl_buf *b = &srcs[ns++];
            tl_put_u8(b, SRC_CKPT_VERSION);
            tl_put_u8(b, (uint8_t)s->type->ckpt_tag);
            rc = s->type->save(s, b);
            if (!rc && b->oom) rc = TL_ERR_NOMEM;
            sec[n++] = (struct tl_ckpt_section){s->key, (const uint8_t *)b->data, b->len};
        }
        char err[512] = "";
        if (!rc) rc = tl_ckpt_save(R->ckpt_path, sec, n, err, sizeof err);
        if (rc) {
            tl_rt_log(R, TL_LOG_ERROR, "checkpoint failed: %s", err[0] ? err : tl_strerror(rc));
        } else {
            R->checkpoints++;
            tl_rt_log(R, TL_LOG_DEBUG, "checkpoint (%s): %zu sections", why, n);
        }
        tl_buf_free(&agg);
        for (int i = 0; i < ns; i++) tl_buf_free(&srcs[i]);
        free(srcs);
        free(sec);
        ok = rc == TL_OK;
    }
    for (int i = 0; ok && i < R->nsrc; i++)
        if (R->src[i]->type->publish) ok &= R->src[i]->type->publish(R->src[i]);
    return ok;
}

/* After a checkpoint: what it covers may be committed. */
static void commit_all(struct tl_runtime *R)
{
    for (int i = 0; i < R->nsrc; i++)
        if (R->src[i]->type->commit) R->src[i]->type->commit(R->src[i]);
}

/* The aggregator's section. */
static enum tl_err restore_agg(struct tl_runtime *R, const struct tl_ckpt *ck)
{
    const struct tl_ckpt_section *a = tl_ckpt_find(ck, "agg");
    enum tl_err arc = a ? tl_agg_restore(R->out.agg, a->data, a->len) : TL_OK;
    if (arc == TL_ERR_USAGE) {
        /* what a reload promised for these settings: they apply now */
        tl_rt_log(R, TL_LOG_WARN,
                  "%s: the aggregator state was made with other aggregate settings (by, window, "
                  "alpha); the cumulative quantiles start over from this start with the new ones "
                  "(the sources go on from the checkpoint: nothing is read twice)",
                  R->ckpt_path);
    } else if (arc) {
        tl_rt_log(R, TL_LOG_ERROR, "%s: the aggregator state is damaged; move it away to start "
                  "over", R->ckpt_path);
        return TL_ERR_CORRUPT;
    }
    return TL_OK;
}

/* Opens an input (from its section; NULL: a first start), saying why
 * when it does not. */
static enum tl_err open_source(struct tl_runtime *R, struct tl_source *s, int version, const uint8_t *saved,
                               size_t len)
{
    char err[1024] = "";
    enum tl_err rc = s->type->open(s, version, saved, len, err, sizeof err);
    if (rc && err[0]) tl_rt_log(R, TL_LOG_ERROR, "%s", err);
    return rc;
}

/* One input from its section (NULL: a first start). */
static enum tl_err restore_source(struct tl_runtime *R, struct tl_source *s,
                                  const struct tl_ckpt_section *sec)
{
    if (!sec) return open_source(R, s, 0, NULL, 0);
    const uint8_t *p = sec->data, *end = sec->data + sec->len;
    uint8_t ver, tag;
    if (!tl_get_u8(&p, end, &ver) || ver < 1 || ver > SRC_CKPT_VERSION ||
        !tl_get_u8(&p, end, &tag) || tag != (uint8_t)s->type->ckpt_tag)
        return TL_ERR_CORRUPT;
    return open_source(R, s, ver, p, (size_t)(end - p));
}

/* Restores what a checkpoint holds and opens every source. */
static enum tl_err restore_and_open(struct tl_runtime *R)
{
    struct tl_ckpt ck = {0};
    char err[512];
    bool have = false;
    if (R->ckpt_dir) {
        enum tl_err rc = tl_ckpt_load(R->ckpt_path, &ck, err, sizeof err);
        if (rc == TL_OK) {
            have = true;
        } else if (rc != TL_ERR_OPEN) {
            tl_rt_log(R, TL_LOG_ERROR, "%s (move it away to start over)", err);
            return rc;
        }
    }
    enum tl_err rc = have ? restore_agg(R, &ck) : TL_OK;
    size_t matched = 0;
    for (int i = 0; !rc && i < R->nsrc; i++) {
        struct tl_source *s = R->src[i];
        const struct tl_ckpt_section *sec = have ? tl_ckpt_find(&ck, s->key) : NULL;
        if (have && !sec && s->legacy_key[0]) sec = tl_ckpt_find(&ck, s->legacy_key); /* older keys */
        matched += sec != NULL;
        if (have && !sec && s->type->ckpt_tag)
            tl_rt_log(R, TL_LOG_WARN, "%s is not in the checkpoint: read from its `from` position "
                      "as a new input (its tasks add to the restored counts)", s->path);
        rc = restore_source(R, s, sec);
        if (rc == TL_ERR_CORRUPT)
            tl_rt_log(R, TL_LOG_ERROR, "%s: a source's state is damaged (move the file away to "
                      "start over)", R->ckpt_path);
    }
    if (have && !rc) {
        size_t saved = 0;
        for (size_t i = 0; i < ck.nsections; i++)
            saved += ck.name_lens[i] == 18 && !memcmp(ck.sections[i].name, "s:", 2);
        if (saved > matched)
            tl_rt_log(R, TL_LOG_WARN, "%s holds the positions of %zu inputs that are not "
                      "configured any more; their tasks stay counted, their positions are dropped",
                      R->ckpt_path, saved - matched);
        tl_rt_log(R, TL_LOG_INFO, "restored from %s", R->ckpt_path);
    }
    tl_ckpt_free(&ck);
    return rc ? TL_ERR_CORRUPT : TL_OK;
}

/* ---------------------------------------------------------------- sinks */

static enum tl_err sinks_open(struct tl_runtime *R)
{
    struct tl_sink_env env = {.log = &R->log, .quiet = R->quiet,
                              .flush_interval_ms = (long)R->cfg.run.flush_interval};
    for (int i = 0; i < R->cfg.nsink; i++) {
        char err[512];
        enum tl_err rc = tl_output_open_sink(&R->out, &R->cfg.sink[i], &env, err, sizeof err);
        if (rc) {
            tl_rt_log(R, TL_LOG_ERROR, "sink %d (%s): %s", i, R->cfg.sink[i].type->name, err);
            return rc;
        }
    }
    return TL_OK;
}

/* ---------------------------------------------------------------- setup */

/* A glob of thousands of followed files needs a descriptor or two each: the
 * soft limit (often 1024) is raised to the hard one, as servers do. */
static void raise_open_files(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static enum tl_err output_open(struct tl_runtime *R)
{
    struct tl_agg_opts ao;
    tl_agg_opts_default(&ao);
    snprintf(R->by_copy, sizeof R->by_copy, "%s", R->cfg.agg.by);
    ao.nby = tl_parse_key_list(R->by_copy, ao.by, TL_AGG_MAX_KEYS);
    if (!ao.nby) {
        tl_rt_log(R, TL_LOG_ERROR, "aggregate.by: '%s' is not a list of tag names", R->cfg.agg.by);
        return TL_ERR_USAGE;
    }
    ao.sketch.alpha = R->cfg.agg.alpha;
    ao.sketch.exact_limit = (uint32_t)R->cfg.agg.exact_limit;
    ao.max_keys = (uint32_t)R->cfg.agg.max_keys;
    ao.allowed_lateness_ns = R->cfg.agg.allowed_lateness * 1000000000LL;
    char err[512];
    const char *hw = R->cfg.agg.histograms ? R->cfg.agg.histogram_windows : NULL;
    if (tl_output_coarse(&ao, (long)R->cfg.agg.window, hw,
                         hw && strcmp(hw, TL_HISTOGRAM_WINDOWS) != 0, err, sizeof err)) {
        tl_rt_log(R, TL_LOG_ERROR, "aggregate.histogram_windows: %s", err);
        return TL_ERR_USAGE;
    }
    struct tl_requests *rq = NULL;
    if (R->cfg.run.requests && tl_requests_load(R->cfg.run.requests, &rq, err, sizeof err)) {
        tl_rt_log(R, TL_LOG_ERROR, "requests: %s", err);
        return TL_ERR_USAGE;
    }
    R->log = (struct tl_log){log_write, R};
    if (tl_output_init(&R->out, &ao, (long)R->cfg.agg.window, &R->log)) {
        tl_rt_log(R, TL_LOG_ERROR, "bad aggregation settings");
        tl_requests_free(rq);
        return TL_ERR_USAGE;
    }
    R->out.requests = rq;
    R->out.histograms = R->cfg.agg.histograms;
    R->out.instance = R->instance;
    if (R->view) {
        R->out.view_record = R->view->record;
        R->out.view_ctx = R->view->ctx;
    }
    return TL_OK;
}

static enum tl_err lock_checkpoint_dir(struct tl_runtime *R)
{
    const char *dir = R->cfg.run.checkpoint_dir;
    if (!dir) return TL_OK;
    if (!(R->ckpt_dir = strdup(dir))) return TL_ERR_NOMEM;
    if (mkdir(dir, 0700) && errno != EEXIST) {
        tl_rt_log(R, TL_LOG_ERROR, "checkpoint_dir %s: %s", dir, strerror(errno));
        return TL_ERR_OPEN;
    }
    char lock[4200];
    snprintf(R->ckpt_path, sizeof R->ckpt_path, "%s/%s", dir, CKPT_NAME);
    snprintf(lock, sizeof lock, "%s/lock", dir);
    R->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (R->lock_fd < 0 || flock(R->lock_fd, LOCK_EX | LOCK_NB)) {
        tl_rt_log(R, TL_LOG_ERROR, "checkpoint_dir %s: %s", dir,
                  R->lock_fd < 0 ? strerror(errno) : "in use by another tasklens run");
        return TL_ERR_OPEN;
    }
    return TL_OK;
}

/* ---------------------------------------------------------------- reporting */

static void self_metrics(struct tl_runtime *R)
{
    for (int i = 0; i < R->nsrc; i++) R->src[i]->type->self_metrics(R->src[i]);
}

static void status_line(struct tl_runtime *R)
{
    struct tl_counter sum[TL_MAX_COUNTERS], one[TL_MAX_COUNTERS];
    size_t n = 0;
    for (int i = 0; i < R->nsrc; i++)
        n = tl_counters_merge(sum, n, TL_MAX_COUNTERS, one, R->src[i]->type->counters(R->src[i], one, TL_MAX_COUNTERS));
    tl_eprintf(
            "tasklens: %llu lines, %llu records, %llu rejected, lag %llu bytes, %llu points "
            "acked, spool %llu bytes\n",
            (unsigned long long)tl_counter_value(sum, n, "lines"),
            (unsigned long long)tl_counter_value(sum, n, "records"),
            (unsigned long long)tl_counter_value(sum, n, "parse_errors"),
            (unsigned long long)tl_counter_value(sum, n, "lag"),
            (unsigned long long)tl_output_sink_counter(&R->out, "points_acked"),
            (unsigned long long)tl_output_sink_counter(&R->out, "spool_bytes"));
}

/* ---------------------------------------------------------------- SIGHUP */

/* The sinks of the new configuration: the old ones hand over all they hold
 * (sent, or in the fsync'ed spool) and close; the new ones open; if either
 * step fails, the running configuration stays whole. false: it stays. */
static bool reload_sinks(struct tl_runtime *R, struct run_config *nc, struct run_config *old)
{
    R->out.no_wait = true; /* a full spool must not hold the reload */
    tl_rt_checkpoint(R, "reload");
    bool handed = tl_output_hand_over(&R->out);
    R->out.no_wait = false;
    if (!handed) {
        tl_rt_log(R, TL_LOG_ERROR, "SIGHUP: a sink still holds points it can neither send nor "
                  "spool; keeping the running configuration (send SIGHUP again when it has "
                  "drained)");
        return false;
    }
    tl_output_close_sinks(&R->out);
    *old = R->cfg;
    R->cfg = *nc;
    if (!sinks_open(R)) return true;
    tl_output_close_sinks(&R->out);
    R->cfg = *old;
    if (sinks_open(R))
        tl_rt_log(R, TL_LOG_ERROR, "SIGHUP: a new sink failed to open, and so did a running one; "
                  "reading pauses until a reload succeeds");
    else
        tl_rt_log(R, TL_LOG_ERROR, "SIGHUP: a new sink failed to open; keeping the running "
                  "configuration");
    return false;
}

/* The sources of the new configuration: those still configured keep their
 * state (with the new settings), new ones open, dropped ones close. */
static void reload_sources(struct tl_runtime *R)
{
    struct tl_source *prev[RUN_MAX_OPEN_SOURCES];
    int nprev = R->nsrc;
    memcpy(prev, R->src, sizeof(struct tl_source *) * (size_t)nprev);
    R->nsrc = 0;
    sources_expand(R, &R->cfg);
    for (int i = 0; i < R->nsrc; i++) {
        struct tl_source *s = R->src[i];
        struct tl_source *old = NULL;
        for (int j = 0; j < nprev && !old; j++)
            if (prev[j] && !strcmp(prev[j]->key, s->key)) old = prev[j];
        if (old) {
            old->cfg = s->cfg; /* the running state, new settings */
            source_free(s);
            R->src[i] = old;
            for (int j = 0; j < nprev; j++)
                if (prev[j] == old) prev[j] = NULL;
        } else if (open_source(R, s, 0, NULL, 0)) {
            s->done = true;
        }
    }
    for (int j = 0; j < nprev; j++)
        if (prev[j]) {
            tl_rt_log(R, TL_LOG_INFO, "SIGHUP: %s is no longer a source",
                      prev[j]->path ? prev[j]->path : "stdin");
            source_free(prev[j]);
        }
}

/* SIGHUP: reopen every file; with a configuration file, reload it. */
static void reload(struct tl_runtime *R)
{
    for (int i = 0; i < R->nsrc; i++)
        if (R->src[i]->type->reopen) R->src[i]->type->reopen(R->src[i]);
    if (!R->config_path) {
        tl_rt_log(R, TL_LOG_INFO, "SIGHUP: files reopened");
        return;
    }
    struct run_config nc, old;
    char err[1024];
    if (run_config_load(&nc, R->config_path, err, sizeof err)) {
        tl_rt_log(R, TL_LOG_ERROR, "SIGHUP: %s; keeping the running configuration", err);
        run_config_free(&nc);
        return;
    }
    if (strcmp(nc.agg.by, R->cfg.agg.by) || nc.agg.window != R->cfg.agg.window ||
        nc.agg.alpha != R->cfg.agg.alpha)
        tl_rt_log(R, TL_LOG_WARN, "SIGHUP: aggregate settings (by, window, alpha) apply at the "
                  "next start, which starts the cumulative quantiles over with them; the rest "
                  "applies now");
    if (!reload_sinks(R, &nc, &old)) {
        run_config_free(&nc);
        return;
    }
    reload_sources(R);
    /* strings of the old file are no longer referenced: the sources copied
     * their settings from the new one (the checkpoint directory stays: its
     * lock is held) */
    run_config_free(&old);
    tl_rt_log(R, TL_LOG_INFO, "SIGHUP: configuration reloaded (%d sources, %d sinks)", R->nsrc,
              R->out.nsinks);
}

/* ---------------------------------------------------------------- the loop */

/* Nothing was read: sleep until a source's descriptor or a signal wakes
 * us, or the next flush is due (at most 200 ms; 100 ms when a source must
 * be looked at anyway). */
static void wait_for_input(struct tl_runtime *R, int sfd, int64_t until_flush)
{
    struct pollfd pf[RUN_MAX_OPEN_SOURCES + 2];
    int np = 0;
    bool poll_soon = false;
    if (sfd >= 0) pf[np++] = (struct pollfd){sfd, POLLIN, 0};
    if (R->view && R->view->fd >= 0) pf[np++] = (struct pollfd){R->view->fd, POLLIN, 0};
    for (int i = 0; i < R->nsrc; i++) {
        struct tl_source *s = R->src[i];
        if (s->done) continue;
        int fd = s->type->wait_fd(s, &poll_soon);
        if (fd >= 0) pf[np++] = (struct pollfd){fd, POLLIN, 0};
    }
    int64_t wait = until_flush > 200 ? 200 : until_flush;
    if (poll_soon && wait > 100) wait = 100;
    if (wait < 5) wait = 5;
    if (poll(pf, (nfds_t)np, (int)wait) > 0)
        for (int i = 0; i < R->nsrc; i++) /* consume the events */
            if (R->src[i]->type->woken) R->src[i]->type->woken(R->src[i]);
}

/* Reads every source once; false when none is open any more. */
static bool read_round(struct tl_runtime *R, size_t *read_now)
{
    bool any_open = false;
    *read_now = 0;
    for (int i = 0; i < R->nsrc; i++) {
        struct tl_source *s = R->src[i];
        if (!s->done) *read_now += s->type->step(s);
        any_open |= !s->done;
    }
    return any_open;
}

/* The end: a complete input closes its windows; a followed one keeps them
 * open (they go on after a restart, from the checkpoint). Then Kafka
 * commits what the checkpoint covers and leaves the group. */
static void finish_run(struct tl_runtime *R, bool input_over)
{
    R->out.no_wait = true; /* from here on, waiting for room in a full spool ends */
    if (input_over) tl_output_finish(&R->out);
    else tl_output_cumulative(&R->out);
    self_metrics(R);
    bool saved = tl_rt_checkpoint(R, "exit");
    for (int i = 0; saved && i < R->nsrc; i++)
        if (R->src[i]->type->cumulative) R->src[i]->type->cumulative(R->src[i]);
    R->closing = true;
    for (int i = 0; i < R->nsrc; i++)
        if (R->src[i]->type->stop) R->src[i]->type->stop(R->src[i], saved);
}

/* Every input was read to its end: a view stays up (ticking, woken by its
 * keys) until it says stop or a signal comes. */
static void hold_view(struct tl_runtime *R, int sfd)
{
    while (R->view->tick(R->view->ctx, R, true, true)) {
        struct pollfd pf[2] = {{sfd, POLLIN, 0}, {R->view->fd, POLLIN, 0}};
        poll(pf, R->view->fd >= 0 ? 2 : 1, 200);
        struct signalfd_siginfo si;
        if (sfd >= 0 && read(sfd, &si, sizeof si) == (ssize_t)sizeof si && si.ssi_signo != SIGHUP) return;
    }
}

void tl_pipeline_block_signals(sigset_t *mask)
{
    sigemptyset(mask);
    sigaddset(mask, SIGINT);
    sigaddset(mask, SIGTERM);
    sigaddset(mask, SIGHUP);
    sigprocmask(SIG_BLOCK, mask, NULL);
}

static void run_loop(struct tl_runtime *R)
{
    sigset_t mask;
    tl_pipeline_block_signals(&mask);
    int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    const struct run_settings *rs = &R->cfg.run;
    bool tty = isatty(2) && !R->quiet;
    int64_t now = tl_mono_ms();
    int64_t last_flush = now, last_cum = now, last_status = now, last_ckpt = now;
    bool stop = false, input_over = false, commits = false;
    for (int i = 0; i < R->nsrc; i++) commits |= R->src[i]->type->commit != NULL;
    /* at once: from now on the files' identities are known, so a rotation
     * while we are down finds the old file even if no interval passed */
    tl_rt_checkpoint(R, "start");
    while (!stop) {
        size_t read_now;
        if (!read_round(R, &read_now)) {
            input_over = true; /* nothing follows: the input is complete */
            if (R->view) hold_view(R, sfd);
            break;
        }
        if (R->view && !R->view->tick(R->view->ctx, R, false, read_now == 0)) break;
        now = tl_mono_ms();
        if (!read_now) {
            wait_for_input(R, sfd, rs->flush_interval - (now - last_flush));
            now = tl_mono_ms();
        }
        if (now - last_cum >= rs->cumulative_interval * 1000) {
            tl_output_cumulative(&R->out);
            for (int i = 0; i < R->nsrc; i++)
                if (R->src[i]->type->cumulative) R->src[i]->type->cumulative(R->src[i]);
            last_cum = now;
        }
        if (now - last_flush >= rs->flush_interval) {
            self_metrics(R);
            tl_output_pass(&R->out, true);
            last_flush = now;
        }
        if ((R->ckpt_dir || commits) && now - last_ckpt >= rs->checkpoint_interval * 1000) {
            if (tl_rt_checkpoint(R, "interval")) commit_all(R);
            last_ckpt = tl_mono_ms();
        }
        if (tty && now - last_status >= 10000) {
            status_line(R);
            last_status = now;
        }
        struct signalfd_siginfo si;
        while (sfd >= 0 && read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
            if (si.ssi_signo == SIGHUP) reload(R);
            else stop = true;
        }
    }
    finish_run(R, input_over);
    if (sfd >= 0) close(sfd);
}

/* ---------------------------------------------------------------- entry */

static void runtime_free(struct tl_runtime *R)
{
    for (int i = 0; i < R->nsrc; i++) source_free(R->src[i]);
    if (R->lock_fd >= 0) close(R->lock_fd);
    run_config_free(&R->cfg);
    free(R->ckpt_dir);
    free(R->buf);
    free(R);
}

int tl_pipeline_run(struct run_config *cfg, const struct tl_pipeline_opts *opts)
{
    struct tl_runtime *R = calloc(1, sizeof *R);
    if (!R) {
        run_config_free(cfg);
        return 1;
    }
    R->cfg = *cfg;
    R->lock_fd = -1;
    R->config_path = opts->config_path;
    R->view = opts->view;
    static const char *const levels[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(R->cfg.run.log_level, levels[i])) R->level = (enum tl_log_level)i;
    R->quiet = R->cfg.run.quiet;
    gethostname(R->host, sizeof R->host - 1);
    snprintf(R->instance, sizeof R->instance, "%s",
             R->cfg.run.instance ? R->cfg.run.instance : R->host);
    R->buf = malloc(TL_RT_CHUNK);
    raise_open_files();
    int status = 1;
    if (!R->buf || lock_checkpoint_dir(R) || output_open(R)) goto out;
    if (sinks_open(R) || sources_expand(R, &R->cfg) || restore_and_open(R)) {
        tl_output_close(&R->out, 0, NULL);
        goto out;
    }
    run_loop(R);
    /* batches left in the spool are safe (on disk, sent by the next start),
     * and so are points held in memory when a checkpoint precedes them (the
     * next start reads them again): only a loss makes the status 1 */
    int oc = tl_output_close(&R->out, (long)R->cfg.run.drain_timeout,
                             opts->stats_path);
    status = (oc & TL_OUTPUT_FAILED) || ((oc & TL_OUTPUT_HELD) && !R->ckpt_dir) ? 1 : 0;
out:
    runtime_free(R);
    return status;
}
