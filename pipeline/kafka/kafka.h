/* The `kafka` source (pipeline/kafka/): records from Kafka topics, as one member of a
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
 *   zigzag next | varint len | its state (partition_apply)
 *
 * Split by job: feed.c (messages to their streams' parsers), assign.c
 * (partitions assigned and revoked), checkpoint.c (checkpoint, commit, the
 * state topic, the global merge), plugin.c (options, the runtime's
 * callbacks, counters). This header is what they share. */
#ifndef TL_PIPELINE_KAFKA_H
#define TL_PIPELINE_KAFKA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "core/intern.h"
#include "ingest/kafka.h"
#include "pipeline/source.h"

/* A kafka entry's settings (plugin.c's option table). */
struct kafka_settings {
    struct src_base base; /* parser (no path: brokers and topics say what is read) */
    const char *brokers, *topics, *group, *start, *key_tag, *header_tags, *state_topic;
    long long max_streams;
    const struct tl_cfg_node *properties; /* librdkafka pass-through, may be NULL */
};

static inline const struct kafka_settings *kafka_settings(const struct tl_source *s)
{
    return s->cfg.config;
}

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

/* The state topic's record of a partition:
 *   u8 version | str instance | zigzag next | partition state (assign.c's
 *   partition_apply reads it) */
#define KSTATE_VERSION 1

/* feed.c */
void kafka_stream_free(struct kstream *ks);
void kafka_free_all(struct tl_source *s);
struct kpart *kafka_part_get(struct tl_source *s, const char *topic, int32_t partition);
void kafka_part_drop(struct tl_source *s, const char *topic, int32_t partition);
struct kstream *kafka_stream_get(struct tl_source *s, const char *topic, int32_t partition, const char *key,
                                 size_t key_len);
void kafka_partition_forget(struct tl_source *s, const char *topic, int32_t partition);
bool kafka_resume_check(struct tl_source *s, const struct tl_kafka_msg *m);
void kafka_message(void *ctx, const struct tl_kafka_msg *m);
void kafka_log(void *ctx, int level, const char *msg);

/* assign.c */
enum tl_err kafka_client_open(struct tl_source *s, char *err, size_t errcap);

/* checkpoint.c */
size_t kafka_state_key(char *out, size_t cap, const struct tl_source *s, const char *topic,
                       int32_t partition);
bool kafka_state_parse(const uint8_t *p, size_t len, char *instance, size_t icap, int64_t *next,
                       const uint8_t **state, size_t *slen);
enum tl_err kafka_partition_save(struct tl_source *s, const char *topic, int32_t partition,
                                 struct tl_buf *b);
enum tl_err kafka_save(struct tl_source *s, struct tl_buf *b);
bool kafka_publish(struct tl_source *s);
void kafka_global(struct tl_source *s);
bool kafka_restore(struct tl_source *s, const uint8_t *p, const uint8_t *end);

#endif
