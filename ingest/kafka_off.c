/* Kafka in a build without it (cmake -DTL_KAFKA=OFF, for machines without
 * librdkafka's headers): the same interface (kafka.h), where opening a
 * consumer, a state store or a probe fails saying why. Nothing else is
 * reached, since nothing is open. */
#include "ingest/kafka.h"

#include <stdio.h>

static enum tl_err not_built(char *err, size_t cap)
{
    if (err && cap)
        snprintf(err, cap, "this tasklens was built without Kafka (rebuild with cmake -DTL_KAFKA=ON "
                           "and librdkafka's headers: librdkafka-dev, or librdkafka-devel)");
    return TL_ERR_USAGE;
}

enum tl_err tl_kafka_open(const struct tl_kafka_cfg *cfg, const struct tl_kafka_hooks *hooks,
                          struct tl_kafka **out, char *err, size_t errlen)
{
    *out = NULL;
    return not_built(err, errlen);
}

enum tl_err tl_kstore_open(const struct tl_kafka_cfg *cfg, const char *topic,
                           const struct tl_kafka_hooks *hooks, struct tl_kstore **out, char *err,
                           size_t errlen)
{
    *out = NULL;
    return not_built(err, errlen);
}

enum tl_err tl_kafka_probe(const struct tl_kafka_cfg *cfg, int timeout_ms, char *msg, size_t cap)
{
    return not_built(msg, cap);
}

/* Unreachable without an open handle; defined so the callers link. */
bool tl_kafka_msg_header(const struct tl_kafka_msg *m, const char *name, const char **value,
                         size_t *len)
{
    return false;
}

size_t tl_kafka_poll(struct tl_kafka *k, int max_msgs, size_t max_bytes,
                     void (*cb)(void *ctx, const struct tl_kafka_msg *m), void *ctx)
{
    return 0;
}

enum tl_err tl_kafka_commit(struct tl_kafka *k) { return TL_OK; }
int tl_kafka_partitions(struct tl_kafka *k, const struct tl_kafka_partition **out)
{
    *out = NULL;
    return 0;
}
int64_t tl_kafka_rewind(struct tl_kafka *k, const char *topic, int32_t partition) { return -1; }
int tl_kafka_fd(const struct tl_kafka *k) { return -1; }
void tl_kafka_close(struct tl_kafka *k) {}
enum tl_err tl_kstore_put(struct tl_kstore *s, const char *key, const void *value, size_t len)
{
    return TL_ERR_USAGE;
}
enum tl_err tl_kstore_flush(struct tl_kstore *s, int timeout_ms) { return TL_ERR_IO; }
enum tl_err tl_kstore_sync(struct tl_kstore *s, int timeout_ms) { return TL_ERR_IO; }
const uint8_t *tl_kstore_get(const struct tl_kstore *s, const char *key, size_t *len) { return NULL; }
size_t tl_kstore_count(const struct tl_kstore *s) { return 0; }
const char *tl_kstore_entry(const struct tl_kstore *s, size_t i, const uint8_t **value, size_t *len)
{
    return NULL;
}
void tl_kstore_close(struct tl_kstore *s) {}
