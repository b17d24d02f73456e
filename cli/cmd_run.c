/* tasklens run: the streaming daemon.
 *
 *   tasklens run -c tasklens.yaml
 *   tasklens run --follow PATH [--from end] (--lines-out FILE | --influx-url URL ...)
 *
 * One thread, one loop: each source (followed files, files read once,
 * stdin) gets a large read in turn and feeds its own parser; records go to
 * the output (task/workflow points, the aggregator); at every flush
 * interval the points are handed to the sinks with a `tasklens` self-metrics
 * point per source; every cumulative interval the cumulative task_quantiles
 * are written. When nothing is readable the loop sleeps in poll() on the
 * followed files' inotify descriptors, stdin and a signalfd.
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
 * followed log is not over when we stop. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "checkpoint.h"
#include "cli.h"
#include "dirwatch.h"
#include "follow.h"
#include "intern.h"
#include "input.h"
#include "kafka.h"
#include "output.h"
#include "reader.h"
#include "run_config.h"

#define CHUNK (256 * 1024)
#define MAX_REPORTS 10
#define CKPT_NAME "tasklens.ckpt"
#define SRC_CKPT_VERSION 2 /* 2: file positions carry their content identity */

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

struct source;

struct feed_ctx { /* the parser's emit context */
    struct runner *R;
    struct source *src;
};

/* A Kafka source keeps one parser per stream: (topic, partition, key), so
 * managers interleaved in one topic never share an open-task table. */
struct kpart;

struct kstream {
    char *topic, *key;
    int32_t partition;
    struct kpart *kp; /* its partition's sketches (with a state topic) */
    struct tl_parser_inst inst;
    struct kfeed {
        struct runner *R;
        struct source *src;
        struct kstream *ks;
        int64_t offset; /* of the message being fed */
    } fc;
    struct tl_emit emit;
    bool chrome_array; /* events one per message: the stream is an open array */
    int reported;
};

/* With a state topic: what an assigned partition has counted, kept apart
 * so that another instance can take it over and the group's global
 * quantiles merge each record exactly once. */
struct kpart {
    char *topic;
    int32_t partition;
    struct tl_agg *agg; /* cumulative only */
};

#define MAX_HDR_TAGS 8

/* From a checkpoint, until the partition is assigned again. */
struct kpending {
    char *topic;
    int32_t partition;
    int64_t next;
    uint8_t *states; /* the streams of the partition, as saved */
    size_t len;
    bool revoked; /* kept at a revoke (checkpointed too; a newer group commit outdates it) */
};

struct source {
    struct src_settings cfg;
    char *path;   /* the file (a glob expanded) or directory; NULL for stdin */
    char *canon;  /* path resolved (realpath): what identifies the input */
    char key[64]; /* checkpoint section: "s:" + hash of canon */
    char legacy_key[64]; /* the section of checkpoints keyed by path as written */
    int64_t reopen_ms;   /* a file that could not be opened: try again then (0: no) */
    uint64_t reopen_errors_seen; /* the follower's failed reopens, at the last look */
    uint64_t gaps_seen;          /* the follower's gaps, said */
    bool reopen_said;    /* ... said, until the file reads again */
    struct tl_follow_pos reopen_pos; /* where to resume it, from the checkpoint */
    bool has_reopen_pos;
    struct tl_follow *fl;
    struct tl_dirwatch *dw;    /* a directory: each file read once */
    const char *cur;           /* the directory's file being read, for reports */
    struct tl_parse_stats dir_stats; /* summed over the directory's files */
    const char *dir_format;
    uint64_t bytes; /* read from this source, this process */
    bool done;     /* read once and finished (not followed, or stdin at EOF) */
    bool finished; /* the parser's finish() ran */
    struct tl_parser_inst inst;
    struct feed_ctx fc;
    struct tl_emit emit;
    int reported;
    bool keep; /* SIGHUP reload: still configured */
    /* kafka */
    struct tl_kafka *kafka;
    struct tl_intern *stream_ids; /* "topic\x1fpartition\x1fkey" -> index */
    struct kstream **streams;     /* by id; NULL once revoked */
    size_t nstreams;
    struct kpending *pending;
    int npending;
    uint64_t kafka_rejected_streams;
    struct tl_kstore *store; /* state_topic */
    struct kpart **kparts;
    int nkparts, capkparts;
    uint64_t published, publish_failures, takeovers;
    char *hdr_names[MAX_HDR_TAGS]; /* header_tags */
    int nhdr;
    char hdr_val[MAX_HDR_TAGS][256]; /* of the message being fed */
    bool hdr_set[MAX_HDR_TAGS];
};

struct runner {
    struct run_config cfg;
    const char *config_path; /* -c, for SIGHUP */
    enum log_level level;
    bool quiet;
    const char *instance;
    char host[256], instance_buf[256], by_copy[1024];
    char *ckpt_dir; /* owned: outlives configuration reloads */
    struct source *src[RUN_MAX_OPEN_SOURCES];
    int nsrc;
    struct tl_output out;
    char ckpt_path[4096];
    int lock_fd;
    char *buf;
    uint64_t checkpoints, checkpoints_deferred;
    bool closing; /* the run is over: a revoke only commits */
};

static void logm(const struct runner *R, enum log_level lv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void logm(const struct runner *R, enum log_level lv, const char *fmt, ...)
{
    if (lv > R->level || (R->quiet && lv > LOG_WARN)) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("tasklens run: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void run_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens run -c FILE\n"
            "       tasklens run --follow PATH [OPTIONS]\n"
            "\n"
            "Follows logs like `tail -F` (rotation, truncation, a file that appears later)\n"
            "and pushes task, task_quantiles, workflow and tasklens points as they happen.\n"
            "\n"
            "  -c, --config FILE      YAML settings (see --help-config); flags below add to it\n"
            "  --help-config          every setting of the configuration file\n"
            "  --follow PATH          a log to follow (repeatable)\n"
            "  --from WHERE           beginning (default) or end, on a first start\n"
            "  --lines-out FILE       write line protocol to FILE ('-': stdout)\n" TL_INFLUX_HELP
            "  --checkpoint-dir DIR   save state there; a restart resumes without loss or\n"
            "                         double counting\n"
            "  --checkpoint-interval S  seconds between checkpoints (default 5)\n"
            "  --flush-interval MS    hand points on at least this often (default 1000)\n"
            "  --cumulative-interval S  write cumulative quantiles this often (default 10)\n"
            "  --window SECONDS       tumbling window over record time (default 60)\n"
            "  --by KEYS              group quantiles by these tags (default: source,category)\n"
            "  --format-in NAME       input format (default: detected from the first bytes)\n"
            "  --instance NAME        `instance` tag of the self-metrics (default: host)\n"
            "  --stats FILE           write the sinks' counters as JSON at exit\n"
            "  -q, --quiet            no status line, no rejected-line reports\n"
            "\n"
            "SIGINT/SIGTERM: flush, checkpoint, drain and exit 0. SIGHUP: reopen the files,\n"
            "reload the configuration file.\n");
}

/* ---------------------------------------------------------------- sources */

static bool checkpoint(struct runner *R, const char *why);
static enum tl_err kafka_source_open(struct runner *R, struct source *s);
static void kafka_message(void *ctx, const struct tl_kafka_msg *m);

static void on_record(void *ctx, const struct tl_record *r)
{
    tl_output_record(&((struct feed_ctx *)ctx)->R->out, r);
}

static void on_reject(void *ctx, uint64_t line, enum tl_reject why, const char *detail)
{
    struct feed_ctx *fc = ctx;
    if (fc->R->quiet || fc->src->reported++ >= MAX_REPORTS) return;
    fprintf(stderr, "%s:%llu: %s%s%s%s\n",
            fc->src->cur ? fc->src->cur : fc->src->path ? fc->src->path : "stdin",
            (unsigned long long)line, tl_reject_str(why), detail ? " (" : "", detail ? detail : "",
            detail ? ")" : "");
}

/* The path that names an input whatever way it was written (a.log, ./a.log,
 * /srv/run/a.log, a symlink to it): realpath, or for a file not there yet
 * its directory's realpath and its name. Malloc'ed. */
static char *canonical_path(const char *path)
{
    char *r = realpath(path, NULL);
    if (r) return r;
    const char *slash = strrchr(path, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    char *d = realpath(*dir ? dir : "/", NULL);
    if (!d) return strdup(path);
    size_t n = strlen(d) + strlen(slash ? slash + 1 : path) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s", strcmp(d, "/") ? d : "", slash ? slash + 1 : path);
    free(d);
    return out;
}

static void section_key(char *key, size_t cap, const char *id)
{
    snprintf(key, cap, "s:%016llx", (unsigned long long)tl_hash_bytes(id, strlen(id)));
}

static struct source *source_new(struct runner *R, const struct src_settings *cfg,
                                 const char *path)
{
    struct source *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->cfg = *cfg;
    if (path && (!(s->path = strdup(path)) || !(s->canon = canonical_path(path)))) {
        free(s->path);
        free(s);
        return NULL;
    }
    const char *id = path ? s->canon : "-";
    char kid[2048];
    if (cfg->kind == SRC_KAFKA) { /* one consumer: its brokers, topics and group */
        snprintf(kid, sizeof kid, "%s|%s|%s", cfg->brokers, cfg->topics, cfg->group);
        id = kid;
    }
    section_key(s->key, sizeof s->key, id);
    if (path) section_key(s->legacy_key, sizeof s->legacy_key, path);
    s->fc = (struct feed_ctx){R, s};
    s->emit = (struct tl_emit){on_record, on_reject, &s->fc, 0};
    return s;
}

static void kstream_free(struct kstream *ks)
{
    if (!ks) return;
    tl_parser_inst_free(&ks->inst);
    free(ks->topic);
    free(ks->key);
    free(ks);
}

static void kpart_free(struct kpart *kp)
{
    if (!kp) return;
    tl_agg_free(kp->agg);
    free(kp->topic);
    free(kp);
}

static void kafka_source_close(struct source *s)
{
    tl_kafka_close(s->kafka);
    s->kafka = NULL;
    tl_kstore_close(s->store);
    s->store = NULL;
    for (int i = 0; i < s->nkparts; i++) kpart_free(s->kparts[i]);
    free(s->kparts);
    s->kparts = NULL;
    s->nkparts = s->capkparts = 0;
    for (int i = 0; i < s->nhdr; i++) free(s->hdr_names[i]);
    s->nhdr = 0;
    for (size_t i = 0; i < s->nstreams; i++) kstream_free(s->streams[i]);
    free(s->streams);
    s->streams = NULL;
    s->nstreams = 0;
    tl_intern_free(s->stream_ids);
    s->stream_ids = NULL;
    for (int i = 0; i < s->npending; i++) {
        free(s->pending[i].topic);
        free(s->pending[i].states);
    }
    free(s->pending);
    s->pending = NULL;
    s->npending = 0;
}

static void source_free(struct source *s)
{
    if (!s) return;
    kafka_source_close(s);
    tl_follow_close(s->fl);
    tl_dirwatch_close(s->dw);
    tl_parser_inst_free(&s->inst);
    free(s->path);
    free(s->canon);
    free(s);
}

/* Sets up the parser: named, or detected from the first bytes. */
static enum tl_err source_parser(struct runner *R, struct source *s, const char *buf, size_t len,
                                 const char *name)
{
    const struct tl_parser *p = NULL;
    if (name) p = tl_parser_find(name);
    else if (strcmp(s->cfg.parser, "auto")) p = tl_parser_find(s->cfg.parser);
    else p = tl_parser_detect(buf, len, NULL);
    if (!p) p = tl_parser_find("wq");
    char err[512];
    if (tl_parser_inst_init(&s->inst, p)) return TL_ERR_NOMEM;
    if (s->cfg.parser_options &&
        tl_cfg_apply(&R->cfg.doc, s->cfg.parser_options, p->options, s->inst.config,
                     "parser options", NULL, err, sizeof err)) {
        logm(R, LOG_ERROR, "%s", err);
        return TL_ERR_USAGE;
    }
    enum tl_err rc = tl_parser_inst_open(&s->inst, &s->emit);
    if (!rc && p->set_name) p->set_name(s->inst.state, s->cur ? s->cur : s->path);
    return rc;
}

#define REOPEN_MS 5000

static enum tl_err source_open(struct runner *R, struct source *s, const struct tl_follow_pos *at)
{
    if (s->cfg.kind == SRC_KAFKA) return kafka_source_open(R, s);
    if (!s->path) return TL_OK; /* stdin */
    char err[512];
    if (s->cfg.kind == SRC_DIR) {
        if (tl_dirwatch_open(s->path, s->cfg.recursive, 1000, s->cfg.match, &s->dw, err, sizeof err)) {
            logm(R, LOG_ERROR, "%s", err);
            return TL_ERR_OPEN;
        }
        return TL_OK;
    }
    if (!tl_followable(s->path, err, sizeof err)) {
        logm(R, LOG_ERROR, "%s", err);
        return TL_ERR_OPEN;
    }
    struct tl_follow_opts fo = {.from_end = !strcmp(s->cfg.from, "end"), .rotated = s->cfg.rotated,
                                .quiet_ms = s->cfg.rotate_quiet ? (int)s->cfg.rotate_quiet : -1};
    if (tl_follow_open(s->path, &fo, at, &s->fl, err, sizeof err)) {
        /* there but not readable now (permissions, a disk error): only this
         * source waits, tried again every few seconds, said once */
        if (!s->reopen_ms)
            logm(R, LOG_WARN, "%s (tried again every %d s; the other sources go on)", err,
                 REOPEN_MS / 1000);
        s->reopen_ms = tl_mono_ms() + REOPEN_MS;
        if (at) {
            s->reopen_pos = *at;
            s->has_reopen_pos = true;
        }
        return TL_OK;
    }
    if (s->reopen_ms) logm(R, LOG_INFO, "%s: readable now", s->path);
    s->reopen_ms = 0;
    s->has_reopen_pos = false;
    struct tl_follow_stats st = tl_follow_stats(s->fl);
    if (st.resume == TL_RESUME_SAME)
        logm(R, LOG_INFO, "%s: resuming at byte %llu", s->path,
             (unsigned long long)tl_follow_position(s->fl).offset);
    else if (st.resume == TL_RESUME_ROTATED)
        logm(R, LOG_INFO, "%s: rotated while stopped; reading the rest of %s%s first%s", s->path,
             st.rotated_name, st.rotated_compressed ? " (decompressed)" : "",
             st.chain_files ? ", then the files rotated after it" : "");
    if (st.resume == TL_RESUME_REPLACED && at)
        logm(R, LOG_WARN, "%s: the checkpointed file is not at this path any more, and its content "
             "was not found among the rotated files (%s); lost: %llu bytes known unread at the "
             "checkpoint, and whatever was written to it after (self-metrics gaps, gap_bytes); "
             "reading the path from the start",
             s->path, s->cfg.rotated ? s->cfg.rotated : "its name followed by anything",
             (unsigned long long)st.gap_bytes);
    s->gaps_seen = st.gaps;
    if (st.chain_skipped)
        logm(R, LOG_WARN, "%s: %llu rotated files could not be read or decoded whole: their tasks "
             "are missing (self-metric gaps)", s->path, (unsigned long long)st.chain_skipped);
    return TL_OK;
}

/* A directory's next settled file, read whole through its own parser (the
 * files are independent documents: a metadata file per quantum). */
static size_t dir_step(struct runner *R, struct source *s)
{
    const char *path = tl_dirwatch_next(s->dw);
    if (!path) return 0;
    char err[512];
    struct tl_reader *rd;
    if (tl_reader_open(path, &rd, err, sizeof err)) {
        /* tried again at the next scans; said once */
        bool again = tl_dirwatch_failed(s->dw);
        logm(R, again ? LOG_DEBUG : LOG_WARN, "%s (tried again until it can be read)", err);
        return 1;
    }
    struct tl_parser_inst keep = s->inst;
    memset(&s->inst, 0, sizeof s->inst);
    s->cur = path;
    size_t total = 0, got;
    enum tl_err rc;
    while ((rc = tl_reader_read(rd, R->buf, CHUNK, &got, err, sizeof err)) == TL_OK && got) {
        if (!s->inst.p && source_parser(R, s, R->buf, got, NULL)) break;
        s->inst.p->feed(s->inst.state, R->buf, got);
        total += got;
        s->bytes += got;
    }
    if (rc) logm(R, LOG_WARN, "%s: %s", path, err);
    if (s->inst.p) {
        s->inst.p->finish(s->inst.state);
        const struct tl_parse_stats *ps = s->inst.p->stats(s->inst.state);
        s->dir_stats.lines += ps->lines;
        s->dir_stats.records += ps->records;
        s->dir_stats.rejected += ps->rejected;
        for (int i = 0; i < TL_REJ_COUNT; i++) s->dir_stats.rejected_by[i] += ps->rejected_by[i];
        s->dir_format = s->inst.p->name;
    }
    tl_parser_inst_free(&s->inst);
    s->inst = keep;
    s->cur = NULL;
    s->reported = 0;
    tl_reader_close(rd);
    return total ? total : 1;
}

/* Reads one chunk and feeds it. Returns the bytes read (0: nothing now). */
static size_t source_step(struct runner *R, struct source *s)
{
    if (s->done) return 0;
    if (s->dw) return dir_step(R, s);
    if (s->cfg.kind == SRC_KAFKA)
        return s->kafka ? tl_kafka_poll(s->kafka, 20000, (size_t)CHUNK * 16, kafka_message, s) : 0;
    size_t got = 0;
    if (s->path && !s->fl) { /* not readable yet: its time to try again? */
        if (s->reopen_ms && tl_mono_ms() >= s->reopen_ms)
            source_open(R, s, s->has_reopen_pos ? &s->reopen_pos : NULL);
        return 0;
    }
    if (s->path) {
        if (tl_follow_read(s->fl, R->buf, CHUNK, &got)) {
            logm(R, LOG_ERROR, "%s: read failed: %s", s->path, strerror(errno));
            got = 0;
        }
        int why;
        uint64_t reopen_errors = tl_follow_reopen_errors(s->fl, &why);
        if (reopen_errors > s->reopen_errors_seen && !s->reopen_said) {
            /* rotated into a file it cannot read: said once, counted in the
             * self-metrics (open_errors), read when it can be */
            logm(R, LOG_WARN, "%s: the file now at this path cannot be read (%s); waiting until it "
                              "can (self-metric open_errors)", s->path, strerror(why));
            s->reopen_said = true;
        }
        if (got && s->reopen_said) {
            logm(R, LOG_INFO, "%s: readable again", s->path);
            s->reopen_said = false;
        }
        s->reopen_errors_seen = reopen_errors;
        if (tl_follow_gaps(s->fl) > s->gaps_seen) { /* a rotated file that would not decode */
            struct tl_follow_stats fst = tl_follow_stats(s->fl);
            logm(R, LOG_WARN, "%s: %llu rotated files could not be read or decoded whole: their "
                 "tasks are missing (self-metric gaps)", s->path,
                 (unsigned long long)fst.chain_skipped);
            s->gaps_seen = fst.gaps;
        }
        if (!got && !s->cfg.follow) s->done = true;
    } else {
        ssize_t n = read(0, R->buf, CHUNK);
        if (n > 0) got = (size_t)n;
        else if (n == 0 || (errno != EAGAIN && errno != EINTR)) s->done = true;
    }
    if (got) {
        s->bytes += got;
        if (!s->inst.p && source_parser(R, s, R->buf, got, NULL)) {
            s->done = true;
            return 0;
        }
        s->inst.p->feed(s->inst.state, R->buf, got);
    }
    if (s->done && s->inst.p && !s->finished) {
        s->inst.p->finish(s->inst.state); /* open tasks are reported */
        s->finished = true;
    }
    return got;
}

/* ---------------------------------------------------------------- kafka */

static void kafka_on_record(void *ctx, const struct tl_record *r)
{
    struct kfeed *fc = ctx;
    struct source *s = fc->src;
    const char *tag = s->cfg.key_tag;
    struct tl_record copy;
    if ((tag && fc->ks->key[0]) || s->nhdr) {
        copy = *r; /* the key as a tag (e.g. the manager's host), and headers */
        if (tag && fc->ks->key[0] && copy.n_tags < TL_MAX_EXTRA_TAGS)
            copy.tags[copy.n_tags++] = (struct tl_tag){tag, fc->ks->key};
        for (int i = 0; i < s->nhdr && copy.n_tags < TL_MAX_EXTRA_TAGS; i++)
            if (s->hdr_set[i]) copy.tags[copy.n_tags++] = (struct tl_tag){s->hdr_names[i], s->hdr_val[i]};
        r = &copy;
    }
    tl_output_record(&fc->R->out, r);
    if (fc->ks->kp) {
        enum tl_err rc = tl_agg_add(fc->ks->kp->agg, r);
        if (rc && !fc->R->out.agg_rc) fc->R->out.agg_rc = rc;
    }
}

static void kafka_on_reject(void *ctx, uint64_t line, enum tl_reject why, const char *detail)
{
    struct kfeed *fc = ctx;
    (void)line; /* within a stream; the offset says where it is */
    if (fc->R->quiet || fc->ks->reported++ >= MAX_REPORTS) return;
    fprintf(stderr, "kafka:%s/%d@%lld%s%s: %s%s%s%s\n", fc->ks->topic, (int)fc->ks->partition,
            (long long)fc->offset, fc->ks->key[0] ? " key " : "", fc->ks->key, tl_reject_str(why),
            detail ? " (" : "", detail ? detail : "", detail ? ")" : "");
}

static size_t stream_key(char *out, size_t cap, const char *topic, int32_t partition,
                         const char *key, size_t key_len)
{
    int n = snprintf(out, cap, "%s\x1f%d\x1f", topic, (int)partition);
    if (n < 0 || (size_t)n >= cap) return 0;
    if (key_len > cap - (size_t)n) key_len = cap - (size_t)n;
    memcpy(out + n, key, key_len);
    return (size_t)n + key_len;
}

/* The partition's own aggregator (with a state topic; else NULL). */
static struct kpart *kpart_get(struct runner *R, struct source *s, const char *topic,
                               int32_t partition)
{
    if (!s->store) return NULL;
    for (int i = 0; i < s->nkparts; i++)
        if (s->kparts[i]->partition == partition && !strcmp(s->kparts[i]->topic, topic))
            return s->kparts[i];
    if (s->nkparts == s->capkparts) {
        int cap = s->capkparts ? s->capkparts * 2 : 16;
        struct kpart **v = realloc(s->kparts, (size_t)cap * sizeof *v);
        if (!v) return NULL;
        s->kparts = v;
        s->capkparts = cap;
    }
    struct tl_agg_opts ao = R->out.ao;
    ao.window_ns = 0;
    struct kpart *kp = calloc(1, sizeof *kp);
    if (!kp || !(kp->topic = strdup(topic)) || !(kp->agg = tl_agg_new(&ao, NULL, NULL))) {
        kpart_free(kp);
        return NULL;
    }
    kp->partition = partition;
    s->kparts[s->nkparts++] = kp;
    return kp;
}

static void kpart_drop(struct source *s, const char *topic, int32_t partition)
{
    for (size_t j = 0; j < s->nstreams; j++)
        if (s->streams[j] && s->streams[j]->partition == partition &&
            !strcmp(s->streams[j]->topic, topic))
            s->streams[j]->kp = NULL;
    for (int i = 0; i < s->nkparts; i++)
        if (s->kparts[i]->partition == partition && !strcmp(s->kparts[i]->topic, topic)) {
            kpart_free(s->kparts[i]);
            s->kparts[i] = s->kparts[--s->nkparts];
            return;
        }
}

/* The stream's parser state; created (format named or detected from
 * `first`) when new. NULL past max_streams. */
static struct kstream *stream_get(struct runner *R, struct source *s, const char *topic,
                                  int32_t partition, const char *key, size_t key_len,
                                  const char *first, size_t first_len, const char *format)
{
    char k[1024];
    size_t n = stream_key(k, sizeof k, topic, partition, key, key_len);
    int32_t id = tl_intern_find(s->stream_ids, k, n);
    if (id >= 0 && (size_t)id < s->nstreams && s->streams[id]) return s->streams[id];
    if (id < 0) {
        if ((long long)tl_intern_count(s->stream_ids) >= s->cfg.max_streams) return NULL;
        id = tl_intern(s->stream_ids, k, n);
        if (id < 0) return NULL;
    }
    if ((size_t)id >= s->nstreams) {
        size_t cap = (size_t)id + 64;
        struct kstream **v = realloc(s->streams, cap * sizeof *v);
        if (!v) return NULL;
        for (size_t i = s->nstreams; i < cap; i++) v[i] = NULL;
        s->streams = v;
        s->nstreams = cap;
    }
    struct kstream *ks = calloc(1, sizeof *ks);
    if (!ks || !(ks->topic = strdup(topic)) || !(ks->key = strndup(key ? key : "", key_len))) {
        kstream_free(ks);
        return NULL;
    }
    ks->partition = partition;
    ks->fc = (struct kfeed){R, s, ks, -1};
    ks->emit = (struct tl_emit){kafka_on_record, kafka_on_reject, &ks->fc, 0};
    const struct tl_parser *p = format ? tl_parser_find(format)
                                : strcmp(s->cfg.parser, "auto") ? tl_parser_find(s->cfg.parser)
                                                                : tl_parser_detect(first, first_len, NULL);
    if (!p) p = tl_parser_find("wq");
    char err[512];
    if (tl_parser_inst_init(&ks->inst, p) ||
        (s->cfg.parser_options &&
         tl_cfg_apply(&R->cfg.doc, s->cfg.parser_options, p->options, ks->inst.config,
                      "parser options", NULL, err, sizeof err)) ||
        tl_parser_inst_open(&ks->inst, &ks->emit)) {
        kstream_free(ks);
        return NULL;
    }
    if (p->set_name) p->set_name(ks->inst.state, ks->topic);
    ks->kp = kpart_get(R, s, topic, partition);
    s->streams[id] = ks;
    return ks;
}

static bool is_whole_trace(const char *v, size_t n)
{
    size_t i = 0;
    while (i < n && (v[i] == ' ' || v[i] == '\n' || v[i] == '\r' || v[i] == '\t')) i++;
    return i < n && (v[i] == '[' || memmem(v, n < 4096 ? n : 4096, "\"traceEvents\"", 13));
}

/* One message into its stream's parser. Work Queue: lines (a missing last
 * newline added); LSST: one document; Chrome: one event (the stream is an
 * open array, as catapult's writer makes it) or a whole trace. */
static void kafka_message(void *ctx, const struct tl_kafka_msg *m)
{
    struct source *s = ctx;
    struct runner *R = s->fc.R;
    s->bytes += m->len;
    if (!m->value || !m->len) return;
    struct kstream *ks = stream_get(R, s, m->topic, m->partition, m->key, m->key_len, m->value,
                                    m->len, NULL);
    if (!ks) {
        if (s->kafka_rejected_streams++ < MAX_REPORTS)
            logm(R, LOG_WARN, "kafka:%s/%d@%lld: no parser state for this key (max_streams %lld "
                 "reached); message skipped", m->topic, (int)m->partition, (long long)m->offset,
                 s->cfg.max_streams);
        return;
    }
    ks->fc.offset = m->offset;
    for (int i = 0; i < s->nhdr; i++) {
        const char *v;
        size_t n;
        s->hdr_set[i] = tl_kafka_msg_header(m, s->hdr_names[i], &v, &n) && n &&
                        n < sizeof s->hdr_val[i] && !memchr(v, '\0', n);
        if (s->hdr_set[i]) {
            memcpy(s->hdr_val[i], v, n);
            s->hdr_val[i][n] = '\0';
        }
    }
    const struct tl_parser *p = ks->inst.p;
    if (p->messages == TL_MSG_LINES) {
        p->feed(ks->inst.state, m->value, m->len);
        if (m->value[m->len - 1] != '\n') p->feed(ks->inst.state, "\n", 1);
    } else if (p->messages == TL_MSG_STREAM) {
        p->feed(ks->inst.state, m->value, m->len);
    } else if (p->messages == TL_MSG_EVENTS && !is_whole_trace(m->value, m->len)) {
        if (!ks->chrome_array) p->feed(ks->inst.state, "[", 1);
        ks->chrome_array = true;
        p->feed(ks->inst.state, m->value, m->len);
        p->feed(ks->inst.state, ",", 1);
    } else {
        p->feed(ks->inst.state, m->value, m->len); /* a document, whole */
        p->finish(ks->inst.state);
    }
}

static void kafka_log(void *ctx, int level, const char *msg)
{
    logm(((struct source *)ctx)->fc.R, level <= 0 ? LOG_ERROR : level == 1 ? LOG_WARN : level == 2 ? LOG_INFO : LOG_DEBUG,
         "%s", msg);
}

/* A partition's state (in checkpoints and in the state topic):
 *   varint n | n x (str key | str parser | u8 chrome_array | varint len | state)
 *   [varint len | its aggregator]   (with a state topic)
 * Restores its streams (and sketches); false when damaged. */
static bool partition_apply(struct runner *R, struct source *s, const char *topic,
                            int32_t partition, const uint8_t *p, size_t len)
{
    const uint8_t *end = p + len;
    uint64_t n = 0;
    bool ok = tl_get_varint(&p, end, &n);
    for (uint64_t j = 0; ok && j < n; j++) {
        const char *key, *pname;
        size_t klen, plen;
        uint64_t slen;
        uint8_t arr;
        char name[64];
        ok = tl_get_str(&p, end, 1 << 16, &key, &klen) && tl_get_str(&p, end, 63, &pname, &plen) &&
             tl_get_u8(&p, end, &arr) && tl_get_varint(&p, end, &slen) &&
             slen <= (uint64_t)(end - p);
        if (!ok) break;
        memcpy(name, pname, plen);
        name[plen] = '\0';
        struct kstream *ks = stream_get(R, s, topic, partition, key, klen, NULL, 0, name);
        if (ks && slen && ks->inst.p->restore) ok = !ks->inst.p->restore(ks->inst.state, p, slen);
        if (ks) ks->chrome_array = arr;
        p += slen;
    }
    uint64_t alen;
    if (ok && p < end) {
        struct kpart *kp = kpart_get(R, s, topic, partition);
        ok = tl_get_varint(&p, end, &alen) && alen <= (uint64_t)(end - p) &&
             (!kp || !alen || !tl_agg_restore(kp->agg, p, alen));
        p += ok ? alen : 0;
    }
    return ok && p == end;
}

/* The state topic's record of a partition:
 *   u8 version | str instance | zigzag next | partition state (above) */
#define KSTATE_VERSION 1

static size_t kstate_key(char *out, size_t cap, const struct source *s, const char *topic,
                         int32_t partition)
{
    int n = snprintf(out, cap, "%s/%s/%d", s->cfg.group, topic, (int)partition);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static bool kstate_parse(const uint8_t *p, size_t len, char *instance, size_t icap, int64_t *next,
                         const uint8_t **state, size_t *slen)
{
    const uint8_t *end = p + len;
    uint8_t v;
    const char *inst;
    size_t ilen;
    uint64_t zz;
    if (!tl_get_u8(&p, end, &v) || v != KSTATE_VERSION || !tl_get_str(&p, end, 1024, &inst, &ilen) ||
        !tl_get_varint(&p, end, &zz))
        return false;
    snprintf(instance, icap, "%.*s", (int)ilen, inst);
    *next = tl_unzigzag(zz);
    *state = p;
    *slen = (size_t)(end - p);
    return true;
}

/* A newly assigned partition starts where the newest state of it stops:
 * this instance's checkpoint, or what its last owner published in the state
 * topic (another instance, or this one before a lost checkpoint dir). Its
 * streams and sketches come from there; -1 when neither exists (the
 * group's committed offset). */
static int64_t kafka_assign(void *ctx, const char *topic, int32_t partition, int64_t committed)
{
    struct source *s = ctx;
    struct runner *R = s->fc.R;
    struct kpending *local = NULL;
    for (int i = 0; i < s->npending && !local; i++)
        if (s->pending[i].partition == partition && !strcmp(s->pending[i].topic, topic))
            local = &s->pending[i];
    if (local && committed > local->next) {
        /* we commit only what our checkpoint covers: a commit beyond it is
         * another member's, and our state is behind the partition */
        logm(R, LOG_INFO, "kafka:%s/%d: saved state stops at %lld, the group committed %lld; "
             "reading on from the commit", topic, (int)partition, (long long)local->next,
             (long long)committed);
        free(local->topic);
        free(local->states);
        *local = s->pending[--s->npending];
        local = NULL;
    }
    const uint8_t *shared = NULL, *sstate = NULL;
    size_t slen = 0, sstlen = 0;
    int64_t snext = -1;
    char owner[256] = "";
    if (s->store) {
        char key[1024];
        if (tl_kstore_sync(s->store, 10000))
            logm(R, LOG_WARN, "kafka:%s/%d: the state topic could not be read to its end; a "
                 "newer state may be missed", topic, (int)partition);
        if (kstate_key(key, sizeof key, s, topic, partition) &&
            (shared = tl_kstore_get(s->store, key, &slen)) &&
            !kstate_parse(shared, slen, owner, sizeof owner, &snext, &sstate, &sstlen)) {
            logm(R, LOG_ERROR, "kafka:%s/%d: damaged state in the state topic; ignored", topic,
                 (int)partition);
            shared = NULL;
        }
    }
    kpart_drop(s, topic, partition); /* a fresh start for its sketches */
    if (s->store) kpart_get(R, s, topic, partition);
    int64_t next = -1;
    bool ok = true;
    const char *from = NULL;
    if (shared && (!local || snext > local->next)) {
        next = snext;
        ok = partition_apply(R, s, topic, partition, sstate, sstlen);
        from = "the state topic";
        if (ok && strcmp(owner, R->instance)) {
            s->takeovers++;
            logm(R, LOG_INFO, "kafka:%s/%d: taken over from %s at offset %lld", topic,
                 (int)partition, owner, (long long)next);
        }
    } else if (local) {
        next = local->next;
        ok = partition_apply(R, s, topic, partition, local->states, local->len);
        from = "the checkpoint";
    }
    if (!ok) {
        logm(R, LOG_ERROR, "kafka:%s/%d: damaged state in %s; reading from the committed offset",
             topic, (int)partition, from);
        next = -1;
        for (size_t j = 0; j < s->nstreams; j++) {
            struct kstream *ks = s->streams[j];
            if (ks && ks->partition == partition && !strcmp(ks->topic, topic)) {
                kstream_free(ks);
                s->streams[j] = NULL;
            }
        }
        kpart_drop(s, topic, partition);
        if (s->store) kpart_get(R, s, topic, partition);
    }
    if (local) {
        free(local->topic);
        free(local->states);
        *local = s->pending[--s->npending];
    }
    return next;
}

/* Before partitions go: everything they produced acknowledged and
 * checkpointed, their offsets committed; then their streams are dropped
 * (another instance reads on from the commit). */
static enum tl_err partition_save(struct source *s, const char *topic, int32_t partition,
                                  struct tl_buf *b);

static void kafka_revoke(void *ctx, const struct tl_kafka_partition *const *parts, int n)
{
    struct source *s = ctx;
    struct runner *R = s->fc.R;
    if (!R->closing) {
        tl_output_pass(&R->out, true);
        if (checkpoint(R, "revoke")) tl_kafka_commit(s->kafka);
        else logm(R, LOG_WARN, "kafka: partitions revoked before their output was acknowledged; "
                  "another owner reads them again from the last commit");
    } else {
        tl_kafka_commit(s->kafka);
    }
    /* If the partitions come back to this process (a broker restart, a
     * rebalance that changes nothing for them), their open tasks must too:
     * keep their state until then, as a checkpoint would. */
    for (int i = 0; !R->closing && i < n; i++) {
        if (parts[i]->next < 0) continue;
        struct tl_buf st = {0};
        struct kpending *v = realloc(s->pending, (size_t)(s->npending + 1) * sizeof *v);
        if (v) s->pending = v;
        if (v && !partition_save(s, parts[i]->topic, parts[i]->partition, &st) && !st.oom) {
            for (int j = 0; j < s->npending; j++) /* an older one of the same partition goes */
                if (s->pending[j].partition == parts[i]->partition &&
                    !strcmp(s->pending[j].topic, parts[i]->topic)) {
                    free(s->pending[j].topic);
                    free(s->pending[j].states);
                    s->pending[j] = s->pending[--s->npending];
                    break;
                }
            char *t = strdup(parts[i]->topic);
            if (t) {
                s->pending[s->npending++] = (struct kpending){t, parts[i]->partition, parts[i]->next,
                                                              (uint8_t *)st.data, st.len, true};
                st.data = NULL;
            }
        }
        tl_buf_free(&st);
    }
    for (int i = 0; i < n; i++)
        for (size_t j = 0; j < s->nstreams; j++) {
            struct kstream *ks = s->streams[j];
            if (ks && ks->partition == parts[i]->partition && !strcmp(ks->topic, parts[i]->topic)) {
                kstream_free(ks);
                s->streams[j] = NULL;
            }
        }
    for (int i = 0; i < n; i++) kpart_drop(s, parts[i]->topic, parts[i]->partition);
}

static enum tl_err kafka_source_open(struct runner *R, struct source *s)
{
    struct tl_kafka_prop props[128];
    int np = 0;
    const struct tl_cfg_node *pr = s->cfg.properties;
    for (size_t i = 0; pr && i < pr->n && np < 128; i++)
        props[np++] = (struct tl_kafka_prop){pr->keys[i], pr->items[i]->scalar};
    struct tl_kafka_cfg kc = {s->cfg.brokers, s->cfg.topics, s->cfg.group, s->cfg.start, props, np};
    struct tl_kafka_hooks hooks = {s, kafka_revoke, kafka_assign, kafka_log};
    char err[1024];
    if (!s->stream_ids && !(s->stream_ids = tl_intern_new((size_t)64 << 20))) return TL_ERR_NOMEM;
    for (const char *h = s->cfg.header_tags; h && *h && s->nhdr < MAX_HDR_TAGS;) {
        size_t n = strcspn(h, ",");
        while (n && *h == ' ') h++, n--;
        size_t m = n;
        while (m && h[m - 1] == ' ') m--;
        if (m && !(s->hdr_names[s->nhdr++] = strndup(h, m))) return TL_ERR_NOMEM;
        h += n;
        if (*h == ',') h++;
    }
    if (s->cfg.state_topic && !s->store) {
        if (tl_kstore_open(&kc, s->cfg.state_topic, &hooks, &s->store, err, sizeof err)) {
            logm(R, LOG_ERROR, "%s", err);
            return TL_ERR_OPEN;
        }
        if (tl_kstore_sync(s->store, 30000))
            logm(R, LOG_WARN, "kafka: the state topic %s was not read to its end",
                 s->cfg.state_topic);
        logm(R, LOG_INFO, "kafka: state topic %s: %zu partition states", s->cfg.state_topic,
             tl_kstore_count(s->store));
    }
    if (tl_kafka_open(&kc, &hooks, &s->kafka, err, sizeof err)) {
        logm(R, LOG_ERROR, "%s", err);
        return TL_ERR_OPEN;
    }
    logm(R, LOG_INFO, "kafka: %s, topics %s, group %s", s->cfg.brokers, s->cfg.topics, s->cfg.group);
    return TL_OK;
}

/* A partition's state (see partition_apply) into b. */
static enum tl_err partition_save(struct source *s, const char *topic, int32_t partition,
                                  struct tl_buf *b)
{
    struct tl_buf body = {0}, one = {0};
    uint64_t count = 0;
    for (size_t j = 0; j < s->nstreams; j++) {
        struct kstream *ks = s->streams[j];
        if (!ks || ks->partition != partition || strcmp(ks->topic, topic)) continue;
        one.len = 0;
        if (ks->inst.p->save && ks->inst.p->save(ks->inst.state, &one)) one.len = 0;
        tl_put_str(&body, ks->key);
        tl_put_str(&body, ks->inst.p->name);
        tl_put_u8(&body, ks->chrome_array);
        tl_put_varint(&body, one.len);
        tl_buf_append(&body, one.data, one.len);
        count++;
    }
    tl_put_varint(b, count);
    tl_buf_append(b, body.data, body.len);
    enum tl_err rc = TL_OK;
    for (int i = 0; i < s->nkparts; i++) {
        struct kpart *kp = s->kparts[i];
        if (kp->partition != partition || strcmp(kp->topic, topic)) continue;
        one.len = 0;
        rc = tl_agg_serialize(kp->agg, &one);
        tl_put_varint(b, one.len);
        tl_buf_append(b, one.data, one.len);
        break;
    }
    tl_buf_free(&body);
    tl_buf_free(&one);
    return rc ? rc : b->oom ? TL_ERR_NOMEM : TL_OK;
}

/*   kafka: u8 version | 'K' | varint partitions | per partition: str topic |
 *          zigzag partition | zigzag next | varint len | its state */
static enum tl_err kafka_save(struct source *s, struct tl_buf *b)
{
    tl_put_u8(b, SRC_CKPT_VERSION);
    tl_put_u8(b, 'K');
    const struct tl_kafka_partition *parts;
    int n = s->kafka ? tl_kafka_partitions(s->kafka, &parts) : 0;
    int keep = 0;
    for (int i = 0; i < n; i++) keep += parts[i].assigned && parts[i].next >= 0;
    keep += s->npending;
    tl_put_varint(b, (uint64_t)keep);
    struct tl_buf st = {0};
    enum tl_err rc = TL_OK;
    for (int i = 0; !rc && i < n; i++) {
        if (!parts[i].assigned || parts[i].next < 0) continue;
        tl_put_str(b, parts[i].topic);
        tl_put_varint(b, tl_zigzag(parts[i].partition));
        tl_put_varint(b, tl_zigzag(parts[i].next));
        st.len = 0;
        rc = partition_save(s, parts[i].topic, parts[i].partition, &st);
        tl_put_varint(b, st.len);
        tl_buf_append(b, st.data, st.len);
    }
    /* partitions restored or revoked but not assigned (again) yet keep
     * their saved state: a crash before they come back must not lose it;
     * if another member reads on meanwhile, its commit outdates it (see
     * kafka_assign) */
    for (int i = 0; i < s->npending; i++) {
        tl_put_str(b, s->pending[i].topic);
        tl_put_varint(b, tl_zigzag(s->pending[i].partition));
        tl_put_varint(b, tl_zigzag(s->pending[i].next));
        tl_put_varint(b, s->pending[i].len);
        tl_buf_append(b, s->pending[i].states, s->pending[i].len);
    }
    tl_buf_free(&st);
    return rc ? rc : b->oom ? TL_ERR_NOMEM : TL_OK;
}

/* Every assigned partition's state into the state topic, acknowledged by
 * the brokers -- before its offsets are committed, so the next owner never
 * starts from a commit its state has not reached. */
static bool kafka_publish(struct runner *R, struct source *s)
{
    if (!s->store || !s->kafka) return true;
    const struct tl_kafka_partition *parts;
    int n = tl_kafka_partitions(s->kafka, &parts);
    struct tl_buf v = {0};
    bool ok = true;
    int put = 0;
    for (int i = 0; i < n; i++) {
        if (!parts[i].assigned || parts[i].next < 0) continue;
        char key[1024];
        v.len = 0;
        tl_put_u8(&v, KSTATE_VERSION);
        tl_put_str(&v, R->instance);
        tl_put_varint(&v, tl_zigzag(parts[i].next));
        if (!kstate_key(key, sizeof key, s, parts[i].topic, parts[i].partition) ||
            partition_save(s, parts[i].topic, parts[i].partition, &v) ||
            tl_kstore_put(s->store, key, v.data, v.len)) {
            ok = false;
            continue;
        }
        put++;
    }
    tl_buf_free(&v);
    if (put && tl_kstore_flush(s->store, 30000)) ok = false;
    if (ok) s->published += (uint64_t)put;
    else {
        s->publish_failures++;
        logm(R, LOG_WARN, "kafka: partition states not published to %s; offsets stay uncommitted",
             s->cfg.state_topic);
    }
    return ok;
}

/* The group's quantiles: every partition's last published sketches merged
 * (in key order, so every instance that read the same states writes the
 * same points, at the newest record time they hold), tagged scope=global.
 * A stopped instance's partitions count with their last state until their
 * next owner publishes a newer one. */
static void kafka_global(struct runner *R, struct source *s)
{
    if (!s->store) return;
    tl_kstore_sync(s->store, 5000);
    struct tl_agg_opts ao = R->out.ao;
    ao.window_ns = 0;
    struct tl_agg *sum = tl_agg_new(&ao, tl_output_on_global, &R->out);
    struct tl_agg *one = tl_agg_new(&ao, NULL, NULL);
    char prefix[512];
    int pl = snprintf(prefix, sizeof prefix, "%s/", s->cfg.group);
    size_t merged = 0;
    for (size_t i = 0; sum && one && i < tl_kstore_count(s->store); i++) {
        const uint8_t *v, *st, *p, *end;
        size_t len, stlen;
        const char *key = tl_kstore_entry(s->store, i, &v, &len);
        char owner[256];
        int64_t next;
        if (strncmp(key, prefix, (size_t)pl) ||
            !kstate_parse(v, len, owner, sizeof owner, &next, &st, &stlen))
            continue;
        /* skip the streams to the sketches */
        p = st;
        end = st + stlen;
        uint64_t nstreams, alen;
        bool ok = tl_get_varint(&p, end, &nstreams);
        for (uint64_t j = 0; ok && j < nstreams; j++) {
            const char *x;
            size_t xl;
            uint8_t u;
            uint64_t sl;
            ok = tl_get_str(&p, end, 1 << 16, &x, &xl) && tl_get_str(&p, end, 63, &x, &xl) &&
                 tl_get_u8(&p, end, &u) && tl_get_varint(&p, end, &sl) && sl <= (uint64_t)(end - p);
            if (ok) p += sl;
        }
        if (!ok || p == end || !tl_get_varint(&p, end, &alen) || alen > (uint64_t)(end - p) || !alen)
            continue;
        if (tl_agg_restore(one, p, alen) || tl_agg_merge(sum, one)) {
            logm(R, LOG_WARN, "kafka: state %s: sketches unreadable (another aggregation "
                 "setting?); left out of the global quantiles", key);
            continue;
        }
        merged++;
    }
    if (sum && merged) tl_agg_flush(sum);
    tl_agg_free(sum);
    tl_agg_free(one);
    tl_output_pass(&R->out, true);
}

static bool kafka_restore(struct source *s, const uint8_t *p, const uint8_t *end)
{
    uint64_t n;
    if (!tl_get_varint(&p, end, &n) || n > 100000) return false;
    s->pending = calloc(n ? n : 1, sizeof *s->pending);
    if (!s->pending) return false;
    for (uint64_t i = 0; i < n; i++) {
        const char *t;
        size_t tlen;
        uint64_t part, next, len;
        if (!tl_get_str(&p, end, 4096, &t, &tlen) || !tl_get_varint(&p, end, &part) ||
            !tl_get_varint(&p, end, &next) || !tl_get_varint(&p, end, &len) ||
            len > (uint64_t)(end - p))
            return false;
        struct kpending *kp = &s->pending[s->npending++];
        kp->topic = strndup(t, tlen);
        kp->partition = (int32_t)tl_unzigzag(part);
        kp->next = tl_unzigzag(next);
        kp->states = malloc(len ? len : 1);
        if (!kp->topic || !kp->states) return false;
        memcpy(kp->states, p, len);
        kp->len = len;
        p += len;
    }
    return p == end;
}

/* Expands the configured sources (globs) into R->src. */
static enum tl_err sources_expand(struct runner *R, const struct run_config *c)
{
    for (int i = 0; i < c->nsrc; i++) {
        const struct src_settings *sc = &c->src[i];
        if (sc->kind == SRC_KAFKA) {
            if (R->nsrc == (int)(sizeof R->src / sizeof *R->src)) return TL_ERR_LIMIT;
            char name[1024];
            snprintf(name, sizeof name, "kafka:%s", sc->topics);
            if (!(R->src[R->nsrc++] = source_new(R, sc, name))) return TL_ERR_NOMEM;
            continue;
        }
        if (sc->kind == SRC_STDIN) {
            if (R->nsrc == (int)(sizeof R->src / sizeof *R->src)) return TL_ERR_LIMIT;
            if (!(R->src[R->nsrc++] = source_new(R, sc, NULL))) return TL_ERR_NOMEM;
            fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
            continue;
        }
        glob_t g;
        int gr = glob(sc->path, GLOB_NOSORT | GLOB_BRACE, NULL, &g);
        bool wild = strpbrk(sc->path, "*?[{") != NULL;
        size_t n = gr == 0 ? g.gl_pathc : 0;
        if (!n && wild) logm(R, LOG_WARN, "%s: matches no file yet (looked again on SIGHUP)", sc->path);
        for (size_t k = 0; k < (n ? n : wild ? 0 : 1); k++) {
            const char *p = n ? g.gl_pathv[k] : sc->path;
            char *canon = canonical_path(p);
            bool dup = false; /* one input, however many ways it is named */
            for (int j = 0; j < R->nsrc && canon; j++)
                dup |= R->src[j]->canon && !strcmp(R->src[j]->canon, canon);
            free(canon);
            if (dup) continue;
            if (R->nsrc == (int)(sizeof R->src / sizeof *R->src)) {
                logm(R, LOG_ERROR, "%s: matches %zu files; a run follows at most %d sources in all "
                     "(split the glob over several runs)", sc->path, n, RUN_MAX_OPEN_SOURCES);
                if (gr == 0) globfree(&g);
                return TL_ERR_LIMIT;
            }
            if (!(R->src[R->nsrc++] = source_new(R, sc, p))) {
                if (gr == 0) globfree(&g);
                return TL_ERR_NOMEM;
            }
        }
        if (gr == 0) globfree(&g);
    }
    return TL_OK;
}

/* ---------------------------------------------------------------- checkpoints
 *
 * Sections: "agg" (the aggregator), and per source "s:<hash of path>":
 *   file: u8 version | 'F' | u8 flags (1 done, 2 finished) | str parser name
 *         ("" none) | dev | ino | offset | tail hash | u8 mid_line
 *         | head hash | head length | size (version 2 on) | varint len | parser state
 *   dir:  u8 version | 'D' | lines | records | rejected | the files read */


static enum tl_err source_save(struct source *s, struct tl_buf *b)
{
    if (s->cfg.kind == SRC_KAFKA) return kafka_save(s, b);
    tl_put_u8(b, SRC_CKPT_VERSION);
    tl_put_u8(b, s->dw ? 'D' : 'F');
    if (s->dw) {
        tl_put_varint(b, s->dir_stats.lines);
        tl_put_varint(b, s->dir_stats.records);
        tl_put_varint(b, s->dir_stats.rejected);
        return tl_dirwatch_save(s->dw, b);
    }
    tl_put_u8(b, (uint8_t)(s->done | s->finished << 1));
    tl_put_str(b, s->inst.p ? s->inst.p->name : "");
    struct tl_follow_pos pos = {0};
    if (s->fl) pos = tl_follow_position(s->fl);
    else if (s->has_reopen_pos) pos = s->reopen_pos; /* not reopened yet: where it will resume */
    tl_put_varint(b, pos.dev);
    tl_put_varint(b, pos.ino);
    tl_put_varint(b, pos.offset);
    tl_put_varint(b, pos.tail_hash);
    tl_put_u8(b, pos.mid_line);
    tl_put_varint(b, pos.head_hash);
    tl_put_varint(b, pos.head_len);
    tl_put_varint(b, pos.size);
    struct tl_buf st = {0};
    if (s->inst.p) {
        if (!s->inst.p->save) return TL_ERR_USAGE;
        enum tl_err rc = s->inst.p->save(s->inst.state, &st);
        if (rc) {
            tl_buf_free(&st);
            return rc;
        }
    }
    tl_put_varint(b, st.len);
    tl_buf_append(b, st.data, st.len);
    tl_buf_free(&st);
    return b->oom ? TL_ERR_NOMEM : TL_OK;
}

/* True when everything produced so far is acknowledged and, with a
 * checkpoint_dir, saved with the state that produced it: only then may
 * Kafka offsets be committed. */
static bool checkpoint(struct runner *R, const char *why)
{
    if (!tl_output_sync(&R->out)) {
        R->checkpoints_deferred++;
        logm(R, LOG_WARN, "checkpoint deferred: the output is not acknowledged yet");
        return false;
    }
    if (!R->ckpt_dir) {
        bool ok = true;
        for (int i = 0; i < R->nsrc; i++) ok &= kafka_publish(R, R->src[i]);
        return ok;
    }
    struct tl_buf agg = {0};
    struct tl_buf *srcs = calloc((size_t)R->nsrc + 1, sizeof *srcs);
    struct tl_ckpt_section *sec = calloc((size_t)R->nsrc + 1, sizeof *sec);
    size_t n = 0;
    enum tl_err rc = srcs && sec ? tl_agg_serialize(R->out.agg, &agg) : TL_ERR_NOMEM;
    sec[n++] = (struct tl_ckpt_section){"agg", (const uint8_t *)agg.data, agg.len};
    int ns = 0;
    for (int i = 0; !rc && i < R->nsrc; i++) {
        struct source *s = R->src[i];
        if (!s->path) continue; /* stdin cannot be resumed */
        srcs[ns] = (struct tl_buf){0};
        rc = source_save(s, &srcs[ns]);
        sec[n++] = (struct tl_ckpt_section){s->key, (const uint8_t *)srcs[ns].data, srcs[ns].len};
        ns++;
    }
    char err[512] = "";
    if (!rc) rc = tl_ckpt_save(R->ckpt_path, sec, n, err, sizeof err);
    if (rc) {
        logm(R, LOG_ERROR, "checkpoint failed: %s", err[0] ? err : tl_strerror(rc));
    } else {
        R->checkpoints++;
        logm(R, LOG_DEBUG, "checkpoint (%s): %zu sections", why, n);
    }
    tl_buf_free(&agg);
    for (int i = 0; i < ns; i++) tl_buf_free(&srcs[i]);
    free(srcs);
    free(sec);
    bool ok = rc == TL_OK;
    for (int i = 0; ok && i < R->nsrc; i++) ok &= kafka_publish(R, R->src[i]);
    return ok;
}

/* After a checkpoint: what it covers may be committed. */
static void kafka_commit_all(struct runner *R)
{
    for (int i = 0; i < R->nsrc; i++)
        if (R->src[i]->kafka) tl_kafka_commit(R->src[i]->kafka);
}

/* Restores what a checkpoint holds and opens every source. */
static enum tl_err restore_and_open(struct runner *R)
{
    struct tl_ckpt ck = {0};
    char err[512];
    bool have = false;
    if (R->ckpt_dir) {
        enum tl_err rc = tl_ckpt_load(R->ckpt_path, &ck, err, sizeof err);
        if (rc == TL_OK) {
            have = true;
        } else if (rc != TL_ERR_OPEN) {
            logm(R, LOG_ERROR, "%s (move it away to start over)", err);
            return rc;
        }
    }
    if (have) {
        const struct tl_ckpt_section *a = tl_ckpt_find(&ck, "agg");
        enum tl_err arc = a ? tl_agg_restore(R->out.agg, a->data, a->len) : TL_OK;
        if (arc == TL_ERR_USAGE) {
            /* what a reload promised for these settings: they apply now */
            logm(R, LOG_WARN,
                 "%s: the aggregator state was made with other aggregate settings (by, window, alpha); "
                 "the cumulative quantiles start over from this start with the new ones (the "
                 "sources go on from the checkpoint: nothing is read twice)",
                 R->ckpt_path);
        } else if (arc) {
            logm(R, LOG_ERROR, "%s: the aggregator state is damaged; move it away to start over",
                 R->ckpt_path);
            tl_ckpt_free(&ck);
            return TL_ERR_CORRUPT;
        }
    }
    size_t matched = 0;
    for (int i = 0; i < R->nsrc; i++) {
        struct source *s = R->src[i];
        const struct tl_ckpt_section *sec = have ? tl_ckpt_find(&ck, s->key) : NULL;
        if (have && !sec && s->legacy_key[0]) sec = tl_ckpt_find(&ck, s->legacy_key); /* older keys */
        matched += sec != NULL;
        if (have && !sec && s->path)
            logm(R, LOG_WARN, "%s is not in the checkpoint: read from its `from` position as a new "
                              "input (its tasks add to the restored counts)", s->path);
        if (!sec) {
            if (source_open(R, s, NULL)) goto fail;
            continue;
        }
        const uint8_t *p = sec->data, *end = sec->data + sec->len;
        uint8_t ver, kind, flags, mid;
        if (!tl_get_u8(&p, end, &ver) || ver < 1 || ver > SRC_CKPT_VERSION || !tl_get_u8(&p, end, &kind) ||
            kind != (s->cfg.kind == SRC_DIR ? 'D' : s->cfg.kind == SRC_KAFKA ? 'K' : 'F'))
            goto corrupt;
        if (kind == 'K') {
            if (!kafka_restore(s, p, end)) goto corrupt;
            if (source_open(R, s, NULL)) goto fail;
            continue;
        }
        if (kind == 'D') {
            if (source_open(R, s, NULL)) goto fail;
            if (!tl_get_varint(&p, end, &s->dir_stats.lines) ||
                !tl_get_varint(&p, end, &s->dir_stats.records) ||
                !tl_get_varint(&p, end, &s->dir_stats.rejected) ||
                tl_dirwatch_restore(s->dw, p, (size_t)(end - p)))
                goto corrupt;
            continue;
        }
        const char *pname;
        size_t plen;
        uint64_t slen;
        struct tl_follow_pos pos = {0};
        char name[64];
        if (!tl_get_u8(&p, end, &flags) ||
            !tl_get_str(&p, end, 63, &pname, &plen) || !tl_get_varint(&p, end, &pos.dev) ||
            !tl_get_varint(&p, end, &pos.ino) || !tl_get_varint(&p, end, &pos.offset) ||
            !tl_get_varint(&p, end, &pos.tail_hash) || !tl_get_u8(&p, end, &mid))
            goto corrupt;
        uint64_t head_len = 0; /* version 1 had no content identity: found by inode only */
        if (ver >= 2 && (!tl_get_varint(&p, end, &pos.head_hash) || !tl_get_varint(&p, end, &head_len) ||
                         head_len > 4096 || !tl_get_varint(&p, end, &pos.size)))
            goto corrupt;
        if (!tl_get_varint(&p, end, &slen) || slen != (uint64_t)(end - p)) goto corrupt;
        pos.head_len = (uint32_t)head_len;
        pos.mid_line = mid;
        memcpy(name, pname, plen);
        name[plen] = '\0';
        if (plen) {
            if (!tl_parser_find(name) || source_parser(R, s, NULL, 0, name)) goto corrupt;
            if (!s->inst.p->restore || s->inst.p->restore(s->inst.state, p, (size_t)slen))
                goto corrupt;
        }
        s->finished = flags & 2;
        if (source_open(R, s, &pos)) goto fail;
        /* a file read to its end before: done, unless it is another file now */
        if ((flags & 1) && s->fl && tl_follow_stats(s->fl).resume == TL_RESUME_SAME) s->done = true;
    }
    if (have) {
        size_t saved = 0;
        for (size_t i = 0; i < ck.nsections; i++)
            saved += ck.name_lens[i] == 18 && !memcmp(ck.sections[i].name, "s:", 2);
        if (saved > matched)
            logm(R, LOG_WARN, "%s holds the positions of %zu inputs that are not configured any "
                              "more; their tasks stay counted, their positions are dropped",
                 R->ckpt_path, saved - matched);
        logm(R, LOG_INFO, "restored from %s", R->ckpt_path);
    }
    tl_ckpt_free(&ck);
    return TL_OK;
corrupt:
    logm(R, LOG_ERROR, "%s: a source's state is damaged (move the file away to start over)",
         R->ckpt_path);
fail:
    tl_ckpt_free(&ck);
    return TL_ERR_CORRUPT;
}

/* ---------------------------------------------------------------- sinks */

static enum tl_err sinks_open(struct runner *R)
{
    for (int i = 0; i < R->cfg.nsink; i++) {
        const struct sink_settings *k = &R->cfg.sink[i];
        char err[512];
        if (k->kind == SINK_FILE) {
            FILE *f = strcmp(k->path, "-") ? fopen(k->path, "a") : stdout;
            if (!f) {
                logm(R, LOG_ERROR, "%s: %s", k->path, strerror(errno));
                return TL_ERR_OPEN;
            }
            tl_output_add_file(&R->out, f, k->path);
            continue;
        }
        struct tl_influx_sink_cfg sc;
        run_config_influx(k, (long)R->cfg.run.flush_interval, &sc);
        sc.quiet = R->quiet;
        struct tl_influx_sink *sink;
        if (tl_influx_sink_new(&sc, &sink, err, sizeof err)) {
            logm(R, LOG_ERROR, "sink %d: %s", i, err);
            return TL_ERR_USAGE;
        }
        tl_output_add_sink(&R->out, sink, k->spool_dir);
    }
    return TL_OK;
}

/* Everything the sinks hold goes out (sent, or spooled and fsync'ed) before
 * they may close: false when a sink keeps a batch it can neither send nor
 * spool (its spool full or its disk refusing while InfluxDB is away). */
static bool sinks_hand_over(struct runner *R)
{
    tl_output_pass(&R->out, true);
    bool ok = true;
    for (int i = 0; i < R->out.ndests; i++) {
        struct tl_output_dest *d = &R->out.dests[i];
        if (d->sink && (tl_influx_sink_flush(d->sink) || tl_influx_sink_sync(d->sink))) ok = false;
        if (!d->sink && d->out && fflush(d->out)) ok = false;
    }
    return ok;
}

static void sinks_close(struct runner *R)
{
    for (int i = 0; i < R->out.ndests; i++) {
        struct tl_output_dest *d = &R->out.dests[i];
        if (d->sink) tl_influx_sink_free(d->sink);
        else if (d->out && d->out != stdout) fclose(d->out);
    }
    R->out.ndests = 0;
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

static enum tl_err output_open(struct runner *R)
{
    struct tl_agg_opts ao;
    tl_agg_opts_default(&ao);
    snprintf(R->by_copy, sizeof R->by_copy, "%s", R->cfg.agg.by);
    ao.nby = tl_parse_key_list(R->by_copy, ao.by, TL_AGG_MAX_KEYS);
    if (!ao.nby) {
        logm(R, LOG_ERROR, "aggregate.by: '%s' is not a list of tag names", R->cfg.agg.by);
        return TL_ERR_USAGE;
    }
    ao.sketch.alpha = R->cfg.agg.alpha;
    ao.sketch.exact_limit = (uint32_t)R->cfg.agg.exact_limit;
    ao.max_keys = (uint32_t)R->cfg.agg.max_keys;
    if (tl_output_init(&R->out, &ao, (long)R->cfg.agg.window)) {
        logm(R, LOG_ERROR, "bad aggregation settings");
        return TL_ERR_USAGE;
    }
    return TL_OK;
}

static enum tl_err lock_checkpoint_dir(struct runner *R)
{
    const char *dir = R->cfg.run.checkpoint_dir;
    if (!dir) return TL_OK;
    if (!(R->ckpt_dir = strdup(dir))) return TL_ERR_NOMEM;
    if (mkdir(dir, 0700) && errno != EEXIST) {
        logm(R, LOG_ERROR, "checkpoint_dir %s: %s", dir, strerror(errno));
        return TL_ERR_OPEN;
    }
    char lock[4200];
    snprintf(R->ckpt_path, sizeof R->ckpt_path, "%s/%s", dir, CKPT_NAME);
    snprintf(lock, sizeof lock, "%s/lock", dir);
    R->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (R->lock_fd < 0 || flock(R->lock_fd, LOCK_EX | LOCK_NB)) {
        logm(R, LOG_ERROR, "checkpoint_dir %s: %s", dir,
             R->lock_fd < 0 ? strerror(errno) : "in use by another tasklens run");
        return TL_ERR_OPEN;
    }
    return TL_OK;
}

/* Lines, records and rejects of a Kafka source's streams of one partition
 * (partition < 0: all). */
static void kafka_stats(const struct source *s, const char *topic, int32_t partition,
                        struct tl_parse_stats *out)
{
    memset(out, 0, sizeof *out);
    for (size_t j = 0; j < s->nstreams; j++) {
        const struct kstream *ks = s->streams[j];
        if (!ks || (partition >= 0 && (ks->partition != partition || strcmp(ks->topic, topic))))
            continue;
        const struct tl_parse_stats *ps = ks->inst.p->stats(ks->inst.state);
        out->lines += ps->lines;
        out->records += ps->records;
        out->rejected += ps->rejected;
        for (int r = 0; r < TL_REJ_COUNT; r++) out->rejected_by[r] += ps->rejected_by[r];
    }
}

/* One `tasklens` point per assigned partition: its lag (high watermark -
 * next offset) and what its streams parsed. */
static void kafka_self_metrics(struct runner *R, struct source *s)
{
    const struct tl_kafka_partition *parts;
    int n = s->kafka ? tl_kafka_partitions(s->kafka, &parts) : 0;
    for (int i = 0; i < n; i++) {
        if (!parts[i].assigned) continue;
        struct tl_parse_stats ps;
        kafka_stats(s, parts[i].topic, parts[i].partition, &ps);
        char path[1024];
        snprintf(path, sizeof path, "kafka:%s/%d", parts[i].topic, (int)parts[i].partition);
        struct tl_summary_input in = {.path = path, .format = s->cfg.parser, .lines = ps.lines,
                                      .records = ps.records, .rejected = ps.rejected};
        memcpy(in.rejected_by, ps.rejected_by, sizeof in.rejected_by);
        int64_t lag = parts[i].high >= 0 && parts[i].next >= 0 && parts[i].high > parts[i].next
                          ? parts[i].high - parts[i].next
                          : 0;
        tl_output_self(&R->out, R->instance, &in, (uint64_t)lag);
    }
}

static void self_metrics(struct runner *R)
{
    for (int i = 0; i < R->nsrc; i++) {
        struct source *s = R->src[i];
        if (s->cfg.kind == SRC_KAFKA) {
            kafka_self_metrics(R, s);
            continue;
        }
        if (!s->inst.p && !s->dir_format) continue;
        const struct tl_parse_stats *ps = s->dw ? &s->dir_stats : s->inst.p->stats(s->inst.state);
        struct tl_summary_input in = {.path = s->path ? s->path : "-",
                                      .format = s->dw ? s->dir_format : s->inst.p->name,
                                      .lines = ps->lines, .records = ps->records,
                                      .rejected = ps->rejected, .bytes = s->bytes,
                                      .open_errors = s->fl ? tl_follow_stats(s->fl).reopen_errors : 0};
        if (s->fl) {
            struct tl_follow_stats fst = tl_follow_stats(s->fl);
            in.gaps = fst.gaps;
            in.gap_bytes = fst.gap_bytes;
        }
        memcpy(in.rejected_by, ps->rejected_by, sizeof in.rejected_by);
        tl_output_self(&R->out, R->instance, &in,
                       s->fl ? tl_follow_stats(s->fl).lag : s->dw ? tl_dirwatch_pending(s->dw) : 0);
    }
}

static void status_line(struct runner *R)
{
    uint64_t lines = 0, records = 0, rejected = 0, lag = 0;
    for (int i = 0; i < R->nsrc; i++) {
        struct source *s = R->src[i];
        if (s->fl) lag += tl_follow_stats(s->fl).lag;
        if (s->cfg.kind == SRC_KAFKA) {
            struct tl_parse_stats ps;
            kafka_stats(s, NULL, -1, &ps);
            lines += ps.lines;
            records += ps.records;
            rejected += ps.rejected;
            continue;
        }
        if (!s->inst.p && !s->dw) continue;
        const struct tl_parse_stats *ps = s->dw ? &s->dir_stats : s->inst.p->stats(s->inst.state);
        lines += ps->lines;
        records += ps->records;
        rejected += ps->rejected;
    }
    struct tl_influx_sink_stats ss = tl_output_sink_stats(&R->out);
    fprintf(stderr,
            "tasklens: %llu lines, %llu records, %llu rejected, lag %llu bytes, %llu points "
            "acked, spool %llu bytes\n",
            (unsigned long long)lines, (unsigned long long)records, (unsigned long long)rejected,
            (unsigned long long)lag, (unsigned long long)ss.points_acked,
            (unsigned long long)ss.spool.bytes);
}

/* SIGHUP: reopen every file; with a configuration file, reload it. */
static void reload(struct runner *R)
{
    for (int i = 0; i < R->nsrc; i++) {
        struct source *s = R->src[i];
        if (!s->fl) continue;
        struct tl_follow_pos pos = tl_follow_position(s->fl);
        tl_follow_close(s->fl);
        s->fl = NULL;
        if (source_open(R, s, &pos)) s->done = true;
    }
    if (!R->config_path) {
        logm(R, LOG_INFO, "SIGHUP: files reopened");
        return;
    }
    struct run_config nc;
    char err[1024];
    if (run_config_load(&nc, R->config_path, err, sizeof err)) {
        logm(R, LOG_ERROR, "SIGHUP: %s; keeping the running configuration", err);
        run_config_free(&nc);
        return;
    }
    if (strcmp(nc.agg.by, R->cfg.agg.by) || nc.agg.window != R->cfg.agg.window ||
        nc.agg.alpha != R->cfg.agg.alpha)
        logm(R, LOG_WARN, "SIGHUP: aggregate settings (by, window, alpha) apply at the next start, "
                          "which starts the cumulative quantiles over with them; the rest applies now");
    /* sinks: the old ones hand over all they hold (sent, or in the fsync'ed
     * spool) and close; the new ones open; if either step fails, the running
     * configuration stays whole */
    R->out.no_wait = true; /* a full spool must not hold the reload */
    checkpoint(R, "reload");
    bool handed = sinks_hand_over(R);
    R->out.no_wait = false;
    if (!handed) {
        logm(R, LOG_ERROR, "SIGHUP: a sink still holds points it can neither send nor spool; keeping "
                           "the running configuration (send SIGHUP again when it has drained)");
        run_config_free(&nc);
        return;
    }
    sinks_close(R);
    struct run_config old_cfg = R->cfg;
    R->cfg = nc;
    if (sinks_open(R)) {
        sinks_close(R);
        R->cfg = old_cfg;
        run_config_free(&nc);
        if (sinks_open(R))
            logm(R, LOG_ERROR, "SIGHUP: a new sink failed to open, and so did a running one; "
                               "reading pauses until a reload succeeds");
        else
            logm(R, LOG_ERROR, "SIGHUP: a new sink failed to open; keeping the running configuration");
        return;
    }
    /* sources: keep those still configured (with their state), add new ones;
     * the checkpoint directory stays (its lock is held) */
    struct tl_cfg_doc old_doc = old_cfg.doc;
    struct source *prev[RUN_MAX_OPEN_SOURCES];
    int nprev = R->nsrc;
    memcpy(prev, R->src, sizeof(struct source *) * (size_t)nprev);
    R->nsrc = 0;
    sources_expand(R, &R->cfg);
    for (int i = 0; i < R->nsrc; i++) {
        struct source *s = R->src[i];
        struct source *old = NULL;
        for (int j = 0; j < nprev && !old; j++)
            if (prev[j] && !strcmp(prev[j]->key, s->key)) old = prev[j];
        if (old) {
            /* same path: the running state, new settings */
            old->cfg = s->cfg;
            source_free(s);
            R->src[i] = old;
            for (int j = 0; j < nprev; j++)
                if (prev[j] == old) prev[j] = NULL;
        } else if (source_open(R, s, NULL)) {
            s->done = true;
        }
    }
    for (int j = 0; j < nprev; j++)
        if (prev[j]) {
            logm(R, LOG_INFO, "SIGHUP: %s is no longer a source", prev[j]->path ? prev[j]->path : "stdin");
            source_free(prev[j]);
        }
    /* strings of the old file are no longer referenced: the sources copied
     * their settings from the new one */
    struct tl_cfg_doc keep = old_doc;
    tl_cfg_free(&keep);
    logm(R, LOG_INFO, "SIGHUP: configuration reloaded (%d sources, %d sinks)", R->nsrc,
         R->out.ndests);
}

/* ---------------------------------------------------------------- main loop */

static int run_loop(struct runner *R)
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    const struct run_settings *rs = &R->cfg.run;
    bool tty = isatty(2) && !R->quiet;
    int64_t now = tl_mono_ms();
    int64_t last_flush = now, last_cum = now, last_status = now, last_ckpt = now;
    bool stop = false, input_over = false, have_kafka = false;
    for (int i = 0; i < R->nsrc; i++) have_kafka |= R->src[i]->kafka != NULL;
    /* at once: from now on the files' identities are known, so a rotation
     * while we are down finds the old file even if no interval passed */
    checkpoint(R, "start");
    while (!stop) {
        size_t read_now = 0;
        bool any_open = false;
        for (int i = 0; i < R->nsrc; i++) {
            read_now += source_step(R, R->src[i]);
            any_open |= !R->src[i]->done;
        }
        if (!any_open) {
            input_over = true; /* nothing follows: the input is complete */
            break;
        }
        now = tl_mono_ms();
        if (!read_now) {
            struct pollfd pf[RUN_MAX_OPEN_SOURCES + 2];
            int np = 0;
            bool polling = false;
            if (sfd >= 0) pf[np++] = (struct pollfd){sfd, POLLIN, 0};
            for (int i = 0; i < R->nsrc; i++) {
                struct source *s = R->src[i];
                if (s->done) continue;
                if (s->kafka) {
                    if (tl_kafka_fd(s->kafka) >= 0) pf[np++] = (struct pollfd){tl_kafka_fd(s->kafka), POLLIN, 0};
                    else polling = true;
                } else if (!s->path) pf[np++] = (struct pollfd){0, POLLIN, 0};
                else if (s->dw) {
                    if (tl_dirwatch_fd(s->dw) >= 0) pf[np++] = (struct pollfd){tl_dirwatch_fd(s->dw), POLLIN, 0};
                    polling = true; /* settling files are looked at again */
                } else if (s->fl && tl_follow_uses_inotify(s->fl)) pf[np++] = (struct pollfd){tl_follow_fd(s->fl), POLLIN, 0};
                else polling = true;
            }
            int64_t wait = rs->flush_interval - (now - last_flush);
            if (wait > 200) wait = 200;
            if (polling && wait > 100) wait = 100;
            if (wait < 5) wait = 5;
            if (poll(pf, (nfds_t)np, (int)wait) > 0)
                for (int i = 0; i < R->nsrc; i++) { /* consume the events */
                    if (R->src[i]->fl) tl_follow_wait(R->src[i]->fl, 0);
                    if (R->src[i]->dw) tl_dirwatch_events(R->src[i]->dw);
                }
            now = tl_mono_ms();
        }
        if (now - last_cum >= rs->cumulative_interval * 1000) {
            tl_output_cumulative(&R->out);
            for (int i = 0; i < R->nsrc; i++) kafka_global(R, R->src[i]);
            last_cum = now;
        }
        if (now - last_flush >= rs->flush_interval) {
            self_metrics(R);
            tl_output_pass(&R->out, true);
            last_flush = now;
        }
        if ((R->ckpt_dir || have_kafka) && now - last_ckpt >= rs->checkpoint_interval * 1000) {
            if (checkpoint(R, "interval")) kafka_commit_all(R);
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
    R->out.no_wait = true; /* from here on, waiting for room in a full spool ends */
    /* the end: a complete input closes its windows; a followed one keeps
     * them open (they go on after a restart, from the checkpoint) */
    if (input_over) tl_output_finish(&R->out);
    else tl_output_cumulative(&R->out);
    self_metrics(R);
    bool saved = checkpoint(R, "exit");
    if (saved)
        for (int i = 0; i < R->nsrc; i++) kafka_global(R, R->src[i]);
    /* Kafka: commit what the checkpoint covers, then leave the group (the
     * revoke that follows only commits) */
    R->closing = true;
    for (int i = 0; i < R->nsrc; i++)
        if (R->src[i]->kafka) {
            if (saved) tl_kafka_commit(R->src[i]->kafka);
            tl_kafka_close(R->src[i]->kafka);
            R->src[i]->kafka = NULL;
        }
    if (sfd >= 0) close(sfd);
    return TL_EXIT_OK;
}

int tl_cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"help-config", no_argument, NULL, 'H'},
        {"follow", required_argument, NULL, 'f'},
        {"from", required_argument, NULL, 'F'},
        {"lines-out", required_argument, NULL, 'o'},
        {"checkpoint-dir", required_argument, NULL, 'D'},
        {"checkpoint-interval", required_argument, NULL, 'K'},
        {"flush-interval", required_argument, NULL, 'I'},
        {"cumulative-interval", required_argument, NULL, 'C'},
        {"window", required_argument, NULL, 'w'},
        {"by", required_argument, NULL, 'b'},
        {"format-in", required_argument, NULL, 'i'},
        {"instance", required_argument, NULL, 'n'},
        {"stats", required_argument, NULL, 'S'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        TL_INFLUX_LONGOPTS,
        {0},
    };
    struct runner *R = calloc(1, sizeof *R);
    if (!R) return TL_EXIT_INPUT;
    R->lock_fd = -1;
    char err[1024];
    const char *stats_path = NULL, *from = NULL, *format = NULL;
    const char *follows[RUN_MAX_SOURCES];
    int nfollow = 0;
    struct tl_influx_sink_cfg sc; /* quick flags for one InfluxDB sink */
    tl_influx_sink_cfg_default(&sc);
    sc.spool.dir = NULL;
    const char *lines_out = NULL;
    struct run_settings flags_run = {0};
    bool set_ckdir = false, set_ckint = false, set_flush = false, set_cum = false;
    bool set_window = false, set_by = false, set_quiet = false;
    long long window = 0;
    const char *by = NULL;
    int status = TL_EXIT_USAGE;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': R->config_path = optarg; break;
        case 'H': run_config_help(stdout); free(R); return TL_EXIT_OK;
        case 'f':
            if (nfollow == RUN_MAX_SOURCES) goto usage;
            follows[nfollow++] = optarg;
            break;
        case 'F':
            if (strcmp(optarg, "end") && strcmp(optarg, "beginning")) {
                fprintf(stderr, "tasklens run: --from is beginning or end\n");
                goto out;
            }
            from = optarg;
            break;
        case 'o': lines_out = optarg; break;
        case 'D': flags_run.checkpoint_dir = optarg; set_ckdir = true; break;
        case 'K': flags_run.checkpoint_interval = atoll(optarg); set_ckint = true; break;
        case 'I': flags_run.flush_interval = atoll(optarg); set_flush = true; break;
        case 'C': flags_run.cumulative_interval = atoll(optarg); set_cum = true; break;
        case 'w': window = atoll(optarg); set_window = true; break;
        case 'b': by = optarg; set_by = true; break;
        case 'i':
            if (!tl_parser_find(optarg)) {
                fprintf(stderr, "tasklens run: unknown format '%s' (see `tasklens formats`)\n",
                        optarg);
                goto out;
            }
            format = optarg;
            break;
        case 'n': flags_run.instance = optarg; break;
        case 'S': stats_path = optarg; break;
        case 'q': set_quiet = true; break;
        case 'h': run_usage(stdout); free(R); return TL_EXIT_OK;
        default: {
            int r = tl_influx_option(c, optarg, &sc, "tasklens run");
            if (r == 0) goto usage;
            if (r < 0) goto out;
        }
        }
    }
    if (optind != argc) goto usage;
    if (R->config_path) {
        if (run_config_load(&R->cfg, R->config_path, err, sizeof err)) {
            fprintf(stderr, "tasklens run: %s\n", err);
            goto out;
        }
    } else {
        run_config_init(&R->cfg);
    }
    /* quick flags add to (or override) the file */
    for (int i = 0; i < nfollow; i++) {
        struct src_settings *s = run_config_add_source(&R->cfg, SRC_FILE);
        if (!s) goto usage;
        s->path = follows[i];
        if (from) s->from = from;
        if (format) s->parser = format;
    }
    if (lines_out) run_config_add_sink(&R->cfg, SINK_FILE)->path = lines_out;
    if (sc.http.db || sc.http.bucket || sc.http.org) {
        struct sink_settings *k = run_config_add_sink(&R->cfg, SINK_INFLUX);
        if (!k) goto usage;
        k->url = sc.http.url;
        k->db = sc.http.db;
        k->rp = sc.http.rp;
        k->user = sc.http.user;
        k->org = sc.http.org;
        k->bucket = sc.http.bucket;
        k->ca_file = sc.http.ca_file;
        k->insecure = sc.http.insecure;
        k->gzip = sc.http.gzip;
        k->timeout = sc.http.timeout_ms;
        k->create_db = sc.create_db;
        if (sc.spool.dir) k->spool_dir = sc.spool.dir;
        k->spool_max = sc.spool.max_bytes;
        k->spool_drop_oldest = sc.spool.drop_oldest;
    }
    if (set_ckdir) R->cfg.run.checkpoint_dir = flags_run.checkpoint_dir;
    if (set_ckint) R->cfg.run.checkpoint_interval = flags_run.checkpoint_interval;
    if (set_flush) R->cfg.run.flush_interval = flags_run.flush_interval;
    if (set_cum) R->cfg.run.cumulative_interval = flags_run.cumulative_interval;
    if (flags_run.instance) R->cfg.run.instance = flags_run.instance;
    if (set_quiet) R->cfg.run.quiet = true;
    if (set_window) R->cfg.agg.window = window;
    if (set_by) R->cfg.agg.by = by;
    if (run_config_validate(&R->cfg, err, sizeof err)) {
        fprintf(stderr, "tasklens run: %s\n", err);
        goto usage;
    }
    static const char *const levels[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(R->cfg.run.log_level, levels[i])) R->level = (enum log_level)i;
    R->quiet = R->cfg.run.quiet;
    gethostname(R->host, sizeof R->host - 1);
    snprintf(R->instance_buf, sizeof R->instance_buf, "%s",
             R->cfg.run.instance ? R->cfg.run.instance : R->host);
    R->instance = R->instance_buf;
    R->buf = malloc(CHUNK);
    status = TL_EXIT_INPUT;
    raise_open_files();
    if (!R->buf || lock_checkpoint_dir(R) || output_open(R)) goto out;
    if (sinks_open(R) || sources_expand(R, &R->cfg) || restore_and_open(R)) {
        tl_output_close(&R->out, "tasklens run", 0, NULL);
        goto out;
    }
    status = run_loop(R);
    /* batches left in the spool are safe (on disk, sent by the next start),
     * and so are points held in memory when a checkpoint precedes them (the
     * next start reads them again): only a loss makes the status 1 */
    int oc = tl_output_close(&R->out, "tasklens run", (long)R->cfg.run.drain_timeout, stats_path);
    if (((oc & TL_OUTPUT_FAILED) || ((oc & TL_OUTPUT_HELD) && !R->ckpt_dir)) && !status)
        status = TL_EXIT_INPUT;
    goto out;
usage:
    run_usage(stderr);
    status = TL_EXIT_USAGE;
out:
    for (int i = 0; i < R->nsrc; i++) source_free(R->src[i]);
    if (R->lock_fd >= 0) close(R->lock_fd);
    run_config_free(&R->cfg);
    free(R->ckpt_dir);
    free(R->buf);
    free(R);
    return status;
}
