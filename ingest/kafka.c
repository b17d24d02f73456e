/* The Kafka consumer: see kafka.h.
 *
 * librdkafka runs its own threads; this side stays single-threaded: every
 * callback (rebalance, log) fires inside rd_kafka_consumer_poll, called
 * from tl_kafka_poll in the run loop. The consumer queue signals a pipe
 * when something waits, so the loop can sleep in poll() with the files. */
#include "ingest/kafka.h"
#include "core/intern.h"
#include "core/map64.h"
#include "ingest/rdkafka_api.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct tl_kafka {
    rd_kafka_t *rk;
    rd_kafka_queue_t *queue;
    struct tl_kafka_hooks hooks;
    int pipe_r, pipe_w;
    struct tl_kafka_partition *parts;
    int nparts, cap;
};

static void say(struct tl_kafka *k, int level, const char *fmt, const char *a, const char *b)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a, b);
    if (k->hooks.log) k->hooks.log(k->hooks.ctx, level, msg);
}

static struct tl_kafka_partition *part_of(struct tl_kafka *k, const char *topic, int32_t partition)
{
    for (int i = 0; i < k->nparts; i++)
        if (k->parts[i].partition == partition && !strcmp(k->parts[i].topic, topic))
            return &k->parts[i];
    if (k->nparts == k->cap) {
        int cap = k->cap ? k->cap * 2 : 16;
        struct tl_kafka_partition *p = realloc(k->parts, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        k->parts = p;
        k->cap = cap;
    }
    char *t = strdup(topic);
    if (!t) return NULL;
    k->parts[k->nparts] = (struct tl_kafka_partition){t, partition, -1, -1, -1, false};
    return &k->parts[k->nparts++];
}

static void rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                      rd_kafka_topic_partition_list_t *list, void *opaque)
{
    struct tl_kafka *k = opaque;
    bool coop = !strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE");
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        /* the group's committed offsets: a saved state behind them is
         * stale (another member read on and committed) */
        rd_kafka_topic_partition_list_t *cm = k->hooks.on_assign ? rd_kafka_topic_partition_list_copy(list) : NULL;
        if (cm && rd_kafka_committed(rk, cm, 5000)) {
            rd_kafka_topic_partition_list_destroy(cm);
            cm = NULL;
        }
        for (int i = 0; i < list->cnt; i++) {
            rd_kafka_topic_partition_t *tp = &list->elems[i];
            struct tl_kafka_partition *p = part_of(k, tp->topic, tp->partition);
            if (!p) continue;
            p->assigned = true;
            int64_t committed = -1;
            if (cm) {
                rd_kafka_topic_partition_t *c = rd_kafka_topic_partition_list_find(cm, tp->topic, tp->partition);
                if (c && !c->err && c->offset >= 0) committed = c->offset;
            }
            int64_t at = k->hooks.on_assign
                             ? k->hooks.on_assign(k->hooks.ctx, tp->topic, tp->partition, committed)
                             : -1;
            if (at >= 0) {
                tp->offset = at; /* where the checkpoint's state stops */
                p->next = at;
            }
            char what[64];
            snprintf(what, sizeof what, "%d%s", (int)tp->partition, at >= 0 ? " (from checkpoint)" : "");
            say(k, 2, "kafka: assigned %s/%s", tp->topic, what);
        }
        if (cm) rd_kafka_topic_partition_list_destroy(cm);
        rd_kafka_error_t *e = NULL;
        if (coop) e = rd_kafka_incremental_assign(rk, list);
        else rd_kafka_assign(rk, list);
        if (e) {
            say(k, 0, "kafka: assign: %s%s", rd_kafka_error_string(e), "");
            rd_kafka_error_destroy(e);
        }
        return;
    }
    if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
        const struct tl_kafka_partition **gone = calloc((size_t)list->cnt + 1, sizeof *gone);
        int n = 0;
        for (int i = 0; gone && i < list->cnt; i++) {
            struct tl_kafka_partition *p = part_of(k, list->elems[i].topic, list->elems[i].partition);
            if (p) gone[n++] = p;
        }
        /* drain, flush, checkpoint, commit: the caller does it here, while
         * the partitions are still ours */
        if (k->hooks.on_revoke && gone) k->hooks.on_revoke(k->hooks.ctx, gone, n);
        for (int i = 0; i < n; i++) ((struct tl_kafka_partition *)gone[i])->assigned = false;
        free(gone);
        say(k, 2, "kafka: %s partitions revoked%s", list->cnt == 1 ? "one of the" : "the", "");
        if (coop) {
            rd_kafka_error_t *e = rd_kafka_incremental_unassign(rk, list);
            if (e) rd_kafka_error_destroy(e);
        } else {
            rd_kafka_assign(rk, NULL);
        }
        return;
    }
    say(k, 0, "kafka: rebalance failed: %s%s", rd_kafka_err2str(err), "");
    rd_kafka_assign(rk, NULL);
}

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    struct tl_kafka *k = rd_kafka_opaque(rk);
    if (k && k->hooks.log) {
        char msg[768];
        snprintf(msg, sizeof msg, "kafka: %s: %s", fac, buf);
        k->hooks.log(k->hooks.ctx, level <= 3 ? 0 : level <= 4 ? 1 : 3, msg);
    }
}

/* librdkafka is opened on first use (core/dynlib.h). */
static bool kafka_load(char *err, size_t errlen)
{
    char why[300];
    if (tl_rdkafka_load(why, sizeof why)) return true;
    snprintf(err, errlen, "kafka: %s", why);
    return false;
}

static bool set(rd_kafka_conf_t *conf, const char *key, const char *value, char *err, size_t errlen)
{
    char e[512];
    if (rd_kafka_conf_set(conf, key, value, e, sizeof e) == RD_KAFKA_CONF_OK) return true;
    if (tl_kafka_prop_is_secret(key)) snprintf(err, errlen, "kafka property %s: invalid value", key);
    else snprintf(err, errlen, "kafka property %s: %s", key, e);
    return false;
}

enum tl_err tl_kafka_open(const struct tl_kafka_cfg *cfg, const struct tl_kafka_hooks *hooks,
                          struct tl_kafka **out, char *err, size_t errlen)
{
    if (!kafka_load(err, errlen)) return TL_ERR_OPEN;
    struct tl_kafka *k = calloc(1, sizeof *k);
    if (!k) return TL_ERR_NOMEM;
    k->hooks = *hooks;
    k->pipe_r = k->pipe_w = -1;
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    bool ok = set(conf, "bootstrap.servers", cfg->brokers, err, errlen) &&
              set(conf, "group.id", cfg->group, err, errlen) &&
              set(conf, "auto.offset.reset", cfg->start, err, errlen) &&
              set(conf, "client.id", "tasklens", err, errlen);
    for (int i = 0; ok && i < cfg->nprops; i++) ok = set(conf, cfg->props[i].key, cfg->props[i].value, err, errlen);
    /* at least once is ours to keep: whatever the properties say */
    ok = ok && set(conf, "enable.auto.commit", "false", err, errlen) &&
         set(conf, "enable.auto.offset.store", "false", err, errlen);
    if (!ok) {
        rd_kafka_conf_destroy(conf);
        free(k);
        return TL_ERR_USAGE;
    }
    rd_kafka_conf_set_opaque(conf, k);
    rd_kafka_conf_set_rebalance_cb(conf, rebalance);
    rd_kafka_conf_set_log_cb(conf, log_cb);
    char e[512];
    k->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, e, sizeof e);
    if (!k->rk) {
        rd_kafka_conf_destroy(conf);
        snprintf(err, errlen, "kafka: %s", e);
        free(k);
        return TL_ERR_OPEN;
    }
    rd_kafka_poll_set_consumer(k->rk);
    k->queue = rd_kafka_queue_get_consumer(k->rk);
    int fds[2];
    if (k->queue && !pipe2(fds, O_NONBLOCK | O_CLOEXEC)) {
        k->pipe_r = fds[0];
        k->pipe_w = fds[1];
        rd_kafka_queue_io_event_enable(k->queue, k->pipe_w, "1", 1);
    }
    /* topics: names, or ^regex (librdkafka matches those itself) */
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(4);
    const char *p = cfg->topics;
    while (p && *p) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        while (n && (*p == ' ')) p++, n--;
        while (n && p[n - 1] == ' ') n--;
        if (n) {
            char *t = strndup(p, n);
            if (t) rd_kafka_topic_partition_list_add(topics, t, RD_KAFKA_PARTITION_UA);
            free(t);
        }
        if (!c) break;
        p = c + 1;
    }
    rd_kafka_resp_err_t re = topics->cnt ? rd_kafka_subscribe(k->rk, topics)
                                         : RD_KAFKA_RESP_ERR__INVALID_ARG;
    rd_kafka_topic_partition_list_destroy(topics);
    if (re) {
        snprintf(err, errlen, "kafka: subscribe to '%s': %s", cfg->topics ? cfg->topics : "",
                 rd_kafka_err2str(re));
        tl_kafka_close(k);
        return TL_ERR_USAGE;
    }
    *out = k;
    return TL_OK;
}

size_t tl_kafka_poll(struct tl_kafka *k, int max_msgs, size_t max_bytes,
                     void (*cb)(void *ctx, const struct tl_kafka_msg *m), void *ctx)
{
    char drain[64];
    if (k->pipe_r >= 0)
        while (read(k->pipe_r, drain, sizeof drain) > 0) {
        }
    size_t bytes = 0;
    for (int i = 0; i < max_msgs && bytes < max_bytes; i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(k->rk, 0);
        if (!m) break;
        if (m->err) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                say(k, 1, "kafka: %s%s", rd_kafka_message_errstr(m), "");
            rd_kafka_message_destroy(m);
            continue;
        }
        const char *topic = rd_kafka_topic_name(m->rkt);
        rd_kafka_headers_t *hdrs = NULL;
        if (rd_kafka_message_headers(m, &hdrs)) hdrs = NULL;
        struct tl_kafka_msg msg = {topic, m->partition, m->offset, m->key, m->key_len,
                                   m->payload, m->len, hdrs};
        struct tl_kafka_partition *p = part_of(k, topic, m->partition);
        int64_t next_before = p ? p->next : -1;
        cb(ctx, &msg);
        if (p && p->next == next_before && m->offset + 1 > p->next) { /* (a rewind in cb moved it) */
            p->next = m->offset + 1;
            p->last_fp = tl_kafka_fingerprint(&msg);
        }
        bytes += m->len + 1;
        rd_kafka_message_destroy(m);
    }
    return bytes;
}

int64_t tl_kafka_rewind(struct tl_kafka *k, const char *topic, int32_t partition)
{
    int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(k->rk, topic, partition, &low, &high, 5000)) return -1;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, topic, partition)->offset = low;
    rd_kafka_error_t *e = rd_kafka_seek_partitions(k->rk, l, 5000);
    rd_kafka_topic_partition_list_destroy(l);
    if (e) {
        say(k, 1, "kafka: seek failed: %s%s", rd_kafka_error_string(e), "");
        rd_kafka_error_destroy(e);
        return -1;
    }
    struct tl_kafka_partition *p = part_of(k, topic, partition);
    if (p) {
        p->next = low;
        p->last_fp = 0;
    }
    return low;
}

enum tl_err tl_kafka_commit(struct tl_kafka *k)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(k->nparts ? k->nparts : 1);
    for (int i = 0; i < k->nparts; i++) {
        struct tl_kafka_partition *p = &k->parts[i];
        if (!p->assigned || p->next < 0 || p->next == p->committed) continue;
        rd_kafka_topic_partition_list_add(l, p->topic, p->partition)->offset = p->next;
    }
    enum tl_err rc = TL_OK;
    if (l->cnt) {
        rd_kafka_resp_err_t e = rd_kafka_commit(k->rk, l, 0);
        if (e) {
            say(k, 1, "kafka: commit failed: %s (the messages will be read again)%s", rd_kafka_err2str(e), "");
            rc = TL_ERR_IO;
        } else {
            for (int i = 0; i < l->cnt; i++) {
                struct tl_kafka_partition *p = part_of(k, l->elems[i].topic, l->elems[i].partition);
                if (p && !l->elems[i].err) p->committed = l->elems[i].offset;
            }
        }
    }
    rd_kafka_topic_partition_list_destroy(l);
    return rc;
}

int tl_kafka_partitions(struct tl_kafka *k, const struct tl_kafka_partition **out)
{
    for (int i = 0; i < k->nparts; i++) {
        int64_t lo, hi;
        if (k->parts[i].assigned &&
            !rd_kafka_get_watermark_offsets(k->rk, k->parts[i].topic, k->parts[i].partition, &lo, &hi) &&
            hi >= 0)
            k->parts[i].high = hi;
    }
    *out = k->parts;
    return k->nparts;
}

int tl_kafka_fd(const struct tl_kafka *k)
{
    return k->pipe_r;
}

void tl_kafka_close(struct tl_kafka *k)
{
    if (!k) return;
    if (k->rk) {
        rd_kafka_consumer_close(k->rk); /* revokes: on_revoke commits */
        if (k->queue) rd_kafka_queue_destroy(k->queue);
        rd_kafka_destroy(k->rk);
    }
    if (k->pipe_r >= 0) close(k->pipe_r);
    if (k->pipe_w >= 0) close(k->pipe_w);
    for (int i = 0; i < k->nparts; i++) free((char *)k->parts[i].topic);
    free(k->parts);
    free(k);
}

bool tl_kafka_msg_header(const struct tl_kafka_msg *m, const char *name, const char **value,
                         size_t *len)
{
    const void *v = NULL;
    size_t n = 0;
    if (!m->headers || rd_kafka_header_get_last(m->headers, name, &v, &n)) return false;
    *value = v ? v : "";
    *len = v ? n : 0;
    return true;
}

/* ---------------------------------------------------------------- store */

struct kentry {
    char *key;
    uint8_t *value;
    size_t len;
};

struct tl_kstore {
    rd_kafka_t *prod, *cons;
    char *topic;
    struct tl_kafka_hooks hooks;
    int32_t nparts;
    int64_t *pos; /* [nparts]: next offset to read */
    struct kentry *e; /* sorted by key */
    size_t n, cap;
    long pending, failed; /* writes in flight, failed deliveries */
};

static void store_say(struct tl_kstore *s, int level, const char *fmt, const char *a, const char *b)
{
    char msg[768];
    snprintf(msg, sizeof msg, fmt, a, b);
    if (s->hooks.log) s->hooks.log(s->hooks.ctx, level, msg);
}

static void store_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    struct tl_kstore *s = opaque;
    s->pending--;
    if (m->err) {
        s->failed++;
        store_say(s, 1, "kafka: state store: a write failed: %s%s", rd_kafka_err2str(m->err), "");
    }
}

static void store_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    struct tl_kstore *s = rd_kafka_opaque(rk);
    if (s && s->hooks.log) {
        char msg[768];
        snprintf(msg, sizeof msg, "kafka: state store: %s: %s", fac, buf);
        s->hooks.log(s->hooks.ctx, level <= 3 ? 0 : level <= 4 ? 1 : 3, msg);
    }
}

static rd_kafka_conf_t *store_conf(struct tl_kstore *s, const struct tl_kafka_cfg *cfg, bool producer,
                                   char *err, size_t errlen)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    bool ok = set(conf, "bootstrap.servers", cfg->brokers, err, errlen) &&
              set(conf, "client.id", "tasklens-state", err, errlen);
    /* the group's connection settings (security first of all) apply here
     * too; consumer-group tuning does not */
    static const char *const shared[] = {"security.", "sasl.", "ssl.", "ssl_", "socket.",
                                         "broker.", "client.", "api.", "metadata.", "reconnect.",
                                         "retry.", "debug", "log.", "connections.", "resolve.",
                                         "topic.metadata.", "allow.auto.create", NULL};
    for (int i = 0; ok && i < cfg->nprops; i++) {
        const char *k = cfg->props[i].key;
        bool pass = false;
        for (int j = 0; shared[j] && !pass; j++) pass = !strncmp(k, shared[j], strlen(shared[j]));
        if (pass) ok = set(conf, k, cfg->props[i].value, err, errlen);
    }
    if (producer)
        ok = ok && set(conf, "enable.idempotence", "true", err, errlen) &&
             set(conf, "message.max.bytes", "17825792", err, errlen) &&
             set(conf, "compression.type", "zstd", err, errlen) &&
             set(conf, "linger.ms", "5", err, errlen);
    else
        ok = ok && set(conf, "group.id", "tasklens-state-reader", err, errlen) && /* never joined */
             set(conf, "enable.auto.commit", "false", err, errlen) &&
             set(conf, "enable.partition.eof", "true", err, errlen);
    if (!ok) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_opaque(conf, s);
    rd_kafka_conf_set_log_cb(conf, store_log);
    if (producer) rd_kafka_conf_set_dr_msg_cb(conf, store_dr);
    return conf;
}

/* Creates the compacted topic when it is missing. */
static bool store_create_topic(struct tl_kstore *s, char *err, size_t errlen)
{
    char e[512];
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(s->topic, 1, -1, e, sizeof e);
    if (!nt) {
        snprintf(err, errlen, "kafka: state topic %s: %s", s->topic, e);
        return false;
    }
    rd_kafka_NewTopic_set_config(nt, "cleanup.policy", "compact");
    rd_kafka_NewTopic_set_config(nt, "max.message.bytes", "17825792");
    rd_kafka_queue_t *q = rd_kafka_queue_new(s->prod);
    rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(s->prod, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(ao, 15000, NULL, 0);
    rd_kafka_CreateTopics(s->prod, &nt, 1, ao, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 20000);
    bool ok = false;
    if (!ev) {
        snprintf(err, errlen, "kafka: state topic %s: no answer from the brokers", s->topic);
    } else if (rd_kafka_event_error(ev)) {
        snprintf(err, errlen, "kafka: state topic %s: %s", s->topic, rd_kafka_event_error_string(ev));
    } else {
        size_t n;
        const rd_kafka_topic_result_t **r =
            rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
        rd_kafka_resp_err_t re = n ? rd_kafka_topic_result_error(r[0]) : RD_KAFKA_RESP_ERR_NO_ERROR;
        ok = !re || re == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS;
        if (!ok)
            snprintf(err, errlen, "kafka: state topic %s: %s", s->topic,
                     rd_kafka_topic_result_error_string(r[0]) ? rd_kafka_topic_result_error_string(r[0])
                                                              : rd_kafka_err2str(re));
        else if (!re)
            store_say(s, 2, "kafka: created the compacted state topic %s%s", s->topic, "");
    }
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    return ok;
}

/* Assigns every partition of the topic from its beginning. */
static bool store_assign(struct tl_kstore *s, char *err, size_t errlen)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_topic_t *t = rd_kafka_topic_new(s->cons, s->topic, NULL);
    rd_kafka_resp_err_t re = RD_KAFKA_RESP_ERR__INVALID_ARG;
    /* a topic just created takes a moment to show in the metadata */
    for (int tries = 0; t && tries < 60; tries++) {
        if (md) rd_kafka_metadata_destroy(md);
        md = NULL;
        re = rd_kafka_metadata(s->cons, 0, t, &md, 15000);
        if (re || (md->topic_cnt == 1 && !md->topics[0].err && md->topics[0].partition_cnt > 0))
            break;
        struct timespec ts = {0, 250000000};
        nanosleep(&ts, NULL);
    }
    if (t) rd_kafka_topic_destroy(t);
    if (re || !md || md->topic_cnt != 1 || md->topics[0].err || md->topics[0].partition_cnt < 1) {
        snprintf(err, errlen, "kafka: state topic %s: %s", s->topic,
                 re ? rd_kafka_err2str(re)
                    : md && md->topic_cnt == 1 && md->topics[0].err ? rd_kafka_err2str(md->topics[0].err)
                                                                    : "no partitions");
        if (md) rd_kafka_metadata_destroy(md);
        return false;
    }
    s->nparts = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
    s->pos = calloc((size_t)s->nparts, sizeof *s->pos);
    if (!s->pos) return false;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(s->nparts);
    for (int32_t i = 0; i < s->nparts; i++)
        rd_kafka_topic_partition_list_add(l, s->topic, i)->offset = RD_KAFKA_OFFSET_BEGINNING;
    re = rd_kafka_assign(s->cons, l);
    rd_kafka_topic_partition_list_destroy(l);
    if (re) snprintf(err, errlen, "kafka: state topic %s: assign: %s", s->topic, rd_kafka_err2str(re));
    return !re;
}

enum tl_err tl_kstore_open(const struct tl_kafka_cfg *cfg, const char *topic,
                           const struct tl_kafka_hooks *hooks, struct tl_kstore **out, char *err,
                           size_t errlen)
{
    if (!kafka_load(err, errlen)) return TL_ERR_OPEN;
    struct tl_kstore *s = calloc(1, sizeof *s);
    if (!s || !(s->topic = strdup(topic))) {
        free(s);
        return TL_ERR_NOMEM;
    }
    s->hooks = *hooks;
    char e[512];
    rd_kafka_conf_t *pc = store_conf(s, cfg, true, err, errlen);
    if (pc && !(s->prod = rd_kafka_new(RD_KAFKA_PRODUCER, pc, e, sizeof e))) {
        rd_kafka_conf_destroy(pc);
        snprintf(err, errlen, "kafka: state store: %s", e);
    }
    rd_kafka_conf_t *cc = s->prod ? store_conf(s, cfg, false, err, errlen) : NULL;
    if (cc && !(s->cons = rd_kafka_new(RD_KAFKA_CONSUMER, cc, e, sizeof e))) {
        rd_kafka_conf_destroy(cc);
        snprintf(err, errlen, "kafka: state store: %s", e);
    }
    if (!s->cons || !store_create_topic(s, err, errlen) || !store_assign(s, err, errlen)) {
        tl_kstore_close(s);
        return TL_ERR_OPEN;
    }
    *out = s;
    return TL_OK;
}

enum tl_err tl_kstore_put(struct tl_kstore *s, const char *key, const void *value, size_t len)
{
    rd_kafka_resp_err_t re = rd_kafka_producev(
        s->prod, RD_KAFKA_V_TOPIC(s->topic), RD_KAFKA_V_PARTITION(RD_KAFKA_PARTITION_UA),
        RD_KAFKA_V_KEY(key, strlen(key)), RD_KAFKA_V_VALUE((void *)value, value ? len : 0),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (re) {
        store_say(s, 1, "kafka: state store: write of %s refused: %s", key, rd_kafka_err2str(re));
        s->failed++;
        return re == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE ? TL_ERR_LIMIT : TL_ERR_IO;
    }
    s->pending++;
    return TL_OK;
}

enum tl_err tl_kstore_flush(struct tl_kstore *s, int timeout_ms)
{
    rd_kafka_flush(s->prod, timeout_ms);
    rd_kafka_poll(s->prod, 0);
    bool ok = !s->pending && !s->failed;
    s->failed = 0;
    return ok ? TL_OK : TL_ERR_IO;
}

static int entry_cmp(const char *key, const struct kentry *e)
{
    return strcmp(key, e->key);
}

static size_t entry_find(const struct tl_kstore *s, const char *key, bool *found)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = entry_cmp(key, &s->e[mid]);
        if (!c) {
            *found = true;
            return mid;
        }
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    *found = false;
    return lo;
}

static void store_apply(struct tl_kstore *s, const rd_kafka_message_t *m)
{
    if (!m->key || !m->key_len || m->key_len > 4096) return;
    char *key = strndup(m->key, m->key_len);
    if (!key) return;
    bool found;
    size_t i = entry_find(s, key, &found);
    if (!m->payload) { /* a tombstone */
        if (found) {
            free(s->e[i].key);
            free(s->e[i].value);
            memmove(&s->e[i], &s->e[i + 1], (s->n - i - 1) * sizeof *s->e);
            s->n--;
        }
        free(key);
        return;
    }
    uint8_t *v = malloc(m->len ? m->len : 1);
    if (!v) {
        free(key);
        return;
    }
    memcpy(v, m->payload, m->len);
    if (found) {
        free(key);
        free(s->e[i].value);
        s->e[i].value = v;
        s->e[i].len = m->len;
        return;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct kentry *e = realloc(s->e, cap * sizeof *e);
        if (!e) {
            free(key);
            free(v);
            return;
        }
        s->e = e;
        s->cap = cap;
    }
    memmove(&s->e[i + 1], &s->e[i], (s->n - i) * sizeof *s->e);
    s->e[i] = (struct kentry){key, v, m->len};
    s->n++;
}

enum tl_err tl_kstore_sync(struct tl_kstore *s, int timeout_ms)
{
    int64_t *want = calloc((size_t)s->nparts, sizeof *want);
    if (!want) return TL_ERR_NOMEM;
    enum tl_err rc = TL_OK;
    for (int32_t i = 0; i < s->nparts; i++) {
        int64_t lo, hi;
        rd_kafka_resp_err_t re = rd_kafka_query_watermark_offsets(s->cons, s->topic, i, &lo, &hi,
                                                                  timeout_ms);
        if (re) {
            store_say(s, 1, "kafka: state store: watermarks: %s%s", rd_kafka_err2str(re), "");
            rc = TL_ERR_IO;
            want[i] = 0;
        } else {
            want[i] = hi;
        }
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        bool behind = false;
        for (int32_t i = 0; i < s->nparts; i++) behind |= s->pos[i] < want[i];
        if (!behind) break;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left = timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0) {
            store_say(s, 1, "kafka: state store: %s not read to its end in time%s", s->topic, "");
            rc = TL_ERR_IO;
            break;
        }
        rd_kafka_message_t *m = rd_kafka_consumer_poll(s->cons, (int)(left < 100 ? left : 100));
        if (!m) continue;
        if (m->partition >= 0 && m->partition < s->nparts) {
            if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                /* at the end (compaction may leave it without a message) */
                if (m->offset > s->pos[m->partition]) s->pos[m->partition] = m->offset;
            } else if (!m->err) {
                store_apply(s, m);
                s->pos[m->partition] = m->offset + 1;
            } else {
                store_say(s, 1, "kafka: state store: %s%s", rd_kafka_message_errstr(m), "");
            }
        }
        rd_kafka_message_destroy(m);
    }
    free(want);
    return rc;
}

const uint8_t *tl_kstore_get(const struct tl_kstore *s, const char *key, size_t *len)
{
    bool found;
    size_t i = entry_find(s, key, &found);
    if (!found) return NULL;
    *len = s->e[i].len;
    return s->e[i].value;
}

size_t tl_kstore_count(const struct tl_kstore *s)
{
    return s->n;
}

const char *tl_kstore_entry(const struct tl_kstore *s, size_t i, const uint8_t **value, size_t *len)
{
    *value = s->e[i].value;
    *len = s->e[i].len;
    return s->e[i].key;
}

void tl_kstore_close(struct tl_kstore *s)
{
    if (!s) return;
    if (s->prod) {
        rd_kafka_flush(s->prod, 10000);
        rd_kafka_destroy(s->prod);
    }
    if (s->cons) {
        rd_kafka_consumer_close(s->cons);
        rd_kafka_destroy(s->cons);
    }
    for (size_t i = 0; i < s->n; i++) {
        free(s->e[i].key);
        free(s->e[i].value);
    }
    free(s->e);
    free(s->pos);
    free(s->topic);
    free(s);
}

/* The probe's librdkafka log: quiet, but its reason for a refused
 * connection is kept (librdkafka's own threads call this): "Local: Broker
 * transport failure" alone reads the same for a dead broker and a wrong
 * SASL password. */
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static char probe_reason[300];

static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk, (void)fac;
    if (level > 4 || !(strstr(buf, "uthentication") || strstr(buf, "SASL") || strstr(buf, "SSL"))) return;
    pthread_mutex_lock(&probe_lock);
    if (!probe_reason[0]) {
        const char *r = strstr(buf, "SASL") ? strstr(buf, "SASL") : strstr(buf, "SSL") ? strstr(buf, "SSL") : buf;
        snprintf(probe_reason, sizeof probe_reason, "%.*s", (int)strcspn(r, "("), r); /* up to "(after 302ms..." */
    }
    pthread_mutex_unlock(&probe_lock);
}

enum tl_err tl_kafka_probe(const struct tl_kafka_cfg *cfg, int timeout_ms, char *msg, size_t cap)
{
    if (!kafka_load(msg, cap)) return TL_ERR_OPEN;
    char err[512] = "";
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    bool ok = set(conf, "bootstrap.servers", cfg->brokers, err, sizeof err);
    for (int i = 0; ok && i < cfg->nprops; i++) {
        const char *k = cfg->props[i].key; /* consumer tuning does not apply to the probe */
        if (strncmp(k, "fetch.", 6) && strncmp(k, "session.", 8) && strncmp(k, "heartbeat.", 10) &&
            strncmp(k, "enable.auto", 11) && strcmp(k, "auto.offset.reset") &&
            strncmp(k, "partition.assignment", 20) && strncmp(k, "group.", 6) &&
            strncmp(k, "max.poll", 8))
            ok = set(conf, k, cfg->props[i].value, err, sizeof err);
    }
    char e[512];
    pthread_mutex_lock(&probe_lock);
    probe_reason[0] = '\0';
    pthread_mutex_unlock(&probe_lock);
    rd_kafka_conf_set_log_cb(conf, quiet_log);
    rd_kafka_t *rk = ok ? rd_kafka_new(RD_KAFKA_PRODUCER, conf, e, sizeof e) : NULL;
    if (!rk) {
        if (ok) snprintf(err, sizeof err, "%s", e);
        rd_kafka_conf_destroy(conf);
        snprintf(msg, cap, "%s", err);
        return TL_ERR_USAGE;
    }
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t re = rd_kafka_metadata(rk, 1, NULL, &md, timeout_ms);
    if (re) {
        rd_kafka_destroy(rk); /* its threads are done with the log */
        pthread_mutex_lock(&probe_lock);
        size_t n = strlen(probe_reason);
        while (n && probe_reason[n - 1] == ' ') probe_reason[--n] = '\0';
        if (n) snprintf(msg, cap, "%s refused the connection: %s", cfg->brokers, probe_reason);
        else snprintf(msg, cap, "no answer from %s: %s", cfg->brokers, rd_kafka_err2str(re));
        pthread_mutex_unlock(&probe_lock);
        return TL_ERR_OPEN;
    }
    size_t n = (size_t)snprintf(msg, cap, "%d broker%s", md->broker_cnt, md->broker_cnt == 1 ? "" : "s");
    const char *p = cfg->topics;
    while (p && *p && n < cap) {
        size_t len = strcspn(p, ",");
        while (len && *p == ' ') p++, len--;
        size_t l = len;
        while (l && p[l - 1] == ' ') l--;
        if (l && *p == '^') {
            n += (size_t)snprintf(msg + n, cap - n, "; %.*s: a pattern", (int)l, p);
        } else if (l) {
            int parts = -1;
            for (int i = 0; i < md->topic_cnt; i++)
                if (strlen(md->topics[i].topic) == l && !memcmp(md->topics[i].topic, p, l))
                    parts = md->topics[i].partition_cnt;
            if (parts >= 0) n += (size_t)snprintf(msg + n, cap - n, "; topic %.*s: %d partitions", (int)l, p, parts);
            else n += (size_t)snprintf(msg + n, cap - n, "; topic %.*s: not there yet", (int)l, p);
        }
        p += len;
        if (*p == ',') p++;
    }
    rd_kafka_metadata_destroy(md);
    rd_kafka_destroy(rk);
    return TL_OK;
}
