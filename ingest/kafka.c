/* The Kafka consumer: see kafka.h.
 *
 * librdkafka runs its own threads; this side stays single-threaded: every
 * callback (rebalance, log) fires inside rd_kafka_consumer_poll, called
 * from tl_kafka_poll in the run loop. The consumer queue signals a pipe
 * when something waits, so the loop can sleep in poll() with the files. */
#include "kafka.h"

#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tl_kafka {
    rd_kafka_t *rk;
    rd_kafka_queue_t *queue;
    struct tl_kafka_hooks hooks;
    int pipe_r, pipe_w;
    struct tl_kafka_partition *parts;
    int nparts, cap;
};

bool tl_kafka_prop_is_secret(const char *key)
{
    static const char *const marks[] = {"password", "secret", "token", "oauthbearer.config",
                                        "key.pem", "keystore", "sasl.jaas", NULL};
    for (int i = 0; marks[i]; i++)
        if (strstr(key, marks[i])) return true;
    return false;
}

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
        for (int i = 0; i < list->cnt; i++) {
            rd_kafka_topic_partition_t *tp = &list->elems[i];
            struct tl_kafka_partition *p = part_of(k, tp->topic, tp->partition);
            if (!p) continue;
            p->assigned = true;
            int64_t at = k->hooks.on_assign ? k->hooks.on_assign(k->hooks.ctx, tp->topic, tp->partition)
                                            : -1;
            if (at >= 0) {
                tp->offset = at; /* where the checkpoint's state stops */
                p->next = at;
            }
            char what[64];
            snprintf(what, sizeof what, "%d%s", (int)tp->partition, at >= 0 ? " (from checkpoint)" : "");
            say(k, 2, "kafka: assigned %s/%s", tp->topic, what);
        }
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
        struct tl_kafka_msg msg = {topic, m->partition, m->offset, m->key, m->key_len,
                                   m->payload, m->len};
        cb(ctx, &msg);
        struct tl_kafka_partition *p = part_of(k, topic, m->partition);
        if (p && m->offset + 1 > p->next) p->next = m->offset + 1;
        bytes += m->len + 1;
        rd_kafka_message_destroy(m);
    }
    return bytes;
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
