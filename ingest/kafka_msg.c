/* What Kafka support needs without librdkafka: which property names hold
 * secrets (never logged) and a message's fingerprint (what a resumed
 * partition checks it finds again). Built with or without TL_KAFKA, so
 * `check` and checkpoints read the same either way. */
#include "ingest/kafka.h"

#include <string.h>

#include "core/intern.h"
#include "core/map64.h"

bool tl_kafka_prop_is_secret(const char *key)
{
    static const char *const marks[] = {"password", "secret", "token", "oauthbearer.config",
                                        "key.pem", "keystore", "sasl.jaas", NULL};
    for (int i = 0; marks[i]; i++)
        if (strstr(key, marks[i])) return true;
    return false;
}

uint64_t tl_kafka_fingerprint(const struct tl_kafka_msg *m)
{
    size_t n = m->len < 4096 ? m->len : 4096;
    uint64_t h = tl_hash_bytes(m->value ? m->value : "", m->value ? n : 0);
    h = tl_mix64(h ^ (uint64_t)m->offset * 0x9E3779B97F4A7C15ULL ^ (uint64_t)m->len << 1);
    if (m->key) h = tl_mix64(h ^ tl_hash_bytes(m->key, m->key_len));
    return h ? h : 1;
}
