/* librdkafka through function pointers, filled when the first Kafka client
 * is made (core/dynlib.h: why). Include instead of
 * <librdkafka/rdkafka.h>; calls are written as usual (function-like macros:
 * struct rd_kafka_metadata keeps its name). */
#ifndef TL_RDKAFKA_API_H
#define TL_RDKAFKA_API_H

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>

#define TL_RDKAFKA_FUNCS(X)                                                                         \
    X(rd_kafka_AdminOptions_destroy) X(rd_kafka_AdminOptions_new)                                   \
    X(rd_kafka_AdminOptions_set_request_timeout) X(rd_kafka_CreateTopics)                           \
    X(rd_kafka_CreateTopics_result_topics) X(rd_kafka_NewTopic_destroy) X(rd_kafka_NewTopic_new)    \
    X(rd_kafka_NewTopic_set_config) X(rd_kafka_assign) X(rd_kafka_commit) X(rd_kafka_committed)     \
    X(rd_kafka_conf_destroy) X(rd_kafka_conf_new) X(rd_kafka_conf_set)                              \
    X(rd_kafka_conf_set_dr_msg_cb) X(rd_kafka_conf_set_log_cb) X(rd_kafka_conf_set_opaque)          \
    X(rd_kafka_conf_set_rebalance_cb) X(rd_kafka_consumer_close) X(rd_kafka_consumer_poll)          \
    X(rd_kafka_destroy) X(rd_kafka_err2str) X(rd_kafka_error_destroy) X(rd_kafka_error_string)      \
    X(rd_kafka_event_CreateTopics_result) X(rd_kafka_event_destroy) X(rd_kafka_event_error)         \
    X(rd_kafka_event_error_string) X(rd_kafka_flush) X(rd_kafka_get_watermark_offsets)              \
    X(rd_kafka_header_get_last) X(rd_kafka_incremental_assign) X(rd_kafka_incremental_unassign)     \
    X(rd_kafka_message_destroy) X(rd_kafka_message_errstr) X(rd_kafka_message_headers)              \
    X(rd_kafka_metadata) X(rd_kafka_metadata_destroy) X(rd_kafka_new) X(rd_kafka_opaque)            \
    X(rd_kafka_poll) X(rd_kafka_poll_set_consumer) X(rd_kafka_producev)                             \
    X(rd_kafka_query_watermark_offsets) X(rd_kafka_queue_destroy) X(rd_kafka_queue_get_consumer)    \
    X(rd_kafka_queue_io_event_enable) X(rd_kafka_queue_new) X(rd_kafka_queue_poll)                  \
    X(rd_kafka_rebalance_protocol) X(rd_kafka_seek_partitions) X(rd_kafka_subscribe)               \
    X(rd_kafka_topic_destroy)                                                                        \
    X(rd_kafka_topic_name) X(rd_kafka_topic_new) X(rd_kafka_topic_partition_list_add)               \
    X(rd_kafka_topic_partition_list_copy) X(rd_kafka_topic_partition_list_destroy)                  \
    X(rd_kafka_topic_partition_list_find) X(rd_kafka_topic_partition_list_new)                      \
    X(rd_kafka_topic_result_error) X(rd_kafka_topic_result_error_string)

struct tl_rdkafka_api {
#define TL_RDKAFKA_PTR(f) __typeof__(f) *f;
    TL_RDKAFKA_FUNCS(TL_RDKAFKA_PTR)
#undef TL_RDKAFKA_PTR
};
extern struct tl_rdkafka_api tl_rdkafka;

/* Loads librdkafka, once (thread-safe); false with the reason in err. */
bool tl_rdkafka_load(char *err, size_t cap);

#ifndef TL_RDKAFKA_API_IMPL
#define rd_kafka_AdminOptions_destroy(...) (tl_rdkafka.rd_kafka_AdminOptions_destroy)(__VA_ARGS__)
#define rd_kafka_AdminOptions_new(...) (tl_rdkafka.rd_kafka_AdminOptions_new)(__VA_ARGS__)
#define rd_kafka_AdminOptions_set_request_timeout(...) (tl_rdkafka.rd_kafka_AdminOptions_set_request_timeout)(__VA_ARGS__)
#define rd_kafka_CreateTopics(...) (tl_rdkafka.rd_kafka_CreateTopics)(__VA_ARGS__)
#define rd_kafka_CreateTopics_result_topics(...) (tl_rdkafka.rd_kafka_CreateTopics_result_topics)(__VA_ARGS__)
#define rd_kafka_NewTopic_destroy(...) (tl_rdkafka.rd_kafka_NewTopic_destroy)(__VA_ARGS__)
#define rd_kafka_NewTopic_new(...) (tl_rdkafka.rd_kafka_NewTopic_new)(__VA_ARGS__)
#define rd_kafka_NewTopic_set_config(...) (tl_rdkafka.rd_kafka_NewTopic_set_config)(__VA_ARGS__)
#define rd_kafka_assign(...) (tl_rdkafka.rd_kafka_assign)(__VA_ARGS__)
#define rd_kafka_commit(...) (tl_rdkafka.rd_kafka_commit)(__VA_ARGS__)
#define rd_kafka_committed(...) (tl_rdkafka.rd_kafka_committed)(__VA_ARGS__)
#define rd_kafka_conf_destroy(...) (tl_rdkafka.rd_kafka_conf_destroy)(__VA_ARGS__)
#define rd_kafka_conf_new(...) (tl_rdkafka.rd_kafka_conf_new)(__VA_ARGS__)
#define rd_kafka_conf_set(...) (tl_rdkafka.rd_kafka_conf_set)(__VA_ARGS__)
#define rd_kafka_conf_set_dr_msg_cb(...) (tl_rdkafka.rd_kafka_conf_set_dr_msg_cb)(__VA_ARGS__)
#define rd_kafka_conf_set_log_cb(...) (tl_rdkafka.rd_kafka_conf_set_log_cb)(__VA_ARGS__)
#define rd_kafka_conf_set_opaque(...) (tl_rdkafka.rd_kafka_conf_set_opaque)(__VA_ARGS__)
#define rd_kafka_conf_set_rebalance_cb(...) (tl_rdkafka.rd_kafka_conf_set_rebalance_cb)(__VA_ARGS__)
#define rd_kafka_consumer_close(...) (tl_rdkafka.rd_kafka_consumer_close)(__VA_ARGS__)
#define rd_kafka_consumer_poll(...) (tl_rdkafka.rd_kafka_consumer_poll)(__VA_ARGS__)
#define rd_kafka_destroy(...) (tl_rdkafka.rd_kafka_destroy)(__VA_ARGS__)
#define rd_kafka_err2str(...) (tl_rdkafka.rd_kafka_err2str)(__VA_ARGS__)
#define rd_kafka_error_destroy(...) (tl_rdkafka.rd_kafka_error_destroy)(__VA_ARGS__)
#define rd_kafka_error_string(...) (tl_rdkafka.rd_kafka_error_string)(__VA_ARGS__)
#define rd_kafka_event_CreateTopics_result(...) (tl_rdkafka.rd_kafka_event_CreateTopics_result)(__VA_ARGS__)
#define rd_kafka_event_destroy(...) (tl_rdkafka.rd_kafka_event_destroy)(__VA_ARGS__)
#define rd_kafka_event_error(...) (tl_rdkafka.rd_kafka_event_error)(__VA_ARGS__)
#define rd_kafka_event_error_string(...) (tl_rdkafka.rd_kafka_event_error_string)(__VA_ARGS__)
#define rd_kafka_flush(...) (tl_rdkafka.rd_kafka_flush)(__VA_ARGS__)
#define rd_kafka_get_watermark_offsets(...) (tl_rdkafka.rd_kafka_get_watermark_offsets)(__VA_ARGS__)
#define rd_kafka_header_get_last(...) (tl_rdkafka.rd_kafka_header_get_last)(__VA_ARGS__)
#define rd_kafka_incremental_assign(...) (tl_rdkafka.rd_kafka_incremental_assign)(__VA_ARGS__)
#define rd_kafka_incremental_unassign(...) (tl_rdkafka.rd_kafka_incremental_unassign)(__VA_ARGS__)
#define rd_kafka_message_destroy(...) (tl_rdkafka.rd_kafka_message_destroy)(__VA_ARGS__)
#define rd_kafka_message_errstr(...) (tl_rdkafka.rd_kafka_message_errstr)(__VA_ARGS__)
#define rd_kafka_message_headers(...) (tl_rdkafka.rd_kafka_message_headers)(__VA_ARGS__)
#define rd_kafka_metadata(...) (tl_rdkafka.rd_kafka_metadata)(__VA_ARGS__)
#define rd_kafka_metadata_destroy(...) (tl_rdkafka.rd_kafka_metadata_destroy)(__VA_ARGS__)
#define rd_kafka_new(...) (tl_rdkafka.rd_kafka_new)(__VA_ARGS__)
#define rd_kafka_opaque(...) (tl_rdkafka.rd_kafka_opaque)(__VA_ARGS__)
#define rd_kafka_poll(...) (tl_rdkafka.rd_kafka_poll)(__VA_ARGS__)
#define rd_kafka_poll_set_consumer(...) (tl_rdkafka.rd_kafka_poll_set_consumer)(__VA_ARGS__)
#define rd_kafka_producev(...) (tl_rdkafka.rd_kafka_producev)(__VA_ARGS__)
#define rd_kafka_query_watermark_offsets(...) (tl_rdkafka.rd_kafka_query_watermark_offsets)(__VA_ARGS__)
#define rd_kafka_queue_destroy(...) (tl_rdkafka.rd_kafka_queue_destroy)(__VA_ARGS__)
#define rd_kafka_queue_get_consumer(...) (tl_rdkafka.rd_kafka_queue_get_consumer)(__VA_ARGS__)
#define rd_kafka_queue_io_event_enable(...) (tl_rdkafka.rd_kafka_queue_io_event_enable)(__VA_ARGS__)
#define rd_kafka_queue_new(...) (tl_rdkafka.rd_kafka_queue_new)(__VA_ARGS__)
#define rd_kafka_queue_poll(...) (tl_rdkafka.rd_kafka_queue_poll)(__VA_ARGS__)
#define rd_kafka_rebalance_protocol(...) (tl_rdkafka.rd_kafka_rebalance_protocol)(__VA_ARGS__)
#define rd_kafka_seek_partitions(...) (tl_rdkafka.rd_kafka_seek_partitions)(__VA_ARGS__)
#define rd_kafka_subscribe(...) (tl_rdkafka.rd_kafka_subscribe)(__VA_ARGS__)
#define rd_kafka_topic_destroy(...) (tl_rdkafka.rd_kafka_topic_destroy)(__VA_ARGS__)
#define rd_kafka_topic_name(...) (tl_rdkafka.rd_kafka_topic_name)(__VA_ARGS__)
#define rd_kafka_topic_new(...) (tl_rdkafka.rd_kafka_topic_new)(__VA_ARGS__)
#define rd_kafka_topic_partition_list_add(...) (tl_rdkafka.rd_kafka_topic_partition_list_add)(__VA_ARGS__)
#define rd_kafka_topic_partition_list_copy(...) (tl_rdkafka.rd_kafka_topic_partition_list_copy)(__VA_ARGS__)
#define rd_kafka_topic_partition_list_destroy(...) (tl_rdkafka.rd_kafka_topic_partition_list_destroy)(__VA_ARGS__)
#define rd_kafka_topic_partition_list_find(...) (tl_rdkafka.rd_kafka_topic_partition_list_find)(__VA_ARGS__)
#define rd_kafka_topic_partition_list_new(...) (tl_rdkafka.rd_kafka_topic_partition_list_new)(__VA_ARGS__)
#define rd_kafka_topic_result_error(...) (tl_rdkafka.rd_kafka_topic_result_error)(__VA_ARGS__)
#define rd_kafka_topic_result_error_string(...) (tl_rdkafka.rd_kafka_topic_result_error_string)(__VA_ARGS__)
#endif

#endif
