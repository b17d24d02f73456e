/* The network engine's sender (sinks/net/): it batches encoded points (in
 * the wire's codec: sinks/codec.h), writes them over HTTP in the sink's
 * wire format (wire.h), and when the store cannot take them, keeps them in
 * the disk spool until it can.
 *
 * Batches close at batch_lines points or batch_bytes bytes (5000 / 1 MiB),
 * when they are flush_interval_ms old (checked as points arrive), or when
 * the caller flushes.
 * Order is kept: while the spool holds anything, new batches go behind it,
 * and the spool drains first.
 *
 * Replies (see http.h; the wire says what each means): 2xx acknowledges;
 * partial writes are counted (InfluxDB's "dropped=N"), logged once per
 * kind of reason, and acknowledged -- never retried in a loop; not found is
 * the operator's (or, where the wire can, CREATE DATABASE with create_db);
 * 413 splits the batch in halves; 429, 5xx,
 * timeouts and refused connections spool the batch and retry with
 * exponential backoff and jitter (honouring Retry-After); 401/403 spool the
 * batch and report, since only the operator can fix them. */
#ifndef TL_NET_SENDER_H
#define TL_NET_SENDER_H

#include <stdbool.h>
#include <stdint.h>

#include "sinks/net/http.h"
#include "sinks/spool.h"

struct tl_sender_cfg {
    struct tl_http_cfg http;
    struct tl_spool_cfg spool;
    uint32_t batch_lines;  /* default 5000 */
    uint32_t batch_bytes;  /* default 1 MiB */
    long flush_interval_ms; /* a batch never waits longer than this (default 1000) */
    bool create_db;
    long backoff_min_ms;   /* default 200 */
    long backoff_max_ms;   /* default 30000 */
    bool quiet;
    const struct tl_log *log; /* where it speaks (NULL: stderr) */
};

void tl_sender_cfg_default(struct tl_sender_cfg *c);

struct tl_sender_stats {
    uint64_t points_acked;   /* in batches InfluxDB acknowledged */
    uint64_t points_dropped; /* refused by InfluxDB (partial writes) */
    uint64_t batches_sent, batches_spooled, batches_split;
    uint64_t retries;        /* failed attempts that will be retried */
    uint64_t http_errors;    /* replies other than 2xx */
    uint64_t spool_write_errors; /* appends the spool's disk refused (full, EIO) */
    struct tl_spool_stats spool;
};

struct tl_sender;

enum tl_err tl_sender_new(const struct tl_sender_cfg *cfg, struct tl_sender **out,
                               char *err, size_t errlen);
void tl_sender_free(struct tl_sender *s);
/* Appends n whole encoded points. May send a batch. Returns
 * TL_ERR_LIMIT when the spool is full or its disk refuses writes (said once
 * per episode, with the file and errno): the caller must stop reading
 * (backpressure) and call tl_sender_drain until it returns TL_OK. */
enum tl_err tl_sender_add(struct tl_sender *s, const char *points, size_t len, uint32_t n);
/* Sends the open batch (or spools it). */
enum tl_err tl_sender_flush(struct tl_sender *s);
/* Tries to deliver spooled batches, waiting out backoff, until the spool is
 * empty (TL_OK), timeout_ms passes, or a reply needs the operator
 * (tl_sender_fatal; both TL_ERR_LIMIT). 0: one attempt. */
enum tl_err tl_sender_drain(struct tl_sender *s, long timeout_ms);
/* fsync the spool (at most every second is the sink's own policy). */
enum tl_err tl_sender_sync(struct tl_sender *s);
struct tl_sender_stats tl_sender_stats(const struct tl_sender *s);
/* Points of the open batch: held in memory, neither sent nor spooled. */
uint32_t tl_sender_held(const struct tl_sender *s);
/* Set when a reply needs the operator (404 without create_db, 401, 403). */
const char *tl_sender_fatal(const struct tl_sender *s);

#endif
