/* A Kafka consumer for `tasklens run` (librdkafka), at least once.
 *
 * Offsets are never committed by librdkafka on its own (enable.auto.commit
 * and enable.auto.offset.store are off). The caller processes each message,
 * and tl_kafka remembers per partition the next offset after the last one
 * processed; tl_kafka_commit commits those -- and the caller calls it only
 * after every sink acknowledged what those messages produced and the
 * aggregator state that counted them is in a checkpoint.
 *
 * Rebalances arrive inside tl_kafka_poll. Before partitions are taken away,
 * on_revoke runs (the caller flushes, checkpoints and commits there); when
 * partitions are given, on_assign may name the offset to start from (the
 * one its checkpoint matches) instead of the group's committed offset.
 *
 * Every librdkafka property passes through (`properties`), so TLS and SASL
 * deployments work; values of keys that look secret are never logged. */
#ifndef TL_KAFKA_H
#define TL_KAFKA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct tl_kafka_prop {
    const char *key, *value;
};

struct tl_kafka_cfg {
    const char *brokers;
    const char *topics; /* comma-separated names or ^regex */
    const char *group;
    const char *start; /* earliest | latest: a new group's first offset */
    const struct tl_kafka_prop *props;
    int nprops;
};

struct tl_kafka_msg {
    const char *topic;
    int32_t partition;
    int64_t offset;
    const char *key;
    size_t key_len;
    const char *value;
    size_t len;
};

struct tl_kafka_partition {
    const char *topic;
    int32_t partition;
    int64_t next;      /* offset after the last processed message; -1 none */
    int64_t committed; /* last committed by us; -1 none */
    int64_t high;      /* high watermark as last seen; -1 unknown */
    bool assigned;
};

struct tl_kafka_hooks {
    void *ctx;
    /* before these partitions are released */
    void (*on_revoke)(void *ctx, const struct tl_kafka_partition *const *p, int n);
    /* the offset to start a newly assigned partition at, or -1 for the
     * group's committed offset (or `start` for a new group) */
    int64_t (*on_assign)(void *ctx, const char *topic, int32_t partition);
    /* log lines (errors, rebalances); never carry secrets */
    void (*log)(void *ctx, int level, const char *msg);
};

struct tl_kafka;

enum tl_err tl_kafka_open(const struct tl_kafka_cfg *cfg, const struct tl_kafka_hooks *hooks,
                          struct tl_kafka **out, char *err, size_t errlen);
/* Handles up to max_msgs messages (or max_bytes of values) that are ready,
 * without waiting; cb runs for each. Returns the bytes consumed. */
size_t tl_kafka_poll(struct tl_kafka *k, int max_msgs, size_t max_bytes,
                     void (*cb)(void *ctx, const struct tl_kafka_msg *m), void *ctx);
/* Commits every partition's processed offset (synchronously). */
enum tl_err tl_kafka_commit(struct tl_kafka *k);
/* The partitions seen (assigned or not), for checkpoints and lag. */
int tl_kafka_partitions(struct tl_kafka *k, const struct tl_kafka_partition **out);
/* A descriptor that becomes readable when messages or events wait (for poll()). */
int tl_kafka_fd(const struct tl_kafka *k);
/* Leaves the group (revoking: on_revoke runs) and frees everything. */
void tl_kafka_close(struct tl_kafka *k);

/* True for property names whose values must never be logged. */
bool tl_kafka_prop_is_secret(const char *key);

#endif
