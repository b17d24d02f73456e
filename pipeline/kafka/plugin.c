/* The kafka source, the plugin (kafka.h): its options, settings checks,
 * the runtime's callbacks and its counters. */
#include "pipeline/kafka/kafka.h"

/* Lines, records and rejects of a Kafka source's streams of one partition
 * (partition < 0: all). */
static void kafka_stats(const struct tl_source *s, const char *topic, int32_t partition,
                        struct tl_parse_stats *out)
{
    const struct kafka_src *K = s->own;
    memset(out, 0, sizeof *out);
    for (size_t j = 0; j < K->nstreams; j++) {
        const struct kstream *ks = K->streams[j];
        if (!ks || (partition >= 0 && (ks->partition != partition || strcmp(ks->topic, topic))))
            continue;
        struct tl_parse_stats ps = tl_drive_stats(&ks->drive);
        out->lines += ps.lines;
        out->records += ps.records;
        out->rejected += ps.rejected;
        for (int r = 0; r < TL_REJ_COUNT; r++) out->rejected_by[r] += ps.rejected_by[r];
    }
}

/* One `tasklens` point per assigned partition: its lag (high watermark -
 * next offset) and what its streams parsed. */
static void kafka_self_metrics(struct tl_source *s)
{
    struct kafka_src *K = s->own;
    const struct tl_kafka_partition *parts;
    int n = K->kafka ? tl_kafka_partitions(K->kafka, &parts) : 0;
    for (int i = 0; i < n; i++) {
        if (!parts[i].assigned) continue;
        struct tl_parse_stats ps;
        kafka_stats(s, parts[i].topic, parts[i].partition, &ps);
        char path[1024];
        snprintf(path, sizeof path, "kafka:%s/%d", parts[i].topic, (int)parts[i].partition);
        struct tl_summary_input in = {.path = path, .format = kafka_settings(s)->base.parser, .lines = ps.lines,
                                      .records = ps.records, .rejected = ps.rejected};
        memcpy(in.rejected_by, ps.rejected_by, sizeof in.rejected_by);
        int64_t lag = parts[i].high >= 0 && parts[i].next >= 0 && parts[i].high > parts[i].next
                          ? parts[i].high - parts[i].next
                          : 0;
        tl_output_self(tl_rt_output(s->rt), tl_rt_instance(s->rt), &in, (uint64_t)lag);
    }
}


/* ---------------------------------------------------------------- the plugin */

static enum tl_err kafka_expand(struct tl_runtime *rt, const struct src_settings *entry)
{
    const struct kafka_settings *c = entry->config;
    char name[1024], id[2048];
    snprintf(name, sizeof name, "kafka:%s", c->topics);
    /* one consumer: its brokers, topics and group */
    snprintf(id, sizeof id, "%s|%s|%s", c->brokers, c->topics, c->group);
    return tl_rt_add_source(rt, entry, name, id);
}

static enum tl_err kafka_open(struct tl_source *s, int version, const uint8_t *saved, size_t len, char *err,
                              size_t errcap)
{
    if (!s->own && !(s->own = calloc(1, sizeof(struct kafka_src)))) return TL_ERR_NOMEM;
    if (saved && !kafka_restore(s, saved, saved + len)) return TL_ERR_CORRUPT;
    return kafka_client_open(s, err, errcap);
}

static size_t kafka_step(struct tl_source *s)
{
    struct kafka_src *K = s->own;
    return K->kafka ? tl_kafka_poll(K->kafka, 20000, (size_t)TL_RT_CHUNK * 16, kafka_message, s) : 0;
}

static int kafka_wait_fd(struct tl_source *s, bool *poll_soon)
{
    struct kafka_src *K = s->own;
    int fd = K->kafka ? tl_kafka_fd(K->kafka) : -1;
    if (fd < 0) *poll_soon = true;
    return fd;
}

static size_t kafka_counters(const struct tl_source *s, struct tl_counter *out, size_t max)
{
    struct tl_parse_stats ps;
    kafka_stats(s, NULL, -1, &ps);
    return tl_source_counters(&ps, 0, out, max);
}

static void kafka_commit(struct tl_source *s)
{
    struct kafka_src *K = s->own;
    if (K->kafka) tl_kafka_commit(K->kafka);
}

/* Commit what the exit checkpoint covers (nothing when it failed), then
 * leave the group (the revoke that follows commits nothing). */
static void kafka_stop(struct tl_source *s, bool saved)
{
    struct kafka_src *K = s->own;
    if (!K->kafka) return;
    if (saved) tl_kafka_commit(K->kafka);
    tl_kafka_close(K->kafka);
    K->kafka = NULL;
}

static void kafka_close(struct tl_source *s)
{
    if (!s->own) return;
    struct kafka_src *K = s->own;
    for (int i = 0; i < K->nchecks; i++) free(K->checks[i].topic);
    kafka_free_all(s);
    free(s->own);
    s->own = NULL;
}

static enum tl_err kafka_validate(const void *config, const char **key, char *err, size_t cap)
{
    const struct kafka_settings *c = config;
    if (!c->brokers || !c->topics) {
        snprintf(err, cap, "`brokers` and `topics` are required");
        return TL_ERR_USAGE;
    }
    if (strcmp(c->start, "earliest") && strcmp(c->start, "latest")) {
        *key = "start";
        snprintf(err, cap, "start: '%s' is not earliest or latest", c->start);
        return TL_ERR_USAGE;
    }
    const struct tl_cfg_node *pr = c->properties; /* a mapping (its option's type) */
    for (size_t j = 0; pr && j < pr->n; j++)
        if (pr->items[j]->kind != TL_CFG_SCALAR) {
            *key = "properties";
            snprintf(err, cap, "properties.%s: a value is expected", pr->keys[j]);
            return TL_ERR_USAGE;
        }
    return TL_OK;
}

/* The brokers answer, the topics exist (a metadata request, no group join). */
static void kafka_check(const void *config, int i, tl_check_say *say, void *ctx)
{
    const struct kafka_settings *s = config;
    struct tl_kafka_prop props[128];
    int np = 0;
    for (size_t k = 0; s->properties && k < s->properties->n && np < 128; k++)
        props[np++] = (struct tl_kafka_prop){s->properties->keys[k], s->properties->items[k]->scalar};
    struct tl_kafka_cfg kc = {s->brokers, s->topics, s->group, s->start, props, np};
    char msg[2048];
    bool ok = tl_kafka_probe(&kc, 5000, msg, sizeof msg) == TL_OK;
    say(ctx, ok, "sources[%d]: kafka %s, group %s: %s", i, s->brokers, s->group, msg);
}

#define SS(f) offsetof(struct kafka_settings, f)
static const struct tl_option kafka_options[] = {
    {"brokers", TL_OPT_LIST, NULL, "bootstrap servers, host:port[,host:port]", SS(brokers)},
    {"topics", TL_OPT_LIST, NULL, "topic names or ^regex, comma-separated", SS(topics)},
    {"group", TL_OPT_STRING, "tasklens", "consumer group: instances in one group share partitions",
     SS(group)},
    {"start", TL_OPT_STRING, "earliest", "earliest or latest: where a new group starts", SS(start)},
    {"key_tag", TL_OPT_STRING, NULL,
     "put the message key in this tag (e.g. manager); none by default", SS(key_tag)},
    {"max_streams", TL_OPT_INT, "10000",
     "parser states kept, one per (topic, partition, key); more are rejected", SS(max_streams)},
    {"header_tags", TL_OPT_LIST, NULL,
     "message headers to put in tags, comma-separated (e.g. workflow,site)", SS(header_tags)},
    {"state_topic", TL_OPT_STRING, NULL,
     "compacted topic where every partition's state (parser streams, sketches, offset) is "
     "published at each checkpoint: another instance takes a partition over from it, and "
     "every instance writes the group's merged quantiles (scope=global) from it",
     SS(state_topic)},
    {"properties", TL_OPT_MAP, NULL, "librdkafka settings, passed on as they are (e.g. security.protocol)",
     SS(properties)},
    TL_SRC_PARSER_OPTIONS(struct kafka_settings,
                          "format of the messages (auto: detected per stream from its first message)"),
    {0},
};

/* `top`: the open tasks of every stream assigned here. */
static bool kafka_open_tasks(struct tl_source *s, void (*each)(void *ctx, const struct tl_record *r),
                             void *ctx)
{
    struct kafka_src *K = s->own;
    bool any = false;
    for (size_t i = 0; K && i < K->nstreams; i++)
        if (K->streams[i]) any |= tl_drive_open_tasks(&K->streams[i]->drive, each, ctx);
    return any;
}

const struct tl_source_type tl_source_kafka = {
    .name = "kafka",
    .help = "Kafka topics, as a member of a consumer group (librdkafka)",
    .config_size = sizeof(struct kafka_settings),
    .options = kafka_options,
    .ckpt_tag = 'K',
    .validate = kafka_validate,
    .expand = kafka_expand,
    .open = kafka_open,
    .step = kafka_step,
    .wait_fd = kafka_wait_fd,
    .save = kafka_save,
    .self_metrics = kafka_self_metrics,
    .counters = kafka_counters,
    .publish = kafka_publish,
    .commit = kafka_commit,
    .cumulative = kafka_global,
    .stop = kafka_stop,
    .close = kafka_close,
    .open_tasks = kafka_open_tasks,
    .check = kafka_check,
};
