/* The kafka source's feed (kafka.h): each message to the parser of its
 * stream -- (topic, partition, key), made on its first message -- the
 * records tagged with the message's headers, and the check that a resumed
 * partition's first message is the one read before the checkpoint (the
 * same topic, not one deleted and created again under its name). */
#include "pipeline/kafka/kafka.h"

void kafka_stream_free(struct kstream *ks)
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

void kafka_free_all(struct tl_source *s)
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
    for (size_t i = 0; i < K->nstreams; i++) kafka_stream_free(K->streams[i]);
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
    const char *tag = kafka_settings(s)->key_tag;
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
struct kpart *kafka_part_get(struct tl_source *s, const char *topic,
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

void kafka_part_drop(struct tl_source *s, const char *topic, int32_t partition)
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
struct kstream *kafka_stream_get(struct tl_source *s, const char *topic,
                                 int32_t partition, const char *key, size_t key_len)
{
    struct kafka_src *K = s->own;
    char k[1024];
    size_t n = stream_key(k, sizeof k, topic, partition, key, key_len);
    int32_t id = tl_intern_find(K->stream_ids, k, n);
    if (id >= 0 && (size_t)id < K->nstreams && K->streams[id]) return K->streams[id];
    if (id < 0) {
        if ((long long)tl_intern_count(K->stream_ids) >= kafka_settings(s)->max_streams) return NULL;
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
        kafka_stream_free(ks);
        return NULL;
    }
    ks->partition = partition;
    ks->fc = (struct kfeed){s, ks, -1};
    /* rejects said on stderr, located by kafka_where */
    ks->budget = (struct tl_reject_budget){.max = TL_RT_MAX_REPORTS, .quiet = tl_rt_quiet(s->rt)};
    struct tl_drive_cfg dc = {
        .parser = strcmp(kafka_settings(s)->base.parser, "auto") ? tl_parser_find(kafka_settings(s)->base.parser) : NULL,
        .configure = tl_source_parser_options, .configure_ctx = s, .record = kafka_on_record,
        .record_ctx = &ks->fc, .budget = &ks->budget, .where = kafka_where, .where_ctx = &ks->fc};
    if (tl_drive_init(&ks->drive, &dc, ks->topic)) {
        kafka_stream_free(ks);
        return NULL;
    }
    ks->kp = kafka_part_get(s, topic, partition);
    K->streams[id] = ks;
    return ks;
}

/* One message into its stream's parser. Work Queue: lines (a missing last
 * newline added); LSST: one document; Chrome: one event (the stream is an
 * open array, as catapult's writer makes it) or a whole trace. */
/* The partition's streams and sketches dropped: its saved state was
 * damaged, or not of this topic. */
void kafka_partition_forget(struct tl_source *s, const char *topic, int32_t partition)
{
    struct kafka_src *K = s->own;
    for (size_t j = 0; j < K->nstreams; j++) {
        struct kstream *ks = K->streams[j];
        if (ks && ks->partition == partition && !strcmp(ks->topic, topic)) {
            kafka_stream_free(ks);
            K->streams[j] = NULL;
        }
    }
    kafka_part_drop(s, topic, partition);
    if (K->store) kafka_part_get(s, topic, partition);
}

/* A resumed partition's first message: the last one read before the
 * checkpoint (skipped: it was read), or another topic under the same name
 * (its state dropped, read from its beginning, said). true: m is not to be
 * fed. */
bool kafka_resume_check(struct tl_source *s, const struct tl_kafka_msg *m)
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
        kafka_partition_forget(s, m->topic, m->partition);
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

void kafka_message(void *ctx, const struct tl_kafka_msg *m)
{
    struct tl_source *s = ctx;
    struct kafka_src *K = s->own;
    s->bytes += m->len;
    if (K->nchecks && kafka_resume_check(s, m)) return;
    if (!m->value || !m->len) return;
    struct kstream *ks = kafka_stream_get(s, m->topic, m->partition, m->key, m->key_len);
    if (!ks) {
        if (K->rejected_streams++ < TL_RT_MAX_REPORTS)
            tl_rt_log(s->rt, TL_LOG_WARN, "kafka:%s/%d@%lld: no parser state for this key (max_streams %lld "
                 "reached); message skipped", m->topic, (int)m->partition, (long long)m->offset,
                 kafka_settings(s)->max_streams);
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

void kafka_log(void *ctx, int level, const char *msg)
{
    enum tl_log_level lv = level <= 0 ? TL_LOG_ERROR : level == 1 ? TL_LOG_WARN
                           : level == 2 ? TL_LOG_INFO : TL_LOG_DEBUG;
    tl_rt_log(((struct tl_source *)ctx)->rt, lv, "%s", msg);
}
