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

#include "core/error.h"

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
    void *headers; /* librdkafka's, for tl_kafka_msg_header; may be NULL */
};

/* The last header of that name: true with its value (not terminated). */
bool tl_kafka_msg_header(const struct tl_kafka_msg *m, const char *name, const char **value,
                         size_t *len);

struct tl_kafka_partition {
    const char *topic;
    int32_t partition;
    int64_t next;      /* offset after the last processed message; -1 none */
    int64_t committed; /* last committed by us; -1 none */
    int64_t high;      /* high watermark as last seen; -1 unknown */
    uint64_t last_fp;  /* fingerprint of the last message processed (0: none): its offset,
                        * length, key and first bytes -- what a resume checks it finds again */
    bool assigned;
};

/* A message's fingerprint (never 0). */
uint64_t tl_kafka_fingerprint(const struct tl_kafka_msg *m);

struct tl_kafka_hooks {
    void *ctx;
    /* before these partitions are released */
    void (*on_revoke)(void *ctx, const struct tl_kafka_partition *const *p, int n);
    /* the offset to start a newly assigned partition at, or -1 for the
     * group's committed offset (or `start` for a new group); committed is
     * that offset when the coordinator told it, else -1 */
    int64_t (*on_assign)(void *ctx, const char *topic, int32_t partition, int64_t committed);
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
/* Reads the partition again from its first message (the low watermark):
 * the offset, or -1 when the broker did not say it or the seek failed. */
int64_t tl_kafka_rewind(struct tl_kafka *k, const char *topic, int32_t partition);
/* A descriptor that becomes readable when messages or events wait (for poll()). */
int tl_kafka_fd(const struct tl_kafka *k);
/* Leaves the group (revoking: on_revoke runs) and frees everything. */
void tl_kafka_close(struct tl_kafka *k);

/* A shared state store on a compacted topic: the last value per key.
 *
 * Instances of a consumer group keep there what another one needs to take a
 * partition over (its parser streams and sketches, and the offset they stop
 * at), and read everyone's sketches from it for the global quantiles.
 * Writes are idempotent, acks=all; reads are an assign()-ed consumer without
 * a group that follows every partition of the topic from the beginning. The
 * topic is created (cleanup.policy=compact) when missing. Values may be up
 * to 16 MiB. */
struct tl_kstore;

enum tl_err tl_kstore_open(const struct tl_kafka_cfg *cfg, const char *topic,
                           const struct tl_kafka_hooks *hooks, struct tl_kstore **out, char *err,
                           size_t errlen);
/* Queues a write (value NULL: a tombstone). */
enum tl_err tl_kstore_put(struct tl_kstore *s, const char *key, const void *value, size_t len);
/* Waits until every queued write is acknowledged by the broker: TL_OK, or
 * TL_ERR_IO when one failed or the time ran out. */
enum tl_err tl_kstore_flush(struct tl_kstore *s, int timeout_ms);
/* Reads the topic up to its current end (the high watermarks asked now):
 * TL_OK, or TL_ERR_IO when that end was not reached in time. */
enum tl_err tl_kstore_sync(struct tl_kstore *s, int timeout_ms);
/* The last value read for key; NULL when none (or a tombstone). */
const uint8_t *tl_kstore_get(const struct tl_kstore *s, const char *key, size_t *len);
/* Entries in key order: the i-th, for i < tl_kstore_count(). */
size_t tl_kstore_count(const struct tl_kstore *s);
const char *tl_kstore_entry(const struct tl_kstore *s, size_t i, const uint8_t **value, size_t *len);
void tl_kstore_close(struct tl_kstore *s);

/* For `tasklens check`: connects with cfg's brokers and properties and
 * describes what it found in msg (brokers; each named topic's partitions,
 * or that it is missing). TL_OK when the brokers answered. */
enum tl_err tl_kafka_probe(const struct tl_kafka_cfg *cfg, int timeout_ms, char *msg, size_t cap);

/* True for property names whose values must never be logged. */
bool tl_kafka_prop_is_secret(const char *key);

#endif
