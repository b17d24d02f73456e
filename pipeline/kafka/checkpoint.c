/* The kafka source's checkpoint and commit (kafka.h): per partition the
 * next offset and its streams' parser states, in the run's checkpoint and,
 * with a state topic, published to it; the group's global quantiles merged
 * from every partition's published sketches. Offsets are committed only
 * once a checkpoint covers them. */
#include "pipeline/kafka/kafka.h"

/* The state topic's key of a partition: group/topic/partition. */
size_t kafka_state_key(char *out, size_t cap, const struct tl_source *s, const char *topic,
                       int32_t partition)
{
    int n = snprintf(out, cap, "%s/%s/%d", kafka_settings(s)->group, topic, (int)partition);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* A state topic record (KSTATE_VERSION, kafka.h) taken apart. */
bool kafka_state_parse(const uint8_t *p, size_t len, char *instance, size_t icap, int64_t *next,
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

/* A partition's state (see partition_apply) into b. */
enum tl_err kafka_partition_save(struct tl_source *s, const char *topic, int32_t partition,
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
 * early to verify it (kafka_resume_check) has processed that message already, in
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
enum tl_err kafka_save(struct tl_source *s, struct tl_buf *b)
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
        rc = kafka_partition_save(s, parts[i].topic, parts[i].partition, &st);
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
bool kafka_publish(struct tl_source *s)
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
        if (!kafka_state_key(key, sizeof key, s, parts[i].topic, parts[i].partition) ||
            kafka_partition_save(s, parts[i].topic, parts[i].partition, &v) ||
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
             kafka_settings(s)->state_topic);
    }
    return ok;
}

/* The group's quantiles: every partition's last published sketches merged
 * (in key order, so every instance that read the same states writes the
 * same points, at the newest record time they hold), tagged scope=global.
 * A stopped instance's partitions count with their last state until their
 * next owner publishes a newer one. */
void kafka_global(struct tl_source *s)
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
    int pl = snprintf(prefix, sizeof prefix, "%s/", kafka_settings(s)->group);
    size_t merged = 0;
    for (size_t i = 0; sum && one && i < tl_kstore_count(K->store); i++) {
        const uint8_t *v, *st, *p, *end;
        size_t len, stlen;
        const char *key = tl_kstore_entry(K->store, i, &v, &len);
        char owner[256];
        int64_t next;
        if (strncmp(key, prefix, (size_t)pl) ||
            !kafka_state_parse(v, len, owner, sizeof owner, &next, &st, &stlen))
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

bool kafka_restore(struct tl_source *s, const uint8_t *p, const uint8_t *end)
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
