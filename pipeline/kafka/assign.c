/* The kafka source's assignment (kafka.h): a partition assigned to this
 * instance resumes from its checkpoint or from the state topic (another
 * instance's), one revoked is saved there first; the librdkafka client
 * opened with these callbacks. */
#include "pipeline/kafka/kafka.h"

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
        struct kstream *ks = kafka_stream_get(s, topic, partition, key, klen);
        if (ks) {
            ok = !tl_drive_restore(&ks->drive, name, p, slen);
            ks->drive.events_open = arr;
        }
        p += slen;
    }
    uint64_t alen;
    if (ok && p < end) {
        struct kpart *kp = kafka_part_get(s, topic, partition);
        ok = tl_get_varint(&p, end, &alen) && alen <= (uint64_t)(end - p) &&
             (!kp || !alen || !tl_agg_restore(kp->agg, p, alen));
        p += ok ? alen : 0;
    }
    return ok && p == end;
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
        if (kafka_state_key(key, sizeof key, s, topic, partition) &&
            (shared = tl_kstore_get(K->store, key, &slen)) &&
            !kafka_state_parse(shared, slen, owner, sizeof owner, &snext, &sstate, &sstlen)) {
            tl_rt_log(s->rt, TL_LOG_ERROR, "kafka:%s/%d: damaged state in the state topic; ignored", topic,
                 (int)partition);
            shared = NULL;
        }
    }
    kafka_part_drop(s, topic, partition); /* a fresh start for its sketches */
    if (K->store) kafka_part_get(s, topic, partition);
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
        kafka_partition_forget(s, topic, partition);
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
        if (v && !kafka_partition_save(s, parts[i]->topic, parts[i]->partition, &st) && !st.oom) {
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
                kafka_stream_free(ks);
                K->streams[j] = NULL;
            }
        }
    for (int i = 0; i < n; i++) kafka_part_drop(s, parts[i]->topic, parts[i]->partition);
}

enum tl_err kafka_client_open(struct tl_source *s, char *why, size_t whycap)
{
    struct kafka_src *K = s->own;
    const struct kafka_settings *ks = kafka_settings(s);
    struct tl_kafka_prop props[128];
    int np = 0;
    const struct tl_cfg_node *pr = ks->properties;
    for (size_t i = 0; pr && i < pr->n && np < 128; i++)
        props[np++] = (struct tl_kafka_prop){pr->keys[i], pr->items[i]->scalar};
    struct tl_kafka_cfg kc = {ks->brokers, ks->topics, ks->group, ks->start, props, np};
    struct tl_kafka_hooks hooks = {s, kafka_revoke, kafka_assign, kafka_log};
    char err[1024];
    if (!K->stream_ids && !(K->stream_ids = tl_intern_new((size_t)64 << 20))) return TL_ERR_NOMEM;
    for (const char *h = ks->header_tags; h && *h && K->nhdr < MAX_HDR_TAGS;) {
        size_t n = strcspn(h, ",");
        while (n && *h == ' ') h++, n--;
        size_t m = n;
        while (m && h[m - 1] == ' ') m--;
        if (m && !(K->hdr_names[K->nhdr++] = strndup(h, m))) return TL_ERR_NOMEM;
        h += n;
        if (*h == ',') h++;
    }
    if (ks->state_topic && !K->store) {
        if (tl_kstore_open(&kc, ks->state_topic, &hooks, &K->store, err, sizeof err)) {
            snprintf(why, whycap, "%s", err);
            return TL_ERR_OPEN;
        }
        if (tl_kstore_sync(K->store, 30000))
            tl_rt_log(s->rt, TL_LOG_WARN, "kafka: the state topic %s was not read to its end",
                 ks->state_topic);
        tl_rt_log(s->rt, TL_LOG_INFO, "kafka: state topic %s: %zu partition states", ks->state_topic,
             tl_kstore_count(K->store));
    }
    if (tl_kafka_open(&kc, &hooks, &K->kafka, err, sizeof err)) {
        snprintf(why, whycap, "%s", err);
        return TL_ERR_OPEN;
    }
    tl_rt_log(s->rt, TL_LOG_INFO, "kafka: %s, topics %s, group %s", ks->brokers, ks->topics, ks->group);
    return TL_OK;
}
