/* The `kafka` source: records from Kafka topics, as one member of a
 * consumer group (ingest/kafka.c holds the librdkafka client).
 *
 * Each (topic, partition, key) is a stream with its own parser, so managers
 * interleaved in one topic never share an open-task table. A checkpoint
 * holds, per assigned partition, the next offset and its streams' parser
 * states; offsets are committed only once a checkpoint covers them. With a
 * `state_topic`, every checkpoint also publishes each partition's state
 * (its streams and its own sketches) to that compacted topic: a partition
 * that moves to another instance resumes from there, and every instance
 * writes the group's quantiles (scope=global) merged from all partitions'
 * sketches, each record counted once.
 *
 * Checkpoint section (after version and 'K'):
 *   varint partitions | per partition: str topic | zigzag partition |
 *   zigzag next | varint len | its state (partition_apply) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "core/intern.h"
#include "ingest/kafka.h"
#include "pipeline/source.h"

/* A Kafka source keeps one parser per stream: (topic, partition, key), so
 * managers interleaved in one topic never share an open-task table. */
struct kpart;

struct kstream {
    char *topic, *key;
    int32_t partition;
    struct kpart *kp; /* its partition's sketches (with a state topic) */
    struct kfeed {
        struct tl_source *src;
        struct kstream *ks;
        int64_t offset; /* of the message being fed */
    } fc;
    struct tl_drive drive; /* the parser, through the one door */
    struct tl_reject_budget budget;
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
    uint64_t fp; /* the last message read before the checkpoint (0: not saved) */
    uint8_t *states; /* the streams of the partition, as saved */
    size_t len;
    bool revoked; /* kept at a revoke (checkpointed too; a newer group commit outdates it) */
};

struct kafka_src {
    struct tl_kafka *kafka;
    struct tl_intern *stream_ids; /* "topic\x1fpartition\x1fkey" -> index */
    struct kstream **streams;     /* by id; NULL once revoked */
    size_t nstreams;
    struct kpending *pending;
    int npending;
    uint64_t rejected_streams;
    struct tl_kstore *store; /* state_topic */
    struct kpart **kparts;
    int nkparts, capkparts;
    uint64_t published, publish_failures, takeovers;
    char *hdr_names[MAX_HDR_TAGS]; /* header_tags */
    int nhdr;
    char hdr_val[MAX_HDR_TAGS][256]; /* of the message being fed */
    bool hdr_set[MAX_HDR_TAGS];
    /* partitions resumed from a checkpoint, whose first message must be
     * the last one read before it (the same topic, not one deleted and
     * created again under its name); or rewound, waiting for their first */
    struct kcheck {
        char *topic;
        int32_t partition;
        int64_t offset; /* the message expected (verify), the first one (rewind) */
        uint64_t fp;    /* verify: its fingerprint; 0: rewinding */
    } checks[64];
    int nchecks;
};

static void kstream_free(struct kstream *ks)
{
    if (!ks) return;
    tl_drive_free(&ks->drive);
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

static void kafka_free_all(struct tl_source *s)
{
    struct kafka_src *K = s->own;
    tl_kafka_close(K->kafka);
    K->kafka = NULL;
    tl_kstore_close(K->store);
    K->store = NULL;
    for (int i = 0; i < K->nkparts; i++) kpart_free(K->kparts[i]);
    free(K->kparts);
    K->kparts = NULL;
    K->nkparts = K->capkparts = 0;
    for (int i = 0; i < K->nhdr; i++) free(K->hdr_names[i]);
    K->nhdr = 0;
    for (size_t i = 0; i < K->nstreams; i++) kstream_free(K->streams[i]);
    free(K->streams);
    K->streams = NULL;
    K->nstreams = 0;
    tl_intern_free(K->stream_ids);
    K->stream_ids = NULL;
    for (int i = 0; i < K->npending; i++) {
        free(K->pending[i].topic);
        free(K->pending[i].states);
    }
    free(K->pending);
    K->pending = NULL;
    K->npending = 0;
}

static void kafka_on_record(void *ctx, const struct tl_record *r)
{
    struct kfeed *fc = ctx;
    struct tl_source *s = fc->src;
    struct kafka_src *K = s->own;
    const char *tag = s->cfg.key_tag;
    struct tl_record copy;
    if ((tag && fc->ks->key[0]) || K->nhdr) {
        copy = *r; /* the key as a tag (e.g. the manager's host), and headers */
        if (tag && fc->ks->key[0] && copy.n_tags < TL_MAX_EXTRA_TAGS)
            copy.tags[copy.n_tags++] = (struct tl_tag){tag, fc->ks->key};
        for (int i = 0; i < K->nhdr && copy.n_tags < TL_MAX_EXTRA_TAGS; i++)
            if (K->hdr_set[i]) copy.tags[copy.n_tags++] = (struct tl_tag){K->hdr_names[i], K->hdr_val[i]};
        r = &copy;
    }
    struct tl_output *out = tl_rt_output(s->rt);
    tl_output_record(out, r);
    if (fc->ks->kp) {
        enum tl_err rc = tl_agg_add(fc->ks->kp->agg, r);
        if (rc && !out->agg_rc) out->agg_rc = rc;
    }
}

/* Where a rejected unit is: its message (the line within a stream says
 * little; the offset finds it). */
static void kafka_where(void *ctx, uint64_t line, char *out, size_t cap)
{
    struct kfeed *fc = ctx;
    (void)line;
    snprintf(out, cap, "kafka:%s/%d@%lld%s%s", fc->ks->topic, (int)fc->ks->partition,
             (long long)fc->offset, fc->ks->key[0] ? " key " : "", fc->ks->key);
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
static struct kpart *kpart_get(struct tl_source *s, const char *topic,
                               int32_t partition)
{
    struct kafka_src *K = s->own;
    if (!K->store) return NULL;
    for (int i = 0; i < K->nkparts; i++)
        if (K->kparts[i]->partition == partition && !strcmp(K->kparts[i]->topic, topic))
            return K->kparts[i];
    if (K->nkparts == K->capkparts) {
        int cap = K->capkparts ? K->capkparts * 2 : 16;
        struct kpart **v = realloc(K->kparts, (size_t)cap * sizeof *v);
        if (!v) return NULL;
        K->kparts = v;
        K->capkparts = cap;
    }
    struct tl_agg_opts ao = tl_rt_output(s->rt)->ao;
    ao.window_ns = 0;
    struct kpart *kp = calloc(1, sizeof *kp);
    if (!kp || !(kp->topic = strdup(topic)) || !(kp->agg = tl_agg_new(&ao, NULL, NULL))) {
        kpart_free(kp);
        return NULL;
    }
    kp->partition = partition;
    K->kparts[K->nkparts++] = kp;
    return kp;
}

static void kpart_drop(struct tl_source *s, const char *topic, int32_t partition)
{
    struct kafka_src *K = s->own;
    for (size_t j = 0; j < K->nstreams; j++)
        if (K->streams[j] && K->streams[j]->partition == partition &&
            !strcmp(K->streams[j]->topic, topic))
            K->streams[j]->kp = NULL;
    for (int i = 0; i < K->nkparts; i++)
        if (K->kparts[i]->partition == partition && !strcmp(K->kparts[i]->topic, topic)) {
            kpart_free(K->kparts[i]);
            K->kparts[i] = K->kparts[--K->nkparts];
            return;
        }
}

/* The stream's parser state; created when new (its format named: a
 * checkpoint's; else the source's `parser`, else detected from its first
 * message by the door). NULL past max_streams. */
static struct kstream *stream_get(struct tl_source *s, const char *topic,
                                  int32_t partition, const char *key, size_t key_len)
{
    struct kafka_src *K = s->own;
    char k[1024];
    size_t n = stream_key(k, sizeof k, topic, partition, key, key_len);
    int32_t id = tl_intern_find(K->stream_ids, k, n);
    if (id >= 0 && (size_t)id < K->nstreams && K->streams[id]) return K->streams[id];
    if (id < 0) {
        if ((long long)tl_intern_count(K->stream_ids) >= s->cfg.max_streams) return NULL;
        id = tl_intern(K->stream_ids, k, n);
        if (id < 0) return NULL;
    }
    if ((size_t)id >= K->nstreams) {
        size_t cap = (size_t)id + 64;
        struct kstream **v = realloc(K->streams, cap * sizeof *v);
        if (!v) return NULL;
        for (size_t i = K->nstreams; i < cap; i++) v[i] = NULL;
        K->streams = v;
        K->nstreams = cap;
    }
    struct kstream *ks = calloc(1, sizeof *ks);
    if (!ks || !(ks->topic = strdup(topic)) || !(ks->key = strndup(key ? key : "", key_len))) {
        kstream_free(ks);
        return NULL;
    }
    ks->partition = partition;
    ks->fc = (struct kfeed){s, ks, -1};
    /* rejects said on stderr, located by kafka_where */
    ks->budget = (struct tl_reject_budget){.max = TL_RT_MAX_REPORTS, .quiet = tl_rt_quiet(s->rt)};
    struct tl_drive_cfg dc = {
        .parser = strcmp(s->cfg.parser, "auto") ? tl_parser_find(s->cfg.parser) : NULL,
        .configure = tl_source_parser_options, .configure_ctx = s, .record = kafka_on_record,
        .record_ctx = &ks->fc, .budget = &ks->budget, .where = kafka_where, .where_ctx = &ks->fc};
    if (tl_drive_init(&ks->drive, &dc, ks->topic)) {
        kstream_free(ks);
        return NULL;
    }
    ks->kp = kpart_get(s, topic, partition);
    K->streams[id] = ks;
    return ks;
}

/* One message into its stream's parser. Work Queue: lines (a missing last
 * newline added); LSST: one document; Chrome: one event (the stream is an
 * open array, as catapult's writer makes it) or a whole trace. */
/* The partition's streams and sketches dropped: its saved state was
 * damaged, or not of this topic. */
static void partition_forget(struct tl_source *s, const char *topic, int32_t partition)
{
    struct kafka_src *K = s->own;
    for (size_t j = 0; j < K->nstreams; j++) {
        struct kstream *ks = K->streams[j];
        if (ks && ks->partition == partition && !strcmp(ks->topic, topic)) {
            kstream_free(ks);
            K->streams[j] = NULL;
        }
    }
    kpart_drop(s, topic, partition);
    if (K->store) kpart_get(s, topic, partition);
}

/* A resumed partition's first message: the last one read before the
 * checkpoint (skipped: it was read), or another topic under the same name
 * (its state dropped, read from its beginning, said). true: m is not to be
 * fed. */
static bool resume_check(struct tl_source *s, const struct tl_kafka_msg *m)
{
    struct kafka_src *K = s->own;
    int i = 0;
    while (i < K->nchecks && !(K->checks[i].partition == m->partition && !strcmp(K->checks[i].topic, m->topic))) i++;
    if (i == K->nchecks) return false;
    struct kcheck *c = &K->checks[i];
    bool rewinding = !c->fp, skip = false;
    if (rewinding) {
        skip = m->offset != c->offset; /* fetched before the seek */
        if (skip) return true;
    } else if (m->offset == c->offset && tl_kafka_fingerprint(m) == c->fp) {
        skip = true; /* the same topic: read on after it */
    } else if (m->offset <= c->offset) {
        tl_rt_log(s->rt, TL_LOG_WARN, "kafka:%s/%d: not the topic the checkpoint was saved from (offset %lld "
                  "holds another message: deleted and created again?): its saved state dropped; read from its "
                  "beginning", m->topic, (int)m->partition, (long long)c->offset);
        partition_forget(s, m->topic, m->partition);
        int64_t low = m->offset == 0 ? 0 : tl_kafka_rewind(K->kafka, m->topic, m->partition);
        if (low >= 0 && low != m->offset) { /* wait for the first message */
            c->fp = 0;
            c->offset = low;
            return true;
        }
    } /* else: retention took it; the messages after it are read as they come */
    free(c->topic);
    K->checks[i] = K->checks[--K->nchecks];
    return skip;
}

static void kafka_message(void *ctx, const struct tl_kafka_msg *m)
{
    struct tl_source *s = ctx;
    struct kafka_src *K = s->own;
    s->bytes += m->len;
    if (K->nchecks && resume_check(s, m)) return;
    if (!m->value || !m->len) return;
    struct kstream *ks = stream_get(s, m->topic, m->partition, m->key, m->key_len);
    if (!ks) {
        if (K->rejected_streams++ < TL_RT_MAX_REPORTS)
            tl_rt_log(s->rt, TL_LOG_WARN, "kafka:%s/%d@%lld: no parser state for this key (max_streams %lld "
                 "reached); message skipped", m->topic, (int)m->partition, (long long)m->offset,
                 s->cfg.max_streams);
        return;
    }
    ks->fc.offset = m->offset;
    for (int i = 0; i < K->nhdr; i++) {
        const char *v;
        size_t n;
        K->hdr_set[i] = tl_kafka_msg_header(m, K->hdr_names[i], &v, &n) && n &&
                        n < sizeof K->hdr_val[i] && !memchr(v, '\0', n);
        if (K->hdr_set[i]) {
            memcpy(K->hdr_val[i], v, n);
            K->hdr_val[i][n] = '\0';
        }
    }
    if (tl_drive_message(&ks->drive, m->value, m->len) && ks->drive.error[0] &&
        K->rejected_streams++ < TL_RT_MAX_REPORTS)
        tl_rt_log(s->rt, TL_LOG_WARN, "kafka:%s/%d@%lld: %s", m->topic, (int)m->partition,
                  (long long)m->offset, ks->drive.error);
}

static void kafka_log(void *ctx, int level, const char *msg)
{
    enum tl_log_level lv = level <= 0 ? TL_LOG_ERROR : level == 1 ? TL_LOG_WARN
                           : level == 2 ? TL_LOG_INFO : TL_LOG_DEBUG;
    tl_rt_log(((struct tl_source *)ctx)->rt, lv, "%s", msg);
}

/* A partition's state (in checkpoints and in the state topic):
 *   varint n | n x (str key | str parser | u8 chrome_array | varint len | state)
 *   [varint len | its aggregator]   (with a state topic)
 * Restores its streams (and sketches); false when damaged. */
static bool partition_apply(struct tl_source *s, const char *topic,
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
        struct kstream *ks = stream_get(s, topic, partition, key, klen);
        if (ks) {
            ok = !tl_drive_restore(&ks->drive, name, p, slen);
            ks->drive.events_open = arr;
        }
        p += slen;
    }
    uint64_t alen;
    if (ok && p < end) {
        struct kpart *kp = kpart_get(s, topic, partition);
        ok = tl_get_varint(&p, end, &alen) && alen <= (uint64_t)(end - p) &&
             (!kp || !alen || !tl_agg_restore(kp->agg, p, alen));
        p += ok ? alen : 0;
    }
    return ok && p == end;
}

/* The state topic's record of a partition:
 *   u8 version | str instance | zigzag next | partition state (above) */
#define KSTATE_VERSION 1

static size_t kstate_key(char *out, size_t cap, const struct tl_source *s, const char *topic,
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
    struct tl_source *s = ctx;
    struct kafka_src *K = s->own;
    struct kpending *local = NULL;
    for (int i = 0; i < K->npending && !local; i++)
        if (K->pending[i].partition == partition && !strcmp(K->pending[i].topic, topic))
            local = &K->pending[i];
    if (local && committed > local->next) {
        /* we commit only what our checkpoint covers: a commit beyond it is
         * another member's, and our state is behind the partition */
        tl_rt_log(s->rt, TL_LOG_INFO, "kafka:%s/%d: saved state stops at %lld, the group committed %lld; "
             "reading on from the commit", topic, (int)partition, (long long)local->next,
             (long long)committed);
        free(local->topic);
        free(local->states);
        *local = K->pending[--K->npending];
        local = NULL;
    }
    const uint8_t *shared = NULL, *sstate = NULL;
    size_t slen = 0, sstlen = 0;
    int64_t snext = -1;
    char owner[256] = "";
    if (K->store) {
        char key[1024];
        if (tl_kstore_sync(K->store, 10000))
            tl_rt_log(s->rt, TL_LOG_WARN, "kafka:%s/%d: the state topic could not be read to its end; a "
                 "newer state may be missed", topic, (int)partition);
        if (kstate_key(key, sizeof key, s, topic, partition) &&
            (shared = tl_kstore_get(K->store, key, &slen)) &&
            !kstate_parse(shared, slen, owner, sizeof owner, &snext, &sstate, &sstlen)) {
            tl_rt_log(s->rt, TL_LOG_ERROR, "kafka:%s/%d: damaged state in the state topic; ignored", topic,
                 (int)partition);
            shared = NULL;
        }
    }
    kpart_drop(s, topic, partition); /* a fresh start for its sketches */
    if (K->store) kpart_get(s, topic, partition);
    int64_t next = -1;
    bool ok = true;
    const char *from = NULL;
    if (shared && (!local || snext > local->next)) {
        next = snext;
        ok = partition_apply(s, topic, partition, sstate, sstlen);
        from = "the state topic";
        if (ok && strcmp(owner, tl_rt_instance(s->rt))) {
            K->takeovers++;
            tl_rt_log(s->rt, TL_LOG_INFO, "kafka:%s/%d: taken over from %s at offset %lld", topic,
                 (int)partition, owner, (long long)next);
        }
    } else if (local) {
        next = local->next;
        ok = partition_apply(s, topic, partition, local->states, local->len);
        from = "the checkpoint";
        /* read the last message before the checkpoint again: is it the same? */
        char *t = ok && local->fp && next > 0 && K->nchecks < (int)(sizeof K->checks / sizeof *K->checks)
                      ? strdup(topic) : NULL;
        if (t) {
            K->checks[K->nchecks] = (struct kcheck){t, partition, next - 1, local->fp};
            K->nchecks++;
            next--;
        }
    }
    if (!ok) {
        tl_rt_log(s->rt, TL_LOG_ERROR, "kafka:%s/%d: damaged state in %s; reading from the committed offset",
             topic, (int)partition, from);
        next = -1;
        partition_forget(s, topic, partition);
    }
    if (local) {
        free(local->topic);
        free(local->states);
        *local = K->pending[--K->npending];
    }
    return next;
}

/* Before partitions go: everything they produced acknowledged and
 * checkpointed, their offsets committed; then their streams are dropped
 * (another instance reads on from the commit). */
static enum tl_err partition_save(struct tl_source *s, const char *topic, int32_t partition,
                                  struct tl_buf *b);

static void kafka_revoke(void *ctx, const struct tl_kafka_partition *const *parts, int n)
{
    struct tl_source *s = ctx;
    struct kafka_src *K = s->own;
    struct tl_runtime *rt = s->rt;
    /* closing: kafka_stop has committed what the exit checkpoint covers, or
     * nothing when it failed -- a commit here would skip what it lost */
    if (!tl_rt_closing(rt)) {
        tl_output_pass(tl_rt_output(rt), true);
        if (tl_rt_checkpoint(rt, "revoke")) tl_kafka_commit(K->kafka);
        else tl_rt_log(s->rt, TL_LOG_WARN, "kafka: partitions revoked before their output was acknowledged; "
                  "another owner reads them again from the last commit");
    }
    /* If the partitions come back to this process (a broker restart, a
     * rebalance that changes nothing for them), their open tasks must too:
     * keep their state until then, as a checkpoint would. */
    for (int i = 0; !tl_rt_closing(rt) && i < n; i++) {
        if (parts[i]->next < 0) continue;
        struct tl_buf st = {0};
        struct kpending *v = realloc(K->pending, (size_t)(K->npending + 1) * sizeof *v);
        if (v) K->pending = v;
        if (v && !partition_save(s, parts[i]->topic, parts[i]->partition, &st) && !st.oom) {
            for (int j = 0; j < K->npending; j++) /* an older one of the same partition goes */
                if (K->pending[j].partition == parts[i]->partition &&
                    !strcmp(K->pending[j].topic, parts[i]->topic)) {
                    free(K->pending[j].topic);
                    free(K->pending[j].states);
                    K->pending[j] = K->pending[--K->npending];
                    break;
                }
            char *t = strdup(parts[i]->topic);
            if (t) {
                K->pending[K->npending++] = (struct kpending){t, parts[i]->partition, parts[i]->next,
                                                              parts[i]->last_fp, (uint8_t *)st.data,
                                                              st.len, true};
                st.data = NULL;
            }
        }
        tl_buf_free(&st);
    }
    for (int i = 0; i < n; i++)
        for (size_t j = 0; j < K->nstreams; j++) {
            struct kstream *ks = K->streams[j];
            if (ks && ks->partition == parts[i]->partition && !strcmp(ks->topic, parts[i]->topic)) {
                kstream_free(ks);
                K->streams[j] = NULL;
            }
        }
    for (int i = 0; i < n; i++) kpart_drop(s, parts[i]->topic, parts[i]->partition);
}

static enum tl_err client_open(struct tl_source *s)
{
    struct kafka_src *K = s->own;
    struct tl_kafka_prop props[128];
    int np = 0;
    const struct tl_cfg_node *pr = s->cfg.properties;
    for (size_t i = 0; pr && i < pr->n && np < 128; i++)
        props[np++] = (struct tl_kafka_prop){pr->keys[i], pr->items[i]->scalar};
    struct tl_kafka_cfg kc = {s->cfg.brokers, s->cfg.topics, s->cfg.group, s->cfg.start, props, np};
    struct tl_kafka_hooks hooks = {s, kafka_revoke, kafka_assign, kafka_log};
    char err[1024];
    if (!K->stream_ids && !(K->stream_ids = tl_intern_new((size_t)64 << 20))) return TL_ERR_NOMEM;
    for (const char *h = s->cfg.header_tags; h && *h && K->nhdr < MAX_HDR_TAGS;) {
        size_t n = strcspn(h, ",");
        while (n && *h == ' ') h++, n--;
        size_t m = n;
        while (m && h[m - 1] == ' ') m--;
        if (m && !(K->hdr_names[K->nhdr++] = strndup(h, m))) return TL_ERR_NOMEM;
        h += n;
        if (*h == ',') h++;
    }
    if (s->cfg.state_topic && !K->store) {
        if (tl_kstore_open(&kc, s->cfg.state_topic, &hooks, &K->store, err, sizeof err)) {
            tl_rt_log(s->rt, TL_LOG_ERROR, "%s", err);
            return TL_ERR_OPEN;
        }
        if (tl_kstore_sync(K->store, 30000))
            tl_rt_log(s->rt, TL_LOG_WARN, "kafka: the state topic %s was not read to its end",
                 s->cfg.state_topic);
        tl_rt_log(s->rt, TL_LOG_INFO, "kafka: state topic %s: %zu partition states", s->cfg.state_topic,
             tl_kstore_count(K->store));
    }
    if (tl_kafka_open(&kc, &hooks, &K->kafka, err, sizeof err)) {
        tl_rt_log(s->rt, TL_LOG_ERROR, "%s", err);
        return TL_ERR_OPEN;
    }
    tl_rt_log(s->rt, TL_LOG_INFO, "kafka: %s, topics %s, group %s", s->cfg.brokers, s->cfg.topics, s->cfg.group);
    return TL_OK;
}

/* A partition's state (see partition_apply) into b. */
static enum tl_err partition_save(struct tl_source *s, const char *topic, int32_t partition,
                                  struct tl_buf *b)
{
    struct kafka_src *K = s->own;
    struct tl_buf body = {0}, one = {0};
    uint64_t count = 0;
    for (size_t j = 0; j < K->nstreams; j++) {
        struct kstream *ks = K->streams[j];
        if (!ks || ks->partition != partition || strcmp(ks->topic, topic)) continue;
        one.len = 0;
        const struct tl_parser *parser = tl_drive_parser(&ks->drive);
        if (tl_drive_save(&ks->drive, &one)) one.len = 0;
        tl_put_str(&body, ks->key);
        tl_put_str(&body, parser ? parser->name : "");
        tl_put_u8(&body, ks->drive.events_open);
        tl_put_varint(&body, one.len);
        tl_buf_append(&body, one.data, one.len);
        count++;
    }
    tl_put_varint(b, count);
    tl_buf_append(b, body.data, body.len);
    enum tl_err rc = TL_OK;
    for (int i = 0; i < K->nkparts; i++) {
        struct kpart *kp = K->kparts[i];
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

/* Where a partition's saved state stops: the offset after the last message
 * processed, and that message's fingerprint. A partition resumed a message
 * early to verify it (resume_check) has processed that message already, in
 * the state it resumed with: until the message comes back its position is
 * the one after it, never the consumer's (a checkpoint taken in that gap
 * must not make the next resume feed it twice). */
static void partition_position(const struct kafka_src *K, const struct tl_kafka_partition *p,
                               int64_t *next, uint64_t *fp)
{
    *next = p->next;
    *fp = p->last_fp;
    for (int i = 0; i < K->nchecks; i++)
        if (K->checks[i].fp && K->checks[i].partition == p->partition &&
            !strcmp(K->checks[i].topic, p->topic) && K->checks[i].offset + 1 > p->next) {
            *next = K->checks[i].offset + 1;
            *fp = K->checks[i].fp;
        }
}

/* The checkpoint section (see the top of the file). */
static enum tl_err kafka_save(struct tl_source *s, struct tl_buf *b)
{
    struct kafka_src *K = s->own;
    const struct tl_kafka_partition *parts;
    int n = K->kafka ? tl_kafka_partitions(K->kafka, &parts) : 0;
    int keep = 0;
    for (int i = 0; i < n; i++) keep += parts[i].assigned && parts[i].next >= 0;
    keep += K->npending;
    tl_put_varint(b, (uint64_t)keep);
    struct tl_buf st = {0};
    enum tl_err rc = TL_OK;
    for (int i = 0; !rc && i < n; i++) {
        if (!parts[i].assigned || parts[i].next < 0) continue;
        int64_t next;
        uint64_t fp;
        partition_position(K, &parts[i], &next, &fp);
        tl_put_str(b, parts[i].topic);
        tl_put_varint(b, tl_zigzag(parts[i].partition));
        tl_put_varint(b, tl_zigzag(next));
        st.len = 0;
        rc = partition_save(s, parts[i].topic, parts[i].partition, &st);
        tl_put_varint(b, st.len);
        tl_buf_append(b, st.data, st.len);
    }
    /* partitions restored or revoked but not assigned (again) yet keep
     * their saved state: a crash before they come back must not lose it;
     * if another member reads on meanwhile, its commit outdates it (see
     * kafka_assign) */
    for (int i = 0; i < K->npending; i++) {
        tl_put_str(b, K->pending[i].topic);
        tl_put_varint(b, tl_zigzag(K->pending[i].partition));
        tl_put_varint(b, tl_zigzag(K->pending[i].next));
        tl_put_varint(b, K->pending[i].len);
        tl_buf_append(b, K->pending[i].states, K->pending[i].len);
    }
    /* then, in the same order, the last message's fingerprint (a resume
     * reads that message again to know it is the same topic); older
     * checkpoints end before it */
    tl_put_u8(b, 'F');
    for (int i = 0; i < n; i++)
        if (parts[i].assigned && parts[i].next >= 0) {
            int64_t next;
            uint64_t fp;
            partition_position(K, &parts[i], &next, &fp);
            tl_put_varint(b, fp);
        }
    for (int i = 0; i < K->npending; i++) tl_put_varint(b, K->pending[i].fp);
    tl_buf_free(&st);
    return rc ? rc : b->oom ? TL_ERR_NOMEM : TL_OK;
}

/* Every assigned partition's state into the state topic, acknowledged by
 * the brokers -- before its offsets are committed, so the next owner never
 * starts from a commit its state has not reached. */
static bool kafka_publish(struct tl_source *s)
{
    struct kafka_src *K = s->own;
    if (!K->store || !K->kafka) return true;
    const struct tl_kafka_partition *parts;
    int n = tl_kafka_partitions(K->kafka, &parts);
    struct tl_buf v = {0};
    bool ok = true;
    int put = 0;
    for (int i = 0; i < n; i++) {
        if (!parts[i].assigned || parts[i].next < 0) continue;
        char key[1024];
        int64_t next;
        uint64_t fp;
        partition_position(K, &parts[i], &next, &fp);
        v.len = 0;
        tl_put_u8(&v, KSTATE_VERSION);
        tl_put_str(&v, tl_rt_instance(s->rt));
        tl_put_varint(&v, tl_zigzag(next));
        if (!kstate_key(key, sizeof key, s, parts[i].topic, parts[i].partition) ||
            partition_save(s, parts[i].topic, parts[i].partition, &v) ||
            tl_kstore_put(K->store, key, v.data, v.len)) {
            ok = false;
            continue;
        }
        put++;
    }
    tl_buf_free(&v);
    if (put && tl_kstore_flush(K->store, 30000)) ok = false;
    if (ok) K->published += (uint64_t)put;
    else {
        K->publish_failures++;
        tl_rt_log(s->rt, TL_LOG_WARN, "kafka: partition states not published to %s; offsets stay uncommitted",
             s->cfg.state_topic);
    }
    return ok;
}

/* The group's quantiles: every partition's last published sketches merged
 * (in key order, so every instance that read the same states writes the
 * same points, at the newest record time they hold), tagged scope=global.
 * A stopped instance's partitions count with their last state until their
 * next owner publishes a newer one. */
static void kafka_global(struct tl_source *s)
{
    struct kafka_src *K = s->own;
    if (!K->store) return;
    tl_kstore_sync(K->store, 5000);
    struct tl_output *out = tl_rt_output(s->rt);
    struct tl_agg_opts ao = out->ao;
    ao.window_ns = 0;
    struct tl_agg *sum = tl_agg_new(&ao, tl_output_on_global, out);
    struct tl_agg *one = tl_agg_new(&ao, NULL, NULL);
    char prefix[512];
    int pl = snprintf(prefix, sizeof prefix, "%s/", s->cfg.group);
    size_t merged = 0;
    for (size_t i = 0; sum && one && i < tl_kstore_count(K->store); i++) {
        const uint8_t *v, *st, *p, *end;
        size_t len, stlen;
        const char *key = tl_kstore_entry(K->store, i, &v, &len);
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
            tl_rt_log(s->rt, TL_LOG_WARN, "kafka: state %s: sketches unreadable (another aggregation "
                 "setting?); left out of the global quantiles", key);
            continue;
        }
        merged++;
    }
    if (sum && merged) tl_agg_flush(sum);
    tl_agg_free(sum);
    tl_agg_free(one);
    tl_output_pass(out, true);
}

static bool kafka_restore(struct tl_source *s, const uint8_t *p, const uint8_t *end)
{
    struct kafka_src *K = s->own;
    uint64_t n;
    if (!tl_get_varint(&p, end, &n) || n > 100000) return false;
    K->pending = calloc(n ? n : 1, sizeof *K->pending);
    if (!K->pending) return false;
    for (uint64_t i = 0; i < n; i++) {
        const char *t;
        size_t tlen;
        uint64_t part, next, len;
        if (!tl_get_str(&p, end, 4096, &t, &tlen) || !tl_get_varint(&p, end, &part) ||
            !tl_get_varint(&p, end, &next) || !tl_get_varint(&p, end, &len) ||
            len > (uint64_t)(end - p))
            return false;
        struct kpending *kp = &K->pending[K->npending++];
        kp->topic = strndup(t, tlen);
        kp->partition = (int32_t)tl_unzigzag(part);
        kp->next = tl_unzigzag(next);
        kp->states = malloc(len ? len : 1);
        if (!kp->topic || !kp->states) return false;
        memcpy(kp->states, p, len);
        kp->len = len;
        p += len;
    }
    uint8_t tag;
    if (p < end && (!tl_get_u8(&p, end, &tag) || tag != 'F')) return false;
    for (int i = 0; p < end && i < K->npending; i++)
        if (!tl_get_varint(&p, end, &K->pending[i].fp)) return false;
    return p == end;
}

/* Lines, records and rejects of a Kafka source's streams of one partition
 * (partition < 0: all). */
static void kafka_stats(const struct tl_source *s, const char *topic, int32_t partition,
                        struct tl_parse_stats *out)
{
    const struct kafka_src *K = s->own;
    memset(out, 0, sizeof *out);
    for (size_t j = 0; j < K->nstreams; j++) {
        const struct kstream *ks = K->streams[j];
        if (!ks || (partition >= 0 && (ks->partition != partition || strcmp(ks->topic, topic))))
            continue;
        struct tl_parse_stats ps = tl_drive_stats(&ks->drive);
        out->lines += ps.lines;
        out->records += ps.records;
        out->rejected += ps.rejected;
        for (int r = 0; r < TL_REJ_COUNT; r++) out->rejected_by[r] += ps.rejected_by[r];
    }
}

/* One `tasklens` point per assigned partition: its lag (high watermark -
 * next offset) and what its streams parsed. */
static void kafka_self_metrics(struct tl_source *s)
{
    struct kafka_src *K = s->own;
    const struct tl_kafka_partition *parts;
    int n = K->kafka ? tl_kafka_partitions(K->kafka, &parts) : 0;
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
        tl_output_self(tl_rt_output(s->rt), tl_rt_instance(s->rt), &in, (uint64_t)lag);
    }
}


/* ---------------------------------------------------------------- the plugin */

static enum tl_err kafka_expand(struct tl_runtime *rt, const struct src_settings *c)
{
    char name[1024], id[2048];
    snprintf(name, sizeof name, "kafka:%s", c->topics);
    /* one consumer: its brokers, topics and group */
    snprintf(id, sizeof id, "%s|%s|%s", c->brokers, c->topics, c->group);
    return tl_rt_add_source(rt, c, name, id);
}

static enum tl_err kafka_open(struct tl_source *s, int version, const uint8_t *saved, size_t len)
{
    if (!s->own && !(s->own = calloc(1, sizeof(struct kafka_src)))) return TL_ERR_NOMEM;
    if (saved && !kafka_restore(s, saved, saved + len)) return TL_ERR_CORRUPT;
    return client_open(s);
}

static size_t kafka_step(struct tl_source *s)
{
    struct kafka_src *K = s->own;
    return K->kafka ? tl_kafka_poll(K->kafka, 20000, (size_t)TL_RT_CHUNK * 16, kafka_message, s) : 0;
}

static int kafka_wait_fd(struct tl_source *s, bool *poll_soon)
{
    struct kafka_src *K = s->own;
    int fd = K->kafka ? tl_kafka_fd(K->kafka) : -1;
    if (fd < 0) *poll_soon = true;
    return fd;
}

static void kafka_totals(const struct tl_source *s, struct tl_source_totals *t)
{
    struct tl_parse_stats ps;
    kafka_stats(s, NULL, -1, &ps);
    t->lines += ps.lines;
    t->records += ps.records;
    t->rejected += ps.rejected;
}

static void kafka_commit(struct tl_source *s)
{
    struct kafka_src *K = s->own;
    if (K->kafka) tl_kafka_commit(K->kafka);
}

/* Commit what the exit checkpoint covers (nothing when it failed), then
 * leave the group (the revoke that follows commits nothing). */
static void kafka_stop(struct tl_source *s, bool saved)
{
    struct kafka_src *K = s->own;
    if (!K->kafka) return;
    if (saved) tl_kafka_commit(K->kafka);
    tl_kafka_close(K->kafka);
    K->kafka = NULL;
}

static void kafka_close(struct tl_source *s)
{
    if (!s->own) return;
    struct kafka_src *K = s->own;
    for (int i = 0; i < K->nchecks; i++) free(K->checks[i].topic);
    kafka_free_all(s);
    free(s->own);
    s->own = NULL;
}

static enum tl_err kafka_validate(const struct src_settings *c, const char **key, char *err,
                                  size_t cap)
{
    if (!c->brokers || !c->topics) {
        snprintf(err, cap, "`brokers` and `topics` are required");
        return TL_ERR_USAGE;
    }
    if (strcmp(c->start, "earliest") && strcmp(c->start, "latest")) {
        *key = "start";
        snprintf(err, cap, "start: '%s' is not earliest or latest", c->start);
        return TL_ERR_USAGE;
    }
    const struct tl_cfg_node *pr = c->properties;
    if (pr && pr->kind != TL_CFG_MAP) {
        *key = "properties";
        snprintf(err, cap, "properties: a mapping of librdkafka settings is expected");
        return TL_ERR_USAGE;
    }
    for (size_t j = 0; pr && j < pr->n; j++)
        if (pr->items[j]->kind != TL_CFG_SCALAR) {
            *key = "properties";
            snprintf(err, cap, "properties.%s: a value is expected", pr->keys[j]);
            return TL_ERR_USAGE;
        }
    return TL_OK;
}

/* The brokers answer, the topics exist (a metadata request, no group join). */
static void kafka_check(const struct src_settings *s, int i, tl_check_say *say, void *ctx)
{
    struct tl_kafka_prop props[128];
    int np = 0;
    for (size_t k = 0; s->properties && k < s->properties->n && np < 128; k++)
        props[np++] = (struct tl_kafka_prop){s->properties->keys[k], s->properties->items[k]->scalar};
    struct tl_kafka_cfg kc = {s->brokers, s->topics, s->group, s->start, props, np};
    char msg[2048];
    bool ok = tl_kafka_probe(&kc, 5000, msg, sizeof msg) == TL_OK;
    say(ctx, ok, "sources[%d]: kafka %s, group %s: %s", i, s->brokers, s->group, msg);
}

#define SS(f) offsetof(struct src_settings, f)
static const struct tl_option kafka_options[] = {
    {"brokers", TL_OPT_LIST, NULL, "bootstrap servers, host:port[,host:port]", SS(brokers)},
    {"topics", TL_OPT_LIST, NULL, "topic names or ^regex, comma-separated", SS(topics)},
    {"group", TL_OPT_STRING, "tasklens", "consumer group: instances in one group share partitions",
     SS(group)},
    {"start", TL_OPT_STRING, "earliest", "earliest or latest: where a new group starts", SS(start)},
    {"parser", TL_OPT_STRING, "auto",
     "format of the messages (auto: detected per stream from its first message)", SS(parser)},
    {"key_tag", TL_OPT_STRING, NULL,
     "put the message key in this tag (e.g. manager); none by default", SS(key_tag)},
    {"max_streams", TL_OPT_INT, "10000",
     "parser states kept, one per (topic, partition, key); more are rejected", SS(max_streams)},
    {"header_tags", TL_OPT_LIST, NULL,
     "message headers to put in tags, comma-separated (e.g. workflow,site)", SS(header_tags)},
    {"state_topic", TL_OPT_STRING, NULL,
     "compacted topic where every partition's state (parser streams, sketches, offset) is "
     "published at each checkpoint: another instance takes a partition over from it, and "
     "every instance writes the group's merged quantiles (scope=global) from it",
     SS(state_topic)},
    {0},
};

/* `top`: the open tasks of every stream assigned here. */
static bool kafka_open_tasks(struct tl_source *s, void (*each)(void *ctx, const struct tl_record *r),
                             void *ctx)
{
    struct kafka_src *K = s->own;
    bool any = false;
    for (size_t i = 0; K && i < K->nstreams; i++)
        if (K->streams[i]) any |= tl_drive_open_tasks(&K->streams[i]->drive, each, ctx);
    return any;
}

const struct tl_source_type tl_source_kafka = {
    .name = "kafka",
    .help = "Kafka topics, as a member of a consumer group (librdkafka)",
    .options = kafka_options,
    .ckpt_tag = 'K',
    .validate = kafka_validate,
    .expand = kafka_expand,
    .open = kafka_open,
    .step = kafka_step,
    .wait_fd = kafka_wait_fd,
    .save = kafka_save,
    .self_metrics = kafka_self_metrics,
    .totals = kafka_totals,
    .publish = kafka_publish,
    .commit = kafka_commit,
    .cumulative = kafka_global,
    .stop = kafka_stop,
    .close = kafka_close,
    .open_tasks = kafka_open_tasks,
    .check = kafka_check,
};
